"""Every call of the Link and Session API against the fake Herdr, and the error classes."""

import json
import os
import pathlib
import shutil
import tempfile
import unittest

import herdr_link
from herdr_link import InvalidRequest, LinkError, Style

import support
from support import TIER1, World, tool_names


def protocol_contract():
    """PROTOCOL.md's §3 Contract: the first ```text block after the "## 3." heading."""
    with open(os.path.join(support.REPO, "PROTOCOL.md"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("## 3."))
    fence = next(i for i in range(start, len(lines)) if lines[i].rstrip() == "```text")
    end = next(i for i in range(fence + 1, len(lines)) if lines[i].rstrip() == "```")
    return "\n".join(lines[fence + 1:end])


class Basics(unittest.TestCase):
    def test_version(self):
        link = support.link()
        self.assertEqual(link.version(), support.crate_version())
        self.assertIsInstance(herdr_link.__version__, str)

    def test_loaded_from_the_env_var(self):
        self.assertEqual(support.link().path, support.LIB_PATH)

    def test_installed_package_is_under_test(self):
        if os.environ.get("HERDR_LINK_PY_EXPECT_INSTALLED") == "1":
            import sys

            self.assertTrue(
                os.path.abspath(herdr_link.__file__).startswith(os.path.abspath(sys.prefix)),
                f"{herdr_link.__file__} is not inside {sys.prefix}",
            )

    def test_exception_classes(self):
        self.assertFalse(issubclass(LinkError, ValueError))
        self.assertTrue(issubclass(InvalidRequest, ValueError))
        self.assertEqual(InvalidRequest.code, "INVALID_REQUEST")
        e = LinkError("PEER_NOT_FOUND", "PEER_NOT_FOUND: target agent is not a live peer")
        self.assertEqual(str(e), e.message)
        self.assertIn("PEER_NOT_FOUND", repr(e))
        self.assertEqual(len(herdr_link.LINK_CODES), 10)
        self.assertEqual({code for code, _ in herdr_link._codes.REASONS}, herdr_link.LINK_CODES)

    def test_response_mapping(self):
        raise_for = herdr_link._raise_for
        with self.assertRaises(InvalidRequest) as cm:
            raise_for({"ok": False, "error": {"code": "INVALID_REQUEST", "message": "INVALID_REQUEST: x"}})
        self.assertEqual(cm.exception.message, "INVALID_REQUEST: x")
        for code in sorted(herdr_link.LINK_CODES) + ["INTERNAL_ERROR"]:
            with self.assertRaises(LinkError) as cm:
                raise_for(
                    {"ok": False, "error": {"code": code, "message": f"{code}: r"},
                     "active": True, "tools_changed": True}
                )
            self.assertEqual(cm.exception.code, code)
            self.assertEqual(cm.exception.message, f"{code}: r")
            self.assertTrue(cm.exception.active and cm.exception.tools_changed)
        with self.assertRaises(LinkError) as cm:
            raise_for({"ok": False})
        self.assertEqual(cm.exception.code, "INTERNAL_ERROR")

    def test_null_from_the_library_is_an_internal_error(self):
        link = herdr_link.Link(support.LIB_PATH)
        link._native.hl_tool_call = lambda request: None
        with self.assertRaises(LinkError) as cm:
            link.tool_call("s", "herdr_link")
        self.assertEqual(cm.exception.code, "INTERNAL_ERROR")


class InsideHerdr(unittest.TestCase):
    def setUp(self):
        self.world = World()
        self.addCleanup(self.world.close)
        self.link = support.link()

    def test_dormant_then_active(self):
        with self.link.session() as s:
            self.assertFalse(s.is_active())
            for style in ("deferred", "gateway", "mcp", Style.DEFERRED, Style.MCP):
                p = s.presentation(style)
                self.assertEqual(tool_names(p), ["herdr_link"], style)
                self.assertIsNone(p["contract"])
            self.assertEqual(tool_names(s.presentation("deferred", catalog=True)), TIER1)

            self.assertEqual(
                s.tool_call("herdr_link", {}),
                {"status": "active", "capabilities": ["start", "peers", "send", "close"]},
            )
            self.assertTrue(s.is_active())
            p = s.presentation(Style.DEFERRED)
            self.assertEqual(tool_names(p), TIER1)
            self.assertIsInstance(p["contract"], str)
            for tool in p["tools"]:
                self.assertEqual(tool["input_schema"]["type"], "object")
            g = s.presentation(Style.GATEWAY)
            self.assertEqual(tool_names(g), ["herdr_link"])
            self.assertIn("action", g["contract"])
            key = s.key
        self.assertFalse(self.link.is_active(key), "the context manager ends the session")

    def test_the_activating_call_carries_the_contract(self):
        # A host shows reply.contract with the result: the model's next step sees the rules.
        contract = protocol_contract()
        for style in (Style.DEFERRED, Style.GATEWAY, Style.MCP, None):
            with self.link.session() as s:
                reply = s.call("herdr_link", {}, style=style)
                self.assertEqual(reply.result["status"], "active")
                self.assertTrue(reply.active and reply.tools_changed)
                self.assertIsInstance(reply.contract, str, style)
                self.assertTrue(reply.contract.startswith(contract), style)
                if style is not None:
                    self.assertEqual(reply.contract, s.presentation(style)["contract"])
                if style is Style.DEFERRED:
                    self.assertEqual(reply.contract, contract, "byte for byte")
                again = s.call("herdr_link", {}, style=style)
                self.assertEqual((again.contract, again.tools_changed), (reply.contract, False))
                self.assertIsNone(s.call("herdr_link_peers", style=style).contract)
        # A failing first call activated the session: the error carries the Contract.
        with self.link.session() as s:
            with self.assertRaises(LinkError) as e:
                s.call("herdr_link_send", {"to": "ghost", "message": "x"}, style="deferred")
            self.assertEqual(e.exception.contract, contract)
            with self.assertRaises(LinkError) as e:
                s.call("herdr_link_send", {"to": "ghost", "message": "x"}, style="deferred")
            self.assertIsNone(e.exception.contract)

    def test_context_manager_ends_on_error(self):
        s = self.link.session("ctx-error")
        with self.assertRaises(LinkError):
            with s:
                s.tool_call("herdr_link")
                self.assertTrue(s.is_active())
                s.tool_call("herdr_link_send", {"to": "ghost", "message": "x"})
        self.assertFalse(self.link.is_active("ctx-error"))

    def test_restart_makes_dormant_again(self):
        s = self.link.session("restart").start()
        s.tool_call("herdr_link")
        self.assertTrue(s.is_active())
        self.link.session_start("restart")
        self.assertFalse(self.link.is_active("restart"))
        self.link.session_end("restart")

    def test_session_keys(self):
        a, b = self.link.session(), self.link.session()
        self.assertNotEqual(a.key, b.key)
        self.assertEqual(self.link.session("given").key, "given")
        self.assertIn("given", repr(self.link.session("given")))

    def test_peers_send_close(self):
        with self.link.session() as s:
            peers = s.tool_call("herdr_link_peers")
            self.assertEqual(
                peers,
                {"self": {"name": "brain", "state": "working"},
                 "peers": [{"name": "reviewer", "state": "idle"}]},
            )
            # Controls a terminal would act on travel escaped and decode to exactly what was sent.
            message = 'Review "retry" ✓\nsecond line: keep A\x7f\x7f\x7fB intact \x85\x9b2J \u2028\u2029 \x00 end'
            sent = s.tool_call("herdr_link_send", {"to": "reviewer", "message": message})
            self.assertEqual(sent["status"], "sent")
            self.assertEqual(sent["to"], "reviewer")
            prompts = self.world.prompts()
            self.assertEqual(len(prompts), 1)
            self.assertEqual(prompts[0]["name"], "reviewer")
            typed = prompts[0]["text"]
            keys = [c for c in typed if c != "\n" and (ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in "\u2028\u2029")]
            self.assertEqual(keys, [], "the typed text holds no control but its own line breaks")
            envelope = json.loads(typed.split("\n")[-1])
            self.assertEqual(envelope["message"], message)
            self.assertEqual(envelope["id"], sent["id"])

            via_gateway = s.tool_call("herdr_link", {"action": "peers"})
            self.assertEqual(via_gateway, peers)
            for style in ("gateway", Style.MCP):
                self.assertEqual(s.tool_call("herdr_link", {"action": "peers"}, style=style), peers)
            # A deferred-style host's gateway only activates: the action is ignored.
            before = len(self.world.calls())
            activated = s.tool_call("herdr_link", {"action": "close", "arguments": {"agent": "reviewer"}},
                                    style=Style.DEFERRED)
            self.assertEqual(activated["status"], "active")
            self.assertEqual(len(self.world.calls()), before, "no Herdr call")
            with self.assertRaises(InvalidRequest):
                s.tool_call("herdr_link", {}, style="pi")

            closed = s.tool_call("herdr_link_close", {"agent": "reviewer"})
            self.assertEqual(closed, {"status": "closed", "agent": "reviewer"})
            self.assertEqual(s.tool_call("herdr_link_peers")["peers"], [])

    def test_start_with_context_dir(self):
        project = tempfile.mkdtemp(prefix="herdr-link-py-proj-")
        self.addCleanup(shutil.rmtree, project, True)
        with self.link.session() as s:
            with self.assertRaises(LinkError) as cm:
                s.tool_call("herdr_link_start", {"name": "helper", "config_agent": "worker"},
                            context_dir=project)
            self.assertEqual(cm.exception.code, "START_CONFIG_NOT_FOUND")
            os.makedirs(os.path.join(project, ".agents"))
            with open(os.path.join(project, ".agents", "agent_config.json"), "w") as f:
                json.dump({"agents": {"worker": {"placement": {"mode": "new_tab"},
                                                 "variants": [{"kind": "pi", "args": []}]}}}, f)
            started = s.tool_call("herdr_link_start", {"name": "helper", "config_agent": "worker"},
                                  context_dir=pathlib.Path(project))
            self.assertEqual(started["status"], "started")
            self.assertEqual(started["agent"], "helper")
            names = [p["name"] for p in s.tool_call("herdr_link_peers")["peers"]]
            self.assertIn("helper", names)

    def test_link_errors_carry_code_and_message(self):
        with self.link.session() as s:
            with self.assertRaises(LinkError) as cm:
                s.tool_call("herdr_link_send", {"to": "stranger", "message": "hi"})
            e = cm.exception
            self.assertEqual(e.code, "PEER_NOT_FOUND")
            self.assertTrue(e.message.startswith("PEER_NOT_FOUND: "), e.message)
            # The package's copy of the error table (generated) says what the library says.
            self.assertIn((e.code, e.message[len("PEER_NOT_FOUND: "):]), herdr_link._codes.REASONS)
            self.assertNotIsInstance(e, ValueError)
            self.assertTrue(e.active)
            with self.assertRaises(LinkError) as cm:
                s.tool_call("herdr_link_close", {"agent": "ghost"})
            self.assertEqual(cm.exception.code, "PEER_NOT_FOUND")

    def test_invalid_request_is_value_error(self):
        with self.link.session() as s:
            with self.assertRaises(ValueError) as cm:
                s.tool_call("herdr_link_nope")
            self.assertIsInstance(cm.exception, InvalidRequest)
            self.assertEqual(cm.exception.code, "INVALID_REQUEST")
            self.assertTrue(str(cm.exception).startswith("INVALID_REQUEST: "))
            with self.assertRaises(ValueError):
                s.tool_call("herdr_link", {"action": "dance"})
            with self.assertRaises(ValueError):
                s.presentation("fancy")
            self.assertFalse(s.is_active(), "a malformed request never activates")

    def test_call_raw(self):
        s = self.link.session("raw").start()
        try:
            r = self.link.call_raw({"session": "raw", "tool": "herdr_link", "input": {}})
            self.assertEqual((r["ok"], r["active"], r["tools_changed"]), (True, True, True))
            r = self.link.call_raw('{"session":"raw","tool":"herdr_link"}')
            self.assertEqual((r["ok"], r["tools_changed"]), (True, False))
            r = self.link.call_raw("{not json")
            self.assertEqual(r["error"]["code"], "INVALID_REQUEST")
            with self.assertRaises(TypeError):
                self.link.call_raw(42)
        finally:
            s.end()

    def test_outside_herdr(self):
        World.outside()
        with self.link.session() as s:
            with self.assertRaises(LinkError) as cm:
                s.tool_call("herdr_link", {})
            self.assertEqual(cm.exception.code, "NOT_IN_HERDR")
            # A code's general text is its first row.
            text = next(t for c, t in herdr_link._codes.REASONS if c == "NOT_IN_HERDR")
            self.assertEqual(cm.exception.message, f"NOT_IN_HERDR: {text}")
            self.assertEqual(s.presentation("deferred"), {"tools": [], "contract": None})
            self.assertFalse(s.is_active())
            self.assertEqual(s.bash_guard("herdr agent wait reviewer"), herdr_link.Verdict.ALLOW)


class Arguments(unittest.TestCase):
    """Bad arguments fail in Python, before any library call."""

    def setUp(self):
        self.world = World()
        self.addCleanup(self.world.close)
        self.link = herdr_link.Link(support.LIB_PATH)
        self.c_calls = []
        native = self.link._native
        for name in ("hl_session_start", "hl_session_end", "hl_tool_call", "hl_is_active",
                     "hl_bash_guard", "hl_presentation"):
            real = getattr(native, name)

            def wrapper(*args, _real=real, _name=name):
                self.c_calls.append(_name)
                return _real(*args)

            setattr(native, name, wrapper)

    def assertNoCall(self, exc, fn, *args, **kwargs):
        before = len(self.c_calls)
        with self.assertRaises(exc):
            fn(*args, **kwargs)
        self.assertEqual(self.c_calls[before:], [], "the library must not be called")

    def test_nul_characters(self):
        link = self.link
        self.assertNoCall(ValueError, link.session_start, "a\0b")
        self.assertNoCall(ValueError, link.session_end, "a\0b")
        self.assertNoCall(ValueError, link.is_active, "a\0b")
        self.assertNoCall(ValueError, link.tool_call, "a\0b", "herdr_link")
        self.assertNoCall(ValueError, link.tool_call, "s", "herdr_link\0")
        self.assertNoCall(ValueError, link.tool_call, "s", "herdr_link_start", {}, "/tmp\0x")
        self.assertNoCall(ValueError, link.bash_guard, "s", "ls\0rm -rf /")
        self.assertNoCall(ValueError, link.bash_guard, "s", b"ls\0")
        self.assertNoCall(ValueError, link.presentation, "s\0", "deferred")
        self.assertNoCall(ValueError, link.call_raw, '{"session":"s\0"}')
        self.assertNoCall(ValueError, herdr_link.Session, link, "x\0")

    def test_empty_and_unencodable(self):
        link = self.link
        self.assertNoCall(ValueError, link.session_start, "")
        self.assertNoCall(ValueError, link.tool_call, "", "herdr_link")
        self.assertNoCall(ValueError, link.tool_call, "s", "herdr_link_start", {}, "")
        self.assertNoCall(ValueError, link.is_active, "\ud800")  # lone surrogate
        self.assertNoCall(ValueError, link.bash_guard, "s", "echo \udcff")
        self.assertNoCall(ValueError, link.tool_call, "s", "herdr_link_send", {"message": "\ud800"})
        self.assertNoCall(ValueError, link.tool_call, "s", "herdr_link_send", {"n": float("nan")})

    def test_wrong_types(self):
        link = self.link
        self.assertNoCall(TypeError, link.session_start, None)
        self.assertNoCall(TypeError, link.session_start, b"bytes-key")
        self.assertNoCall(TypeError, link.is_active, 7)
        self.assertNoCall(TypeError, link.tool_call, "s", None)
        self.assertNoCall(TypeError, link.tool_call, "s", "herdr_link", ["not", "a", "dict"])
        self.assertNoCall(TypeError, link.tool_call, "s", "herdr_link_send", {"x": object()})
        self.assertNoCall(TypeError, link.bash_guard, "s", None)
        self.assertNoCall(TypeError, link.presentation, "s", 3)

    def test_nul_inside_json_values_reaches_the_library_escaped(self):
        # A NUL inside a JSON string value is escaped (\\u0000), so the request is a valid C string.
        with self.link.session() as s:
            s.tool_call("herdr_link")
            with self.assertRaises(LinkError):
                s.tool_call("herdr_link_send", {"to": "gh\0st", "message": "x"})
        self.assertIn("hl_tool_call", self.c_calls)

    def test_bytes_commands(self):
        with self.link.session() as s:
            s.tool_call("herdr_link")
            v = s.bash_guard(b"herdr agent wait reviewer \xff\xfe")
            self.assertEqual(v, herdr_link.Verdict.BLOCK_END_TURN)
            self.assertEqual(s.bash_guard(bytearray(b"ls")), herdr_link.Verdict.ALLOW)


if __name__ == "__main__":
    unittest.main()
