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

mod asker;
mod holder;
mod names;
mod proc;
mod question;
mod socket;

pub use asker::{ask_exec, ask_host, Asker, Found};
pub use holder::{announce, serve_self};
pub use names::dir;
pub use proc::{host_of_self, host_record_from, is_shell, stat, HostKey, ProcStat};
pub use question::{answer_for, Answer, Question, PRESENCE_VAR, SESSION_VAR};
pub use socket::Beacon;

#[cfg(test)]
mod tests;
