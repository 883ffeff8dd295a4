#!/usr/bin/env bash
# Runs inside scripts/playground.sh (scripts/test.sh: `scripts/playground.sh bash
# tests/playground/check.sh`): the docs' examples give real answers in the simulated world.
set -euo pipefail
fail() { echo "playground check: $*" >&2; exit 1; }
[ -n "${HERDR_LINK_PLAYGROUND:-}" ] || fail "run me through scripts/playground.sh"

echo "-- herdr-link doctor"
herdr-link doctor || fail "doctor does not pass in the playground"

echo "-- Python (hosts/python README): activate, peers, send"
out="$(python3 - <<'PY'
import json, herdr_link
with herdr_link.Link().session() as s:
    s.tool_call("herdr_link", {})
    print(json.dumps(s.tool_call("herdr_link_peers"), sort_keys=True))
    print(json.dumps(s.tool_call("herdr_link_send", {"to": "reviewer", "message": "Please review the diff."})["status"]))
PY
)"
echo "$out"
expected='{"peers": [{"name": "reviewer", "state": "idle"}, {"name": "tester", "state": "working"}], "self": {"name": "brain", "state": "working"}}
"sent"'
[ "$out" = "$expected" ] || fail "Python example answered: $out"
herdr fake prompts | grep -q '"name":"reviewer"' || fail "reviewer did not receive the message"

echo "-- MCP (docs/mcp.md smoke test)"
out="$(printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"0"}}}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
  '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"herdr_link","arguments":{}}}' \
  '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"herdr_link_peers","arguments":{}}}' \
  | herdr-link mcp)"
echo "$out" | grep '"id":4' | grep -q 'reviewer' || fail "MCP peers did not list reviewer: $out"
if echo "$out" | grep -q 'writer'; then fail "MCP peers listed an agent of another workspace"; fi
echo "playground check: the docs' examples answer in the playground"
