//! Activation presence: the live process that holds an activation answers whether it is active,
//! so that the `herdr-link guard` hook and the `herdr` shim (the exec-boundary guard) can ask
//! without activation ever being written to a file (PROTOCOL §6.2: activation is in-memory,
//! session-local state). Design and threat model: docs/guard.md, "Activation presence".
//!
//! A **holder** is a process that holds activation in memory: the `herdr-link mcp` server
//! (answering for its host, the process that started it) or a process that loads the library
//! (answering for its own sessions: the Pi extension, the OpenCode plugin, the C and Python
//! hosts). Once a session of the holder becomes active it listens on a Unix socket in the
//! user's private presence directory ([`dir`]: `<runtime dir>/presence`, mode 0700), named
//!
//! ```text
//! <host pid>-<host start>.<holder pid>.<64 random bits, hex>
//! ```
//!
//! where `<host start>` is the host's start time in clock ticks since boot (so a reused pid is
//! another host). The random part makes the name unpredictable; the directory makes it
//! unclaimable: no other user can create, replace or remove anything in it, and a directory
//! that is not ours is never trusted (askers then cannot know, which refuses waits).
//!
//! A **question** is one JSON line ([`Question`]): the asker's Claude Code session id, its
//! session marker (`HERDR_LINK_SESSION`, set by in-process hosts for each session's
//! commands) and whether only the session named by the marker counts; the **answer** is one
//! byte, `1` or `0`. The holder answers only peers of its own uid (`SO_PEERCRED`). A holder
//! that is gone has no live socket: nobody answers, which is dormant.
//!
//! **Who is asked** ([`ask_exec`]): the holders of the host named by the asker's presence key
//! (`HERDR_LINK_PRESENCE`, `<host pid>-<host start>`, which the host wiring puts in its
//! commands' environment, so a detached or re-parented process still finds its host) and of
//! every ancestor of the asker; with a session marker, every other holder too, for that
//! session only. A holder the asker may ask but cannot reach (a sandbox that forbids Unix
//! sockets, a timeout) makes the answer [`Found::Unknown`]: the shim then refuses the wait.
//!
//! Not supported outside Linux: there nothing listens and every question finds no holder,
//! i.e. dormant (docs/guard.md).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::rundir;

/// The variable that carries the presence key (`<host pid>-<host start>`) to a host's
/// commands.
pub const PRESENCE_VAR: &str = "HERDR_LINK_PRESENCE";
/// The variable that carries the session marker (an in-process host's session key) to the
/// commands of one session.
pub const SESSION_VAR: &str = "HERDR_LINK_SESSION";
/// The most ancestors an asker looks at.
pub const MAX_ANCESTORS: usize = 64;
/// How many ancestors the host walk of a holder (which skips shells) looks at.
const MAX_HOST_HOPS: usize = 8;
/// The longest question line.
pub const MAX_QUESTION: usize = 1024;
/// The longest session marker or Claude Code session id carried in a question.
pub const MAX_FIELD: usize = 400;
/// Shells skipped when a holder walks up to its host (a server run as `sh -c CMD`).
const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "fish", "busybox",
];

/// One process as `/proc/<pid>/stat` (Linux) or `proc_pidinfo` (macOS) describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStat {
    /// Process id.
    pub pid: i32,
    /// `comm` (the executable name, at most 15 bytes).
    pub comm: String,
    /// Parent process id.
    pub ppid: i32,
    /// Start time: clock ticks since boot (Linux), microseconds since the epoch (macOS).
    pub start: u64,
}

/// Parses the text of `/proc/<pid>/stat`. `comm` may hold spaces and parentheses, so the
/// fields are counted from the last `)`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
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

/// Reads one process's record: `/proc/<pid>/stat` on Linux, `proc_pidinfo` on macOS; `None`
/// for a process that is gone (and on other platforms, where presence is not shared).
pub fn stat(pid: i32) -> Option<ProcStat> {
    os_stat(pid)
}

#[cfg(target_os = "linux")]
fn os_stat(pid: i32) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(pid, &text)
}

#[cfg(target_os = "macos")]
fn os_stat(pid: i32) -> Option<ProcStat> {
    // SAFETY: proc_bsdinfo is plain data (integers and char arrays); all zeroes is valid.
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
    // SAFETY: the buffer is one proc_bsdinfo and `size` is its size.
    let n = unsafe {
        libc::proc_pidinfo(
            pid,
            libc::PROC_PIDTBSDINFO,
            0,
            (&mut info as *mut libc::proc_bsdinfo).cast(),
            size,
        )
    };
    if n != size {
        return None;
    }
    let comm: Vec<u8> = info.pbi_comm.iter().map(|&c| c as u8).collect();
    Some(from_bsd_info(
        pid,
        info.pbi_ppid,
        &comm,
        info.pbi_start_tvsec,
        info.pbi_start_tvusec,
    ))
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn os_stat(_pid: i32) -> Option<ProcStat> {
    None
}

/// A macOS `proc_bsdinfo` record as a [`ProcStat`]: `comm` ends at its first NUL, and the start
/// time (seconds and microseconds since the epoch) becomes one number in microseconds.
/// Platform-independent so Linux tests check it too.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
pub fn from_bsd_info(
    pid: i32,
    ppid: u32,
    comm: &[u8],
    start_sec: u64,
    start_usec: u64,
) -> ProcStat {
    let end = comm.iter().position(|&b| b == 0).unwrap_or(comm.len());
    ProcStat {
        pid,
        comm: String::from_utf8_lossy(&comm[..end]).into_owned(),
        ppid: i32::try_from(ppid).unwrap_or(0),
        start: start_sec
            .saturating_mul(1_000_000)
            .saturating_add(start_usec),
    }
}

/// A process named by pid and start time (together unique for the machine's uptime).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HostKey {
    /// The pid.
    pub pid: i32,
    /// The start time (clock ticks since boot).
    pub start: u64,
}

impl HostKey {
    /// The calling process itself.
    pub fn of_self() -> Option<HostKey> {
        let me = stat(std::process::id() as i32)?;
        Some(HostKey {
            pid: me.pid,
            start: me.start,
        })
    }

    /// Parses the text form `<pid>-<start>` (as in [`PRESENCE_VAR`] and socket names): digits
    /// only, a pid above 1.
    pub fn parse(text: &str) -> Option<HostKey> {
        let (pid, start) = text.split_once('-')?;
        let digits =
            |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(pid) || !digits(start) {
            return None;
        }
        let pid: i32 = pid.parse().ok()?;
        (pid > 1).then_some(HostKey {
            pid,
            start: start.parse().ok()?,
        })
    }
}

impl std::fmt::Display for HostKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.pid, self.start)
    }
}

/// The host of a holder that is a child of its host (the MCP server): the nearest ancestor that
/// is not a shell (a shell with no further parent ends the walk). `None` when `/proc` cannot be
/// read.
pub fn host_of_self() -> Option<HostKey> {
    let me = stat(std::process::id() as i32)?;
    host_from(me.ppid, stat)
}

/// The walk of [`host_of_self`], starting at `parent`, with `stat` injectable for tests.
pub fn host_from(parent: i32, stat: impl Fn(i32) -> Option<ProcStat>) -> Option<HostKey> {
    host_record_from(parent, stat).map(|p| HostKey {
        pid: p.pid,
        start: p.start,
    })
}

/// Whether `comm` names a shell (skipped on the way up to a host).
pub fn is_shell(comm: &str) -> bool {
    SHELLS.contains(&comm)
}

/// The record of the process [`host_from`] finds (its `comm` tells a host from, say, the Herdr
/// server a pane's own shell runs under).
pub fn host_record_from(parent: i32, stat: impl Fn(i32) -> Option<ProcStat>) -> Option<ProcStat> {
    let mut pid = parent;
    for _ in 0..MAX_HOST_HOPS {
        if pid <= 0 {
            return None;
        }
        let p = stat(pid)?;
        if !is_shell(&p.comm) || p.ppid <= 1 {
            return Some(p);
        }
        pid = p.ppid;
    }
    None
}

/// Every ancestor of the calling process, nearest first, up to [`MAX_ANCESTORS`] and not
/// including pid 1.
pub fn ancestors_of_self() -> Vec<HostKey> {
    // SAFETY: getppid cannot fail.
    let parent = unsafe { libc::getppid() };
    ancestors_from(parent, stat)
}

/// The walk of [`ancestors_of_self`] from `parent`, with `stat` injectable for tests.
pub fn ancestors_from(parent: i32, stat: impl Fn(i32) -> Option<ProcStat>) -> Vec<HostKey> {
    let mut out = Vec::new();
    let mut pid = parent;
    while pid > 1 && out.len() < MAX_ANCESTORS {
        let Some(p) = stat(pid) else { break };
        out.push(HostKey {
            pid: p.pid,
            start: p.start,
        });
        if p.ppid == pid {
            break;
        }
        pid = p.ppid;
    }
    out
}

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
fn is_socket_of(path: &Path, uid: u32) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket() && m.uid() == uid)
}

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

/// A listening holder. Dropping it (or [`Beacon::close`]) stops answering and removes its
/// socket; the end of the process stops answering too (a socket file left by a crash answers
/// nothing and is removed by the next asker that finds it dead).
#[derive(Debug)]
pub struct Beacon {
    #[cfg(target_os = "linux")]
    fd: Arc<std::os::fd::OwnedFd>,
    path: PathBuf,
    closed: std::sync::atomic::AtomicBool,
}

impl Beacon {
    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stops answering: askers find nobody from now on.
    pub fn close(&self) {
        if self.closed.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let _ = std::fs::remove_file(&self.path);
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: a valid descriptor; shutdown wakes the accepting thread, which then exits
            // and closes the socket.
            unsafe { libc::shutdown(self.fd.as_raw_fd(), libc::SHUT_RDWR) };
        }
    }
}

impl Drop for Beacon {
    fn drop(&mut self) {
        self.close();
    }
}

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

#[cfg(target_os = "linux")]
mod linux {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::net::UnixStream;
    use std::time::Duration;

    /// How long either side waits for the other (connecting included).
    const IO_TIMEOUT: Duration = Duration::from_millis(500);

    fn last_error(what: &str) -> String {
        format!("{what}: {}", std::io::Error::last_os_error())
    }

    /// `sockaddr_un` for a filesystem `path` and its length.
    fn address(path: &Path) -> Result<(libc::sockaddr_un, libc::socklen_t), String> {
        // SAFETY: all-zero is a valid sockaddr_un.
        let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        let bytes = path.as_os_str().as_bytes();
        if bytes.len() + 1 > addr.sun_path.len() || bytes.contains(&0) {
            return Err(format!("socket path too long: {}", path.display()));
        }
        for (i, b) in bytes.iter().enumerate() {
            addr.sun_path[i] = *b as libc::c_char;
        }
        let len = std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1;
        Ok((addr, len as libc::socklen_t))
    }

    fn socket() -> Result<OwnedFd, String> {
        // SAFETY: plain socket call; the descriptor is owned right away.
        let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(last_error("socket"));
        }
        // SAFETY: a fresh descriptor of ours.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// The peer's (pid, uid) of a connected Unix socket.
    pub(super) fn peer(fd: &impl AsRawFd) -> Option<(i32, u32)> {
        let mut cred = libc::ucred {
            pid: 0,
            uid: 0,
            gid: 0,
        };
        let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
        // SAFETY: cred and len describe a valid buffer.
        let rc = unsafe {
            libc::getsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_PEERCRED,
                (&mut cred as *mut libc::ucred).cast(),
                &mut len,
            )
        };
        (rc == 0).then_some((cred.pid, cred.uid))
    }

    pub(super) fn announce(
        dir: &Path,
        host: HostKey,
        answer: Arc<Answer>,
    ) -> Result<Beacon, String> {
        let me = std::process::id() as i32;
        let path = dir.join(socket_name(host, me, rand::random::<u64>()));
        let fd = socket()?;
        let (addr, len) = address(&path)?;
        // SAFETY: addr/len form a valid address.
        let rc = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_un).cast(),
                len,
            )
        };
        if rc != 0 {
            return Err(last_error(&format!("bind {}", path.display())));
        }
        // SAFETY: a bound socket.
        if unsafe { libc::listen(fd.as_raw_fd(), 64) } != 0 {
            let e = last_error("listen");
            let _ = std::fs::remove_file(&path);
            return Err(e);
        }
        let fd = Arc::new(fd);
        let listener = fd.clone();
        if let Err(e) = std::thread::Builder::new()
            .name("herdr-link-presence".into())
            .spawn(move || serve(&listener, &*answer))
        {
            let _ = std::fs::remove_file(&path);
            return Err(format!("cannot start the presence thread: {e}"));
        }
        Ok(Beacon {
            fd,
            path,
            closed: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Accepts until the socket is shut down; answers one question per connection.
    fn serve(listener: &OwnedFd, answer: &Answer) {
        let own = rundir::uid();
        loop {
            // SAFETY: accept4 on our listening socket; null address buffers are allowed.
            let fd = unsafe {
                libc::accept4(
                    listener.as_raw_fd(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    libc::SOCK_CLOEXEC,
                )
            };
            if fd < 0 {
                match std::io::Error::last_os_error().raw_os_error() {
                    Some(libc::EINTR | libc::ECONNABORTED | libc::EAGAIN) => continue,
                    Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM) => {
                        std::thread::sleep(Duration::from_millis(20));
                        continue;
                    }
                    // EINVAL after shutdown (Beacon::close), or anything unexpected: stop.
                    _ => return,
                }
            }
            // SAFETY: a fresh descriptor from accept4, owned here.
            let conn = UnixStream::from(unsafe { OwnedFd::from_raw_fd(fd) });
            let Some((_, peer_uid)) = peer(&conn) else {
                continue;
            };
            if !peer_may_ask(own, peer_uid) {
                continue; // dropped unanswered
            }
            let _ = reply(conn, answer);
        }
    }

    fn reply(mut conn: UnixStream, answer: &Answer) -> std::io::Result<()> {
        conn.set_read_timeout(Some(IO_TIMEOUT))?;
        conn.set_write_timeout(Some(IO_TIMEOUT))?;
        let mut buf = Vec::with_capacity(128);
        let mut chunk = [0u8; 256];
        while !buf.contains(&b'\n') {
            let n = conn.read(&mut chunk)?;
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
            if buf.len() > MAX_QUESTION + 1 {
                return Ok(()); // not a question: no answer
            }
        }
        let Some(end) = buf.iter().position(|&b| b == b'\n') else {
            return Ok(());
        };
        let Some(q) = Question::parse(&buf[..end]) else {
            return Ok(());
        };
        conn.write_all(if answer(&q) { b"1" } else { b"0" })
    }

    /// Sets a send/receive timeout (connect on a Unix socket waits at most the send timeout).
    fn set_timeout(fd: &OwnedFd, opt: libc::c_int) -> Result<(), String> {
        let tv = libc::timeval {
            tv_sec: IO_TIMEOUT.as_secs() as libc::time_t,
            tv_usec: IO_TIMEOUT.subsec_micros() as libc::suseconds_t,
        };
        // SAFETY: tv is a valid timeval for the call's duration.
        let rc = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&tv as *const libc::timeval).cast(),
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(last_error("setsockopt"))
        }
    }

    pub(super) fn ask(holder: &Holder, question: &Question) -> Reply {
        let own = rundir::uid();
        let fd = match socket() {
            Ok(fd) => fd,
            Err(e) => return Reply::Blocked(e),
        };
        if let Err(e) =
            set_timeout(&fd, libc::SO_SNDTIMEO).and_then(|()| set_timeout(&fd, libc::SO_RCVTIMEO))
        {
            return Reply::Blocked(e);
        }
        let (addr, len) = match address(&holder.path) {
            Ok(a) => a,
            Err(e) => return Reply::Blocked(e),
        };
        // SAFETY: addr/len form a valid address.
        let rc = unsafe {
            libc::connect(
                fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_un).cast(),
                len,
            )
        };
        if rc != 0 {
            let err = std::io::Error::last_os_error();
            return match err.raw_os_error() {
                // Nobody listens: a holder that is gone. Its file is removed (the name is
                // random, so no live holder ever reuses it).
                Some(libc::ECONNREFUSED) => {
                    let _ = std::fs::remove_file(&holder.path);
                    Reply::No
                }
                Some(libc::ENOENT) => Reply::No,
                _ => Reply::Blocked(format!("connect {}: {err}", holder.path.display())),
            };
        }
        let mut conn = UnixStream::from(fd);
        let Some((pid, peer_uid)) = peer(&conn) else {
            return Reply::Blocked(last_error("SO_PEERCRED"));
        };
        if !holder_trusted(own, holder, pid, peer_uid) {
            return Reply::No;
        }
        if let Err(e) = conn.write_all(question.line().as_bytes()) {
            return Reply::Blocked(format!("writing the question: {e}"));
        }
        let mut byte = [0u8; 1];
        match conn.read(&mut byte) {
            Ok(1) if byte[0] == b'1' => Reply::Yes,
            Ok(1) => Reply::No,
            // Closed without an answer: the holder refused the question (or stopped).
            Ok(_) => Reply::No,
            Err(e) => Reply::Blocked(format!("reading the answer: {e}")),
        }
    }
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
    }

    /// The macOS reader's conversion, checked on every platform: the walk gets the same
    /// fields from a `proc_bsdinfo` record as from `/proc/<pid>/stat`.
    #[test]
    fn converts_bsd_info() {
        let mut comm = [0u8; 16];
        comm[..4].copy_from_slice(b"bash");
        comm[5] = b'x'; // after the NUL: ignored
        let s = from_bsd_info(300, 200, &comm, 1_700_000_000, 123_456);
        assert_eq!(s.pid, 300);
        assert_eq!(s.comm, "bash");
        assert_eq!(s.ppid, 200);
        assert_eq!(s.start, 1_700_000_000_123_456);
        let full = from_bsd_info(7, 1, b"0123456789abcdef", 1, 0);
        assert_eq!(full.comm, "0123456789abcdef");
        assert_eq!(from_bsd_info(7, u32::MAX, b"x", 0, 0).ppid, 0);
        // Fed to the walk, the records find the host past the shell.
        let node = |pid, ppid, name: &[u8], sec| {
            let mut c = [0u8; 16];
            c[..name.len()].copy_from_slice(name);
            from_bsd_info(pid, ppid, &c, sec, 0)
        };
        let table = [node(30, 20, b"sh", 3), node(20, 1, b"claude", 2)];
        let host = host_from(30, |pid| table.iter().find(|p| p.pid == pid).cloned());
        assert_eq!(
            host,
            Some(HostKey {
                pid: 20,
                start: 2_000_000
            })
        );
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

    #[test]
    fn host_walk_skips_shells_and_ancestors_keep_every_process() {
        let tree = fake_tree(&[
            (1, "init", 0, 1),
            (10, "node", 1, 100),
            (11, "bash", 10, 110),
            (12, "python3", 11, 120),
            (13, "make", 12, 130),
            (14, "sh", 13, 140),
        ]);
        assert_eq!(
            host_from(11, &tree),
            Some(HostKey {
                pid: 10,
                start: 100
            })
        );
        let chain: Vec<i32> = ancestors_from(14, &tree).iter().map(|h| h.pid).collect();
        assert_eq!(chain, vec![14, 13, 12, 11, 10]);
        assert_eq!(ancestors_from(99, &tree), vec![]);
        // A loop in a corrupt table ends at the bound.
        let looped = fake_tree(&[(5, "a", 6, 1), (6, "b", 5, 2)]);
        assert_eq!(ancestors_from(5, &looped).len(), MAX_ANCESTORS);
    }

    #[test]
    fn host_keys_and_names_round_trip_and_foreign_names_are_ignored() {
        let host = HostKey {
            pid: 4242,
            start: 987,
        };
        assert_eq!(host.to_string(), "4242-987");
        assert_eq!(HostKey::parse("4242-987"), Some(host));
        for bad in [
            "",
            "4242",
            "-987",
            "4242-",
            "1-5",
            "0-5",
            "x-1",
            "4242-98a",
            "4242-987-1",
        ] {
            assert_eq!(HostKey::parse(bad), None, "{bad:?}");
        }
        let name = socket_name(host, 77, 0xdead_beef);
        assert_eq!(name, "4242-987.77.00000000deadbeef");
        assert_eq!(parse_name(&name), Some((host, 77)));
        for bad in [
            "4242-987.77",
            "4242-987.77.00000000deadbee",
            "4242-987.77.00000000deadbeefx",
            "4242-987.x.00000000deadbeef",
            "4242-987..00000000deadbeef",
            "4242.77.00000000deadbeef",
            "4242-987.77.00000000deadbeef.sock",
            ".herdr.tmp",
        ] {
            assert_eq!(parse_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn peer_credentials_rules() {
        assert!(peer_may_ask(1000, 1000));
        assert!(!peer_may_ask(1000, 0));
        assert!(!peer_may_ask(0, 1000));
        let h = Holder {
            host: HostKey { pid: 2, start: 2 },
            pid: 50,
            path: PathBuf::from("/x"),
        };
        assert!(holder_trusted(1000, &h, 50, 1000));
        assert!(
            holder_trusted(1000, &h, 0, 1000),
            "outside the asker's pid namespace"
        );
        assert!(!holder_trusted(1000, &h, 51, 1000), "another process");
        assert!(!holder_trusted(1000, &h, 50, 0), "another user");
    }

    #[test]
    fn questions_travel_as_one_json_line() {
        let q = Question::new(Some("c1"), Some("opencode:1.2:ses_x"));
        assert_eq!(
            q.line(),
            "{\"claude\":\"c1\",\"session\":\"opencode:1.2:ses_x\"}\n"
        );
        assert_eq!(Question::parse(q.line().trim_end().as_bytes()), Some(q));
        assert_eq!(Question::new(None, None).line(), "{}\n");
        let exact = Question {
            exact: true,
            ..Question::new(None, Some("s"))
        };
        assert_eq!(
            Question::parse(br#"{"session":"s","exact":true}"#),
            Some(exact)
        );
        assert_eq!(Question::parse(b"not json"), None);
        // Ids that cannot be real are dropped, never sent cut.
        let long = "x".repeat(MAX_FIELD + 1);
        assert_eq!(
            Question::new(Some(&long), Some("a\nb")),
            Question::default()
        );
        assert!(
            Question::new(Some(&"y".repeat(MAX_FIELD)), Some(&"z".repeat(MAX_FIELD)))
                .line()
                .len()
                <= MAX_QUESTION
        );
    }

    #[test]
    fn mcp_holders_compare_claude_session_ids_only_when_both_are_known() {
        let q = |c: Option<&str>| Question::new(c, None);
        assert!(answer_for(true, None, &q(None)));
        assert!(answer_for(true, Some("s1"), &q(None)));
        assert!(answer_for(true, None, &q(Some("s1"))));
        assert!(answer_for(true, Some("s1"), &q(Some("s1"))));
        assert!(!answer_for(true, Some("s1"), &q(Some("s2"))));
        assert!(answer_for(true, Some(""), &q(Some("s2"))));
        assert!(!answer_for(false, None, &q(None)));
        let exact = Question {
            exact: true,
            ..Question::new(None, Some("m"))
        };
        assert!(
            !answer_for(true, None, &exact),
            "an MCP server holds no marked session"
        );
    }

    /// A private temp runtime dir and its presence dir, removed on drop.
    struct TempDirs {
        base: PathBuf,
        dir: PathBuf,
    }

    impl TempDirs {
        fn new(tag: &str) -> TempDirs {
            let base = std::env::temp_dir().join(format!("hlp-{}-{tag}", std::process::id()));
            let _ = std::fs::remove_dir_all(&base);
            let dir = base.join("presence");
            TempDirs { base, dir }
        }
    }

    impl Drop for TempDirs {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.base);
        }
    }

    fn holder(host: HostKey, pid: i32) -> Holder {
        Holder {
            host,
            pid,
            path: PathBuf::from(format!("/p/{host}.{pid}")),
        }
    }

    #[test]
    fn the_asker_asks_its_key_and_ancestors_then_marked_sessions_and_fails_closed() {
        let d = TempDirs::new("logic");
        let a = Asker {
            key: Some(HostKey { pid: 10, start: 1 }),
            ancestors: vec![HostKey { pid: 20, start: 2 }, HostKey { pid: 30, start: 3 }],
            question: Question::new(Some("c"), None),
        };
        // No directory: nobody ever announced.
        assert_eq!(
            ask_exec_in(&d.base, &d.dir, &a, |_, _| panic!("asked")),
            Found::Dormant
        );
        rundir::ensure_private_dir(&d.base).unwrap();
        rundir::ensure_private_dir(&d.dir).unwrap();
        assert_eq!(
            ask_exec_in(&d.base, &d.dir, &a, |_, _| panic!("asked")),
            Found::Dormant
        );
        // The logic over a listing: ask_hosts with a fixed set of holders.
        let hs = [
            holder(HostKey { pid: 99, start: 9 }, 1),
            holder(HostKey { pid: 30, start: 3 }, 2),
            holder(HostKey { pid: 10, start: 1 }, 3),
        ];
        let run = |a: &Asker, reply: &dyn Fn(&Holder, &Question) -> Reply| {
            let seen = std::cell::RefCell::new(Vec::new());
            let found = decide_over(&hs, a, |h, q| {
                seen.borrow_mut().push((h.pid, q.exact));
                reply(h, q)
            });
            (found, seen.into_inner())
        };
        // Key first, then ancestors; a foreign host is never asked without a marker.
        let (f, seen) = run(&a, &|_, _| Reply::No);
        assert_eq!((f, seen), (Found::Dormant, vec![(3, false), (2, false)]));
        let (f, seen) = run(&a, &|h, _| if h.pid == 2 { Reply::Yes } else { Reply::No });
        assert_eq!((f, seen), (Found::Active, vec![(3, false), (2, false)]));
        // A holder of ours that cannot be asked: unknown, never dormant.
        let (f, _) = run(&a, &|h, _| {
            if h.pid == 3 {
                Reply::Blocked("EPERM".into())
            } else {
                Reply::No
            }
        });
        assert_eq!(f, Found::Unknown("EPERM".into()));
        // ...but a yes elsewhere still decides.
        let (f, _) = run(&a, &|h, _| match h.pid {
            3 => Reply::Blocked("EPERM".into()),
            _ => Reply::Yes,
        });
        assert_eq!(f, Found::Active);
        // With a session marker, every other holder is asked for that session only.
        let marked = Asker {
            question: Question::new(Some("c"), Some("m")),
            ..a.clone()
        };
        let (f, seen) = run(&marked, &|_, _| Reply::No);
        assert_eq!(
            (f, seen),
            (Found::Dormant, vec![(3, false), (2, false), (1, true)])
        );
        let (f, _) = run(&marked, &|h, q| {
            assert!(
                q.claude.is_none() || !q.exact,
                "the exact question carries no Claude id"
            );
            if h.pid == 1 && q.exact {
                Reply::Yes
            } else {
                Reply::No
            }
        });
        assert_eq!(f, Found::Active);
        // Without key or ancestors, nothing is asked.
        let lost = Asker::default();
        assert_eq!(run(&lost, &|_, _| Reply::Yes), (Found::Dormant, vec![]));
    }

    #[test]
    fn a_presence_directory_that_is_not_private_is_never_trusted() {
        use std::os::unix::fs::PermissionsExt;
        let d = TempDirs::new("unsafe");
        let a = Asker {
            key: Some(HostKey { pid: 10, start: 1 }),
            ..Asker::default()
        };
        rundir::ensure_private_dir(&d.base).unwrap();
        rundir::ensure_private_dir(&d.dir).unwrap();
        // Opened to others (or owned by another user, which the root test below checks): the
        // asker cannot know, the holder cannot announce.
        for open in [&d.base, &d.dir] {
            std::fs::set_permissions(open, std::fs::Permissions::from_mode(0o777)).unwrap();
            assert!(
                matches!(ask_exec_in(&d.base, &d.dir, &a, |_, _| Reply::No), Found::Unknown(ref w) if w.contains("closed to others")),
                "{open:?}"
            );
            assert!(announce_in(
                &d.base,
                &d.dir,
                HostKey { pid: 10, start: 1 },
                Arc::new(|_| true)
            )
            .is_err());
            std::fs::set_permissions(open, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        // A symlink in place of the directory.
        std::fs::remove_dir_all(&d.dir).unwrap();
        std::os::unix::fs::symlink(&d.base, &d.dir).unwrap();
        assert!(matches!(
            ask_exec_in(&d.base, &d.dir, &a, |_, _| Reply::No),
            Found::Unknown(_)
        ));
        assert!(announce_in(
            &d.base,
            &d.dir,
            HostKey { pid: 10, start: 1 },
            Arc::new(|_| true)
        )
        .is_err());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_live_holder_answers_and_a_closed_or_dead_one_does_not() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let d = TempDirs::new("live");
        let host = HostKey {
            pid: 1234,
            start: 5,
        };
        let on = Arc::new(AtomicBool::new(true));
        let flag = on.clone();
        let beacon = announce_in(
            &d.base,
            &d.dir,
            host,
            Arc::new(move |q| answer_for(flag.load(Ordering::SeqCst), Some("mine"), q)),
        )
        .unwrap();
        let me = std::process::id() as i32;
        let Listing::Holders(listed) = list(&d.base, &d.dir) else {
            panic!("not listed")
        };
        assert_eq!(listed.len(), 1);
        let h = listed[0].clone();
        assert_eq!((h.host, h.pid, h.path.as_path()), (host, me, beacon.path()));
        let q = |c: Option<&str>| Question::new(c, None);
        assert_eq!(ask(&h, &q(None)), Reply::Yes);
        assert_eq!(ask(&h, &q(Some("mine"))), Reply::Yes);
        assert_eq!(
            ask(&h, &q(Some("other"))),
            Reply::No,
            "another Claude Code session"
        );
        let asker = Asker {
            key: Some(host),
            ..Asker::default()
        };
        assert_eq!(ask_exec_in(&d.base, &d.dir, &asker, ask), Found::Active);
        let reused = Asker {
            key: Some(HostKey {
                pid: 1234,
                start: 6,
            }),
            ..Asker::default()
        };
        assert_eq!(
            ask_exec_in(&d.base, &d.dir, &reused, ask),
            Found::Dormant,
            "reused pid"
        );
        // A socket whose listener is not the process its name announces is not trusted.
        let liar = Holder {
            pid: me + 1,
            ..h.clone()
        };
        assert_eq!(ask(&liar, &q(None)), Reply::No);
        on.store(false, Ordering::SeqCst);
        assert_eq!(ask(&h, &q(None)), Reply::No, "answers live state");
        on.store(true, Ordering::SeqCst);
        // A second holder for the same host gets its own, different name.
        let second = announce_in(&d.base, &d.dir, host, Arc::new(|_| false)).unwrap();
        assert_ne!(second.path(), beacon.path());
        assert_eq!(ask_exec_in(&d.base, &d.dir, &asker, ask), Found::Active);
        drop(second);
        drop(beacon);
        assert!(!h.path.exists(), "closing removes the socket");
        assert_eq!(ask(&h, &q(None)), Reply::No, "closed: nobody answers");
        assert_eq!(ask_exec_in(&d.base, &d.dir, &asker, ask), Found::Dormant);
    }

    /// Squatting: another user can neither take a holder's name (64 random bits, in a
    /// directory only we can write) nor plant a socket of its own, nor pre-create the
    /// directories; each attempt leaves the asker knowing it cannot know, never "dormant".
    /// Needs root to act as another user; the mode-based checks above run everywhere.
    #[cfg(target_os = "linux")]
    #[test]
    fn another_user_cannot_squat_a_holder_or_the_directory() {
        use std::os::unix::process::CommandExt;
        if rundir::uid() != 0 {
            eprintln!("another_user_cannot_squat: not root, the other-user part is not run");
            return;
        }
        let d = TempDirs::new("squat");
        let host = HostKey {
            pid: 4242,
            start: 9,
        };
        let beacon = announce_in(&d.base, &d.dir, host, Arc::new(|_| true)).unwrap();
        // The squatter (uid 65534) tries to bind next to the holder and to take its very name.
        let other_name = d.dir.join(socket_name(host, 4242, 7));
        for target in [other_name.as_path(), beacon.path()] {
            let out = std::process::Command::new("python3")
                .args([
                    "-c",
                    "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])",
                ])
                .arg(target)
                .uid(65534)
                .gid(65534)
                .output()
                .unwrap();
            assert!(!out.status.success(), "bound {}", target.display());
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("PermissionError: [Errno 13]"), "{err}");
        }
        // A socket of another user inside the directory (only root could put it there) is
        // not a holder.
        let planted = d.dir.join(socket_name(host, 4242, 8));
        let _l = std::os::unix::net::UnixListener::bind(&planted).unwrap();
        std::os::unix::fs::chown(&planted, Some(65534), Some(65534)).unwrap();
        let Listing::Holders(hs) = list(&d.base, &d.dir) else {
            panic!("unlisted")
        };
        assert_eq!(
            hs.iter().map(|h| h.path.as_path()).collect::<Vec<_>>(),
            [beacon.path()]
        );
        let asker = Asker {
            key: Some(host),
            ..Asker::default()
        };
        assert_eq!(ask_exec_in(&d.base, &d.dir, &asker, ask), Found::Active);
        drop(beacon);
        // Directories pre-created (or taken over) by another user: never trusted.
        for squatted in [&d.dir, &d.base] {
            std::os::unix::fs::chown(squatted, Some(65534), Some(65534)).unwrap();
            assert!(
                matches!(ask_exec_in(&d.base, &d.dir, &asker, ask), Found::Unknown(_)),
                "{squatted:?}"
            );
            assert!(announce_in(&d.base, &d.dir, host, Arc::new(|_| true)).is_err());
            std::os::unix::fs::chown(squatted, Some(0), Some(0)).unwrap();
        }
    }

    /// A socket left by a holder that died: nobody listens, the asker removes it.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_dead_holders_socket_is_dormant_and_removed() {
        let d = TempDirs::new("dead");
        rundir::ensure_private_dir(&d.base).unwrap();
        rundir::ensure_private_dir(&d.dir).unwrap();
        let host = HostKey {
            pid: 4321,
            start: 7,
        };
        let path = d.dir.join(socket_name(host, std::process::id() as i32, 1));
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        drop(listener); // the file stays, nobody listens
        assert!(path.exists());
        let asker = Asker {
            key: Some(host),
            ..Asker::default()
        };
        assert_eq!(ask_exec_in(&d.base, &d.dir, &asker, ask), Found::Dormant);
        assert!(!path.exists(), "removed by the asker");
    }
}
