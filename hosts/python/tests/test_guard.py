"""bash_guard: verdicts only in active sessions, and the Verdict type."""

import pickle
import unittest

import herdr_link
from herdr_link import Verdict

import support
from support import World

WAIT = "herdr agent wait reviewer --timeout 600000"
PROMPT_WAIT = "herdr agent prompt reviewer hello --wait"


class Guard(unittest.TestCase):
    def setUp(self):
        self.world = World()
        self.addCleanup(self.world.close)
        self.link = support.link()

    def test_dormant_sessions_are_never_blocked(self):
        with self.link.session() as s:
            for command in (WAIT, PROMPT_WAIT, "ls"):
                v = s.bash_guard(command)
                self.assertIs(type(v), Verdict)
                self.assertEqual(v, Verdict.ALLOW, command)
                self.assertIsNone(v.reason)
        self.assertEqual(self.link.bash_guard("never-started", WAIT), Verdict.ALLOW)

    def test_active_session_verdicts(self):
        with self.link.session() as s:
            s.tool_call("herdr_link")
            v = s.bash_guard(WAIT)
            self.assertEqual(v, Verdict.BLOCK_END_TURN)
            self.assertEqual(v, 2)
            self.assertTrue(v.blocked and v.ends_turn and bool(v))
            self.assertEqual(v.name, "BLOCK_END_TURN")
            self.assertIsInstance(v.reason, str)
            self.assertTrue(v.reason)

            v = s.bash_guard(PROMPT_WAIT)
            self.assertEqual(v, Verdict.BLOCK)
            self.assertTrue(v.blocked)
            self.assertFalse(v.ends_turn)
            self.assertIn("herdr_link_send", v.reason)
            # In the host's own terms: the gateway style has only the send action.
            tool = s.bash_guard(PROMPT_WAIT, style="deferred")
            self.assertEqual(tool, Verdict.BLOCK)
            self.assertIn("with the herdr_link_send tool", tool.reason)
            gateway = s.bash_guard(PROMPT_WAIT, style=herdr_link.Style.GATEWAY)
            self.assertEqual(gateway, Verdict.BLOCK)
            self.assertNotIn("herdr_link_send", gateway.reason)
            self.assertIn('herdr_link tool with action "send"', gateway.reason)
            self.assertEqual(s.bash_guard(PROMPT_WAIT, style="mcp").reason, v.reason)
            self.assertEqual(s.bash_guard(WAIT, style="gateway"), Verdict.BLOCK_END_TURN)

            v = s.bash_guard("git status")
            self.assertEqual(v, Verdict.ALLOW)
            self.assertFalse(v)
            self.assertIsNone(v.reason)
            self.assertEqual(s.bash_guard("cd /x\nherdr agent wait reviewer"), Verdict.BLOCK_END_TURN)
            key = s.key
        self.assertEqual(self.link.bash_guard(key, WAIT), Verdict.ALLOW, "ended: allow")


class VerdictType(unittest.TestCase):
    def test_constants(self):
        self.assertEqual([int(Verdict.ALLOW), int(Verdict.BLOCK), int(Verdict.BLOCK_END_TURN)], [0, 1, 2])
        self.assertEqual([v.name for v in (Verdict.ALLOW, Verdict.BLOCK, Verdict.BLOCK_END_TURN)],
                         ["ALLOW", "BLOCK", "BLOCK_END_TURN"])
        self.assertIsNone(Verdict.BLOCK.reason)
        self.assertEqual(Verdict(1, "why").value, 1)

    def test_equality_ignores_the_reason(self):
        self.assertEqual(Verdict(2, "x"), Verdict.BLOCK_END_TURN)
        self.assertEqual(hash(Verdict(2, "x")), hash(2))
        self.assertIn(Verdict(1, "y"), {Verdict.BLOCK})

    def test_invalid_values(self):
        for bad in (-1, 3, 1.5, "1"):
            with self.assertRaises(ValueError):
                Verdict(bad)

    def test_repr_str_pickle(self):
        v = Verdict(1, "because")
        self.assertEqual(str(v), "BLOCK")
        self.assertIn("because", repr(v))
        self.assertEqual(repr(Verdict.ALLOW), "<Verdict.ALLOW: 0>")
        w = pickle.loads(pickle.dumps(v))
        self.assertIs(type(w), Verdict)
        self.assertEqual((int(w), w.reason), (1, "because"))

    def test_match_statement_style_comparison(self):
        v = Verdict(2, "r")
        self.assertEqual(
            {Verdict.ALLOW: "run", Verdict.BLOCK: "block", Verdict.BLOCK_END_TURN: "end"}[v], "end"
        )


if __name__ == "__main__":
    unittest.main()
