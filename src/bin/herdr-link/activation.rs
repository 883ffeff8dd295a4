//! Activation shared between `herdr-link mcp` and the `herdr-link guard` hook of the same host
//! session (design: docs/guard.md, "Hooks: activation shared with the MCP server").
//!
//! Both processes are children of one host process (Claude Code runs hooks through `sh -c`, so
//! there the hook is a grandchild). Each finds that host by walking up from its parent past
//! shells, and names it by pid **and** start time (from `/proc`), so a reused pid is another
//! host. The server keeps one file per server process in a per-host directory:
//!
//! ```text
//! <base>/<host pid>-<host start>/<server pid>-<server start>     mode 0600, flock(LOCK_EX) held
//! ```
//!
//! `<base>` is the user's runtime directory ([`herdr_link::rundir`]):
//! `/run/user/<uid>/herdr-link` when `/run/user/<uid>` is a 0700 directory of ours, else
//! `/tmp/herdr-link-<uid>` (0700); no environment variable is read, because Codex gives its
//! MCP servers a filtered environment while its hooks get the full one. The file starts with a
//! header and the host's session id (Claude Code's `CLAUDE_CODE_SESSION_ID`, if set); activation
//! appends the line `active`. The exclusive lock is held for the server's whole life: a file
//! whose lock can be taken belongs to an exited or crashed server and counts as dormant. No Herdr
//! id is ever written.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use herdr_link::rundir::{private_dir, uid};

/// First line of every state file.
const HEADER: &str = "herdr-link-activation/1";
/// The line activation appends.
const ACTIVE: &str = "active";
/// Shells skipped when walking up to the host (a hook run as `sh -c CMD`, a wrapper script).
const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "fish", "busybox",
];
/// How many ancestors the walk looks at, at most.
const MAX_HOPS: usize = 8;
/// The largest state file read (a header, a session id and `active`).
const MAX_STATE: u64 = 4096;

/// One process as `/proc/<pid>/stat` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStat {
    /// Process id.
    pub pid: i32,
    /// `comm` (the executable name, at most 15 bytes).
    pub comm: String,
    /// Parent process id.
    pub ppid: i32,
    /// Start time in clock ticks since boot.
    pub start: u64,
}

/// Parses the text of `/proc/<pid>/stat`. `comm` may hold spaces and parentheses, so the
/// fields are counted from the last `)`.
pub fn parse_stat(pid: i32, text: &str) -> Option<ProcStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    // After ")": state(3) ppid(4) ... starttime(22), so index 0 is field 3.
    let fields: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    let ppid = fields.get(1)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some(ProcStat {
        pid,
        comm,
        ppid,
        start,
    })
}

/// Reads `/proc/<pid>/stat`.
pub fn stat(pid: i32) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(pid, &text)
}

/// A host process: its pid and start time (together unique for the machine's uptime).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostKey {
    /// The host's pid.
    pub pid: i32,
    /// The host's start time (clock ticks since boot).
    pub start: u64,
}

impl HostKey {
    fn dir_name(self) -> String {
        format!("{}-{}", self.pid, self.start)
    }
}

/// The host of the calling process: the nearest ancestor that is not a shell (a shell with
/// no further parent ends the walk). `None` when `/proc` cannot be read.
pub fn host_of_self() -> Option<HostKey> {
    let me = stat(std::process::id() as i32)?;
    host_from(me.ppid, stat)
}

/// The walk of [`host_of_self`], starting at `parent`, with `stat` injectable for tests.
pub fn host_from(parent: i32, stat: impl Fn(i32) -> Option<ProcStat>) -> Option<HostKey> {
    let mut pid = parent;
    for _ in 0..MAX_HOPS {
        if pid <= 0 {
            return None;
        }
        let p = stat(pid)?;
        if !SHELLS.contains(&p.comm.as_str()) || p.ppid <= 1 {
            return Some(HostKey {
                pid: p.pid,
                start: p.start,
            });
        }
        pid = p.ppid;
    }
    None
}

/// Where the per-host directories live: the user's runtime directory ([`herdr_link::rundir`]).
pub fn base_dir() -> PathBuf {
    herdr_link::rundir::base_dir()
}

/// [`herdr_link::rundir::ensure_private_dir`], saying what refusing it means here.
fn ensure_private_dir(path: &Path) -> Result<(), String> {
    herdr_link::rundir::ensure_private_dir(path)
        .map_err(|e| format!("{e}; activation is not shared"))
}

/// `flock` without blocking: `Ok(true)` locked, `Ok(false)` someone else holds it.
fn try_lock(file: &File, op: libc::c_int) -> std::io::Result<bool> {
    // SAFETY: a valid open descriptor.
    let rc = unsafe { libc::flock(file.as_raw_fd(), op | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(e)
    }
}

/// The MCP server's side: its state file, locked for the life of this value.
#[derive(Debug)]
pub struct Shared {
    file: File,
    path: PathBuf,
    active: std::sync::atomic::AtomicBool,
}

impl Shared {
    /// Registers this server process (dormant) under its host, in [`base_dir`].
    pub fn register(session_id: Option<&str>) -> Result<Shared, String> {
        let host = host_of_self().ok_or("cannot read /proc to find the host process")?;
        Shared::register_in(&base_dir(), host, session_id)
    }

    /// Registers under `base` for `host`.
    pub fn register_in(
        base: &Path,
        host: HostKey,
        session_id: Option<&str>,
    ) -> Result<Shared, String> {
        ensure_private_dir(base)?;
        sweep(base);
        let dir = base.join(host.dir_name());
        let me = stat(std::process::id() as i32).ok_or("cannot read /proc/self")?;
        let path = dir.join(format!("{}-{}", me.pid, me.start));
        let open = || {
            // Another server of this host may remove the directory when it exits (it removes
            // it only while empty): create it again then.
            let mut tries = 0;
            loop {
                ensure_private_dir(&dir).map_err(std::io::Error::other)?;
                let r = OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(&path);
                match r {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound && tries < 3 => tries += 1,
                    r => return r,
                }
            }
        };
        let file = match open() {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                // Same pid and start time: only a leftover of this very process is possible.
                let _ = std::fs::remove_file(&path);
                open().map_err(|e| format!("cannot create {}: {e}", path.display()))?
            }
            Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
        };
        if !try_lock(&file, libc::LOCK_EX).map_err(|e| format!("flock: {e}"))? {
            return Err(format!("{} is locked by another process", path.display()));
        }
        let session = session_id
            .filter(|s| !s.is_empty() && !s.contains(['\n', '\r']))
            .unwrap_or("");
        let mut f = &file;
        f.write_all(format!("{HEADER}\nsession {session}\n").as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(Shared {
            file,
            path,
            active: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Records that the session is active (once; later calls do nothing). One append of one
    /// short line, so a reader sees the line whole or not at all.
    pub fn mark_active(&self) -> Result<(), String> {
        use std::sync::atomic::Ordering;
        if self.active.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let mut f = &self.file;
        f.write_all(format!("{ACTIVE}\n").as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))
    }

    /// Removes the state file (and the host directory when it is left empty). The lock goes
    /// with the process; a removed file is simply not found.
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::remove_dir(dir); // only when empty
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Removes the directories of hosts that no longer run (their pid is gone or started at
/// another time). Directories of live hosts are never touched.
fn sweep(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((pid, start)) = name.to_str().and_then(|n| n.split_once('-')) else {
            continue;
        };
        let (Ok(pid), Ok(start)) = (pid.parse::<i32>(), start.parse::<u64>()) else {
            continue;
        };
        let alive = stat(pid).is_some_and(|p| p.start == start);
        if !alive {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// What the hook found for its host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// A live server of this host recorded activation (with the session id it recorded).
    Active {
        /// The host session id the server saw (`None` when the host gives none).
        session: Option<String>,
    },
    /// No live server of this host is active.
    Dormant,
}

/// Looks up the host of the calling process in [`base_dir`].
pub fn lookup_self() -> Result<Lookup, String> {
    let host = host_of_self().ok_or("cannot read /proc to find the host process")?;
    lookup_in(&base_dir(), host)
}

/// The hook's side: is a live server of `host` active? Files whose lock can be taken belong to
/// servers that are gone and are ignored, and so is anything not owned by us.
pub fn lookup_in(base: &Path, host: HostKey) -> Result<Lookup, String> {
    if !private_dir(base) {
        return Ok(Lookup::Dormant);
    }
    let dir = base.join(host.dir_name());
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Lookup::Dormant),
        Err(e) => return Err(format!("cannot read {}: {e}", dir.display())),
    };
    let mut found = None;
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(file) = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&path)
        else {
            continue;
        };
        let Ok(meta) = file.metadata() else { continue };
        if !meta.is_file() || meta.uid() != uid() || meta.len() > MAX_STATE {
            continue;
        }
        match try_lock(&file, libc::LOCK_SH) {
            Ok(false) => {}       // held: the server is alive
            Ok(true) => continue, // nobody holds it: the server is gone
            Err(_) => continue,
        }
        let mut text = String::new();
        if (&file).take(MAX_STATE).read_to_string(&mut text).is_err() {
            continue;
        }
        let mut lines = text.lines();
        if lines.next() != Some(HEADER) {
            continue;
        }
        let session = lines
            .next()
            .and_then(|l| l.strip_prefix("session "))
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        if lines.any(|l| l == ACTIVE) {
            found = Some(Lookup::Active { session });
            break;
        }
    }
    Ok(found.unwrap_or(Lookup::Dormant))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn parses_stat_with_odd_comm() {
        let text = "4242 (we ird) (x)) S 17 4242 17 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 100 5 18446744073709551615";
        let s = parse_stat(4242, text).unwrap();
        assert_eq!(s.comm, "we ird) (x)");
        assert_eq!(s.ppid, 17);
        assert_eq!(s.start, 987654);
        assert_eq!(parse_stat(1, "garbage"), None);
        assert_eq!(parse_stat(1, "1 (x) S 0"), None);
        let me = stat(std::process::id() as i32).unwrap();
        assert_eq!(me.pid as u32, std::process::id());
        assert!(me.start > 0);
    }

    fn fake_tree(procs: &[(i32, &str, i32, u64)]) -> impl Fn(i32) -> Option<ProcStat> {
        let map: HashMap<i32, ProcStat> = procs
            .iter()
            .map(|&(pid, comm, ppid, start)| {
                (
                    pid,
                    ProcStat {
                        pid,
                        comm: comm.into(),
                        ppid,
                        start,
                    },
                )
            })
            .collect();
        move |pid| map.get(&pid).cloned()
    }

    fn temp_base(tag: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!(
            "herdr-link-activation-unit-{}-{tag}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&p);
        p
    }

    fn host() -> HostKey {
        // This test process stands in for the host; its parent is irrelevant here.
        let me = stat(std::process::id() as i32).unwrap();
        HostKey {
            pid: me.pid,
            start: me.start,
        }
    }

    #[test]
    fn register_lookup_and_remove() {
        use std::os::unix::fs::PermissionsExt;
        let base = temp_base("cycle");
        assert_eq!(lookup_in(&base, host()), Ok(Lookup::Dormant), "no base yet");
        let shared = Shared::register_in(&base, host(), Some("sid")).unwrap();
        assert_eq!(
            lookup_in(&base, host()),
            Ok(Lookup::Dormant),
            "registered, not active"
        );
        shared.mark_active().unwrap();
        shared.mark_active().unwrap(); // idempotent
        assert_eq!(
            lookup_in(&base, host()),
            Ok(Lookup::Active {
                session: Some("sid".into())
            })
        );
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&base), 0o700);
        assert_eq!(mode(&shared.path), 0o600);
        let text = std::fs::read_to_string(&shared.path).unwrap();
        assert_eq!(text, format!("{HEADER}\nsession sid\n{ACTIVE}\n"));
        // Another host sees nothing.
        let other = HostKey {
            pid: host().pid,
            start: host().start + 1,
        };
        assert_eq!(lookup_in(&base, other), Ok(Lookup::Dormant));
        drop(shared);
        assert_eq!(lookup_in(&base, host()), Ok(Lookup::Dormant), "removed");
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn refuses_directories_open_to_others_and_symlinks() {
        use std::os::unix::fs::PermissionsExt;
        let base = temp_base("open");
        std::fs::create_dir_all(&base).unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = Shared::register_in(&base, host(), None).unwrap_err();
        assert!(err.contains("0700"), "{err}");
        // A private base, but the host directory open to others.
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o700)).unwrap();
        let dir = base.join(host().dir_name());
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(Shared::register_in(&base, host(), None).is_err());
        let _ = std::fs::remove_dir_all(&base);

        // A symlinked base is refused by both sides.
        let real = temp_base("real");
        std::fs::create_dir_all(&real).unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
        let link = temp_base("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(Shared::register_in(&link, host(), None).is_err());
        let shared = Shared::register_in(&real, host(), None).unwrap();
        shared.mark_active().unwrap();
        assert!(matches!(
            lookup_in(&real, host()),
            Ok(Lookup::Active { .. })
        ));
        assert_eq!(lookup_in(&link, host()), Ok(Lookup::Dormant));
        drop(shared);
        let _ = std::fs::remove_file(&link);
        let _ = std::fs::remove_dir_all(&real);
    }

    #[test]
    fn unlocked_and_foreign_files_count_as_dormant() {
        let base = temp_base("stale");
        let shared = Shared::register_in(&base, host(), None).unwrap();
        shared.mark_active().unwrap();
        let dir = shared.path.parent().unwrap().to_path_buf();
        // A stale file of a server that is gone: active text, but nobody holds its lock.
        let stale = dir.join("1-1");
        std::fs::write(&stale, format!("{HEADER}\nsession \n{ACTIVE}\n")).unwrap();
        // A file in another format.
        std::fs::write(dir.join("2-2"), "active\n").unwrap();
        drop(shared);
        assert!(
            dir.exists(),
            "the directory stays while other files are in it"
        );
        assert_eq!(lookup_in(&base, host()), Ok(Lookup::Dormant));
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn walk_skips_shells_only() {
        let tree = fake_tree(&[
            (1, "init", 0, 1),
            (10, "tmux", 1, 5),
            (20, "claude", 10, 100),
            (30, "sh", 20, 200),
            (31, "bash", 30, 201),
            (40, "codex", 31, 300),
        ]);
        // A hook under `sh -c` and the server directly under claude find the same host.
        assert_eq!(
            host_from(30, &tree),
            Some(HostKey {
                pid: 20,
                start: 100
            })
        );
        assert_eq!(host_from(20, &tree), host_from(31, &tree));
        // A nested host (codex run from claude's shell) is its own host.
        assert_eq!(
            host_from(40, &tree),
            Some(HostKey {
                pid: 40,
                start: 300
            })
        );
        assert_eq!(host_from(99, &tree), None);
        assert_eq!(host_from(0, &tree), None);
    }
}
