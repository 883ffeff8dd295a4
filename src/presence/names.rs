//! The presence directory and the names of the holders' sockets in it, listed only when the
//! directory is a private one of ours.

use std::path::{Path, PathBuf};

use super::proc::HostKey;
use crate::rundir;

/// The user's presence directory: `presence` in the private runtime directory
/// ([`rundir::base_dir`]); both must be private directories of ours.
pub fn dir() -> PathBuf {
    rundir::base_dir().join("presence")
}

/// The socket name of `holder` answering for `host`, with its random part `nonce`.
pub fn socket_name(host: HostKey, holder: i32, nonce: u64) -> String {
    format!("{host}.{holder}.{nonce:016x}")
}

/// One holder found in the presence directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// The host it answers for.
    pub host: HostKey,
    /// The holder's pid (in the pid namespace where it bound the socket).
    pub pid: i32,
    /// Its socket.
    pub path: PathBuf,
}

/// Parses one entry name of the presence directory; anything else is not a holder.
pub fn parse_name(name: &str) -> Option<(HostKey, i32)> {
    let mut parts = name.split('.');
    let (host, pid, nonce) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some()
        || nonce.len() != 16
        || !nonce.bytes().all(|b| b.is_ascii_hexdigit())
        || pid.is_empty()
        || !pid.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    Some((HostKey::parse(host)?, pid.parse().ok()?))
}

/// What the presence directory holds, as far as the asker can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listing {
    /// The holders (sockets of ours whose names parse).
    Holders(Vec<Holder>),
    /// No directory: nobody ever announced.
    Absent,
    /// A directory that cannot be trusted or read: nothing can be known.
    Unsafe(String),
}

/// Whether `path` is missing (as opposed to unreadable).
fn missing(path: &Path) -> bool {
    matches!(std::fs::symlink_metadata(path), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
}

/// Lists `dir` (a presence directory inside the runtime directory `base`): both must be
/// private directories of ours, or nothing in them is trusted.
pub fn list(base: &Path, dir: &Path) -> Listing {
    if missing(base) || missing(dir) {
        return Listing::Absent;
    }
    for d in [base, dir] {
        if !rundir::private_dir(d) {
            return Listing::Unsafe(format!(
                "{} is not a directory of uid {} closed to others",
                d.display(),
                rundir::uid()
            ));
        }
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => return Listing::Unsafe(format!("cannot read {}: {e}", dir.display())),
    };
    let own = rundir::uid();
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((host, pid)) = name.to_str().and_then(parse_name) else {
            continue;
        };
        let path = entry.path();
        if is_socket_of(&path, own) {
            out.push(Holder { host, pid, path });
        }
    }
    Listing::Holders(out)
}

/// Whether `path` is a socket (not followed through links) owned by `uid`.
pub(super) fn is_socket_of(path: &Path, uid: u32) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket() && m.uid() == uid)
}
