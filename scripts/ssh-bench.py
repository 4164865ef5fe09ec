#!/usr/bin/env python3
"""Remote tmux over ssh against a local socket: round trips, wait latency, ssh processes.

Starts a private sshd on 127.0.0.1 (host key, authorized key and configs in a
temporary directory; ~/.ssh is never read) and a private tmux server, both
killed at the end, then the tmux-mcp binary with TMUX_MCP_HOSTS=loop=loop.
The same tmux server is reached two ways: `socket_name: NAME` (a local
socket) and `socket_name: "loop:NAME"` (over ssh to 127.0.0.1). Prints:

- the median round trip of `capture_pane` and `send_keys`, local and over
  ssh, and their ratio (the bound is 3x);
- how long after the pane printed a marker a `wait_for_text` answered
  (the pane writes its clock to a file just before printing);
- how many ssh processes 20 calls started (the wrapper logs each one).

    scripts/ssh-bench.py [--bin target/release/tmux-mcp] [--repeat 200] [--waits 20]
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

SSHD_CONFIG = """Port {port}
ListenAddress 127.0.0.1
HostKey {d}/host_key
AuthorizedKeysFile {d}/authorized_keys
PidFile none
UsePAM no
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
SetEnv SHLVL=1 "PATH={path}"
LogLevel ERROR
"""

SSH_CONFIG = """Host loop
  HostName 127.0.0.1
  Port {port}
  User {user}
  IdentityFile {d}/user_key
  IdentitiesOnly yes
  UserKnownHostsFile {d}/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking accept-new
"""

WRAPPER = """#!/bin/sh
printf '%s\\n' "$*" >> {d}/calls.log
exec ssh -F {d}/ssh_config "$@"
"""


class Mcp:
    """The MCP server on stdio: answers and progress notifications, timestamped."""

    def __init__(self, argv, env):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, text=True)
        self.answers, self.progress = {}, {}
        self.arrived = threading.Condition()
        self.next_id = 0
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.proc.stdout:
            message = json.loads(line)
            now = time.time_ns()
            with self.arrived:
                if "id" in message:
                    self.answers[message["id"]] = (now, message)
                elif message.get("method") == "notifications/progress":
                    self.progress.setdefault(message["params"]["progressToken"], now)
                self.arrived.notify_all()

    def send(self, method, params, notify=False):
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if notify:
            self.proc.stdin.write(json.dumps(message) + "\n")
            self.proc.stdin.flush()
            return None
        self.next_id += 1
        message["id"] = self.next_id
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        return self.next_id

    def wait(self, test, bound=30):
        with self.arrived:
            if not self.arrived.wait_for(test, bound):
                sys.exit(f"nothing arrived within {bound} s")

    def answer(self, ident):
        self.wait(lambda: ident in self.answers)
        return self.answers[ident]

    def call(self, tool, args, token=None):
        params = {"name": tool, "arguments": args}
        if token is not None:
            params["_meta"] = {"progressToken": token}
        return self.send("tools/call", params)

    def timed(self, tool, args):
        started = time.time_ns()
        _, message = self.answer(self.call(tool, args))
        if message.get("result", {}).get("isError"):
            sys.exit(f"{tool} failed: {message}")
        return (time.time_ns() - started) / 1e6

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(10)


def start_sshd(d):
    os.makedirs("/run/sshd", exist_ok=True)
    for key in ("host_key", "user_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{d}/{key}"],
                       check=True)
    shutil.copy(f"{d}/user_key.pub", f"{d}/authorized_keys")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    user = subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip()
    with open(f"{d}/sshd_config", "w") as f:
        f.write(SSHD_CONFIG.format(port=port, d=d, path=os.environ["PATH"]))
    with open(f"{d}/ssh_config", "w") as f:
        f.write(SSH_CONFIG.format(port=port, d=d, user=user))
    with open(f"{d}/ssh", "w") as f:
        f.write(WRAPPER.format(d=d))
    os.chmod(f"{d}/ssh", 0o755)
    sshd = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", f"{d}/sshd_config"],
                            stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Ready once a connection is accepted (bounded).
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), 0.1).close()
            return sshd
        except OSError:
            time.sleep(0.05)
    sys.exit("sshd did not listen")


def ssh_calls(d):
    try:
        with open(f"{d}/calls.log") as f:
            return len(f.readlines())
    except FileNotFoundError:
        return 0


def round_trips(mcp, sockets, pane, repeat):
    figures = {}
    for where, sock in sockets.items():
        for tool, args in (("capture_pane", {"pane_id": pane}),
                           ("send_keys", {"pane_id": pane, "keys": "x", "enter": False,
                                          "literal": True})):
            args = dict(args, socket_name=sock)
            mcp.timed(tool, args)  # the first call attaches
            figures[(tool, where)] = statistics.median(
                mcp.timed(tool, args) for _ in range(repeat))
        mcp.timed("send_keys", {"pane_id": pane, "keys": "C-u", "enter": False,
                                "socket_name": sock})
    return figures


def wait_lag(mcp, tmux, sock, pane, d, i):
    """How long after the pane printed a marker a wait on it answered (ms)."""
    tag = "S" if ":" in sock else "L"
    marker = f"MARK{i}{tag}X{os.getpid()}"
    token = f"w{sock}{i}"
    ident = mcp.call("wait_for_text", {"pane_id": pane, "socket_name": sock,
                                       "patterns": [marker], "timeout": 20}, token)
    mcp.wait(lambda: token in mcp.progress)  # armed
    clock = f"{d}/clock"
    # The pane stamps the clock, then prints the marker (split, so the typed
    # command line itself does not match).
    line = f"date +%s%N > {clock}; echo MARK{i}{tag}X''{os.getpid()}"
    subprocess.run(tmux + ["send-keys", "-t", pane, line, "Enter"], check=True)
    answered, message = mcp.answer(ident)
    if not message["result"]["structuredContent"]["found"]:
        sys.exit(f"wait {i} did not find its marker: {message}")
    with open(clock) as f:
        printed = int(f.read().strip())
    return (answered - printed) / 1e6


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="target/release/tmux-mcp")
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--waits", type=int, default=20)
    args = parser.parse_args()
    d = tempfile.mkdtemp(prefix="ssh-bench-")
    name = f"ssh-bench-{os.getpid()}"
    tmux = ["tmux", "-L", name, "-f", "/dev/null"]
    sshd = start_sshd(d)
    mcp = None
    try:
        subprocess.run(tmux + ["new-session", "-d", "-s", "main", "-x", "120", "-y", "40",
                               "env PS1='$ ' sh"], check=True)
        pane = subprocess.run(tmux + ["display", "-p", "-t", "main", "#{pane_id}"],
                              capture_output=True, text=True, check=True).stdout.strip()
        env = dict(os.environ, TMUX_MCP_HOSTS="loop=loop", TMUX_MCP_SSH=f"{d}/ssh",
                   LIBTMUX_SOCKET=name, FASTMCP_LOG_LEVEL="WARNING")
        env.pop("TMUX", None)
        mcp = Mcp([args.bin], env)
        mcp.answer(mcp.send("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                           "clientInfo": {"name": "ssh-bench", "version": "0"}}))
        mcp.send("notifications/initialized", {}, notify=True)
        sockets = {"local": name, "ssh": f"loop:{name}"}
        _, version = mcp.answer(mcp.call("get_server_info", {"socket_name": sockets["ssh"]}))
        remote_version = version["result"]["structuredContent"]["version"]

        figures = round_trips(mcp, sockets, pane, args.repeat)
        # Local and ssh waits take turns, so load on the machine hits both.
        lags = {where: [] for where in sockets}
        for i in range(args.waits):
            for where, sock in sockets.items():
                lags[where].append(wait_lag(mcp, tmux, sock, pane, d, i))

        before = ssh_calls(d)
        for i in range(20):
            tool, call_args = [("capture_pane", {"pane_id": pane}),
                               ("send_keys", {"pane_id": pane, "keys": "", "enter": False}),
                               ("list_panes", {}),
                               ("get_pane_info", {"pane_id": pane})][i % 4]
            mcp.timed(tool, dict(call_args, socket_name=sockets["ssh"]))
        started = ssh_calls(d) - before

        print(f"# ssh-bench  tmux {remote_version} (remote side)  repeat={args.repeat}  "
              f"waits={args.waits}  cpus={os.cpu_count()}")
        print("| call | local socket (ms) | over ssh (ms) | ssh / local |")
        print("|---|---:|---:|---:|")
        for tool in ("capture_pane", "send_keys"):
            local, remote = figures[(tool, "local")], figures[(tool, "ssh")]
            print(f"| {tool} | {local:.3f} | {remote:.3f} | {remote / local:.2f}x |")
        print("| wait answered after the output (median / max) | "
              f"{statistics.median(lags['local']):.2f} / {max(lags['local']):.2f} | "
              f"{statistics.median(lags['ssh']):.2f} / {max(lags['ssh']):.2f} | |")
        print(f"ssh processes started by 20 calls over ssh: {started}")
    finally:
        if mcp is not None:
            mcp.close()
        subprocess.run(tmux + ["kill-server"], capture_output=True)
        sshd.kill()
        sshd.wait()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
