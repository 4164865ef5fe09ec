#!/usr/bin/env python3
"""What our server costs the tmux it lives in, per tmux release (issue 9).

For each `--tmux` binary, on private servers (`-L quiet-bench-…`, killed at
the end), with the tmux-mcp binary talking to them over MCP stdio:

1. unwatched flood: `seq 1 N` in a pane of a session our server streams
   (another pane of it has a wait armed), against the same with no server
   of ours: the ratio of the two times (bound 1.10).
2. watched flood: a `wait_for_text` on the flooding pane for the line after
   the flood; time to the answer against the shell's no-server time (bound
   1.25).
3. commands under floods: `list_panes` p50/p99 while two neighbour panes
   print in a loop and a wait on a third keeps the session streamed
   (bound p99 100 ms).
4. 200 watched sessions: tmux's own command latency (`tmux display -p`,
   median) with no server of ours, while 200 `wait_for_text` calls (one per
   session) are armed, and after they end plus the idle-detach time; how
   many waits answered once a script printed the 200 markers (bound: all,
   and within 2x the no-server latency).

    cargo build --release
    bench/quiet.py [--bin target/release/tmux-mcp] [--tmux tmux] [--tmux target/tmux/3.7b/bin/tmux]
                   [--scenarios unwatched,watched,commands,sessions,rounds] [--rounds 12] [--repeat 3]
"""

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import threading
import time

SHELL = "env PS1='$ ' sh"


class Mcp:
    """tmux-mcp on stdio; many requests may be in flight."""

    def __init__(self, binary, env):
        self.proc = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, text=True)
        self.ids = itertools.count(1)
        self.answers = {}
        self.progress = set()
        self.cond = threading.Condition()
        self.lock = threading.Lock()
        threading.Thread(target=self.read, daemon=True).start()
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "quiet-bench", "version": "0"}})
        self.send({"method": "notifications/initialized"})

    def read(self):
        for line in self.proc.stdout:
            message = json.loads(line)
            with self.cond:
                if "id" in message and "method" not in message:
                    self.answers[message["id"]] = message
                elif message.get("method") == "notifications/progress":
                    self.progress.add(message["params"]["progressToken"])
                self.cond.notify_all()

    def send(self, message):
        with self.lock:
            self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
            self.proc.stdin.flush()

    def start(self, method, params):
        ident = next(self.ids)
        self.send({"id": ident, "method": method, "params": params})
        return ident

    def wait(self, ident, bound=120):
        with self.cond:
            if not self.cond.wait_for(lambda: ident in self.answers, bound):
                sys.exit(f"no answer to request {ident} within {bound} s")
            return self.answers.pop(ident)

    def request(self, method, params):
        return self.wait(self.start(method, params))

    def call_start(self, tool, args, token=None):
        params = {"name": tool, "arguments": args}
        if token is not None:
            params["_meta"] = {"progressToken": token}
        return self.start("tools/call", params)

    def result(self, ident, bound=120):
        answer = self.wait(ident, bound)
        result = answer.get("result", {})
        if result.get("isError"):
            sys.exit(f"tool error: {result}")
        content = result.get("structuredContent", {})
        return content.get("result", content)

    def armed(self, tokens, bound=120):
        with self.cond:
            if not self.cond.wait_for(lambda: tokens <= self.progress, bound):
                errors = [str(a)[:300] for a in self.answers.values()][:3]
                sys.exit(f"{len(tokens - self.progress)} waits never armed; answers: {errors}")

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(20)


class Tmux:
    def __init__(self, binary, tag):
        self.binary = binary
        self.name = f"quiet-bench-{os.getpid()}-{tag}"

    def __call__(self, *args):
        out = subprocess.run([self.binary, "-L", self.name, "-f", "/dev/null", *args],
                             capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"tmux {args}: {out.stderr.strip()}")
        return out.stdout.strip()

    def start(self, session="main"):
        self("new-session", "-d", "-s", session, "-x", "200", "-y", "50", SHELL)
        self("set-option", "-g", "default-command", SHELL)

    def pane(self, target):
        return self("display-message", "-p", "-t", target, "#{pane_id}")

    def split(self, target):
        return self("split-window", "-d", "-t", target, "-P", "-F", "#{pane_id}")

    def kill(self):
        subprocess.run([self.binary, "-L", self.name, "kill-server"], capture_output=True)

    def timed(self, pane, command, channel):
        """Seconds from typing `command` in `pane` to its end."""
        started = time.monotonic()
        self("send-keys", "-t", pane, f"{command}; {self.binary} -L {self.name} wait-for -S {channel}", "Enter")
        self("wait-for", channel)
        return time.monotonic() - started

    def latency(self, runs=21):
        xs = []
        for _ in range(runs):
            started = time.monotonic()
            self("display-message", "-p", "x")
            xs.append(time.monotonic() - started)
        return statistics.median(xs)

    def mcp(self, binary, **env):
        socket_env = {"LIBTMUX_SOCKET": self.name, "LIBTMUX_TMUX_BIN": self.binary}
        return Mcp(binary, dict(os.environ, **socket_env, **env))


def cpu_seconds(pid):
    """User plus system CPU a process has used (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def flood(n):
    return f"seq 1 {n}"


def unwatched_flood(args, tmux_bin):
    times = {}
    for mode in ("alone", "ours"):
        runs = []
        for run in range(args.repeat):
            tmux = Tmux(tmux_bin, f"u{mode}{run}")
            tmux.start()
            flooder = tmux.pane("main")
            watched = tmux.split("main")
            mcp = None
            try:
                if mode == "ours":
                    mcp = tmux.mcp(args.bin)
                    token = f"w{run}"
                    mcp.call_start("wait_for_text", {"pane_id": watched, "patterns": ["never"],
                                                     "timeout": 60}, token)
                    mcp.armed({token})
                    cpu_before = cpu_seconds(mcp.proc.pid)
                runs.append(tmux.timed(flooder, flood(args.lines), f"done{run}"))
                if mode == "ours":
                    times.setdefault("cpu", []).append(cpu_seconds(mcp.proc.pid) - cpu_before)
            finally:
                if mcp:
                    mcp.close()
                tmux.kill()
        times[mode] = statistics.median(runs)
    return times["alone"], times["ours"], max(times["cpu"])


def watched_flood(args, tmux_bin):
    alone, ours = [], []
    for run in range(args.repeat):
        tmux = Tmux(tmux_bin, f"w{run}")
        tmux.start()
        pane = tmux.pane("main")
        try:
            alone.append(tmux.timed(pane, f"{flood(args.lines)}; echo flood-over", f"alone{run}"))
            tmux("clear-history", "-t", pane)
            mcp = tmux.mcp(args.bin)
            token = f"f{run}"
            ident = mcp.call_start("wait_for_text", {"pane_id": pane, "patterns": [f"over-{run}x"],
                                                     "timeout": 120}, token)
            mcp.armed({token})
            started = time.monotonic()
            tmux("send-keys", "-t", pane, f"{flood(args.lines)}; echo over-{run}''x", "Enter")
            found = mcp.result(ident)["found"]
            ours.append(time.monotonic() - started)
            if not found:
                sys.exit("the watched flood's marker was not found")
            mcp.close()
        finally:
            tmux.kill()
    return statistics.median(alone), statistics.median(ours)


def commands_under_floods(args, tmux_bin):
    tmux = Tmux(tmux_bin, "c")
    tmux.start()
    waited = tmux.pane("main")
    loop = "while :; do seq 1 100000; done"
    for _ in range(2):
        tmux("send-keys", "-t", tmux.split("main"), loop, "Enter")
    mcp = tmux.mcp(args.bin)
    try:
        mcp.call_start("wait_for_text", {"pane_id": waited, "patterns": ["never"], "timeout": 60}, "c")
        mcp.armed({"c"})
        xs = []
        for _ in range(args.calls):
            started = time.monotonic()
            mcp.result(mcp.call_start("list_panes", {}), bound=30)
            xs.append(time.monotonic() - started)
        xs.sort()
        return xs[len(xs) // 2], xs[int(len(xs) * 0.99) - 1]
    finally:
        mcp.close()
        tmux.kill()


def percentile99(sorted_values):
    """The 99th percentile (nearest rank) of sorted values."""
    return sorted_values[max(0, -(-99 * len(sorted_values) // 100) - 1)]


def rounds_under_floods(args, tmux_bin):
    """Issue 20's sequence: p1 and p2 print `seq 1 20000` in a loop, p3 is
    quiet; each round a wait_for_text(timeout=0.4) then a capture_since
    (with the cursor of the previous one) on p1, p2, p3 in turn. Returns
    the waits' time past their 0.4 s and the captures' times, sorted."""
    tmux = Tmux(tmux_bin, "r")
    tmux.start()
    panes = [tmux.pane("main"), tmux.split("main"), tmux.split("main")]
    for pane in panes[:2]:
        tmux("send-keys", "-t", pane, "while :; do seq 1 20000; done", "Enter")
    mcp = tmux.mcp(args.bin)
    cursors = {}
    waits, captures = [], []
    try:
        for i in range(args.rounds):
            pane = panes[i % 3]
            started = time.monotonic()
            mcp.result(mcp.call_start("wait_for_text", {"pane_id": pane, "patterns": ["never"],
                                                        "timeout": 0.4}), bound=30)
            waits.append(time.monotonic() - started - 0.4)
            call = {"pane_id": pane}
            if pane in cursors:
                call["cursor"] = cursors[pane]
            started = time.monotonic()
            result = mcp.result(mcp.call_start("capture_since", call), bound=30)
            captures.append(time.monotonic() - started)
            cursors[pane] = result["cursor"]
        return sorted(waits), sorted(captures)
    finally:
        mcp.close()
        tmux.kill()


def many_sessions(args, tmux_bin):
    tmux = Tmux(tmux_bin, "s")
    tmux.start("s0")
    for i in range(1, args.sessions):
        tmux("new-session", "-d", "-s", f"s{i}", SHELL)
    panes = [tmux.pane(f"s{i}") for i in range(args.sessions)]
    alone = tmux.latency()
    mcp = tmux.mcp(args.bin, TMUX_MCP_IDLE_DETACH_SECONDS=str(args.idle))
    try:
        tokens, idents = set(), []
        for i, pane in enumerate(panes):
            token = f"s{i}"
            tokens.add(token)
            idents.append(mcp.call_start("wait_for_text", {"pane_id": pane, "patterns": [f"mark-{i}x"],
                                                           "timeout": 110}, token))
        mcp.armed(tokens)
        during = tmux.latency()
        clients = len(tmux("list-clients", "-F", "#{client_name}").splitlines())
        started = time.monotonic()
        for i, pane in enumerate(panes):
            tmux("send-keys", "-t", pane, f"echo mark-{i}''x", "Enter")
        printed = time.monotonic() - started
        found = sum(1 for ident in idents if mcp.result(ident)["found"])
        answered = time.monotonic() - started
        # The idle-detach time is what is measured: poll until our clients
        # are gone (or twice that time passed).
        ended = time.monotonic()
        while True:
            left = len(tmux("list-clients", "-F", "#{client_name}").splitlines())
            gone = time.monotonic() - ended
            if left == 0 or gone > 2 * args.idle + 1:
                break
            time.sleep(0.1)
        after = tmux.latency()
        return alone, during, after, clients, left, gone, found, printed, answered
    finally:
        mcp.close()
        tmux.kill()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default="target/release/tmux-mcp")
    parser.add_argument("--tmux", action="append", help="tmux binaries (default: tmux)")
    parser.add_argument("--lines", type=int, default=2_000_000, help="seq 1 N floods")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--idle", type=float, default=5.0, help="TMUX_MCP_IDLE_DETACH_SECONDS")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--scenarios", default="unwatched,watched,commands,sessions",
                        type=lambda v: set(v.split(",")))
    args = parser.parse_args()
    for tmux_bin in args.tmux or ["tmux"]:
        version = subprocess.run([tmux_bin, "-V"], capture_output=True, text=True).stdout.strip()
        print(f"## {version} ({tmux_bin})", flush=True)
        if "unwatched" in args.scenarios:
            alone, ours, cpu = unwatched_flood(args, tmux_bin)
            print(f"unwatched flood (seq 1 {args.lines}): {alone:.2f} s alone, {ours:.2f} s with ours: "
                  f"{ours / alone:.2f}x; our server's CPU during a flood: at most {cpu:.2f} s", flush=True)
        if "watched" in args.scenarios:
            alone, ours = watched_flood(args, tmux_bin)
            print(f"watched flood: shell alone {alone:.2f} s, wait answered after {ours:.2f} s: "
                  f"{ours / alone:.2f}x", flush=True)
        if "commands" in args.scenarios:
            p50, p99 = commands_under_floods(args, tmux_bin)
            print(f"list_panes under two neighbour floods ({args.calls} calls): p50 {p50 * 1000:.1f} ms, "
                  f"p99 {p99 * 1000:.1f} ms", flush=True)
        if "rounds" in args.scenarios:
            for _ in range(args.repeat):
                waits, captures = rounds_under_floods(args, tmux_bin)
                print(f"  rounds: {args.rounds} rounds, wait past its timeout median "
                      f"{statistics.median(waits) * 1000:.1f} ms p99 {percentile99(waits) * 1000:.1f} ms "
                      f"max {waits[-1] * 1000:.1f} ms; "
                      f"capture_since median {statistics.median(captures) * 1000:.1f} ms "
                      f"p99 {percentile99(captures) * 1000:.1f} ms max {captures[-1] * 1000:.1f} ms "
                      f"(bound: each within 100 ms)", flush=True)
        if "sessions" in args.scenarios:
            print_sessions(args, tmux_bin)


def print_sessions(args, tmux_bin):
    alone, during, after, clients, left, gone, found, printed, answered = many_sessions(args, tmux_bin)
    print(f"{args.sessions} watched sessions: tmux latency {alone * 1000:.1f} ms alone, "
          f"{during * 1000:.1f} ms with every wait armed ({during / alone:.2f}x, {clients} clients "
          f"of ours), {after * 1000:.1f} ms once they ended and {left} clients were left "
          f"{gone:.1f} s later (idle detach {args.idle:.0f} s; {after / alone:.2f}x); "
          f"{found}/{args.sessions} waits found "
          f"their marker; markers printed in {printed:.2f} s, all answered after {answered:.2f} s",
          flush=True)


if __name__ == "__main__":
    main()
