//! Typed tmux object ids. tmux prints them as `%3` (pane), `@1` (window) and
//! `$0` (session); they come from counters that only grow for the life of a
//! server, so they are stable keys where names and indexes are not.
//!
//! They live outside [`crate::tmux`] because both sides of the byte path
//! name them: the parser that reads them off the wire and the pane
//! recordings ([`crate::panes`]) keyed by them, which know nothing of tmux.
//!
//! In results and schemas an id is the string tmux prints (`"%3"`): its
//! JSON schema is exactly a `String`'s, so typing a field changes nothing
//! an agent sees.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Serialize, Serializer};

macro_rules! tmux_id {
    ($name:ident, $sigil:literal, $what:literal) => {
        #[doc = concat!("A tmux ", $what, " id, printed as `", $sigil, "N`.")]
        ///
        /// `Default` (number 0) only lets a record be filled in field by
        /// field ([`crate::tmux::format::Schema`]); a reader that keeps a
        /// record checks its id parsed.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);

        impl $name {
            /// Parses `<sigil><digits>` from bytes, as tmux prints it.
            pub fn parse(bytes: &[u8]) -> Option<Self> {
                let digits = bytes.strip_prefix($sigil.as_bytes())?;
                if digits.is_empty()
                    || digits.len() > 10
                    || !digits.iter().all(u8::is_ascii_digit)
                    // Only the canonical spelling: tmux reads `%05` as `%5`,
                    // and a guard comparing ids as text must not be fooled.
                    || (digits.len() > 1 && digits[0] == b'0')
                {
                    return None;
                }
                std::str::from_utf8(digits).ok()?.parse().ok().map($name)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($sigil, "{}"), self.0)
            }
        }

        impl FromStr for $name {
            type Err = ();
            fn from_str(s: &str) -> Result<Self, ()> {
                Self::parse(s.as_bytes()).ok_or(())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        /// A `String`'s schema, inlined as a `String` field's is.
        impl JsonSchema for $name {
            fn inline_schema() -> bool {
                String::inline_schema()
            }

            fn schema_name() -> Cow<'static, str> {
                String::schema_name()
            }

            fn schema_id() -> Cow<'static, str> {
                String::schema_id()
            }

            fn json_schema(generator: &mut SchemaGenerator) -> Schema {
                String::json_schema(generator)
            }
        }
    };
}

tmux_id!(PaneId, "%", "pane");
tmux_id!(WindowId, "@", "window");
tmux_id!(SessionId, "$", "session");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_reject_junk() {
        assert_eq!(PaneId::parse(b"%12"), Some(PaneId(12)));
        assert_eq!(WindowId::parse(b"@0").unwrap().to_string(), "@0");
        assert_eq!("$7".parse::<SessionId>(), Ok(SessionId(7)));
        // By number, as search_panes sorts: `%2` before `%10`.
        assert!(PaneId::parse(b"%2") < PaneId::parse(b"%10"));
        for bad in [
            &b"%"[..],
            b"12",
            b"%1a",
            b"@-1",
            b"%99999999999",
            b"$ 1",
            b"%05",
            b"%00",
        ] {
            assert_eq!(PaneId::parse(bad), None);
            assert_eq!(SessionId::parse(bad), None);
        }
    }

    #[test]
    fn ids_serialize_and_describe_themselves_as_strings() {
        let json = serde_json::to_value((PaneId(3), WindowId(1), Some(SessionId(0)))).unwrap();
        assert_eq!(json, serde_json::json!(["%3", "@1", "$0"]));
        let schema = |s: Schema| s.to_value();
        let mut generator = SchemaGenerator::default();
        let string = schema(generator.subschema_for::<Option<String>>());
        assert_eq!(schema(generator.subschema_for::<Option<PaneId>>()), string);
        assert_eq!(
            schema(generator.subschema_for::<WindowId>()),
            schema(generator.subschema_for::<String>())
        );
    }
}
