//! The holder's side: announcing presence for a host, and this process's own presence.

use std::path::Path;
use std::sync::Arc;

use super::names::{dir, is_socket_of, parse_name};
use super::proc::{stat, HostKey};
use super::question::Answer;
#[cfg(target_os = "linux")]
use super::socket::linux;
use super::socket::Beacon;
use crate::rundir;

/// Starts answering for `host` from this process: a socket in [`dir`] (created private if
/// needed; a directory that is not ours is an error) answering each question with `answer`
/// on a small thread of its own.
pub fn announce(host: HostKey, answer: Arc<Answer>) -> Result<Beacon, String> {
    announce_in(&rundir::base_dir(), &dir(), host, answer)
}

/// [`announce`] in a given runtime directory `base` and presence directory `dir` (tests).
pub fn announce_in(
    base: &Path,
    dir: &Path,
    host: HostKey,
    answer: Arc<Answer>,
) -> Result<Beacon, String> {
    #[cfg(target_os = "linux")]
    {
        rundir::ensure_private_dir(base)?;
        rundir::ensure_private_dir(dir)?;
        sweep(dir);
        linux::announce(dir, host, answer)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (base, dir, host, answer);
        Err("activation presence needs Linux; not supported here".into())
    }
}

/// Removes the sockets of holders that are gone (their pid no longer runs): a crash leaves its
/// socket behind. A pid that runs again under another process keeps its file until an asker
/// finds it dead.
fn sweep(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let own = rundir::uid();
    for entry in entries.flatten() {
        let path = entry.path();
        let Some((_, pid)) = entry.file_name().to_str().and_then(parse_name) else {
            continue;
        };
        if stat(pid).is_none() && is_socket_of(&path, own) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// This process's own presence (the library in a host process), started once.
static SELF_BEACON: std::sync::OnceLock<Result<Beacon, String>> = std::sync::OnceLock::new();

/// Starts this process's presence for itself, once: a process that loads the library answers
/// for its own sessions with `answer(marker, exact)` (the library passes its session registry,
/// [`crate::session::exec_answer`]). Returns the error of the one attempt, every time, when it
/// failed.
pub fn serve_self(answer: fn(Option<&str>, bool) -> bool) -> Result<(), String> {
    SELF_BEACON
        .get_or_init(|| {
            let me = HostKey::of_self().ok_or("cannot read this process's record")?;
            announce(me, Arc::new(move |q| answer(q.session.as_deref(), q.exact)))
        })
        .as_ref()
        .map(|_| ())
        .map_err(Clone::clone)
}
