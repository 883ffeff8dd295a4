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
    ("NOT_IN_HERDR", "Herdr Link failed unexpectedly while listing peers"),
    ("SELF_UNNAMED", "Herdr Link could not establish a stable Agent Name"),
    ("PEER_NOT_FOUND", "target agent is not a live peer"),
    ("PEER_NOT_FOUND", "to is missing: give the Agent Name of the recipient in to"),
    ("PEER_NOT_FOUND", "agent is missing: give the Agent Name of the agent to close in agent"),
    ("SEND_FAILED", "Herdr did not accept message delivery"),
    ("SEND_FAILED", "message must be a string with at least one character that is not whitespace; nothing was sent"),
    ("SEND_FAILED", "the message is over the limit of 128,000 bytes as the envelope encodes it (a plain ASCII character counts 1, a Chinese character 3, a control character up to 6); nothing was sent. Shorten it, or split it into several messages and send them one after another"),
    ("SEND_FAILED", "the message could not be handed to Herdr: on this system its command line would be too long; nothing was sent. A shorter message, or the same text split into several messages, can go through"),
    ("SEND_FAILED", "deliveries to this agent are stuck behind an earlier one; nothing was sent"),
    ("SEND_FAILED", "the receiving agent is waiting for its user to answer a prompt or dialog, so Herdr typed nothing; nothing was sent. Send the message again once that agent can take messages"),
    ("SEND_FAILED", "the receiving agent cannot take messages right now: it is still starting, or its program no longer runs in its pane; nothing was sent. Send the message again once that agent is idle"),
    ("SEND_FAILED", "Herdr did not confirm delivery in time; the message may still arrive, so do not send it again"),
    ("SEND_FAILED", "Herdr Link failed unexpectedly during this send; the message may or may not have arrived"),
    ("CLOSE_FAILED", "Herdr pane close failed"),
    ("CLOSE_FAILED", "a delivery to this agent is stuck; the agent was not closed"),
    ("CLOSE_FAILED", "Herdr Link failed unexpectedly during this close; the agent may or may not have been closed"),
    ("START_CONFIG_NOT_FOUND", "configured Agent start configuration was not found"),
    ("START_AGENT_NOT_FOUND", "configured Agent start entry was not found"),
    ("START_CONFIG_INVALID", "configured Agent start configuration is invalid"),
    ("START_INPUT_INVALID", "Agent start input is invalid"),
    ("START_INPUT_INVALID", "start takes only the fields name, with, cwd, config_agent, kind and args; leave out every other field"),
    ("START_INPUT_INVALID", "name must be the new agent's Agent Name: a lowercase letter, then up to 31 lowercase letters, digits, _ or -"),
    ("START_INPUT_INVALID", "with must be the Agent Name of a live agent in this workspace (a lowercase letter, then up to 31 lowercase letters, digits, _ or -)"),
    ("START_INPUT_INVALID", "cwd must be a non-blank path of an existing directory (a relative path starts at the project directory)"),
    ("START_INPUT_INVALID", "config_agent cannot be combined with kind or args: give either config_agent (a configured start) or kind and args (an explicit start)"),
    ("START_INPUT_INVALID", "start needs a launch source: config_agent (an entry of .agents/agent_config.json), or kind and args together"),
    ("START_INPUT_INVALID", "an explicit start needs kind (the agent kind, for example pi) together with args"),
    ("START_INPUT_INVALID", "an explicit start needs args (the complete launch arguments: an array of strings, which may be empty) together with kind"),
    ("START_INPUT_INVALID", "config_agent must be a non-blank string: the name of an entry in .agents/agent_config.json"),
    ("START_INPUT_INVALID", "kind must be a non-blank string: the agent kind, for example pi, claude or codex"),
    ("START_INPUT_INVALID", "args must be an array of strings (it may be empty)"),
    ("START_INPUT_INVALID", "args is over the limit of 256 entries and 16,384 characters together; shorten it"),
    ("START_INPUT_INVALID", "with and cwd cannot be combined: an agent started beside another one works in that agent's directory; leave out cwd"),
    ("START_INPUT_INVALID", "this configuration entry opens its agent in a new tab; leave out with"),
    ("START_INPUT_INVALID", "this configuration entry opens its agent beside another agent, in that agent's directory; leave out cwd"),
    ("START_INPUT_INVALID", "this configuration entry opens its agent beside another agent; give that agent's Agent Name in with"),
    ("START_INPUT_INVALID", "the launch directory does not exist: give an existing directory in cwd (a relative path starts at the project directory)"),
    ("START_FAILED", "Herdr did not accept Agent start"),
    ("START_FAILED", "Herdr does not know this agent kind, so the agent was not started; use a kind Herdr supports (for example pi, claude or codex) in kind, or in the configuration entry for a configured start"),
    ("START_FAILED", "a live agent already has this Agent Name, so the agent was not started; choose another name"),
    ("START_FAILED", "Herdr gave no usable tab or pane for the new agent, so it was not started"),
    ("START_FAILED", "the start could not be handed to Herdr: on this system its command line would be too long; the agent was not started. Shorter args can go through"),
    ("START_FAILED", "Herdr Link failed unexpectedly during this start; the agent may or may not have been started"),
)

#: A malformed request (a host bug, not a Link code).
INVALID_REQUEST = "INVALID_REQUEST"

#: A failure inside the library (never expected), and its fixed text.
INTERNAL_ERROR = "INTERNAL_ERROR"
INTERNAL_ERROR_TEXT = "herdr-link hit an internal error"
