#!/usr/bin/env python3
"""A fake `tmux` for server-level tests: scripted replies, every command logged.

Invocations understood (global flags `-u`, `-N` ignored; `-S <socket>` required,
so a test can never reach a real server through this):

  fake-tmux.py -u -S SOCK CMD ARGS...                one-shot command
  fake-tmux.py -u -N -S SOCK -C attach-session ...   control mode

Environment:
  FAKE_TMUX_SCENARIO  JSON scenario file (required)
  FAKE_TMUX_LOG       JSON-lines log, appended to (optional)
  FAKE_TMUX_EVENTS    path of a Unix datagram socket; each log record is also
                      sent there, so a test can wait on events (optional)

Scenario:
  {
    "oneshot": [                        first matching rule wins
      {"match": ["list-sessions", "-F"],    argv prefix (after global flags), or
       "regex": "^list-sessions",           regex searched in the argv joined by spaces
       "stdout": "$0\\n", "stderr": "", "exit": 0}
    ],
    "control": {
      "initial": ["%begin {t} {n} 0", "%end {t} {n} 0"],   optional; this is the default
      "after_attach": ["%session-changed $0 main"],         lines after the initial block
      "rules": [                        first matching rule wins
        {"regex": "^list-panes -a ",        searched in the exact line received
         "attach": 1,                       only on the Nth attach (count from the log)
         "reply": ["line", ...],            reply lines; null: no reply block at all
         "ok": true,                        %end (true) or %error (false)
         "before": ["%output %1 old\\015\\012"], lines emitted before the reply
         "after": ["%output %1 hi\\015\\012"],  lines emitted after the reply
         "once": false,                     used up after its first match
         "exit": false}                     then print %exit and quit
      In "before" and "after" lines, {g1}, {g2}… are the regex's groups. In
      a reply, {pane_pid} is the pid of the fake's parent (the server under
      test): a live process, as a real pane's is.
      ]
    }
  }

Pane output is the server's, not a client's: `%output` lines in "before" and
"after" go to every fake control client of the scenario that was not attached
with `-f …no-output…` (as tmux sends a pane's output to every client of its
session), the client that ran the command included; other lines go to that
client only. Clients find each other through sockets beside FAKE_TMUX_LOG.

A control command no rule matches gets a `%error` block saying
`fake-tmux: no rule for <line>`; a one-shot command gets that on stderr and
exit status 1. Log records: {"kind": "oneshot"|"attach"|"cmd"|"eof"|"exit",
"pid", "socket", "argv" (oneshot/attach), "line" and "args" (cmd: the line and
its words as tmux's parser would split them)}.
"""

import glob
import json
import os
import re
import select
import socket
import sys
import time

PID = os.getpid()


def load_scenario():
    path = os.environ.get("FAKE_TMUX_SCENARIO")
    if not path:
        sys.stderr.write("fake-tmux: FAKE_TMUX_SCENARIO is not set\n")
        sys.exit(2)
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def log(record):
    record = dict(record, pid=PID)
    data = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", "surrogateescape")
    path = os.environ.get("FAKE_TMUX_LOG")
    if path:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    events = os.environ.get("FAKE_TMUX_EVENTS")
    if events:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
                s.sendto(data, events)
        except OSError:
            pass  # nobody listening: the file log is the record


def attach_ordinal():
    """1 for the first control client this log has seen, 2 for the next..."""
    path = os.environ.get("FAKE_TMUX_LOG")
    if not path or not os.path.exists(path):
        return 1
    n = 1
    with open(path, "rb") as f:
        for raw in f:
            try:
                if json.loads(raw).get("kind") == "attach":
                    n += 1
            except ValueError:
                pass
    return n


def parse_globals(argv):
    """Splits tmux's global flags from the command; returns (socket, control, rest)."""
    sock, control, i = None, False, 0
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "--":
        flag = argv[i]
        if flag == "-S":
            sock = argv[i + 1]
            i += 2
            continue
        if flag in ("-L", "-f"):
            sys.stderr.write(f"fake-tmux: {flag} is not expected (tmux-mcp always uses -S)\n")
            sys.exit(2)
        for ch in flag[1:]:
            if ch == "C":
                control = True
            elif ch not in "uN2":
                sys.stderr.write(f"fake-tmux: unknown global flag -{ch}\n")
                sys.exit(2)
        i += 1
    if sock is None:
        sys.stderr.write("fake-tmux: no -S <socket>; refusing to guess a server\n")
        sys.exit(2)
    return sock, control, argv[i:]


def words(line):
    """Splits a command line the way tmux's parser does, for the common
    cases: single quotes (literal), double quotes and unquoted text with
    backslash escapes (\\ooo octal, \\n \\r \\t \\e, else the char itself).
    An unquoted `;` ending a word is a separate ";" token (a command separator)."""
    out, cur, have, i, n = [], [], False, 0, len(line)
    escapes = {"n": "\n", "r": "\r", "t": "\t", "e": "\x1b"}

    def escape(j):
        if j + 3 <= n and re.fullmatch(r"[0-7]{3}", line[j:j + 3]):
            return chr(int(line[j:j + 3], 8)), j + 3
        if j < n:
            return escapes.get(line[j], line[j]), j + 1
        return "\\", j

    while i < n:
        c = line[i]
        if c in " \t":
            if have:
                out.append("".join(cur))
                cur, have = [], False
            i += 1
        elif c == "'":
            end = line.find("'", i + 1)
            if end < 0:
                raise ValueError("unterminated single quote")
            cur.append(line[i + 1:end])
            have, i = True, end + 1
        elif c == '"':
            i += 1
            while i < n and line[i] != '"':
                if line[i] == "\\":
                    ch, i = escape(i + 1)
                    cur.append(ch)
                else:
                    cur.append(line[i])
                    i += 1
            if i >= n:
                raise ValueError("unterminated double quote")
            have, i = True, i + 1
        elif c == "\\":
            ch, i = escape(i + 1)
            cur.append(ch)
            have = True
        elif c == ";" and (i + 1 == n or line[i + 1] in " \t"):
            if have:
                out.append("".join(cur))
                cur, have = [], False
            out.append(";")
            i += 1
        else:
            cur.append(c)
            have, i = True, i + 1
    if have:
        out.append("".join(cur))
    return out


def oneshot(scenario, sock, argv):
    log({"kind": "oneshot", "socket": sock, "argv": argv})
    joined = " ".join(argv)
    for rule in scenario.get("oneshot", []):
        prefix = rule.get("match")
        if prefix is not None and argv[: len(prefix)] != prefix:
            continue
        if "regex" in rule and not re.search(rule["regex"], joined):
            continue
        sys.stdout.write(rule.get("stdout", ""))
        sys.stderr.write(rule.get("stderr", ""))
        sys.stdout.flush()
        sys.stderr.flush()
        return rule.get("exit", 0)
    sys.stderr.write(f"fake-tmux: no rule for {joined}\n")
    return 1


class Control:
    def __init__(self, scenario, sock, argv):
        self.spec = scenario.get("control", {})
        self.sock = sock
        self.argv = argv
        self.number = int(self.spec.get("first_number", 100))
        self.out = sys.stdout.buffer
        self.used = set()  # indexes of "once" rules already matched
        flags = argv[argv.index("-f") + 1] if "-f" in argv[:-1] else ""
        self.no_output = "no-output" in flags.split(",")
        self.peers = None  # datagram socket other clients send output to
        log_path = os.environ.get("FAKE_TMUX_LOG")
        if log_path:
            self.peer_dir = os.path.dirname(os.path.abspath(log_path))
            self.peer_path = os.path.join(self.peer_dir, f"fake-client-{PID}.sock")
            self.peers = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self.peers.bind(self.peer_path)

    def output(self, lines):
        """Scripted lines: pane output to every client that takes it."""
        own = [l for l in lines if not l.startswith("%output") or not self.no_output]
        self.emit(own)
        shared = [l for l in lines if l.startswith("%output")]
        if not shared or self.peers is None:
            return
        data = "\n".join(shared).encode("utf-8", "surrogateescape")
        for path in glob.glob(os.path.join(self.peer_dir, "fake-client-*.sock")):
            if path != self.peer_path:
                try:
                    self.peers.sendto(data, path)
                except OSError:
                    pass  # that client is gone

    def readline(self, fd):
        """The next command line (b"" at EOF), emitting peers' output while
        waiting for it."""
        while b"\n" not in self.pending:
            waiting = [fd] + ([self.peers] if self.peers is not None else [])
            ready, _, _ = select.select(waiting, [], [])
            if self.peers is not None and self.peers in ready:
                lines = self.peers.recv(1 << 20).decode("utf-8", "surrogateescape")
                if not self.no_output:
                    self.emit(lines.split("\n"))
            if fd in ready:
                data = os.read(fd, 1 << 16)
                if not data:
                    line, self.pending = self.pending, b""
                    return line
                self.pending += data
        line, _, self.pending = self.pending.partition(b"\n")
        return line + b"\n"

    def emit(self, lines):
        for line in lines:
            self.out.write(line.encode("utf-8", "surrogateescape") + b"\n")
        self.out.flush()

    def block(self, body, ok, flags):
        body = [line.replace("{pane_pid}", str(os.getppid())) for line in body]
        t, n = int(time.time()), self.number
        self.number += 1
        end = "%end" if ok else "%error"
        self.emit([f"%begin {t} {n} {flags}", *body, f"{end} {t} {n} {flags}"])

    def fill(self, line):
        return line.replace("{t}", str(int(time.time()))).replace("{n}", str(self.number))

    def run(self):
        ordinal = attach_ordinal()
        log({"kind": "attach", "socket": self.sock, "argv": self.argv, "attach": ordinal})
        initial = self.spec.get("initial")
        if initial is None:
            self.block([], True, 0)
        else:
            self.emit([self.fill(l) for l in initial])
            self.number += 1
        self.emit(self.spec.get("after_attach", []))
        self.pending = b""
        while True:
            raw = self.readline(sys.stdin.fileno())
            if not raw or raw in (b"\n", b"\r\n"):
                # EOF (or an empty line, which detaches a real client).
                log({"kind": "eof", "socket": self.sock, "empty_line": bool(raw)})
                self.emit(["%exit"])
                return 0
            line = raw.rstrip(b"\n").decode("utf-8", "surrogateescape")
            try:
                args = words(line)
            except ValueError as e:
                args = {"error": str(e)}
            log({"kind": "cmd", "socket": self.sock, "line": line, "args": args, "attach": ordinal})
            found = self.find(line, ordinal)
            if found is None:
                self.block([f"fake-tmux: no rule for {line}"], False, 1)
                continue
            rule, match = found
            self.output(groups(rule.get("before", []), match))
            reply = rule.get("reply", [])
            if reply is not None:
                self.block(reply, rule.get("ok", True), 1)
            self.output(groups(rule.get("after", []), match))
            if rule.get("exit"):
                log({"kind": "exit", "socket": self.sock})
                self.emit(["%exit"])
                return 0

    def find(self, line, ordinal):
        for index, rule in enumerate(self.spec.get("rules", [])):
            if "attach" in rule and rule["attach"] != ordinal:
                continue
            if index in self.used:
                continue
            match = re.search(rule["regex"], line)
            if match:
                if rule.get("once"):
                    self.used.add(index)
                return rule, match
        return None


def groups(lines, match):
    """Fills {g1}, {g2}… in scripted lines with the rule's regex groups."""
    out = []
    for line in lines:
        for i, group in enumerate(match.groups(), 1):
            line = line.replace("{g%d}" % i, group or "")
        out.append(line)
    return out


def main():
    scenario = load_scenario()
    sock, control, rest = parse_globals(sys.argv[1:])
    if control:
        if not rest or rest[0] != "attach-session":
            sys.stderr.write(f"fake-tmux: control mode expects attach-session, got {rest}\n")
            return 2
        return Control(scenario, sock, rest).run()
    return oneshot(scenario, sock, rest)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(0)
