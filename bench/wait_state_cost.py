#!/usr/bin/env python3
"""What an armed `wait_for_state` costs: probes per second and CPU.

Starts a private tmux server (`tmux -L tmuxmcp-statebench-<pid>`, killed at
the end) whose panes run `bash --norc --noprofile`, and the tmux-mcp binary
over stdio. For each scenario one `wait_for_state` runs for `--seconds`
(it is meant to time out), and the script prints the probes the result
counts, probes per second, and the CPU time the MCP server and the tmux
server used meanwhile (utime + stime from /proc, 10 ms ticks), as a share
of one core. Then `examples/probe_bench` times one probe, and `--answered`
times `wait_for_state(states=["prompt"])` on a shell already at its prompt
(the call's round trip when it is answered at its first look).

    cargo build --release --examples
    python3 bench/wait_state_cost.py [--bin target/release/tmux-mcp] [--seconds 10]
"""

import argparse
import json
import os
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of a process, in seconds (fields after the last ')')."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


class Tmux:
    def __init__(self):
        self.name = f"tmuxmcp-statebench-{os.getpid()}"
        self.env = {k: v for k, v in os.environ.items() if k != "TMUX"}
        self.cmd("new-session", "-d", "-s", "b", "-x", "200", "-y", "50",
                 "bash --norc --noprofile")

    def cmd(self, *args):
        out = subprocess.run(["tmux", "-L", self.name, "-f", "/dev/null", *args],
                             env=self.env, capture_output=True, text=True, check=True)
        return out.stdout.strip()

    def pane(self, command=None):
        """A new window's pane id and pid; `command` typed at its prompt."""
        line = self.cmd("new-window", "-d", "-P", "-F", "#{pane_id} #{pane_pid}",
                        "bash --norc --noprofile")
        pane, pid = line.split()
        if command:
            self.cmd("send-keys", "-t", pane, "-l", command)
            self.cmd("send-keys", "-t", pane, "Enter")
        return pane, int(pid)

    def kill(self):
        subprocess.run(["tmux", "-L", self.name, "kill-server"], env=self.env,
                       capture_output=True)


class Server:
    def __init__(self, binary, tmux):
        env = dict(tmux.env, LIBTMUX_SOCKET=tmux.name)
        self.proc = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, text=True)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "statebench", "version": "0"}})
        self.send({"method": "notifications/initialized"})

    def send(self, message):
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        for line in self.proc.stdout:
            message = json.loads(line)
            if message.get("id") == self.next_id:
                if "error" in message:
                    sys.exit(f"{method}: {message['error']}")
                return message["result"]
        sys.exit("the server closed its stdout")

    def call(self, tool, args, progress=False):
        params = {"name": tool, "arguments": args}
        if progress:
            params["_meta"] = {"progressToken": "bench"}
        result = self.request("tools/call", params)
        if result.get("isError"):
            sys.exit(f"{tool}: {result['content']}")
        return result["structuredContent"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def until_activity(server, pane, activity):
    """Waits (with wait_for_state itself, bounded) until the pane settles."""
    want = {"prompt": ["prompt"], "running": ["idle"]}[activity]
    server.call("wait_for_state", {"pane_id": pane, "states": want, "idle_ms": 300,
                                   "timeout": 15})


def scenario(server, tmux_pid, pane, seconds, progress, tool):
    server_before, tmux_before = cpu_seconds(server.proc.pid), cpu_seconds(tmux_pid)
    started = time.monotonic()
    args = {"pane_id": pane, "timeout": seconds}
    if tool == "wait_for_state":
        args["states"] = ["bell"]
    else:
        args["patterns"] = ["never-printed-7d3f"]
    result = server.call(tool, args, progress)
    wall = time.monotonic() - started
    server_cpu = cpu_seconds(server.proc.pid) - server_before
    tmux_cpu = cpu_seconds(tmux_pid) - tmux_before
    assert result.get("state", result.get("outcome")) == "timeout", result
    probes = result.get("probes", 0)
    return {"probes": probes, "probes_per_s": probes / wall,
            "wall_s": wall, "server_cpu_ms": server_cpu * 1000,
            "server_pct": 100 * server_cpu / wall, "tmux_cpu_ms": tmux_cpu * 1000,
            "tmux_pct": 100 * tmux_cpu / wall}


def answered(server, pane, repeat):
    """Median and p90 round trip, in ms, of a wait answered at once."""
    took = []
    for _ in range(repeat):
        started = time.perf_counter()
        result = server.call("wait_for_state", {"pane_id": pane, "states": ["prompt"]})
        took.append((time.perf_counter() - started) * 1000)
        assert result["state"] == "prompt", result
    took.sort()
    return took[len(took) // 2], took[int(len(took) * 0.9)]


def probe_cost(example, pid):
    out = subprocess.run([example, str(pid), "2000"], capture_output=True, text=True,
                         check=True)
    return out.stdout.strip()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="target/release/tmux-mcp")
    parser.add_argument("--example", default="target/release/examples/probe_bench")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--answered", type=int, default=50, metavar="N",
                        help="answered waits to time (0: none)")
    args = parser.parse_args()
    tmux = Tmux()
    server = None
    try:
        server = Server(args.bin, tmux)
        tmux_pid = int(tmux.cmd("display-message", "-p", "#{pid}"))
        version = tmux.cmd("display-message", "-p", "#{version}")
        processes = sum(1 for p in os.listdir("/proc") if p.isdigit())
        print(f"# wait_for_state cost  tmux {version}  cpus={os.cpu_count()}  "
              f"processes={processes}  seconds={args.seconds}")
        quiet, quiet_pid = tmux.pane()
        until_activity(server, quiet, "prompt")
        if args.answered:
            p50, p90 = answered(server, quiet, args.answered)
            print(f"wait_for_state answered at a prompt ({args.answered} calls): "
                  f"median {p50:.2f} ms, p90 {p90:.2f} ms")
        silent, silent_pid = tmux.pane("sleep 100000")
        until_activity(server, silent, "running")
        # Made last: tmux streams every pane of the session to our control
        # client, so a printing pane costs the quiet scenarios too.
        ticking = []

        def tick():
            if not ticking:
                ticking.append(tmux.pane("while :; do echo tick; sleep 0.1; done")[0])
            return ticking[0]

        state, text = "wait_for_state", "wait_for_text"
        rows = [
            ("quiet pane at its prompt", lambda: quiet, False, state),
            ("same, client sends a progress token", lambda: quiet, True, state),
            ("silent command running (sleep)", lambda: silent, False, state),
            ("a line every 100 ms", tick, False, state),
            ("a line every 100 ms, wait_for_text for comparison", tick, False, text),
        ]
        print(f"| scenario | probes | probes/s | server CPU | server % of a core "
              f"| tmux CPU | tmux % of a core |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for label, pane, progress, tool in rows:
            r = scenario(server, tmux_pid, pane(), args.seconds, progress, tool)
            print(f"| {label} | {r['probes']} | {r['probes_per_s']:.2f} "
                  f"| {r['server_cpu_ms']:.0f} ms | {r['server_pct']:.2f} "
                  f"| {r['tmux_cpu_ms']:.0f} ms | {r['tmux_pct']:.2f} |")
        if os.path.exists(args.example):
            print(f"probe, shell at its prompt: {probe_cost(args.example, quiet_pid)}")
            print(f"probe, command running:     {probe_cost(args.example, silent_pid)}")
        else:
            print(f"(no {args.example}: cargo build --release --examples)")
    finally:
        if server:
            server.close()
        tmux.kill()


if __name__ == "__main__":
    main()
