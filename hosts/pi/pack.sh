#!/usr/bin/env bash
# Packs the Pi extension as a self-contained package: the extension's TypeScript sources, koffi
# (bundled, with its prebuilt binary for this platform) and the herdr-link library next to them,
# so `pi install <unpacked dir>` works with no checkout and no HERDR_LINK_LIB.
#
# Usage: hosts/pi/pack.sh [OUT_DIR]     (default: <cargo target dir>/pi-package)
# Gives OUT_DIR/herdr-link-pi/ (the package directory) and OUT_DIR/herdr-link-pi-<version>.tgz
# (the same as an npm pack tarball; it unpacks to package/).
# Env: HERDR_LINK_LIB  the library to ship (default: cargo build --release --lib, then
#                      target/release/libherdr_link.so)
# Needs cargo (unless HERDR_LINK_LIB is given), node and npm. The result is platform-specific.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}"
out="${1:-$target/pi-package}"
case "$(uname -s)" in
  Darwin) libname=libherdr_link.dylib ;;
  *) libname=libherdr_link.so ;;
esac

lib="${HERDR_LINK_LIB:-}"
if [ -z "$lib" ]; then
  echo "== cargo build --release --lib"
  (cd "$repo" && cargo build --release --lib)
  lib="$target/release/$libname"
fi
[ -f "$lib" ] || { echo "pack.sh: library not found: $lib" >&2; exit 1; }

mkdir -p "$out"
out="$(cd "$out" && pwd)"
stage="$out/herdr-link-pi"
rm -rf "$stage"
mkdir -p "$stage"
cp "$here/package.json" "$here/package-lock.json" "$here/README.md" "$stage/"
# -L: src/native.ts is a link to the shared binding (hosts/node/herdr-link.ts); ship the file.
cp -RL "$here/src" "$stage/src"
cp "$lib" "$stage/$libname"
echo "== npm ci --omit=dev (koffi, bundled into the package)"
(cd "$stage" && npm ci --omit=dev --no-audit --no-fund --loglevel=error)
echo "== npm pack"
tarball="$(cd "$stage" && npm pack --silent --pack-destination "$out")"
echo "package directory: $stage"
echo "tarball: $out/$tarball"
