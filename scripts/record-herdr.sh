#!/usr/bin/env bash
# Records the transcript the fake Herdr is held to, from a real Herdr binary:
#
#   scripts/record-herdr.sh /path/to/herdr        # writes tests/data/herdr-transcripts/<version>.jsonl
#
# It starts a private Herdr server in a scratch root (own HOME, XDG dirs and socket; update
# checks off), with a line-reading fake agent on the server's PATH as `pi` (run with
# HERDR_AGENT=pi, so Herdr detects it as pi; every line it is given goes to
# $ROOT/inbox/<its pane id>), plays the corpus of fake-herdr/tests/transcript/mod.rs against it
# (`cargo test -p fake-herdr --test transcripts record -- --ignored`), stops the server and
# removes the root. `git diff tests/data/herdr-transcripts` then shows what the Herdr changed.
# CI never runs this; it replays the transcripts on the fake (fake-herdr/tests/transcripts.rs).
set -euo pipefail

die() { echo "scripts/record-herdr.sh: $*" >&2; exit 1; }
[ "$#" -eq 1 ] || die "usage: scripts/record-herdr.sh /path/to/herdr"
root_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
[ -x "$bin" ] || die "not an executable: $1"
command -v python3 >/dev/null || die "python3 is required (the fake agent)"
version="$("$bin" --version | awk '{print $2}')"
case "$version" in 0.8.0 | 0.8.2) ;; *) die "no corpus for Herdr $version (0.8.0 and 0.8.2 are known)" ;; esac

scratch="$(mktemp -d /tmp/herdr-record.XXXXXX)"
server=""
cleanup() {
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    for _ in $(seq 1 25); do kill -0 "$server" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$server" 2>/dev/null || true
  fi
  rm -rf "$scratch"
}
trap cleanup EXIT

mkdir -p "$scratch"/{home,cfg/herdr,run,inbox,agents,alpha,beta}
chmod 700 "$scratch/run"
printf '[update]\nversion_check = false\nmanifest_check = false\n' >"$scratch/cfg/herdr/config.toml"
cat >"$scratch/agents/pi" <<EOF
#!/bin/sh
# A line-reading fake agent: each line it is given is appended to the inbox of its pane. An
# Enter with nothing typed submits nothing (as in an agent's prompt box).
HERDR_AGENT=pi exec python3 -u -c '
import os, sys
path = os.path.join("$scratch/inbox", os.environ.get("HERDR_PANE_ID", "unknown"))
while True:
    line = sys.stdin.readline()
    if not line:
        break
    if line.strip("\r\n"):
        with open(path, "a") as f:
            f.write(line.rstrip("\r\n") + "\n")
'
EOF
chmod +x "$scratch/agents/pi"

# The server: a clean environment with the fake agent first on PATH.
env -i PATH="$scratch/agents:/usr/local/bin:/usr/bin:/bin" HOME="$scratch/home" \
  XDG_CONFIG_HOME="$scratch/cfg" XDG_RUNTIME_DIR="$scratch/run" \
  HERDR_SOCKET_PATH="$scratch/h.sock" SHELL=/bin/bash TERM=xterm-256color \
  setsid "$bin" server >"$scratch/server.log" 2>&1 </dev/null &
server=$!
for _ in $(seq 1 100); do
  [ -S "$scratch/h.sock" ] && break
  kill -0 "$server" 2>/dev/null || die "the server died: $(tail -5 "$scratch/server.log")"
  sleep 0.1
done
[ -S "$scratch/h.sock" ] || die "no server socket after 10 s"

cd "$root_dir"
HERDR_TRANSCRIPT_BIN="$bin" HERDR_TRANSCRIPT_ROOT="$scratch" HERDR_TRANSCRIPT_VERSION="$version" \
  cargo test -q -p fake-herdr --test transcripts record -- --ignored --exact --nocapture
echo "recorded Herdr $version: tests/data/herdr-transcripts/$version.jsonl"
