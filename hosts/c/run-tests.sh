#!/usr/bin/env bash
# Tests the C host (hosts/c/herdr-link-host.c) against the fake Herdr:
#   1. builds it with the system C compiler: -std=c11 -Wall -Wextra -Werror -pedantic, linked
#      with -lherdr_link (the header and the library as a C program sees them);
#   2. drives the full scenario through it (tests/check_host.py scenario);
#   3. runs >= 1,000 mixed library calls under valgrind memcheck and requires zero bytes
#      definitely or indirectly lost, and zero memory errors.
#
# Env:
#   HERDR_LINK_LIB   the built library (default: $CARGO_TARGET_DIR or ../../target, release/)
#   HERDR_FAKE_BIN   the fake `herdr` binary (same default directory)
#   CC               the C compiler (default: cc)
#   LEAK_CALLS       library calls in the valgrind run (default: 1200, at least 1000)
# A missing tool is an error, never a skip. valgrind is installed with apt-get when missing and
# the script runs as root.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
fail() { echo "hosts/c/run-tests.sh: $*" >&2; exit 1; }

CC="${CC:-cc}"
command -v "$CC" >/dev/null 2>&1 || fail "no C compiler: $CC (install gcc or clang, or set CC)"
command -v python3 >/dev/null 2>&1 || fail "python3 is required to check the host's answers"
. "$repo/scripts/lib/need-tool.sh"
need_tool valgrind valgrind hosts/c/run-tests.sh "the leak check runs under valgrind memcheck"

target="${CARGO_TARGET_DIR:-$repo/target}"
HERDR_LINK_LIB="${HERDR_LINK_LIB:-$target/release/libherdr_link.so}"
HERDR_FAKE_BIN="${HERDR_FAKE_BIN:-$target/release/herdr}"
[ -f "$HERDR_LINK_LIB" ] || fail "library not found: $HERDR_LINK_LIB (build it: cargo build --release; or set HERDR_LINK_LIB)"
[ -x "$HERDR_FAKE_BIN" ] || fail "fake herdr not found: $HERDR_FAKE_BIN (build it: cargo build --release -p fake-herdr; or set HERDR_FAKE_BIN)"
HERDR_LINK_LIB="$(cd "$(dirname "$HERDR_LINK_LIB")" && pwd)/$(basename "$HERDR_LINK_LIB")"
HERDR_FAKE_BIN="$(cd "$(dirname "$HERDR_FAKE_BIN")" && pwd)/$(basename "$HERDR_FAKE_BIN")"
export HERDR_FAKE_BIN
LEAK_CALLS="${LEAK_CALLS:-1200}"
[ "$LEAK_CALLS" -ge 1000 ] 2>/dev/null || fail "LEAK_CALLS must be a number >= 1000"

work="$(mktemp -d "${TMPDIR:-/tmp}/herdr-link-c-tests.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The library is linked by its file name, so give the linker a directory holding exactly it.
libdir="$work/lib"
mkdir -p "$libdir"
ln -s "$HERDR_LINK_LIB" "$libdir/libherdr_link.so"
host="$work/herdr-link-host"

echo "== build ($CC, -Werror)"
"$CC" -std=c11 -Wall -Wextra -Werror -pedantic -O1 -g \
  -I "$repo/include" -o "$host" "$here/herdr-link-host.c" \
  -L "$libdir" -lherdr_link -Wl,-rpath,"$libdir"

version="$(sed -n 's/^version *= *"\(.*\)"/\1/p' "$repo/Cargo.toml" | head -n 1)"
[ -n "$version" ] || fail "cannot read the crate version from Cargo.toml"

echo "== scenario"
HERDR_LINK_VERSION="$version" python3 "$here/tests/check_host.py" scenario "$host"

echo "== valgrind memcheck, $LEAK_CALLS library calls"
python3 "$here/tests/check_host.py" leak-script "$work/leak.txt" "$LEAK_CALLS"
state="$work/leak-state.json"
python3 - "$here/tests" <<'PY' | HERDR_FAKE_STATE="$state" "$HERDR_FAKE_BIN" fake world >/dev/null
import json, sys
sys.path.insert(0, sys.argv[1])
import check_host
print(json.dumps(check_host.WORLD))
PY
status=0
env -u HERDR_LINK_LOG HERDR_ENV=1 HERDR_BIN_PATH="$HERDR_FAKE_BIN" HERDR_PANE_ID=w1:p1 \
  HERDR_FAKE_STATE="$state" \
  valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect,possible \
    --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
    --log-file="$work/valgrind.log" \
    "$host" <"$work/leak.txt" >"$work/leak.out" || status=$?
if [ "$status" != 0 ]; then
  cat "$work/valgrind.log" >&2
  fail "the host under valgrind exited with $status"
fi
python3 "$here/tests/check_host.py" leak-check "$work/valgrind.log" "$work/leak.out" \
  "$(grep -c '' "$work/leak.txt")" \
  || { cat "$work/valgrind.log" >&2; exit 1; }

echo "hosts/c: all tests passed"
