//! The private per-user runtime directory that processes of one user share: the delivery turns
//! of [`crate::turn`]. (Activation is never kept here, or in any file: the live process holding
//! it answers for it, [`crate::presence`].)
//!
//! It is the first of these that can be ours:
//!
//! 1. `/run/user/<uid>/herdr-link`, when `/run/user/<uid>` is a 0700 directory of ours;
//! 2. `/tmp/herdr-link-<uid>`, unless that path already exists and is not a private directory of
//!    ours (another local user can create it first: a squatter);
//! 3. `<home>/.local/state/herdr-link`, with the home directory from the user database: a path
//!    only this user (and root) can create.
//!
//! The directory must be a real directory owned by us with mode 0700. No environment variable is
//! read: Codex gives its MCP servers a filtered environment, and every process of the user (MCP
//! servers, hooks, hosts that load the library) must find the same one.

use std::ffi::CStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The real user id of this process.
pub fn uid() -> u32 {
    // SAFETY: getuid cannot fail.
    unsafe { libc::getuid() }
}

/// Whether `path` is a real directory (not a symlink) owned by us and closed to others.
pub fn private_dir(path: &Path) -> bool {
    match std::fs::symlink_metadata(path) {
        Ok(m) => m.file_type().is_dir() && m.uid() == uid() && m.mode() & 0o077 == 0,
        Err(_) => false,
    }
}

/// Which of the candidates of the module doc a runtime directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `/run/user/<uid>/herdr-link`.
    Run,
    /// `/tmp/herdr-link-<uid>`.
    Tmp,
    /// `<home>/.local/state/herdr-link` (`/tmp/herdr-link-<uid>` was taken).
    Home,
}

/// The runtime directory and why it was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The directory (it may not exist yet).
    pub path: PathBuf,
    /// Which candidate it is.
    pub kind: Kind,
    /// Why an earlier candidate was passed over (for the operator log and `doctor`).
    pub passed_over: Option<String>,
}

/// The candidates of the module doc, as paths.
#[derive(Debug, Clone)]
pub struct Candidates {
    /// `/run/user/<uid>`: used (its `herdr-link` subdirectory) when it is a private directory.
    pub run_user: PathBuf,
    /// `/tmp/herdr-link-<uid>`.
    pub tmp: PathBuf,
    /// `<home>/.local/state/herdr-link`, when the user database names a home directory.
    pub home: Option<PathBuf>,
}

impl Candidates {
    /// This user's candidates.
    pub fn of_user() -> Candidates {
        let uid = uid();
        Candidates {
            run_user: PathBuf::from(format!("/run/user/{uid}")),
            tmp: PathBuf::from(format!("/tmp/herdr-link-{uid}")),
            home: home_dir(uid).map(|h| h.join(".local/state/herdr-link")),
        }
    }

    /// The first candidate that is, or can become, ours (see the module doc). Creates nothing.
    pub fn choose(&self) -> Choice {
        if private_dir(&self.run_user) {
            return Choice {
                path: self.run_user.join("herdr-link"),
                kind: Kind::Run,
                passed_over: None,
            };
        }
        let taken = match std::fs::symlink_metadata(&self.tmp) {
            Err(_) => None,
            Ok(_) if private_dir(&self.tmp) => None,
            Ok(m) => Some(format!(
                "{} is not a private directory of uid {} (owner uid {}, mode {:o}{})",
                self.tmp.display(),
                uid(),
                m.uid(),
                m.mode() & 0o7777,
                if m.file_type().is_symlink() {
                    ", a symlink"
                } else {
                    ""
                }
            )),
        };
        match (taken, &self.home) {
            (None, _) => Choice {
                path: self.tmp.clone(),
                kind: Kind::Tmp,
                passed_over: None,
            },
            (Some(why), Some(home)) => Choice {
                path: home.clone(),
                kind: Kind::Home,
                passed_over: Some(why),
            },
            // No home directory to fall back to: the taken path is refused when it is prepared.
            (Some(why), None) => Choice {
                path: self.tmp.clone(),
                kind: Kind::Tmp,
                passed_over: Some(why),
            },
        }
    }
}

/// The runtime directory (see the module doc). Never reads the environment; creates nothing.
pub fn base_dir() -> PathBuf {
    Candidates::of_user().choose().path
}

/// The home directory of `uid` in the user database, looked up once per process and uid: every
/// delivery asks for the candidates, and the lookup reads the user database (a file or a name
/// service) each time, while an account's home does not move under a running process.
fn home_dir(uid: u32) -> Option<PathBuf> {
    static HOMES: std::sync::Mutex<Vec<(u32, Option<PathBuf>)>> = std::sync::Mutex::new(Vec::new());
    let mut homes = HOMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, home)) = homes.iter().find(|(u, _)| *u == uid) {
        return home.clone();
    }
    let home = lookup_home(uid);
    homes.push((uid, home.clone()));
    home
}

/// The home directory of `uid` in the user database (`getpwuid_r`), if any.
fn lookup_home(uid: u32) -> Option<PathBuf> {
    let mut buf = vec![0u8; 4096];
    loop {
        // SAFETY: an all-zero passwd is a valid out-parameter; getpwuid_r fills it and points its
        // strings into `buf`, which outlives every use below.
        let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: valid pointers to `pw`, `buf` (with its length) and `result`.
        let rc = unsafe {
            libc::getpwuid_r(
                uid,
                &mut pw,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut result,
            )
        };
        if rc == libc::ERANGE && buf.len() < 1 << 20 {
            buf.resize(buf.len() * 2, 0);
            continue;
        }
        if rc != 0 || result.is_null() || pw.pw_dir.is_null() {
            return None;
        }
        // SAFETY: pw_dir is a NUL-terminated string inside `buf`.
        let dir = unsafe { CStr::from_ptr(pw.pw_dir) };
        let dir = Path::new(std::ffi::OsStr::from_bytes(dir.to_bytes()));
        return (dir.is_absolute() && dir != Path::new("/")).then(|| dir.to_path_buf());
    }
}

/// Creates `path` as a 0700 directory, or accepts it if it already is a private directory of
/// ours; anything else (a symlink, another owner, open permissions) is refused with a reason.
pub fn ensure_private_dir(path: &Path) -> Result<(), String> {
    make_private_dir(path, false)
}

/// [`ensure_private_dir`] for a chosen runtime directory: a home state directory gets its
/// missing parents too (`~/.local/state` need not exist yet).
pub fn ensure_base(choice: &Choice) -> Result<(), String> {
    make_private_dir(&choice.path, choice.kind == Kind::Home)
}

fn make_private_dir(path: &Path, parents: bool) -> Result<(), String> {
    if parents {
        if let Some(parent) = path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
    }
    // Nearly always already there: one look instead of a failing mkdir and a look.
    if private_dir(path) {
        return Ok(());
    }
    match std::fs::DirBuilder::new().mode(0o700).create(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
    }
    if private_dir(path) {
        Ok(())
    } else {
        Err(format!(
            "{} is not a directory of uid {} with mode 0700",
            path.display(),
            uid()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(tag: &str) -> PathBuf {
        let p =
            std::env::temp_dir().join(format!("herdr-link-rundir-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        p
    }

    #[test]
    fn creates_accepts_and_refuses() {
        let base = scratch("make").join("d");
        ensure_private_dir(&base).unwrap();
        assert!(private_dir(&base));
        ensure_private_dir(&base).unwrap(); // already there
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = ensure_private_dir(&base).unwrap_err();
        assert!(e.contains("0700"), "{e}");
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o700)).unwrap();
        let link = base.with_extension("link");
        std::os::unix::fs::symlink(&base, &link).unwrap();
        assert!(!private_dir(&link));
        assert!(ensure_private_dir(&link).is_err());
        // Missing parents only for a home state directory.
        let deep = base.join("a/b/herdr-link");
        assert!(ensure_private_dir(&deep).is_err());
        let choice = Choice {
            path: deep.clone(),
            kind: Kind::Home,
            passed_over: None,
        };
        ensure_base(&choice).unwrap();
        assert!(private_dir(&deep));
        let _ = std::fs::remove_dir_all(base.parent().unwrap());
        let b = base_dir();
        assert!(
            b.ends_with(format!("herdr-link-{}", uid())) || b.ends_with("herdr-link"),
            "{b:?}"
        );
    }

    /// Makes `path` a directory another user could have made first: owned by `nobody` when this
    /// runs as root, else one of ours that is open to others (either is "not ours").
    fn squat(path: &Path) {
        std::fs::create_dir(path).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
        if uid() == 0 {
            let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
            // SAFETY: a valid path string; chown to the conventional `nobody` ids.
            assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
    }

    #[test]
    fn tmp_is_used_unless_another_user_took_it_then_home() {
        let root = scratch("choose");
        let c = Candidates {
            run_user: root.join("run-user-absent"),
            tmp: root.join("tmp-herdr-link"),
            home: Some(root.join("home/.local/state/herdr-link")),
        };
        // Nothing there yet, or ours: /tmp.
        let first = c.choose();
        assert_eq!((first.kind, &first.path), (Kind::Tmp, &c.tmp));
        assert_eq!(first.passed_over, None);
        ensure_base(&first).unwrap();
        assert_eq!(c.choose(), first);
        std::fs::remove_dir(&c.tmp).unwrap();

        // Taken by someone else: the home state directory, which can then be made ours.
        squat(&c.tmp);
        let fallback = c.choose();
        assert_eq!(fallback.kind, Kind::Home);
        assert_eq!(&fallback.path, c.home.as_ref().unwrap());
        let why = fallback.passed_over.clone().unwrap();
        assert!(why.contains("is not a private directory"), "{why}");
        ensure_base(&fallback).unwrap();
        assert!(private_dir(&fallback.path));

        // A symlink at the /tmp path is taken too.
        let c2 = Candidates {
            tmp: root.join("tmp-link"),
            ..c.clone()
        };
        std::os::unix::fs::symlink(&fallback.path, &c2.tmp).unwrap();
        assert_eq!(c2.choose().kind, Kind::Home);

        // No home directory to fall back to: the taken path stays, and preparing it fails.
        let c3 = Candidates {
            home: None,
            ..c.clone()
        };
        let none = c3.choose();
        assert_eq!(none.kind, Kind::Tmp);
        assert!(none.passed_over.is_some());
        assert!(ensure_base(&none).is_err());

        // A private /run/user/<uid> comes first.
        std::fs::create_dir(&c.run_user).unwrap();
        std::fs::set_permissions(&c.run_user, std::fs::Permissions::from_mode(0o700)).unwrap();
        let run = c.choose();
        assert_eq!(
            (run.kind, run.path),
            (Kind::Run, c.run_user.join("herdr-link"))
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn the_home_directory_comes_from_the_user_database() {
        // Root's home is /root; any other user's is absolute, or there is none.
        if let Some(h) = home_dir(uid()) {
            assert!(h.is_absolute(), "{h:?}");
        }
        if uid() == 0 {
            assert_eq!(home_dir(0), Some(PathBuf::from("/root")));
        }
        assert_eq!(home_dir(4_000_000_000), None);
    }
}
