//! The person at the terminal, before the agent types: every input tool
//! (send_keys, send_keys_batch, paste_text, paste_buffer) calls
//! [`before_typing`] once the target pane is known.
//!
//! - **Passwords stay with the person.** A pane whose terminal reads a
//!   line with echo off ([`crate::process::Activity::Secret`]) is refused,
//!   with a message saying how a person reaches it and how to wait for
//!   them; the person's clients on that session are told
//!   (`display-message`), or the pane rings its bell when none is there.
//!   `TMUX_MCP_SECRET_INPUT=allow` lifts it. The cheap part comes first:
//!   the pane's terminal settings (one `tcgetattr`, a few µs); only a
//!   terminal in that mode costs a process probe.
//! - **The person has the floor.** A client that is not a control client
//!   (ours are; a person's terminal client is not), not read-only, whose
//!   session shows the pane's window and which sent keys (or attached) in
//!   the last
//!   `TMUX_MCP_HUMAN_QUIET_MS`, makes the input wait until it pauses, at
//!   most [`FLOOR_WAIT`], then fail with `human_active`. tmux keeps a
//!   client's last key time (`client_activity`) in whole seconds: a key
//!   seen in second `A` may have been pressed up to `A + 1`, so the pause
//!   counted is from there (a person's pause reads up to 1 s longer).
//!   Attaching counts as a key (tmux starts `client_activity` at the
//!   client's creation): a person who just arrived gets the same pause. A
//!   server on another host is judged by this machine's clock.
//! - **A new pane's shell is let start.** A blank pane (cursor at the top
//!   left, no history) whose own process is a local shell started less
//!   than 5 s ago is waited for until it draws: typed sooner, the input
//!   is echoed before the prompt, or read by a start-up file's command
//!   ([`state::await_first_draw`]). Asked with the pane's facts, at no
//!   extra round trip; skipped, like the rest, when nothing is checked.
//!
//! The pane's facts and the clients come in two commands sent together
//! (one round trip on the control client).

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::config::Limits;
use crate::drive::linger;
use crate::drive::pane::pane_record;
use crate::drive::probe::probe_once;
use crate::drive::shell::state;
use crate::drive::{ErrorKind, Target, ToolError, ToolResult};
use crate::process::{self, Activity};
use crate::tmux::socket::Address;
use crate::tmux::{Command, PaneId, format};

/// The longest agent input waits for a person to pause.
pub const FLOOR_WAIT: Duration = Duration::from_secs(5);

/// What [`before_typing`] found for one pane: typing may go ahead, after
/// waiting this long for a person to pause. Made only here (and for an
/// input with nothing to type), so holding one proves the checks ran:
/// [`crate::drive::input::send`] takes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Waited {
    pane: PaneId,
    waited: Duration,
}

impl Waited {
    /// Typing into `pane` goes ahead at once: nothing to wait for.
    pub(in crate::drive) fn at_once(pane: PaneId) -> Waited {
        Waited::after(pane, Duration::ZERO)
    }

    fn after(pane: PaneId, waited: Duration) -> Waited {
        Waited { pane, waited }
    }

    /// How long it waited for the person to pause.
    pub fn duration(self) -> Duration {
        self.waited
    }

    /// The pane the checks were for.
    pub fn pane(&self) -> PaneId {
        self.pane
    }

    /// Appended to a tool's text result: empty when it did not wait.
    pub fn note(self) -> String {
        if self.waited.is_zero() {
            String::new()
        } else {
            format!(
                " (waited {:.1}s for a person typing there to pause)",
                self.waited.as_secs_f64()
            )
        }
    }
}

const PANE_FIELDS: &[&str] = &[
    "pane_id",
    "pane_tty",
    "pane_pid",
    "window_id",
    "session_id",
    "cursor_x",
    "cursor_y",
    "history_size",
];

/// Nothing drawn on the pane yet, by its facts: the cursor at the top left
/// and no history.
fn blank(facts: &[String]) -> bool {
    facts[5..8].iter().all(|v| v == "0")
}

/// One client of the server, as the floor rule reads it.
#[derive(Clone, Debug, PartialEq)]
struct AttachedClient {
    name: String,
    /// A control client (ours, or a program's), never typing keys.
    control: bool,
    readonly: bool,
    /// Last key, in whole seconds since the epoch.
    activity: i64,
    /// The window its session shows.
    window: String,
    session: String,
}

const CLIENT_FIELDS: &[&str] = &[
    "client_name",
    "client_control_mode",
    "client_readonly",
    "client_activity",
    "window_id",
    "session_id",
];

fn parse_clients(lines: &[Vec<u8>]) -> Vec<AttachedClient> {
    format::records(lines, CLIENT_FIELDS.len())
        .into_iter()
        .filter_map(|r| {
            Some(AttachedClient {
                name: r[0].clone(),
                control: r[1] == "1",
                readonly: r[2] == "1",
                activity: r[3].parse().ok()?,
                window: r[4].clone(),
                session: r[5].clone(),
            })
        })
        .collect()
}

impl AttachedClient {
    /// A person's terminal client that can type (not read-only).
    fn is_person(&self) -> bool {
        !self.control && !self.readonly
    }

    /// Until when (seconds since the epoch) this client has the floor in
    /// `window`, if it can have it there.
    fn floor_until(&self, window: &str, quiet: Duration) -> Option<f64> {
        (self.is_person() && self.window == window)
            .then(|| (self.activity + 1) as f64 + quiet.as_secs_f64())
    }
}

fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The pane's facts: `[pane_id, pane_tty, pane_pid, window_id,
/// session_id, cursor_x, cursor_y, history_size]`, and the server's
/// clients (none asked when the floor rule is off).
async fn look(
    target: &Target,
    pane: PaneId,
    clients: bool,
) -> ToolResult<(Vec<String>, Vec<AttachedClient>)> {
    let facts = pane_record(target, pane, PANE_FIELDS);
    if !clients {
        return Ok((facts.await?, Vec::new()));
    }
    let list = Command::new("list-clients").opt("-F", format::template(CLIENT_FIELDS));
    let (facts, list) = tokio::join!(facts, target.run(list));
    Ok((facts?, parse_clients(&list?)))
}

/// What [`before_typing_seen`] reads of a pane and the clients, read
/// ahead (with other round trips) by [`look_ahead`].
pub struct Seen {
    facts: Vec<String>,
    clients: Vec<AttachedClient>,
    at: Instant,
}

/// A [`Seen`] older than this is read again.
const SEEN_FRESH: Duration = Duration::from_millis(50);

/// Reads what the check before typing into `pane` needs, to pass to
/// [`before_typing_seen`] (`None` when no check is made).
pub async fn look_ahead(target: &Target, pane: PaneId) -> ToolResult<Option<Seen>> {
    let limits = target.hub.limits();
    if nothing_to_check(limits, false) {
        return Ok(None);
    }
    let (facts, clients) = look(target, pane, limits.human_quiet.is_some()).await?;
    let at = Instant::now();
    Ok(Some(Seen { facts, clients, at }))
}

/// Password prompts are not refused (allowed, or `no_secret`) and the
/// floor rule is off: the check before typing reads nothing.
fn nothing_to_check(limits: &Limits, no_secret: bool) -> bool {
    (limits.secret_input || no_secret) && limits.human_quiet.is_none()
}

/// Checks, and waits where the person has the floor or a new pane's
/// shell has not drawn yet, before typing into `pane`; how long it
/// waited for the person. `no_secret`: what is typed cannot be a
/// password (a key that gives up on the prompt), so a password prompt
/// does not refuse it.
pub async fn before_typing(target: &Target, pane: PaneId, no_secret: bool) -> ToolResult<Waited> {
    before_typing_seen(target, pane, no_secret, None).await
}

/// [`before_typing`] from what [`look_ahead`] read, while it is fresh.
/// Once typing may go ahead, the pane is kept recorded
/// ([`linger::keep`]): what the input makes it print is in the stream
/// for a read `since` it, whatever tmux's own record keeps.
pub async fn before_typing_seen(
    target: &Target,
    pane: PaneId,
    no_secret: bool,
    seen: Option<Seen>,
) -> ToolResult<Waited> {
    let waited = checks_before_typing(target, pane, no_secret, seen).await?;
    linger::keep(target, pane).await;
    Ok(waited)
}

async fn checks_before_typing(
    target: &Target,
    pane: PaneId,
    no_secret: bool,
    mut seen: Option<Seen>,
) -> ToolResult<Waited> {
    let limits = target.hub.limits();
    if nothing_to_check(limits, no_secret) {
        return Ok(Waited::at_once(pane));
    }
    let (secret_ok, quiet) = (limits.secret_input || no_secret, limits.human_quiet);
    let started = Instant::now();
    let mut waited = Duration::ZERO;
    let mut first = true;
    loop {
        let (facts, clients) = match seen.take().filter(|s| s.at.elapsed() < SEEN_FRESH) {
            Some(seen) => (seen.facts, seen.clients),
            None => look(target, pane, quiet.is_some()).await?,
        };
        let (tty, pid, window, session) = (&facts[1], &facts[2], &facts[3], &facts[4]);
        if std::mem::take(&mut first)
            && blank(&facts)
            && state::await_first_draw(target, pane, pid.parse().unwrap_or(0)).await?
        {
            continue;
        }
        if !secret_ok && is_secret(target, tty, pid).await {
            tell_person(target, pane, tty, session, &clients).await;
            return Err(secret_refusal(target, pane));
        }
        let Some(quiet) = quiet else {
            return Ok(Waited::at_once(pane));
        };
        let holder = clients
            .iter()
            .filter_map(|c| Some((c, c.floor_until(window, quiet)?)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let Some((client, until)) = holder.filter(|(_, until)| *until > now_secs()) else {
            return Ok(Waited::after(pane, waited));
        };
        let left = FLOOR_WAIT.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Err(ToolError::new(
                ErrorKind::HumanActive,
                format!(
                    "human_active: a person is typing in pane {pane}'s window (tmux client {}): agent input waited {}s for a pause and did not type.",
                    client.name,
                    FLOOR_WAIT.as_secs()
                ),
            )
            .suggest("Try again later, or ask the person; TMUX_MCP_HUMAN_QUIET_MS=0 turns this off."));
        }
        let pause = Duration::from_secs_f64((until - now_secs()).max(0.0));
        tokio::time::sleep(pause.min(left)).await;
        waited = started.elapsed();
    }
}

/// Whether the pane asks for a password: its terminal reads a line
/// without echo (a few µs, locally), and then (local) the probe agrees
/// that its foreground process is reading it.
async fn is_secret(target: &Target, tty: &str, pid: &str) -> bool {
    if tty.is_empty() {
        return false;
    }
    if let Some(host) = target.hub.ssh_host() {
        let timeout = target.hub.limits().tmux_command_timeout;
        return matches!(host.terminal_mode(tty, timeout).await, Ok(Some(m)) if m.is_secret());
    }
    let Some(mode) = process::terminal_mode(std::path::Path::new(tty)) else {
        return false;
    };
    if !mode.is_secret() {
        return false;
    }
    let Ok(pid) = pid.parse::<u32>() else {
        return true;
    };
    let probe = probe_once(pid, tty).await;
    // Where the probe can tell, it decides; elsewhere the mode does.
    !probe.observable.contains(&"secret") || probe.activity == Activity::Secret
}

/// How a person reaches `pane` from a shell.
pub fn reach(target: &Target, pane: PaneId) -> String {
    match target.hub.address() {
        Address::Local(path) => format!(
            "tmux -S {} attach -t {pane} (from inside tmux: switch-client -t {pane})",
            path.display()
        ),
        Address::Remote(remote) => {
            let server = match &remote.name {
                Some(name) => format!("tmux -L {name}"),
                None => "tmux".to_owned(),
            };
            format!(
                "ssh -t {} {server} attach -t {pane} (host alias of TMUX_MCP_HOSTS)",
                remote.alias
            )
        }
    }
}

fn secret_refusal(target: &Target, pane: PaneId) -> ToolError {
    ToolError::new(
        ErrorKind::Refused,
        format!(
            "Pane {pane} is asking for a password (its terminal does not echo): the agent does not type secrets, a person does. They reach it with: {}",
            reach(target, pane)
        ),
    )
    .suggest(format!(
        "The person has been told. wait_for_state(pane_id='{pane}', states=['prompt', 'running']) waits for them; TMUX_MCP_SECRET_INPUT=allow lifts this for test passwords."
    ))
    .at_a_secret()
}

/// Tells the person: a message on their clients attached to the pane's
/// session, or the pane's bell when none is there or tmux cannot show a
/// message on a given client ([`Features::message_to_client`]). Best
/// effort.
///
/// [`Features::message_to_client`]: crate::tmux::version::Features::message_to_client
async fn tell_person(
    target: &Target,
    pane: PaneId,
    tty: &str,
    session: &str,
    clients: &[AttachedClient],
) {
    let clients = if clients.is_empty() {
        let list = Command::new("list-clients").opt("-F", format::template(CLIENT_FIELDS));
        target
            .run(list)
            .await
            .map(|l| parse_clients(&l))
            .unwrap_or_default()
    } else {
        clients.to_vec()
    };
    let text =
        format!("tmux-mcp: pane {pane} asks for a password; the agent will not type it, please do");
    let mut told = false;
    let shown = target.hub.features().await.message_to_client;
    for client in clients
        .iter()
        .filter(|c| shown && c.is_person() && c.session == session)
    {
        let show = Command::new("display-message")
            .opt("-c", &client.name)
            .flag("--")
            .arg(&text);
        told |= target.run(show).await.is_ok();
    }
    if !told && is_pty_path(tty) {
        // A BEL written to the pane's terminal as output: tmux marks the
        // window's bell for every client (on the server's host).
        let ring = Command::new("run-shell")
            .flag("-b")
            .arg(format!("printf '\\007' > {tty}"));
        let _ = target.run(ring).await;
    }
}

/// A terminal path safe to name in a shell command unquoted.
fn is_pty_path(tty: &str) -> bool {
    tty.starts_with("/dev/")
        && tty
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_parse_and_the_floor_rule_reads_them() {
        let line = format::template(CLIENT_FIELDS)
            .replace("#{client_name}", "/dev/pts/4")
            .replace("#{client_control_mode}", "0")
            .replace("#{client_readonly}", "0")
            .replace("#{client_activity}", "107")
            .replace("#{window_id}", "@2")
            .replace("#{session_id}", "$1");
        let clients = parse_clients(&[line.into_bytes()]);
        assert_eq!(clients.len(), 1);
        let c = &clients[0];
        assert_eq!(
            (c.name.as_str(), c.activity, c.window.as_str()),
            ("/dev/pts/4", 107, "@2")
        );
        let quiet = Duration::from_millis(1500);
        assert_eq!(c.floor_until("@2", quiet), Some(109.5));
        assert_eq!(c.floor_until("@3", quiet), None);
        let arrived = AttachedClient {
            activity: 100,
            ..c.clone()
        };
        assert_eq!(arrived.floor_until("@2", quiet), Some(102.5));
        let ours = AttachedClient {
            control: true,
            ..c.clone()
        };
        assert_eq!(ours.floor_until("@2", quiet), None);
        let readonly = AttachedClient {
            readonly: true,
            ..c.clone()
        };
        assert_eq!(readonly.floor_until("@2", quiet), None);
        assert!(parse_clients(&[b"garbage".to_vec()]).is_empty());
    }

    #[test]
    fn only_plain_terminal_paths_go_into_the_bell_command() {
        assert!(is_pty_path("/dev/pts/12"));
        assert!(!is_pty_path("/dev/pts/1; rm x"));
        assert!(!is_pty_path("pts/1"));
        assert!(!is_pty_path("/dev/pts/$(x)"));
    }

    #[test]
    fn a_wait_is_noted_only_when_there_was_one() {
        assert_eq!(Waited::at_once(PaneId(1)).note(), "");
        let waited = Waited::after(PaneId(1), Duration::from_millis(1200));
        assert!(waited.note().contains("1.2s"));
    }
}
