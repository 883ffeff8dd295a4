# Generated from the library's error table (src/error.rs) by tests/error_table.rs; do not
# edit: `HERDR_LINK_BLESS=1 cargo test --test error_table` rewrites it.
"""The codes a herdr-link response can carry, from the library's one error table."""

#: The ten Link codes (PROTOCOL §7). ``INTERNAL_ERROR`` is not one of them, but also raises
#: :class:`LinkError`.
LINK_CODES = frozenset(
    {
        "NOT_IN_HERDR",
        "SELF_UNNAMED",
        "PEER_NOT_FOUND",
        "SEND_FAILED",
        "CLOSE_FAILED",
        "START_CONFIG_NOT_FOUND",
        "START_AGENT_NOT_FOUND",
        "START_CONFIG_INVALID",
        "START_INPUT_INVALID",
        "START_FAILED",
    }
)

#: Every fixed model-facing text: ``(code, text)``, shown as ``"CODE: text"``.
REASONS = (
    ("NOT_IN_HERDR", "Herdr environment is unavailable"),
    ("SELF_UNNAMED", "Herdr Link could not establish a stable Agent Name"),
    ("PEER_NOT_FOUND", "target agent is not a live peer"),
    ("SEND_FAILED", "Herdr did not accept message delivery"),
    ("SEND_FAILED", "deliveries to this agent are stuck behind an earlier one; nothing was sent"),
    ("SEND_FAILED", "Herdr did not confirm delivery in time; the message may still arrive, so do not send it again"),
    ("CLOSE_FAILED", "Herdr pane close failed"),
    ("CLOSE_FAILED", "a delivery to this agent is stuck; the agent was not closed"),
    ("START_CONFIG_NOT_FOUND", "configured Agent start configuration was not found"),
    ("START_AGENT_NOT_FOUND", "configured Agent start entry was not found"),
    ("START_CONFIG_INVALID", "configured Agent start configuration is invalid"),
    ("START_INPUT_INVALID", "Agent start input is invalid"),
    ("START_FAILED", "Herdr did not accept Agent start"),
)

#: A malformed request (a host bug, not a Link code).
INVALID_REQUEST = "INVALID_REQUEST"

#: A failure inside the library (never expected), and its fixed text.
INTERNAL_ERROR = "INTERNAL_ERROR"
INTERNAL_ERROR_TEXT = "herdr-link hit an internal error"
