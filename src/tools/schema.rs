//! Schemas as `tools/list` shows them: derived from the argument and
//! result types, then compacted, since every agent pays for the catalog
//! in tokens.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

fn settings() -> SchemaSettings {
    SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    })
}

pub(super) fn schema_of<T: JsonSchema>() -> Value {
    let mut schema = settings()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("title");
        obj.remove("description");
    }
    schema
}

/// Trims what a schema says twice or need not say, since every agent pays
/// for `tools/list` in tokens (the whole catalog stays under 50 KB):
/// `"default": null` and integer `format`s go everywhere; an optional input
/// is typed without `null` (leaving it out is how to say nothing; the server
/// also accepts null) and the arguments several tools share
/// ([`SHARED_ARGS`], explained once in the instructions) carry no
/// description; in output schemas, descriptions go and a field that may be
/// null accepts any value. An input schema leaves out
/// `additionalProperties` flags (the server refuses unknown arguments by
/// name, with the valid ones) and offers an argument that may also come as
/// a JSON string (`filters`, `environment`) as the object it encodes.
pub(super) fn compact(schema: &mut Value, output: bool) {
    match schema {
        Value::Object(map) => {
            if map.get("default") == Some(&Value::Null) {
                map.remove("default");
            }
            map.remove("format");
            if !output {
                if map
                    .get("additionalProperties")
                    .is_some_and(Value::is_boolean)
                {
                    map.remove("additionalProperties");
                }
                prefer_object(map);
            }
            if output {
                map.remove("description");
                if is_nullable(map) {
                    map.clear();
                    return;
                }
            }
            let required: Vec<Value> = map
                .get("required")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for (key, value) in map.iter_mut() {
                // Under `properties` the keys are field names, not keywords.
                if key != "properties" {
                    compact(value, output);
                    continue;
                }
                let Value::Object(fields) = value else {
                    continue;
                };
                for (name, field) in fields.iter_mut() {
                    compact(field, output);
                    let optional = !required.contains(&Value::String(name.clone()));
                    if output || !optional {
                        continue;
                    }
                    if let Some(field) = field.as_object_mut() {
                        drop_null_type(field);
                        if SHARED_ARGS.contains(&name.as_str()) {
                            field.remove("description");
                        }
                    }
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| compact(v, output)),
        _ => {}
    }
}

/// Arguments several tools share, described once in the instructions:
/// the targets, then those of the tools that start a process, then those
/// of the option and hook tools.
const SHARED_ARGS: &[&str] = &[
    "pane_id",
    "session_name",
    "session_id",
    "window_id",
    "window_index",
    "socket_name",
    "start_directory",
    "environment",
    "suppress_persistent_history",
    "scope",
    "target",
    "global_",
];

/// `anyOf: [object, string]` (an object, or a JSON string of one) becomes
/// the object branch: that is what to send.
fn prefer_object(map: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = map.get("anyOf") else {
        return;
    };
    let kinds: Vec<_> = branches.iter().map(|b| b.get("type")).collect();
    if kinds != [Some(&json!("object")), Some(&json!("string"))] {
        return;
    }
    let object = branches[0].clone();
    map.remove("anyOf");
    if let Value::Object(object) = object {
        for (key, value) in object {
            map.entry(key).or_insert(value);
        }
    }
}

fn is_nullable(map: &Map<String, Value>) -> bool {
    map.get("type")
        .and_then(Value::as_array)
        .is_some_and(|t| t.contains(&json!("null")))
}

/// Takes `null` out of an optional field's type: `"type": ["string",
/// "null"]` becomes `"type": "string"`, an `enum` loses its `null`, and an
/// `anyOf` loses its null branch (a single branch left is inlined, keeping
/// the field's own description).
fn drop_null_type(field: &mut Map<String, Value>) {
    let null = json!("null");
    if let Some(Value::Array(types)) = field.get("type") {
        let rest: Vec<Value> = types.iter().filter(|t| *t != &null).cloned().collect();
        if rest.len() == 1 {
            field.insert("type".into(), rest[0].clone());
        } else if !rest.is_empty() {
            field.insert("type".into(), Value::Array(rest));
        }
    }
    if let Some(Value::Array(values)) = field.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    if let Some(Value::Array(branches)) = field.get("anyOf") {
        let rest: Vec<Value> = branches
            .iter()
            .filter(|b| b.get("type") != Some(&null))
            .cloned()
            .collect();
        field.remove("anyOf");
        match <[Value; 1]>::try_from(rest) {
            Ok([Value::Object(only)]) => {
                for (key, value) in only {
                    if key != "description" || !field.contains_key("description") {
                        field.entry(key).or_insert(value);
                    }
                }
            }
            Ok([other]) => {
                field.insert("anyOf".into(), Value::Array(vec![other]));
            }
            Err(rest) => {
                field.insert("anyOf".into(), Value::Array(rest));
            }
        }
    }
}

/// Appends the optional arguments of `T` to an input schema's (for an
/// argument group the call path itself reads, such as `socket_name`).
pub(super) fn append_args_of<T: JsonSchema>(schema: &mut Value) {
    let extra = schema_of::<T>();
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    if let Some(Value::Object(more)) = extra.get("properties") {
        let properties = object.entry("properties").or_insert_with(|| json!({}));
        if let Some(properties) = properties.as_object_mut() {
            properties.extend(more.clone());
        }
    }
}

/// The output schema, and whether results are wrapped as `{"result": …}`.
pub(super) fn output_schema_of<T: JsonSchema>() -> (Value, bool) {
    let mut schema = schema_of::<T>();
    compact(&mut schema, true);
    if schema.get("type") == Some(&json!("object")) {
        return (schema, false);
    }
    let wrapped = json!({
        "type": "object",
        "properties": { "result": schema },
        "required": ["result"],
    });
    (wrapped, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::service::INSTRUCTIONS;

    /// The catalog leaves these arguments undescribed because the
    /// instructions explain them: each must be named there.
    #[test]
    fn shared_args_are_explained_in_the_instructions() {
        for name in SHARED_ARGS {
            assert!(INSTRUCTIONS.contains(name), "{name}");
        }
    }

    #[test]
    fn an_object_or_json_string_is_offered_as_the_object() {
        let mut schema = json!({
            "type": "object",
            "properties": { "env": { "anyOf": [
                { "type": "object", "additionalProperties": { "type": "string" } },
                { "type": "string" },
            ] } },
            "additionalProperties": false,
        });
        compact(&mut schema, false);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": { "env": {
                    "type": "object", "additionalProperties": { "type": "string" },
                } },
            })
        );
    }
}
