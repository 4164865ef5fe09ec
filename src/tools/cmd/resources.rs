//! The six resource templates of the reference (`tmux://sessions…`,
//! `tmux://panes…`) and the completion of their variables from live tmux.
//!
//! Reads return the same models the tools return (JSON, 2-space indent),
//! looked up through `target.rs`; pane content is plain text.

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Value, json};

use crate::drive::tail::trimmed_lines;
use crate::mcp::{CompletionRef, CompletionRequest, ServiceError};
use crate::tmux::{Command, SessionId};
use crate::tools::shared::{lookup, scope};
use crate::tools::{App, ErrorKind, Target, ToolError};

const JSON: &str = "application/json";
const TEXT: &str = "text/plain";

/// One template: `(name, uriTemplate, title, mimeType, description)`.
type TemplateDef = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

const TEMPLATES: [TemplateDef; 6] = [
    (
        "get_sessions",
        "tmux://sessions{?socket_name}",
        "All Sessions",
        JSON,
        "Every session of the tmux server (SessionInfo list).",
    ),
    (
        "get_session",
        "tmux://sessions/{session_name}{?socket_name}",
        "Session Detail",
        JSON,
        "One session, by name, with its windows.",
    ),
    (
        "get_session_windows",
        "tmux://sessions/{session_name}/windows{?socket_name}",
        "Session Windows",
        JSON,
        "The windows of a session, by session name (WindowInfo list).",
    ),
    (
        "get_window",
        "tmux://sessions/{session_name}/windows/{window_index}{?socket_name}",
        "Window Detail",
        JSON,
        "One window, by session name and window index, with its panes.",
    ),
    (
        "get_pane",
        "tmux://panes/{pane_id}{?socket_name}",
        "Pane Detail",
        JSON,
        "One pane's metadata (PaneInfo). Percent-encode the id: tmux://panes/%251 is pane %1.",
    ),
    (
        "get_pane_content",
        "tmux://panes/{pane_id}/content{?socket_name}",
        "Pane Content",
        TEXT,
        "The text a pane shows (visible screen, trailing blank lines trimmed, not truncated).",
    ),
];

/// The `resources/templates/list` entries.
pub fn templates() -> Vec<Value> {
    TEMPLATES
        .iter()
        .map(|(name, uri, title, mime, description)| {
            json!({
                "uriTemplate": uri,
                "name": name,
                "title": title,
                "description": description,
                "mimeType": mime,
            })
        })
        .collect()
}

/// The `resources/list` entries: the one template without a required
/// variable, as a concrete URI (the configured server's sessions), so
/// clients that browse resources (Inspector, fastmcp) see something to read.
pub fn concrete() -> Vec<Value> {
    let (_, _, title, mime, description) = TEMPLATES[0];
    vec![json!({
        "uri": "tmux://sessions",
        "name": "sessions",
        "title": title,
        "description": format!("{description} Add ?socket_name=NAME for another server."),
        "mimeType": mime,
    })]
}

/// What a URI names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resource {
    Sessions,
    Session(String),
    SessionWindows(String),
    Window(String, String),
    Pane(String),
    PaneContent(String),
}

/// A matched URI: the resource and its `socket_name` query parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    pub resource: Resource,
    pub socket_name: Option<String>,
}

/// Matches `uri` against the six templates. `None` (an unknown resource)
/// also for a parameter that is not percent-decodable UTF-8, is empty,
/// contains NUL or has a `..` path component, and for query parameters
/// other than one `socket_name`.
pub fn parse(uri: &str) -> Option<Parsed> {
    let rest = uri.strip_prefix("tmux://")?;
    if rest.contains('#') {
        return None;
    }
    let (path, query) = match rest.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (rest, None),
    };
    let mut socket_name = None;
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=')?;
        if decode(key)? != "socket_name" || socket_name.is_some() {
            return None;
        }
        socket_name = Some(decode(value)?);
    }
    let segments: Vec<&str> = path.split('/').collect();
    let param = |raw: &str| decode(raw);
    let resource = match segments.as_slice() {
        ["sessions"] => Resource::Sessions,
        ["sessions", name] => Resource::Session(param(name)?),
        ["sessions", name, "windows"] => Resource::SessionWindows(param(name)?),
        ["sessions", name, "windows", index] => Resource::Window(param(name)?, param(index)?),
        ["panes", id] => Resource::Pane(param(id)?),
        ["panes", id, "content"] => Resource::PaneContent(param(id)?),
        _ => return None,
    };
    Some(Parsed {
        resource,
        socket_name,
    })
}

/// Percent-decodes one parameter and screens it.
fn decode(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let text = String::from_utf8(out).ok()?;
    let traversal = text.split(['/', '\\']).any(|part| part == "..");
    (!text.is_empty() && !text.contains('\0') && !traversal).then_some(text)
}

/// `resources/read`: the `contents` array.
pub async fn read(app: Arc<App>, uri: String) -> Result<Vec<Value>, ServiceError> {
    let parsed = parse(&uri).ok_or_else(|| ServiceError::unknown_resource(&uri))?;
    let (mime, text) = render(&app, parsed)
        .await
        .map_err(|e| ServiceError::Internal(e.message))?;
    Ok(vec![json!({ "uri": uri, "mimeType": mime, "text": text })])
}

fn pretty<T: Serialize>(value: &T) -> Result<String, ToolError> {
    serde_json::to_string_pretty(value)
        .map_err(|e| ToolError::new(ErrorKind::Json, format!("could not encode: {e}")))
}

async fn render(app: &App, parsed: Parsed) -> Result<(&'static str, String), ToolError> {
    let target = app.fenced_socket(parsed.socket_name.as_deref()).await?;
    match &parsed.resource {
        Resource::Pane(id) | Resource::PaneContent(id) => {
            scope::refuse_pane(&target, lookup::pane_id(id)?)?
        }
        Resource::Session(name) | Resource::SessionWindows(name) | Resource::Window(name, _) => {
            scope::refuse_session_named(&target, name)?
        }
        Resource::Sessions => {}
    }
    let text = match parsed.resource {
        Resource::Sessions => pretty(&lookup::sessions(&target).await?)?,
        Resource::Session(name) => {
            let session = session_named(&target, &name).await?;
            let windows = windows_of(&target, session.session_id).await?;
            let mut value = json!(session);
            value["windows"] = json!(windows);
            pretty(&value)?
        }
        Resource::SessionWindows(name) => {
            let session = session_named(&target, &name).await?;
            pretty(&windows_of(&target, session.session_id).await?)?
        }
        Resource::Window(name, index) => {
            let session = session_named(&target, &name).await?;
            let window = windows_of(&target, session.session_id)
                .await?
                .into_iter()
                .find(|w| w.window_index.as_deref() == Some(index.as_str()))
                .ok_or_else(|| {
                    ToolError::new(
                        ErrorKind::WindowNotFound,
                        format!("Window not found: index {index}"),
                    )
                })?;
            let mut panes: Vec<_> = lookup::panes(&target)
                .await?
                .into_iter()
                .filter(|p| {
                    p.window_id == Some(window.window_id)
                        && p.session_id == Some(session.session_id)
                })
                .collect();
            for pane in &mut panes {
                app.mark_caller(&target, pane);
            }
            let mut value = json!(window);
            value["panes"] = json!(panes);
            pretty(&value)?
        }
        Resource::Pane(id) => {
            let pane = lookup::pane_id(&id)?;
            pretty(&app.pane_info(&target, pane).await?)?
        }
        Resource::PaneContent(id) => {
            let pane = lookup::pane_id(&id)?;
            let lines = target
                .run(Command::new("capture-pane").flag("-p").target(pane))
                .await?;
            return Ok((TEXT, trimmed_lines(&lines).join("\n")));
        }
    };
    Ok((JSON, text))
}

/// A session by exact name (resources never take ids or prefixes).
async fn session_named(
    target: &Target,
    name: &str,
) -> Result<crate::tools::shared::models::SessionInfo, ToolError> {
    lookup::sessions(target)
        .await?
        .into_iter()
        .find(|s| s.session_name.as_deref() == Some(name))
        .ok_or_else(|| {
            ToolError::new(
                ErrorKind::SessionNotFound,
                format!("Session not found: {name}"),
            )
        })
}

async fn windows_of(
    target: &Target,
    session_id: SessionId,
) -> Result<Vec<crate::tools::shared::models::WindowInfo>, ToolError> {
    let mut windows = lookup::windows(target).await?;
    windows.retain(|w| w.session_id == Some(session_id));
    Ok(windows)
}

/// `completion/complete` for the templates' `session_name`, `pane_id` and
/// `window_index`: live values starting with what was typed, in tmux's
/// order, without duplicates. `window_index` is narrowed to the session in
/// `context.arguments.session_name` when one is given. Anything else, and
/// any tmux failure, completes to nothing.
pub async fn complete(app: Arc<App>, request: CompletionRequest) -> Vec<String> {
    let CompletionRef::Resource(uri) = &request.reference else {
        return Vec::new();
    };
    let variable = format!("{{{}}}", request.argument);
    // Clients send the template as listed or without its `{?socket_name}`
    // query part; both name the same template.
    let names_template = |template: &str| {
        template == uri || template.strip_suffix("{?socket_name}") == Some(uri.as_str())
    };
    if !TEMPLATES
        .iter()
        .any(|(_, template, ..)| names_template(template) && template.contains(&variable))
    {
        return Vec::new();
    }
    let context = |key: &str| request.context.get(key).and_then(Value::as_str);
    let Ok(target) = app.fenced_socket(context("socket_name")).await else {
        return Vec::new();
    };
    let candidates: Vec<String> = match request.argument.as_str() {
        "session_name" => match lookup::sessions(&target).await {
            Ok(sessions) => sessions
                .into_iter()
                .filter_map(|s| s.session_name)
                .collect(),
            Err(_) => return Vec::new(),
        },
        "pane_id" => match lookup::panes(&target).await {
            Ok(panes) => panes.into_iter().map(|p| p.pane_id.to_string()).collect(),
            Err(_) => return Vec::new(),
        },
        "window_index" => match lookup::windows(&target).await {
            Ok(windows) => {
                let session = context("session_name");
                windows
                    .into_iter()
                    .filter(|w| session.is_none() || w.session_name.as_deref() == session)
                    .filter_map(|w| w.window_index)
                    .collect()
            }
            Err(_) => return Vec::new(),
        },
        _ => return Vec::new(),
    };
    let mut seen = std::collections::HashSet::new();
    candidates
        .into_iter()
        .filter(|c| c.starts_with(&request.value) && seen.insert(c.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(uri: &str) -> Option<Resource> {
        parse(uri).map(|p| p.resource)
    }

    #[test]
    fn every_listed_resource_is_readable_by_a_template() {
        let listed = concrete();
        assert!(!listed.is_empty());
        for entry in listed {
            let uri = entry["uri"].as_str().unwrap();
            assert_eq!(resource(uri), Some(Resource::Sessions), "{uri}");
        }
    }

    #[test]
    fn uris_match_the_templates() {
        assert_eq!(resource("tmux://sessions"), Some(Resource::Sessions));
        assert_eq!(
            resource("tmux://sessions/dev%20box/windows/2"),
            Some(Resource::Window("dev box".into(), "2".into()))
        );
        assert_eq!(
            resource("tmux://panes/%250/content"),
            Some(Resource::PaneContent("%0".into()))
        );
        assert_eq!(
            resource("tmux://sessions/C:foo"),
            Some(Resource::Session("C:foo".into()))
        );
        assert_eq!(
            resource("tmux://sessions/a..b/windows"),
            Some(Resource::SessionWindows("a..b".into()))
        );
        let p = parse("tmux://sessions?socket_name=my%2Dsock").unwrap();
        assert_eq!(p.socket_name.as_deref(), Some("my-sock"));
        assert_eq!(
            parse("tmux://panes/%251?socket_name=/path/to/sock")
                .unwrap()
                .socket_name
                .as_deref(),
            Some("/path/to/sock")
        );
    }

    #[test]
    fn unknown_or_unsafe_uris_are_refused() {
        for uri in [
            "tmux://nope",
            "tmux://sessions/",
            "tmux://sessions//windows",
            "tmux://sessions/x/windows/1/extra",
            "tmux://sessions/..",
            "tmux://sessions/%2E%2E",
            "tmux://sessions/a%2F..%2Fb",
            "tmux://sessions?socket_name=../../x",
            "tmux://sessions/a%00b",
            "tmux://sessions/%zz",
            "tmux://sessions/%ff",
            "tmux://sessions?socket=x",
            "tmux://sessions?socket_name=a&socket_name=b",
            "tmux://sessions#frag",
            "file://sessions",
            "",
        ] {
            assert_eq!(parse(uri), None, "{uri}");
        }
    }
}
