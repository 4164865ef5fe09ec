//! What one process probe costs (`tmux_mcp::process::probe`), the read
//! `wait_for_state` makes when a pane's output settles.
//!
//! Run: `cargo run --release --example probe_bench PID [N]`, PID a pane's
//! process (tmux's `#{pane_pid}`); prints the activity and the median and
//! 95th percentile of N probes (default 2000). `bench/wait_state_cost.py`
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
    let first = tmux_mcp::process::probe(pid);
    let mut took: Vec<f64> = (0..n.max(1))
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(tmux_mcp::process::probe(pid));
            started.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    took.sort_by(f64::total_cmp);
    let at = |q: f64| took[((took.len() - 1) as f64 * q) as usize];
    println!(
        "activity={} command={} n={} median_us={:.1} p95_us={:.1}",
        first.activity.as_str(),
        first.foreground_command.as_deref().unwrap_or("-"),
        took.len(),
        at(0.5),
        at(0.95)
    );
}
