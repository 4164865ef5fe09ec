//! What the soaks share (`soak_live`, `person_soak_live`): their one
//! source of randomness, the programs their panes run, the CLI's view of
//! every pane (which also tells whether the tmux server is still the one
//! the soak started), and the seed a run replays.

use std::collections::BTreeSet;

use super::PrivateTmux;

/// A program that prints a line every 50 ms, forever.
pub const PRINTER: &str =
    "sh -c 'i=0; while :; do i=$((i+1)); echo soak-line $i; sleep 0.05; done'";
/// One that prints bursts of 2,000 lines.
pub const BURST: &str = "sh -c 'while :; do seq 1 2000; sleep 0.5; done'";
/// What the printers' `pane_start_command` contains.
pub const PRINTS: [&str; 2] = ["soak-line", "seq 1 2000"];

/// splitmix64: a soak's only source of randomness, from the seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }

    /// An index into `weights`, each as likely as its weight.
    pub fn weighted(&mut self, weights: &[usize]) -> usize {
        let mut roll = self.below(weights.iter().sum());
        for (i, w) in weights.iter().enumerate() {
            if roll < *w {
                return i;
            }
            roll -= w;
        }
        weights.len() - 1
    }
}

/// A pane as the CLI listed it.
#[derive(Clone, Debug)]
pub struct Pane {
    pub session: String,
    pub session_name: String,
    pub window: String,
    pub pane: String,
    pub in_mode: bool,
    pub dead: bool,
    /// `pane_current_command`.
    pub command: String,
    /// `pane_start_command`.
    pub start: String,
}

/// `list-panes -a` on `tmux`: the server's pid and every pane, in tmux's
/// order (session, window, pane); `Err` with what the CLI said when the
/// server did not answer or more than one server did.
pub fn list_panes(tmux: &PrivateTmux) -> Result<(String, Vec<Pane>), String> {
    let format = "#{pid}\t#{session_id}\t#{session_name}\t#{window_id}\t#{pane_id}\t\
                  #{pane_in_mode}\t#{pane_dead}\t#{pane_current_command}\t\
                  #{pane_start_command}";
    let out = tmux.try_cmd(&["list-panes", "-a", "-F", format]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let pids: BTreeSet<&str> = text.lines().filter_map(|l| l.split('\t').next()).collect();
    if !out.status.success() || pids.len() != 1 {
        return Err(format!(
            "list-panes said: {text} {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let panes = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.splitn(9, '\t').collect();
            (f.len() == 9).then(|| Pane {
                session: f[1].to_owned(),
                session_name: f[2].to_owned(),
                window: f[3].to_owned(),
                pane: f[4].to_owned(),
                in_mode: f[5] == "1",
                dead: f[6] == "1",
                command: f[7].to_owned(),
                start: f[8].to_owned(),
            })
        })
        .collect();
    let pid = pids.into_iter().next().unwrap_or_default().to_owned();
    Ok((pid, panes))
}

/// The seed of a run: `SOAK_SEED` when set (a replay), else one from the
/// clock (printed by the soak, so it can be replayed).
pub fn seed() -> u64 {
    std::env::var("SOAK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(clock_seed)
}

/// A seed from the clock.
pub fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
}

/// A number from the environment variable `var`, else `default`.
pub fn env_number<T: std::str::FromStr>(var: &str, default: T) -> T {
    std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}
