#!/usr/bin/env python3
"""Smoke test of tmux-mcp with the official MCP Python SDK (`mcp` 2.3.0).

  python3 tests/sdk/sdk_smoke.py path/to/tmux-mcp

Starts a private tmux server (`tmux -L tmuxmcp-sdk-<pid>`, killed at the
end whatever happens), launches the server over stdio with LIBTMUX_SOCKET
pointing at it, and drives every tool once. The SDK checks each successful
result's structuredContent against the tool's outputSchema itself, and
raises when it does not conform; such a step fails here with the SDK's
message. Prints one line per step, then `N passed, N failed`; exits 1 on
any failure.
"""

import json
import os
import subprocess
import sys
import warnings

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

warnings.simplefilter("ignore")

SOCKET = f"tmuxmcp-sdk-{os.getpid()}"
STEP_TIMEOUT = 20  # seconds, for any one step
passed = 0
failed = 0


def tmux_env():
    env = dict(os.environ)
    env.pop("TMUX", None)
    env.pop("TMUX_PANE", None)
    return env


def tmux(*args, check=True):
    """Runs a command on the private server and returns its stdout."""
    out = subprocess.run(["tmux", "-L", SOCKET, "-f", "/dev/null", *args],
                         env=tmux_env(), capture_output=True, text=True, timeout=STEP_TIMEOUT)
    if check and out.returncode != 0:
        raise RuntimeError(f"tmux {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout


def report(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
    print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)
    return ok


def structured(result):
    """structuredContent, unwrapped from {"result": ...} for plain results."""
    content = result.structured_content
    if isinstance(content, dict) and list(content) == ["result"]:
        return content["result"]
    return content


class Steps:
    def __init__(self, client):
        self.client = client

    async def call(self, name, args, check=lambda value: None):
        """Calls a tool; the step passes when the SDK accepted the result (schema
        included), it is not an error, and `check(value)` returns None (else
        the returned text says what is wrong). Returns the value or None."""
        label = f"call {name}"
        try:
            with anyio.fail_after(STEP_TIMEOUT):
                result = await self.client.call_tool(name, args)
        except Exception as e:  # noqa: BLE001 - includes the SDK's outputSchema check
            report(label, False, f"{type(e).__name__}: {e}")
            return None
        if result.is_error:
            text = result.content[0].text if result.content else ""
            report(label, False, f"isError: {text}")
            return None
        value = structured(result)
        problem = check(value)
        report(label, problem is None, problem or "")
        return value if problem is None else None


def expect(cond, why):
    return None if cond else why


async def wait_channel(channel, waiter):
    """Waits (bounded) for a `tmux wait-for <channel>` started earlier."""
    try:
        with anyio.fail_after(STEP_TIMEOUT):
            code = await anyio.to_thread.run_sync(waiter.wait)
        return report(f"wait-for {channel}", code == 0, f"exit {code}")
    except TimeoutError:
        waiter.kill()
        waiter.wait()
        return report(f"wait-for {channel}", False, f"not signalled within {STEP_TIMEOUT}s")


async def run(binary):
    env = {"LIBTMUX_SOCKET": SOCKET, "LIBTMUX_TOOLSETS": "inspect,manage,execute,teardown"}
    if os.environ.get("TMUX_TMPDIR"):
        env["TMUX_TMPDIR"] = os.environ["TMUX_TMPDIR"]
    params = StdioServerParameters(command=binary, args=[], env=env)
    async with Client(params, mode="legacy", read_timeout_seconds=STEP_TIMEOUT, cache=None) as client:
        report("initialize", bool(client.protocol_version),
               f"protocol {client.protocol_version}, server "
               f"{client.server_info.name if client.server_info else '?'}")

        tools = (await client.list_tools()).tools
        missing = [t.name for t in tools if t.output_schema is None]
        with open(os.path.join(os.path.dirname(__file__), "..", "..", "protocol", "tools.json")) as f:
            expected = len(json.load(f))
        report("list tools", len(tools) == expected and not missing,
               f"{len(tools)} tools" + (f", without outputSchema: {missing}" if missing else ""))

        s = Steps(client)
        await s.call("get_server_info", {}, lambda v: expect(v["is_alive"], f"not alive: {v}"))
        await s.call("list_sessions", {},
                     lambda v: expect(any(x["session_name"] == "sdk" for x in v), f"no 'sdk': {v}"))
        session = await s.call("create_session", {"session_name": "sdk-made", "x": 100, "y": 25},
                               lambda v: expect(v["session_name"] == "sdk-made", f"got {v}"))
        if session is None:
            return
        pane = session["active_pane_id"]
        await s.call("get_session_info", {"session_name": "sdk-made"},
                     lambda v: expect(v["session_id"] == session["session_id"], f"got {v}"))

        # The waiter runs before the keys are sent; tmux also remembers a
        # channel signalled with nobody waiting, so either order is safe.
        waiter = subprocess.Popen(["tmux", "-L", SOCKET, "wait-for", "sdkdone"], env=tmux_env())
        try:
            sent = await s.call("send_keys", {"pane_id": pane,
                                              "keys": "echo sdk-$((40+2)); tmux wait-for -S sdkdone"})
            if sent is None or not await wait_channel("sdkdone", waiter):
                return
        finally:
            if waiter.poll() is None:
                waiter.kill()
                waiter.wait()

        await s.call("capture_pane", {"pane_id": pane},
                     lambda v: expect("sdk-42" in v.splitlines(), f"no 'sdk-42' line in {v!r}"))
        await s.call("list_panes", {"session_name": "sdk-made"},
                     lambda v: expect([p["pane_id"] for p in v] == [pane], f"got {v}"))
        await s.call("get_pane_info", {"pane_id": pane},
                     lambda v: expect(v["pane_id"] == pane, f"got {v}"))
        await s.call("display_message", {"pane_id": pane, "format_string": "w=#{pane_width}"},
                     lambda v: expect(v == "w=100", f"got {v!r}"))
        window = await s.call("create_window", {"session_name": "sdk-made", "window_name": "two"},
                              lambda v: expect(v["window_name"] == "two", f"got {v}"))
        await s.call("list_windows", {"session_name": "sdk-made"},
                     lambda v: expect(len(v) == 2, f"got {v}"))
        if window is not None:
            wid = window["window_id"]
            await s.call("get_window_info", {"window_id": wid},
                         lambda v: expect(v["window_id"] == wid, f"got {v}"))
            split = await s.call("split_window", {"window_id": wid, "direction": "right"},
                                 lambda v: expect(v["pane_id"].startswith("%"), f"got {v}"))
            if split is not None:
                await s.call("kill_pane", {"pane_id": split["pane_id"]})
            await s.call("kill_window", {"window_id": wid})
        await s.call("kill_session", {"session_name": "sdk-made"})
        left = tmux("list-sessions", "-F", "#{session_name}").split()
        report("tmux agrees", left == ["sdk"], f"sessions left: {left}")


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    binary = os.path.abspath(sys.argv[1])
    path = None
    try:
        tmux("new-session", "-d", "-s", "sdk", "-x", "120", "-y", "30")
        path = tmux("display-message", "-p", "#{socket_path}").strip()
        report("start private tmux", True, SOCKET)
        anyio.run(run, binary)
    except Exception as e:  # noqa: BLE001
        report("run", False, f"{type(e).__name__}: {e}")
    finally:
        tmux("kill-server", check=False)
        if path and os.path.basename(path) == SOCKET:
            try:
                os.unlink(path)  # tmux 3.3a can leave the socket file behind
            except FileNotFoundError:
                pass
    print(f"{passed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
