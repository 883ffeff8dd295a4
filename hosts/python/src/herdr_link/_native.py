"""Finding and loading the herdr-link shared library, and its C signatures.

Nothing here is loaded at import time: ``import herdr_link`` works without the library, and the
first :class:`herdr_link.Link` loads it.
"""

from __future__ import annotations

import ctypes
import os
import sys
import sysconfig
from typing import List, Mapping, Optional, Sequence

LIB_ENV = "HERDR_LINK_LIB"

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class LibraryNotFoundError(OSError):
    """The herdr-link shared library is not where it was looked for.

    ``tried`` lists every path that was checked, in order.
    """

    def __init__(self, message: str, tried: Sequence[str]) -> None:
        super().__init__(message)
        self.tried = list(tried)


class WrongLibraryError(OSError):
    """The file found is not a herdr-link library this package can use: not loadable, not
    herdr-link (a C function is missing), or another version. ``path`` is the file."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


#: Every C function the package calls.
FUNCTIONS = (
    "hl_session_start",
    "hl_session_end",
    "hl_tool_call",
    "hl_is_active",
    "hl_bash_guard",
    "hl_bash_guard_in_style",
    "hl_presentation",
    "hl_free",
    "hl_version",
)


def library_filename(platform: Optional[str] = None) -> str:
    """The library's file name on `platform` (default: this one)."""
    platform = sys.platform if platform is None else platform
    if platform.startswith("win") or platform == "cygwin":
        return "herdr_link.dll"
    if platform == "darwin":
        return "libherdr_link.dylib"
    return "libherdr_link.so"


def bundled_filename() -> str:
    """The name the wheel build gives the library it bundles inside the package (setuptools-rust
    names it like an extension module: ``libherdr_link`` + ``EXT_SUFFIX``)."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    return "libherdr_link" + suffix


def _is_repo_root(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "Cargo.toml")) and os.path.isfile(
        os.path.join(path, "include", "herdr_link.h")
    )


def _ancestors(path: str) -> List[str]:
    out = []
    path = os.path.abspath(path)
    while True:
        out.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            return out
        path = parent


def repo_roots(package_dir: str, cwd: str) -> List[str]:
    """herdr-link checkouts above the package and above the working directory, nearest first."""
    roots: List[str] = []
    for start in (package_dir, cwd):
        for d in _ancestors(start):
            if d not in roots and _is_repo_root(d):
                roots.append(d)
    return roots


def candidate_paths(
    environ: Optional[Mapping[str, str]] = None,
    package_dir: Optional[str] = None,
    cwd: Optional[str] = None,
    filename: Optional[str] = None,
) -> List[str]:
    """Where the library is looked for, in order.

    1. ``$HERDR_LINK_LIB`` -- when it is set (and not empty), it is the only candidate;
    2. next to the package (``herdr_link/<library file>``), then the library the wheel bundles
       (``herdr_link/libherdr_link<EXT_SUFFIX>``);
    3. ``$CARGO_TARGET_DIR/release``, then ``$CARGO_TARGET_DIR/debug``;
    4. ``target/release``, then ``target/debug`` of the herdr-link checkout that contains the
       package or the working directory.
    """
    environ = os.environ if environ is None else environ
    package_dir = PACKAGE_DIR if package_dir is None else package_dir
    cwd = os.getcwd() if cwd is None else cwd
    name = library_filename() if filename is None else filename

    explicit = environ.get(LIB_ENV, "")
    if explicit:
        return [os.path.join(cwd, explicit) if not os.path.isabs(explicit) else explicit]

    out = [os.path.join(package_dir, name)]
    if filename is None:
        out.append(os.path.join(package_dir, bundled_filename()))
    target = environ.get("CARGO_TARGET_DIR", "")
    if target:
        target = target if os.path.isabs(target) else os.path.join(cwd, target)
        out += [os.path.join(target, "release", name), os.path.join(target, "debug", name)]
    for root in repo_roots(package_dir, cwd):
        out += [
            os.path.join(root, "target", "release", name),
            os.path.join(root, "target", "debug", name),
        ]
    seen = set()
    unique = []
    for p in out:
        p = os.path.normpath(p)
        if p not in seen:
            seen.add(p)
            unique.append(p)
    return unique


def find_library(
    environ: Optional[Mapping[str, str]] = None,
    package_dir: Optional[str] = None,
    cwd: Optional[str] = None,
    filename: Optional[str] = None,
) -> str:
    """The first existing file of :func:`candidate_paths`; :class:`LibraryNotFoundError` if none."""
    environ = os.environ if environ is None else environ
    tried = candidate_paths(environ, package_dir, cwd, filename)
    for path in tried:
        if os.path.isfile(path):
            return path
    if environ.get(LIB_ENV, ""):
        raise LibraryNotFoundError(
            f"{LIB_ENV} is set but names no file: {tried[0]}", tried
        )
    raise LibraryNotFoundError(
        "herdr-link library not found; build it (cargo build --release), set "
        f"{LIB_ENV}, or copy it next to the herdr_link package. Tried: " + ", ".join(tried),
        tried,
    )


class Native:
    """The loaded library with every function's argtypes and restype declared.

    Functions that return a ``char*`` the caller must release are declared to return
    ``c_void_p``: ctypes then hands back the raw address, which :meth:`take` copies and releases
    with ``hl_free``. (``c_char_p`` would copy the text and lose the pointer.)
    """

    def __init__(self, path: str, expected_version: Optional[str] = None) -> None:
        self.path = path
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise WrongLibraryError(
                f"{path} is not a loadable herdr-link library ({e}); rebuild it "
                "(cargo build --release) or point HERDR_LINK_LIB at libherdr_link",
                path,
            ) from None
        missing = [name for name in FUNCTIONS if not hasattr(lib, name)]
        if missing:
            raise WrongLibraryError(
                f"{path} is not the herdr-link library: it has no {', '.join(missing)}",
                path,
            )
        self._lib = lib

        lib.hl_session_start.argtypes = [ctypes.c_char_p]
        lib.hl_session_start.restype = None
        lib.hl_session_end.argtypes = [ctypes.c_char_p]
        lib.hl_session_end.restype = None
        lib.hl_tool_call.argtypes = [ctypes.c_char_p]
        lib.hl_tool_call.restype = ctypes.c_void_p
        lib.hl_is_active.argtypes = [ctypes.c_char_p]
        lib.hl_is_active.restype = ctypes.c_int32
        lib.hl_bash_guard.argtypes = [
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.POINTER(ctypes.c_void_p),
        ]
        lib.hl_bash_guard.restype = ctypes.c_int32
        lib.hl_bash_guard_in_style.argtypes = [
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.POINTER(ctypes.c_void_p),
        ]
        lib.hl_bash_guard_in_style.restype = ctypes.c_int32
        lib.hl_presentation.argtypes = [ctypes.c_char_p]
        lib.hl_presentation.restype = ctypes.c_void_p
        lib.hl_free.argtypes = [ctypes.c_void_p]
        lib.hl_free.restype = None
        lib.hl_version.argtypes = []
        lib.hl_version.restype = ctypes.c_char_p  # static: copied, never released

        # Instance attributes, so a test can wrap one of them for a single Link.
        self.hl_session_start = lib.hl_session_start
        self.hl_session_end = lib.hl_session_end
        self.hl_tool_call = lib.hl_tool_call
        self.hl_is_active = lib.hl_is_active
        self.hl_bash_guard = lib.hl_bash_guard
        self.hl_bash_guard_in_style = lib.hl_bash_guard_in_style
        self.hl_presentation = lib.hl_presentation
        self.hl_free = lib.hl_free
        self.hl_version = lib.hl_version

        if expected_version is not None:
            raw = lib.hl_version()
            found = raw.decode("utf-8", errors="replace") if raw else ""
            if found != expected_version:
                raise WrongLibraryError(
                    f"{path} is herdr-link {found or '(no version)'}, but this herdr_link "
                    f"package is {expected_version}: install matching versions",
                    path,
                )

    def take(self, address: Optional[int]) -> Optional[str]:
        """Copies the library string at `address`, releases it with ``hl_free``, returns it.

        ``None`` (NULL) gives ``None``. The string is released even if decoding fails.
        """
        if not address:
            return None
        try:
            raw = ctypes.string_at(address)
        finally:
            self.hl_free(address)
        return raw.decode("utf-8", errors="replace")
