#!/usr/bin/env python3
"""Record a tmux control-mode fixture from a real tmux, byte for byte.

Usage:
    scripts/record-fixture.py NAME [STEP ...]

Steps run in order after the control client's initial block:

    --send LINE        write LINE + "\\n" to the control client and wait for
                       one more reply block with flags 1 (so LINE must be one
                       simple command: no blank, comment or `;` lines)
    --wait-output TXT  wait until the decoded %output stream (all panes)
                       contains TXT (a Python string, encoded as UTF-8;
                       escapes such as \\n are not interpreted)
    --outside ARGS     run one-shot `tmux <ARGS>` on the same server (ARGS is
                       split with shlex); not recorded in the .in file

Then stdin is closed, the stream is read to EOF (tmux ends it with %exit) and
two files are written into fixtures/tmux/ (or --dir):

    NAME.cc   exactly the bytes tmux wrote to the control client's stdout
    NAME.in   the lines written to its stdin, one per line

The server is private and throwaway: `tmux -L rec-<pid>-<n> -f /dev/null`,
one session `work` at 80x24 running `env PS1='$ ' bash --norc --noprofile`,
and the control client is `tmux -u -L <socket> -C attach-session -t work
-f ignore-size`. The server is killed on every exit path. The default tmux
socket is never used.

Every wait is on a condition (a reply block, a text in the output, EOF)
with a deadline (--timeout, default 20 s); there are no fixed sleeps.

Python standard library only.
"""

import argparse
import os
import re
import shlex
import subprocess
import sys
import threading
import time

GUARD = re.compile(rb"^%(begin|end|error) (\d+) (\d+) (\d+)$")
OCTAL = re.compile(rb"\\([0-3][0-7][0-7])")


class Stream:
    """Collects the client's stdout and tracks blocks and decoded output."""

    def __init__(self, pipe):
        self.raw = bytearray()
        self.cond = threading.Condition()
        self.eof = False
        self.initial_done = False
        self.replies = 0  # closed flags-1 blocks
        self.output = bytearray()  # decoded %output data, all panes
        self._open = None  # guard of the open block
        self._partial = b""
        self._thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self._thread.start()

    def _read(self, pipe):
        while True:
            chunk = os.read(pipe.fileno(), 65536)
            with self.cond:
                if not chunk:
                    self.eof = True
                    self.cond.notify_all()
                    return
                self.raw += chunk
                data = self._partial + chunk
                *lines, self._partial = data.split(b"\n")
                for line in lines:
                    self._line(line)
                self.cond.notify_all()

    def _line(self, line):
        m = GUARD.match(line)
        if self._open is not None:
            if m and m.group(1) in (b"end", b"error") and m.groups()[1:] == self._open:
                flags = self._open[2]
                self._open = None
                if flags == b"0":
                    self.initial_done = True
                else:
                    self.replies += 1
            return
        if m and m.group(1) == b"begin":
            self._open = m.groups()[1:]
            return
        if line.startswith(b"%output "):
            parts = line.split(b" ", 2)
            data = parts[2] if len(parts) > 2 else b""
            self.output += OCTAL.sub(lambda d: bytes([int(d.group(1), 8)]), data)

    def wait(self, what, pred, timeout):
        deadline = time.monotonic() + timeout
        with self.cond:
            while not pred():
                left = deadline - time.monotonic()
                if left <= 0 or (self.eof and not pred()):
                    raise SystemExit(f"record-fixture: timed out or EOF waiting for {what}")
                self.cond.wait(left)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name")
    ap.add_argument("--dir", default=os.path.join(os.path.dirname(__file__), "..", "fixtures", "tmux"))
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--tmux", default="tmux")
    steps = []

    class Step(argparse.Action):
        def __call__(self, parser, namespace, values, option_string=None):
            steps.append((option_string, values))

    ap.add_argument("--send", action=Step)
    ap.add_argument("--wait-output", action=Step)
    ap.add_argument("--outside", action=Step)
    args = ap.parse_args()

    sock = f"rec-{os.getpid()}-{time.monotonic_ns()}"
    base = [args.tmux, "-L", sock, "-f", "/dev/null"]
    env = dict(os.environ)
    env.pop("TMUX", None)
    subprocess.run(
        base + ["new-session", "-d", "-s", "work", "-x", "80", "-y", "24",
                "env PS1='$ ' bash --norc --noprofile"],
        check=True, env=env,
    )
    socket_path = subprocess.run(
        base + ["display-message", "-p", "-t", "work", "#{socket_path}"],
        check=True, env=env, capture_output=True,
    ).stdout.decode().strip()
    client = None
    try:
        client = subprocess.Popen(
            [args.tmux, "-u", "-L", sock, "-C", "attach-session", "-t", "work", "-f", "ignore-size"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
        )
        stream = Stream(client.stdout)
        # tmux 3.3a reads stdin before the initial command has run: wait for it.
        stream.wait("the initial block", lambda: stream.initial_done, args.timeout)
        sent = []
        for opt, value in steps:
            if opt == "--send":
                line = value.encode()
                if b"\n" in line or not line.strip() or line.lstrip().startswith(b"#"):
                    raise SystemExit(f"record-fixture: --send needs one command, got {value!r}")
                want = stream.replies + 1
                client.stdin.write(line + b"\n")
                client.stdin.flush()
                sent.append(line)
                stream.wait(f"the reply to {value!r}", lambda: stream.replies >= want, args.timeout)
            elif opt == "--wait-output":
                needle = value.encode()
                stream.wait(f"output {value!r}", lambda: needle in stream.output, args.timeout)
            else:
                subprocess.run(base + shlex.split(value), check=True, env=env)
        client.stdin.close()
        stream.wait("EOF", lambda: stream.eof, args.timeout)
        client.wait(timeout=args.timeout)
        os.makedirs(args.dir, exist_ok=True)
        with open(os.path.join(args.dir, args.name + ".cc"), "wb") as f:
            f.write(bytes(stream.raw))
        with open(os.path.join(args.dir, args.name + ".in"), "wb") as f:
            f.write(b"".join(line + b"\n" for line in sent))
        print(f"record-fixture: wrote {args.name}.cc ({len(stream.raw)} bytes), {args.name}.in ({len(sent)} lines)")
    finally:
        if client is not None and client.poll() is None:
            client.kill()
            client.wait()
        subprocess.run(base + ["kill-server"], stderr=subprocess.DEVNULL, env=env)
        # tmux 3.3a leaves the socket file behind after kill-server.
        if socket_path and os.path.exists(socket_path):
            os.unlink(socket_path)


if __name__ == "__main__":
    sys.exit(main())
