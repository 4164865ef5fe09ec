//! The reference's `filters` argument of `list_*`: a map of
//! `field[__op]` → value, or the same map as a JSON string. Keys are ANDed.

use std::collections::BTreeMap;

use regex::RegexBuilder;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tools::{ToolError, ToolResult};

/// `filters`: an object, or a JSON string of one (for clients that stringify).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Filters {
    Map(BTreeMap<String, String>),
    Json(String),
}

const OPERATORS: &[&str] = &[
    "contains",
    "endswith",
    "eq",
    "exact",
    "icontains",
    "iendswith",
    "iexact",
    "in",
    "iregex",
    "istartswith",
    "nin",
    "regex",
    "startswith",
];

struct Clause {
    field: String,
    op: String,
    value: String,
}

/// Keeps the items that match every clause of `filters`.
pub fn apply<T: Serialize>(items: Vec<T>, filters: Option<Filters>) -> ToolResult<Vec<T>> {
    let clauses = parse(filters)?;
    if clauses.is_empty() {
        return Ok(items);
    }
    let mut kept = Vec::new();
    for item in items {
        let value = serde_json::to_value(&item).map_err(|e| ToolError::invalid(e.to_string()))?;
        let mut all = true;
        for clause in &clauses {
            if !clause.matches(&value)? {
                all = false;
                break;
            }
        }
        if all {
            kept.push(item);
        }
    }
    Ok(kept)
}

fn parse(filters: Option<Filters>) -> ToolResult<Vec<Clause>> {
    let map = match filters {
        None => return Ok(Vec::new()),
        Some(Filters::Map(map)) => map,
        Some(Filters::Json(text)) if text.trim().is_empty() => return Ok(Vec::new()),
        Some(Filters::Json(text)) => match serde_json::from_str::<Value>(&text) {
            Err(e) => return Err(ToolError::invalid(format!("Invalid filters JSON: {e}"))),
            Ok(Value::Object(obj)) => obj
                .into_iter()
                .map(|(k, v)| match v {
                    Value::String(s) => (k, s),
                    other => (k, other.to_string()),
                })
                .collect(),
            Ok(other) => {
                return Err(ToolError::invalid(format!(
                    "filters must be a JSON object, got {}",
                    json_type(&other)
                )));
            }
        },
    };
    map.into_iter()
        .map(|(key, value)| {
            let (field, op) = key.split_once("__").unwrap_or((key.as_str(), "exact"));
            if !OPERATORS.contains(&op) {
                return Err(ToolError::invalid(format!(
                    "Invalid filter operator '{op}' in '{key}'. Valid operators: {}",
                    OPERATORS.join(", ")
                )));
            }
            Ok(Clause {
                field: field.to_owned(),
                op: op.to_owned(),
                value,
            })
        })
        .collect()
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

impl Clause {
    fn matches(&self, item: &Value) -> ToolResult<bool> {
        let actual = match item.get(&self.field) {
            None | Some(Value::Null) => return Ok(self.op == "nin"),
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        let (a, v) = (actual.as_str(), self.value.as_str());
        let lower = |s: &str| s.to_lowercase();
        let list = || v.split(',').map(str::trim).collect::<Vec<_>>();
        Ok(match self.op.as_str() {
            "eq" | "exact" => a == v,
            "iexact" => lower(a) == lower(v),
            "contains" => a.contains(v),
            "icontains" => lower(a).contains(&lower(v)),
            "startswith" => a.starts_with(v),
            "istartswith" => lower(a).starts_with(&lower(v)),
            "endswith" => a.ends_with(v),
            "iendswith" => lower(a).ends_with(&lower(v)),
            "in" => list().contains(&a),
            "nin" => !list().contains(&a),
            "regex" | "iregex" => RegexBuilder::new(v)
                .case_insensitive(self.op == "iregex")
                .size_limit(1 << 20)
                .build()
                .map_err(|e| ToolError::invalid(format!("Invalid regex pattern: {e}")))?
                .is_match(a),
            _ => false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(filters: Filters) -> ToolResult<Vec<String>> {
        let items = vec![json!({"n": "alpha", "k": 1}), json!({"n": "Beta", "k": 2})];
        Ok(apply(items, Some(filters))?
            .iter()
            .map(|v| v["n"].as_str().unwrap().to_owned())
            .collect())
    }

    #[test]
    fn operators_and_json_strings() {
        let map = |k: &str, v: &str| Filters::Map([(k.to_owned(), v.to_owned())].into());
        assert_eq!(names(map("n", "alpha")).unwrap(), ["alpha"]);
        assert_eq!(names(map("n__icontains", "ET")).unwrap(), ["Beta"]);
        assert_eq!(names(map("k__in", "1, 2")).unwrap(), ["alpha", "Beta"]);
        assert_eq!(names(map("n__regex", "^B")).unwrap(), ["Beta"]);
        assert_eq!(
            names(Filters::Json(r#"{"k": 2}"#.into())).unwrap(),
            ["Beta"]
        );
        assert!(
            names(map("n__bogus", "x"))
                .unwrap_err()
                .message
                .contains("Invalid filter operator")
        );
        assert!(
            names(Filters::Json("[1]".into()))
                .unwrap_err()
                .message
                .contains("got list")
        );
        assert!(
            names(Filters::Json("{".into()))
                .unwrap_err()
                .message
                .starts_with("Invalid filters JSON")
        );
    }
}
