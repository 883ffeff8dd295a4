//! The Link error model (PROTOCOL §7): ten codes, each with a fixed agent-facing reason and an
//! internal detail that only the operator log ever sees.

/// One Link failure. The variant is the Link code; the string is the internal detail (raw CLI
/// codes, messages and ids may appear there, so it never reaches the model).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// Herdr is unavailable: environment missing, binary gone, transport failure, bad JSON, timeout.
    #[error("NOT_IN_HERDR: {0}")]
    NotInHerdr(String),
    /// Link tried to give the calling agent a stable Agent Name and failed.
    #[error("SELF_UNNAMED: {0}")]
    SelfUnnamed(String),
    /// The target is not a live named peer in the caller's workspace (one answer for every cause).
    #[error("PEER_NOT_FOUND: {0}")]
    PeerNotFound(String),
    /// Both ends resolved, but Herdr refused the prompt.
    #[error("SEND_FAILED: {0}")]
    SendFailed(String),
    /// The target's pane resolved, but Herdr refused to close it.
    #[error("CLOSE_FAILED: {0}")]
    CloseFailed(String),
    /// `SEND_FAILED` without a Herdr call: the receiver's delivery turn did not come in time
    /// (earlier deliveries to it still going on); nothing was typed.
    #[error("SEND_FAILED: {0}")]
    SendNoTurn(String),
    /// `CLOSE_FAILED` without a Herdr call: a delivery to the target was still being submitted
    /// when the close's time ran out; nothing was closed.
    #[error("CLOSE_FAILED: {0}")]
    CloseNoTurn(String),
    /// Configured start: `.agents/agent_config.json` does not exist.
    #[error("START_CONFIG_NOT_FOUND: {0}")]
    StartConfigNotFound(String),
    /// Configured start: no such entry under `agents`.
    #[error("START_AGENT_NOT_FOUND: {0}")]
    StartAgentNotFound(String),
    /// Configured start: the file is not valid JSON or breaks the schema.
    #[error("START_CONFIG_INVALID: {0}")]
    StartConfigInvalid(String),
    /// Start input is missing, mistyped or mixes modes.
    #[error("START_INPUT_INVALID: {0}")]
    StartInputInvalid(String),
    /// Herdr refused or failed the agent start.
    #[error("START_FAILED: {0}")]
    StartFailed(String),
}

/// Every Link code, in PROTOCOL §7 order.
pub const LINK_CODES: [&str; 10] = [
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
];

impl LinkError {
    /// The stable Link code.
    pub fn code(&self) -> &'static str {
        match self {
            LinkError::NotInHerdr(_) => "NOT_IN_HERDR",
            LinkError::SelfUnnamed(_) => "SELF_UNNAMED",
            LinkError::PeerNotFound(_) => "PEER_NOT_FOUND",
            LinkError::SendFailed(_) | LinkError::SendNoTurn(_) => "SEND_FAILED",
            LinkError::CloseFailed(_) | LinkError::CloseNoTurn(_) => "CLOSE_FAILED",
            LinkError::StartConfigNotFound(_) => "START_CONFIG_NOT_FOUND",
            LinkError::StartAgentNotFound(_) => "START_AGENT_NOT_FOUND",
            LinkError::StartConfigInvalid(_) => "START_CONFIG_INVALID",
            LinkError::StartInputInvalid(_) => "START_INPUT_INVALID",
            LinkError::StartFailed(_) => "START_FAILED",
        }
    }

    /// The fixed reason the model sees after the code.
    pub fn reason(&self) -> &'static str {
        match self {
            LinkError::NotInHerdr(_) => "Herdr environment is unavailable",
            LinkError::SelfUnnamed(_) => "Herdr Link could not establish a stable Agent Name",
            LinkError::PeerNotFound(_) => "target agent is not a live peer",
            LinkError::SendFailed(_) => "Herdr did not accept message delivery",
            LinkError::CloseFailed(_) => "Herdr pane close failed",
            LinkError::SendNoTurn(_) => {
                "the recipient was still receiving earlier messages; nothing was sent"
            }
            LinkError::CloseNoTurn(_) => {
                "a message to the agent was still being delivered; nothing was closed"
            }
            LinkError::StartConfigNotFound(_) => {
                "configured Agent start configuration was not found"
            }
            LinkError::StartAgentNotFound(_) => "configured Agent start entry was not found",
            LinkError::StartConfigInvalid(_) => "configured Agent start configuration is invalid",
            LinkError::StartInputInvalid(_) => "Agent start input is invalid",
            LinkError::StartFailed(_) => "Herdr did not accept Agent start",
        }
    }

    /// The internal detail, for the operator log only.
    pub fn detail(&self) -> &str {
        match self {
            LinkError::NotInHerdr(d)
            | LinkError::SelfUnnamed(d)
            | LinkError::PeerNotFound(d)
            | LinkError::SendFailed(d)
            | LinkError::CloseFailed(d)
            | LinkError::SendNoTurn(d)
            | LinkError::CloseNoTurn(d)
            | LinkError::StartConfigNotFound(d)
            | LinkError::StartAgentNotFound(d)
            | LinkError::StartConfigInvalid(d)
            | LinkError::StartInputInvalid(d)
            | LinkError::StartFailed(d) => d,
        }
    }

    /// The whole agent-facing text: `CODE: fixed reason`. Never contains the detail.
    pub fn agent_text(&self) -> String {
        format!("{}: {}", self.code(), self.reason())
    }
}

/// The operation a tool call runs; it decides the fallback code for failures nothing classified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// `herdr_link_start`.
    Start,
    /// `herdr_link_peers`.
    Peers,
    /// `herdr_link_send`.
    Send,
    /// `herdr_link_close`.
    Close,
}

impl Operation {
    /// Wraps an unclassified failure (a Herdr rejection no rule mapped) in this operation's code.
    pub fn fallback(self, detail: String) -> LinkError {
        match self {
            Operation::Start => LinkError::StartFailed(detail),
            Operation::Peers => LinkError::NotInHerdr(detail),
            Operation::Send => LinkError::SendFailed(detail),
            Operation::Close => LinkError::CloseFailed(detail),
        }
    }

    /// The capability word (also the gateway `action`).
    pub fn action(self) -> &'static str {
        match self {
            Operation::Start => "start",
            Operation::Peers => "peers",
            Operation::Send => "send",
            Operation::Close => "close",
        }
    }
}

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
        assert!(e.to_string().contains("w1:p2"));
        assert_eq!(
            Operation::Close.fallback("TypeError".into()).agent_text(),
            "CLOSE_FAILED: Herdr pane close failed"
        );
        assert_eq!(
            Operation::Peers.fallback(String::new()).code(),
            "NOT_IN_HERDR"
        );
    }

    #[test]
    fn codes_are_the_closed_set() {
        let all = [
            LinkError::NotInHerdr(String::new()),
            LinkError::SelfUnnamed(String::new()),
            LinkError::PeerNotFound(String::new()),
            LinkError::SendFailed(String::new()),
            LinkError::CloseFailed(String::new()),
            LinkError::StartConfigNotFound(String::new()),
            LinkError::StartAgentNotFound(String::new()),
            LinkError::StartConfigInvalid(String::new()),
            LinkError::StartInputInvalid(String::new()),
            LinkError::StartFailed(String::new()),
        ];
        let codes: Vec<_> = all.iter().map(LinkError::code).collect();
        assert_eq!(codes, LINK_CODES);
        // A missed delivery turn keeps its operation's code, in a text of its own.
        let turns = [
            LinkError::SendNoTurn(String::new()),
            LinkError::CloseNoTurn(String::new()),
        ];
        assert_eq!(
            turns.each_ref().map(|e| e.code()),
            ["SEND_FAILED", "CLOSE_FAILED"]
        );
        for e in all.iter().chain(&turns) {
            assert!(e.agent_text().starts_with(&format!("{}: ", e.code())));
            assert!(!e.reason().is_empty());
        }
        for (turn, herdr) in turns.iter().zip([&all[3], &all[4]]) {
            assert_ne!(turn.reason(), herdr.reason());
            assert!(!turn.reason().contains("Herdr"), "{}", turn.reason());
        }
    }
}
