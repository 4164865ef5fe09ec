#!/usr/bin/env bash
# Drives the release binary with the real MCP clients of
# ../shared/reference/mcp-clients/: the TypeScript SDK client, the Inspector
# CLI (both eras), the Python SDK in the 2026-07-28 and auto modes, and the
# conformance suite (server-initialize, ping, tools-list, server-stateless).
#
#   scripts/clients.sh
#
# The clients are installed by the kit's setup.sh into $MCP_CLIENTS_DIR
# (default ../mcp-clients-env, next to the checkout: never inside it); a
# second run reuses them. Needs python3 (with venv), npm and network access
# to PyPI and the npm registry the first time. Every server talks to a
# private tmux server (-L tmuxmcp-clients-<pid>) that is always killed.
# Without the kit (no ../shared) the script says it skipped and why; in CI
# (CI set) that is a failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kit=$root/../shared/reference/mcp-clients
if [ ! -f "$kit/setup.sh" ]; then
  echo "SKIPPED real MCP clients: $kit not found (it comes with ../shared)" >&2
  [ -z "${CI:-}" ] || exit 1
  exit 0
fi
dir=${MCP_CLIENTS_DIR:-$root/../mcp-clients-env}
binary=$root/target/release/tmux-mcp
[ -x "$binary" ] || cargo build --release --quiet

echo "clients: installing into $dir (setup.sh)"
log=$(mktemp)
(cd "$root" && bash "$kit/setup.sh" "$dir") >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
rm -f "$log"

socket=tmuxmcp-clients-$$
cleanup() { tmux -L "$socket" kill-server 2>/dev/null || true; }
trap cleanup EXIT
tmux -L "$socket" -f /dev/null new-session -d -s main -x 120 -y 30 "env PS1='$ ' sh"
pane=$(tmux -L "$socket" display-message -p -t main '#{pane_id}')
# The SDKs start servers with a minimal environment: pass ours explicitly.
server=(env "LIBTMUX_SOCKET=$socket" "$binary")

failures=0
step() {  # step NAME COMMAND...: runs it, keeps its output, counts a failure
  local name=$1; shift
  local out
  if out=$("$@" 2>&1); then
    echo "ok    $name"
  else
    echo "FAIL  $name"; echo "$out" | tail -n 20
    failures=$((failures + 1))
  fi
  last_output=$out
}
expect() {  # expect NAME TEXT: the last step's output contains TEXT
  if grep -qF -- "$2" <<<"$last_output"; then echo "ok    $1"; else
    echo "FAIL  $1: no '$2' in:"; echo "$last_output" | tail -n 5; failures=$((failures + 1)); fi
}

cd "$dir"
node=node_modules/.bin/node   # Node 22 from setup.sh; the system's may be older
[ -x "$node" ] || node=node
step "ts-sdk: list, call, strict outputSchema, cancel, unknown tool" \
  "$node" ts_sdk_client.mjs \
    --call list_sessions '{}' \
    --call snapshot_pane "{\"pane_id\": \"$pane\"}" \
    --call snapshot_pane "{\"pane_id\": \"$pane\", \"format\": \"png\"}" \
    --call get_session_info '{"session_name": "no-such-session"}' \
    --cancel wait_for_text "{\"pane_id\": \"$pane\", \"patterns\": [\"never-printed\"], \"timeout\": 20}" \
    -- "${server[@]}"
expect "ts-sdk: every step ok" "ts-sdk: OK"
# The picture reaches the SDK as an image (issue 32), not as an error.
expect "ts-sdk: snapshot_pane's png is an image" '"type":"image","data":"iVBORw0KGgo'

inspector=(npx --no-install mcp-inspector --cli -q --format json -e "LIBTMUX_SOCKET=$socket" "$binary")
step "inspector: tools/list" "${inspector[@]}" --method tools/list
expect "inspector: list_panes listed" '"list_panes"'
step "inspector: tools/call list_sessions" \
  "${inspector[@]}" --method tools/call --tool-name list_sessions
expect "inspector: the session is there" 'main'
step "inspector: tools/call snapshot_pane format=png" \
  "${inspector[@]}" --method tools/call --tool-name snapshot_pane \
    --tool-arg "pane_id=$pane" --tool-arg format=png
expect "inspector: the picture is an image" '"mimeType":"image/png"'
step "inspector: resources/list" "${inspector[@]}" --method resources/list
expect "inspector: tmux://sessions listed" 'tmux://sessions'
step "inspector: --protocol-era modern tools/list" \
  npx --no-install mcp-inspector --cli -q --protocol-era modern --format json \
    -e "LIBTMUX_SOCKET=$socket" "$binary" --method tools/list
expect "inspector modern: list_panes listed" '"list_panes"'

for mode in 2026-07-28 auto; do
  step "python-sdk --mode $mode" ./venv/bin/python py_sdk_client.py --mode "$mode" \
    --call list_sessions '{}' --call snapshot_pane "{\"pane_id\": \"$pane\"}" \
    -- "${server[@]}"
  expect "python-sdk --mode $mode: protocol 2026-07-28" '"protocolVersion": "2026-07-28"'
done

step "conformance: server-initialize ping tools-list server-stateless" \
  ./run_conformance.sh -s "server-initialize ping tools-list server-stateless" \
    -b conformance-baseline.yml -- "${server[@]}"
expect "conformance: 4 scenarios passed" "conformance: 4 passed, 0 failed"

echo "clients: $failures failed"
[ "$failures" -eq 0 ]
