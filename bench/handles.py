#!/usr/bin/env python3
"""Command handles (issue 19.2): how soon a wait answers, what an idle one costs.

On a private tmux server (`-L handles-bench-<pid>`, killed at the end), with
the tmux-mcp binary talking to it over MCP stdio:

1. end to answer: `run_command(background=true)` starts a command whose
   last act writes the wall-clock time to a file (`sleep 0.3; date
   +%s.%N > F`); `wait_for_command` is called at once and is waiting when
   it ends. The time from the command's timestamp to the moment the answer
   is read from the server's stdout; median and p95 over `--runs` runs
   (bound 5 ms). Beside it, tmux's own floor: when a plain `tmux -C`
   client of the same session receives the end marker.
2. idle handles: `--handles` background `sleep 60` handles, one per
   window, no call waiting; CPU time (utime + stime from /proc/PID/stat)
   of the server process, and of the tmux server, over `--seconds` s
   (bound 0 %).

    cargo build --release
    bench/handles.py [--bin target/release/tmux-mcp] [--tmux tmux] [--runs 20] [--handles 5] [--seconds 10]
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

SHELL = "env PS1='$ ' bash --norc --noprofile"
END_MARKER = re.compile(rb"\\033\]6973;([0-9a-f]+);E;[0-9]")


class Mcp:
    """tmux-mcp on stdio, one request at a time; each answer is stamped
    with the wall-clock time its line was read."""

    def __init__(self, binary, env):
        self.proc = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "handles-bench", "version": "0"}})
        self.send({"method": "notifications/initialized"})

    def send(self, message):
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        ident = self.next_id
        self.send({"id": ident, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            read_at = time.time()
            if not line:
                sys.exit("the server closed its stdout")
            message = json.loads(line)
            if message.get("id") == ident and "method" not in message:
                return message, read_at

    def call(self, tool, args):
        answer, read_at = self.request("tools/call", {"name": tool, "arguments": args})
        result = answer.get("result", {})
        if "error" in answer or result.get("isError"):
            sys.exit(f"{tool} failed: {answer}")
        return result["structuredContent"], read_at

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(10)


class Tmux:
    def __init__(self, binary):
        self.binary = binary
        self.name = f"handles-bench-{os.getpid()}"

    def __call__(self, *args):
        out = subprocess.run([self.binary, "-L", self.name, "-f", "/dev/null", *args],
                             capture_output=True, text=True, env={**os.environ, "TMUX": ""})
        if out.returncode != 0:
            sys.exit(f"tmux {args}: {out.stderr}")
        return out.stdout.strip()

    def window(self):
        return self("new-window", "-d", "-P", "-F", "#{pane_id}", SHELL)

    def until_prompt(self, pane):
        deadline = time.time() + 15
        while self("capture-pane", "-p", "-t", pane).strip() != "$":
            if time.time() > deadline:
                sys.exit(f"{pane} gave no prompt")
            time.sleep(0.02)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/tmux-mcp")
    ap.add_argument("--tmux", default="tmux")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--handles", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=10)
    args = ap.parse_args()
    tmux = Tmux(args.tmux)
    tmux("new-session", "-d", "-s", "main", "-x", "200", "-y", "50", SHELL)
    env = {**os.environ, "LIBTMUX_SOCKET": tmux.name, "LIBTMUX_TMUX_BIN": args.tmux}
    for name in ("TMUX", "TMUX_PANE", "LIBTMUX_SOCKET_PATH"):
        env.pop(name, None)
    mcp = Mcp(args.bin, env)
    try:
        version = tmux("display-message", "-p", "#{version}")
        print(f"tmux {version}, {args.bin}")
        pane = tmux("display-message", "-p", "#{pane_id}")
        tmux.until_prompt(pane)
        # tmux's own floor: a plain control client of the same session
        # stamps the moment the end marker reaches it.
        seen = {}
        watcher = subprocess.Popen([args.tmux, "-L", tmux.name, "-C", "attach", "-t", "main"],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, env={**os.environ, "TMUX": ""})

        def watch():
            for line in watcher.stdout:
                # The marker itself (ESC as `\033`), not the typed line's
                # echo (where the backslash is `\134` and the status `%d`).
                for found in END_MARKER.finditer(line):
                    seen.setdefault(found.group(1).decode(), time.time())

        threading.Thread(target=watch, daemon=True).start()
        delays, floors, ours = [], [], []
        with tempfile.TemporaryDirectory() as scratch:
            stamp = os.path.join(scratch, "end")
            for _ in range(args.runs):
                command = f"sleep 0.3; date +%s.%N > {stamp}"
                started, _ = mcp.call("run_command", {"pane_id": pane, "command": command,
                                                      "background": True})
                waited, read_at = mcp.call("wait_for_command",
                                           {"command_id": started["command_id"], "timeout": 10})
                if waited["running"] or waited["exit_status"] != 0:
                    sys.exit(f"the command did not end well: {waited}")
                with open(stamp) as f:
                    ended_at = float(f.read())
                delays.append((read_at - ended_at) * 1000)
                if started["command_id"] in seen:
                    floors.append((seen[started["command_id"]] - ended_at) * 1000)
                    ours.append((read_at - seen[started["command_id"]]) * 1000)
        watcher.stdin.close()
        watcher.wait(10)
        print(f"end marker seen by a plain tmux -C client ({len(floors)} runs): median "
              f"{statistics.median(floors):.2f} ms, p95 {percentile(floors, 95):.2f} ms")
        print(f"end to answer ({args.runs} runs): median {statistics.median(delays):.2f} ms, "
              f"p95 {percentile(delays, 95):.2f} ms, max {max(delays):.2f} ms")
        print(f"marker at tmux -C to answer ({len(ours)} runs): median "
              f"{statistics.median(ours):.2f} ms, p95 {percentile(ours, 95):.2f} ms")

        ids = []
        for _ in range(args.handles):
            window = tmux.window()
            tmux.until_prompt(window)
            started, _ = mcp.call("run_command", {"pane_id": window, "command": "sleep 60",
                                                  "background": True})
            ids.append(started["command_id"])
        listed, _ = mcp.call("list_commands", {"running": True})
        running = [c for c in listed["commands"] if c["command_id"] in ids]
        if len(running) != args.handles:
            sys.exit(f"not all handles run: {listed}")
        server_pid = int(tmux("display-message", "-p", "#{pid}"))
        ours0, tmux0 = cpu_seconds(mcp.proc.pid), cpu_seconds(server_pid)
        time.sleep(args.seconds)
        ours1, tmux1 = cpu_seconds(mcp.proc.pid), cpu_seconds(server_pid)
        print(f"{args.handles} idle handles over {args.seconds:g} s: server "
              f"{(ours1 - ours0) / args.seconds * 100:.2f} % CPU ({(ours1 - ours0) * 1000:.0f} ms), "
              f"tmux {(tmux1 - tmux0) / args.seconds * 100:.2f} % CPU")
    finally:
        mcp.close()
        subprocess.run([args.tmux, "-L", tmux.name, "kill-server"], capture_output=True)


if __name__ == "__main__":
    main()
