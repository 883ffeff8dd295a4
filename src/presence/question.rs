//! The question an asker sends a holder, the holder's reply, and who may ask and be trusted.

use super::names::Holder;

/// The variable that carries the presence key (`<host pid>-<host start>`) to a host's
/// commands.
pub const PRESENCE_VAR: &str = "HERDR_LINK_PRESENCE";
/// The variable that carries the session marker (an in-process host's session key) to the
/// commands of one session.
pub const SESSION_VAR: &str = "HERDR_LINK_SESSION";

/// The longest question line.
pub const MAX_QUESTION: usize = 1024;
/// The longest session marker or Claude Code session id carried in a question.
pub const MAX_FIELD: usize = 400;

/// Whether a holder of uid `own` answers a peer of uid `peer`: only its own user.
pub fn peer_may_ask(own: u32, peer: u32) -> bool {
    own == peer
}

/// Whether an asker of uid `own` trusts the peer (`peer_pid`, `peer_uid`) listening on the
/// socket of `holder`: the same user, and the process the name announces, or a pid of 0 (the
/// holder lives outside the asker's pid namespace, as seen from a sandbox; the private
/// directory still vouches for it).
pub fn holder_trusted(own: u32, holder: &Holder, peer_pid: i32, peer_uid: u32) -> bool {
    own == peer_uid && (peer_pid == holder.pid || peer_pid == 0)
}

/// One question to a holder.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Question {
    /// The asker's Claude Code session id (`CLAUDE_CODE_SESSION_ID`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claude: Option<String>,
    /// The asker's session marker ([`SESSION_VAR`]), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Only the session named by the marker counts (the asker is not known to belong to this
    /// holder's host).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exact: bool,
}

impl Question {
    /// The question with over-long or multi-line fields dropped (they are never real ids).
    pub fn new(claude: Option<&str>, session: Option<&str>) -> Question {
        let keep = |s: Option<&str>| {
            s.filter(|s| !s.is_empty() && s.len() <= MAX_FIELD && !s.contains(['\n', '\r']))
                .map(str::to_string)
        };
        Question {
            claude: keep(claude),
            session: keep(session),
            exact: false,
        }
    }

    /// The wire form: one JSON line.
    pub fn line(&self) -> String {
        let mut s = serde_json::to_string(self).unwrap_or_else(|_| "{}".into());
        s.push('\n');
        s
    }

    /// Parses one line (without its newline); `None` is not a question.
    pub fn parse(line: &[u8]) -> Option<Question> {
        serde_json::from_slice(line).ok()
    }
}

/// What a holder of an MCP server answers (for its host): active, unless the question is
/// `exact` (for a session it does not hold) or both sides know a Claude Code session id and
/// they differ.
pub fn answer_for(active: bool, mine: Option<&str>, q: &Question) -> bool {
    if !active || q.exact {
        return false;
    }
    match (mine, q.claude.as_deref()) {
        (Some(m), Some(a)) if !m.is_empty() && !a.is_empty() => m == a,
        _ => true,
    }
}

/// Decides, for one question, whether this holder is active.
pub type Answer = dyn Fn(&Question) -> bool + Send + Sync;

/// One holder's reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// It answered `1`.
    Yes,
    /// It answered `0`, is gone, or is not who its name says.
    No,
    /// It could not be asked (the reason).
    Blocked(String),
}
