#!/usr/bin/env bash
# Zoom a window, then tear it down: does tmux survive? (protocol/tmux-control.md §7e)
#
#   scripts/zoom-teardown-repro.sh [RUNS] [TMUX_MCP]
#   PATH=/work/tmux-builds/3.4/bin:$PATH scripts/zoom-teardown-repro.sh 3 target/debug/tmux-mcp
#
# Uses the `tmux` on PATH. Each run starts a private server in the
# foreground (`tmux -L zoomtd-<pid>-... -D`, so its exit status is seen:
# 134 is the abort on a double free) with sessions `keep` and `s1`, splits
# s1's window in two and zooms a pane, then tears it down: by the tmux CLI
# (kill-session, kill-window, kill-pane of the zoomed or the other pane,
# kill-server), and, given the tmux-mcp binary, through its tools
# (resize_pane zoom or `resize-pane -Z`, then kill_session or kill_server).
# Prints, per teardown, how many of RUNS servers died. Never touches the
# default socket; every server it starts is killed.
set -u
runs=${1:-3}
mcp=${2:-}
uid=$(id -u)

# one run: $1 how to zoom (cli|tool), $2 the teardown, $3 the run's
# number; prints the server's exit status
run() {
  local how=$1 teardown=$2 name=zoomtd-$$-$1-$2-$3
  local T=(tmux -L "$name" -f /dev/null)
  "${T[@]}" -D 2>/dev/null &
  local server=$!
  for _ in $(seq 500); do [ -S "${TMUX_TMPDIR:-/tmp}/tmux-$uid/$name" ] && break; sleep 0.01; done
  "${T[@]}" new-session -d -s keep -x 120 -y 40
  "${T[@]}" new-session -d -s s1 -x 120 -y 40
  local other zoomed window
  other=$("${T[@]}" display-message -p -t s1 '#{pane_id}')
  zoomed=$("${T[@]}" split-window -d -t s1 -P -F '#{pane_id}')
  window=$("${T[@]}" display-message -p -t s1 '#{window_id}')
  local call=(env LIBTMUX_SOCKET="$name" LIBTMUX_TOOLSETS=inspect,manage,execute,teardown "$mcp" call)
  if [ "$how" = tool ]; then
    "${call[@]}" resize_pane "{\"pane_id\":\"$zoomed\",\"zoom\":true}" >/dev/null
  else
    "${T[@]}" resize-pane -Z -t "$zoomed"
  fi
  case $teardown in # (stderr: a dying server's "server exited unexpectedly")
    kill-session) "${T[@]}" kill-session -t s1 ;;
    kill-window) "${T[@]}" kill-window -t "$window" ;;
    kill-pane-zoomed) "${T[@]}" kill-pane -t "$zoomed" ;;
    kill-pane-other) "${T[@]}" kill-pane -t "$other" ;;
    kill-server) "${T[@]}" kill-server ;;
    kill_session) "${call[@]}" kill_session '{"session_name":"s1"}' >/dev/null 2>&1 ;;
    kill_server) "${call[@]}" kill_server '{}' >/dev/null 2>&1 ;;
  esac 2>/dev/null
  # A kill's notifications have run once a later client is answered.
  "${T[@]}" display-message -p '#{pid}' >/dev/null 2>&1 && "${T[@]}" kill-server
  wait "$server" 2>/dev/null
  echo $?
  rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$uid/$name"
}

# $1 how to zoom, then teardowns: one line each
tally() {
  local how=$1 teardown status deaths i
  shift
  for teardown in "$@"; do
    deaths=0
    for i in $(seq "$runs"); do
      status=$(run "$how" "$teardown" "$i")
      [ "$status" = 0 ] || deaths=$((deaths + 1))
    done
    echo "$(tmux -V), zoom by $how, $teardown: $deaths of $runs died"
  done
}

tally cli kill-session kill-window kill-pane-zoomed kill-pane-other kill-server
if [ -n "$mcp" ]; then
  tally tool kill_session kill_server
  tally cli kill_session kill_server
fi
