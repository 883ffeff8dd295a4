#!/usr/bin/env bash
# Try herdr-link without Herdr: builds the library, the herdr-link binary and the bundled
# simulated Herdr, sets up a small Herdr world (two workspaces, named agents and one unnamed),
# and opens a shell that looks like a Herdr pane (HERDR_ENV, HERDR_BIN_PATH, HERDR_PANE_ID set;
# `herdr` and `herdr-link` on PATH). Every host example in the docs then gives real answers.
#
#   scripts/playground.sh              # an interactive shell; `exit` leaves and cleans up
#   scripts/playground.sh CMD [ARG...] # run one command inside the playground instead
#
# The world lives in a temporary directory and is removed on exit.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"

target="${CARGO_TARGET_DIR:-$repo/target}/debug"
case "$(uname -s)" in
  Darwin) libname=libherdr_link.dylib ;;
  *) libname=libherdr_link.so ;;
esac
# Built ones given (scripts/test.sh passes what it built: HERDR_LINK_BIN, HERDR_FAKE_BIN and
# HERDR_LINK_LIB, all three) are used as they are; otherwise build them.
if [ -x "${HERDR_LINK_BIN:-}" ] && [ -x "${HERDR_FAKE_BIN:-}" ] && [ -f "${HERDR_LINK_LIB:-}" ]; then
  link_bin="$HERDR_LINK_BIN" fake_bin="$HERDR_FAKE_BIN" link_lib="$HERDR_LINK_LIB"
else
  echo "== building the library, herdr-link and the simulated Herdr (cargo build, debug)" >&2
  cargo build --lib --bin herdr-link >&2
  cargo build -p fake-herdr >&2
  link_bin="$target/herdr-link" fake_bin="$target/herdr" link_lib="$target/$libname"
fi

play="$(mktemp -d "${TMPDIR:-/tmp}/herdr-link-playground.XXXXXX")"
trap 'rm -rf "$play"' EXIT
mkdir -p "$play/bin" "$play/project" "$play/shim"
ln -s "$fake_bin" "$play/bin/herdr"
ln -s "$link_bin" "$play/bin/herdr-link"
# The herdr shim (docs/guard.md, "The exec boundary"), first on PATH as `herdr-link setup` puts it.
ln -s "$link_bin" "$play/shim/herdr"

export HERDR_FAKE_STATE="$play/herdr-state.json"
# You are "brain" (w1:p1). In the same workspace: "reviewer", "tester" and one agent nobody has
# named yet; "writer" is in another workspace, so it is not your peer.
"$play/bin/herdr" fake world >/dev/null <<'JSON'
{"workspaces":[
  {"label":"webapp","cwd":"/src/webapp","tabs":[
    {"label":"main","panes":[
      {"agent":"claude","name":"brain","status":"working","focused":true},
      {"agent":"codex","name":"reviewer","status":"idle"},
      {"agent":"pi","name":"tester","status":"working"}]},
    {"label":"scratch","panes":[
      {"agent":"opencode","status":"idle"}]}]},
  {"label":"docs","cwd":"/src/docs","tabs":[
    {"label":"main","panes":[
      {"agent":"claude","name":"writer","status":"idle"}]}]}
]}
JSON

export HERDR_ENV=1
export HERDR_BIN_PATH="$play/bin/herdr"
export HERDR_PANE_ID="w1:p1"
export HERDR_SOCKET_PATH="$play/herdr.sock"
export HERDR_LINK_LIB="$link_lib"
export HERDR_LINK_LOG="$play/herdr-link.log"
export PYTHONPATH="$repo/hosts/python/src${PYTHONPATH:+:$PYTHONPATH}"
export PATH="$play/shim:$play/bin:$PATH"
export HERDR_LINK_PLAYGROUND="$play"

if [ "$#" -gt 0 ]; then
  set +e
  "$@"
  status=$?
  exit "$status"
fi

cat >&2 <<EOF

== herdr-link playground: a simulated Herdr pane (you are the agent "brain", pane w1:p1)
   workspace "webapp": brain (you), reviewer, tester, and one unnamed agent
   workspace "docs":   writer (not your peer: another workspace)

Try:
  herdr agent list                          # the simulated world, as Herdr's CLI shows it
  herdr-link doctor                         # the operator's diagnosis of this pane
  python3 -c 'import herdr_link; s = herdr_link.Link().session(); s.start(); s.tool_call("herdr_link", {}); print(s.tool_call("herdr_link_peers"))'
  python3 -c 'import herdr_link; s = herdr_link.Link().session(); s.start(); print(s.tool_call("herdr_link_send", {"to": "reviewer", "message": "Please review the diff."}))'
  herdr fake prompts                        # what the other agents received
  cat \$HERDR_LINK_LOG                       # the operator log
  (docs/mcp.md's "Smoke test by hand" works here too: the MCP server over stdio)

The library is $HERDR_LINK_LIB (HERDR_LINK_LIB); the
Python package is used from hosts/python/src (PYTHONPATH). Type exit to leave.
EOF
cat > "$play/bashrc" <<'EOF'
[ -f ~/.bashrc ] && . ~/.bashrc
PS1="(herdr playground) \w \$ "
EOF
bash --rcfile "$play/bashrc" -i || true
