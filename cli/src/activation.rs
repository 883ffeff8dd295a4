//! Activation shared between `herdr-link mcp` and the `herdr-link guard` hook of the same host
//! session, and with the `herdr` shim run under that host (design: docs/guard.md, "Hooks:
//! activation shared with the MCP server" and "The exec boundary").
//!
//! Nothing is written to a file (PROTOCOL §6.2). On activation the server starts answering for
//! its host over the library's presence socket ([`herdr_link::presence`]): the host is found by
//! walking up from the server's parent past shells and named by pid **and** start time, so a
//! reused pid is another host; the answer compares Claude Code's session id
//! (`CLAUDE_CODE_SESSION_ID`, when the server has one) with the asker's, and is "no" to a
//! question for a marked session only (a server holds no marked sessions). The hook asks the
//! holders of its own host; a server that is gone answers nothing, which is dormant. No Herdr id
//! is involved.

use std::sync::Arc;

use herdr_link::presence::{self, Beacon, Found, HostKey};

/// The MCP server's side: answering for its host for the life of this value.
#[derive(Debug)]
pub struct Shared {
    beacon: Beacon,
}

impl Shared {
    /// Starts answering "active" for the host of this server (the session is active from now
    /// on; activation never goes back within a connection). `session_id` is the host's Claude
    /// Code session id, if it gave one.
    pub fn activate(session_id: Option<&str>) -> Result<Shared, String> {
        let host = presence::host_of_self()
            .ok_or("cannot read the process table to find the host process")?;
        Shared::activate_for(host, session_id)
    }

    /// [`Shared::activate`] for a given `host`.
    pub fn activate_for(host: HostKey, session_id: Option<&str>) -> Result<Shared, String> {
        let mine = session_id
            .filter(|s| !s.is_empty() && !s.contains(['\n', '\r']))
            .map(str::to_string);
        let beacon = presence::announce(
            host,
            Arc::new(move |q| presence::answer_for(true, mine.as_deref(), q)),
        )?;
        Ok(Shared { beacon })
    }

    /// Stops answering (the connection is over).
    pub fn remove(&self) {
        self.beacon.close();
    }
}

/// What the hook found for its host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// A live server of this host answered "active" for the session id asked.
    Active,
    /// No live server of this host is active (for that session id).
    Dormant,
}

/// The hook's side: asks the live servers of the host of the calling process whether they are
/// active for `session` (the hook input's Claude Code session id, if any).
pub fn lookup_self(session: Option<&str>) -> Result<Lookup, String> {
    let host =
        presence::host_of_self().ok_or("cannot read the process table to find the host process")?;
    lookup_for(host, session)
}

/// [`lookup_self`] for a given `host`. A state that cannot be known is an error (the hook
/// allows, the shim still judges at exec).
pub fn lookup_for(host: HostKey, session: Option<&str>) -> Result<Lookup, String> {
    match presence::ask_host(host, &presence::Question::new(session, None)) {
        Found::Active => Ok(Lookup::Active),
        Found::Dormant => Ok(Lookup::Dormant),
        Found::Unknown(why) => Err(why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_host() -> HostKey {
        // A made-up host: the test process holds the socket, the key only names it.
        HostKey {
            pid: std::process::id() as i32,
            start: 3,
        }
    }

    #[test]
    fn active_server_answers_its_host_only_until_removed() {
        let host = fake_host();
        assert_eq!(lookup_for(host, None), Ok(Lookup::Dormant), "nobody yet");
        let shared = Shared::activate_for(host, Some("sid")).unwrap();
        assert_eq!(lookup_for(host, None), Ok(Lookup::Active));
        assert_eq!(lookup_for(host, Some("sid")), Ok(Lookup::Active));
        assert_eq!(
            lookup_for(host, Some("other")),
            Ok(Lookup::Dormant),
            "another Claude Code session"
        );
        let reused = HostKey {
            pid: host.pid,
            start: host.start + 1,
        };
        assert_eq!(lookup_for(reused, None), Ok(Lookup::Dormant), "reused pid");
        shared.remove();
        assert_eq!(lookup_for(host, None), Ok(Lookup::Dormant), "removed");
    }
}
