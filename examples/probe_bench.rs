//! What one process probe costs (`tmux_mcp::process::probe`), the read
//! `wait_for_state` makes when a pane's output settles.
//!
//! Run: `cargo run --release --example probe_bench PID [N]`, PID a pane's
//! process (tmux's `#{pane_pid}`); prints the activity and the median and
//! 95th percentile of N probes (default 2000), and of N reads of the
//! pane's terminal settings alone (`termios_*`, the part of a probe that
//! tells `secret`: an open, a `tcgetattr` and a close). `kept_*` times a
//! [`tmux_mcp::process::Prober`] kept between looks, as `wait_for_state`
//! keeps one. `bench/wait_state_cost.py`
//! runs it on a shell at its prompt and with a command running.

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(pid) = args.next().and_then(|a| a.parse::<u32>().ok()) else {
        eprintln!("usage: probe_bench PID [N]");
        std::process::exit(2);
    };
    let n = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(2000usize);
    use tmux_mcp::process;
    let first = process::probe(pid);
    let (median, p95) = time(n, || {
        std::hint::black_box(process::probe(pid));
    });
    // A Prober kept between looks, as wait_for_state keeps one: the scan
    // for a foreground group's other members is reused for SCAN_EVERY.
    let mut prober = process::Prober::new(pid);
    let (kept_median, kept_p95) = time(n, || {
        std::hint::black_box(prober.probe());
    });
    let tty = std::fs::read(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|b| process::parse_stat(&b))
        .and_then(|s| process::tty_path(s.tty_nr));
    let termios = tty.map(|tty| {
        time(n, || {
            std::hint::black_box(process::terminal_mode(&tty));
        })
    });
    let (t_median, t_p95) = termios.unwrap_or((f64::NAN, f64::NAN));
    println!(
        "activity={} command={} n={} median_us={:.1} p95_us={:.1} kept_median_us={:.1} kept_p95_us={:.1} termios_median_us={:.1} termios_p95_us={:.1}",
        first.activity.as_str(),
        first.foreground_command.as_deref().unwrap_or("-"),
        n.max(1),
        median,
        p95,
        kept_median,
        kept_p95,
        t_median,
        t_p95
    );
}

/// The median and 95th percentile of `n` runs of `f`, in microseconds.
fn time(n: usize, mut f: impl FnMut()) -> (f64, f64) {
    let mut took: Vec<f64> = (0..n.max(1))
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    took.sort_by(f64::total_cmp);
    let at = |q: f64| took[((took.len() - 1) as f64 * q) as usize];
    (at(0.5), at(0.95))
}
