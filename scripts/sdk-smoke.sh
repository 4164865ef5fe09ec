#!/bin/sh
# Smoke test of tmux-mcp with the official MCP Python SDK (mcp 2.3.0).
#
#   scripts/sdk-smoke.sh
#
# Creates target/sdk-venv once (python3 -m venv; pip install mcp==2.3.0),
# builds target/release/tmux-mcp if it is missing, and runs
# tests/sdk/sdk_smoke.py against it. Needs python3 and tmux; uses a private
# tmux server (-L tmuxmcp-sdk-<pid>) that the script always kills.
# SDK_SMOKE_PYTHON=/path/to/python skips the venv (e.g. /tmp/pyenv/bin/python).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

venv=target/sdk-venv
python=${SDK_SMOKE_PYTHON:-}
if [ -z "$python" ]; then
    python=$venv/bin/python
    if ! "$python" -c 'import mcp, importlib.metadata as m; assert m.version("mcp") == "2.3.0"' 2>/dev/null; then
        echo "sdk-smoke: creating $venv with mcp==2.3.0" >&2
        rm -rf "$venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check 'mcp==2.3.0'
    fi
fi

binary=target/release/tmux-mcp
if [ ! -x "$binary" ]; then
    echo "sdk-smoke: building $binary" >&2
    cargo build --release --quiet
fi

exec "$python" tests/sdk/sdk_smoke.py "$binary"
