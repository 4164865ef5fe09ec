#!/usr/bin/env bash
# mcp_race's core scenarios and the watched flood, ours against the
# reference, on each tmux release of the matrix: one table per release
# (issue 30). Both servers and the harness run the release's tmux (first on
# PATH). Run from the checkout after `cargo build --release`, with the
# reference installed beside it (../shared/bench/BASELINE.md):
#   bench/matrix.sh [RELEASE...]        # default: every release kept
# Builds each release once into target/tmux/ (../shared/tmux/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
build=../shared/tmux/build.sh
peer=${PEER:-$PWD/../peer-venv/bin/libtmux-mcp}
[ -x "$peer" ] || { echo "no reference at $peer (set PEER)" >&2; exit 1; }
releases=("$@")
[ ${#releases[@]} -gt 0 ] || releases=(3.2a system 3.4 3.5a 3.6b 3.7c 3.8-dev)
for release in "${releases[@]}"; do
  if [ "$release" = system ]; then bin=$(command -v tmux); else bin=$("$build" "$release"); fi
  echo "## $("$bin" -V)"
  PATH="$(dirname "$bin"):$PATH" python3 ../shared/bench/mcp_race.py --quiet \
    --tmux "$bin" --server "peer=$peer" --server ours=target/release/tmux-mcp \
    --scenarios capture_pane,ops,run_command,wait_latency,flood \
    --repeat "${REPEAT:-20}" --flood-repeat "${FLOOD_REPEAT:-3}"
done
