"""Test support: the fake Herdr (`fake-herdr`, binary `herdr`) and a shared Link.

Needs HERDR_FAKE_BIN (the fake) and HERDR_LINK_LIB (the library); hosts/python/run-tests.sh sets
both. A missing one makes the tests fail, never skip.

The library reads HERDR_ENV, HERDR_BIN_PATH, HERDR_PANE_ID and (through the fake)
HERDR_FAKE_STATE from the process environment on every call. They are all set once, when this
module is imported, and later only changed in value, never added or removed, because the
library's background threads may read the environment while a test changes it.
"""

import json
import os
import shutil
import subprocess
import tempfile
import threading

import herdr_link

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def _required_file(var):
    path = os.environ.get(var, "")
    if not path or not os.path.isfile(path):
        raise RuntimeError(
            f"{var} must name an existing file (got {path!r}); run hosts/python/run-tests.sh"
        )
    return os.path.abspath(path)


FAKE_BIN = _required_file("HERDR_FAKE_BIN")
LIB_PATH = _required_file("HERDR_LINK_LIB")

for _k, _v in {
    "HERDR_ENV": "0",
    "HERDR_BIN_PATH": FAKE_BIN,
    "HERDR_PANE_ID": "w1:p1",
    "HERDR_FAKE_STATE": os.path.join(tempfile.gettempdir(), "herdr-link-py-unset.json"),
    "HERDR_LINK_TIMEOUT_MS": "10000",
}.items():
    os.environ[_k] = _v

_LINK = None
_LINK_LOCK = threading.Lock()


def link():
    """The Link every test shares (the library holds one session table per process anyway)."""
    global _LINK
    with _LINK_LOCK:
        if _LINK is None:
            _LINK = herdr_link.Link()
        return _LINK


def crate_version():
    with open(os.path.join(REPO, "Cargo.toml"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("version"):
                return line.split("=", 1)[1].strip().strip('"')
    raise RuntimeError("no version in Cargo.toml")


# brain (w1:p1) and reviewer (w1:p2) share workspace w1; stranger lives in w2.
STANDARD_WORLD = {
    "workspaces": [
        {
            "cwd": "/proj",
            "tabs": [
                {
                    "panes": [
                        {"cwd": "/proj", "agent": "pi", "name": "brain", "status": "working"},
                        {"cwd": "/proj", "agent": "claude", "name": "reviewer", "status": "idle"},
                    ]
                }
            ],
        },
        {"cwd": "/other", "tabs": [{"panes": [{"cwd": "/other", "agent": "pi", "name": "stranger"}]}]},
    ]
}


class World:
    """A fresh fake-Herdr world; points the process environment at it (inside Herdr, as `pane`).

    Use as a context manager, or call close()."""

    def __init__(self, spec=None, pane="w1:p1"):
        self.dir = tempfile.mkdtemp(prefix="herdr-link-py-")
        self.state = os.path.join(self.dir, "state.json")
        self._fake("fake", "world", stdin=json.dumps(STANDARD_WORLD if spec is None else spec))
        os.environ["HERDR_FAKE_STATE"] = self.state
        os.environ["HERDR_BIN_PATH"] = FAKE_BIN
        os.environ["HERDR_PANE_ID"] = pane
        os.environ["HERDR_ENV"] = "1"

    def _fake(self, *args, stdin=None):
        env = dict(os.environ, HERDR_FAKE_STATE=self.state)
        out = subprocess.run(
            [FAKE_BIN, *args], input=stdin, capture_output=True, text=True, env=env, check=False
        )
        if out.returncode != 0:
            raise RuntimeError(f"fake herdr {args} failed: {out.stderr}")
        return out.stdout

    def prompts(self):
        return json.loads(self._fake("fake", "prompts"))

    def calls(self):
        return [" ".join(e["argv"]) for e in json.loads(self._fake("fake", "log"))]

    @staticmethod
    def outside():
        """Closes the environment gate (HERDR_ENV=0), as outside a Herdr pane."""
        os.environ["HERDR_ENV"] = "0"

    @staticmethod
    def inside():
        os.environ["HERDR_ENV"] = "1"

    def close(self):
        os.environ["HERDR_ENV"] = "0"
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def tool_names(doc):
    return [t["name"] for t in doc["tools"]]


TIER1 = ["herdr_link", "herdr_link_start", "herdr_link_peers", "herdr_link_send", "herdr_link_close"]
