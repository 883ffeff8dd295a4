# Sourced by the test scripts: `need_tool CMD PACKAGE WHO WHY` makes sure the command CMD exists,
# installing the Debian package PACKAGE with apt-get when it is missing and the script runs as
# root; otherwise it stops the calling script (WHO: its name for the message; WHY: what needs
# it). A missing tool is an error, never a skip.
need_tool() {
  local cmd=$1 pkg=$2 who=$3 why=$4
  command -v "$cmd" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "$who: installing $pkg" >&2
    if ! { DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null; }; then
      echo "$who: could not install $pkg with apt-get" >&2
      exit 1
    fi
  fi
  command -v "$cmd" >/dev/null 2>&1 && return 0
  echo "$who: $cmd is not installed (apt-get install $pkg): $why" >&2
  exit 1
}
