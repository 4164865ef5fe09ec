#!/usr/bin/env python3
"""Each kind of watch in flight while a person does one thing to its pane
through the tmux CLI: how soon, and how, does the call end?

    python3 bench/watch_gone.py target/release/tmux-mcp [WATCHES [ACTIONS]]

WATCHES and ACTIONS are comma-separated (default: all). One private tmux
server per case (`tmux -L wg-…`), killed at the end; the watch's own
timeout is 8 s, so a line near 7.5 s is a watch that missed its pane's end
(the figure is measured from the person's action). Prints one line per
case: the watch, the action, the seconds, and the start of the result.
"""
import json, os, subprocess, sys, time, itertools

SERVER = sys.argv[1]
ACTIONS = ["kill-pane", "respawn-pane", "kill-window", "kill-session", "swap-across", "break-pane", "move-window", "exit"]
WATCHES = ["wait_for_text", "wait_for_state", "wait_for_attention", "wait_for_command", "capture_since"]
if len(sys.argv) > 2: WATCHES = sys.argv[2].split(",")
if len(sys.argv) > 3: ACTIONS = sys.argv[3].split(",")

class Srv:
    def __init__(self, sock):
        env = dict(os.environ, LIBTMUX_SOCKET=sock, FASTMCP_LOG_LEVEL="ERROR")
        env.pop("TMUX", None); env.pop("TMUX_PANE", None)
        self.p = subprocess.Popen([SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
        self.i = 0
        self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "wg", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    def send(self, m):
        self.p.stdin.write(json.dumps(m) + "\n"); self.p.stdin.flush()
    def start(self, method, params):
        self.i += 1; self.send({"jsonrpc": "2.0", "id": self.i, "method": method, "params": params}); return self.i
    def wait(self, i):
        while True:
            m = json.loads(self.p.stdout.readline())
            if m.get("id") == i: return m
    def rpc(self, method, params): return self.wait(self.start(method, params))
    def call(self, name, args): return self.rpc("tools/call", {"name": name, "arguments": args})["result"]
    def close(self):
        self.p.stdin.close(); self.p.wait(timeout=10)

def text(res):
    sc = res.get("structuredContent")
    if sc is not None:
        s = json.dumps(sc)
    else:
        s = res["content"][0]["text"]
    return ("ERR " if res.get("isError") else "") + s[:600]

def one(watch, action):
    sock = f"wg-{os.getpid()}-{time.monotonic_ns()%100000}"
    T = ["tmux", "-L", sock, "-f", "/dev/null"]
    sh = "env PS1='$ ' bash --norc --noprofile"
    subprocess.run(T + ["new-session", "-d", "-s", "keep", sh], check=True)
    subprocess.run(T + ["set", "-g", "exit-empty", "off"], check=True)
    subprocess.run(T + ["new-session", "-d", "-s", "a", sh], check=True)
    subprocess.run(T + ["split-window", "-d", "-t", "a", sh], check=True)
    subprocess.run(T + ["new-session", "-d", "-s", "b", sh], check=True)
    pane = subprocess.run(T + ["display", "-p", "-t", "a:0.0", "#{pane_id}"], capture_output=True, text=True).stdout.strip()
    other = subprocess.run(T + ["display", "-p", "-t", "b:0.0", "#{pane_id}"], capture_output=True, text=True).stdout.strip()
    time.sleep(0.3)
    s = Srv(sock)
    cursor = None
    if watch == "wait_for_text":
        rid = s.start("tools/call", {"name": "wait_for_text", "arguments": {"pane_id": pane, "patterns": ["NEVER-THERE"], "timeout": 8}})
    elif watch == "wait_for_state":
        rid = s.start("tools/call", {"name": "wait_for_state", "arguments": {"pane_id": pane, "states": ["input"], "timeout": 8}})
    elif watch == "wait_for_attention":
        rid = s.start("tools/call", {"name": "wait_for_attention", "arguments": {"pane_ids": [pane], "reasons": ["bell"], "timeout": 8}})
    elif watch == "wait_for_command":
        r = s.call("run_command", {"pane_id": pane, "command": "echo started; sleep 30", "background": True})
        cid = r.get("structuredContent", {}).get("command_id")
        rid = s.start("tools/call", {"name": "wait_for_command", "arguments": {"command_id": cid, "timeout": 8}})
    elif watch == "capture_since":
        r = s.call("run_command", {"pane_id": pane, "command": "echo before-action"})
        cursor = r.get("structuredContent", {}).get("cursor")
        subprocess.run(T + ["send-keys", "-t", pane, "-l", "echo after-action-1\n"])
        rid = None
    time.sleep(0.5)
    t0 = time.monotonic()
    act = {
        "kill-pane": ["kill-pane", "-t", pane],
        "respawn-pane": ["respawn-pane", "-k", "-t", pane, sh],
        "kill-window": ["kill-window", "-t", pane],
        "kill-session": ["kill-session", "-t", "a"],
        "swap-across": ["swap-pane", "-s", pane, "-t", other],
        "break-pane": ["break-pane", "-d", "-s", pane],
        "move-window": ["move-window", "-s", "a:0", "-t", "b:"],
        "exit": ["send-keys", "-t", pane, "-l", "exit\n"],
    }[action]
    subprocess.run(T + act, capture_output=True)
    if rid is None:
        time.sleep(0.3)
        res = s.call("capture_since", {"pane_id": pane, "cursor": cursor})
    else:
        res = s.wait(rid)["result"]
    dt = time.monotonic() - t0
    print(f"{watch:19} {action:13} {dt:6.2f}s  {text(res)}", flush=True)
    s.close()
    subprocess.run(T + ["kill-server"], capture_output=True)

for w, a in itertools.product(WATCHES, ACTIONS):
    try: one(w, a)
    except Exception as e: print(f"{w:19} {a:13} EXC {e!r}", flush=True)
