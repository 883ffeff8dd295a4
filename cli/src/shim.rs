//! `herdr-link` run under the name `herdr`: Herdr's CLI front, the exec-boundary guard
//! (docs/guard.md, "The exec boundary").
//!
//! `herdr-link setup` puts a link named `herdr` to this binary in a private shim directory,
//! that directory first on the PATH of the host's shell commands and `$HERDR_BIN_PATH` naming
//! the link (the real Herdr kept in [`REAL_VAR`]), so every `herdr` a command starts through
//! PATH or `$HERDR_BIN_PATH` (from bash, python, make, git aliases...) comes here with its real
//! argv. The shim
//!
//! 1. judges the argv with the guard's wait policy ([`herdr_link::guard::policy`]);
//! 2. only for a wait, asks whether Link is active for it ([`herdr_link::presence`]: the
//!    holders of the host named by its presence key and of its ancestors); if so, or if that
//!    cannot be known (a holder it may not reach from inside a sandbox), it refuses: the
//!    guard's reason on stderr, exit status [`EXIT_REFUSED`], nothing run;
//! 3. otherwise finds the real Herdr (`$HERDR_LINK_HERDR`, else the next `herdr` on PATH after
//!    its own) and `execv`s it with the same argv (`argv[0]` included), environment and stdio,
//!    so exit status, signals and output are Herdr's own. No real Herdr: one line on stderr,
//!    exit 127.
//!
//! Nothing else runs first: no runtime, no bootstrap, no operator log; a non-wait costs a PATH
//! scan and an exec.

use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use herdr_link::guard::policy;
use herdr_link::presence::{self, Found};

/// The name the binary answers to as the shim.
pub const NAME: &str = "herdr";

/// Exit status of a refused wait (sysexits' `EX_NOPERM`): distinct from Herdr's own 0, 1
/// (error) and 2 (usage), and from the shells' 126/127.
pub const EXIT_REFUSED: i32 = 77;

/// Exit status when no real Herdr is found (as a shell's "command not found").
pub const EXIT_NOT_FOUND: i32 = 127;

/// Exit status when the real Herdr was found but could not be executed (as a shell's).
pub const EXIT_CANNOT_EXEC: i32 = 126;

/// The variable that names the real Herdr once `$HERDR_BIN_PATH` names the shim (set by the
/// host wiring, `herdr-link setup`).
pub const REAL_VAR: &str = "HERDR_LINK_HERDR";

/// The PATH used when none is set (what `execvp` uses).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// Whether the process was started under the shim's name (`argv[0]`'s last component).
pub fn is_shim(argv0: &OsStr) -> bool {
    Path::new(argv0).file_name() == Some(OsStr::new(NAME))
}

/// A file's identity, followed through symlinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileId {
    dev: u64,
    ino: u64,
}

fn file_id(path: &Path) -> Option<FileId> {
    let m = std::fs::metadata(path).ok()?;
    Some(FileId {
        dev: m.dev(),
        ino: m.ino(),
    })
}

/// Whether `path` is an executable regular file (after symlinks).
fn executable(path: &Path) -> bool {
    let Ok(m) = std::fs::metadata(path) else {
        return false;
    };
    if !m.is_file() || m.mode() & 0o111 == 0 {
        return false;
    }
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid C string.
    unsafe { libc::access(c.as_ptr(), libc::X_OK) == 0 }
}

/// Whether `path` is a herdr-link binary: this very file (by device and inode, through links
/// of any kind), or a file whose resolved name is `herdr-link` (another build of the shim).
pub(crate) fn is_a_shim(path: &Path, me: Option<FileId>) -> bool {
    if me.is_some() && file_id(path) == me {
        return true;
    }
    std::fs::canonicalize(path)
        .ok()
        .is_some_and(|p| p.file_name() == Some(OsStr::new("herdr-link")))
}

/// The first `herdr` on `path` (a PATH value) that is an executable file.
pub fn first_on_path(path: &OsStr) -> Option<PathBuf> {
    candidates(path).next()
}

/// Every executable `herdr` on `path` (a PATH value), in order; an empty entry is `.`, as for
/// `execvp`.
fn candidates(path: &OsStr) -> impl Iterator<Item = PathBuf> + '_ {
    std::env::split_paths(path)
        .map(|d| {
            if d.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                d
            }
        })
        .map(|d| d.join(NAME))
        .filter(|c| executable(c))
}

/// Whether `path` is a herdr-link binary (this one or another build): the shim.
pub fn is_shim_binary(path: &Path) -> bool {
    let me = std::env::current_exe().ok().and_then(|p| file_id(&p));
    is_a_shim(path, me)
}

/// The real Herdr for a shim whose own file is `me`: `named` (the value of [`REAL_VAR`]) when
/// it is an executable that is not a shim, else, looking through `path` (a PATH value), the
/// first `herdr` after the first directory whose `herdr` is a shim, skipping every other shim
/// (so a shim directory listed twice, or `$HERDR_BIN_PATH` naming the shim, never loops).
pub fn find_real(named: Option<&OsStr>, path: &OsStr, me: Option<&Path>) -> Option<PathBuf> {
    let me = me.and_then(file_id);
    if let Some(named) = named.filter(|n| !n.is_empty()).map(Path::new) {
        if named.is_absolute() && executable(named) && !is_a_shim(named, me) {
            return Some(named.to_path_buf());
        }
    }
    let candidates: Vec<PathBuf> = candidates(path).collect();
    let own = candidates.iter().position(|c| is_a_shim(c, me));
    let after = own.map_or(0, |i| i + 1);
    candidates[after..]
        .iter()
        .find(|c| !is_a_shim(c, me))
        .cloned()
}

/// What the shim does with one argv.
#[derive(Debug, PartialEq, Eq)]
pub enum Action {
    /// Refuse: print this reason, exit [`EXIT_REFUSED`].
    Refuse(&'static str),
    /// Refuse a wait whose session state cannot be known: the reason, then why it is unknown.
    RefuseUnknown(&'static str, String),
    /// Run the real Herdr.
    Run,
}

/// The decision for `args` (`argv[1..]`); `found` is asked only for a wait.
pub fn decide(args: &[OsString], found: impl FnOnce() -> Found) -> Action {
    let Some(reason) = policy::judge_args(args).reason() else {
        return Action::Run;
    };
    match found() {
        Found::Active => Action::Refuse(reason),
        Found::Unknown(why) => Action::RefuseUnknown(reason, why),
        Found::Dormant => Action::Run,
    }
}

/// Runs the shim with the full argv (`argv[0]` first). Returns only when nothing was executed.
pub fn run(argv: Vec<OsString>) -> i32 {
    use std::io::Write;
    let args = argv.get(1..).unwrap_or(&[]);
    match decide(args, || presence::ask_exec(&presence::Asker::of_self())) {
        Action::Run => {}
        Action::Refuse(reason) => {
            let _ = writeln!(std::io::stderr().lock(), "{reason}");
            return EXIT_REFUSED;
        }
        Action::RefuseUnknown(reason, why) => {
            let _ = writeln!(
                std::io::stderr().lock(),
                "{reason}\nherdr: the herdr-link shim cannot tell whether Herdr Link is active \
                 for this command ({why}), so it refuses the wait"
            );
            return EXIT_REFUSED;
        }
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| DEFAULT_PATH.into());
    let me = std::env::current_exe().ok();
    let named = std::env::var_os(REAL_VAR);
    let Some(real) = find_real(named.as_deref(), &path, me.as_deref()) else {
        let _ = writeln!(
            std::io::stderr().lock(),
            "herdr: no real Herdr found on PATH after the herdr-link shim (install Herdr or fix PATH)"
        );
        return EXIT_NOT_FOUND;
    };
    let err = exec(&real, &argv);
    let _ = writeln!(
        std::io::stderr().lock(),
        "herdr: cannot execute {}: {err}",
        real.display()
    );
    if err.raw_os_error() == Some(libc::ENOENT) {
        EXIT_NOT_FOUND
    } else {
        EXIT_CANNOT_EXEC
    }
}

/// `execv(real, argv)`; returns only on failure.
fn exec(real: &Path, argv: &[OsString]) -> std::io::Error {
    let Ok(prog) = CString::new(real.as_os_str().as_bytes()) else {
        return std::io::Error::from_raw_os_error(libc::EINVAL);
    };
    let mut owned: Vec<CString> = Vec::with_capacity(argv.len().max(1));
    for a in argv {
        match CString::new(a.clone().into_vec()) {
            Ok(c) => owned.push(c),
            // A NUL cannot be in a real argv; never reached.
            Err(_) => return std::io::Error::from_raw_os_error(libc::EINVAL),
        }
    }
    if owned.is_empty() {
        owned.push(CString::new(NAME).unwrap_or_default());
    }
    let mut ptrs: Vec<*const libc::c_char> = owned.iter().map(|c| c.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    // SAFETY: NUL-terminated strings and a null-terminated array that outlive the call.
    unsafe { libc::execv(prog.as_ptr(), ptrs.as_ptr()) };
    std::io::Error::last_os_error()
}

#[cfg(test)]
mod tests {
    use super::*;
    use herdr_link::guard::Verdict;

    fn os(args: &str) -> Vec<OsString> {
        args.split(' ')
            .filter(|w| !w.is_empty())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn recognises_its_name() {
        assert!(is_shim(OsStr::new("herdr")));
        assert!(is_shim(OsStr::new(
            "/home/u/.local/share/herdr-link/shim/herdr"
        )));
        assert!(!is_shim(OsStr::new("herdr-link")));
        assert!(!is_shim(OsStr::new("/x/herdr/herdr-link")));
    }

    #[test]
    fn refuses_only_active_waits_and_asks_only_for_waits() {
        let wait = os("agent wait beta");
        assert_eq!(
            decide(&wait, || Found::Active),
            Action::Refuse(Verdict::BlockEndTurn.reason().unwrap())
        );
        assert_eq!(decide(&wait, || Found::Dormant), Action::Run);
        assert_eq!(
            decide(&wait, || Found::Unknown("EPERM".into())),
            Action::RefuseUnknown(Verdict::BlockEndTurn.reason().unwrap(), "EPERM".into()),
            "a wait that cannot be judged is refused"
        );
        assert_eq!(
            decide(&os("--session s agent prompt b hi --wait"), || {
                Found::Active
            }),
            Action::Refuse(Verdict::Block.reason().unwrap())
        );
        for allowed in [
            "agent list",
            "agent prompt b hi",
            "agent prompt b --wait",
            "agent prompt b hi -- --wait",
            "-- agent wait x",
            "",
        ] {
            assert_eq!(
                decide(&os(allowed), || panic!("asked for {allowed:?}")),
                Action::Run
            );
        }
    }
}
