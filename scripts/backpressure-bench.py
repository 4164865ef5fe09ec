#!/usr/bin/env python3
"""Backpressure figure: a client that stops reading while it sends calls.

Starts a private tmux server (killed at the end) with a pane holding long
lines of history, starts the tmux-mcp binary against it, then sends N
`capture_pane` calls (each answer about `--lines` lines of 200 bytes, twice:
text and structured) without reading for `--stall` seconds. Prints the
server's resident memory before, its peak during the stall, and checks that
every call is answered exactly once when the client reads again.

    scripts/backpressure-bench.py [--bin target/release/tmux-mcp] [--calls 1000]
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time


def rss_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/tmux-mcp")
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--lines", type=int, default=500)
    ap.add_argument("--stall", type=float, default=10.0)
    args = ap.parse_args()

    sock = f"tmuxmcp-bp-{os.getpid()}"
    tmux = ["tmux", "-L", sock, "-f", "/dev/null"]
    env = dict(os.environ)
    env.pop("TMUX", None)
    subprocess.run(tmux + ["new-session", "-d", "-s", "main", "-x", "200", "-y", "50",
                           "env PS1='$ ' sh"], check=True, env=env)
    server = None
    try:
        subprocess.run(tmux + ["set-option", "-g", "history-limit", "10000"], check=True, env=env)
        fill = f"yes $(printf 'x%.0s' $(seq 190)) | head -{args.lines}; tmux wait-for -S filled"
        subprocess.run(tmux + ["send-keys", "-t", "main", fill, "Enter"], check=True, env=env)
        subprocess.run(tmux + ["wait-for", "filled"], check=True, env=env, timeout=60)

        env["LIBTMUX_SOCKET"] = sock
        server = subprocess.Popen([args.bin], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env)
        send = server.stdin
        recv = server.stdout
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}
        send.write((json.dumps(init) + "\n").encode())
        send.flush()
        recv.readline()
        send.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        # One call first, so the control client is attached before the baseline.
        warm = {"jsonrpc": "2.0", "id": "warm", "method": "tools/call",
                "params": {"name": "capture_pane", "arguments": {"start": -args.lines}}}
        send.write((json.dumps(warm) + "\n").encode())
        send.flush()
        answer = json.loads(recv.readline())
        size = len(json.dumps(answer))
        before = rss_kb(server.pid, "VmRSS")

        sent = []

        def sender():
            for i in range(args.calls):
                call = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                        "params": {"name": "capture_pane",
                                   "arguments": {"start": -args.lines}}}
                send.write((json.dumps(call) + "\n").encode())
                send.flush()
                sent.append(i)

        t = threading.Thread(target=sender, daemon=True)
        started = time.monotonic()
        t.start()
        peak = before
        while time.monotonic() - started < args.stall:
            peak = max(peak, rss_kb(server.pid, "VmRSS"))
            time.sleep(0.05)
        sent_during_stall = len(sent)
        seen = set()
        while len(seen) < args.calls:
            line = recv.readline()
            if not line:
                sys.exit("EOF before every answer")
            message = json.loads(line)
            if "id" in message:
                if message["id"] in seen:
                    sys.exit(f"answered twice: {message['id']}")
                seen.add(message["id"])
        t.join()
        print(f"# backpressure  calls={args.calls}  answer={size} bytes  stall={args.stall}s  bin={args.bin}")
        print(f"rss before         {before / 1024:8.1f} MB")
        print(f"rss peak in stall  {peak / 1024:8.1f} MB  (+{(peak - before) / 1024:.1f} MB)")
        print(f"calls written by the client during the stall  {sent_during_stall}")
        print(f"answered once      {len(seen)} of {args.calls}")
    finally:
        if server is not None:
            server.kill()
            server.wait()
        subprocess.run(tmux + ["kill-server"], env=env, stderr=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
