#!/usr/bin/env python3
"""What `wait_for_attention` costs and how fast it answers (issue 21).

On private tmux servers (`-L quiet-bench-…`, killed at the end), with the
tmux-mcp binary talking to them over MCP stdio (bench/quiet.py's harness):

1. idle: 50 panes (one session, a window each, `sh` at its prompt) under
   one armed `wait_for_attention` of the whole server; CPU of our server
   and of tmux over `--idle` seconds (bound: 0 %).
2. latency: a pane blocked in `read` prints an OSC 9 notification once it
   gets a line; seconds from the `send-keys` of that line to the answer,
   median and worst of `--rounds` (bound 0.200 s), alone and while a
   neighbour pane of the scope floods (`yes`).
3. flood: `seq 1 N` in a pane of the armed scope, against the same with no
   server of ours: the ratio of the two times (bound 1.25, watched).

    cargo build --release
    bench/attention.py [--bin target/release/tmux-mcp] [--tmux tmux] [--rounds 10]
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quiet import Tmux, cpu_seconds  # noqa: E402

READER = r"""while read x; do printf '\033]9;got %s\007' "$x"; done"""


def fifty(tmux):
    tmux.start()
    for _ in range(49):
        tmux("new-window", "-d", "-t", "main")
    return tmux("list-panes", "-a", "-F", "#{pane_id}").split()


def arm(mcp, args, token):
    ident = mcp.call_start("wait_for_attention", args, token)
    mcp.armed({token})
    return ident


def idle(args, tmux_bin):
    tmux = Tmux(tmux_bin, "idle")
    panes = fifty(tmux)
    server_pid = int(tmux("display-message", "-p", "#{pid}"))
    mcp = tmux.mcp(args.bin)
    try:
        ident = arm(mcp, {"timeout": args.idle + 5}, "idle")
        time.sleep(1)  # the arming's own settle points pass
        ours, theirs = cpu_seconds(mcp.proc.pid), cpu_seconds(server_pid)
        time.sleep(args.idle)  # the measured span: nothing happens in it
        ours = cpu_seconds(mcp.proc.pid) - ours
        theirs = cpu_seconds(server_pid) - theirs
        got = mcp.result(ident, args.idle + 30)
        assert got["panes"] == len(panes), got
        return len(panes), 100 * ours / args.idle, 100 * theirs / args.idle
    finally:
        mcp.close()
        tmux.kill()


def latency(args, tmux_bin, flood):
    tmux = Tmux(tmux_bin, f"lat{int(flood)}")
    fifty(tmux)
    reader = tmux.pane("main:0")
    tmux("send-keys", "-t", reader, READER, "Enter")
    if flood:
        neighbour = tmux.pane("main:1")
        tmux("send-keys", "-t", neighbour, "yes", "Enter")
    mcp = tmux.mcp(args.bin)
    took = []
    try:
        since = None
        for n in range(args.rounds):
            call = {"reasons": ["notify"], "timeout": 20}
            if since:
                call["since"] = since
            ident = arm(mcp, call, f"l{n}")
            sent = time.monotonic()
            tmux("send-keys", "-t", reader, f"r{n}", "Enter")
            got = mcp.result(ident, 30)
            took.append(time.monotonic() - sent)
            assert any(e["detail"] == f"got r{n}" for e in got["events"]), got
            since = got["since"]
        return statistics.median(took), max(took)
    finally:
        mcp.close()
        tmux.kill()


def flood_ratio(args, tmux_bin):
    times = {}
    for mode in ("alone", "ours"):
        runs = []
        for run in range(args.repeat):
            tmux = Tmux(tmux_bin, f"f{mode}{run}")
            fifty(tmux)
            pane = tmux.pane("main:0")
            mcp = None
            try:
                if mode == "ours":
                    mcp = tmux.mcp(args.bin)
                    ident = arm(mcp, {"reasons": ["notify"], "timeout": 60}, f"f{run}")
                runs.append(tmux.timed(pane, f"seq 1 {args.lines}", f"done{run}"))
                if mcp:
                    mcp.result(ident, 90)
            finally:
                if mcp:
                    mcp.close()
                tmux.kill()
        times[mode] = statistics.median(runs)
    return times["alone"], times["ours"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", default="target/release/tmux-mcp")
    p.add_argument("--tmux", action="append")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--idle", type=float, default=5.0)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--lines", type=int, default=300000)
    args = p.parse_args()
    for tmux_bin in args.tmux or ["tmux"]:
        version = os.popen(f"{tmux_bin} -V").read().strip()
        n, ours, theirs = idle(args, tmux_bin)
        print(f"{version}: idle, {n} panes armed: tmux-mcp {ours:.2f} % CPU, tmux {theirs:.2f} % CPU")
        for flood in (False, True):
            med, worst = latency(args, tmux_bin, flood)
            what = "with a neighbour flooding (yes)" if flood else "quiet neighbours"
            print(f"{version}: notify to answer, {what}: median {med * 1000:.0f} ms, worst {worst * 1000:.0f} ms")
        alone, ours = flood_ratio(args, tmux_bin)
        print(f"{version}: seq 1 {args.lines} in an armed pane: {ours:.2f} s vs {alone:.2f} s alone = {ours / alone:.2f}x")


if __name__ == "__main__":
    main()
