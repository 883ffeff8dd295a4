"""Python bindings for herdr-link, the native Herdr Link (herdr-link/1) library.

A thin, typed layer over the library's C ABI (``include/herdr_link.h``) through ctypes: no
protocol logic lives here. ::

    import herdr_link

    link = herdr_link.Link()                     # finds and loads libherdr_link
    with link.session("my-session") as s:        # hl_session_start ... hl_session_end
        s.presentation("deferred")               # {"tools": [...], "contract": None}
        reply = s.call("herdr_link", style="deferred")  # activate
        reply.result                             # {"status": "active", ...}
        reply.contract                           # the Contract: show it with this result
        s.tool_call("herdr_link_peers")          # {"self": {...}, "peers": [...]}
        verdict = s.bash_guard("herdr agent wait reviewer", style="deferred")
        if verdict:                              # Verdict.BLOCK or Verdict.BLOCK_END_TURN
            print(verdict.name, verdict.reason)

Errors: a Link failure raises :class:`LinkError` (``.code`` is one of :data:`LINK_CODES` or
``INTERNAL_ERROR``); a malformed request raises :class:`InvalidRequest`, a ``ValueError``.
Arguments that cannot cross the C boundary (a NUL character, a lone surrogate) raise
``ValueError`` before any library call; arguments of the wrong type raise ``TypeError``.

Every call may be made from any thread; ctypes releases the GIL while the library works.
"""

from __future__ import annotations

import ctypes
import enum
import json
import os
import uuid
from typing import Any, Dict, Mapping, NamedTuple, Optional, Union

from ._codes import INTERNAL_ERROR, INVALID_REQUEST, LINK_CODES
from ._native import (
    LIB_ENV,
    LibraryNotFoundError,
    Native,
    WrongLibraryError,
    candidate_paths,
    find_library,
)

__version__ = "0.1.0"

__all__ = [
    "LINK_CODES",
    "LIB_ENV",
    "InvalidRequest",
    "LibraryNotFoundError",
    "Link",
    "LinkError",
    "Reply",
    "Session",
    "Style",
    "Verdict",
    "WrongLibraryError",
    "candidate_paths",
    "find_library",
]

PathLike = Union[str, "os.PathLike[str]"]


# --- errors -------------------------------------------------------------------------------------


class LinkError(Exception):
    """A Link failure reported by the library.

    ``code`` is a Link code (or ``INTERNAL_ERROR``); ``message`` is the model-facing text
    ``"CODE: reason"``, which is also ``str(error)``. ``active`` and ``tools_changed`` are the
    session's state after the failed call, as the library reported it; ``contract`` is the
    Contract when the failed call was the one that activated the session (show it to the model
    with the error), else ``None``.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        active: bool = False,
        tools_changed: bool = False,
        contract: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.active = active
        self.tools_changed = tools_changed
        self.contract = contract

    def __repr__(self) -> str:
        return f"LinkError(code={self.code!r}, message={self.message!r})"


class InvalidRequest(ValueError):
    """The library refused a malformed request (code ``INVALID_REQUEST``): a host bug."""

    code = INVALID_REQUEST

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _internal(what: str) -> "LinkError":
    """An ``INTERNAL_ERROR`` of this package's own: the library answered something unusable."""
    return LinkError(INTERNAL_ERROR, f"{INTERNAL_ERROR}: {what}")


def _raise_for(doc: Mapping[str, Any]) -> None:
    """Raises the exception that a failed library document describes."""
    error = doc.get("error")
    if not isinstance(error, Mapping):
        error = {}
    code = error.get("code")
    message = error.get("message")
    if not isinstance(code, str):
        code = INTERNAL_ERROR
    if not isinstance(message, str):
        message = f"{code}: the library gave no message"
    if code == InvalidRequest.code:
        raise InvalidRequest(message)
    contract = doc.get("contract")
    raise LinkError(
        code,
        message,
        active=doc.get("active") is True,
        tools_changed=doc.get("tools_changed") is True,
        contract=contract if isinstance(contract, str) else None,
    )


# --- values -------------------------------------------------------------------------------------


class Reply(NamedTuple):
    """One successful tool call as :meth:`Link.call` returns it.

    ``result`` is the result object (show it to the model as the tool's result); ``contract``
    is the Contract text on the call that activated the session and on every activation call
    (show it to the model together with the result, so its next step sees the rules), else
    ``None``; ``active`` and ``tools_changed`` are the session's state after the call
    (``tools_changed``: refresh the tools you show, from :meth:`Link.presentation`).
    """

    result: Dict[str, Any]
    contract: Optional[str]
    active: bool
    tools_changed: bool


class Style(str, enum.Enum):
    """How a host shows Link to its model (``hl_presentation``'s ``style``)."""

    DEFERRED = "deferred"  # five registered tools, Tier 1 enabled on activation (Pi)
    GATEWAY = "gateway"  # one `herdr_link` tool with an `action` argument (OpenCode)
    MCP = "mcp"  # shared MCP server (Claude Code, Codex, ...)


class Verdict(int):
    """The guard's decision on one Bash command: an ``int`` (0, 1 or 2) with a ``reason``.

    ``Verdict.ALLOW`` (0)
        run the command; falsy, ``reason`` is ``None``.
    ``Verdict.BLOCK`` (1)
        block it; the model keeps its turn and should use ``herdr_link_send``.
    ``Verdict.BLOCK_END_TURN`` (2)
        block it and end the turn; the reply arrives as an inbound Herdr Link message.

    A verdict compares equal to its number and to the class constants (``v == Verdict.BLOCK``),
    whatever its reason. ``reason`` is the library's model-facing text for a block.
    """

    ALLOW: "Verdict"
    BLOCK: "Verdict"
    BLOCK_END_TURN: "Verdict"

    _NAMES = ("ALLOW", "BLOCK", "BLOCK_END_TURN")

    reason: Optional[str]

    def __new__(cls, value: int, reason: Optional[str] = None) -> "Verdict":
        number = int(value)
        if number not in (0, 1, 2) or number != value:
            raise ValueError(f"{value!r} is not a guard verdict (0, 1 or 2)")
        self = super().__new__(cls, number)
        self.reason = reason
        return self

    @property
    def name(self) -> str:
        """``"ALLOW"``, ``"BLOCK"`` or ``"BLOCK_END_TURN"``."""
        return self._NAMES[int(self)]

    @property
    def value(self) -> int:
        return int(self)

    @property
    def blocked(self) -> bool:
        """True for BLOCK and BLOCK_END_TURN."""
        return int(self) != 0

    @property
    def ends_turn(self) -> bool:
        """True for BLOCK_END_TURN."""
        return int(self) == 2

    def __repr__(self) -> str:
        if self.reason is None:
            return f"<Verdict.{self.name}: {int(self)}>"
        return f"<Verdict.{self.name}: {int(self)} reason={self.reason!r}>"

    def __str__(self) -> str:
        return self.name

    def __reduce__(self):  # type: ignore[override]
        return (Verdict, (int(self), self.reason))


Verdict.ALLOW = Verdict(0)
Verdict.BLOCK = Verdict(1)
Verdict.BLOCK_END_TURN = Verdict(2)


# --- argument checks ----------------------------------------------------------------------------


def _c_string(value: Any, what: str, *, allow_bytes: bool = False, allow_empty: bool = True) -> bytes:
    """`value` as the bytes of a C string, or TypeError/ValueError before it reaches C."""
    if isinstance(value, str):
        data = value.encode("utf-8")  # a lone surrogate raises UnicodeEncodeError (a ValueError)
    elif allow_bytes and isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
    else:
        kinds = "str or bytes" if allow_bytes else "str"
        raise TypeError(f"{what} must be {kinds}, not {type(value).__name__}")
    if b"\x00" in data:
        raise ValueError(f"{what} contains a NUL character, which a C string cannot carry")
    if not allow_empty and not data:
        raise ValueError(f"{what} must not be empty")
    return data


def _session_key(value: Any) -> bytes:
    return _c_string(value, "session key", allow_empty=False)


def _json_bytes(document: Mapping[str, Any]) -> bytes:
    # allow_nan=False: NaN and Infinity are not JSON. Unserialisable values raise TypeError.
    text = json.dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return _c_string(text, "request")


def _input_object(value: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"tool input must be a mapping, not {type(value).__name__}")
    return dict(value)


def _style_name(style: Union[Style, str]) -> str:
    if isinstance(style, Style):
        return style.value
    if not isinstance(style, str):
        raise TypeError(f"style must be a Style or str, not {type(style).__name__}")
    return style


# --- the library --------------------------------------------------------------------------------


class Link:
    """The herdr-link library, loaded.

    ``path`` is the library file; by default it is found with :func:`find_library`
    (``$HERDR_LINK_LIB``, then next to this package, then the cargo target directory).
    Loading the same file again gives the same library state: sessions are per process.
    """

    def __init__(self, path: Optional[PathLike] = None) -> None:
        if path is None:
            resolved = find_library()
        else:
            # Absolute, so that dlopen never searches the system paths for a bare file name.
            resolved = os.path.abspath(os.fsdecode(os.fspath(path)))
            if not os.path.isfile(resolved):
                raise LibraryNotFoundError(f"no library file at {resolved}", [resolved])
        self._native = Native(resolved, expected_version=__version__)

    @property
    def path(self) -> str:
        """The loaded library file."""
        return self._native.path

    def version(self) -> str:
        """The library version (``hl_version``), equal to the crate version."""
        raw = self._native.hl_version()
        return raw.decode("utf-8") if raw else ""

    # sessions

    def session(self, key: Optional[str] = None) -> "Session":
        """A :class:`Session` handle for `key` (default: a fresh unique key). It is not started
        until :meth:`Session.start` or ``with``."""
        return Session(self, key)

    def session_start(self, session: str) -> None:
        """Registers `session` (or resets it) as dormant; starts the identity bootstrap in the
        background. Never blocks."""
        self._native.hl_session_start(_session_key(session))

    def session_end(self, session: str) -> None:
        """Forgets `session`."""
        self._native.hl_session_end(_session_key(session))

    def is_active(self, session: str) -> bool:
        """True when `session` is active (its Tier 1 tools and Contract are visible)."""
        return self._native.hl_is_active(_session_key(session)) == 1

    # calls

    def call_raw(self, request: Union[Mapping[str, Any], str]) -> Dict[str, Any]:
        """``hl_tool_call`` with a whole request, returning the whole response document
        (``ok``, ``result`` or ``error``, ``active``, ``tools_changed``) without raising for
        Link errors. `request` is a mapping or JSON text."""
        if isinstance(request, str):
            data = _c_string(request, "request")
        elif isinstance(request, Mapping):
            data = _json_bytes(request)
        else:
            raise TypeError(f"request must be a mapping or str, not {type(request).__name__}")
        return self._document(self._native.hl_tool_call(data), "hl_tool_call")

    def tool_call(
        self,
        session: str,
        tool: str,
        input: Optional[Mapping[str, Any]] = None,
        context_dir: Optional[PathLike] = None,
        style: Optional[Union[Style, str]] = None,
    ) -> Dict[str, Any]:
        """Runs one tool call and returns its result object (:meth:`call` gives the Contract
        and the session state too).

        Raises :class:`LinkError` for a Link failure and :class:`InvalidRequest` (a
        ``ValueError``) for a malformed request. `context_dir` is where ``herdr_link_start``
        looks for ``.agents/agent_config.json`` (default: the process working directory).
        `style` is the presentation style the host shows its model: the gateway dispatches an
        ``action`` in the gateway and MCP styles and when no style is given, and only activates
        in the deferred style.
        """
        return self.call(session, tool, input, context_dir, style).result

    def call(
        self,
        session: str,
        tool: str,
        input: Optional[Mapping[str, Any]] = None,
        context_dir: Optional[PathLike] = None,
        style: Optional[Union[Style, str]] = None,
    ) -> Reply:
        """:meth:`tool_call`, returning a :class:`Reply`: the result, the Contract the call
        carries (on activation) and the session state. Raises as :meth:`tool_call` does."""
        request: Dict[str, Any] = {
            "session": _session_key(session).decode("utf-8"),
            "tool": _c_string(tool, "tool").decode("utf-8"),
            "input": _input_object(input),
        }
        if style is not None:
            request["style"] = _style_name(style)
        if context_dir is not None:
            directory = os.fsdecode(os.fspath(context_dir))
            _c_string(directory, "context_dir", allow_empty=False)
            request["context_dir"] = directory
        doc = self._document(self._native.hl_tool_call(_json_bytes(request)), "hl_tool_call")
        if doc.get("ok") is True:
            result = doc.get("result")
            contract = doc.get("contract")
            return Reply(
                result if isinstance(result, dict) else {"value": result},
                contract if isinstance(contract, str) else None,
                doc.get("active") is True,
                doc.get("tools_changed") is True,
            )
        _raise_for(doc)
        raise AssertionError("unreachable")  # pragma: no cover

    def bash_guard(
        self,
        session: str,
        command: Union[str, bytes],
        style: Optional[Union[Style, str]] = None,
    ) -> Verdict:
        """Judges one Bash command of `session`. Dormant or unknown sessions always get
        ``Verdict.ALLOW``. `command` may be bytes (judged on its lossy UTF-8 text). With
        `style` (the one the host shows its model) a block's reason names the way to send the
        model has in that style; without it the words hold in every style. The verdict never
        depends on `style`."""
        key = _session_key(session)
        data = _c_string(command, "command", allow_bytes=True)
        reason = ctypes.c_void_p()
        if style is None:
            number = self._native.hl_bash_guard(key, data, ctypes.byref(reason))
        else:
            name = _c_string(_style_name(style), "style")
            number = self._native.hl_bash_guard_in_style(key, data, name, ctypes.byref(reason))
        text = self._native.take(reason.value)
        if number not in (0, 1, 2):
            raise _internal(f"unknown guard verdict {number}")
        return Verdict(number, text)

    def presentation(
        self, session: str, style: Union[Style, str], catalog: bool = False
    ) -> Dict[str, Any]:
        """The model-visible surface of `session` now: ``{"tools": [...], "contract": str|None}``.

        `catalog` asks for every tool regardless of the session's state. An unknown style
        raises :class:`InvalidRequest`.
        """
        request: Dict[str, Any] = {
            "session": _session_key(session).decode("utf-8"),
            "style": _style_name(style),
        }
        if catalog:
            request["view"] = "catalog"
        doc = self._document(
            self._native.hl_presentation(_json_bytes(request)), "hl_presentation"
        )
        if "error" in doc:
            _raise_for(doc)
        return doc

    def _document(self, address: Optional[int], function: str) -> Dict[str, Any]:
        text = self._native.take(address)
        if text is None:
            raise _internal(f"{function} returned NULL")
        try:
            doc = json.loads(text)
        except ValueError as e:
            raise _internal(f"{function} returned non-JSON text ({e})") from None
        if not isinstance(doc, dict):
            raise _internal(f"{function} returned {doc!r}")
        return doc

    def __repr__(self) -> str:
        return f"Link(path={self.path!r})"


class Session:
    """One host session (one conversation) of a :class:`Link`.

    As a context manager it starts the session on entry and ends it on exit::

        with link.session() as s:
            s.tool_call("herdr_link", {})
    """

    def __init__(self, link: Link, key: Optional[str] = None) -> None:
        if key is None:
            key = "py-" + uuid.uuid4().hex
        _session_key(key)
        self.link = link
        self.key = key

    def start(self) -> "Session":
        """Registers the session as dormant (``hl_session_start``)."""
        self.link.session_start(self.key)
        return self

    def end(self) -> None:
        """Forgets the session (``hl_session_end``)."""
        self.link.session_end(self.key)

    def __enter__(self) -> "Session":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.end()

    def is_active(self) -> bool:
        return self.link.is_active(self.key)

    def tool_call(
        self,
        tool: str,
        input: Optional[Mapping[str, Any]] = None,
        context_dir: Optional[PathLike] = None,
        style: Optional[Union[Style, str]] = None,
    ) -> Dict[str, Any]:
        """See :meth:`Link.tool_call`."""
        return self.link.tool_call(self.key, tool, input, context_dir, style)

    def call(
        self,
        tool: str,
        input: Optional[Mapping[str, Any]] = None,
        context_dir: Optional[PathLike] = None,
        style: Optional[Union[Style, str]] = None,
    ) -> Reply:
        """See :meth:`Link.call`."""
        return self.link.call(self.key, tool, input, context_dir, style)

    def bash_guard(
        self, command: Union[str, bytes], style: Optional[Union[Style, str]] = None
    ) -> Verdict:
        """See :meth:`Link.bash_guard`."""
        return self.link.bash_guard(self.key, command, style)

    def presentation(self, style: Union[Style, str], catalog: bool = False) -> Dict[str, Any]:
        """See :meth:`Link.presentation`."""
        return self.link.presentation(self.key, style, catalog)

    def __repr__(self) -> str:
        return f"Session(key={self.key!r})"
