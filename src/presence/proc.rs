//! Process records and the walk up a process's ancestors: who the host of a holder is, and
//! whom an asker belongs to (`/proc` on Linux, `proc_pidinfo` on macOS).

/// The most ancestors an asker looks at.
pub const MAX_ANCESTORS: usize = 64;
/// How many ancestors the host walk of a holder (which skips shells) looks at.
const MAX_HOST_HOPS: usize = 8;

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

    /// Parses the text form `<pid>-<start>` (as in [`PRESENCE_VAR`](super::PRESENCE_VAR) and socket names): digits
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

/// The record of the process `host_from` finds (its `comm` tells a host from, say, the Herdr
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
