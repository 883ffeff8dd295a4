//! The asker's side: whom the exec guard and the hook ask, and what their replies decide.

use std::path::Path;

use super::names::{dir, list, Holder, Listing};
use super::proc::{ancestors_of_self, HostKey};
use super::question::{Question, Reply, PRESENCE_VAR, SESSION_VAR};
#[cfg(target_os = "linux")]
use super::socket::linux;
use crate::rundir;

/// The result of asking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A holder the asker belongs to said active.
    Active,
    /// Nobody said active (no holder, holders gone, or all said no).
    Dormant,
    /// Whether Link is active cannot be known: a holder the asker belongs to exists but cannot
    /// be asked (a sandbox that forbids Unix sockets, a timeout), or the presence directory
    /// cannot be trusted. The reason, for a diagnostic.
    Unknown(String),
}

/// What the exec guard asks with: its presence key, its ancestors (nearest first), its Claude
/// Code session id and its session marker.
#[derive(Debug, Clone, Default)]
pub struct Asker {
    /// The host named by [`PRESENCE_VAR`], if any.
    pub key: Option<HostKey>,
    /// The asker's ancestors.
    pub ancestors: Vec<HostKey>,
    /// The question for holders of those hosts.
    pub question: Question,
}

impl Asker {
    /// The asker for this process: its environment and its ancestors.
    pub fn of_self() -> Asker {
        let var = |k: &str| std::env::var(k).ok();
        Asker {
            key: var(PRESENCE_VAR).as_deref().and_then(HostKey::parse),
            ancestors: ancestors_of_self(),
            question: Question::new(
                var("CLAUDE_CODE_SESSION_ID").as_deref(),
                var(SESSION_VAR).as_deref(),
            ),
        }
    }
}

/// Asks the user's holders whether Link is active for `asker` (see the module doc).
pub fn ask_exec(asker: &Asker) -> Found {
    ask_exec_in(&rundir::base_dir(), &dir(), asker, ask)
}

/// [`ask_exec`] over a given directory, with `ask` injectable for tests.
pub fn ask_exec_in(
    base: &Path,
    dir: &Path,
    asker: &Asker,
    ask: impl Fn(&Holder, &Question) -> Reply,
) -> Found {
    match list(base, dir) {
        Listing::Absent => Found::Dormant,
        Listing::Unsafe(why) => Found::Unknown(why),
        Listing::Holders(holders) => decide_over(&holders, asker, ask),
    }
}

/// The decision over the `holders` listed: the holders of the asker's key and ancestors
/// (nearest first) with its question, then, with a session marker, every other holder for
/// that session only. The first yes is active; otherwise a holder that could not be asked
/// makes it unknown.
pub fn decide_over(
    holders: &[Holder],
    asker: &Asker,
    ask: impl Fn(&Holder, &Question) -> Reply,
) -> Found {
    let hosts: Vec<HostKey> = asker.key.iter().chain(&asker.ancestors).copied().collect();
    let mut blocked = None;
    let mut asked = vec![false; holders.len()];
    for host in &hosts {
        for (i, h) in holders.iter().enumerate() {
            if h.host != *host || asked[i] {
                continue;
            }
            asked[i] = true;
            match ask(h, &asker.question) {
                Reply::Yes => return Found::Active,
                Reply::No => {}
                Reply::Blocked(why) => blocked = blocked.or(Some(why)),
            }
        }
    }
    if asker.question.session.is_some() {
        let exact = Question {
            claude: None,
            exact: true,
            ..asker.question.clone()
        };
        for (i, h) in holders.iter().enumerate() {
            if asked[i] {
                continue;
            }
            match ask(h, &exact) {
                Reply::Yes => return Found::Active,
                Reply::No => {}
                Reply::Blocked(why) => blocked = blocked.or(Some(why)),
            }
        }
    }
    match blocked {
        Some(why) => Found::Unknown(why),
        None => Found::Dormant,
    }
}

/// Asks the holders of `host` only (the hook, which knows its host): active for `question`?
pub fn ask_host(host: HostKey, question: &Question) -> Found {
    ask_exec(&Asker {
        key: Some(host),
        ancestors: Vec::new(),
        question: question.clone(),
    })
}

/// Asks one holder. A dead socket (nobody listening) is removed and is "no".
pub fn ask(holder: &Holder, question: &Question) -> Reply {
    #[cfg(target_os = "linux")]
    {
        linux::ask(holder, question)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (holder, question);
        Reply::No
    }
}
