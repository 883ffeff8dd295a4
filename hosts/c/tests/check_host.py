#!/usr/bin/env python3
"""Drives hosts/c's herdr-link-host against the fake Herdr and checks every answer.

    check_host.py scenario HOST        the full scenario, one command at a time
    check_host.py leak-script FILE N   writes a script of at least N mixed commands
    check_host.py leak-check LOG OUT N checks a valgrind log and the host's output of that script

Environment: HERDR_FAKE_BIN (the fake `herdr`), HERDR_LINK_VERSION (expected hl_version()).
Standard library only.
"""

import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile

FAILURES = []


def check(cond, what, detail=""):
    if cond:
        return
    FAILURES.append(what)
    print(f"FAIL: {what}" + (f"\n      {detail}" if detail else ""), file=sys.stderr)


def fake_bin():
    path = os.environ.get("HERDR_FAKE_BIN", "")
    if not path or not os.access(path, os.X_OK):
        sys.exit(f"check_host.py: HERDR_FAKE_BIN is not an executable: {path!r}")
    return path


# The world of the scenario: brain (w1:p1) and reviewer (w1:p2) share workspace w1; stranger is
# in another workspace and must never show up as a peer.
WORLD = {
    "workspaces": [
        {
            "cwd": "/proj",
            "label": "proj",
            "tabs": [
                {
                    "panes": [
                        {"cwd": "/proj", "agent": "pi", "name": "brain", "status": "working"},
                        {"cwd": "/proj", "agent": "claude", "name": "reviewer", "status": "idle"},
                    ]
                }
            ],
        },
        {
            "cwd": "/other",
            "tabs": [{"panes": [{"cwd": "/other", "agent": "pi", "name": "stranger"}]}],
        },
    ]
}


class Fake:
    def __init__(self, directory):
        self.bin = fake_bin()
        self.state = os.path.join(directory, "state.json")

    def run(self, *args, stdin=None):
        out = subprocess.run(
            [self.bin, *args],
            input=stdin,
            capture_output=True,
            text=True,
            env={**os.environ, "HERDR_FAKE_STATE": self.state},
            check=False,
        )
        if out.returncode != 0:
            sys.exit(f"check_host.py: fake herdr {args} failed: {out.stderr}")
        return out.stdout

    def world(self, spec):
        return json.loads(self.run("fake", "world", stdin=json.dumps(spec)))

    def prompts(self):
        return json.loads(self.run("fake", "prompts"))

    def env(self, pane):
        env = {k: v for k, v in os.environ.items() if not k.startswith("HERDR_")}
        env.update(
            HERDR_ENV="1",
            HERDR_BIN_PATH=self.bin,
            HERDR_PANE_ID=pane,
            HERDR_FAKE_STATE=self.state,
        )
        return env


class Host:
    """One running herdr-link-host: write a line, read its one answer line."""

    TIMEOUT = 60.0

    def __init__(self, exe, env):
        self.proc = subprocess.Popen(
            [exe],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.buf = b""

    def send(self, line):
        data = line if isinstance(line, bytes) else line.encode()
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def read_line(self):
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            ready, _, _ = select.select([fd], [], [], self.TIMEOUT)
            if not ready:
                raise SystemExit("check_host.py: the host did not answer in time")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise SystemExit(
                    "check_host.py: the host closed stdout; stderr: "
                    + self.proc.stderr.read().decode(errors="replace")
                )
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def ask(self, line):
        self.send(line)
        raw = self.read_line()
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise SystemExit(f"check_host.py: not a JSON line ({e}): {raw[:300]!r}")

    def call(self, session, tool, inp=None, **extra):
        req = {"session": session, "tool": tool, "input": {} if inp is None else inp, **extra}
        return self.ask("call " + json.dumps(req, ensure_ascii=False))

    def present(self, session, style, view=None):
        req = {"session": session, "style": style}
        if view:
            req["view"] = view
        return self.ask("present " + json.dumps(req))

    def close(self):
        self.proc.stdin.close()
        rc = self.proc.wait(timeout=self.TIMEOUT)
        rest = self.proc.stdout.read()
        err = self.proc.stderr.read().decode(errors="replace")
        return rc, self.buf + rest, err


def names(doc):
    return [t["name"] for t in doc["tools"]]


TIER1 = ["herdr_link", "herdr_link_start", "herdr_link_peers", "herdr_link_send", "herdr_link_close"]


def error_code(r):
    return r.get("error", {}).get("code") if r.get("ok") is False else None


def scenario(exe):
    tmp = tempfile.mkdtemp(prefix="herdr-link-c-host-")
    try:
        fake = Fake(tmp)
        fake.world(WORLD)
        brain = Host(exe, fake.env("w1:p1"))

        # Version and housekeeping.
        v = brain.ask("version")
        want = os.environ.get("HERDR_LINK_VERSION")
        check(isinstance(v.get("version"), str) and v["version"], "version is a string", v)
        if want:
            check(v["version"] == want, "version equals the crate version", f"{v} != {want}")
        h = brain.ask("help")
        check("call <request json>" in h.get("commands", []), "help lists the commands", h)

        # A new session is dormant: only the gateway, no Contract, the guard allows everything.
        check(brain.ask("start brain-1") == {"ok": True}, "start answers ok")
        check(brain.ask("active brain-1") == {"active": False}, "a new session is dormant")
        for style in ("deferred", "gateway", "mcp"):
            p = brain.present("brain-1", style)
            check(names(p) == ["herdr_link"], f"dormant {style}: gateway only", p)
            check(p.get("contract") is None, f"dormant {style}: no contract", p)
        cat = brain.present("brain-1", "deferred", view="catalog")
        check(names(cat) == TIER1, "catalog view lists all five tools", names(cat))
        g = brain.ask("guard brain-1 herdr agent wait reviewer")
        check(g == {"verdict": 0, "reason": None}, "dormant sessions are never blocked", g)

        # Gateway activation.
        r = brain.call("brain-1", "herdr_link", {})
        check(r.get("ok") is True, "gateway activation succeeds", r)
        check(
            r.get("result") == {"status": "active", "capabilities": ["start", "peers", "send", "close"]},
            "activation result",
            r,
        )
        check(r.get("active") is True and r.get("tools_changed") is True, "tools_changed once", r)
        # The activating response carries the Contract, printed unchanged: a host shows it with
        # the result, so the model's next step sees the rules.
        contract = protocol_contract()
        check(r.get("contract") == contract, "the activating response carries the Contract", r)
        r = brain.call("brain-1", "herdr_link", {"action": "activate"})
        check(r.get("tools_changed") is False, "tools_changed only on the first activation", r)
        check(r.get("contract") == contract, "every activation call carries it again", r)
        r = brain.call("brain-1", "herdr_link_peers")
        check("contract" not in r, "no other call carries it", r)
        r = brain.call("brain-g", "herdr_link", {}, style="gateway")
        gateway_contract = brain.present("brain-g", "gateway").get("contract")
        check(r.get("contract") == gateway_contract and gateway_contract.startswith(contract),
              "the gateway style's activation carries its Contract with the appendix", r)
        check(brain.ask("active brain-1") == {"active": True}, "active after the gateway")
        p = brain.present("brain-1", "deferred")
        check(names(p) == TIER1, "active deferred: five tools", names(p))
        check(isinstance(p.get("contract"), str) and p["contract"], "active: a Contract", p)
        p = brain.present("brain-1", "gateway")
        check(names(p) == ["herdr_link"], "active gateway: one tool", names(p))
        check("action" in (p.get("contract") or ""), "gateway contract mentions action")

        # Peers: same workspace only, no ids.
        r = brain.call("brain-1", "herdr_link_peers")
        check(
            r.get("result") == {"self": {"name": "brain", "state": "working"},
                                "peers": [{"name": "reviewer", "state": "idle"}]},
            "peers lists reviewer only",
            r,
        )
        r = brain.call("brain-1", "herdr_link", {"action": "peers"})
        check(r.get("ok") is True and r["result"]["peers"][0]["name"] == "reviewer",
              "gateway action peers", r)
        r = brain.call("brain-1", "herdr_link", {"action": "peers"}, style="gateway")
        check(r.get("ok") is True and "peers" in r["result"], "gateway style dispatches", r)
        r = brain.call("brain-1", "herdr_link", {"action": "close", "arguments": {"agent": "reviewer"}},
                       style="deferred")
        check(r.get("result") == {"status": "active", "capabilities": ["start", "peers", "send", "close"]},
              "deferred style: the gateway only activates (nothing closed)", r)

        # Send reaches the fake's prompt log.
        message = 'Please review src/net.rs — "retry" loop ✓'
        r = brain.call("brain-1", "herdr_link_send", {"to": "reviewer", "message": message})
        check(r.get("ok") is True and r["result"].get("status") == "sent", "send succeeds", r)
        prompts = fake.prompts()
        check(len(prompts) == 1, "one prompt delivered", prompts)
        envelope = None
        if prompts:
            check(prompts[0].get("name") == "reviewer", "the prompt went to reviewer", prompts[0])
            text = prompts[0].get("text", "")
            check(text.startswith("[herdr-link/1]"), "the prompt is a Link wrapper", text[:80])
            envelope = json.loads(text.strip().split("\n")[-1])
            check(envelope.get("message") == message and envelope.get("from") == "brain",
                  "envelope carries the message", envelope)
            check(envelope.get("id") == r.get("result", {}).get("id"), "envelope id = result id")

        # The reviewer answers from its own pane, in a second host process at the same time.
        reviewer = Host(exe, fake.env("w1:p2"))
        check(reviewer.ask("start rev-1") == {"ok": True}, "reviewer start")
        rr = reviewer.call("rev-1", "herdr_link", {})
        check(rr.get("ok") is True, "reviewer activates", rr)
        rr = reviewer.call("rev-1", "herdr_link_send",
                           {"to": (envelope or {}).get("from", "brain"), "message": "Reviewed: fine."})
        check(rr.get("ok") is True, "reviewer replies", rr)
        prompts = fake.prompts()
        check(len(prompts) == 2 and prompts[1].get("name") == "brain", "the reply reached brain",
              prompts)
        rc, rest, err = reviewer.close()
        check(rc == 0 and rest == b"", "reviewer host exits 0 at EOF", f"rc={rc} rest={rest!r} {err}")

        # Guard verdicts in an active session.
        g = brain.ask("guard brain-1 herdr agent wait reviewer --timeout 600000")
        check(g.get("verdict") == 2 and isinstance(g.get("reason"), str) and g["reason"],
              "guard: wait blocks and ends the turn", g)
        g = brain.ask("guard brain-1 herdr agent prompt reviewer hello --wait")
        check(g.get("verdict") == 1 and "herdr_link_send" in (g.get("reason") or ""),
              "guard: prompt --wait blocks", g)
        g = brain.ask("guard-in gateway brain-1 herdr agent prompt reviewer hello --wait")
        check(g.get("verdict") == 1 and "herdr_link_send" not in (g.get("reason") or "")
              and 'action "send"' in (g.get("reason") or ""),
              "guard-in gateway: the reason names the gateway's send action", g)
        g = brain.ask("guard-in deferred brain-1 herdr agent prompt reviewer hello --wait")
        check(g.get("verdict") == 1 and "with the herdr_link_send tool" in (g.get("reason") or ""),
              "guard-in deferred: the reason names the tool", g)
        g = brain.ask("guard-in gateway brain-1 herdr agent wait reviewer")
        check(g.get("verdict") == 2, "guard-in: the same verdicts", g)
        g = brain.ask("guard-in")
        check(g.get("ok") is False and g["error"]["code"] == "HOST_USAGE", "guard-in: usage", g)
        g = brain.ask("guard brain-1 ls -la /proj")
        check(g == {"verdict": 0, "reason": None}, "guard: ordinary command allowed", g)
        g = brain.ask('guard-json "brain-1" "cd /proj\\nherdr agent wait reviewer"')
        check(g.get("verdict") == 2, "guard-json: multi-line command", g)
        g = brain.ask("guard other-session herdr agent wait reviewer")
        check(g == {"verdict": 0, "reason": None}, "guard: unknown session allowed", g)

        # Errors.
        r = brain.call("brain-1", "herdr_link_send", {"to": "ghost", "message": "hi"})
        check(error_code(r) == "PEER_NOT_FOUND", "send to a ghost: PEER_NOT_FOUND", r)
        check(r.get("error", {}).get("message", "").startswith("PEER_NOT_FOUND: "),
              "error message starts with its code", r)
        r = brain.call("brain-1", "herdr_link_send", {"to": "stranger", "message": "hi"})
        check(error_code(r) == "PEER_NOT_FOUND", "other workspace: PEER_NOT_FOUND", r)
        r = brain.ask("call {not json")
        check(error_code(r) == "INVALID_REQUEST", "call with bad JSON: INVALID_REQUEST", r)
        r = brain.call("brain-1", "herdr_link_nope")
        check(error_code(r) == "INVALID_REQUEST", "unknown tool: INVALID_REQUEST", r)
        r = brain.ask(b'call {"session":"brain-1","tool":"herdr_link\xff"}')
        check(error_code(r) == "INVALID_REQUEST", "invalid UTF-8 request: INVALID_REQUEST", r)
        r = brain.ask("call")
        check(error_code(r) == "INVALID_REQUEST", "empty request: INVALID_REQUEST", r)
        p = brain.ask('present {"session":"brain-1","style":"weird"}')
        check(p.get("tools") == [] and p.get("error", {}).get("code") == "INVALID_REQUEST",
              "bad presentation style", p)

        # Host usage errors: one error line each, and the host goes on.
        for bad, needle in [
            ("frobnicate now", "unknown command"),
            ("start", "missing <session>"),
            ("start a b", "unexpected text"),
            ('start "unterminated', "unterminated"),
            ('start "nul\\u0000"', "\\u0000"),
            ('guard-json s1 not-a-string', "JSON string literal"),
            ('guard-json s1 "\\ud800"', "surrogate"),
            ("sleep soon", "milliseconds"),
            (b"version\x00junk", "NUL byte"),
            (b"\xff\xfe", "unknown command"),
        ]:
            r = brain.ask(bad)
            check(error_code(r) == "HOST_USAGE" and needle in r["error"]["message"],
                  f"usage error for {bad!r}", r)
        check(brain.ask("version") == v, "the host goes on after errors")

        # Blank lines, comments and CRLF.
        brain.send("")
        brain.send("   # a comment")
        check(brain.ask(b"active brain-1\r") == {"active": True}, "CRLF, blanks and comments")

        # Long lines (no fixed buffer): a presentation request just under the library's 1 MiB
        # request limit is read whole and answered; a 2 MiB one is read whole too and gets the
        # library's INVALID_REQUEST (not a truncated or split line); then a 1 MiB command.
        pad = "x" * ((1 << 20) - 200)
        p = brain.ask("present " + json.dumps({"session": "brain-1", "style": "deferred", "pad": pad}))
        check(names(p) == TIER1, "a request line of almost 1 MiB works", names(p) if "tools" in p else p)
        pad = "x" * (2 << 20)
        p = brain.ask("present " + json.dumps({"session": "brain-1", "style": "deferred", "pad": pad}))
        check(p.get("error", {}).get("code") == "INVALID_REQUEST" and p.get("tools") == [],
              "a 2 MiB request line is one line, refused by size", str(p)[:200])
        check(brain.ask("version") == v, "the host goes on after a 2 MiB line")
        g = brain.ask("guard brain-1 echo " + "y" * (1 << 20))
        check(g.get("verdict") in (0, 1, 2), "a 1 MiB guard line works", str(g)[:200])

        # Close: the lifecycle operation, then reviewer is gone.
        r = brain.call("brain-1", "herdr_link_close", {"agent": "reviewer"})
        check(r.get("result") == {"status": "closed", "agent": "reviewer"}, "close reviewer", r)
        r = brain.call("brain-1", "herdr_link_peers")
        check(r.get("result", {}).get("peers") == [], "no peers after close", r)
        r = brain.call("brain-1", "herdr_link_close", {"agent": "reviewer"})
        check(error_code(r) == "PEER_NOT_FOUND", "closing twice: PEER_NOT_FOUND", r)

        # A direct Tier 1 call activates a fresh session; end forgets sessions.
        check(brain.ask('start "brain 2"') == {"ok": True}, "start with a quoted session key")
        r = brain.call("brain 2", "herdr_link_peers")
        check(r.get("ok") is True and r.get("tools_changed") is True, "direct call activates", r)
        check(brain.ask('active "brain 2"') == {"active": True}, "quoted key is active")
        check(brain.ask("end brain-1") == {"ok": True}, "end answers ok")
        check(brain.ask("active brain-1") == {"active": False}, "ended session is gone")
        g = brain.ask("guard brain-1 herdr agent wait reviewer")
        check(g.get("verdict") == 0, "ended session: guard allows", g)
        check(brain.ask("sleep 1") == {"ok": True}, "sleep")
        # One write, so both lines are in the pipe while the host still runs; the second one
        # must never be answered.
        brain.send(b"quit\nversion")
        rc, rest, err = brain.close()
        check(rc == 0, "brain host exits 0", f"rc={rc} stderr={err}")
        check(rest == b"", "nothing is answered after quit", rest[:200])

        # Outside Herdr: every call is NOT_IN_HERDR and the presentation is empty.
        outside_env = {k: v for k, v in os.environ.items() if not k.startswith("HERDR_")}
        outside = Host(exe, outside_env)
        outside.ask("start o-1")
        r = outside.call("o-1", "herdr_link", {})
        check(error_code(r) == "NOT_IN_HERDR", "outside: NOT_IN_HERDR", r)
        p = outside.present("o-1", "deferred")
        check(p == {"tools": [], "contract": None}, "outside: empty presentation", p)
        check(outside.ask("active o-1") == {"active": False}, "outside: never active")
        rc, _, err = outside.close()
        check(rc == 0, "outside host exits 0", err)

        # Command-line arguments.
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False)
        check(out.returncode == 0 and out.stdout.startswith("herdr-link-host (herdr-link "),
              "--version", out.stdout)
        out = subprocess.run([exe, "--bogus"], capture_output=True, text=True, check=False)
        check(out.returncode == 2 and "usage:" in out.stderr, "bad argument exits 2", out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    if FAILURES:
        sys.exit(f"check_host.py scenario: {len(FAILURES)} check(s) failed")
    print("check_host.py scenario: all checks passed")


# --- leak run -----------------------------------------------------------------------------------

def leak_script(path, minimum):
    """Writes commands making at least `minimum` library calls that exercise every entry point and every path that
    returns a string (success, Link error, INVALID_REQUEST, guard reasons)."""
    library_verbs = ("start", "end", "active", "call", "present", "guard", "guard-json", "version")

    def library_calls():
        return sum(1 for l in lines if l.split(" ", 1)[0] in library_verbs)

    lines = []
    i = 0
    while library_calls() < minimum:
        s = f"leak-{i}"
        q = json.dumps
        lines += [
            f"start {s}",
            f"active {s}",
            f"present {q({'session': s, 'style': 'deferred'})}",
            f"present {q({'session': s, 'style': 'mcp', 'view': 'catalog'})}",
            f"guard {s} herdr agent wait reviewer",
            f"call {q({'session': s, 'tool': 'herdr_link', 'input': {}})}",
            f"present {q({'session': s, 'style': 'gateway'})}",
            f"guard {s} herdr agent wait reviewer",
            f"guard {s} herdr agent prompt reviewer hi --wait",
            f"guard {s} git status",
            f'guard-json {s} "a\\nherdr agent wait r\\u00e9"',
            f"call {q({'session': s, 'tool': 'herdr_link', 'input': {'action': 'bogus'}})}",
            "call {broken",
            'present {"session":"x","style":"nope"}',
            "version",
            "no-such-command",
        ]
        lines.append(f"call {q({'session': s, 'tool': 'herdr_link_peers', 'input': {}})}")
        if i % 4 == 0:
            start = {"name": f"w{i}", "config_agent": "nope"}
            lines.append(
                f"call {q({'session': s, 'tool': 'herdr_link_start', 'input': start, 'context_dir': '/nonexistent'})}"
            )
        if i % 2 == 0:
            lines.append(
                f"call {q({'session': s, 'tool': 'herdr_link_send', 'input': {'to': 'reviewer', 'message': f'm{i}'}})}"
            )
            lines.append(
                f"call {q({'session': s, 'tool': 'herdr_link_send', 'input': {'to': 'ghost', 'message': 'x'}})}"
            )
        lines += [f"end {s}", f"active {s}"]
        i += 1
    lines.append("sleep 1500")  # let the last bootstrap threads finish before exit
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"check_host.py: wrote {len(lines)} commands ({library_calls()} library calls) to {path}")


def leak_check(log_path, out_path, expected):
    with open(log_path, encoding="utf-8", errors="replace") as f:
        log = f.read()
    with open(out_path, "rb") as f:
        out_lines = f.read().splitlines()
    check(len(out_lines) == expected, "one answer per command under valgrind",
          f"{len(out_lines)} lines for {expected} commands")
    for n, line in enumerate(out_lines):
        try:
            json.loads(line)
        except ValueError:
            check(False, f"answer {n} is JSON", line[:200])
            break
    sends = sum(1 for l in out_lines if b'"status":"sent"' in l)
    check(sends > 0, "sends succeeded under valgrind", f"{sends} sends")

    def amount(kind):
        m = re.search(kind + r" lost: ([\d,]+) bytes in ([\d,]+) blocks", log)
        if m:
            return int(m.group(1).replace(",", "")), int(m.group(2).replace(",", ""))
        if "All heap blocks were freed -- no leaks are possible" in log:
            return 0, 0
        return None

    definite = amount("definitely")
    indirect = amount("indirectly")
    possible = amount("possibly")
    reachable = re.search(r"still reachable: ([\d,]+) bytes in ([\d,]+) blocks", log)
    errors = re.search(r"ERROR SUMMARY: ([\d,]+) errors", log)
    check(definite is not None and indirect is not None, "valgrind printed a leak summary",
          log[-2000:])
    print(
        "valgrind: definitely lost {} bytes, indirectly lost {} bytes, possibly lost {} bytes, "
        "still reachable {} bytes; ERROR SUMMARY {}".format(
            definite and definite[0], indirect and indirect[0], possible and possible[0],
            reachable.group(1) if reachable else "0", errors.group(1) if errors else "?",
        )
    )
    check(definite == (0, 0), "zero bytes definitely lost", definite)
    check(indirect == (0, 0), "zero bytes indirectly lost", indirect)
    check(errors is not None and errors.group(1) == "0", "valgrind: 0 errors",
          errors.group(0) if errors else log[-2000:])
    if FAILURES:
        sys.exit(f"check_host.py leak-check: {len(FAILURES)} check(s) failed")
    print("check_host.py leak-check: passed")


def protocol_contract():
    """PROTOCOL.md's §3 Contract: the first ```text block after the "## 3." heading."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "PROTOCOL.md")
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("## 3."))
    fence = next(i for i in range(start, len(lines)) if lines[i].rstrip() == "```text")
    end = next(i for i in range(fence + 1, len(lines)) if lines[i].rstrip() == "```")
    return "\n".join(lines[fence + 1:end])


def main(argv):
    if len(argv) == 3 and argv[1] == "scenario":
        scenario(argv[2])
    elif len(argv) == 4 and argv[1] == "leak-script":
        leak_script(argv[2], int(argv[3]))
    elif len(argv) == 5 and argv[1] == "leak-check":
        leak_check(argv[2], argv[3], int(argv[4]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
