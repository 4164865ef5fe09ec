#!/usr/bin/env python3
"""Attach-delay figure: one session's slow attach against another's call.

Starts a private tmux server (killed at the end) with sessions `a` and `b`,
and the tmux-mcp binary with LIBTMUX_TMUX_BIN set to a wrapper that makes a
control client attaching to session $1 (`b`) take `--attach` seconds. With
`a`'s client attached, a `wait_for_text` on `b`'s pane starts that slow
attach; `list_panes` on `a` is timed meanwhile. Prints the median of
`--repeat` runs. The hub attaches per session, so this should be about a
millisecond, not the attach time.

    scripts/attach-delay-bench.py [--bin target/release/tmux-mcp] [--repeat 5]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

WRAPPER = """#!/bin/sh
case "$*" in *"-C attach-session -t \\$1 "*) sleep {delay};; esac
exec {tmux} "$@"
"""


class Server:
    """The MCP server on stdio; answers are timestamped as they arrive."""

    def __init__(self, argv, env):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, text=True)
        self.answers, self.sent = {}, {}
        self.arrived = threading.Condition()
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.proc.stdout:
            message = json.loads(line)
            if "id" in message:
                with self.arrived:
                    self.answers[message["id"]] = time.monotonic()
                    self.arrived.notify_all()

    def send(self, message):
        if "id" in message:
            self.sent[message["id"]] = time.monotonic()
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        self.proc.stdin.flush()

    def took(self, ident, bound=30):
        with self.arrived:
            if not self.arrived.wait_for(lambda: ident in self.answers, bound):
                sys.exit(f"no answer to request {ident} within {bound} s")
        return self.answers[ident] - self.sent[ident]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(10)


def one_run(binary, wrapper, attach, run):
    sock = f"attach-bench-{os.getpid()}-{run}"
    tmux = ["tmux", "-L", sock, "-f", "/dev/null"]
    try:
        subprocess.run(tmux + ["new-session", "-d", "-s", "a"], check=True)
        subprocess.run(tmux + ["new-session", "-d", "-s", "b"], check=True)
        pane_b = subprocess.run(tmux + ["display", "-p", "-t", "b:", "#{pane_id}"],
                                capture_output=True, text=True, check=True).stdout.strip()
        server = Server([binary], dict(os.environ, LIBTMUX_TMUX_BIN=wrapper))
        server.send({"id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "attach-bench", "version": "0"}}})
        server.took(0)
        server.send({"method": "notifications/initialized"})

        def call(ident, name, args):
            server.send({"id": ident, "method": "tools/call",
                         "params": {"name": name, "arguments": dict(args, socket_name=sock)}})

        call(1, "list_panes", {"session_name": "a"})
        server.took(1)
        call(2, "wait_for_text", {"pane_id": pane_b, "patterns": ["never printed"],
                                  "timeout": attach + 2})
        # Give the slow attach time to begin: a measurement, not a test.
        time.sleep(min(0.3, attach / 4))
        call(3, "list_panes", {"session_name": "a"})
        took = server.took(3)
        server.took(2)
        server.close()
        return took
    finally:
        subprocess.run(tmux + ["kill-server"], stderr=subprocess.DEVNULL)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default="target/release/tmux-mcp")
    parser.add_argument("--attach", type=float, default=3.0, help="seconds $1's attach takes")
    parser.add_argument("--repeat", type=int, default=5)
    opts = parser.parse_args()
    tmux = subprocess.run(["sh", "-c", "command -v tmux"], capture_output=True,
                          text=True, check=True).stdout.strip()
    version = subprocess.run([tmux, "-V"], capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        wrapper = os.path.join(tmp, "slow-tmux")
        with open(wrapper, "w") as f:
            f.write(WRAPPER.format(delay=opts.attach, tmux=tmux))
        os.chmod(wrapper, 0o755)
        times = [one_run(opts.bin, wrapper, opts.attach, run) for run in range(opts.repeat)]
    print(f"{version}, {opts.bin}: list_panes on session a while b's control client "
          f"takes {opts.attach:.1f} s to attach: median {statistics.median(times) * 1000:.1f} ms, "
          f"max {max(times) * 1000:.1f} ms over {len(times)} runs")


if __name__ == "__main__":
    main()
