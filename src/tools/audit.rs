//! The audit log: one stderr line per tool call, with the arguments
//! summarised so that secrets typed into panes never reach the log.
//!
//! Values of sensitive arguments (text typed or pasted, commands, option and
//! environment values) are replaced by their length and a SHA-256 prefix
//! (as the reference logs them): enough to tell two calls apart, not to
//! read what was sent. A call refused at a password prompt logs the length
//! alone: a short password is found again from its digest. Batch rows are
//! summarised the same way, recursively. Results are never logged.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::error::ToolError;

/// Argument names whose values are never logged.
const SENSITIVE: &[&str] = &[
    "keys",
    "text",
    "command",
    "value",
    "content",
    "shell",
    "environment",
];
/// Other strings are cut to this many characters.
const MAX_STRING: usize = 200;

fn digest(text: &str, with_hash: bool) -> Value {
    if !with_hash {
        return json!({ "len": text.chars().count() });
    }
    let hash = Sha256::digest(text.as_bytes());
    let hex: String = hash.iter().take(6).map(|b| format!("{b:02x}")).collect();
    json!({ "len": text.chars().count(), "sha256_prefix": hex })
}

fn redact(value: &Value, with_hash: bool) -> Value {
    match value {
        Value::String(s) => digest(s, with_hash),
        // An environment map keeps its names; each value is digested.
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), redact(v, with_hash)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| redact(v, with_hash)).collect()),
        other => digest(&other.to_string(), with_hash),
    }
}

/// The arguments of a call, safe to log: sensitive values as their length,
/// and their digest when `with_hash`.
fn summarize(args: &Value, with_hash: bool) -> Value {
    let Some(map) = args.as_object() else {
        return json!({ "type": json_type(args), "redacted": true });
    };
    let mut out = Map::new();
    for (name, value) in map {
        let summary = if SENSITIVE.contains(&name.as_str()) {
            redact(value, with_hash)
        } else if name == "operations" || name == "arguments" {
            summarize_nested(value, with_hash)
        } else {
            plain(value, with_hash)
        };
        out.insert(name.clone(), summary);
    }
    Value::Object(out)
}

fn summarize_nested(value: &Value, with_hash: bool) -> Value {
    match value {
        // Rows of a batch are argument maps; other lists (patterns) are data.
        Value::Array(rows) => Value::Array(
            rows.iter()
                .map(|row| {
                    if row.is_object() {
                        summarize(row, with_hash)
                    } else {
                        plain(row, with_hash)
                    }
                })
                .collect(),
        ),
        Value::Object(_) => summarize(value, with_hash),
        other => json!({ "type": json_type(other), "redacted": true }),
    }
}

fn plain(value: &Value, with_hash: bool) -> Value {
    match value {
        Value::String(s) if s.chars().count() > MAX_STRING => Value::String(format!(
            "{}...<truncated>",
            s.chars().take(MAX_STRING).collect::<String>()
        )),
        Value::Object(_) | Value::Array(_) => summarize_nested(value, with_hash),
        other => other.clone(),
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Writes the audit line of one call to stderr (`error`: its failure).
pub fn record(tool: &str, args: &Value, error: Option<&ToolError>, millis: f64) {
    let outcome = match error {
        None => "outcome=ok".to_owned(),
        Some(e) => format!("outcome=error error_type={}", e.kind.as_str()),
    };
    let with_hash = !error.is_some_and(|e| e.at_a_secret);
    // One write: stderr is unbuffered, and `eprintln!` writes each piece
    // of the formatted line with a system call of its own (dozens per call).
    let line = format!(
        "tmux-mcp audit: tool={tool} {outcome} duration_ms={millis:.3} args={}\n",
        summarize(args, with_hash)
    );
    let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_reach_the_log() {
        let args = json!({
            "pane_id": "%1",
            "keys": "hunter2",
            "environment": {"TOKEN": "s3cret"},
            "operations": [{"tool": "send_keys", "arguments": {"keys": "pw", "pane_id": "%2"}}, {"keys": "x", "enter": true}],
            "format_string": "x".repeat(300),
        });
        let text = summarize(&args, true).to_string();
        for secret in ["hunter2", "s3cret", "\"pw\""] {
            assert!(!text.contains(secret), "{secret} leaked: {text}");
        }
        let summary = summarize(&args, true);
        assert_eq!(summary["pane_id"], "%1");
        assert_eq!(summary["keys"]["len"], 7);
        assert!(summary["environment"]["TOKEN"]["sha256_prefix"].is_string());
        assert_eq!(summary["operations"][0]["tool"], "send_keys");
        assert_eq!(summary["operations"][0]["arguments"]["pane_id"], "%2");
        assert!(summary["operations"][0]["arguments"]["keys"]["len"].is_number());
        assert!(
            summary["format_string"]
                .as_str()
                .unwrap()
                .ends_with("...<truncated>")
        );
        assert_eq!(digest("abc", true)["sha256_prefix"], "ba7816bf8f01");
        let patterns = summarize(&json!({"patterns": ["READY", "x".repeat(300)]}), true);
        assert_eq!(patterns["patterns"][0], "READY");
        assert!(
            patterns["patterns"][1]
                .as_str()
                .unwrap()
                .ends_with("...<truncated>")
        );
    }

    #[test]
    fn what_was_refused_at_a_password_prompt_is_logged_by_its_length_alone() {
        let args = json!({
            "pane_id": "%1",
            "keys": "1234",
            "operations": [{"tool": "send_keys", "arguments": {"keys": "1234"}}],
        });
        let summary = summarize(&args, false);
        assert_eq!(summary["keys"], json!({ "len": 4 }));
        assert_eq!(
            summary["operations"][0]["arguments"]["keys"],
            json!({ "len": 4 })
        );
        // What the reference logs otherwise: 1234's digest, found again by
        // hashing every four-digit number.
        let prefix = &summarize(&args, true)["keys"]["sha256_prefix"];
        assert_eq!(prefix, &digest("1234", true)["sha256_prefix"]);
    }
}
