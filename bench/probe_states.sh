#!/bin/sh
# What one process probe costs per pane, by activity: one pane per case
# on a private tmux (a session each: prompt, getpass, read -s, read, cat,
# sleep, python REPL), then examples/probe_bench on each pane's pid.
# Run from the checkout after `cargo build --release --example probe_bench`:
#   sh bench/probe_states.sh [N]
# The sleeps only let the typed commands start (a benchmark, not a test):
# the activity column shows what each pane was doing.
T="tmux -L secretbench-$$ -f /dev/null"
i=0
for c in "" "python3 -c 'import getpass; getpass.getpass()'" "read -r -s pw" "read -r x" "cat" "sleep 1000" "python3 -q"; do
  i=$((i+1))
  $T new-session -d -s "b$i" -x 80 -y 24 "env PS1='$ ' bash --norc --noprofile"
  sleep 0.3
  [ -n "$c" ] && { $T send-keys -t "b$i" -l "$c"; $T send-keys -t "b$i" Enter; }
done
sleep 1.5
for p in $($T list-panes -a -F '#{pane_pid}'); do nice ./target/release/examples/probe_bench "$p" "${1:-5000}"; done
$T kill-server
