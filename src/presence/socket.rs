//! The OS side: a holder's listening socket ([`Beacon`]) and one question over a Unix socket
//! (Linux only; elsewhere nothing listens).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::names::{socket_name, Holder};
use super::proc::HostKey;
use super::question::{holder_trusted, peer_may_ask, Answer, Question, Reply, MAX_QUESTION};
use crate::rundir;

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

#[cfg(target_os = "linux")]
pub(super) mod linux {
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

    pub fn announce(dir: &Path, host: HostKey, answer: Arc<Answer>) -> Result<Beacon, String> {
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

    pub fn ask(holder: &Holder, question: &Question) -> Reply {
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
