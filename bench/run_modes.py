#!/usr/bin/env python3
"""run_modes.py - what each way of running a command costs in run_command.

Calls run_command('true') and run_command('seq 1 2000') REPEAT times in each
mode, on one tmux-mcp over stdio, and prints the round trip (median, p90):

  subshell   bash, in_subshell=true: the wrapper, a child shell
  live       bash, in_subshell=false: the wrapper, `eval` in the pane's shell
  marks      bash that emits OSC 133 marks, in_subshell=false: typed as is

and how long a pane running `cat` takes to be refused (it may be a shell
starting, so the refusal waits up to 500 ms for a shell to show).

    python3 bench/run_modes.py [--server target/release/tmux-mcp] [--repeat 50]

The tmux server is private (`tmux -L runmodes_<pid> -f /dev/null`, given to
the server through LIBTMUX_SOCKET) and killed at the end. Stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time

BASH = "env PS1='$ ' bash --norc --noprofile"
MARKED = (
    r"""env PS1='\[\e]133;A\a\]$ \[\e]133;B\a\]' PS0='\e]133;C\a' """
    r"""PROMPT_COMMAND='printf "\033]133;D;%s\007" $?' bash --norc --noprofile"""
)


class Server:
    """One MCP server on stdio, one request at a time."""

    def __init__(self, command: str, socket: str):
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        env["LIBTMUX_SOCKET"] = socket
        self.proc = subprocess.Popen(
            [command], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=env, text=True,
        )
        self.next_id = 0
        self.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "run_modes", "version": "1"},
        })
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            reply = json.loads(self.proc.stdout.readline())
            if reply.get("id") == self.next_id:
                return reply["result"]

    def call(self, pane: str, command: str, subshell: bool) -> dict:
        args = {"pane_id": pane, "command": command, "in_subshell": subshell, "timeout": 10}
        return self.request("tools/call", {"name": "run_command", "arguments": args})

    def run(self, pane: str, command: str, subshell: bool) -> dict:
        result = self.call(pane, command, subshell)
        assert not result.get("isError"), result
        return result["structuredContent"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def tmux(socket: str, *args: str) -> str:
    return subprocess.run(
        ["tmux", "-L", socket, "-f", "/dev/null", *args],
        capture_output=True, text=True, timeout=10, check=True,
    ).stdout.strip()


def shell_pane(socket: str, start: str) -> str:
    pane = tmux(socket, "new-window", "-d", "-P", "-F", "#{pane_id}", start)
    deadline = time.monotonic() + 10
    while not tmux(socket, "capture-pane", "-p", "-t", pane).rstrip().endswith("$"):
        if time.monotonic() > deadline:
            raise SystemExit(f"no prompt in {pane}")
        time.sleep(0.01)
    return pane


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", default="target/release/tmux-mcp")
    parser.add_argument("--repeat", type=int, default=50)
    opts = parser.parse_args()
    socket = f"runmodes_{os.getpid()}"
    tmux(socket, "new-session", "-d", "-s", "base", "-x", "120", "-y", "40", "sh")
    server = Server(opts.server, socket)
    try:
        modes = [
            ("subshell", shell_pane(socket, BASH), True, False),
            ("live", shell_pane(socket, BASH), False, False),
            ("marks", shell_pane(socket, MARKED), False, True),
        ]
        print(f"# run_modes  {tmux(socket, '-V')}  repeat={opts.repeat}")
        print(f"| {'mode':9} | {'command':10} | median ms | p90 ms |")
        print("|---|---|---:|---:|")
        for name, pane, subshell, marks in modes:
            server.run(pane, "true", subshell)  # the first call records the prompt
            for command in ("true", "seq 1 2000"):
                times = []
                for _ in range(opts.repeat):
                    started = time.perf_counter()
                    r = server.run(pane, command, subshell)
                    times.append((time.perf_counter() - started) * 1000)
                    assert r["exit_status"] == 0 and r.get("shell_marks", False) == marks, r
                p90 = statistics.quantiles(times, n=10)[-1]
                print(f"| {name:9} | {command:10} | {statistics.median(times):9.2f} | {p90:6.2f} |")
        cat = shell_pane(socket, BASH)
        tmux(socket, "send-keys", "-t", cat, "cat", "Enter")
        deadline = time.monotonic() + 10
        while tmux(socket, "display-message", "-p", "-t", cat, "#{pane_current_command}") != "cat":
            if time.monotonic() > deadline:
                raise SystemExit("cat never came to the pane's foreground")
            time.sleep(0.01)
        times = []
        for _ in range(5):
            started = time.perf_counter()
            result = server.call(cat, "true", True)
            times.append((time.perf_counter() - started) * 1000)
            assert result.get("isError") and "`cat`" in result["content"][0]["text"], result
        print(f"| refused   | (cat)      | {statistics.median(times):9.2f} | {max(times):6.2f} (max) |")
    finally:
        server.close()
        tmux(socket, "kill-server")


if __name__ == "__main__":
    main()
