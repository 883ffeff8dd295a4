"""The herdr shim with an in-process host: this Python process loads the library, so once one of
its sessions is active it answers the shim for itself (docs/guard.md, "The exec boundary").
Programs the text guard cannot follow (python's subprocess, a Makefile recipe, a script, env,
flock) run with the shim first on PATH: no wait reaches Herdr while a session is active; every
wait does while none is, and `herdr agent list` always runs.

Needs HERDR_LINK_BIN (the herdr-link binary; default: next to HERDR_FAKE_BIN), make and flock.
"""

import json
import os
import shutil
import subprocess
import tempfile
import unittest

import support
from support import World

PY = (
    "import subprocess,sys; "
    "sys.exit(subprocess.run(['herdr','agent','wait','reviewer'],stdout=subprocess.DEVNULL).returncode)"
)
REFUSED = 77


def _link_bin():
    path = os.environ.get("HERDR_LINK_BIN") or os.path.join(
        os.path.dirname(support.FAKE_BIN), "herdr-link"
    )
    if not os.path.isfile(path):
        raise RuntimeError(f"herdr-link binary not found at {path!r}; set HERDR_LINK_BIN")
    return os.path.abspath(path)


class Shim(unittest.TestCase):
    def setUp(self):
        self.world = World()
        self.addCleanup(self.world.close)
        self.link = support.link()
        self.dir = tempfile.mkdtemp(prefix="herdr-link-py-shim-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        shim = os.path.join(self.dir, "shim")
        real = os.path.join(self.dir, "real")
        os.mkdir(shim)
        os.mkdir(real)
        os.symlink(_link_bin(), os.path.join(shim, "herdr"))
        os.symlink(support.FAKE_BIN, os.path.join(real, "herdr"))
        with open(os.path.join(self.dir, "Makefile"), "w") as f:
            f.write("all:\n\therdr agent wait reviewer >/dev/null\n")
        script = os.path.join(self.dir, "wait.sh")
        with open(script, "w") as f:
            f.write('#!/bin/sh\nexec herdr agent wait "$1" >/dev/null\n')
        os.chmod(script, 0o755)
        self.env = dict(os.environ, PATH=f"{shim}:{real}:{os.environ.get('PATH', '/usr/bin:/bin')}")
        self.env.pop("CLAUDE_CODE_SESSION_ID", None)
        self.programs = {
            "python": ["python3", "-c", PY],
            "make": ["make", "-s", "-C", self.dir],
            "script": ["sh", "-c", 'cd "$1" && ./wait.sh reviewer', "sh", self.dir],
            "env": ["sh", "-c", "env herdr agent wait reviewer >/dev/null"],
            "flock": ["sh", "-c", f"flock {self.dir}/lk herdr agent wait reviewer >/dev/null"],
        }

    def run_program(self, argv):
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, cwd=self.dir)

    def waits(self):
        return [c for c in self.world.calls() if c.startswith("agent wait")]

    def test_no_wait_reaches_herdr_while_a_session_is_active(self):
        with self.link.session() as s:
            s.tool_call("herdr_link")
            self.assertTrue(s.is_active())
            for name, argv in self.programs.items():
                out = self.run_program(argv)
                self.assertNotEqual(out.returncode, 0, name)
                self.assertIn("Blocked by Herdr Link", out.stderr, name)
            out = self.run_program(self.programs["python"])
            self.assertEqual(out.returncode, REFUSED)
            listed = self.run_program(["sh", "-c", "herdr agent list >/dev/null && echo listed"])
            self.assertEqual(listed.stdout, "listed\n", listed.stderr)
            self.assertEqual(self.waits(), [])

    def test_every_wait_reaches_herdr_while_dormant(self):
        with self.link.session() as s:
            self.assertFalse(s.is_active())
            for name, argv in self.programs.items():
                out = self.run_program(argv)
                self.assertEqual(out.returncode, 0, f"{name}: {out.stderr}")
        self.assertEqual(len(self.waits()), len(self.programs))

    def test_an_ended_session_no_longer_counts(self):
        with self.link.session() as s:
            s.tool_call("herdr_link")
            self.assertEqual(self.run_program(self.programs["python"]).returncode, REFUSED)
        out = self.run_program(self.programs["python"])
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(len(self.waits()), 1)


if __name__ == "__main__":
    unittest.main()
