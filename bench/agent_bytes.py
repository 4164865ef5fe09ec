#!/usr/bin/env python3
"""agent_bytes.py - the bytes an agent's model reads, server against server.

Runs the same scripted agent work against two (or more) MCP servers over
stdio and counts the text a client hands the model: the catalog (name +
description + inputSchema of every listed tool, compact JSON), the server's
instructions, and each tool result (its text content; the compact JSON of
structuredContent only when a result has no text). Python 3.10+, stdlib only.

    python3 bench/agent_bytes.py --server ref=libtmux-mcp --server ours=target/release/tmux-mcp

A server is LABEL=COMMAND (split with shlex). The first one is the
baseline of the ratio column. Each server gets its own private tmux server
(`tmux -L agentbytes_<label>_<pid> -f /dev/null`, sh panes) through
LIBTMUX_SOCKET, with TMUX and TMUX_PANE removed; both are killed at the end.

The work, in order (ids come from the tmux CLI, not from the results, so
every server gets the same calls):
  create_session   a session 'work'
  failing_build    run_command: 300 lines of build output, an error, exit 1
  short_command    run_command: one line of output
  split_server     split_window, send_keys a loopback HTTP server,
                   wait_for_text until it listens
  look_screen      capture_pane of the first pane
  list_sessions    list_sessions
  list_panes       list_panes of the session
  snapshot         snapshot_pane of the server pane
  capture_since    capture_since on the server pane, three HTTP requests
                   to it, capture_since again with the cursor
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

BUILD = (
    "seq -f 'CC src/unit_%g.o' 1 300; "
    "echo 'src/main.c:42:7: error: expected ; before }'; false"
)
SHORT = "echo hello from the agent"
ORIENTATION = "orientation (list_sessions + list_panes)"
ORIENTATION_RATIO = 0.6
CATALOG_BOUND = 24_000
SERVE = "python3 -m http.server 0 --bind 127.0.0.1"


def compact(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def size(text: str) -> int:
    return len(text.encode("utf-8"))


class Tmux:
    """A private tmux server driven through the CLI (never the default one)."""

    def __init__(self, label: str):
        self.socket = f"agentbytes_{label}_{os.getpid()}"

    def __call__(self, *args: str) -> str:
        out = subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True, text=True, timeout=10, check=True,
        )
        return out.stdout

    def start(self):
        self("new-session", "-d", "-s", "base", "-x", "200", "-y", "50", "sh")
        self("set-option", "-g", "default-shell", "/bin/sh")

    def pane_of(self, target: str) -> str:
        return self("display-message", "-p", "-t", target, "#{pane_id}").strip()

    def wait_for(self, pane: str, text: str, timeout: float = 10.0):
        """Polls the screen (harness side, not counted) until text shows."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self("capture-pane", "-p", "-t", pane):
                return
            time.sleep(0.05)
        raise TimeoutError(f"{text!r} never showed in {pane}")

    def kill(self):
        subprocess.run(["tmux", "-L", self.socket, "kill-server"],
                       capture_output=True, timeout=10)
        path = f"{os.environ.get('TMUX_TMPDIR', '/tmp')}/tmux-{os.getuid()}/{self.socket}"
        if os.path.exists(path):
            os.unlink(path)


class Client:
    """Newline-delimited JSON-RPC over a child's stdin/stdout."""

    def __init__(self, argv: list[str], env: dict, log):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=log, env=env)
        self.replies: queue.Queue = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "id" in msg and ("result" in msg or "error" in msg):
                self.replies.put(msg)

    def send(self, obj: dict):
        self.proc.stdin.write((compact(obj) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method: str, params: dict, timeout: float = 60.0) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            msg = self.replies.get(timeout=max(0.0, deadline - time.monotonic()))
            if msg["id"] == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait(timeout=5)


def model_text(result: dict) -> str:
    """What a client hands the model for one tool result."""
    texts = [b.get("text", "") for b in result.get("content", []) if b.get("type") == "text"]
    if texts:
        return "\n".join(texts)
    if "structuredContent" in result:
        return compact(result["structuredContent"])
    return ""


class Session:
    """One server, its tmux server, and the bytes of each task."""

    def __init__(self, label: str, command: str, logdir: str, toolsets: str | None):
        words = shlex.split(command)
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        if toolsets:
            env["LIBTMUX_TOOLSETS"] = toolsets
        while words and "=" in words[0] and not words[0].startswith("/"):
            key, value = words.pop(0).split("=", 1)
            env[key] = value
        self.tmux = Tmux(label)
        self.tmux.start()
        env["LIBTMUX_SOCKET"] = self.tmux.socket
        self.log = open(os.path.join(logdir, f"{label}.stderr"), "wb")
        self.client = Client(words, env, self.log)
        self.tasks: dict[str, int] = {}
        self.errors: list[str] = []

    def call(self, task: str, tool: str, args: dict) -> dict:
        result = self.client.request("tools/call", {"name": tool, "arguments": args})
        self.tasks[task] = self.tasks.get(task, 0) + size(model_text(result))
        if result.get("isError"):
            self.errors.append(f"{task}/{tool}: {model_text(result)[:200]}")
        return result

    def handshake(self):
        init = self.client.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "agent_bytes", "version": "1"},
        })
        self.client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.instructions = size(init.get("instructions") or "")
        tools, cursor = [], None
        while True:
            page = self.client.request("tools/list", {"cursor": cursor} if cursor else {})
            tools += page["tools"]
            cursor = page.get("nextCursor")
            if not cursor:
                break
        self.tool_count = len(tools)
        self.catalog = sum(size(compact({k: t.get(k) for k in ("name", "description", "inputSchema")}))
                           for t in tools)

    def work(self):
        self.call("create_session", "create_session", {"session_name": "work"})
        first = self.tmux.pane_of("work:")
        self.call("failing_build", "run_command", {"command": BUILD, "pane_id": first})
        self.call("short_command", "run_command", {"command": SHORT, "pane_id": first})
        self.call("split_server", "split_window", {"pane_id": first})
        server = self.tmux("list-panes", "-t", "work:", "-F", "#{pane_id}").split()[-1]
        self.call("split_server", "send_keys", {"keys": SERVE, "pane_id": server})
        self.call("split_server", "wait_for_text",
                  {"patterns": ["Serving HTTP"], "pane_id": server, "timeout": 15})
        self.call("look_screen", "capture_pane", {"pane_id": first})
        self.call("list_sessions", "list_sessions", {})
        self.call("list_panes", "list_panes", {"session_name": "work"})
        self.call("snapshot", "snapshot_pane", {"pane_id": server})
        self.follow(server)

    def follow(self, pane: str):
        first = self.call("capture_since", "capture_since", {"pane_id": pane})
        cursor = (first.get("structuredContent") or {}).get("cursor")
        screen = self.tmux("capture-pane", "-p", "-t", pane)
        port = screen.split(" port ", 1)[1].split()[0]
        for path in ("/", "/?a", "/?b"):
            urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5).read()
        self.tmux.wait_for(pane, '"GET /?b HTTP')
        self.call("capture_since", "capture_since", {"pane_id": pane, "cursor": cursor})

    def close(self):
        self.client.close()
        self.tmux.kill()
        self.log.close()


def table(labels: list[str], rows: list[tuple[str, list[int]]]) -> str:
    head = ["bytes the model reads", *labels] + [f"{l} / {labels[0]}" for l in labels[1:]]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for name, values in rows:
        ratios = [f"{v / values[0]:.3f}" if values[0] else "-" for v in values[1:]]
        lines.append("| " + " | ".join([name, *(f"{v:,}" for v in values), *ratios]) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", action="append", required=True, metavar="LABEL=COMMAND")
    parser.add_argument("--toolsets", help="LIBTMUX_TOOLSETS for every server "
                        "(e.g. inspect,manage,execute,teardown); default: the servers' own")
    args = parser.parse_args()
    if len(args.server) < 2:
        parser.error("give at least two --server LABEL=COMMAND")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    logdir = tempfile.mkdtemp(prefix="agent_bytes_")
    sessions: list[Session] = []
    try:
        for spec in args.server:
            label, command = spec.split("=", 1)
            session = Session(label, command, logdir, args.toolsets)
            sessions.append(session)
            session.handshake()
            session.work()
    finally:
        for session in sessions:
            session.close()
    labels = [spec.split("=", 1)[0] for spec in args.server]
    tasks = list(sessions[0].tasks)
    rows = [("catalog (name + description + inputSchema)", [s.catalog for s in sessions])]
    rows += [(t, [s.tasks.get(t, 0) for s in sessions]) for t in tasks]
    rows.append((ORIENTATION, [sum(s.tasks.get(t, 0) for t in ("list_sessions", "list_panes"))
                              for s in sessions]))
    rows.append(("all tasks", [sum(s.tasks.values()) for s in sessions]))
    rows.append(("catalog + tasks", [s.catalog + sum(s.tasks.values()) for s in sessions]))
    rows.append(("instructions (initialize)", [s.instructions for s in sessions]))
    rows.append(("catalog + instructions + tasks",
                 [s.catalog + s.instructions + sum(s.tasks.values()) for s in sessions]))
    print("# agent_bytes  tools listed: " + ", ".join(f"{l}={s.tool_count}" for l, s in zip(labels, sessions)))
    print(table(labels, rows))
    print(f"bounds (issue 20.3): {ORIENTATION} at most {ORIENTATION_RATIO} of the "
          f"first server's; catalog at most {CATALOG_BOUND:,} bytes")
    base = dict(rows)[ORIENTATION][0]
    for label, session, value in zip(labels, sessions, dict(rows)[ORIENTATION]):
        if label == labels[0]:
            continue
        verdicts = [f"orientation {value / base:.3f}" if base else "orientation -",
                    "ok" if base and value <= ORIENTATION_RATIO * base else "OVER",
                    f"catalog {session.catalog:,}",
                    "ok" if session.catalog <= CATALOG_BOUND else "OVER"]
        print(f"  {label}: " + " ".join(verdicts))
    failed = False
    for label, session in zip(labels, sessions):
        for error in session.errors:
            failed = True
            print(f"error [{label}] {error}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
