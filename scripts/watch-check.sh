#!/usr/bin/env bash
# An operator's check against a real Herdr server (never in CI): a three-pane workspace with
# line-reading `pi` agents (brain, lazy: reads its line and never works, worker: reports
# working on each line), `herdr-link watch` running in a tmux session, and one `herdr-link mcp`
# server that sends brain → worker, brain → lazy and brain → nobody. Prints the final screen
# and, for each event, how long after its log line it appeared on the screen.
#
#   scripts/watch-check.sh /path/to/herdr      # a real Herdr 0.8.2 binary; needs tmux, python3
#
# Kills only what it started (the server by its pid, its own tmux server by socket name).
set -euo pipefail
herdr="${1:?usage: scripts/watch-check.sh /path/to/herdr}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
hl="${HERDR_LINK_BIN:-$repo/target/debug/herdr-link}"
[ -x "$hl" ] || { echo "build herdr-link first (cargo build -p herdr-link-cli)" >&2; exit 1; }
d="$(mktemp -d)"
tmux_sock="herdr-link-watch-check-$$"
spid=
cleanup() {
  tmux -L "$tmux_sock" kill-server 2>/dev/null || true
  if [ -n "$spid" ]; then kill "$spid" 2>/dev/null || true; fi
  rm -rf "$d"
}
trap cleanup EXIT
mkdir -p "$d/cfg/herdr" "$d/run" "$d/w"; chmod 700 "$d/run"
printf '[update]\nversion_check = false\nmanifest_check = false\n' > "$d/cfg/herdr/config.toml"
cat > "$d/agent.sh" <<'AGENT'
#!/bin/sh
stty -echo 2>/dev/null
report() { "$HERDR_BIN_PATH" pane report-agent "$HERDR_PANE_ID" --source custom:fake --agent pi --state "$1" >/dev/null 2>&1; }
report idle
while read -r line; do
  if [ "$1" = worker ]; then report working; sleep 2; report idle; fi
done
AGENT
chmod +x "$d/agent.sh"
export HOME=$d XDG_CONFIG_HOME=$d/cfg XDG_RUNTIME_DIR=$d/run HERDR_SOCKET_PATH=$d/h.sock
setsid "$herdr" server > "$d/server.log" 2>&1 < /dev/null &
spid=$!
for _ in $(seq 1 50); do "$herdr" workspace list >/dev/null 2>&1 && break; sleep 0.2; done
pane() { python3 -c 'import json,sys; r=json.load(sys.stdin)["result"]; print((r.get("pane") or r["root_pane"])["pane_id"])'; }
p1=$("$herdr" workspace create --cwd "$d/w" --no-focus | pane)
p2=$("$herdr" pane split "$p1" --direction right --no-focus | pane)
p3=$("$herdr" pane split "$p2" --direction down --no-focus | pane)
ws=${p1%%:*}
for p in "$p1 idle" "$p2 lazy" "$p3 worker"; do
  set -- $p
  "$herdr" pane run "$1" "HERDR_AGENT=pi HERDR_BIN_PATH=$herdr $d/agent.sh $2"
done
sleep 3
"$herdr" agent rename "$p1" brain >/dev/null
"$herdr" agent rename "$p2" lazy >/dev/null
"$herdr" agent rename "$p3" worker >/dev/null
export HERDR_LINK_LOG=$d/log.jsonl
: > "$HERDR_LINK_LOG"
tmux -L "$tmux_sock" new-session -d -s w -x 170 -y 20 \
  "env HERDR_BIN_PATH=$herdr TERM=xterm-256color $hl watch --workspace $ws"
sleep 1.5
marks=('brain → worker "please run' 'taken up after' 'brain → lazy "please do' 'delivered, not taken up' 'PEER_NOT_FOUND')
( for _ in $(seq 1 150); do
    s=$(tmux -L "$tmux_sock" capture-pane -p -t w); t=$(date +%s.%N)
    for m in "${marks[@]}"; do grep -qF "$m" <<<"$s" && echo "$t|$m"; done
    sleep 0.1
  done ) > "$d/seen.txt" &
poll=$!
{
  echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"0"}}}'
  echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"herdr_link","arguments":{}}}'
  sleep 1
  echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"herdr_link","arguments":{"action":"send","to":"worker","message":"please run the tests"}}}'
  sleep 1
  echo '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"herdr_link","arguments":{"action":"send","to":"lazy","message":"please do the thing"}}}'
  sleep 1
  echo '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"herdr_link","arguments":{"action":"send","to":"nobody","message":"hello?"}}}'
  sleep 5
} | HERDR_ENV=1 HERDR_BIN_PATH=$herdr HERDR_PANE_ID=$p1 HERDR_LINK_TAKEN_UP_MS=3000 "$hl" mcp > /dev/null 2> "$d/mcp.err"
sleep 1.5
tmux -L "$tmux_sock" capture-pane -p -t w
kill "$poll" 2>/dev/null || true; wait "$poll" 2>/dev/null || true
python3 - "$d" <<'PY'
import json, sys
d = sys.argv[1]
log = [json.loads(l) for l in open(f"{d}/log.jsonl")]
seen = {}
for l in open(f"{d}/seen.txt"):
    t, m = l.rstrip("\n").split("|", 1)
    seen.setdefault(m, float(t))
def ts(p):
    return next((e["ts"] for e in log if p(e)), None)
to = lambda e: (e.get("message") or {}).get("to")
marks = {
    'brain → worker "please run': ts(lambda e: e["tool"] != "follow" and to(e) == "worker"),
    "taken up after": ts(lambda e: e["code"] == "taken_up"),
    'brain → lazy "please do': ts(lambda e: e["tool"] != "follow" and to(e) == "lazy"),
    "delivered, not taken up": ts(lambda e: e["code"] == "not_taken_up"),
    "PEER_NOT_FOUND": ts(lambda e: e["code"] == "PEER_NOT_FOUND"),
}
for m, t in marks.items():
    s = seen.get(m)
    after = None if s is None or t is None else round((s - t) * 1000)
    print(f"{m}: on screen {after} ms after its log line")
PY
