#!/usr/bin/env python3
"""How long a command takes in a tmux pane with no MCP server at all (issue 10).

The floor under any `run_command`: on a private server (`-L pane-floor-…`,
killed at the end), a plain `sh` pane runs `CMD; tmux wait-for -S done`,
typed with `send-keys`, and the time until `wait-for done` returns is taken;
`true` gives the cost of the typing and the two tmux processes. For
`seq 1 20000` the difference is what the shell and tmux need to print
20,000 lines into the pane, which no server can take away.

    bench/pane_floor.py [--tmux tmux] [--repeat 20] [--command 'seq 1 20000']
"""

import argparse
import os
import statistics
import subprocess
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tmux", default="tmux")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--command", default="seq 1 20000")
    args = parser.parse_args()
    socket = f"pane-floor-{os.getpid()}"
    tmux = [args.tmux, "-L", socket, "-f", "/dev/null"]
    subprocess.run(tmux + ["new-session", "-d", "-s", "m", "-x", "200", "-y", "50",
                           "env PS1='$ ' sh"], check=True)
    try:
        def once(command):
            signal = f"{args.tmux} -L {socket} wait-for -S done"
            started = time.monotonic()
            subprocess.run(tmux + ["send-keys", "-t", "m", f"{command}; {signal}", "Enter"],
                           check=True)
            subprocess.run(tmux + ["wait-for", "done"], check=True)
            return time.monotonic() - started

        once("true")  # the shell's first prompt is drawn
        version = subprocess.run([args.tmux, "-V"], capture_output=True, text=True).stdout.strip()
        medians = {}
        for command in ["true", args.command]:
            medians[command] = statistics.median(once(command) for _ in range(args.repeat))
        base, full = medians["true"], medians[args.command]
        print(f"{version}: `true` {base * 1000:.1f} ms, `{args.command}` {full * 1000:.1f} ms "
              f"(median of {args.repeat}); the command itself: {(full - base) * 1000:.1f} ms")
    finally:
        subprocess.run(tmux + ["kill-server"], stderr=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
