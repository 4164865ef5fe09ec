//! Asking the person before a teardown (`TMUX_MCP_CONFIRM=teardown`):
//! `kill_server`, `kill_session` and `kill_window` put the question to the
//! person through the MCP client (elicitation, form mode) and go on only
//! on a yes; every other outcome refuses (fails closed).

use std::time::Duration;

use serde_json::{Value, json};

use crate::mcp::{Answer, AskError, CallContext};
use crate::tmux::socket::SocketSpec;
use crate::tools::{App, ErrorKind, Target, ToolError, ToolResult};

/// How long the person has to answer.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(120);

/// The tool `_meta` of a teardown that asks first: the approval Claude
/// Code asks for whatever its mode, allow rules or hooks say.
pub fn listing_meta() -> Value {
    json!({ "anthropic/requiresUserInteraction": true })
}

/// The form: one box the person ticks to allow the kill.
fn form() -> Value {
    json!({
        "type": "object",
        "properties": {
            "confirm": {
                "type": "boolean",
                "title": "Kill it",
                "description": "Tick to let the agent kill it.",
                "default": false,
            }
        },
        "required": ["confirm"],
    })
}

/// The server of `target`, as a person would name it.
pub fn server_of(target: &Target) -> String {
    match &target.spec {
        SocketSpec::Default => "the default tmux server".to_owned(),
        SocketSpec::Name(name) => format!("tmux server -L {name}"),
        SocketSpec::Path(path) => format!("tmux server -S {}", path.display()),
        SocketSpec::Remote(remote) => format!("tmux server {remote}"),
    }
}

impl App {
    /// With `TMUX_MCP_CONFIRM=teardown`, asks the person whether `what`
    /// may be killed; `Ok` only on an accepted, ticked form. Without the
    /// setting, `Ok` at once.
    pub async fn confirm_teardown(&self, ctx: &CallContext, what: &str) -> ToolResult<()> {
        if !self.config.confirm_teardown {
            return Ok(());
        }
        let message = format!("An agent asks to kill {what}, with every process in it. Allow it?");
        let answer = ctx
            .ask
            .form(&message, form(), ANSWER_WITHIN, &ctx.cancel)
            .await;
        let declined = |how: &str| {
            ToolError::new(
                ErrorKind::Refused,
                format!("Not killed: the person declined ({how}) to kill {what}."),
            )
            .suggest("Leave it, or ask the person in the conversation why not.")
        };
        match answer {
            Ok(Answer::Accept(content)) if content.get("confirm") == Some(&Value::Bool(true)) => {
                Ok(())
            }
            Ok(Answer::Accept(_)) => Err(declined("accepted without ticking the box")),
            Ok(Answer::Decline) => Err(declined("declined the question")),
            Ok(Answer::Cancel) => Err(declined("dismissed the question")),
            Err(AskError::Cancelled) => Err(ToolError::new(
                ErrorKind::Cancelled,
                format!("Not killed: the call was cancelled while asking the person about {what}."),
            )),
            Err(e @ AskError::Unanswered(_)) => Err(ToolError::new(
                ErrorKind::Timeout,
                format!("Not killed: asked the person about {what}, and {e}."),
            )
            .suggest("Ask the person in the conversation, then call again.")),
            Err(e) => Err(ToolError::new(
                ErrorKind::Refused,
                format!(
                    "Not killed: TMUX_MCP_CONFIRM=teardown needs the person's yes, and this server cannot ask ({e})."
                ),
            )
            .suggest("Ask the person to kill it themselves, or to use a client with MCP elicitation.")),
        }
    }
}
