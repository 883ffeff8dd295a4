//! Signal dispositions for the processes a test starts.
//!
//! A test started from a background shell (`nohup scripts/test.sh &`) inherits SIGINT and
//! SIGQUIT ignored, and every child it starts inherits that too; a child that must be stoppable
//! by those signals (a stand-in Herdr killed by SIGINT, a Node host stopped with SIGINT) then
//! is not. [`defaults`] gives a command the dispositions a terminal would, so the test behaves
//! the same wherever it runs.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// The signals a shell or terminal may have left ignored, which a child should see at their
/// default: SIGHUP (nohup), SIGINT and SIGQUIT (a background job), SIGPIPE, SIGTERM.
pub const RESET: [libc::c_int; 5] = [
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGPIPE,
    libc::SIGTERM,
];

/// Makes `cmd`'s child start with [`RESET`] at their default dispositions and nothing blocked
/// (as from an interactive terminal), whatever this process inherited.
pub fn defaults(cmd: &mut Command) -> &mut Command {
    with(cmd, &[], &[])
}

/// Like [`defaults`], then `ignored` set to be ignored and `blocked` blocked: a caller in a
/// chosen state.
pub fn with<'a>(
    cmd: &'a mut Command,
    ignored: &[libc::c_int],
    blocked: &[libc::c_int],
) -> &'a mut Command {
    let ignored = ignored.to_vec();
    let blocked = blocked.to_vec();
    // SAFETY: the closure makes only async-signal-safe calls (signal, sigprocmask and the
    // sigset helpers) on values owned by the closure.
    unsafe {
        cmd.pre_exec(move || {
            for s in RESET {
                libc::signal(s, libc::SIG_DFL);
            }
            for &s in &ignored {
                libc::signal(s, libc::SIG_IGN);
            }
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for &s in &blocked {
                libc::sigaddset(&mut set, s);
            }
            if libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

/// `SigIgn` and `SigBlk` of `/proc/<pid>/status` (hex masks), for comparing what two processes
/// started with.
pub fn status_masks(status: &str) -> (String, String) {
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
            .unwrap_or_default()
    };
    (field("SigIgn:"), field("SigBlk:"))
}
