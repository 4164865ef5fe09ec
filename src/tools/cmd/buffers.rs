//! Paste buffers this server creates: stage text, paste it, read it back,
//! delete it.
//!
//! Every tool works only on names of our namespace,
//! `libtmux_mcp_<32 hex>_<logical>`, so an agent can never read, paste or
//! delete the user's own buffers (clipboard history). The hub remembers the
//! buffers it created; [`crate::tools::App::shutdown`] deletes those still there.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::drive::bounded::{self, MaxLines};
use crate::drive::input::{self, Input};
use crate::drive::person;
use crate::tmux::format::unvis;
use crate::tmux::{Command, TmuxError};
use crate::tools::shared::args::{check_buffer_text, yes};
use crate::tools::shared::capture::{backstop, capture_bound};
use crate::tools::shared::lookup::{self, PaneSel};
use crate::tools::toolsets::Toolset;
use crate::tools::{
    CREATE, Call, DESTROY, ErrorKind, INPUT, READ, Target, ToolDef, ToolError, ToolResult,
};

pub const PREFIX: &str = "libtmux_mcp_";

pub fn register(tools: &mut Vec<ToolDef>, _: &Config) {
    tools.push(ToolDef::new(
        "load_buffer",
        Toolset::Manage,
        "Load tmux Buffer",
        "Stage text in a new paste buffer and return its buffer_name; leftovers are deleted at exit.",
        CREATE,
        load_buffer,
    ));
    tools.push(ToolDef::new(
        "paste_buffer",
        Toolset::Execute,
        "Paste tmux Buffer",
        "Paste a load_buffer buffer into a pane (newlines submit lines); the buffer is kept.",
        INPUT,
        paste_buffer,
    ));
    tools.push(ToolDef::new(
        "show_buffer",
        Toolset::Inspect,
        "Show tmux Buffer",
        "Read back a load_buffer buffer exactly; the last max_lines lines (content_truncated says so). Default cap: 500 lines, 24 KB.",
        READ,
        show_buffer,
    ));
    tools.push(ToolDef::new(
        "delete_buffer",
        Toolset::Teardown,
        "Delete tmux Buffer",
        "Delete a buffer from load_buffer.",
        DESTROY,
        delete_buffer,
    ));
}

/// `^[A-Za-z0-9_.-]{1,64}$`.
fn is_logical(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
}

/// `^libtmux_mcp_[0-9a-f]{32}_[A-Za-z0-9_.-]{1,64}$`: one of ours.
fn check_buffer_name(name: &str) -> ToolResult<()> {
    let ok = name.strip_prefix(PREFIX).is_some_and(|rest| {
        rest.len() > 33
            && rest.as_bytes()[..32]
                .iter()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
            && rest.as_bytes()[32] == b'_'
            && is_logical(&rest[33..])
    });
    if ok {
        return Ok(());
    }
    Err(
        ToolError::invalid(format!("Invalid buffer name: {name:?}")).suggest(
            "Pass the buffer_name load_buffer returned (libtmux_mcp_<32 hex>_<name>); other buffers are not accessible.",
        ),
    )
}

/// A tmux failure on a buffer command, naming the buffer.
fn buffer_error(command: &str, name: &str, e: TmuxError) -> ToolError {
    match e {
        TmuxError::Command(msg) => ToolError::new(
            ErrorKind::TmuxCommand,
            format!("{command} failed for '{name}': {}", msg.trim()),
        )
        .suggest("The buffer may have been deleted (paste_text and delete_buffer remove buffers); call load_buffer again."),
        other => other.into(),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct LoadBufferArgs {
    // (no schema text) Text to stage (not empty).
    content: String,
    /// Short label: 1-64 of A-Z a-z 0-9 _ . - (default 'buf').
    logical_name: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct BufferRef {
    /// The tmux buffer name; pass it to paste_buffer / show_buffer / delete_buffer.
    buffer_name: String,
    /// The logical name given, if any.
    logical_name: Option<String>,
}

async fn load_buffer(target: Target, args: LoadBufferArgs) -> ToolResult<BufferRef> {
    let logical = match args.logical_name.as_deref() {
        None | Some("") => "buf",
        Some(name) if is_logical(name) => name,
        Some(name) => {
            return Err(
                ToolError::invalid(format!("Invalid logical buffer name: {name:?}"))
                    .suggest("Use 1 to 64 characters from A-Z, a-z, 0-9, '_', '.' and '-'."),
            );
        }
    };
    check_buffer_text(&args.content, "content", "load_buffer")?;
    let name = format!("{PREFIX}{}_{logical}", uuid::Uuid::new_v4().simple());
    // set-buffer on the control client: the text travels quoted on the
    // command line, no temporary file.
    let cmd = Command::new("set-buffer")
        .opt("-b", &name)
        .flag("--")
        .arg(&args.content);
    target
        .hub
        .run(&cmd)
        .await
        .map_err(|e| buffer_error("set-buffer", &name, e))?;
    target.server.buffers.track(&name);
    Ok(BufferRef {
        buffer_name: name,
        logical_name: args.logical_name,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PasteBufferArgs {
    // (no schema text) A buffer_name from load_buffer.
    buffer_name: String,
    #[serde(flatten)]
    pane: PaneSel,
    // (no schema text) Bracketed paste, when the program enabled it.
    #[serde(default = "yes")]
    bracket: bool,
}

async fn paste_buffer(target: Target, args: PasteBufferArgs) -> ToolResult<String> {
    check_buffer_name(&args.buffer_name)?;
    let pane = lookup::resolve_pane(&target, &args.pane).await?;
    // paste-buffer does not say when the pane is missing in every version;
    // the look before typing finds it first, so the error is the usual one.
    let waited = person::before_typing(&target, pane, false).await?;
    let buffer = Input::Buffer {
        name: &args.buffer_name,
        bracketed: args.bracket,
    };
    input::send(&target, &waited, buffer)
        .await
        .map_err(|e| buffer_error("paste-buffer", &args.buffer_name, e))?;
    Ok(format!(
        "Buffer '{}' pasted to pane {pane}{}",
        args.buffer_name,
        waited.note()
    ))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ShowBufferArgs {
    // (no schema text) A buffer_name from load_buffer.
    buffer_name: String,
    // (no schema text: the instructions) Keep the last N lines; null: all.
    #[serde(default, deserialize_with = "bounded::explicit")]
    #[schemars(with = "Option<i64>", extend("default" = 500))]
    max_lines: MaxLines,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct BufferContent {
    buffer_name: String,
    /// The buffer's text (exact unless truncated).
    content: String,
    /// True when the oldest lines (or bytes) were dropped to fit the bound.
    content_truncated: bool,
    /// How many lines were dropped.
    content_truncated_lines: i64,
}

/// The buffer's exact text: tmux's reply, decoded when this tmux escapes
/// it, and checked against the buffer's size in bytes.
fn buffer_text(lines: &[Vec<u8>], escaped: bool, size: Option<usize>) -> ToolResult<String> {
    let joined = lines.join(&b'\n');
    let mut candidates = Vec::new();
    if escaped {
        candidates.push(unvis(&joined));
    }
    candidates.push(joined.clone());
    let mut with_newline = joined;
    with_newline.push(b'\n');
    candidates.push(with_newline);
    let chosen = match size {
        Some(size) => candidates.into_iter().find(|c| c.len() == size),
        None => candidates.into_iter().next(),
    };
    let bytes = chosen.ok_or_else(|| {
        ToolError::new(
            ErrorKind::TmuxCommand,
            "show-buffer returned text that does not match the buffer's size",
        )
    })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The size in bytes of buffer `name`, if tmux lists it.
async fn buffer_size(target: &Target, name: &str) -> ToolResult<Option<usize>> {
    // The name is checked (no format syntax), so it can sit in the filter.
    let cmd = Command::new("list-buffers")
        .opt("-F", "#{buffer_size}")
        .opt("-f", format!("#{{==:#{{buffer_name}},{name}}}"));
    let lines = target.run(cmd).await?;
    Ok(lines
        .first()
        .and_then(|l| std::str::from_utf8(l).ok()?.parse().ok()))
}

async fn show_buffer(
    Call { app, target, .. }: Call,
    args: ShowBufferArgs,
) -> ToolResult<BufferContent> {
    check_buffer_name(&args.buffer_name)?;
    let bound = capture_bound(&app, args.max_lines)?;
    let show = async {
        target
            .hub
            .run(&Command::new("show-buffer").opt("-b", &args.buffer_name))
            .await
            .map_err(|e| buffer_error("show-buffer", &args.buffer_name, e))
    };
    // All three go out at once on the control client.
    let (lines, features, size) = tokio::try_join!(
        show,
        async { Ok(target.hub.features().await) },
        buffer_size(&target, &args.buffer_name)
    )?;
    let text = buffer_text(&lines, !features.raw_show_buffer, size)?;
    let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
    if text.ends_with('\n') {
        lines.pop();
    }
    let cut = bounded::lines_to_cut(&lines, bound);
    let content = if cut > 0 {
        lines[cut..].join("\n")
    } else {
        text
    };
    let cut_bytes = content.len() > bound.1;
    Ok(BufferContent {
        buffer_name: args.buffer_name,
        content: backstop(content, bound.1),
        content_truncated: cut > 0 || cut_bytes,
        content_truncated_lines: cut as i64,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct DeleteBufferArgs {
    // (no schema text) A buffer_name from load_buffer.
    buffer_name: String,
}

async fn delete_buffer(target: Target, args: DeleteBufferArgs) -> ToolResult<String> {
    check_buffer_name(&args.buffer_name)?;
    let result = input::delete_buffer(&target.hub, &args.buffer_name).await;
    target.server.buffers.untrack(&args.buffer_name);
    result.map_err(|e| buffer_error("delete-buffer", &args.buffer_name, e))?;
    Ok(format!("Buffer '{}' deleted", args.buffer_name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_names_are_ours_only() {
        let good = format!("{PREFIX}{}_buf", "0123456789abcdef".repeat(2));
        assert!(check_buffer_name(&good).is_ok());
        let upper = format!("{PREFIX}{}_buf", "0123456789ABCDEF".repeat(2));
        for bad in [
            "buffer0",
            "libtmux_mcp_",
            "libtmux_mcp_abc_buf",
            upper.as_str(),
            &format!("{PREFIX}{}_", "0".repeat(32)),
            &format!("{PREFIX}{}_a b", "0".repeat(32)),
            &format!("{PREFIX}{}_{}", "0".repeat(32), "x".repeat(65)),
            &format!("{PREFIX}{}x_buf", "0".repeat(32)),
            &format!("{PREFIX}{}_#{{x}}", "0".repeat(32)),
        ] {
            assert!(check_buffer_name(bad).is_err(), "{bad}");
        }
        assert!(is_logical("a.b-c_1") && !is_logical("") && !is_logical("a/b"));
    }

    #[test]
    fn the_size_picks_the_reading() {
        let lines = vec![b"a\\\\b".to_vec(), Vec::new()];
        // Escaped tmux: "a\b\n" is 4 bytes.
        assert_eq!(buffer_text(&lines, true, Some(4)).unwrap(), "a\\b\n");
        // Raw tmux: the same reply is "a\\b\n", 5 bytes.
        assert_eq!(buffer_text(&lines, true, Some(5)).unwrap(), "a\\\\b\n");
        assert_eq!(
            buffer_text(&[b"x".to_vec()], false, Some(2)).unwrap(),
            "x\n"
        );
        assert!(buffer_text(&[b"x".to_vec()], false, Some(9)).is_err());
    }
}
