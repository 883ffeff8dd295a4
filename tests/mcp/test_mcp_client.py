"""End-to-end test of `herdr-link mcp` with the official MCP Python SDK's ClientSession.

Each case spawns the server against the fake Herdr (`HERDR_FAKE_BIN`, state in a temp dir).
The transport here is the SDK's own line framing, done by hand so the test can also see raw
frames (for ordering), inject a garbage line, and read the exit status at EOF.

Run through tests/mcp/run.sh, which installs the pinned SDK. Env: HERDR_LINK_BIN,
HERDR_FAKE_BIN. Exits non-zero if anything is missing or fails.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

LINK = os.environ.get("HERDR_LINK_BIN", "")
FAKE = os.environ.get("HERDR_FAKE_BIN", "")
CANONICAL = ["herdr_link", "herdr_link_start", "herdr_link_peers", "herdr_link_send", "herdr_link_close"]
WORLD = {
    "workspaces": [
        {
            "cwd": "/p",
            "tabs": [
                {
                    "panes": [
                        {"cwd": "/p", "agent": "pi", "name": "brain", "status": "idle"},
                        {"cwd": "/p", "agent": "pi", "name": "worker", "status": "working"},
                    ]
                }
            ],
        },
        {"cwd": "/q", "tabs": [{"panes": [{"cwd": "/q", "agent": "pi", "name": "stranger"}]}]},
    ]
}


def crate_version() -> str:
    text = (Path(__file__).resolve().parents[2] / "Cargo.toml").read_text()
    return re.search(r'^version = "([^"]+)"', text, re.M).group(1)


class World:
    """A fake Herdr state directory."""

    def __init__(self, root: Path):
        self.root = root
        self.state = root / "state.json"
        self.env = dict(os.environ, HERDR_FAKE_STATE=str(self.state))
        subprocess.run([FAKE, "fake", "world"], input=json.dumps(WORLD), text=True, env=self.env,
                       check=True, capture_output=True)

    def herdr_env(self) -> dict:
        return dict(self.env, HERDR_ENV="1", HERDR_BIN_PATH=FAKE, HERDR_PANE_ID="w1:p1")

    def outside_env(self) -> dict:
        env = dict(self.env)
        for k in ("HERDR_ENV", "HERDR_BIN_PATH", "HERDR_PANE_ID", "HERDR_SOCKET_PATH"):
            env.pop(k, None)
        return env

    def prompts(self) -> list:
        # The fake's submissions, once pending Enters are pressed (Herdr submits 300 ms later).
        out = subprocess.run([FAKE, "fake", "prompts"], env=self.env, check=True, capture_output=True, text=True)
        return json.loads(out.stdout)

    def argv(self) -> list:
        p = Path(str(self.state) + ".argv.jsonl")
        return [json.loads(l)["argv"] for l in p.read_text().splitlines()] if p.exists() else []


class Server:
    """`herdr-link mcp` under a ClientSession, with the raw frames it wrote."""

    def __init__(self, env: dict, args=(), cwd=None):
        self.env, self.args, self.cwd = env, list(args), cwd
        self.frames: list = []  # every stdout line, parsed, in order
        self.notifications: list = []  # what the SDK session surfaced to its message handler
        self.returncode = None

    async def __aenter__(self):
        self.process = await anyio.open_process([LINK, "mcp", *self.args], env=self.env, cwd=self.cwd,
                                                stderr=subprocess.PIPE)
        to_session, self.read_stream = anyio.create_memory_object_stream(64)
        self.write_stream, from_session = anyio.create_memory_object_stream(64)
        self.tg = anyio.create_task_group()
        await self.tg.__aenter__()

        async def reader():
            buf = b""
            async for chunk in self.process.stdout:
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    self.frames.append(json.loads(line))
                    msg = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                    await to_session.send(SessionMessage(msg))
            await to_session.aclose()

        async def writer():
            async for m in from_session:
                data = m.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                await self.process.stdin.send(data.encode())

        self.tg.start_soon(reader)
        self.tg.start_soon(writer)

        async def on_message(message):
            self.notifications.append(message)

        self.session = ClientSession(self.read_stream, self.write_stream, message_handler=on_message)
        await self.session.__aenter__()
        return self

    async def raw(self, line: bytes):
        await self.process.stdin.send(line)

    async def close(self) -> int:
        """EOF on stdin; returns the exit status."""
        await self.session.__aexit__(None, None, None)
        await self.process.stdin.aclose()
        with anyio.fail_after(10):
            self.returncode = await self.process.wait()
        self.tg.cancel_scope.cancel()
        await self.tg.__aexit__(None, None, None)
        return self.returncode

    async def __aexit__(self, *exc):
        if self.returncode is None:
            self.process.kill()
            await self.process.wait()
            self.tg.cancel_scope.cancel()
            await self.tg.__aexit__(None, None, None)

    def list_changed(self) -> int:
        return sum(1 for f in self.frames if f.get("method") == "notifications/tools/list_changed")

    async def call(self, name, args=None):
        r = await self.session.call_tool(name, args or {})
        text = r.content[0].text
        return (text, True) if r.is_error else (json.loads(text), False)

    async def names(self):
        return [t.name for t in (await self.session.list_tools()).tools]


def frame_index(frames, pred):
    return next(i for i, f in enumerate(frames) if pred(f))


async def expect_rpc_error(coro, code, fragment):
    try:
        await coro
    except MCPError as e:
        assert e.code == code, (e.code, e.message)
        assert fragment in e.message, e.message
        return
    raise AssertionError(f"expected JSON-RPC error {code}")


async def garbage_keeps_serving(srv: Server):
    before = len(srv.frames)
    await srv.raw(b"this is not json {\n")
    with anyio.fail_after(5):
        while not any(f.get("error", {}).get("code") == -32700 for f in srv.frames[before:]):
            await anyio.sleep(0.01)
    err = next(f for f in srv.frames[before:] if f.get("error", {}).get("code") == -32700)
    assert err["id"] is None and err["error"]["message"] == "Parse error", err
    await srv.session.send_ping()  # still alive


# ---------------------------------------------------------------------------------------------


async def case_outside_herdr(w: World):
    async with Server(w.outside_env()) as srv:
        init = await srv.session.initialize()
        assert init.server_info.name == "herdr-link"
        assert init.server_info.version == crate_version()
        assert init.capabilities.tools.list_changed is True
        assert await srv.names() == []
        await garbage_keeps_serving(srv)
        for name, args in [("herdr_link", {}), ("herdr_link_peers", {}), ("herdr_link", {"action": "peers"})]:
            text, err = await srv.call(name, args)
            assert err and text == "NOT_IN_HERDR: Herdr environment is unavailable", text
        assert await srv.names() == []
        assert srv.list_changed() == 0
        assert await srv.close() == 0
    assert w.argv() == [], "nothing may run outside Herdr"


async def case_gateway_flow(w: World):
    async with Server(w.herdr_env()) as srv:
        init = await srv.session.initialize()
        assert init.capabilities.tools.list_changed is True
        # Dormant: only the gateway, twice, with no notification.
        tools = (await srv.session.list_tools()).tools
        assert [t.name for t in tools] == ["herdr_link"]
        assert "explicitly asks to use Herdr" in tools[0].description
        assert tools[0].input_schema["type"] == "object"
        assert await srv.names() == ["herdr_link"]
        assert srv.list_changed() == 0

        # Activation: exactly one list_changed, written before the response.
        result, err = await srv.call("herdr_link", {})
        assert not err and result == {"status": "active", "capabilities": ["start", "peers", "send", "close"]}
        call_id = max(f["id"] for f in srv.frames if "id" in f and "result" in f)
        n = frame_index(srv.frames, lambda f: f.get("method") == "notifications/tools/list_changed")
        r = frame_index(srv.frames, lambda f: f.get("id") == call_id)
        assert n < r, srv.frames
        assert srv.list_changed() == 1
        with anyio.fail_after(5):
            while not any(isinstance(m, types.ToolListChangedNotification) for m in srv.notifications):
                await anyio.sleep(0.01)

        # The host refreshes: gateway plus the four Tier 1 tools, canonical order.
        tools = (await srv.session.list_tools()).tools
        assert [t.name for t in tools] == CANONICAL
        assert all("not the raw Herdr CLI" in t.description for t in tools)
        assert list(tools[3].input_schema["properties"]) == ["to", "message"]
        assert "pane" not in tools[1].input_schema["properties"]

        # Idempotent activation: no second notification.
        result, _ = await srv.call("herdr_link", {"action": "activate"})
        assert result["status"] == "active"
        assert srv.list_changed() == 1

        # Every tool.
        peers, err = await srv.call("herdr_link_peers")
        assert not err and peers == {"self": {"name": "brain", "state": "idle"},
                                     "peers": [{"name": "worker", "state": "working"}]}, peers
        sent, err = await srv.call("herdr_link_send", {"to": "worker", "message": "hello"})
        assert not err and sent["status"] == "sent" and sent["to"] == "worker", sent
        assert re.fullmatch(r"hl_[a-z0-9]+_[a-z0-9]+", sent["id"])
        prompt = w.prompts()[-1]
        assert prompt["name"] == "worker" and prompt["text"].startswith("[herdr-link/1]")
        assert sent["id"] in prompt["text"] and "hello" in prompt["text"]
        started, err = await srv.call("herdr_link_start", {"name": "helper", "kind": "pi", "args": ["--x"]})
        assert not err and started == {"status": "started", "agent": "helper", "kind": "pi"}, started
        assert any(a[:3] == ["agent", "start", "helper"] and a[-1] == "--x" for a in w.argv())
        peers, _ = await srv.call("herdr_link_peers")
        assert [p["name"] for p in peers["peers"]] == ["worker", "helper"], peers
        closed, err = await srv.call("herdr_link_close", {"agent": "helper"})
        assert not err and closed == {"status": "closed", "agent": "helper"}, closed

        # Link errors are isError results with CODE: reason.
        text, err = await srv.call("herdr_link_send", {"to": "ghost", "message": "x"})
        assert err and text == "PEER_NOT_FOUND: target agent is not a live peer", text
        text, err = await srv.call("herdr_link_send", {"to": "stranger", "message": "x"})
        assert err and text == "PEER_NOT_FOUND: target agent is not a live peer", text
        text, err = await srv.call("herdr_link_start", {"name": "Bad Name", "kind": "pi", "args": []})
        assert err and text.startswith("START_INPUT_INVALID: "), text

        # Gateway dispatch, nested and shorthand.
        peers, err = await srv.call("herdr_link", {"action": "peers"})
        assert not err and peers["self"]["name"] == "brain"
        sent, err = await srv.call("herdr_link", {"action": "send", "arguments": {"to": "worker", "message": "via gw"}})
        assert not err and sent["status"] == "sent", sent
        sent, err = await srv.call("herdr_link", {"action": "send", "to": "worker", "message": "shorthand"})
        assert not err and sent["status"] == "sent", sent
        assert "shorthand" in w.prompts()[-1]["text"]
        started, err = await srv.call("herdr_link", {"action": "start",
                                                     "arguments": {"name": "helper2", "kind": "pi", "args": []}})
        assert not err and started["agent"] == "helper2", started
        closed, err = await srv.call("herdr_link", {"action": "close", "arguments": {"agent": "helper2"}})
        assert not err and closed == {"status": "closed", "agent": "helper2"}, closed
        text, err = await srv.call("herdr_link", {"action": "close", "agent": "ghost"})
        assert err and text.startswith("PEER_NOT_FOUND: "), text

        # Protocol errors: unknown tool and unknown action are JSON-RPC errors.
        await expect_rpc_error(srv.session.call_tool("nope", {}), -32602, "nope")
        await expect_rpc_error(srv.session.call_tool("herdr_link", {"action": "fly"}), -32602, "fly")

        # Malformed input never kills the server.
        await garbage_keeps_serving(srv)
        assert await srv.names() == CANONICAL
        assert srv.list_changed() == 1
        assert await srv.close() == 0


async def case_direct_tier1_while_dormant(w: World):
    async with Server(w.herdr_env()) as srv:
        await srv.session.initialize()
        assert await srv.names() == ["herdr_link"]
        peers, err = await srv.call("herdr_link_peers")
        assert not err and peers["self"]["name"] == "brain"
        n = frame_index(srv.frames, lambda f: f.get("method") == "notifications/tools/list_changed")
        r = frame_index(srv.frames, lambda f: f.get("result", {}).get("content"))
        assert n < r
        assert await srv.names() == CANONICAL
        again, _ = await srv.call("herdr_link_peers")
        assert again == peers and srv.list_changed() == 1
        assert await srv.close() == 0


async def case_configured_start_context_dir(w: World):
    project = w.root / "project"
    (project / ".agents").mkdir(parents=True)
    (project / ".agents" / "agent_config.json").write_text(json.dumps({"agents": {
        "reviewer": {"placement": {"mode": "new_tab", "label": "review"},
                     "variants": [{"kind": "pi", "args": ["--model", "m1"]}]}}}))
    elsewhere = w.root / "elsewhere"
    elsewhere.mkdir()
    # The server's cwd is the default context directory...
    async with Server(w.herdr_env(), cwd=str(project)) as srv:
        await srv.session.initialize()
        started, err = await srv.call("herdr_link_start", {"name": "rev1", "config_agent": "reviewer"})
        assert not err and started == {"status": "started", "agent": "rev1", "kind": "pi"}, started
        assert srv.list_changed() == 1
        assert await srv.close() == 0
    assert any(a[:2] == ["tab", "create"] and "review" in a for a in w.argv())
    assert any(a[:3] == ["agent", "start", "rev1"] and a[-2:] == ["--model", "m1"] for a in w.argv())
    # ...and --context-dir overrides it.
    async with Server(w.herdr_env(), args=["--context-dir", str(project)], cwd=str(elsewhere)) as srv:
        await srv.session.initialize()
        started, err = await srv.call("herdr_link", {"action": "start",
                                                     "arguments": {"name": "rev2", "config_agent": "reviewer"}})
        assert not err and started["agent"] == "rev2", started
        assert await srv.close() == 0
    async with Server(w.herdr_env(), cwd=str(elsewhere)) as srv:
        await srv.session.initialize()
        text, err = await srv.call("herdr_link_start", {"name": "rev3", "config_agent": "reviewer"})
        assert err and text.startswith("START_CONFIG_NOT_FOUND: "), text
        assert await srv.close() == 0


async def case_unnamed_self_bootstrap(w: World):
    subprocess.run([FAKE, "fake", "agent", "w1:p1", "--no-name"], env=w.env, check=True, capture_output=True)
    async with Server(w.herdr_env()) as srv:
        await srv.session.initialize()
        peers, err = await srv.call("herdr_link_peers")
        assert not err and re.fullmatch(r"hl-[0-9a-f]{8}", peers["self"]["name"]), peers
        assert await srv.close() == 0
    renames = [a for a in w.argv() if a[:2] == ["agent", "rename"]]
    assert len(renames) == 1 and renames[0][2] == "w1:p1", renames


def protocol_contract() -> str:
    """PROTOCOL.md's §3 Contract: the first ```text block after the "## 3." heading."""
    lines = (Path(__file__).resolve().parents[2] / "PROTOCOL.md").read_text().split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith("## 3."))
    fence = next(i for i in range(start, len(lines)) if lines[i].rstrip() == "```text")
    end = next(i for i in range(fence + 1, len(lines)) if lines[i].rstrip() == "```")
    return "\n".join(lines[fence + 1:end])


async def case_contract_reaches_the_model(w: World):
    contract = protocol_contract()
    assert "Reply path" in contract and "Complete requested work" in contract
    async with Server(w.herdr_env()) as srv:
        init = await srv.session.initialize()
        dormant = (await srv.session.list_tools()).tools
        seen = json.dumps(init.model_dump(mode="json")) + "".join(t.description for t in dormant)
        assert "Reply path" not in seen and "Complete requested work" not in seen, "Contract while dormant"

        r = await srv.session.call_tool("herdr_link", {})
        assert not r.is_error and len(r.content) == 2, r
        assert json.loads(r.content[0].text) == {"status": "active",
                                                 "capabilities": ["start", "peers", "send", "close"]}
        block = r.content[1].text
        assert block.startswith(contract + "\n\n"), block[:200]
        for t in ["herdr_link_start", "herdr_link_peers", "herdr_link_send", "herdr_link_close"]:
            assert f"mcp__herdr_link__{t}" in block

        tools = (await srv.session.list_tools()).tools
        assert tools[0].name == "herdr_link" and tools[0].description.endswith(block)
        assert all("Reply path" not in t.description for t in tools[1:])
        peers = await srv.session.call_tool("herdr_link_peers", {})
        assert len(peers.content) == 1
        assert await srv.close() == 0

    # A direct Tier 1 call on a dormant session is the activation: it carries the Contract too.
    async with Server(w.herdr_env()) as srv:
        await srv.session.initialize()
        r = await srv.session.call_tool("herdr_link_peers", {})
        assert not r.is_error and len(r.content) == 2, r
        assert json.loads(r.content[0].text)["self"]["name"] == "brain"
        assert r.content[1].text == block
        assert await srv.close() == 0


CASES = [case_outside_herdr, case_gateway_flow, case_direct_tier1_while_dormant,
         case_configured_start_context_dir, case_unnamed_self_bootstrap, case_contract_reaches_the_model]


def main() -> int:
    missing = [n for n, p in (("HERDR_LINK_BIN", LINK), ("HERDR_FAKE_BIN", FAKE)) if not (p and os.access(p, os.X_OK))]
    if missing:
        print(f"FAIL: {', '.join(missing)} must name an executable", file=sys.stderr)
        return 1
    passed = failed = 0
    for case in CASES:
        with tempfile.TemporaryDirectory() as d:
            try:
                anyio.run(case, World(Path(d)))
                print(f"ok   {case.__name__}")
                passed += 1
            except BaseException:  # noqa: BLE001 - report and continue
                print(f"FAIL {case.__name__}")
                traceback.print_exc()
                failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
