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
//!    its own) and execs it (through std's `CommandExt::exec`) with the same argv (`argv[0]`
//!    included), environment, stdio, signal mask and ignored signals as its caller gave the
//!    shim, so exit status, signals and output are Herdr's own. No real Herdr: one line on
//!    stderr, exit 127.
//!
//! Nothing else runs first: no runtime, no bootstrap, no operator log; a non-wait costs a PATH
//! scan and an exec.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use herdr_link::guard::policy;
use herdr_link::paths;
use herdr_link::presence::{self, Found};

/// The name the binary answers to as the shim.
pub const NAME: &str = paths::HERDR;

/// Exit status of a refused wait (sysexits' `EX_NOPERM`): distinct from Herdr's own 0, 1
/// (error) and 2 (usage), and from the shells' 126/127.
pub const EXIT_REFUSED: i32 = 77;

/// Exit status when no real Herdr is found (as a shell's "command not found").
pub const EXIT_NOT_FOUND: i32 = 127;

/// Exit status when the real Herdr was found but could not be executed (as a shell's).
pub const EXIT_CANNOT_EXEC: i32 = 126;

/// The variable that names the real Herdr once `$HERDR_BIN_PATH` names the shim (set by the
/// host wiring, `herdr-link setup`).
pub const REAL_VAR: &str = herdr_link::paths::REAL_HERDR_VAR;

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
    paths::executables(path, NAME, None).into_iter().next()
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
        if named.is_absolute() && paths::is_executable(named) && !is_a_shim(named, me) {
            return Some(named.to_path_buf());
        }
    }
    let candidates = paths::executables(path, NAME, None);
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
    let path = std::env::var_os("PATH").unwrap_or_else(|| paths::DEFAULT_PATH.into());
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

/// Execs `real` with `argv` (`argv[0]` included) through std, then puts back what std's exec
/// changes from the caller's state: std empties the signal mask and resets `SIGPIPE` to its
/// default (which its runtime ignores in every Rust program), so the caller's mask and an
/// ignored `SIGPIPE` are restored in the child just before the exec. Returns only on failure.
fn exec(real: &Path, argv: &[OsString]) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(real);
    cmd.arg0(argv.first().map_or(OsStr::new(NAME), OsString::as_os_str))
        .args(argv.iter().skip(1));
    let inherited = signals::Inherited::now();
    // SAFETY: the closure only makes async-signal-safe calls (sigprocmask, signal).
    unsafe { cmd.pre_exec(move || inherited.restore()) };
    cmd.exec()
}

/// The signal state the shim's caller gave it, which a direct exec would have passed on.
mod signals {
    use std::sync::atomic::{AtomicU8, Ordering};

    /// `SIGPIPE` as found before std's runtime set it ignored: unknown, default, ignored.
    static SIGPIPE_AT_START: AtomicU8 = AtomicU8::new(UNKNOWN);
    const UNKNOWN: u8 = 0;
    const DEFAULT: u8 = 1;
    const IGNORED: u8 = 2;

    /// Runs before `main` (and before std ignores `SIGPIPE`): records the disposition the
    /// process was started with.
    extern "C" fn record_sigpipe() {
        // SAFETY: querying (not changing) a disposition into a zeroed sigaction.
        let ignored = unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(libc::SIGPIPE, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_IGN
        };
        SIGPIPE_AT_START.store(if ignored { IGNORED } else { DEFAULT }, Ordering::Relaxed);
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[used]
    #[link_section = ".init_array"]
    static RECORD_SIGPIPE: extern "C" fn() = record_sigpipe;

    #[cfg(target_vendor = "apple")]
    #[used]
    #[link_section = "__DATA,__mod_init_func"]
    static RECORD_SIGPIPE: extern "C" fn() = record_sigpipe;

    /// The caller's signal mask and whether it ignored `SIGPIPE`.
    #[derive(Clone, Copy)]
    pub struct Inherited {
        mask: libc::sigset_t,
        sigpipe_ignored: bool,
    }

    impl Inherited {
        /// Reads the state now (std's runtime does not change the mask, so it is the caller's).
        pub fn now() -> Inherited {
            // SAFETY: an all-zero sigset is valid storage; sigprocmask only fills it.
            let mut mask: libc::sigset_t = unsafe { std::mem::zeroed() };
            // SAFETY: reading the current mask into `mask`.
            unsafe { libc::sigprocmask(libc::SIG_BLOCK, std::ptr::null(), &mut mask) };
            Inherited {
                mask,
                sigpipe_ignored: SIGPIPE_AT_START.load(Ordering::Relaxed) == IGNORED,
            }
        }

        /// In the child, after std's own reset: the caller's mask and `SIGPIPE` again.
        pub fn restore(&self) -> std::io::Result<()> {
            // SAFETY: async-signal-safe calls on valid arguments.
            unsafe {
                if libc::sigprocmask(libc::SIG_SETMASK, &self.mask, std::ptr::null_mut()) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if self.sigpipe_ignored
                    && libc::signal(libc::SIGPIPE, libc::SIG_IGN) == libc::SIG_ERR
                {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        }
    }
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
