#!/usr/bin/env python3
"""Starts an MCP server command the way a client does and checks it answers.

    mcp_smoke.py [--min-tools N] -- COMMAND [ARG...]

Sends `initialize` (2025-06-18), `notifications/initialized` and `tools/list`
on the command's stdin, one JSON line each, and checks the answers: the
server's name and version, at least N tools (default 10), `list_sessions` among them.
Prints one line with the time from start to the `initialize` answer, so the
packages' launchers (uvx, npx, a wheel's script) can be timed as people run
them. The environment points tmux at a socket no server listens on: neither
request needs tmux. Exit status 1 on any failure.
"""

import json
import os
import subprocess
import sys
import time


def main(argv: list) -> int:
    min_tools = 10
    if argv[:1] == ["--min-tools"]:
        min_tools, argv = int(argv[1]), argv[2:]
    if argv[:1] != ["--"] or len(argv) < 2:
        sys.exit(__doc__)
    command = argv[1:]
    env = dict(os.environ, LIBTMUX_SOCKET=f"mcp-smoke-{os.getpid()}")
    env.pop("TMUX", None)
    env.pop("TMUX_PANE", None)
    started = time.monotonic()
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)

    def send(message: dict) -> None:
        child.stdin.write(json.dumps(message) + "\n")
        child.stdin.flush()

    def answer(request_id: int) -> dict:
        while True:
            line = child.stdout.readline()
            if not line:
                raise SystemExit(f"{command[0]}: stdout closed before the answer to request {request_id}")
            message = json.loads(line)
            if message.get("id") == request_id:
                if "error" in message:
                    raise SystemExit(f"request {request_id} failed: {message['error']}")
                return message["result"]

    try:
        send({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "mcp-smoke", "version": "1"},
            },
        })
        init = answer(1)
        to_initialize = time.monotonic() - started
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        tools = [tool["name"] for tool in answer(2)["tools"]]
    finally:
        child.stdin.close()
    code = child.wait(timeout=30)
    server = init["serverInfo"]
    if not server.get("name") or not server.get("version"):
        raise SystemExit(f"serverInfo lacks a name or version: {server}")
    if len(tools) < min_tools or "list_sessions" not in tools:
        raise SystemExit(f"tools/list gave {len(tools)} tools: {tools}")
    if code != 0:
        raise SystemExit(f"{command[0]} exited {code} after end of input")
    print(
        f"ok {' '.join(command)}: {server['name']} {server['version']}, protocol "
        f"{init['protocolVersion']}, {len(tools)} tools; initialize answered after "
        f"{to_initialize * 1000:.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
