//! Where programs are found and how a path is written for a shell: the one PATH walk (the gate
//! hint's `herdr`, the `herdr` shim's real Herdr, doctor, setup), the herdr shim's directory and
//! the rule that puts it first on a PATH (setup's shell line, the hosts that load the library,
//! doctor), and POSIX shell quoting. A leaf: it imports nothing of the crate.

use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The name of Herdr's CLI, and of the shim's link to this project's binary.
pub const HERDR: &str = "herdr";

/// The shim directory below the user's data directory (`$XDG_DATA_HOME`, default
/// `~/.local/share`): `herdr-link setup` links `herdr` to the `herdr-link` binary there.
pub const SHIM_SUBDIR: &str = "herdr-link/shim";

/// The PATH used when none is set (what `execvp` uses).
pub const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// Whether `path` is an executable regular file for this process (after symlinks).
pub fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid NUL-terminated path for the duration of the call.
    unsafe { libc::access(c.as_ptr(), libc::X_OK) == 0 }
}

/// Every executable regular file called `name` in the directories of `path` (a PATH value), in
/// PATH order, as `execvp` would try them. An empty entry is the working directory, and a
/// relative entry is taken from `cwd` (`None`: the process's working directory), so every path
/// returned is absolute when the working directory can be read.
pub fn executables(path: &OsStr, name: &str, cwd: Option<&Path>) -> Vec<PathBuf> {
    let here = match cwd {
        Some(c) => Some(c.to_path_buf()),
        None => std::env::current_dir().ok(),
    };
    std::env::split_paths(path)
        .map(|dir| {
            if dir.is_absolute() {
                dir
            } else {
                match &here {
                    Some(h) if dir.as_os_str().is_empty() => h.clone(),
                    Some(h) => h.join(dir),
                    None if dir.as_os_str().is_empty() => PathBuf::from("."),
                    None => dir,
                }
            }
        })
        .map(|dir| dir.join(name))
        .filter(|candidate| is_executable(candidate))
        .collect()
}

/// The first executable `name` on this process's `PATH` ([`executables`]). Symlinks are not
/// resolved, so the path survives upgrades that move the real binary.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    executables(&path, name, None).into_iter().next()
}

/// The shim directory for a user whose data directory is `data`.
pub fn shim_dir_in(data: &Path) -> PathBuf {
    data.join(SHIM_SUBDIR)
}

/// The user's data directory from `XDG_DATA_HOME` and `HOME` (each ignored when empty):
/// `$XDG_DATA_HOME`, else `$HOME/.local/share`.
pub fn data_dir(xdg_data_home: Option<&OsStr>, home: Option<&OsStr>) -> Option<PathBuf> {
    xdg_dir(xdg_data_home, home, ".local/share")
}

/// An XDG base directory: the variable's value, else `under` in the home directory.
fn xdg_dir(xdg: Option<&OsStr>, home: Option<&OsStr>, under: &str) -> Option<PathBuf> {
    let set = |v: Option<&OsStr>| v.filter(|v| !v.is_empty()).map(PathBuf::from);
    set(xdg).or_else(|| set(home).map(|h| h.join(under)))
}

/// The user's state directory from `XDG_STATE_HOME` and `HOME` (each ignored when empty):
/// `$XDG_STATE_HOME`, else `$HOME/.local/state`. Where the operator log is kept by default.
pub fn state_dir(xdg_state_home: Option<&OsStr>, home: Option<&OsStr>) -> Option<PathBuf> {
    xdg_dir(xdg_state_home, home, ".local/state")
}

/// This user's shim directory, from the process environment ([`data_dir`]).
pub fn shim_dir() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_DATA_HOME");
    let home = std::env::var_os("HOME");
    data_dir(xdg.as_deref(), home.as_deref()).map(|d| shim_dir_in(&d))
}

/// The PATH rule: `path` with `dir` as its first entry, unless it already is (then `None`:
/// nothing to change, so a second application changes nothing). A `path` that has `dir` later
/// (a command put another directory before it) gets it first again; an empty `path` becomes
/// `dir` alone. Setup's shell line does the same (a test runs both on the same PATHs).
pub fn path_with_first(dir: &Path, path: &OsStr) -> Option<OsString> {
    if std::env::split_paths(path)
        .next()
        .is_some_and(|first| first == dir)
    {
        return None;
    }
    let mut out = OsString::from(dir);
    if !path.is_empty() {
        out.push(":");
        out.push(path);
    }
    Some(out)
}

/// The variable that names the real Herdr once `$HERDR_BIN_PATH` names the shim (the shim finds
/// it there; set by the host wiring).
pub const REAL_HERDR_VAR: &str = "HERDR_LINK_HERDR";

/// What a host gives its shell commands so that every `herdr` they start meets the shim: inside
/// Herdr (`HERDR_ENV=1`) with the shim installed in this user's shim directory ([`shim_dir`]),
/// [`env_for_commands_in`] that directory.
pub fn env_for_commands(path: &OsStr, bin_path: Option<&OsStr>) -> Vec<(&'static str, OsString)> {
    let inside = std::env::var_os("HERDR_ENV").is_some_and(|v| v == "1");
    match shim_dir().filter(|d| inside && d.join(HERDR).exists()) {
        Some(dir) => {
            let _ = WIRED_SHIM.set(dir.clone());
            env_for_commands_in(&dir, path, bin_path)
        }
        None => Vec::new(),
    }
}

/// Changes from [`env_for_commands`] or [`env_for_commands_in`] as a JSON object (name → value,
/// non-UTF-8 bytes replaced), the form the hosts take them in.
pub fn changes_json(
    changes: Vec<(&'static str, OsString)>,
) -> serde_json::Map<String, serde_json::Value> {
    changes
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string_lossy().into_owned().into()))
        .collect()
}

/// The shim directory this process's host gave its commands, recorded by the first
/// [`env_for_commands`] that named it.
static WIRED_SHIM: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Whether this process's shell commands run `herdr` through the shim: its host asked
/// [`env_for_commands`] inside Herdr with the shim installed (an in-process host does so for
/// every command's environment: `hl_command_env`), and the shim is still there. The Bash guard
/// of such a host leaves a `herdr` whose arguments the text cannot know to the shim, as the
/// hook does with `--shim DIR`.
pub fn commands_run_through_shim() -> bool {
    WIRED_SHIM.get().is_some_and(|d| d.join(HERDR).exists())
}

/// The shell commands' environment changes for the shim in `dir`, once `dir/herdr` exists: the
/// shim directory first on PATH ([`path_with_first`]) and `$HERDR_BIN_PATH` naming the shim,
/// with the real Herdr it named kept in [`REAL_HERDR_VAR`]. `path` and `bin_path` are the
/// commands' current values; the result holds only the variables to change (nothing without
/// the shim, or when already done), so applying it twice changes nothing. The caller decides
/// that the commands run inside Herdr.
pub fn env_for_commands_in(
    dir: &Path,
    path: &OsStr,
    bin_path: Option<&OsStr>,
) -> Vec<(&'static str, OsString)> {
    let shim = dir.join(HERDR);
    if !shim.exists() {
        return Vec::new();
    }
    let mut out = Vec::new();
    if let Some(p) = path_with_first(dir, path) {
        out.push(("PATH", p));
    }
    if let Some(real) = bin_path.filter(|b| !b.is_empty() && *b != shim.as_os_str()) {
        out.push((REAL_HERDR_VAR, real.to_os_string()));
        out.push(("HERDR_BIN_PATH", shim.into_os_string()));
    }
    out
}

/// `s` as one POSIX shell word: unchanged when every byte is plainly safe, else in single
/// quotes (each `'` written `'\''`). Never an assignment or a glob: `=`, `*`, `?`, `[` are
/// quoted.
pub fn shell_word(s: &str) -> String {
    let safe = |b: u8| b.is_ascii_alphanumeric() || b"/._-+:@%,".contains(&b);
    if !s.is_empty() && s.bytes().all(safe) {
        s.to_string()
    } else {
        single_quoted(s)
    }
}

/// `s` in POSIX single quotes, always (each `'` written `'\''`): for text that stays the same
/// whatever the path (the shim block setup writes into shell startup files).
pub fn single_quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(
            shell_word("/home/u/.local/bin/herdr"),
            "/home/u/.local/bin/herdr"
        );
        assert_eq!(shell_word("/a b/herdr"), "'/a b/herdr'");
        assert_eq!(shell_word("/it's/herdr"), r"'/it'\''s/herdr'");
        assert_eq!(shell_word("A=b"), "'A=b'");
        assert_eq!(shell_word("*"), "'*'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn path_rule_puts_the_directory_first_once() {
        let dir = Path::new("/s/shim");
        let first = path_with_first(dir, OsStr::new("/usr/bin:/bin")).unwrap();
        assert_eq!(first, "/s/shim:/usr/bin:/bin");
        assert_eq!(
            path_with_first(dir, &first),
            None,
            "a second run changes nothing"
        );
        assert_eq!(
            path_with_first(dir, OsStr::new("/usr/bin:/s/shim")).unwrap(),
            "/s/shim:/usr/bin:/s/shim",
            "a directory put before it: first again"
        );
        assert_eq!(path_with_first(dir, OsStr::new("")).unwrap(), "/s/shim");
        assert_eq!(
            path_with_first(dir, OsStr::new("/s/shim2")).unwrap(),
            "/s/shim:/s/shim2",
            "a prefix is not the entry"
        );
    }

    #[test]
    fn data_dir_prefers_xdg_and_ignores_empty_values() {
        let some = |s: &'static str| Some(OsStr::new(s));
        assert_eq!(data_dir(some("/x"), some("/h")), Some(PathBuf::from("/x")));
        assert_eq!(
            data_dir(some(""), some("/h")),
            Some(PathBuf::from("/h/.local/share"))
        );
        assert_eq!(data_dir(None, some("")), None);
        assert_eq!(
            shim_dir_in(Path::new("/h/.local/share")),
            PathBuf::from("/h/.local/share/herdr-link/shim")
        );
    }

    #[test]
    fn executables_follow_path_order_and_resolve_relative_entries() {
        use std::os::unix::fs::PermissionsExt;
        let root = std::env::temp_dir().join(format!("herdr-link-paths-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for d in ["a", "b", "c"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        let write = |p: PathBuf, mode: u32| {
            std::fs::write(&p, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        write(root.join("a/herdr"), 0o644); // not executable
        write(root.join("b/herdr"), 0o755);
        write(root.join("c/herdr"), 0o755);
        std::fs::create_dir_all(root.join("d/herdr")).unwrap(); // a directory
        let path = OsString::from(format!("{0}/a:{0}/d:b::c:/nonexistent", root.display()));
        let found = executables(&path, "herdr", Some(&root));
        assert_eq!(found, vec![root.join("b/herdr"), root.join("c/herdr")]);
        let from_c = executables(OsStr::new(""), "herdr", Some(&root.join("c")));
        assert_eq!(from_c, vec![root.join("c/herdr")], "empty entry: the cwd");
        let _ = std::fs::remove_dir_all(&root);
    }
}
