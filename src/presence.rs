//! Activation presence: the live process that holds an activation answers whether it is active,
//! so that the `herdr-link guard` hook and the `herdr` shim (the exec-boundary guard) can ask
//! without activation ever being written to a file (PROTOCOL §6.2: activation is in-memory,
//! session-local state).
//!
//! A **holder** is a process that holds activation in memory: the `herdr-link mcp` server
//! (answering for its host, the process that started it) or a process that loads the library
//! (answering for itself: the Pi extension, the OpenCode plugin, the C and Python hosts). Once a
//! session of the holder becomes active, it listens on an abstract Unix socket (Linux; no file)
//! named
//!
//! ```text
//! \0herdr-link/active/<uid>/<host pid>-<host start>/<holder pid>
//! ```
//!
//! where `<host start>` is the host's start time in clock ticks since boot (so a reused pid is
//! another host). A **question** is one line, the asker's Claude Code session id or an empty
//! line; the **answer** is one byte, `1` (active for that question) or `0`. The holder answers
//! only peers of its own uid (`SO_PEERCRED`), and the asker trusts only a holder of its own uid
//! whose pid is the one in the name. A holder that is gone has no socket: nobody answers, which
//! is dormant. Askers walk their ancestors (every one, up to [`MAX_ANCESTORS`]) and ask the
//! holders of each, so a `herdr` started by `make` started by `python3` started by the host's
//! shell still finds the host.
//!
//! Not supported outside Linux (no abstract sockets, no `/proc`): there nothing listens and
//! every question finds no holder, i.e. dormant (docs/guard.md).

use std::sync::Arc;

/// First part of every holder's socket name (after the leading NUL of the abstract namespace).
pub const NAME_PREFIX: &str = "herdr-link/active/";
/// The most ancestors an asker looks at.
pub const MAX_ANCESTORS: usize = 64;
/// How many ancestors the host walk of a holder (which skips shells) looks at.
const MAX_HOST_HOPS: usize = 8;
/// The longest question line (a Claude Code session id is far shorter).
pub const MAX_QUESTION: usize = 256;
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
    let mut pid = parent;
    for _ in 0..MAX_HOST_HOPS {
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

fn uid() -> u32 {
    // SAFETY: getuid cannot fail.
    unsafe { libc::getuid() }
}

/// The socket name (without the leading NUL) of `holder` answering for `host`, for `uid`.
pub fn socket_name(uid: u32, host: HostKey, holder: i32) -> String {
    format!("{NAME_PREFIX}{uid}/{}-{}/{holder}", host.pid, host.start)
}

/// One listening holder found in the socket table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Holder {
    /// The host it answers for.
    pub host: HostKey,
    /// The holder's pid (the asker checks that the peer is this process).
    pub pid: i32,
}

/// Parses one socket name of `uid` (as listed in `/proc/net/unix`, `@` for the leading NUL).
pub fn parse_name(uid: u32, listed: &str) -> Option<Holder> {
    let rest = listed.strip_prefix('@')?.strip_prefix(NAME_PREFIX)?;
    let rest = rest.strip_prefix(&format!("{uid}/"))?;
    let (host, holder) = rest.split_once('/')?;
    let (pid, start) = host.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !digits(start) || !digits(holder) {
        return None;
    }
    Some(Holder {
        host: HostKey {
            pid: pid.parse().ok()?,
            start: start.parse().ok()?,
        },
        pid: holder.parse().ok()?,
    })
}

/// The holders of `uid` in the text of `/proc/net/unix` (each once).
pub fn parse_table(uid: u32, table: &str) -> Vec<Holder> {
    let mut out: Vec<Holder> = Vec::new();
    for line in table.lines().skip(1) {
        // Num RefCount Protocol Flags Type St Inode Path
        let Some(path) = line.split_whitespace().nth(7) else {
            continue;
        };
        if let Some(h) = parse_name(uid, path) {
            if !out.contains(&h) {
                out.push(h);
            }
        }
    }
    out
}

/// Whether a holder of uid `own` answers a peer of uid `peer`: only its own user.
pub fn peer_may_ask(own: u32, peer: u32) -> bool {
    own == peer
}

/// Whether an asker of uid `own` trusts an answer from a peer with credentials
/// (`peer_pid`, `peer_uid`) reached under the name of `holder`: the same user, and the very
/// process the name announces (nobody else can listen under a name with our uid and its pid).
pub fn holder_trusted(own: u32, holder: Holder, peer_pid: i32, peer_uid: u32) -> bool {
    own == peer_uid && holder.pid == peer_pid
}

/// What a holder answers to a question carrying `asked` (the asker's Claude Code session id, if
/// any): active, unless both sides know a Claude Code session id and they differ.
pub fn answer_for(active: bool, mine: Option<&str>, asked: Option<&str>) -> bool {
    match (mine, asked) {
        _ if !active => false,
        (Some(m), Some(a)) if !m.is_empty() && !a.is_empty() => m == a,
        _ => true,
    }
}

/// Decides, for one question (`None`: no Claude Code session id), whether this holder is active.
pub type Answer = dyn Fn(Option<&str>) -> bool + Send + Sync;

/// A listening holder. Dropping it (or [`Beacon::close`]) stops answering; so does the end of
/// the process.
#[derive(Debug)]
pub struct Beacon {
    #[cfg(target_os = "linux")]
    fd: Arc<std::os::fd::OwnedFd>,
    name: String,
}

impl Beacon {
    /// The socket name (without the leading NUL).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Stops answering: askers find nobody from now on.
    pub fn close(&self) {
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

/// Starts answering for `host` from this process: binds the abstract socket and answers each
/// question with `answer` on a small thread of its own.
pub fn announce(host: HostKey, answer: Arc<Answer>) -> Result<Beacon, String> {
    #[cfg(target_os = "linux")]
    {
        linux::announce(host, answer)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (host, answer);
        Err("activation presence needs Linux (abstract Unix sockets); not supported here".into())
    }
}

/// This process's own presence (the library in a host process), started once.
static SELF_BEACON: std::sync::OnceLock<Result<Beacon, String>> = std::sync::OnceLock::new();

/// Starts this process's presence for itself, once: a process that loads the library answers
/// for itself with `answer` (the library passes "any session of this process is active").
/// Returns the error of the one attempt, every time, when it failed.
pub fn serve_self(answer: fn() -> bool) -> Result<(), String> {
    SELF_BEACON
        .get_or_init(|| {
            let me = HostKey::of_self().ok_or("cannot read this process's record")?;
            announce(me, Arc::new(move |_| answer()))
        })
        .as_ref()
        .map(|_| ())
        .map_err(Clone::clone)
}

/// The result of asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// A holder answering for one of the ancestors said active.
    Active,
    /// Nobody said active (no holder, holders gone, or all said no).
    Dormant,
}

/// A Claude Code session id as both sides use it: `None` when absent, empty, or not one line
/// (a question is one line).
pub fn claude_session(raw: Option<&str>) -> Option<&str> {
    raw.filter(|s| !s.is_empty() && !s.contains(['\n', '\r']))
}

/// The listening holders of this user (none outside Linux). `Err` when the socket table
/// cannot be read.
fn holders() -> Result<Vec<Holder>, String> {
    #[cfg(target_os = "linux")]
    {
        let table = std::fs::read_to_string("/proc/net/unix")
            .map_err(|e| format!("cannot read /proc/net/unix: {e}"))?;
        Ok(parse_table(uid(), &table))
    }
    #[cfg(not(target_os = "linux"))]
    {
        Ok(Vec::new())
    }
}

/// Asks the holders of every ancestor of the calling process whether they are active for
/// `session` (the asker's Claude Code session id, if any). Any failure to ask counts as no.
pub fn ask_ancestors(session: Option<&str>) -> Found {
    match holders() {
        Ok(holders) if !holders.is_empty() => ask_among(&holders, &ancestors_of_self(), session),
        _ => Found::Dormant,
    }
}

/// Asks the holders answering for one of `hosts` (nearest first) whether one is active for
/// `session`: what the `herdr-link guard` hook asks for its own host. `Err` when the socket
/// table cannot be read.
pub fn ask_hosts(hosts: &[HostKey], session: Option<&str>) -> Result<Found, String> {
    Ok(ask_among(&holders()?, hosts, session))
}

/// Asks, nearest ancestor first, the `holders` that answer for one of `ancestors`.
pub fn ask_among(holders: &[Holder], ancestors: &[HostKey], session: Option<&str>) -> Found {
    for host in ancestors {
        for h in holders.iter().filter(|h| h.host == *host) {
            if ask(*h, session) {
                return Found::Active;
            }
        }
    }
    Found::Dormant
}

/// Asks one holder. `false` for "no", and for every failure (gone, another user, timeout).
pub fn ask(holder: Holder, session: Option<&str>) -> bool {
    #[cfg(target_os = "linux")]
    {
        linux::ask(holder, session).unwrap_or(false)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (holder, session);
        false
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::net::UnixStream;
    use std::time::Duration;

    /// How long either side waits for the other.
    const IO_TIMEOUT: Duration = Duration::from_millis(500);

    fn last_error(what: &str) -> String {
        format!("{what}: {}", std::io::Error::last_os_error())
    }

    /// `sockaddr_un` for an abstract `name` and its length.
    fn address(name: &str) -> Result<(libc::sockaddr_un, libc::socklen_t), String> {
        // SAFETY: all-zero is a valid sockaddr_un.
        let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        let bytes = name.as_bytes();
        if bytes.len() + 1 > addr.sun_path.len() {
            return Err("socket name too long".into());
        }
        for (i, b) in bytes.iter().enumerate() {
            addr.sun_path[i + 1] = *b as libc::c_char;
        }
        let len = std::mem::size_of::<libc::sa_family_t>() + 1 + bytes.len();
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

    pub(super) fn announce(host: HostKey, answer: Arc<Answer>) -> Result<Beacon, String> {
        let name = socket_name(uid(), host, std::process::id() as i32);
        let fd = socket()?;
        let (addr, len) = address(&name)?;
        // SAFETY: addr/len form a valid abstract address.
        let rc = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_un).cast(),
                len,
            )
        };
        if rc != 0 {
            return Err(last_error(&format!("bind @{name}")));
        }
        // SAFETY: a bound socket.
        if unsafe { libc::listen(fd.as_raw_fd(), 16) } != 0 {
            return Err(last_error("listen"));
        }
        let fd = Arc::new(fd);
        let listener = fd.clone();
        std::thread::Builder::new()
            .name("herdr-link-presence".into())
            .spawn(move || serve(&listener, &*answer))
            .map_err(|e| format!("cannot start the presence thread: {e}"))?;
        Ok(Beacon { fd, name })
    }

    /// Accepts until the socket is shut down; answers one question per connection.
    fn serve(listener: &OwnedFd, answer: &Answer) {
        let own = uid();
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
        let mut buf = Vec::with_capacity(64);
        let mut chunk = [0u8; 128];
        while !buf.contains(&b'\n') {
            let n = conn.read(&mut chunk)?;
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
            if buf.len() > MAX_QUESTION {
                return Ok(()); // not a question: no answer
            }
        }
        let Some(end) = buf.iter().position(|&b| b == b'\n') else {
            return Ok(());
        };
        let Ok(line) = std::str::from_utf8(&buf[..end]) else {
            return Ok(());
        };
        let asked = (!line.is_empty()).then_some(line);
        conn.write_all(if answer(asked) { b"1" } else { b"0" })
    }

    pub(super) fn ask(holder: Holder, session: Option<&str>) -> Result<bool, String> {
        let own = uid();
        let name = socket_name(own, holder.host, holder.pid);
        let fd = socket()?;
        let (addr, len) = address(&name)?;
        // SAFETY: addr/len form a valid abstract address.
        let rc = unsafe {
            libc::connect(
                fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_un).cast(),
                len,
            )
        };
        if rc != 0 {
            return Err(last_error("connect"));
        }
        let mut conn = UnixStream::from(fd);
        let (pid, peer_uid) = peer(&conn).ok_or("no peer credentials")?;
        if !holder_trusted(own, holder, pid, peer_uid) {
            return Ok(false);
        }
        conn.set_read_timeout(Some(IO_TIMEOUT))
            .and_then(|()| conn.set_write_timeout(Some(IO_TIMEOUT)))
            .map_err(|e| e.to_string())?;
        let question = session
            .filter(|s| s.len() < MAX_QUESTION && !s.contains(['\n', '\r']))
            .unwrap_or("");
        conn.write_all(format!("{question}\n").as_bytes())
            .map_err(|e| e.to_string())?;
        let mut byte = [0u8; 1];
        match conn.read(&mut byte) {
            Ok(1) => Ok(byte[0] == b'1'),
            Ok(_) => Ok(false),
            Err(e) => Err(e.to_string()),
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
    fn names_round_trip_and_foreign_names_are_ignored() {
        let host = HostKey {
            pid: 4242,
            start: 987,
        };
        let name = socket_name(1000, host, 77);
        assert_eq!(name, "herdr-link/active/1000/4242-987/77");
        let holder = Holder { host, pid: 77 };
        assert_eq!(parse_name(1000, &format!("@{name}")), Some(holder));
        assert_eq!(parse_name(1001, &format!("@{name}")), None, "another uid");
        assert_eq!(parse_name(1000, &name), None, "not abstract");
        for bad in [
            "@herdr-link/active/1000/4242/77",
            "@herdr-link/active/1000/4242-x/77",
            "@herdr-link/active/1000/-1-2/77",
            "@herdr-link/active/1000/1-2/",
            "@herdr-link/active/1000/1-2/3/4",
        ] {
            assert_eq!(parse_name(1000, bad), None, "{bad}");
        }
        let table = format!(
            "Num       RefCount Protocol Flags    Type St Inode Path\n\
             0000000000000000: 00000002 00000000 00010000 0001 01 1234 @{name}\n\
             0000000000000000: 00000003 00000000 00000000 0001 03 1235 @{name}\n\
             0000000000000000: 00000002 00000000 00010000 0001 01 1236 /run/x.sock\n\
             0000000000000000: 00000002 00000000 00000000 0002 01 1237\n"
        );
        assert_eq!(parse_table(1000, &table), vec![holder]);
    }

    #[test]
    fn peer_credentials_rules() {
        assert!(peer_may_ask(1000, 1000));
        assert!(!peer_may_ask(1000, 0));
        assert!(!peer_may_ask(0, 1000));
        let h = Holder {
            host: HostKey { pid: 1, start: 2 },
            pid: 50,
        };
        assert!(holder_trusted(1000, h, 50, 1000));
        assert!(!holder_trusted(1000, h, 51, 1000), "another process");
        assert!(!holder_trusted(1000, h, 50, 0), "another user");
    }

    #[test]
    fn claude_session_ids_compare_only_when_both_are_known() {
        assert!(answer_for(true, None, None));
        assert!(answer_for(true, Some("s1"), None));
        assert!(answer_for(true, None, Some("s1")));
        assert!(answer_for(true, Some("s1"), Some("s1")));
        assert!(!answer_for(true, Some("s1"), Some("s2")));
        assert!(answer_for(true, Some(""), Some("s2")));
        assert!(!answer_for(false, None, None));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_live_holder_answers_and_a_closed_one_does_not() {
        use std::sync::atomic::{AtomicBool, Ordering};
        // A made-up host key: the test process stands in for the holder.
        let host = HostKey {
            pid: std::process::id() as i32,
            start: 1,
        };
        let on = Arc::new(AtomicBool::new(true));
        let flag = on.clone();
        let beacon = announce(
            host,
            Arc::new(move |asked| answer_for(flag.load(Ordering::SeqCst), Some("mine"), asked)),
        )
        .unwrap();
        let me = Holder {
            host,
            pid: std::process::id() as i32,
        };
        let table = std::fs::read_to_string("/proc/net/unix").unwrap();
        assert!(parse_table(uid(), &table).contains(&me), "listed");
        assert!(ask(me, None));
        assert!(ask(me, Some("mine")));
        assert!(!ask(me, Some("other")), "another Claude Code session");
        assert_eq!(ask_among(&[me], &[host], None), Found::Active);
        let reused = HostKey {
            pid: host.pid,
            start: 2,
        };
        assert_eq!(
            ask_among(&[me], &[reused], None),
            Found::Dormant,
            "reused pid"
        );
        // A name whose pid is not the listener's is not trusted.
        let liar = Holder { host, pid: 1 };
        assert!(!ask(liar, None));
        on.store(false, Ordering::SeqCst);
        assert!(!ask(me, None), "answers live state");
        on.store(true, Ordering::SeqCst);
        // A second holder for the same host cannot take the same name from this process.
        assert!(announce(host, Arc::new(|_| true)).is_err());
        drop(beacon);
        assert!(!ask(me, None), "closed: nobody answers");
    }
}
