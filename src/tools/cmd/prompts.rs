//! The four prompts of the reference: recipes that tell an agent which
//! tools to call, in which order, with which arguments. Every
//! `tool(arg=…)` written here is checked against the catalog by
//! `tests/it/prompts.rs`.

use serde_json::{Map, Value, json};

use crate::mcp::ServiceError;
use crate::tools::{App, NoArgs, ToolResult, Untargeted};

struct PromptArg {
    name: &'static str,
    description: &'static str,
    required: bool,
}

struct PromptDef {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    args: &'static [PromptArg],
}

const PROMPTS: [PromptDef; 4] = [
    PromptDef {
        name: "run_and_wait",
        title: "Run and Wait",
        description: "Run a shell command in a pane and read its exit status and output with one run_command call.",
        args: &[
            PromptArg {
                name: "command",
                description: "The shell command to run.",
                required: true,
            },
            PromptArg {
                name: "pane_id",
                description: "Pane to run it in (e.g. '%1').",
                required: true,
            },
            PromptArg {
                name: "timeout",
                description: "Seconds to wait, a number (default 60).",
                required: false,
            },
        ],
    },
    PromptDef {
        name: "diagnose_failing_pane",
        title: "Diagnose Failing Pane",
        description: "Read-only plan to find out why a pane's command failed and propose a fix without running it.",
        args: &[PromptArg {
            name: "pane_id",
            description: "Pane to diagnose (e.g. '%1').",
            required: true,
        }],
    },
    PromptDef {
        name: "build_dev_workspace",
        title: "Build Dev Workspace",
        description: "Create a session with an editor pane, a free shell and a log pane.",
        args: &[
            PromptArg {
                name: "session_name",
                description: "Name of the new session.",
                required: true,
            },
            PromptArg {
                name: "log_command",
                description: "Command for the log pane (default 'watch -n 1 date').",
                required: false,
            },
        ],
    },
    PromptDef {
        name: "interrupt_gracefully",
        title: "Interrupt Gracefully",
        description: "Stop a pane's foreground program with Ctrl-C, check that it stopped, and never escalate on its own.",
        args: &[PromptArg {
            name: "pane_id",
            description: "Pane whose program to interrupt (e.g. '%1').",
            required: true,
        }],
    },
];

/// The `prompts/list` entries.
pub fn list() -> Vec<Value> {
    PROMPTS
        .iter()
        .map(|p| {
            let args: Vec<Value> = p
                .args
                .iter()
                .map(|a| json!({ "name": a.name, "description": a.description, "required": a.required }))
                .collect();
            json!({
                "name": p.name,
                "title": p.title,
                "description": p.description,
                "arguments": args,
            })
        })
        .collect()
}

/// `prompts/get`: one user message with the rendered recipe.
pub fn get(app: &App, name: &str, arguments: Map<String, Value>) -> Result<Value, ServiceError> {
    let def = PROMPTS
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| ServiceError::unknown_prompt(name))?;
    let args = Args::check(def, arguments)?;
    let text = match def.name {
        "run_and_wait" => run_and_wait(app, &args)?,
        "diagnose_failing_pane" => diagnose_failing_pane(&args),
        "build_dev_workspace" => build_dev_workspace(&args),
        _ => interrupt_gracefully(&args),
    };
    Ok(json!({
        "description": def.description,
        "messages": [{ "role": "user", "content": { "type": "text", "text": text } }],
    }))
}

/// Checked prompt arguments: known names only, required ones present,
/// values strings (numbers and booleans are taken as their JSON text).
struct Args(Map<String, Value>);

impl Args {
    fn check(def: &PromptDef, arguments: Map<String, Value>) -> Result<Args, ServiceError> {
        let unknown: Vec<&str> = arguments
            .keys()
            .map(String::as_str)
            .filter(|k| !def.args.iter().any(|a| a.name == *k))
            .collect();
        if !unknown.is_empty() {
            let known: Vec<&str> = def.args.iter().map(|a| a.name).collect();
            return Err(ServiceError::InvalidParams(format!(
                "Unknown argument(s) for prompt '{}': {}. Valid arguments: {}.",
                def.name,
                unknown.join(", "),
                known.join(", ")
            )));
        }
        let mut values = Map::new();
        for (key, value) in arguments {
            let text = match value {
                Value::Null => continue,
                Value::String(s) => s,
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                other => {
                    return Err(ServiceError::InvalidParams(format!(
                        "Could not convert argument '{key}': expected a string, got {other}"
                    )));
                }
            };
            values.insert(key, Value::String(text));
        }
        let missing: Vec<String> = def
            .args
            .iter()
            .filter(|a| a.required && !values.contains_key(a.name))
            .map(|a| format!("'{}'", a.name))
            .collect();
        if !missing.is_empty() {
            return Err(ServiceError::InvalidParams(format!(
                "Missing required arguments: {{{}}}",
                missing.join(", ")
            )));
        }
        Ok(Args(values))
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(Value::as_str)
    }

    /// A required argument (present after [`Args::check`]).
    fn req(&self, name: &str) -> &str {
        self.get(name).unwrap_or_default()
    }
}

/// A string as Python writes it (`repr`), the notation the recipes use.
pub fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// A float as Python writes it (`60.0`, `2.5`).
fn py_float(x: f64) -> String {
    format!("{x:?}")
}

fn run_and_wait(app: &App, args: &Args) -> Result<String, ServiceError> {
    let command = args.req("command");
    let pane = py_repr(args.req("pane_id"));
    let timeout = match args.get("timeout") {
        None => 60.0,
        Some(raw) => match raw.trim().parse::<f64>() {
            Ok(t) if t.is_finite() && t > 0.0 => t,
            _ => {
                return Err(ServiceError::InvalidParams(format!(
                    "Could not convert argument 'timeout': expected a positive number of seconds, got {}",
                    py_repr(raw)
                )));
            }
        },
    };
    let multiline = command.contains(['\n', '\r']);
    let history = if multiline {
        ", suppress_history=False"
    } else {
        ""
    };
    let ceiling = app.config.wait_max.as_secs_f64();
    let mut text = format!(
        "Run a shell command in tmux pane {pane} and wait for it to finish, with one call:\n\n\
         run_command(pane_id={pane}, command={cmd}, timeout={timeout}, max_lines=100{history})\n\n\
         Then read the result, not the screen: exit_status is the command's exit code, \
         timed_out says whether it was still running when the wait ended, and output is what \
         the command itself printed (the last 100 lines).\n\n\
         Do not rebuild this from send_keys and repeated capture_pane calls: run_command knows \
         exactly when the command ended, and a polling loop guesses.\n\n\
         This server caps the wait at {ceiling} seconds; effective_timeout in the result is \
         the wait that applied. If timed_out is true the command is still running: do not \
         start it again, follow it with capture_since(pane_id={pane}) (pass back the cursor \
         it returns) or wait_for_text(pane_id={pane}, patterns=None, timeout={ceiling_f}).\n\n\
         For programs that ask for input (prompts, REPLs, full-screen tools) use send_keys \
         (or send_keys_batch) instead, and read what they print with capture_since.",
        cmd = py_repr(command),
        timeout = py_float(timeout),
        ceiling = ceiling,
        ceiling_f = py_float(ceiling),
    );
    if multiline {
        text.push_str(
            "\n\nWarning: the command spans several lines, which run_command only accepts with \
             suppress_history=False, so the shell may record it in its history.",
        );
    }
    Ok(text)
}

fn diagnose_failing_pane(args: &Args) -> String {
    let pane = py_repr(args.req("pane_id"));
    format!(
        "Find out why the command in tmux pane {pane} failed. Only read: type nothing into \
         the pane.\n\n\
         1. snapshot_pane(pane_id={pane}): the screen, the cursor, pane_current_command, and \
         whether a full-screen program (alternate_on) or copy mode (pane_in_mode) is showing.\n\
         2. If content_truncated is true, call snapshot_pane(pane_id={pane}, max_lines=None) \
         for the whole screen.\n\
         3. To keep watching across turns, call capture_since(pane_id={pane}) and pass the \
         cursor it returns to the next call: each call returns only the lines printed since \
         the previous one.\n\
         4. Name the last command that ran and the last line of output it printed (an \
         error, a stack trace, a question waiting for an answer).\n\
         5. Propose the most likely root cause and one minimal command that would confirm \
         it. Do not run that command: show it and wait for the user."
    )
}

fn build_dev_workspace(args: &Args) -> String {
    let session = py_repr(args.req("session_name"));
    let log = py_repr(args.get("log_command").unwrap_or("watch -n 1 date"));
    format!(
        "Build a three-pane development workspace in a new tmux session {session}.\n\n\
         1. create_session(session_name={session}). Its active_pane_id is the first pane: \
         call it A.\n\
         2. split_window(pane_id=A, direction='below'). The new pane's pane_id is B.\n\
         3. split_window(pane_id=B, direction='right'). The new pane's pane_id is C.\n\
         4. send_keys(pane_id=A, keys='vim') to open the editor, and \
         send_keys(pane_id=C, keys={log}) for the logs. The shells buffer what is typed, so \
         there is no need to wait for a prompt first. B stays a free shell.\n\
         5. Optionally check that both started: wait_for_text(pane_id=A, patterns=None, \
         timeout=3.0) and the same for C (any new output counts).\n\
         6. From now on address the panes by these ids, never by position: indexes change \
         when panes are added or closed."
    )
}

fn interrupt_gracefully(args: &Args) -> String {
    let pane = py_repr(args.req("pane_id"));
    format!(
        "Stop the program running in tmux pane {pane} with an interrupt (Ctrl-C) and nothing \
         harsher.\n\n\
         1. get_pane_info(pane_id={pane}): note pane_current_command, the program in the \
         foreground.\n\
         2. send_keys(pane_id={pane}, keys='C-c', literal=False, enter=False).\n\
         3. wait_for_text(pane_id={pane}, patterns=['\\\\$ *$', '# *$', '% *$', '> *$'], \
         regex=True, timeout=5.0) to wait for a shell prompt. Do not wait for '^C': the \
         terminal echoes it on every interrupt, whether or not the program stopped.\n\
         4. get_pane_info(pane_id={pane}) again. If pane_current_command is now the shell, \
         the program stopped: trust this over what the screen seems to show.\n\
         5. If it is unchanged, the program ignored or caught the interrupt: stop and ask \
         the user. Never escalate on your own to C-\\ (SIGQUIT), kill_pane or kill."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_repr_quoting() {
        assert_eq!(py_repr("ls -la"), "'ls -la'");
        assert_eq!(py_repr("echo 'hi'"), "\"echo 'hi'\"");
        assert_eq!(py_repr("a'b\"c"), "'a\\'b\"c'");
        assert_eq!(py_repr("a\\b\nc"), "'a\\\\b\\nc'");
        assert_eq!(py_float(60.0), "60.0");
        assert_eq!(py_float(2.5), "2.5");
    }
}

/// The tools [`register_as_tools`] adds.
pub const TOOL_NAMES: [&str; 2] = ["list_prompts", "get_prompt"];

/// `LIBTMUX_MCP_PROMPTS_AS_TOOLS=1`: the prompts as two `inspect` tools, for
/// clients that show tools but not prompts.
pub fn register_as_tools(tools: &mut Vec<super::ToolDef>) {
    use super::ToolDef;
    use crate::tools::toolsets::Toolset;
    tools.push(ToolDef::new(
        TOOL_NAMES[0],
        Toolset::Inspect,
        "List Prompts",
        "The prompts this server offers (recipes for common tmux tasks), as JSON text.",
        crate::tools::READ,
        list_prompts,
    ));
    tools.push(ToolDef::new(
        TOOL_NAMES[1],
        Toolset::Inspect,
        "Get Prompt",
        "One prompt rendered with its arguments, as JSON text (its messages).",
        crate::tools::READ,
        get_prompt,
    ));
}

async fn list_prompts(_: Untargeted, _: NoArgs) -> ToolResult<String> {
    Ok(serde_json::to_string(&json!({ "prompts": list() })).unwrap_or_default())
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct GetPromptArgs {
    /// Prompt name, from list_prompts.
    name: String,
    /// The prompt's arguments.
    arguments: Option<Map<String, Value>>,
}

async fn get_prompt(Untargeted { app, .. }: Untargeted, args: GetPromptArgs) -> ToolResult<String> {
    let rendered = get(&app, &args.name, args.arguments.unwrap_or_default())
        .map_err(|e| crate::tools::ToolError::invalid(e.to_string()))?;
    Ok(serde_json::to_string(&rendered).unwrap_or_default())
}
