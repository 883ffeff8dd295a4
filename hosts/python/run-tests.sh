#!/usr/bin/env bash
# Tests the Python package (hosts/python): pip-installs it into a fresh virtual environment and
# runs its unittest suite against the fake Herdr with the installed package (not the source
# tree).
#
# Env:
#   HERDR_LINK_LIB   the built library (default: $CARGO_TARGET_DIR or ../../target, release/)
#   HERDR_FAKE_BIN   the fake `herdr` binary (same default directory)
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
case "$(uname -s)" in
  Darwin) libname=libherdr_link.dylib ;;
  *) libname=libherdr_link.so ;;
esac
HERDR_LINK_LIB="${HERDR_LINK_LIB:-$target/release/$libname}"
HERDR_FAKE_BIN="${HERDR_FAKE_BIN:-$target/release/herdr}"
[ -f "$HERDR_LINK_LIB" ] || fail "library not found: $HERDR_LINK_LIB (build it: cargo build --release; or set HERDR_LINK_LIB)"
[ -x "$HERDR_FAKE_BIN" ] || fail "fake herdr not found: $HERDR_FAKE_BIN (build it: cargo build --release -p fake-herdr; or set HERDR_FAKE_BIN)"
HERDR_LINK_LIB="$(cd "$(dirname "$HERDR_LINK_LIB")" && pwd)/$(basename "$HERDR_LINK_LIB")"
HERDR_FAKE_BIN="$(cd "$(dirname "$HERDR_FAKE_BIN")" && pwd)/$(basename "$HERDR_FAKE_BIN")"
export HERDR_LINK_LIB HERDR_FAKE_BIN

venv="${HERDR_LINK_PY_VENV:-$target/py-venv}"
work="$(mktemp -d "${TMPDIR:-/tmp}/herdr-link-py-tests.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "== virtual environment: $venv"
"$PYTHON" -m venv --clear "$venv"
py="$venv/bin/python"

# Build from a copy, so that setuptools' build/ and *.egg-info never land in the source tree.
cp -R "$here/pyproject.toml" "$here/README.md" "$here/src" "$work/"
rm -rf "$work"/src/*.egg-info
echo "== pip install hosts/python"
if "$py" - <<'PY'
import sys
try:
    import setuptools, wheel  # noqa: F401
except ImportError:
    sys.exit(1)
sys.exit(0 if int(setuptools.__version__.split(".")[0]) >= 61 else 1)
PY
then
  # The venv already has a usable build backend: no index needed.
  "$py" -m pip install --quiet --no-build-isolation "$work"
else
  "$py" -m pip install --quiet "$work"
fi

echo "== unittest"
cd "$repo"
unset PYTHONPATH
HERDR_LINK_PY_EXPECT_INSTALLED=1 "$py" -m unittest discover -s hosts/python/tests -t hosts/python/tests -v

echo "hosts/python: all tests passed"
