#!/usr/bin/env python3
"""run_command('true') against its floor, and server builds side by side (issue 20.4).

1. The floor: on a private tmux server (`-L run-floor-…`, killed at the
   end), a plain `tmux -C` client types run_command's wrapper line for
   `true` (as the server types it into an `sh` pane: erase, start marker,
   `(true)`, end marker, the end-script test) and the time until the
   prompt follows the end marker is taken; beside it, one tmux round trip
   (`display-message -p x`), and the three bursts of commands the server
   sends per call (the pane's description with the person check's reads;
   the input mark's reads; the anchor's reads after the end), each timed
   from its write to its last reply: tmux's own share of our round trips.
   No MCP server is involved: what is left above this is ours.
2. With `--server LABEL=PATH` (any number): `run_command('true')` on each
   build, each on a private tmux server of its own, the calls interleaved
   (A B C, then C B A, ...) so that the machine's load falls on all alike.

    cargo build --release
    bench/run_floor.py [--repeat 100] [--server before=/tmp/old --server after=target/release/tmux-mcp]

`--cli` runs a tmux CLI command (`clear-history` of the pane) before each
call, as `mcp_race.py`'s run_command scenario does between its calls.
"""

import argparse
import json
import os
import select
import statistics
import subprocess
import time
import uuid


def summary(label, ms):
    ms = sorted(ms)
    p90 = ms[int(len(ms) * 0.9)]
    return f"{label:24} n={len(ms)} min={ms[0]:.2f} median={statistics.median(ms):.2f} p90={p90:.2f} ms"


def private_tmux(tag):
    socket = f"run-floor-{tag}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    subprocess.run(["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d",
                    "-x", "120", "-y", "40", "env PS1='$ ' sh"], check=True)
    return socket


# The bursts the server sends for run_command('true') on pane %0 (as of
# 2026-12-02; src/tools/shared/observe.rs, person.rs, src/tmux/hub.rs).
SEP, END = "\u241e", "\u241f"
BURSTS = {
    "describe + person": [
        f"display-message -p -t '%0' -- '#{{pane_id}}{SEP}#{{session_id}}{SEP}"
        f"#{{s/{SEP}|{END}/\ufffd/:pane_current_command}}{SEP}#{{pane_width}}{SEP}#{{pane_height}}{SEP}"
        f"#{{cursor_x}}{SEP}#{{alternate_on}}{SEP}#{{pane_pid}}{SEP}#{{pane_dead}}{END}'",
        f"display-message -p -t '%0' -- '#{{pane_id}}{SEP}#{{pane_tty}}{SEP}#{{pane_pid}}{SEP}"
        f"#{{window_id}}{SEP}#{{session_id}}{END}'",
        f"list-clients -F '#{{client_name}}{SEP}#{{client_control_mode}}{SEP}#{{client_readonly}}{SEP}"
        f"#{{client_activity}}{SEP}#{{window_id}}{SEP}#{{session_id}}{END}'",
    ],
    "input mark": [
        "display-message -p -t '%0' -- '#{pid} #{pane_pid} #{history_size} #{cursor_y} #{pane_width}'",
        "capture-pane -p -J -S '0' -t '%0'",
    ],
    "anchor": [
        "capture-pane -p -J -S '-40' -E '-' -t '%0'",
        f"display-message -p -t '%0' -- '#{{pane_id}}{SEP}#{{pid}}{SEP}#{{pane_pid}}{SEP}#{{history_size}}"
        f"{SEP}#{{history_limit}}{SEP}#{{pane_height}}{SEP}#{{pane_width}}{SEP}#{{alternate_on}}{SEP}#{{cursor_y}}{END}'",
    ],
}


def cli(socket, pane="%0"):
    subprocess.run(["tmux", "-L", socket, "clear-history", "-t", pane], check=False)


def floor(repeat, with_cli):
    socket = private_tmux("raw")
    client = subprocess.Popen(["tmux", "-L", socket, "-C", "attach"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, bufsize=0)
    fd = client.stdout.fileno()
    seen = b""

    def until(done):
        nonlocal seen
        deadline = time.monotonic() + 10
        while not done(seen):
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError(seen[-300:])
            seen += os.read(fd, 65536)

    def timed(line, done):
        nonlocal seen
        seen = b""
        started = time.perf_counter()
        client.stdin.write(line)
        until(done)
        return (time.perf_counter() - started) * 1000

    try:
        until(lambda b: b"%session-changed" in b)
        typed, trip = [], []
        bursts = {name: [] for name in BURSTS}
        for k in range(repeat + 3):
            if with_cli:
                cli(socket)
            nonce = uuid.uuid4().hex[:12]
            wrapper = (
                " printf '\\r\\033[1A\\033[3G\\033[J%b\\n\\033]6973;" + nonce + ";S\\007' 'true'; (true);"
                " __tmux_mcp_s=$?; printf '\\033]6973;" + nonce + ";E;%d\\007' \"$__tmux_mcp_s\";"
                " case ${TMUX_PANE-} in '%0') if [ -e \"${TMUX%,*,*}.tmux-mcp-end-0\" ]; then"
                " (sh \"${TMUX%,*,*}.tmux-mcp-end-0\" " + nonce + " \"$__tmux_mcp_s\" &); fi;; esac;"
                " unset __tmux_mcp_s"
            )
            quoted = "'" + wrapper.replace("'", "'\\''") + "'"
            line = f"send-keys -t %0 -l -- {quoted} ; send-keys -t %0 Enter\n".encode()
            end = f"6973;{nonce};E;0".encode()
            ms = timed(line, lambda b: end in b and b"$ " in b[b.index(end):])
            rt = timed(b"display-message -p x\n", lambda b: b"%end" in b)
            for name, commands in BURSTS.items():
                burst = "".join(c + "\n" for c in commands).encode()
                took = timed(burst, lambda b, n=len(commands): b.count(b"%end ") >= n)
                if k >= 3:
                    bursts[name].append(took)
            if k >= 3:
                typed.append(ms)
                trip.append(rt)
        print(summary("floor: wrapper to prompt", typed))
        print(summary("floor: one round trip", trip))
        for name, ms in bursts.items():
            print(summary(f"tmux: {name}", ms))
    finally:
        client.stdin.close()
        client.wait(timeout=10)
        subprocess.run(["tmux", "-L", socket, "kill-server"], check=False)


class Server:
    def __init__(self, label, path):
        self.label, self.next_id, self.times = label, 0, []
        self.socket = private_tmux(label)
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        env["LIBTMUX_SOCKET"] = self.socket
        self.process = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=env)
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "run_floor", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.pane = subprocess.run(["tmux", "-L", self.socket, "display-message", "-p", "#{pane_id}"],
                                   capture_output=True, text=True, check=True).stdout.strip()

    def send(self, message):
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            reply = json.loads(self.process.stdout.readline())
            if reply.get("id") == self.next_id:
                return reply

    def run_true(self, keep, with_cli):
        if with_cli:
            cli(self.socket, self.pane)
        started = time.perf_counter()
        reply = self.request("tools/call", {"name": "run_command", "arguments": {
            "command": "true", "pane_id": self.pane, "timeout": 30}})
        ms = (time.perf_counter() - started) * 1000
        if reply["result"].get("structuredContent", {}).get("exit_status") != 0:
            raise RuntimeError(f"{self.label}: {reply}")
        if keep:
            self.times.append(ms)

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], check=False)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=100)
    parser.add_argument("--server", action="append", default=[], metavar="LABEL=PATH")
    parser.add_argument("--cli", action="store_true", help="a tmux CLI command before each call")
    args = parser.parse_args()
    floor(args.repeat, args.cli)
    servers = []
    try:
        for spec in args.server:
            label, path = spec.split("=", 1)
            servers.append(Server(label, path))
        for k in range(args.repeat + 3):
            for server in servers if k % 2 == 0 else servers[::-1]:
                server.run_true(k >= 3, args.cli)
        for server in servers:
            print(summary(f"run_command('true') {server.label}", server.times))
    finally:
        for server in servers:
            server.close()
    print(f"1-minute load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
