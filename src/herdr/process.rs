//! Runs one child process from an argv array with a hard time limit and an output cap.
//!
//! The child gets its own process group, so on timeout (or runaway output) the whole group is
//! killed and the child is reaped before we return: nothing is left behind.

use std::io::{ErrorKind, Read};
use std::os::fd::AsRawFd;
#[cfg(target_os = "linux")]
use std::os::fd::FromRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The most bytes we keep from either stream before giving up on the child.
pub const MAX_OUTPUT: usize = 8 * 1024 * 1024;

/// How a finished child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Exited with this status code.
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
}

/// The collected result of a child that finished in time.
#[derive(Debug)]
pub struct Finished {
    /// How it ended.
    pub exit: Exit,
    /// Everything it wrote to stdout.
    pub stdout: Vec<u8>,
    /// Everything it wrote to stderr.
    pub stderr: Vec<u8>,
}

/// Why a child produced no usable result.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The executable could not be started (missing, not executable, ...).
    #[error("spawn failed: {0}")]
    Spawn(std::io::Error),
    /// The kernel refused the argv as too long (`E2BIG`): the executable was never started.
    #[error("spawn failed, argument list too long ({0} bytes of arguments)")]
    ArgsTooLong(usize),
    /// The time limit passed; the process group was killed and reaped.
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    /// A stream exceeded [`MAX_OUTPUT`]; the process group was killed and reaped.
    #[error("output exceeded {MAX_OUTPUT} bytes")]
    TooLarge,
    /// Reading the pipes or waiting failed.
    #[error("io error: {0}")]
    Io(std::io::Error),
}

/// How [`run`] waits for the child to exit once its output is closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// Asleep on a pidfd where the kernel has them (Linux 5.3 and later), else [`Wait::Poll`].
    #[cfg_attr(not(any(test, target_os = "linux")), allow(dead_code))]
    Best,
    /// `try_wait` at growing intervals (at most 5 ms apart): every platform.
    Poll,
}

/// The child's stdin: `/dev/null`, opened once per process and handed to each child as a copy
/// (a copy of a descriptor costs less than a fresh open of the path); a fresh open if that fails.
fn null_input() -> Stdio {
    static NULL: std::sync::OnceLock<Option<std::fs::File>> = std::sync::OnceLock::new();
    NULL.get_or_init(|| std::fs::File::open("/dev/null").ok())
        .as_ref()
        .and_then(|f| f.try_clone().ok())
        .map_or_else(Stdio::null, Stdio::from)
}

/// Runs `program args...` (no shell), stdin closed, and collects its output within `limit`.
pub fn run(program: &str, args: &[&str], limit: Duration) -> Result<Finished, RunError> {
    let wait = if cfg!(target_os = "linux") {
        Wait::Best
    } else {
        Wait::Poll
    };
    run_waiting(program, args, limit, wait)
}

/// [`run`] with the exit wait chosen, so tests can force the portable path on Linux.
fn run_waiting(
    program: &str,
    args: &[&str],
    limit: Duration,
    wait: Wait,
) -> Result<Finished, RunError> {
    let deadline = Instant::now() + limit;
    let mut child = Command::new(program)
        .args(args)
        .stdin(null_input())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| match e.raw_os_error() {
            Some(libc::E2BIG) => RunError::ArgsTooLong(args.iter().map(|a| a.len() + 1).sum()),
            _ => RunError::Spawn(e),
        })?;
    match collect(&mut child, deadline) {
        Ok((stdout, stderr)) => match wait_until(&mut child, deadline, wait) {
            Ok(Some(status)) => Ok(Finished {
                exit: match (status.code(), status.signal()) {
                    (Some(c), _) => Exit::Code(c),
                    (None, Some(s)) => Exit::Signal(s),
                    (None, None) => Exit::Code(-1),
                },
                stdout,
                stderr,
            }),
            Ok(None) => {
                kill_and_reap(&mut child);
                Err(RunError::Timeout(limit))
            }
            Err(e) => {
                kill_and_reap(&mut child);
                Err(RunError::Io(e))
            }
        },
        Err(e) => {
            kill_and_reap(&mut child);
            Err(match e {
                CollectError::Timeout => RunError::Timeout(limit),
                CollectError::TooLarge => RunError::TooLarge,
                CollectError::Io(e) => RunError::Io(e),
            })
        }
    }
}

enum CollectError {
    Timeout,
    TooLarge,
    Io(std::io::Error),
}

/// Makes the read end of a child's pipe non-blocking. Its only status flag is read-only access
/// (std makes the pipe with no other), so the flags are set without reading them first.
fn set_nonblocking(fd: i32) -> std::io::Result<()> {
    // SAFETY: fcntl on a descriptor we own; no memory is passed.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Bytes read from a pipe at a time (Herdr's answers are mostly far smaller).
const CHUNK: usize = 16 * 1024;

/// Reads stdout and stderr until both reach EOF, the deadline passes or the cap is hit.
fn collect(child: &mut Child, deadline: Instant) -> Result<(Vec<u8>, Vec<u8>), CollectError> {
    let mut out_pipe = child.stdout.take();
    let mut err_pipe = child.stderr.take();
    let mut out = Vec::new();
    let mut err = Vec::new();
    for p in [
        out_pipe.as_ref().map(|p| p.as_raw_fd()),
        err_pipe.as_ref().map(|p| p.as_raw_fd()),
    ]
    .into_iter()
    .flatten()
    {
        set_nonblocking(p).map_err(CollectError::Io)?;
    }
    let mut chunk = [0u8; CHUNK];
    while out_pipe.is_some() || err_pipe.is_some() {
        let now = Instant::now();
        if now >= deadline {
            return Err(CollectError::Timeout);
        }
        let wait_ms = (deadline - now).as_millis().clamp(1, i32::MAX as u128) as i32;
        let mut fds = Vec::with_capacity(2);
        if let Some(p) = &out_pipe {
            fds.push(libc::pollfd {
                fd: p.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
        }
        if let Some(p) = &err_pipe {
            fds.push(libc::pollfd {
                fd: p.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
        }
        // SAFETY: `fds` is a valid, correctly sized array of pollfd for the duration of the call.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, wait_ms) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == ErrorKind::Interrupted {
                continue;
            }
            return Err(CollectError::Io(e));
        }
        if n == 0 {
            continue;
        }
        for (pipe, buf) in [
            (&mut out_pipe as &mut dyn PipeSlot, &mut out),
            (&mut err_pipe, &mut err),
        ] {
            drain(pipe, buf, &mut chunk)?;
        }
    }
    Ok((out, err))
}

/// A pipe that may already be closed; lets stdout and stderr share one drain routine.
trait PipeSlot {
    fn read_some(&mut self, buf: &mut [u8]) -> Option<std::io::Result<usize>>;
    fn close(&mut self);
}

impl<R: Read> PipeSlot for Option<R> {
    fn read_some(&mut self, buf: &mut [u8]) -> Option<std::io::Result<usize>> {
        self.as_mut().map(|r| r.read(buf))
    }
    fn close(&mut self) {
        *self = None;
    }
}

fn drain(pipe: &mut dyn PipeSlot, buf: &mut Vec<u8>, chunk: &mut [u8]) -> Result<(), CollectError> {
    loop {
        match pipe.read_some(chunk) {
            None => return Ok(()),
            Some(Ok(0)) => {
                pipe.close();
                return Ok(());
            }
            Some(Ok(n)) => {
                if buf.len() + n > MAX_OUTPUT {
                    return Err(CollectError::TooLarge);
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            Some(Err(e)) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
            Some(Err(e)) if e.kind() == ErrorKind::Interrupted => continue,
            Some(Err(e)) => return Err(CollectError::Io(e)),
        }
    }
}

/// Waits for the child to exit until the deadline: with [`Wait::Best`] asleep on a pidfd where
/// the kernel has them (woken the moment the child exits), else polling gently.
fn wait_until(
    child: &mut Child,
    deadline: Instant,
    wait: Wait,
) -> std::io::Result<Option<std::process::ExitStatus>> {
    if let Some(status) = child.try_wait()? {
        return Ok(Some(status));
    }
    if wait == Wait::Best {
        if let Some(status) = wait_on_pidfd(child, deadline)? {
            return Ok(status);
        }
    }
    let mut pause = Duration::from_micros(50);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(5));
    }
}

/// Sleeps on a pidfd of the (unreaped) child until it exits or the deadline passes. `Ok(None)`
/// when pidfds are not available here, so the caller falls back to polling.
#[cfg(target_os = "linux")]
fn wait_on_pidfd(
    child: &mut Child,
    deadline: Instant,
) -> std::io::Result<Option<Option<std::process::ExitStatus>>> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1; the child is
    // not reaped yet, so its pid cannot have been reused.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, child.id() as libc::pid_t, 0) };
    if fd < 0 {
        return Ok(None);
    }
    // SAFETY: a descriptor we just opened and own from here on.
    let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) };
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(Some(status)));
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(Some(None));
        }
        let wait_ms = (deadline - now).as_millis().clamp(1, i32::MAX as u128) as i32;
        let mut p = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        if unsafe { libc::poll(&mut p, 1, wait_ms) } < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// No pidfds outside Linux: the caller polls.
#[cfg(not(target_os = "linux"))]
fn wait_on_pidfd(
    _child: &mut Child,
    _deadline: Instant,
) -> std::io::Result<Option<Option<std::process::ExitStatus>>> {
    Ok(None)
}

/// Kills the child's whole process group and reaps the child.
fn kill_and_reap(child: &mut Child) {
    let pid = child.id() as libc::pid_t;
    // SAFETY: signalling the process group we created for this child; no memory involved.
    unsafe {
        libc::killpg(pid, libc::SIGKILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_output_and_exit() {
        let r = run(
            "/bin/sh",
            &["-c", "printf out; printf err >&2; exit 3"],
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(r.exit, Exit::Code(3));
        assert_eq!(r.stdout, b"out");
        assert_eq!(r.stderr, b"err");
    }

    #[test]
    fn spawn_failure() {
        assert!(matches!(
            run("/nonexistent/herdr", &[], Duration::from_secs(1)),
            Err(RunError::Spawn(_))
        ));
    }

    #[test]
    fn argv_too_long_is_its_own_failure() {
        let huge = "x".repeat(200 * 1024);
        let r = run("/bin/true", &[&huge], Duration::from_secs(5));
        assert!(
            matches!(r, Err(RunError::ArgsTooLong(n)) if n > 200 * 1024),
            "{r:?}"
        );
    }

    #[test]
    fn timeout_kills_the_group() {
        let t = Instant::now();
        let r = run(
            "/bin/sh",
            &["-c", "sleep 30 & sleep 30"],
            Duration::from_millis(200),
        );
        assert!(matches!(r, Err(RunError::Timeout(_))));
        assert!(t.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn closed_output_does_not_outlive_the_limit() {
        // The pipes reach EOF at once, but the child lives on: the wait itself must time out.
        let t = Instant::now();
        let r = run(
            "/bin/sh",
            &["-c", "exec >/dev/null 2>&1; sleep 30"],
            Duration::from_millis(200),
        );
        assert!(matches!(r, Err(RunError::Timeout(_))), "{r:?}");
        assert!(t.elapsed() < Duration::from_secs(5));
        // And a quick exit after closing the pipes is seen at once.
        let r = run(
            "/bin/sh",
            &["-c", "exec >/dev/null 2>&1; sleep 0.05; exit 4"],
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(r.exit, Exit::Code(4));
    }

    /// Both exit waits give the same answers: the pidfd one Linux uses and the polling one
    /// every other platform uses (forced here, so Linux runs exercise it too).
    #[test]
    fn both_exit_waits_agree() {
        for wait in [Wait::Best, Wait::Poll] {
            let t = Instant::now();
            let r = run_waiting(
                "/bin/sh",
                &["-c", "exec >/dev/null 2>&1; sleep 30"],
                Duration::from_millis(200),
                wait,
            );
            assert!(matches!(r, Err(RunError::Timeout(_))), "{wait:?}: {r:?}");
            assert!(t.elapsed() < Duration::from_secs(5), "{wait:?}");
            let r = run_waiting(
                "/bin/sh",
                &["-c", "exec >/dev/null 2>&1; sleep 0.05; exit 4"],
                Duration::from_secs(5),
                wait,
            )
            .unwrap();
            assert_eq!(r.exit, Exit::Code(4), "{wait:?}");
            let r = run_waiting(
                "/bin/sh",
                &["-c", "exec >/dev/null 2>&1; sleep 0.05; kill -9 $$"],
                Duration::from_secs(5),
                wait,
            )
            .unwrap();
            assert_eq!(r.exit, Exit::Signal(9), "{wait:?}");
        }
    }

    /// On Linux the default wait really sleeps on a pidfd; polling is only its fallback.
    #[cfg(target_os = "linux")]
    #[test]
    fn linux_waits_on_a_pidfd() {
        let mut child = Command::new("/bin/sh")
            .args(["-c", "sleep 0.05; exit 7"])
            .spawn()
            .unwrap();
        let r = wait_on_pidfd(&mut child, Instant::now() + Duration::from_secs(5)).unwrap();
        assert_eq!(r.flatten().and_then(|s| s.code()), Some(7));
    }

    #[test]
    fn signal_is_reported() {
        let r = run("/bin/sh", &["-c", "kill -9 $$"], Duration::from_secs(5)).unwrap();
        assert_eq!(r.exit, Exit::Signal(9));
    }

    #[test]
    fn output_cap() {
        let r = run(
            "/bin/sh",
            &["-c", "head -c 20000000 /dev/zero"],
            Duration::from_secs(20),
        );
        assert!(matches!(r, Err(RunError::TooLarge)), "{r:?}");
    }
}
