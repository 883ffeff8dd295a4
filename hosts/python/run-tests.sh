#!/usr/bin/env bash
# Tests the Python package (hosts/python) as users get it: `pip install ./hosts/python` into a
# fresh virtual environment builds the wheel, which compiles the herdr-link library with cargo
# (setuptools-rust) and ships it inside the package; the unittest suite then runs against the
# installed package and the library it bundles (not the source tree, not target/).
#
# Env:
#   HERDR_FAKE_BIN   the fake `herdr` binary (default: $CARGO_TARGET_DIR or ../../target, release/)
#   SETUPTOOLS_RUST_CARGO_PROFILE  cargo profile of the bundled library (default here: dev, which
#                    reuses the debug build; a user's `pip install` builds release)
#   PYTHON           the interpreter to test with (default: python3; 3.8 or newer)
#   HERDR_LINK_PY_VENV  where the virtual environment goes (default: <target>/py-venv)
# A missing runtime is an error, never a skip.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
fail() { echo "hosts/python/run-tests.sh: $*" >&2; exit 1; }

PYTHON="${PYTHON:-python3}"
command -v "$PYTHON" >/dev/null 2>&1 || fail "$PYTHON is not installed (Python >= 3.8 is required)"
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 8) else 1)' \
  || fail "Python >= 3.8 is required, found $("$PYTHON" --version 2>&1)"
"$PYTHON" -c 'import venv, ensurepip' 2>/dev/null \
  || fail "$PYTHON has no venv/ensurepip module (Debian: apt-get install python3-venv)"

target="${CARGO_TARGET_DIR:-$repo/target}"
HERDR_FAKE_BIN="${HERDR_FAKE_BIN:-$target/release/herdr}"
[ -x "$HERDR_FAKE_BIN" ] || fail "fake herdr not found: $HERDR_FAKE_BIN (build it: cargo build --release -p fake-herdr; or set HERDR_FAKE_BIN)"
HERDR_FAKE_BIN="$(cd "$(dirname "$HERDR_FAKE_BIN")" && pwd)/$(basename "$HERDR_FAKE_BIN")"
export HERDR_FAKE_BIN
export SETUPTOOLS_RUST_CARGO_PROFILE="${SETUPTOOLS_RUST_CARGO_PROFILE:-dev}"

venv="${HERDR_LINK_PY_VENV:-$target/py-venv}"
echo "== virtual environment: $venv"
"$PYTHON" -m venv --clear "$venv"
py="$venv/bin/python"

echo "== pip install ./hosts/python (builds the wheel: cargo compiles the library, profile $SETUPTOOLS_RUST_CARGO_PROFILE)"
# No HERDR_LINK_LIB anywhere from here on unless we set it to the installed library below.
unset HERDR_LINK_LIB
(cd "$repo" && "$py" -m pip install --quiet ./hosts/python)

echo "== import herdr_link with no environment variable"
bundled="$(cd / && env -u CARGO_TARGET_DIR "$py" -c 'import herdr_link; l = herdr_link.Link(); print(l.path)')"
case "$bundled" in
  "$venv"/*) echo "loaded $bundled" ;;
  *) fail "the installed package loaded $bundled, not the library it bundles" ;;
esac
# The suite loads exactly that library.
export HERDR_LINK_LIB="$bundled"

echo "== unittest"
cd "$repo"
unset PYTHONPATH
HERDR_LINK_PY_EXPECT_INSTALLED=1 "$py" -m unittest discover -s hosts/python/tests -t hosts/python/tests -v

echo "hosts/python: all tests passed"
