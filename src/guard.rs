//! Bash-boundary guard (interim: the reference adapter's word-sequence rules; replaced by the
//! shell-aware analysis).

/// What the guard decided about one Bash command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Let it run.
    Allow,
    /// Block it; the model keeps its turn (use herdr_link_send instead).
    Block,
    /// Block it and end the turn (the reply arrives as an inbound message).
    BlockEndTurn,
}

impl Verdict {
    /// 0 allow, 1 block, 2 block and end the turn.
    pub fn code(self) -> i32 {
        match self {
            Verdict::Allow => 0,
            Verdict::Block => 1,
            Verdict::BlockEndTurn => 2,
        }
    }

    /// The model-facing reason for a block.
    pub fn reason(self) -> Option<&'static str> {
        match self {
            Verdict::Allow => None,
            Verdict::Block => Some("Blocked by Herdr Link: do not prompt agents with --wait. Send the message with herdr_link_send; the reply arrives later as an inbound Herdr Link message."),
            Verdict::BlockEndTurn => Some("Blocked by Herdr Link: do not wait for another agent. End this turn now; the reply arrives as an inbound Herdr Link message."),
        }
    }
}

fn words(s: &str) -> Vec<&str> {
    s.split_whitespace().collect()
}

/// Judges one Bash command.
pub fn judge(command: &str) -> Verdict {
    let w = words(command);
    let is_herdr = |x: &str| x == "herdr" || x.ends_with("/herdr");
    for i in 0..w.len().saturating_sub(2) {
        if is_herdr(w[i]) && w[i + 1] == "agent" && w[i + 2] == "wait" {
            return Verdict::BlockEndTurn;
        }
    }
    for i in 0..w.len().saturating_sub(2) {
        if is_herdr(w[i]) && w[i + 1] == "agent" && w[i + 2] == "prompt" && w.contains(&"--wait") {
            return Verdict::Block;
        }
    }
    Verdict::Allow
}
