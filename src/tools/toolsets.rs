//! Toolsets: which tools a server exposes (`LIBTMUX_TOOLSETS`,
//! `LIBTMUX_TOOLS`, `LIBTMUX_EXCLUDE_TOOLS`), as in libtmux-mcp 0.1.0a22.
//!
//! Every tool belongs to exactly one toolset, by what it does: `inspect`
//! reads, `manage` changes tmux structure or presentation, `execute` starts
//! processes or delivers input, `teardown` destroys. Each tool's
//! [`ToolDef`](super::ToolDef) says which.

use std::collections::BTreeSet;
use std::fmt;

use anyhow::bail;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Toolset {
    Inspect,
    Manage,
    Execute,
    Teardown,
}

impl Toolset {
    pub const ALL: [Toolset; 4] = [
        Toolset::Inspect,
        Toolset::Manage,
        Toolset::Execute,
        Toolset::Teardown,
    ];
    /// The reference's default: everything but teardown.
    pub const DEFAULT: [Toolset; 3] = [Toolset::Inspect, Toolset::Manage, Toolset::Execute];

    pub fn name(self) -> &'static str {
        match self {
            Toolset::Inspect => "inspect",
            Toolset::Manage => "manage",
            Toolset::Execute => "execute",
            Toolset::Teardown => "teardown",
        }
    }

    fn parse(name: &str) -> Option<Toolset> {
        Toolset::ALL.into_iter().find(|t| t.name() == name)
    }
}

impl fmt::Display for Toolset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which tools this server exposes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    pub toolsets: BTreeSet<Toolset>,
    /// `LIBTMUX_TOOLS`: enabled whatever their toolset.
    pub include: BTreeSet<String>,
    /// `LIBTMUX_EXCLUDE_TOOLS`: refused whatever else says.
    pub exclude: BTreeSet<String>,
}

impl Default for Selection {
    fn default() -> Self {
        Selection {
            toolsets: Toolset::DEFAULT.into(),
            include: BTreeSet::new(),
            exclude: BTreeSet::new(),
        }
    }
}

/// Splits a comma-separated setting: entries trimmed, empty ones ignored.
fn entries(raw: &str) -> Vec<String> {
    raw.split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(str::to_owned)
        .collect()
}

impl Selection {
    /// Reads the settings. `known` is every tool name the server has; an
    /// unknown toolset or tool name fails startup with the valid ones listed.
    /// `LIBTMUX_SAFETY` (removed from the reference) maps to the nearest
    /// toolsets, with a warning.
    pub fn from_vars(
        var: impl Fn(&str) -> Option<String>,
        known: &[&str],
        warnings: &mut Vec<String>,
    ) -> anyhow::Result<Selection> {
        let mut selection = Selection::default();
        if let Some(safety) = var("LIBTMUX_SAFETY") {
            let mapped: &[Toolset] = match safety.trim() {
                "readonly" => &[Toolset::Inspect],
                "destructive" => &Toolset::ALL,
                _ => &Toolset::DEFAULT,
            };
            let names: Vec<&str> = mapped.iter().map(|t| t.name()).collect();
            warnings.push(format!(
                "LIBTMUX_SAFETY is deprecated (the reference server removed it); LIBTMUX_SAFETY={safety:?} \
                 is read as LIBTMUX_TOOLSETS={}. Set LIBTMUX_TOOLSETS instead.",
                names.join(",")
            ));
            selection.toolsets = mapped.iter().copied().collect();
        }
        if let Some(raw) = var("LIBTMUX_TOOLSETS") {
            let mut sets = BTreeSet::new();
            let mut unknown = Vec::new();
            for entry in entries(&raw) {
                match Toolset::parse(&entry) {
                    Some(set) => {
                        sets.insert(set);
                    }
                    None => unknown.push(entry),
                }
            }
            if !unknown.is_empty() {
                bail!(
                    "LIBTMUX_TOOLSETS names unknown toolsets: {}. Valid toolsets: inspect, manage, execute, teardown.",
                    unknown.join(", ")
                );
            }
            selection.toolsets = sets;
        }
        for (var_name, target) in [
            ("LIBTMUX_TOOLS", &mut selection.include),
            ("LIBTMUX_EXCLUDE_TOOLS", &mut selection.exclude),
        ] {
            let names = var(var_name).map(|raw| entries(&raw)).unwrap_or_default();
            let mut unknown: Vec<&str> = names
                .iter()
                .map(String::as_str)
                .filter(|n| !known.contains(n))
                .collect();
            unknown.sort();
            if !unknown.is_empty() {
                let mut valid = known.to_vec();
                valid.sort();
                bail!(
                    "{var_name} names unknown tools: {}. Valid tools: {}.",
                    unknown.join(", "),
                    valid.join(", ")
                );
            }
            target.extend(names);
        }
        Ok(selection)
    }

    /// Is `tool`, of toolset `set`, exposed?
    pub fn allows(&self, tool: &str, set: Toolset) -> bool {
        if self.exclude.contains(tool) {
            return false;
        }
        self.include.contains(tool) || self.toolsets.contains(&set)
    }

    /// "execute, inspect, manage" or "(none)", for the instructions.
    pub fn describe(&self) -> String {
        let mut names: Vec<&str> = self.toolsets.iter().map(|t| t.name()).collect();
        names.sort();
        if names.is_empty() {
            "(none)".into()
        } else {
            names.join(", ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const KNOWN: &[&str] = &["list_panes", "send_keys", "kill_pane"];

    /// Each known tool with its toolset, as its `ToolDef` says.
    fn allows(s: &Selection, tool: &str) -> bool {
        let set = match tool {
            "list_panes" => Toolset::Inspect,
            "send_keys" => Toolset::Execute,
            _ => Toolset::Teardown,
        };
        s.allows(tool, set)
    }

    fn select(vars: &[(&str, &str)]) -> anyhow::Result<(Selection, Vec<String>)> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut warnings = Vec::new();
        let s = Selection::from_vars(|n| map.get(n).cloned(), KNOWN, &mut warnings)?;
        Ok((s, warnings))
    }

    #[test]
    fn default_hides_teardown() {
        let (s, _) = select(&[]).unwrap();
        assert!(allows(&s, "list_panes") && allows(&s, "send_keys") && !allows(&s, "kill_pane"));
        assert_eq!(s.describe(), "execute, inspect, manage");
    }

    #[test]
    fn toolsets_tools_and_exclusions_combine() {
        let (s, _) = select(&[
            ("LIBTMUX_TOOLSETS", " inspect,,inspect "),
            ("LIBTMUX_TOOLS", "send_keys"),
        ])
        .unwrap();
        assert!(allows(&s, "list_panes") && allows(&s, "send_keys") && !allows(&s, "kill_pane"));
        let (s, _) = select(&[
            ("LIBTMUX_TOOLS", "kill_pane"),
            ("LIBTMUX_EXCLUDE_TOOLS", "kill_pane"),
        ])
        .unwrap();
        assert!(!allows(&s, "kill_pane"), "exclusion wins");
        let (s, _) = select(&[("LIBTMUX_TOOLSETS", "")]).unwrap();
        assert!(!allows(&s, "list_panes"));
        assert_eq!(s.describe(), "(none)");
    }

    #[test]
    fn unknown_names_fail_with_the_valid_ones() {
        let e = select(&[("LIBTMUX_TOOLSETS", "inspect,bogus")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("bogus") && e.contains("Valid toolsets"), "{e}");
        let e = select(&[("LIBTMUX_TOOLS", "nope")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("nope") && e.contains("list_panes"), "{e}");
        assert!(select(&[("LIBTMUX_EXCLUDE_TOOLS", "nope")]).is_err());
    }

    #[test]
    fn safety_maps_to_toolsets_with_a_warning() {
        let (s, w) = select(&[("LIBTMUX_SAFETY", "readonly")]).unwrap();
        assert_eq!(s.toolsets, [Toolset::Inspect].into());
        assert_eq!(w.len(), 1);
        let (s, _) = select(&[("LIBTMUX_SAFETY", "destructive")]).unwrap();
        assert!(allows(&s, "kill_pane"));
        let (s, _) = select(&[
            ("LIBTMUX_SAFETY", "readonly"),
            ("LIBTMUX_TOOLSETS", "manage"),
        ])
        .unwrap();
        assert_eq!(
            s.toolsets,
            [Toolset::Manage].into(),
            "explicit toolsets win"
        );
    }
}
