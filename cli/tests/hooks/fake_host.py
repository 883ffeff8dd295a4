"""A fake agent host for tests/guard_hook.rs: like Claude Code or Codex, it starts
`herdr-link mcp` as its child and runs pre-tool hooks as its children (directly, like Codex,
or through `sh -c`, like Claude Code).

Usage: fake_host.py <herdr-link binary>. Reads one JSON command per line on stdin and answers
each with one JSON line on stdout:

  {"op":"pid"}                                   -> {"pid": N}
  {"op":"start_mcp","env":{...}}                 -> {"pid": N}   (initialize handshake done)
  {"op":"call","name":T,"args":{...}}            -> {"result": <tools/call result>}
  {"op":"kill_mcp"}                              -> {"status": N} (SIGKILL, reaped)
  {"op":"stop_mcp"}                              -> {"status": N} (EOF on its stdin, waited)
  {"op":"hook","host":H,"via":"direct"|"sh"|"sh-stay","input":TEXT,"env":{...}}
                                                 -> {"code": N, "stdout": S, "stderr": S}

"sh" runs `sh -c "<bin> guard --host H"` (the shell may exec the hook), "sh-stay" adds
`; exit $?` so the shell stays the hook's parent. EOF on stdin kills what is left and exits.
"""

import json
import os
import shlex
import signal
import subprocess
import sys

LINK = sys.argv[1]


class Mcp:
    def __init__(self, env):
        self.proc = subprocess.Popen([LINK, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=env, text=True, bufsize=1)
        self.next_id = 0
        init = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                           "clientInfo": {"name": "fake-host", "version": "0"}})
        assert "result" in init, init
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("herdr-link mcp closed stdout")
            msg = json.loads(line)
            if msg.get("id") == rid and "method" not in msg:
                return msg


def main():
    mcp = None
    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd["op"]
        if op == "pid":
            out = {"pid": os.getpid()}
        elif op == "start_mcp":
            mcp = Mcp(dict(cmd.get("env") or {}))
            out = {"pid": mcp.proc.pid}
        elif op == "call":
            out = {"result": mcp.request("tools/call", {"name": cmd["name"], "arguments": cmd["args"]})}
        elif op == "kill_mcp":
            mcp.proc.send_signal(signal.SIGKILL)
            out = {"status": mcp.proc.wait()}
            mcp = None
        elif op == "stop_mcp":
            mcp.proc.stdin.close()
            out = {"status": mcp.proc.wait(timeout=20)}
            mcp = None
        elif op == "hook":
            argv = [LINK, "guard", "--host", cmd["host"]]
            via = cmd.get("via", "direct")
            if via == "sh":
                argv = ["sh", "-c", shlex.join(argv)]
            elif via == "sh-stay":
                argv = ["sh", "-c", shlex.join(argv) + "; exit $?"]
            r = subprocess.run(argv, input=cmd["input"].encode("utf-8", "surrogateescape"),
                               capture_output=True, env=dict(cmd.get("env") or {}), timeout=20)
            out = {"code": r.returncode, "stdout": r.stdout.decode("utf-8", "replace"),
                   "stderr": r.stderr.decode("utf-8", "replace")}
        else:
            out = {"error": f"unknown op {op}"}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
    if mcp is not None:
        mcp.proc.kill()
        mcp.proc.wait()


if __name__ == "__main__":
    main()
