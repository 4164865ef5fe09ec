#!/usr/bin/env python3
"""Smoke test of tmux-mcp with the official MCP Python SDK (`mcp` 2.3.0).

  python3 tests/sdk/sdk_smoke.py path/to/tmux-mcp

Starts a private tmux server (`tmux -L tmuxmcp-sdk-<pid>`, killed at the
end whatever happens), launches the server over stdio with LIBTMUX_SOCKET
pointing at it, and calls every tool of protocol/tools.json at least once
(in a sensible order: create, use, kill; kill_server last, on a second
private server), failing with the names of any tool left out. The SDK
checks each successful result's structuredContent against the tool's
outputSchema itself, and raises when it does not conform; such a step
fails here with the SDK's message. Waits are event-driven (tmux wait-for
channels, wait_for_text's 'armed' progress), never sleeps. Also lists and
reads every resource template, lists and gets every prompt, and asks for
one completion. Panes run `bash --noprofile --norc`. Prints one line per
step, then `N passed, N failed`; exits 1 on any failure.
"""

import base64
import json
import os
import subprocess
import sys
import tempfile
import urllib.parse
import warnings

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import ResourceTemplateReference

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
        self.called = set()

    async def call(self, name, args, check=lambda value: None):
        """Calls a tool; the step passes when the SDK accepted the result (schema
        included), it is not an error, and `check(value)` returns None (else
        the returned text says what is wrong). Returns the value or None."""
        label = f"call {name}"
        self.called.add(name)
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


async def picture(s, pane):
    """snapshot_pane(format="png"): one PNG image the SDK accepts (no
    outputSchema to check it against) and a one-line caption."""
    label = "call snapshot_pane format=png"
    s.called.add("snapshot_pane")
    try:
        with anyio.fail_after(STEP_TIMEOUT):
            result = await s.client.call_tool("snapshot_pane", {"pane_id": pane, "format": "png"})
    except Exception as e:  # noqa: BLE001 - includes the SDK's outputSchema check
        return report(label, False, f"{type(e).__name__}: {e}")
    images = [c for c in result.content if getattr(c, "type", None) == "image"]
    image = images[0] if images else None
    # The SDK names fields in snake case (2.x) or as on the wire (1.x).
    mime = getattr(image, "mime_type", None) or getattr(image, "mimeType", None)
    png = base64.b64decode(image.data)[:8] if image is not None else b""
    ok = (not result.is_error and len(images) == 1 and mime == "image/png"
          and png == b"\x89PNG\r\n\x1a\n" and result.structured_content is None)
    return report(label, ok, "" if ok else f"content {[c.type for c in result.content]}, "
                  f"structured {result.structured_content!r}, isError {result.is_error}")


def expect(cond, why):
    return None if cond else why


async def wait_channel(channel, waiter, pane=None):
    """Waits (bounded) for a `tmux wait-for <channel>` started earlier."""
    try:
        with anyio.fail_after(STEP_TIMEOUT):
            code = await anyio.to_thread.run_sync(waiter.wait, abandon_on_cancel=True)
        return report(f"wait-for {channel}", code == 0, f"exit {code}")
    except TimeoutError:
        waiter.kill()
        waiter.wait()
        screen = tmux("capture-pane", "-p", "-t", pane, check=False).strip() if pane else ""
        return report(f"wait-for {channel}", False, f"not signalled within {STEP_TIMEOUT}s"
                      + (f"; pane {pane} shows {screen!r}" if pane else ""))


def catalog():
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "protocol", "tools.json")) as f:
        return [t["name"] for t in json.load(f)]


def pct(text):
    return urllib.parse.quote(text, safe="")


async def step(label, make, check=lambda value: None):
    """A non-tool request through the SDK: passes when `make()` returns
    (the SDK validated the result) and `check(value)` returns None."""
    try:
        with anyio.fail_after(STEP_TIMEOUT):
            value = await make()
    except Exception as e:  # noqa: BLE001
        report(label, False, f"{type(e).__name__}: {e}")
        return None
    problem = check(value)
    report(label, problem is None, problem or "")
    return value if problem is None else None


async def signalled(s, name, args, channel):
    """Calls a tool that should make `tmux wait-for -S <channel>` happen, and
    waits for that signal (events, not sleeps)."""
    waiter = subprocess.Popen(["tmux", "-L", SOCKET, "wait-for", channel], env=tmux_env())
    try:
        value = await s.call(name, args)
        if value is None:
            return None
        return value if await wait_channel(channel, waiter, args.get("pane_id")) else None
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.wait()


async def run(binary):
    env = {"LIBTMUX_SOCKET": SOCKET, "LIBTMUX_TOOLSETS": "inspect,manage,execute,teardown"}
    if os.environ.get("TMUX_TMPDIR"):
        env["TMUX_TMPDIR"] = os.environ["TMUX_TMPDIR"]
    params = StdioServerParameters(command=binary, args=[], env=env)
    expected = catalog()
    async with Client(params, mode="legacy", read_timeout_seconds=STEP_TIMEOUT, cache=None) as client:
        report("initialize", bool(client.protocol_version),
               f"protocol {client.protocol_version}, server "
               f"{client.server_info.name if client.server_info else '?'}")

        tools = (await client.list_tools()).tools
        # snapshot_pane's picture is an image, which the SDK refuses from a
        # tool with an outputSchema: it declares none.
        missing = [t.name for t in tools if t.output_schema is None and t.name != "snapshot_pane"]
        names = sorted(t.name for t in tools)
        report("list tools", names == sorted(expected) and not missing,
               f"{len(tools)} tools" + (f", without outputSchema: {missing}" if missing else "")
               + (f", differs from protocol/tools.json: {sorted(set(names) ^ set(expected))}"
                  if names != sorted(expected) else ""))

        s = Steps(client)
        try:
            await scenario(s, client)
        finally:
            left = sorted(set(expected) - s.called)
            report("every tool called", not left,
                   f"{len(s.called & set(expected))}/{len(expected)}"
                   + (f", not exercised: {', '.join(left)}" if left else ""))


async def scenario(s, client):
    # --- inspect the server and create the things to work on ---
    await s.call("get_server_info", {}, lambda v: expect(v["is_alive"], f"not alive: {v}"))
    await s.call("list_servers", {},
                 lambda v: expect(any(x.get("socket_name") == SOCKET for x in v), f"no {SOCKET}: {v}"))
    await s.call("list_sessions", {},
                 lambda v: expect(any(x["session_name"] == "sdk" for x in v), f"no 'sdk': {v}"))
    # A shell drops keys typed before it is ready: its prompt signals a
    # channel (tmux remembers the signal if nobody waits yet), and the first
    # keys go after that.
    ready = subprocess.Popen(["tmux", "-L", SOCKET, "wait-for", "sdkready"], env=tmux_env())
    try:
        session = await s.call("create_session", {
            "session_name": "sdk-made", "x": 100, "y": 25,
            "environment": {"PROMPT_COMMAND": "tmux wait-for -S sdkready"}},
            lambda v: expect(v["session_name"] == "sdk-made", f"got {v}"))
        if session is None or not await wait_channel("sdkready", ready, session["active_pane_id"]):
            return
    finally:
        if ready.poll() is None:
            ready.kill()
            ready.wait()
    pane = session["active_pane_id"]
    await s.call("get_session_info", {"session_name": "sdk-made"},
                 lambda v: expect(v["session_id"] == session["session_id"], f"got {v}"))
    await s.call("rename_session", {"session_name": "sdk-made", "new_name": "sdk-main"},
                 lambda v: expect(v["session_name"] == "sdk-main", f"got {v}"))
    sname = "sdk-main"

    # --- input and output in the first pane ---
    if await signalled(s, "send_keys", {"pane_id": pane,
                                        "keys": "echo sdk-$((40+2)); tmux wait-for -S sdkdone"},
                       "sdkdone") is None:
        return
    await s.call("capture_pane", {"pane_id": pane},
                 lambda v: expect("sdk-42" in v.splitlines(), f"no 'sdk-42' line in {v!r}"))
    await s.call("snapshot_pane", {"pane_id": pane},
                 lambda v: expect(isinstance(v, dict), f"got {v!r}"))
    await picture(s, pane)
    await s.call("search_panes", {"pattern": "sdk-42", "session_name": sname},
                 lambda v: expect("sdk-42" in json.dumps(v), f"no match in {v}"))
    await s.call("list_panes", {"session_name": sname},
                 lambda v: expect([p["pane_id"] for p in v] == [pane], f"got {v}"))
    await s.call("get_pane_info", {"pane_id": pane},
                 lambda v: expect(v["pane_id"] == pane, f"got {v}"))
    await s.call("display_message", {"pane_id": pane, "format_string": "w=#{pane_width}"},
                 lambda v: expect(v == "w=100", f"got {v!r}"))
    await s.call("run_command", {"pane_id": pane, "command": "echo run-$((6*7))", "timeout": 15},
                 lambda v: expect(not v["timed_out"] and "run-42" in v["output"], f"got {v}"))
    first = await s.call("capture_since", {"pane_id": pane},
                         lambda v: expect(bool(v["cursor"]), f"got {v}"))
    await signalled(s, "send_keys_batch", {"operations": [
        {"pane_id": pane, "keys": "echo batch-$((1+1))", "enter": True},
        {"pane_id": pane, "keys": "tmux wait-for -S sdkbatch", "enter": True},
    ]}, "sdkbatch")
    if first is not None:
        await s.call("capture_since", {"pane_id": pane, "cursor": first["cursor"]},
                     # Typed-ahead text is echoed while the first command
                     # runs, so the output may share a line with that echo.
                     lambda v: expect(any(l.endswith("batch-2") for l in v["lines"]),
                                      f"no 'batch-2' in {v['lines']}"))
    await signalled(s, "paste_text", {"pane_id": pane,
                                      "text": "echo pasted-$((3+3)); tmux wait-for -S sdkpaste\n",
                                      "bracket": False},
                    "sdkpaste")
    await signalled(s, "send_prompt", {"pane_id": pane,
                                       "text": "echo prompted; tmux wait-for -S sdkprompt"},
                    "sdkprompt")
    # A command as a handle: started in the background, found, stopped,
    # and its end read back.
    started = await s.call("run_command", {"pane_id": pane, "command": "sleep 30",
                                           "background": True},
                           lambda v: expect(bool(v.get("command_id")), f"got {v}"))
    if started is not None:
        cid = started["command_id"]
        await s.call("list_commands", {"pane_id": pane, "running": True},
                     lambda v: expect(cid in json.dumps(v), f"got {v}"))
        await s.call("stop_command", {"command_id": cid},
                     lambda v: expect(not v["running"], f"got {v}"))
        await s.call("wait_for_command", {"command_id": cid, "timeout": 5},
                     lambda v: expect(not v["running"], f"got {v}"))
    # wait_for_text: the output is produced once the server reports the
    # wait armed (a progress notification), so it is new output for it.
    armed = []

    async def on_progress(progress, total, message):
        if not armed and message and "armed" in message:
            armed.append(message)
            await anyio.to_thread.run_sync(
                lambda: tmux("send-keys", "-t", pane, "echo waited-$((5+5))", "Enter"))

    try:
        with anyio.fail_after(STEP_TIMEOUT):
            result = await s.client.call_tool(
                "wait_for_text", {"pane_id": pane, "patterns": ["waited-10"], "timeout": 10},
                progress_callback=on_progress)
        s.called.add("wait_for_text")
        value = structured(result)
        report("call wait_for_text", not result.is_error and value.get("found") is True,
               f"outcome {value.get('outcome')}" + ("" if armed else ", no 'armed' progress"))
    except Exception as e:  # noqa: BLE001
        s.called.add("wait_for_text")
        report("call wait_for_text", False, f"{type(e).__name__}: {e}")
    # wait_for_state: the shell is back at its prompt after the echo.
    await s.call("wait_for_state", {"pane_id": pane, "states": ["prompt"], "timeout": 10},
                 lambda v: expect(v["state"] == "prompt" and v["found"], f"got {v}"))
    # wait_for_attention: armed by a first short call, then the pane rings
    # its bell (printf in its shell); the next call, from its token, has it.
    armed = await s.call("wait_for_attention", {"pane_ids": [pane], "reasons": ["bell"], "timeout": 0.2})
    since = (armed or {}).get("since")
    await s.call("send_keys", {"pane_id": pane, "keys": "printf '\\a'", "enter": True})
    await s.call("wait_for_attention", {"pane_ids": [pane], "reasons": ["bell"], "since": since, "timeout": 10},
                 lambda v: expect(any(e["reason"] == "bell" for e in v["events"]), f"got {v}"))
    pipe_file = os.path.join(tempfile.gettempdir(), f"tmuxmcp-sdk-{os.getpid()}.log")
    await s.call("pipe_pane", {"pane_id": pane, "output_path": pipe_file, "append": False})
    await s.call("pipe_pane", {"pane_id": pane})
    try:
        os.unlink(pipe_file)
    except FileNotFoundError:
        pass
    await s.call("enter_copy_mode", {"pane_id": pane, "scroll_up": 1})
    await s.call("exit_copy_mode", {"pane_id": pane})
    await s.call("clear_pane", {"pane_id": pane})
    await s.call("set_pane_title", {"pane_id": pane, "title": "sdk title"})

    # --- channels ---
    await signalled(s, "send_keys", {"pane_id": pane, "keys": "tmux wait-for -S sdkchan"}, "sdkchan")
    # tmux remembers a signal with nobody waiting: signal first, then wait.
    await s.call("send_keys", {"pane_id": pane, "keys": "tmux wait-for -S sdkchan2"})
    await s.call("wait_for_channel", {"channel": "sdkchan2", "timeout": 10})
    waiter = subprocess.Popen(["tmux", "-L", SOCKET, "wait-for", "sdksig"], env=tmux_env())
    try:
        if await s.call("signal_channel", {"channel": "sdksig"}) is not None:
            await wait_channel("sdksig", waiter)
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.wait()

    # --- options, environment, hooks, buffers ---
    await s.call("set_option", {"option": "@sdk_opt", "value": "yes", "scope": "session",
                                "target": sname})
    await s.call("show_option", {"option": "@sdk_opt", "scope": "session", "target": sname},
                 lambda v: expect(v["value"] == "yes", f"got {v!r}"))
    await s.call("show_option", {"option": "status"})
    await s.call("set_environment", {"session_name": sname, "name": "SDK_VAR", "value": "v1"})
    await s.call("show_environment", {"session_name": sname},
                 lambda v: expect("SDK_VAR" in json.dumps(v), f"no SDK_VAR in {v}"))
    await s.call("show_hooks", {"global_": True})
    await s.call("show_hook", {"hook_name": "after-new-window", "global_": True})
    buf = await s.call("load_buffer", {"content": "echo buffered", "logical_name": "sdk"})
    if buf is not None:
        name = buf["buffer_name"]
        await s.call("show_buffer", {"buffer_name": name},
                     lambda v: expect("echo buffered" in json.dumps(v), f"got {v}"))
        await s.call("paste_buffer", {"buffer_name": name, "pane_id": pane})
        await s.call("delete_buffer", {"buffer_name": name})

    # --- batch of read tools ---
    await s.call("call_read_tools_batch", {"operations": [
        {"tool": "list_sessions"},
        {"tool": "get_pane_info", "arguments": {"pane_id": pane}},
    ]}, lambda v: expect(v["succeeded"] == 2, f"got {v}"))

    # --- windows and panes ---
    window = await s.call("create_window", {"session_name": sname, "window_name": "two"},
                          lambda v: expect(v["window_name"] == "two", f"got {v}"))
    await s.call("list_windows", {"session_name": sname},
                 lambda v: expect(len(v) == 2, f"got {v}"))
    if window is None:
        return
    wid = window["window_id"]
    await s.call("get_window_info", {"window_id": wid},
                 lambda v: expect(v["window_id"] == wid, f"got {v}"))
    await s.call("rename_window", {"window_id": wid, "new_name": "deux"},
                 lambda v: expect(v["window_name"] == "deux", f"got {v}"))
    await s.call("select_window", {"window_id": wid})
    await s.call("resize_window", {"window_id": wid, "width": 90, "height": 24})
    split = await s.call("split_window", {"window_id": wid, "direction": "right"},
                         lambda v: expect(v["pane_id"].startswith("%"), f"got {v}"))
    if split is not None:
        other = split["pane_id"]
        await s.call("select_layout", {"window_id": wid, "layout": "even-horizontal"})
        await s.call("find_pane_by_position", {"window_id": wid, "corner": "top-right"})
        await s.call("select_pane", {"window_id": wid, "direction": "left"})
        await s.call("swap_pane", {"source_pane_id": other,
                                   "target_pane_id": window.get("active_pane_id") or pane})
        await s.call("resize_pane", {"pane_id": other, "width": 30})
        await s.call("resize_pane", {"pane_id": other, "zoom": True})
        await s.call("resize_pane", {"pane_id": other, "zoom": False})
        await s.call("respawn_pane", {"pane_id": other, "kill": True})
        await s.call("kill_pane", {"pane_id": other})
    await s.call("move_window", {"window_id": wid, "destination_index": "7"},
                 lambda v: expect(str(v.get("window_index")) == "7", f"got {v}"))
    await s.call("kill_window", {"window_id": wid})
    await s.call("kill_session", {"session_name": sname})
    left = tmux("list-sessions", "-F", "#{session_name}").split()
    report("tmux agrees", left == ["sdk"], f"sessions left: {left}")

    # --- resources, prompts, completion (through the SDK) ---
    await resources_prompts(client)

    # --- kill_server, on a second private server so the main one survives ---
    second = f"{SOCKET}-kill"
    path = tmux("display-message", "-p", "#{socket_path}").strip()
    subprocess.run(["tmux", "-L", second, "-f", "/dev/null", "new-session", "-d", "-s", "victim"],
                   env=tmux_env(), check=True, timeout=STEP_TIMEOUT)
    await s.call("kill_server", {"socket_name": second})
    gone = subprocess.run(["tmux", "-L", second, "has-session"], env=tmux_env(),
                          capture_output=True, timeout=STEP_TIMEOUT).returncode != 0
    report("second server gone", gone, second)
    if not gone:
        subprocess.run(["tmux", "-L", second, "kill-server"], env=tmux_env(), timeout=STEP_TIMEOUT)
    if path and os.path.basename(path) == SOCKET:
        try:
            os.unlink(os.path.join(os.path.dirname(path), second))  # tmux 3.3a leaves it
        except FileNotFoundError:
            pass


async def resources_prompts(client):
    templates = await step("resources/templates/list", client.list_resource_templates,
                           lambda v: expect(len(v.resource_templates) == 6, f"got {v}"))
    tmux("new-window", "-d", "-t", "sdk:", "-n", "res")
    pane = tmux("list-panes", "-t", "sdk:0", "-F", "#{pane_id}").split()[0]
    uris = ["tmux://sessions", "tmux://sessions/sdk", "tmux://sessions/sdk/windows",
            "tmux://sessions/sdk/windows/0", f"tmux://panes/{pct(pane)}",
            f"tmux://panes/{pct(pane)}/content"]
    if templates is not None:
        bases = {t.uri_template.split("{?")[0] for t in templates.resource_templates}
        want = {"tmux://sessions", "tmux://sessions/{session_name}",
                "tmux://sessions/{session_name}/windows",
                "tmux://sessions/{session_name}/windows/{window_index}",
                "tmux://panes/{pane_id}", "tmux://panes/{pane_id}/content"}
        report("templates match", bases == want, f"{sorted(bases ^ want)}" if bases != want else "")
    for uri in uris:
        await step(f"resources/read {uri}", lambda uri=uri: client.read_resource(uri),
                   lambda v: expect(len(v.contents) == 1 and v.contents[0].text is not None,
                                    f"got {v}"))
    await step(f"resources/read {uris[0]}?socket_name",
               lambda: client.read_resource(f"{uris[0]}?socket_name={pct(SOCKET)}"),
               lambda v: expect("sdk" in v.contents[0].text, f"got {v}"))

    prompts = await step("prompts/list", client.list_prompts,
                         lambda v: expect(len(v.prompts) > 0, "no prompts"))
    if prompts is not None:
        values = {"pane_id": pane, "command": "echo hi", "timeout": "5",
                  "session_name": "dev", "log_command": "tail -f /dev/null"}
        for prompt in prompts.prompts:
            args = {a.name: values.get(a.name, "x") for a in prompt.arguments or []}
            await step(f"prompts/get {prompt.name}",
                       lambda prompt=prompt, args=args: client.get_prompt(prompt.name, args),
                       lambda v: expect(len(v.messages) > 0, f"no messages: {v}"))

    await step("completion/complete",
               lambda: client.complete(
                   ResourceTemplateReference(type="ref/resource",
                                             uri="tmux://sessions/{session_name}{?socket_name}"),
                   {"name": "session_name", "value": "sd"}),
               lambda v: expect("sdk" in v.completion.values, f"got {v.completion}"))


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    binary = os.path.abspath(sys.argv[1])
    path = None
    try:
        # Panes run bash without startup files: a slow or blocking ~/.bashrc
        # (e.g. a pyenv rehash waiting on its lock) must not stall the test.
        tmux("start-server", ";", "set", "-g", "default-command", "exec bash --noprofile --norc",
             ";", "new-session", "-d", "-s", "sdk", "-x", "120", "-y", "30")
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
