//! Options, environment and hooks: read and write tmux settings.
//!
//! Names are checked strictly before tmux sees them (no format syntax, no
//! flags); values go to tmux verbatim through the quoting function. A call
//! without `target` that is not global is given an explicit target (the
//! first session, its first window, that window's first pane), so what it
//! reads or writes never depends on which session our control client sits in.

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::Config;
use crate::tmux::{Command, PaneId, SessionId, WindowId};
use crate::tools::shared::lookup::{self, PaneSel, SessionArgs, SessionSel, WindowSel};
use crate::tools::shared::scope::refuse_server_wide;
use crate::tools::toolsets::Toolset;
use crate::tools::{DESTROY, Hints, READ, Target, ToolDef, ToolError, ToolResult};

/// Overwrites a setting: the previous value is lost (destructive);
/// repeating the call changes nothing more (idempotent), as [`DESTROY`].
const SET: Hints = DESTROY;

pub fn register(tools: &mut Vec<ToolDef>, _: &Config) {
    tools.push(ToolDef::new(
        "show_option",
        Toolset::Inspect,
        "Show tmux Option",
        "Read one tmux option (numbers, on/off as booleans, arrays as lists); null when unset at that level (global_=true: the inherited default).",
        READ,
        show_option,
    ));
    tools.push(ToolDef::new(
        "set_option",
        Toolset::Execute,
        "Set tmux Option",
        "Set one tmux option, stored verbatim. Some values run later: #(...) in status formats, default-command, default-shell, command-alias.",
        SET,
        set_option,
    ));
    tools.push(ToolDef::new(
        "show_environment",
        Toolset::Inspect,
        "Show tmux Environment",
        "The environment tmux gives new processes: a session's, else the global one. Removed variables appear as \"-NAME\": true.",
        READ,
        show_environment,
    ));
    tools.push(ToolDef::new(
        "set_environment",
        Toolset::Execute,
        "Set tmux Environment",
        "Set a variable in a session's environment, else the global one; only later processes see it. BASH_ENV, ENV, PROMPT_COMMAND steer later shells: high-risk.",
        SET,
        set_environment,
    ));
    tools.push(ToolDef::new(
        "show_hooks",
        Toolset::Inspect,
        "Show tmux Hooks",
        "List the hooks set at a scope, one entry per command; scope='server' merges the global session and window trees.",
        READ,
        show_hooks,
    ));
    tools.push(ToolDef::new(
        "show_hook",
        Toolset::Inspect,
        "Show tmux Hook",
        "The commands of one hook; empty when not set, an error when tmux has no such hook.",
        READ,
        show_hook,
    ));
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OptionScope {
    Server,
    Session,
    Window,
    Pane,
}

impl OptionScope {
    fn name(self) -> &'static str {
        match self {
            OptionScope::Server => "server",
            OptionScope::Session => "session",
            OptionScope::Window => "window",
            OptionScope::Pane => "pane",
        }
    }
}

/// `scope`, `target`, `global_`: which options or hooks a call means.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ScopeSel {
    /// Level of the option or hook (default: inferred).
    scope: Option<OptionScope>,
    /// With scope: session name or $id, window @id, or pane %id.
    target: Option<String>,
    /// The global level (-g).
    #[serde(default, rename = "global_")]
    global: bool,
}

/// The object an option or hook command addresses (`-t`).
#[derive(Clone, Copy, Debug)]
enum Object {
    Session(SessionId),
    Window(WindowId),
    Pane(PaneId),
}

impl fmt::Display for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Object::Session(id) => id.fmt(f),
            Object::Window(id) => id.fmt(f),
            Object::Pane(id) => id.fmt(f),
        }
    }
}

/// The object an option or hook command addresses, or none.
async fn resolve_scope(
    target: &Target,
    sel: &ScopeSel,
    unscoped: OptionScope,
) -> ToolResult<Option<Object>> {
    let scope = sel.scope.unwrap_or(unscoped);
    match (&sel.target, sel.scope) {
        (Some(_), None) => {
            return Err(ToolError::invalid(
                "scope is required when target is specified",
            ));
        }
        (Some(_), Some(OptionScope::Server)) => {
            return Err(ToolError::invalid(
                "scope 'server' takes no target: server options and hooks are the same everywhere",
            ));
        }
        (Some(raw), Some(_)) => return object_id(target, scope, raw).await.map(Some),
        (None, _) if sel.global || sel.scope == Some(OptionScope::Server) => return Ok(None),
        (None, _) => {}
    }
    // No target: the first object, as every other tool defaults.
    let first = match scope {
        OptionScope::Server => return Ok(None),
        OptionScope::Session => {
            Object::Session(lookup::session_id_of(target, &SessionSel::default()).await?)
        }
        OptionScope::Window => {
            let session = SessionSel::default();
            let sel = WindowSel {
                window_id: None,
                window_index: None,
                session: &session,
            };
            Object::Window(lookup::window(target, &sel).await?.window_id)
        }
        OptionScope::Pane => Object::Pane(lookup::resolve_pane(target, &PaneSel::default()).await?),
    };
    Ok(Some(first))
}

/// A `target` argument: ids only, except session names (resolved exactly).
async fn object_id(target: &Target, scope: OptionScope, raw: &str) -> ToolResult<Object> {
    let wrong = |what: &str| {
        ToolError::invalid(format!(
            "target {raw:?} is not {what} (scope '{}')",
            scope.name()
        ))
        .suggest("Call list_sessions / list_windows / list_panes to discover valid ids.")
    };
    match scope {
        OptionScope::Session => {
            let sel = if raw.starts_with('$') {
                lookup::session_id(raw)?;
                SessionSel {
                    session_id: Some(raw.to_owned()),
                    session_name: None,
                }
            } else {
                SessionSel {
                    session_name: Some(raw.to_owned()),
                    session_id: None,
                }
            };
            Ok(Object::Session(lookup::session_id_of(target, &sel).await?))
        }
        OptionScope::Window if raw.starts_with('@') => Ok(Object::Window(lookup::window_id(raw)?)),
        OptionScope::Window => Err(wrong("a window id such as '@1'")),
        OptionScope::Pane if raw.starts_with('%') => Ok(Object::Pane(lookup::pane_id(raw)?)),
        OptionScope::Pane => Err(wrong("a pane id such as '%1'")),
        OptionScope::Server => Err(wrong("allowed")),
    }
}

/// Adds the scope flags, `-g` and `-t` in tmux's order.
fn scoped(
    mut cmd: Command,
    scope: Option<OptionScope>,
    global: bool,
    object: Option<Object>,
) -> Command {
    cmd = match scope {
        Some(OptionScope::Server) => cmd.flag("-s"),
        Some(OptionScope::Window) => cmd.flag("-w"),
        Some(OptionScope::Pane) => cmd.flag("-p"),
        Some(OptionScope::Session) | None => cmd,
    };
    if global {
        cmd = cmd.flag("-g");
    }
    match object {
        Some(id) => cmd.target(id),
        None => cmd,
    }
}

/// `^@?[A-Za-z0-9_][A-Za-z0-9_-]*(\[N\])?$`: no format syntax, no flags.
fn check_option_name(name: &str) -> ToolResult<()> {
    let (base, index) = split_index(name);
    let body = base.strip_prefix('@').unwrap_or(base);
    let ok = (1..=128).contains(&body.len())
        && !body.starts_with('-')
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && index != Index::Malformed;
    if ok {
        return Ok(());
    }
    Err(ToolError::invalid(format!("Invalid option name: {name:?}")).suggest(
        "Option names are tmux option names such as 'status' or 'mode-keys', user options such as '@my_opt', optionally with an array index such as 'status-format[1]'.",
    ))
}

/// The hooks of tmux 3.2–3.7 (besides every `after-<command>`).
const HOOKS: &[&str] = &[
    "alert-activity",
    "alert-bell",
    "alert-silence",
    "client-active",
    "client-attached",
    "client-detached",
    "client-focus-in",
    "client-focus-out",
    "client-light-theme",
    "client-dark-theme",
    "client-resized",
    "client-session-changed",
    "command-error",
    "pane-died",
    "pane-exited",
    "pane-focus-in",
    "pane-focus-out",
    "pane-mode-changed",
    "pane-set-clipboard",
    "pane-title-changed",
    "session-closed",
    "session-created",
    "session-renamed",
    "session-window-changed",
    "window-layout-changed",
    "window-linked",
    "window-pane-changed",
    "window-renamed",
    "window-resized",
    "window-unlinked",
];

/// tmux stores hooks as options, so `set-option` can write one; this
/// server writes none. A hook outlives the server, and one that runs
/// `run-shell` in the queue of our own control client would stall it.
fn refuse_hook(name: &str) -> ToolResult<()> {
    let (base, _) = split_index(name);
    if base.starts_with("after-") || HOOKS.contains(&base) {
        return Err(ToolError::invalid(format!(
            "'{name}' is a hook; this server reads hooks (show_hooks, show_hook) but does not set them: a hook outlives the server. Put it in your tmux config file."
        )));
    }
    Ok(())
}

/// The array index an option or hook name may end with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Index {
    /// `name`: the whole option.
    Whole,
    /// `name[N]`.
    At(u32),
    /// `name[` followed by anything but up to six digits and `]`.
    Malformed,
}

/// `name[N]` → (`name`, `At(N)`); `name` → (`name`, `Whole`).
fn split_index(name: &str) -> (&str, Index) {
    let Some(open) = name.find('[') else {
        return (name, Index::Whole);
    };
    let digits = name[open + 1..].strip_suffix(']').unwrap_or("");
    let digits_only = digits.len() <= 6 && digits.bytes().all(|b| b.is_ascii_digit());
    let index = match digits.parse() {
        Ok(n) if digits_only => Index::At(n),
        _ => Index::Malformed,
    };
    (&name[..open], index)
}

fn no_nul(field: &str, text: &str) -> ToolResult<()> {
    if text.contains('\0') {
        return Err(ToolError::invalid(format!(
            "{field} contains a NUL byte, which tmux cannot store"
        )));
    }
    Ok(())
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ShowOptionArgs {
    /// e.g. 'status', '@my_opt', 'status-format[1]'.
    option: String,
    #[serde(flatten)]
    scope: ScopeSel,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct OptionResult {
    /// Option name.
    option: String,
    /// The value: integer, boolean (on/off), string, list (array options), or null when unset.
    value: Value,
}

/// libtmux's typing: digits are integers, on/off booleans.
fn typed(text: &str) -> Value {
    if !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && let Ok(n) = text.parse::<i64>()
    {
        return Value::from(n);
    }
    match text {
        "on" => Value::Bool(true),
        "off" => Value::Bool(false),
        _ => Value::String(text.to_owned()),
    }
}

async fn show_option(target: Target, args: ShowOptionArgs) -> ToolResult<OptionResult> {
    check_option_name(&args.option)?;
    let object = resolve_scope(&target, &args.scope, OptionScope::Pane).await?;
    let mut cmd = scoped(
        Command::new("show-options"),
        args.scope.scope,
        args.scope.global,
        object,
    )
    .flag("-v");
    // An unset user option is "invalid" to tmux; -q makes it empty. Real
    // option names keep the error, so a typo is reported.
    if args.option.starts_with('@') {
        cmd = cmd.flag("-q");
    }
    let lines = target.run(cmd.flag("--").arg(&args.option)).await?;
    let mut values: Vec<Value> = lines
        .iter()
        .map(|l| typed(&String::from_utf8_lossy(l)))
        .collect();
    let value = match values.len() {
        0 => Value::Null,
        1 => values.remove(0),
        _ => Value::Array(values),
    };
    Ok(OptionResult {
        option: args.option,
        value,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SetOptionArgs {
    /// e.g. 'status', '@my_opt', 'status-format[1]'.
    option: String,
    /// on/off for flags.
    value: String,
    #[serde(flatten)]
    scope: ScopeSel,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct OptionSetResult {
    option: String,
    value: String,
    /// Always "set".
    status: String,
}

async fn set_option(target: Target, args: SetOptionArgs) -> ToolResult<OptionSetResult> {
    check_option_name(&args.option)?;
    refuse_hook(&args.option)?;
    no_nul("value", &args.value)?;
    let object = resolve_scope(&target, &args.scope, OptionScope::Pane).await?;
    if object.is_none() || args.scope.global {
        refuse_server_wide(&target, "Setting a global or server option")?;
    }
    let cmd = scoped(
        Command::new("set-option"),
        args.scope.scope,
        args.scope.global,
        object,
    );
    target
        .run(cmd.flag("--").arg(&args.option).arg(&args.value))
        .await?;
    Ok(OptionSetResult {
        option: args.option,
        value: args.value,
        status: "set".into(),
    })
}

/// A variable's value, or `true` for a variable tmux marks as removed.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum EnvValue {
    Value(String),
    Removed(bool),
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct EnvironmentResult {
    /// NAME → value; variables removed in this scope appear as "-NAME": true.
    variables: BTreeMap<String, EnvValue>,
}

/// `-g`, or `-t <session id>` when a session is named.
async fn env_scope(target: &Target, session: &SessionSel, cmd: Command) -> ToolResult<Command> {
    if session.is_given() {
        let id = lookup::session(target, session).await?.session_id;
        Ok(cmd.target(id))
    } else {
        Ok(cmd.flag("-g"))
    }
}

async fn show_environment(target: Target, args: SessionArgs) -> ToolResult<EnvironmentResult> {
    if !args.session.is_given() {
        // The global environment is the server's, and every new process
        // in it inherits it: outside a session or owned scope.
        refuse_server_wide(&target, "Reading the global environment")?;
    }
    // `-s` prints shell syntax with the value quoted: a value holding a
    // newline stays one variable (the plain form would split it into two).
    let cmd = env_scope(
        &target,
        &args.session,
        Command::new("show-environment").flag("-s"),
    )
    .await?;
    let lines = target.run(cmd).await?;
    let text = String::from_utf8_lossy(&lines.join(&b'\n')).into_owned();
    Ok(EnvironmentResult {
        variables: parse_shell_environment(&text),
    })
}

/// Parses `show-environment -s`: `NAME="value"; export NAME;` per variable
/// (in the value `\` escapes `$`, `` ` ``, `"` and `\`; newlines are raw),
/// or `unset NAME;` for one marked removed.
fn parse_shell_environment(text: &str) -> BTreeMap<String, EnvValue> {
    let mut variables = BTreeMap::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches(['\n', ' ']);
        if let Some(after) = rest.strip_prefix("unset ") {
            let end = after.find(';').unwrap_or(after.len());
            variables.insert(format!("-{}", &after[..end]), EnvValue::Removed(true));
            rest = after.get(end + 1..).unwrap_or("");
            continue;
        }
        let Some(eq) = rest.find("=\"") else { break };
        let name = &rest[..eq];
        let mut value = String::new();
        let mut end = None;
        let mut chars = rest[eq + 2..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => value.extend(chars.next().map(|(_, n)| n)),
                '"' => {
                    end = Some(eq + 2 + i + 1);
                    break;
                }
                c => value.push(c),
            }
        }
        let Some(end) = end else { break };
        variables.insert(name.to_owned(), EnvValue::Value(value));
        // The rest of that line is `; export NAME;`.
        rest = &rest[end..];
        rest = rest.find('\n').map_or("", |i| &rest[i + 1..]);
    }
    variables
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SetEnvironmentArgs {
    /// Variable name (no '=').
    name: String,
    // (no schema text) Value.
    value: String,
    #[serde(flatten)]
    session: SessionSel,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct EnvironmentSetResult {
    name: String,
    value: String,
    /// Always "set".
    status: String,
}

async fn set_environment(
    target: Target,
    args: SetEnvironmentArgs,
) -> ToolResult<EnvironmentSetResult> {
    crate::tools::shared::spawn::env_name(&args.name)?;
    no_nul("value", &args.value)?;
    if !args.session.is_given() {
        refuse_server_wide(&target, "Setting the global environment")?;
    }
    let cmd = env_scope(&target, &args.session, Command::new("set-environment")).await?;
    target
        .run(cmd.flag("--").arg(&args.name).arg(&args.value))
        .await?;
    Ok(EnvironmentSetResult {
        name: args.name,
        value: args.value,
        status: "set".into(),
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ShowHooksArgs {
    #[serde(flatten)]
    scope: ScopeSel,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ShowHookArgs {
    /// e.g. 'pane-exited', 'after-new-window[0]'.
    hook_name: String,
    #[serde(flatten)]
    scope: ScopeSel,
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
pub struct HookEntry {
    /// Hook name (e.g. 'pane-exited').
    hook_name: String,
    /// Array index; null for a scalar hook.
    index: Option<i64>,
    /// The tmux command at that index.
    command: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct HookListResult {
    entries: Vec<HookEntry>,
}

/// `^[a-z-]+(\[[0-9]+\])?$`.
fn check_hook_name(name: &str) -> ToolResult<()> {
    let (base, index) = split_index(name);
    let ok = (1..=64).contains(&base.len())
        && base.starts_with(|c: char| c.is_ascii_lowercase())
        && base.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
        && index != Index::Malformed;
    if ok {
        return Ok(());
    }
    Err(ToolError::invalid(format!("Invalid hook name: {name:?}"))
        .suggest("Hook names look like 'pane-exited' or 'after-new-window', optionally with an index such as 'after-new-window[0]'."))
}

/// One `show-hooks` line: `name[N] command`, `name command`, or a bare
/// `name` (unset: no entry).
fn hook_entry(line: &str) -> Option<HookEntry> {
    let (key, command) = line.split_once(' ')?;
    let (name, index) = split_index(key);
    Some(HookEntry {
        hook_name: name.to_owned(),
        index: match index {
            Index::At(n) => Some(i64::from(n)),
            Index::Whole | Index::Malformed => None,
        },
        command: command.to_owned(),
    })
}

async fn hooks(target: &Target, sel: &ScopeSel, hook: Option<&str>) -> ToolResult<HookListResult> {
    // Without -w or -p, show-hooks reads the session tree.
    let object = resolve_scope(target, sel, OptionScope::Session).await?;
    // Hooks have no server tree: "server" means both global trees (window
    // and pane hooks live in the window one).
    let runs: Vec<Command> = if sel.scope == Some(OptionScope::Server) {
        vec![
            Command::new("show-hooks").flag("-g"),
            Command::new("show-hooks").flag("-g").flag("-w"),
        ]
    } else {
        vec![scoped(
            Command::new("show-hooks"),
            sel.scope,
            sel.global,
            object,
        )]
    };
    let mut entries = Vec::new();
    for cmd in runs {
        let cmd = match hook {
            Some(name) => cmd.flag("--").arg(name),
            None => cmd,
        };
        for line in target.run(cmd).await? {
            entries.extend(hook_entry(&String::from_utf8_lossy(&line)));
        }
    }
    entries.sort();
    entries.dedup();
    Ok(HookListResult { entries })
}

async fn show_hooks(target: Target, args: ShowHooksArgs) -> ToolResult<HookListResult> {
    hooks(&target, &args.scope, None).await
}

async fn show_hook(target: Target, args: ShowHookArgs) -> ToolResult<HookListResult> {
    check_hook_name(&args.hook_name)?;
    hooks(&target, &args.scope, Some(&args.hook_name)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_environment_keeps_multi_line_values_whole() {
        let text = "FOO=\"l1\nBAR=evil \\\"q\\\" \\$x \\`y\\` \\\\z\"; export FOO;\nunset GONE;\nHOME=\"/root\"; export HOME;";
        let vars = parse_shell_environment(text);
        assert_eq!(vars.len(), 3, "{vars:?}");
        match &vars["FOO"] {
            EnvValue::Value(v) => assert_eq!(v, "l1\nBAR=evil \"q\" $x `y` \\z"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(vars["-GONE"], EnvValue::Removed(true)));
        assert!(!vars.contains_key("BAR"));
    }

    #[test]
    fn option_names_are_plain() {
        for good in [
            "status",
            "mode-keys",
            "@my_opt",
            "@a-b_c",
            "status-format[1]",
            "@x[0]",
        ] {
            assert!(check_option_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "@",
            "-g",
            "@-x",
            "a b",
            "#{pane_id}",
            "a;b",
            "x[",
            "x[]",
            "x[a]",
            "x[1",
            "x]",
            "x[1]y",
            "x[1234567]",
            "a'b",
            "a\nb",
        ] {
            assert!(check_option_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn hook_names_are_plain() {
        for good in ["pane-exited", "after-new-window[0]", "session-renamed[12]"] {
            assert!(check_hook_name(good).is_ok(), "{good}");
        }
        for bad in ["", "Pane", "a_b", "x[", "x[a]", "#{x}", "a b", "x[1]y"] {
            assert!(check_hook_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn values_are_typed_like_libtmux() {
        assert_eq!(typed("42"), Value::from(42));
        assert_eq!(typed("on"), Value::Bool(true));
        assert_eq!(typed("off"), Value::Bool(false));
        assert_eq!(typed("-1"), Value::from("-1"));
        assert_eq!(typed(""), Value::from(""));
        assert_eq!(
            typed("99999999999999999999"),
            Value::from("99999999999999999999")
        );
    }

    #[test]
    fn hook_lines_split_into_entries() {
        assert_eq!(hook_entry("pane-exited"), None);
        let e = hook_entry("after-new-window[1] display-message \"x y\"").unwrap();
        assert_eq!(e.hook_name, "after-new-window");
        assert_eq!(e.index, Some(1));
        assert_eq!(e.command, "display-message \"x y\"");
        assert_eq!(hook_entry("x run-shell y").unwrap().index, None);
    }
}
