//! The Link error model (PROTOCOL §7) and the one table of every code a response can carry.
//!
//! Each Link code is written once, in [`link_errors!`]'s table below, with the fixed
//! model-facing text(s) that follow it: one `Variant: "text"` row per text. The table makes the
//! [`LinkError`] variants, [`LINK_CODES`], [`REASONS`] and the code, reason and detail of every
//! error; the C ABI, the MCP server and the hosts take their codes from here (the Python package
//! from a block generated from [`REASONS`], checked by `tests/error_table.rs`). A code whose
//! protocol needs a distinct cause gets one more row under it: a new variant with its own fixed
//! text and the same code, e.g.
//!
//! ```text
//! "SEND_FAILED" {
//!     /// Both ends resolved, but Herdr refused the prompt.
//!     SendFailed: "Herdr did not accept message delivery",
//!     /// (a distinct cause with a text of its own)
//!     SendTurnMissed: "…",
//! }
//! ```
//!
//! The first row of a code is its general text (the one PROTOCOL §7's table gives).
//!
//! The internal detail of an error (raw CLI codes and messages, ids) goes to the operator log
//! only: `Display` prints `CODE: text` and nothing else, so even a stray `format!("{e}")` on a
//! model-facing path shows no detail. `Debug` shows it, for tests and panics.

use serde_json::{json, Value};

/// One fixed model-facing text: the code it follows and the text itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reason {
    /// The code (`NOT_IN_HERDR`, ...).
    pub code: &'static str,
    /// The text after `CODE: `.
    pub text: &'static str,
}

impl Reason {
    /// The whole model-facing text: `CODE: text`.
    pub fn message(&self) -> String {
        message(self.code, self.text)
    }
}

/// Builds the error table: the [`LinkError`] enum (one variant per fixed text), [`LINK_CODES`],
/// [`REASONS`] and the methods that read them. Nothing else writes a Link code.
macro_rules! link_errors {
    ($(
        $code:literal {
            $( $(#[$doc:meta])* $variant:ident: $text:expr, )+
        }
    )+) => {
        /// One Link failure. The variant is one row of the error table (a Link code and the fixed
        /// reason the model sees); the string is the internal detail (raw CLI codes, messages and
        /// ids may appear there, so it never reaches the model: not even through `Display`).
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum LinkError {
            $( $( $(#[$doc])* $variant(String), )+ )+
        }

        /// Every Link code, in PROTOCOL §7 order.
        pub const LINK_CODES: &[&str] = &[$($code),+];

        /// Every fixed text of every Link code, in table order (a code's general text first).
        pub const REASONS: &[Reason] = &[$( $( Reason { code: $code, text: $text }, )+ )+];

        impl LinkError {
            /// The row of the table this error is.
            pub fn row(&self) -> Reason {
                match self {
                    $( $( LinkError::$variant(_) => Reason { code: $code, text: $text }, )+ )+
                }
            }

            /// The internal detail, for the operator log only.
            pub fn detail(&self) -> &str {
                match self {
                    $( $( LinkError::$variant(d) => d, )+ )+
                }
            }
        }

        /// One error of every row of the table, with `detail`, in table order.
        #[cfg(test)]
        fn every_row(detail: &str) -> Vec<LinkError> {
            vec![$( $( LinkError::$variant(detail.to_string()), )+ )+]
        }
    };
}

link_errors! {
    "NOT_IN_HERDR" {
        /// Herdr is unavailable: environment missing, binary gone, transport failure, bad JSON,
        /// timeout.
        NotInHerdr: "Herdr environment is unavailable",
        /// Peers failed inside Link itself (an unexpected failure, never Herdr's answer).
        PeersUnexpected: "Herdr Link failed unexpectedly while listing peers",
    }
    "SELF_UNNAMED" {
        /// Link tried to give the calling agent a stable Agent Name and failed.
        SelfUnnamed: "Herdr Link could not establish a stable Agent Name",
    }
    "PEER_NOT_FOUND" {
        /// The target is not a live named peer in the caller's workspace (one answer for every
        /// cause).
        PeerNotFound: "target agent is not a live peer",
        /// A send without `to` (or with a `to` that is not a string): nothing was looked up.
        SendToMissing: "to is missing: give the Agent Name of the recipient in to",
        /// A close without `agent` (or with an `agent` that is not a string).
        CloseAgentMissing: "agent is missing: give the Agent Name of the agent to close in agent",
    }
    "SEND_FAILED" {
        /// Both ends resolved, but Herdr refused the prompt.
        SendFailed: "Herdr did not accept message delivery",
        /// The message is missing, not a string, or only whitespace: no Herdr call was made.
        SendMessageBlank: "message must be a string with at least one character that is not whitespace; nothing was sent",
        /// The message is over [`crate::limits::MAX_MESSAGE_BYTES`] as encoded: no Herdr call.
        SendMessageTooLong: concat!(
            "the message is over the limit of ",
            crate::limits::message_bytes_text!(),
            " bytes as the envelope encodes it (a plain ASCII character counts 1, a Chinese character 3, a control character up to 6); nothing was sent. Shorten it, or split it into several messages and send them one after another"
        ),
        /// The kernel refused the prompt's command line as too long (`E2BIG`, a large
        /// environment): Herdr was never reached.
        SendTooLongHere: "the message could not be handed to Herdr: on this system its command line would be too long; nothing was sent. A shorter message, or the same text split into several messages, can go through",
        /// Both ends resolved, but the receiver's delivery turn did not come within its wait (a
        /// stuck queue): nothing was typed.
        SendQueueStuck: "deliveries to this agent are stuck behind an earlier one; nothing was sent",
        /// Herdr refused the prompt because the receiver waits for its user's input
        /// (`agent_blocked`, Herdr 0.8.2 and later): nothing was typed.
        SendReceiverBlocked: "the receiving agent is waiting for its user to answer a prompt or dialog, so Herdr typed nothing; nothing was sent. Send the message again once that agent can take messages",
        /// Herdr refused the prompt because the receiver cannot take one now (`agent_not_ready`:
        /// its launch is still pending, or its program no longer runs in its pane).
        SendReceiverNotReady: "the receiving agent cannot take messages right now: it is still starting, or its program no longer runs in its pane; nothing was sent. Send the message again once that agent is idle",
        /// Herdr took the prompt but did not answer within the call limit: it may still type it.
        SendUnconfirmed: "Herdr did not confirm delivery in time; the message may still arrive, so do not send it again",
        /// The send failed inside Link itself (an unexpected failure, never Herdr's answer).
        SendUnexpected: "Herdr Link failed unexpectedly during this send; the message may or may not have arrived",
    }
    "CLOSE_FAILED" {
        /// The target's pane resolved, but Herdr refused to close it.
        CloseFailed: "Herdr pane close failed",
        /// The target resolved, but its delivery turn did not come within its wait: not closed.
        CloseQueueStuck: "a delivery to this agent is stuck; the agent was not closed",
        /// The close failed inside Link itself (an unexpected failure, never Herdr's answer).
        CloseUnexpected: "Herdr Link failed unexpectedly during this close; the agent may or may not have been closed",
    }
    "START_CONFIG_NOT_FOUND" {
        /// Configured start: `.agents/agent_config.json` does not exist.
        StartConfigNotFound: "configured Agent start configuration was not found",
    }
    "START_AGENT_NOT_FOUND" {
        /// Configured start: no such entry under `agents`.
        StartAgentNotFound: "configured Agent start entry was not found",
    }
    "START_CONFIG_INVALID" {
        /// Configured start: the file is not valid JSON or breaks the schema.
        StartConfigInvalid: "configured Agent start configuration is invalid",
    }
    "START_INPUT_INVALID" {
        /// Start input is missing, mistyped or mixes modes (the general text; each cause below
        /// has its own).
        StartInputInvalid: "Agent start input is invalid",
        /// A field start does not take.
        StartUnknownField: "start takes only the fields name, with, cwd, config_agent, kind and args; leave out every other field",
        /// `name` is missing, not a string, or breaks the Agent Name rule.
        StartNameInvalid: concat!(
            "name must be the new agent's Agent Name: ",
            crate::limits::agent_name_rule!()
        ),
        /// `with` is not a string or breaks the Agent Name rule.
        StartWithInvalid: concat!(
            "with must be the Agent Name of a live agent in this workspace (",
            crate::limits::agent_name_rule!(),
            ")"
        ),
        /// `cwd` is not a string or is blank.
        StartCwdInvalid: "cwd must be a non-blank path of an existing directory (a relative path starts at the project directory)",
        /// `config_agent` together with `kind` or `args`.
        StartModesMixed: "config_agent cannot be combined with kind or args: give either config_agent (a configured start) or kind and args (an explicit start)",
        /// Neither `config_agent` nor `kind` nor `args`.
        StartSourceMissing: "start needs a launch source: config_agent (an entry of .agents/agent_config.json), or kind and args together",
        /// `args` without `kind`.
        StartKindMissing: "an explicit start needs kind (the agent kind, for example pi) together with args",
        /// `kind` without `args`.
        StartArgsMissing: "an explicit start needs args (the complete launch arguments: an array of strings, which may be empty) together with kind",
        /// `config_agent` is not a string or is blank.
        StartConfigAgentInvalid: "config_agent must be a non-blank string: the name of an entry in .agents/agent_config.json",
        /// `kind` is not a string or is blank.
        StartKindInvalid: "kind must be a non-blank string: the agent kind, for example pi, claude or codex",
        /// `args` is not an array of strings.
        StartArgsInvalid: "args must be an array of strings (it may be empty)",
        /// `args` is over [`crate::limits::MAX_START_ARGS`] or
        /// [`crate::limits::MAX_START_ARGS_CHARS`].
        StartArgsTooLarge: concat!(
            "args is over the limit of ",
            crate::limits::start_args_text!(),
            " entries and ",
            crate::limits::start_args_chars_text!(),
            " characters together; shorten it"
        ),
        /// `with` together with `cwd`.
        StartWithAndCwd: "with and cwd cannot be combined: an agent started beside another one works in that agent's directory; leave out cwd",
        /// `with` for a configuration entry placed in a new tab.
        StartEntryRefusesWith: "this configuration entry opens its agent in a new tab; leave out with",
        /// `cwd` for a configuration entry placed beside an anchor.
        StartEntryRefusesCwd: "this configuration entry opens its agent beside another agent, in that agent's directory; leave out cwd",
        /// No `with` for a configuration entry placed beside an anchor.
        StartEntryNeedsWith: "this configuration entry opens its agent beside another agent; give that agent's Agent Name in with",
        /// The new tab's launch directory does not exist.
        StartNoLaunchDir: "the launch directory does not exist: give an existing directory in cwd (a relative path starts at the project directory)",
    }
    "START_FAILED" {
        /// Herdr refused or failed the agent start.
        StartFailed: "Herdr did not accept Agent start",
        /// Herdr refused the start because it does not know the agent kind (its CLI's
        /// `unsupported interactive agent kind`, or the server's `unsupported_agent_kind`).
        StartKindUnsupported: "Herdr does not know this agent kind, so the agent was not started; use a kind Herdr supports (for example pi, claude or codex) in kind, or in the configuration entry for a configured start",
        /// Herdr refused the start because a live agent already has the name
        /// (`agent_name_taken`).
        StartNameTaken: "a live agent already has this Agent Name, so the agent was not started; choose another name",
        /// Herdr's answers gave no usable tab or pane for the new agent: `agent start` was never
        /// asked.
        StartNoPlace: "Herdr gave no usable tab or pane for the new agent, so it was not started",
        /// The kernel refused a start's command line as too long (`E2BIG`, a large
        /// environment): Herdr was never reached with it.
        StartTooLongHere: "the start could not be handed to Herdr: on this system its command line would be too long; the agent was not started. Shorter args can go through",
        /// The start failed inside Link itself (an unexpected failure, never Herdr's answer).
        StartUnexpected: "Herdr Link failed unexpectedly during this start; the agent may or may not have been started",
    }
}

/// The code of a malformed request: a host bug, not a Link code. Its text is not fixed: it
/// says what is wrong with the request (never an id).
pub const INVALID_REQUEST: &str = "INVALID_REQUEST";

/// A failure inside the library itself (never expected), with its fixed text.
pub const INTERNAL_ERROR: Reason = Reason {
    code: "INTERNAL_ERROR",
    text: "herdr-link hit an internal error",
};

/// The model-facing text of a failure: `CODE: text`. Every such text is built here.
pub fn message(code: &str, text: &str) -> String {
    format!("{code}: {text}")
}

/// The `{"code","message"}` error object every failed response carries (the C ABI's tool calls
/// and presentation, the MCP server's errors go through the same text). Built only here.
pub fn document(code: &str, text: &str) -> Value {
    json!({"code": code, "message": message(code, text)})
}

impl LinkError {
    /// The stable Link code.
    pub fn code(&self) -> &'static str {
        self.row().code
    }

    /// The fixed reason the model sees after the code.
    pub fn reason(&self) -> &'static str {
        self.row().text
    }

    /// The whole agent-facing text: `CODE: fixed reason`. Never contains the detail.
    pub fn agent_text(&self) -> String {
        self.row().message()
    }

    /// The `{"code","message"}` error object of this error (no detail).
    pub fn document(&self) -> Value {
        document(self.code(), self.reason())
    }
}

/// `CODE: fixed reason`, exactly [`LinkError::agent_text`]: never the internal detail.
impl std::fmt::Display for LinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let row = self.row();
        write!(f, "{}: {}", row.code, row.text)
    }
}

impl std::error::Error for LinkError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_text_never_carries_the_detail() {
        let e = LinkError::SelfUnnamed("rename of w1:p2 failed: pane_not_found".into());
        assert_eq!(
            e.agent_text(),
            "SELF_UNNAMED: Herdr Link could not establish a stable Agent Name"
        );
        assert_eq!(e.detail(), "rename of w1:p2 failed: pane_not_found");
        assert_eq!(
            LinkError::CloseUnexpected("TypeError".into()).agent_text(),
            "CLOSE_FAILED: Herdr Link failed unexpectedly during this close; the agent may or may not have been closed"
        );
        assert_eq!(
            LinkError::PeersUnexpected(String::new()).code(),
            "NOT_IN_HERDR"
        );
    }

    #[test]
    fn display_is_the_agent_text_and_never_the_detail() {
        for e in every_row("w1:p2 rename failed: pane_not_found") {
            // Every way a stray formatting could take it.
            let shown = [
                format!("{e}"),
                e.to_string(),
                format!("{e:>80}"),
                format!("failed: {}", &e as &dyn std::error::Error),
                serde_json::to_string(&e.document()).unwrap(),
            ];
            for s in &shown {
                assert!(!s.contains("w1:p2"), "detail shown: {s}");
                assert!(!s.contains("pane_not_found"), "detail shown: {s}");
                assert!(s.contains(&e.agent_text()), "{s}");
            }
            assert_eq!(e.to_string(), e.agent_text());
            // Debug (tests, panics) still tells the operator everything.
            assert!(format!("{e:?}").contains("w1:p2"));
        }
    }

    #[test]
    fn codes_are_the_closed_set() {
        let all = every_row("");
        assert_eq!(all.len(), REASONS.len());
        let mut codes: Vec<_> = all.iter().map(LinkError::code).collect();
        codes.dedup();
        assert_eq!(codes, LINK_CODES);
        assert_eq!(LINK_CODES.len(), 10);
        for e in &all {
            assert!(e.agent_text().starts_with(&format!("{}: ", e.code())));
            assert!(!e.reason().is_empty());
            assert!(REASONS.contains(&e.row()));
        }
        // Every text belongs to a code of the set, a code's rows stand together, and no text is
        // written twice.
        for (i, r) in REASONS.iter().enumerate() {
            assert!(LINK_CODES.contains(&r.code), "{r:?}");
            assert!(
                !REASONS[i + 1..].iter().any(|o| o.text == r.text),
                "{r:?} twice"
            );
            if i > 0 && REASONS[i - 1].code != r.code {
                assert!(!REASONS[..i].iter().any(|o| o.code == r.code), "{r:?}");
            }
        }
        assert!(!LINK_CODES.contains(&INVALID_REQUEST));
        assert!(!LINK_CODES.contains(&INTERNAL_ERROR.code));
    }

    /// A refusal the model can fix names what to fix; a refusal made before Herdr was asked never
    /// says that Herdr refused.
    #[test]
    fn fixable_refusals_say_what_to_fix() {
        use LinkError as E;
        type Row = fn(String) -> E;
        let rows: [(Row, &[&str]); 22] = [
            (E::SendToMissing, &["to", "Agent Name"]),
            (E::CloseAgentMissing, &["agent", "Agent Name"]),
            (E::SendMessageBlank, &["message", "not whitespace"]),
            (
                E::SendMessageTooLong,
                &["128,000 bytes", "split it", "nothing was sent"],
            ),
            (E::SendTooLongHere, &["shorter message", "nothing was sent"]),
            (
                E::StartUnknownField,
                &["name, with, cwd, config_agent, kind and args"],
            ),
            (E::StartNameInvalid, &["name", "lowercase letter", "31"]),
            (E::StartWithInvalid, &["with", "lowercase letter"]),
            (E::StartCwdInvalid, &["cwd", "existing directory"]),
            (E::StartModesMixed, &["config_agent", "kind", "args"]),
            (E::StartSourceMissing, &["config_agent", "kind and args"]),
            (E::StartKindMissing, &["needs kind"]),
            (E::StartArgsMissing, &["needs args", "may be empty"]),
            (E::StartConfigAgentInvalid, &["config_agent"]),
            (E::StartKindInvalid, &["kind"]),
            (E::StartArgsInvalid, &["args", "array of strings"]),
            (
                E::StartArgsTooLarge,
                &["args", "256 entries", "16,384 characters"],
            ),
            (E::StartWithAndCwd, &["leave out cwd"]),
            (E::StartEntryRefusesWith, &["leave out with"]),
            (E::StartEntryRefusesCwd, &["leave out cwd"]),
            (E::StartEntryNeedsWith, &["in with"]),
            (E::StartNoLaunchDir, &["existing directory in cwd"]),
        ];
        for (row, words) in rows {
            let text = row(String::new()).reason();
            for w in words {
                assert!(text.contains(w), "{text:?} lacks {w:?}");
            }
            assert!(!text.contains("did not accept"), "{text}");
        }
        for row in [
            E::PeersUnexpected,
            E::SendUnexpected,
            E::CloseUnexpected,
            E::StartUnexpected,
            E::StartNoPlace,
            E::StartTooLongHere,
        ] {
            assert!(!row(String::new()).reason().contains("did not accept"));
        }
    }

    #[test]
    fn the_error_document_is_code_and_message() {
        assert_eq!(
            LinkError::PeerNotFound("ghost".into()).document(),
            json!({"code": "PEER_NOT_FOUND", "message": "PEER_NOT_FOUND: target agent is not a live peer"})
        );
        assert_eq!(
            document(INVALID_REQUEST, "`tool` must be a string"),
            json!({"code": "INVALID_REQUEST", "message": "INVALID_REQUEST: `tool` must be a string"})
        );
    }
}
