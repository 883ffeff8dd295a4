//! The private per-user runtime directory that processes of one user share: the delivery turns
//! of [`crate::turn`]. (Activation is never kept here, or in any file: the live process holding
//! it answers for it, [`crate::presence`].)
//!
//! It is `/run/user/<uid>/herdr-link` when `/run/user/<uid>` is a 0700 directory of ours, else
//! `/tmp/herdr-link-<uid>`, and must be a real directory owned by us with mode 0700. No
//! environment variable is read: Codex gives its MCP servers a filtered environment, and every
//! process of the user (MCP servers, hooks, hosts that load the library) must find the same one.

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

/// The runtime directory (see the module doc). Never reads the environment; creates nothing.
pub fn base_dir() -> PathBuf {
    let uid = uid();
    let run = PathBuf::from(format!("/run/user/{uid}"));
    if private_dir(&run) {
        run.join("herdr-link")
    } else {
        PathBuf::from(format!("/tmp/herdr-link-{uid}"))
    }
}

/// Creates `path` as a 0700 directory, or accepts it if it already is a private directory of
/// ours; anything else (a symlink, another owner, open permissions) is refused with a reason.
pub fn ensure_private_dir(path: &Path) -> Result<(), String> {
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

    #[test]
    fn creates_accepts_and_refuses() {
        let base = std::env::temp_dir().join(format!("herdr-link-rundir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        ensure_private_dir(&base).unwrap();
        assert!(private_dir(&base));
        ensure_private_dir(&base).unwrap(); // already there
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = ensure_private_dir(&base).unwrap_err();
        assert!(e.contains("0700"), "{e}");
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o700)).unwrap();
        let link = base.with_extension("link");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&base, &link).unwrap();
        assert!(!private_dir(&link));
        assert!(ensure_private_dir(&link).is_err());
        let _ = std::fs::remove_file(&link);
        let _ = std::fs::remove_dir_all(&base);
        assert!(
            base_dir().ends_with(format!("herdr-link-{}", uid()))
                || base_dir().ends_with("herdr-link")
        );
    }
}
