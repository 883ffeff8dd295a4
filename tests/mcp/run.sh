#!/usr/bin/env bash
# End-to-end test of `herdr-link mcp` with the official MCP Python SDK (pinned in
# requirements.txt, installed into a venv under the cargo target dir).
#
#   HERDR_LINK_BIN=/path/to/herdr-link HERDR_FAKE_BIN=/path/to/herdr tests/mcp/run.sh
#
# Fails (never skips) when a binary, python3 or the SDK install is missing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

die() { echo "tests/mcp/run.sh: $*" >&2; exit 1; }

[ -n "${HERDR_LINK_BIN:-}" ] || die "HERDR_LINK_BIN is not set (the herdr-link binary)"
[ -n "${HERDR_FAKE_BIN:-}" ] || die "HERDR_FAKE_BIN is not set (the fake herdr binary)"
[ -x "$HERDR_LINK_BIN" ] || die "HERDR_LINK_BIN=$HERDR_LINK_BIN is not executable"
[ -x "$HERDR_FAKE_BIN" ] || die "HERDR_FAKE_BIN=$HERDR_FAKE_BIN is not executable"
command -v python3 >/dev/null || die "python3 is required"

venv="${MCP_VENV:-${CARGO_TARGET_DIR:-$root/target}/mcp-venv}"
stamp="$venv/.requirements"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" || die "cannot create a venv at $venv (is python3-venv installed?)"
fi
if ! cmp -s "$here/requirements.txt" "$stamp"; then
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt" \
        || die "cannot install the MCP SDK from requirements.txt"
    cp "$here/requirements.txt" "$stamp"
fi

HERDR_LINK_BIN="$(cd "$(dirname "$HERDR_LINK_BIN")" && pwd)/$(basename "$HERDR_LINK_BIN")" \
HERDR_FAKE_BIN="$(cd "$(dirname "$HERDR_FAKE_BIN")" && pwd)/$(basename "$HERDR_FAKE_BIN")" \
    exec "$venv/bin/python" "$here/test_mcp_client.py"
