//! The `herdr` shim's installation: the shim directory (a link named `herdr` to this binary)
//! and the one shell line that puts it first on PATH inside Herdr (docs/setup.md, "The herdr
//! shim"). Each host gets that line its own way (see `hosts.rs`): Claude Code through a
//! `SessionStart` hook writing to `$CLAUDE_ENV_FILE`, Codex through the login profile its
//! `bash -lc` commands read, OpenCode through the `shell.env` plugin hook, Gemini CLI and Qwen
//! Code through the startup file of the shell Herdr types them into (their `bash -c` commands
//! inherit the host's own PATH), Pi through its extension.

use std::path::{Path, PathBuf};

use super::files::{read_optional, Change};
use super::Places;

/// First line of the block setup adds to a shell startup file.
pub const BLOCK_START: &str = "# >>> herdr-link shim (herdr-link setup) >>>";
/// Last line of that block.
pub const BLOCK_END: &str = "# <<< herdr-link shim <<<";

/// The shim directory: `$XDG_DATA_HOME/herdr-link/shim` (default `~/.local/share/...`), as the
/// library names it for everyone ([`herdr_link::paths::shim_dir_in`]).
pub fn dir(places: &Places) -> PathBuf {
    herdr_link::paths::shim_dir_in(&places.data)
}

/// The shell line that puts `dir` first on PATH inside Herdr (`HERDR_ENV=1`), once: a second
/// run (a nested shell, a sourced file) changes nothing. The library's PATH rule
/// ([`herdr_link::paths::path_with_first`]) written for a shell; a test runs both on the same
/// PATHs.
pub fn path_line(dir: &Path) -> String {
    let d = herdr_link::paths::shell_word(&dir.display().to_string());
    format!(
        r#"if [ "${{HERDR_ENV:-}}" = 1 ]; then case ":${{PATH}}:" in *:{d}:*) ;; *) PATH={d}:"${{PATH}}"; export PATH ;; esac; fi"#
    )
}

/// The first line of a block: [`BLOCK_START`], or for a host that owns its own block (several
/// hosts may share one startup file, and uninstalling one must leave the others' line)
/// `# >>> herdr-link shim (herdr-link setup <host>) >>>`.
fn block_start(host: Option<&str>) -> String {
    match host {
        None => BLOCK_START.to_string(),
        Some(h) => format!("# >>> herdr-link shim (herdr-link setup {h}) >>>"),
    }
}

/// The block for a shell startup file (`host`: see [`block_start`]).
fn tagged_block(dir: &Path, host: Option<&str>) -> String {
    format!("{}\n{}\n{BLOCK_END}\n", block_start(host), path_line(dir))
}

/// `text` with the block starting `start` removed (and the blank line setup put before it).
fn without_block(text: &str, start: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare == start {
            inside = true;
            if out.ends_with("\n\n") {
                out.pop();
            }
            continue;
        }
        if inside {
            if bare == BLOCK_END {
                inside = false;
            }
            continue;
        }
        out.push_str(line);
    }
    out
}

/// The change to a shell startup file: setup's block at its end (replacing an earlier one), or
/// removed with `uninstall`.
pub fn startup_file_change(path: PathBuf, dir: &Path, uninstall: bool) -> Result<Change, String> {
    startup_file_change_for(path, dir, uninstall, None)
}

/// [`startup_file_change`] for the block `host` owns (`None`: the shared, untagged block).
pub fn startup_file_change_for(
    path: PathBuf,
    dir: &Path,
    uninstall: bool,
    host: Option<&str>,
) -> Result<Change, String> {
    let before = read_optional(&path)?;
    let rest = without_block(before.as_deref().unwrap_or(""), &block_start(host));
    let after = if uninstall {
        before.as_ref().map(|_| rest)
    } else {
        let mut text = rest;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&tagged_block(dir, host));
        Some(text)
    };
    Ok(Change {
        path,
        before,
        after,
    })
}

/// The login profile a login shell of `shell` (the user's `$SHELL`) reads: zsh's `~/.zshenv`
/// (read by every zsh), bash's first of `~/.bash_profile`, `~/.bash_login`, `~/.profile`, and
/// `~/.profile` for any other shell.
pub fn login_profile(home: &Path, shell: Option<&str>) -> PathBuf {
    let name = shell
        .and_then(|s| Path::new(s).file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("");
    match name {
        "zsh" => home.join(".zshenv"),
        "bash" | "" => [".bash_profile", ".bash_login"]
            .iter()
            .map(|f| home.join(f))
            .find(|p| p.exists())
            .unwrap_or_else(|| home.join(".profile")),
        _ => home.join(".profile"),
    }
}

/// The startup files of the interactive shell Herdr starts in a pane (non-login on Linux, login
/// on macOS) for the user's `$SHELL`: a host typed into it inherits the PATH they set. bash:
/// `~/.bashrc` and the login profile ([`login_profile`]); zsh: `~/.zshenv` (read by every zsh);
/// fish has its own syntax (empty: the user adds the line); any other shell: `~/.profile`.
pub fn interactive_startup_files(home: &Path, shell: Option<&str>) -> Vec<PathBuf> {
    let name = shell
        .and_then(|s| Path::new(s).file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("");
    match name {
        "bash" | "" => vec![home.join(".bashrc"), login_profile(home, shell)],
        "zsh" => vec![home.join(".zshenv")],
        "fish" => Vec::new(),
        _ => vec![home.join(".profile")],
    }
}

/// What to do with the link `dir/herdr`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkStep {
    /// It already points at the binary.
    Unchanged,
    /// Create it (or replace an older herdr-link link).
    Link,
    /// Leave it: `--uninstall` keeps the shared shim (other hosts may use it).
    Keep,
}

/// Decides the link step for `dir/herdr` → `bin`. Anything at that path that is not a link to a
/// herdr-link binary is an error (never overwritten).
pub fn link_step(dir: &Path, bin: &Path, uninstall: bool) -> Result<LinkStep, String> {
    let link = dir.join("herdr");
    if uninstall {
        return Ok(LinkStep::Keep);
    }
    match std::fs::read_link(&link) {
        Ok(target) if target == bin => Ok(LinkStep::Unchanged),
        Ok(target) if target.file_name().is_some_and(|n| n == "herdr-link") => Ok(LinkStep::Link),
        Ok(target) => Err(format!(
            "{} points at {}, not at a herdr-link binary; remove it first",
            link.display(),
            target.display()
        )),
        Err(_) if std::fs::symlink_metadata(&link).is_ok() => Err(format!(
            "{} exists and is not a link to herdr-link; remove it first",
            link.display()
        )),
        Err(_) => Ok(LinkStep::Link),
    }
}

/// Applies (or, with `dry_run`, prints) the link step.
pub fn apply_link(dir: &Path, bin: &Path, step: &LinkStep, dry_run: bool) -> Result<(), String> {
    let link = dir.join("herdr");
    match step {
        LinkStep::Unchanged => println!("unchanged {}", link.display()),
        LinkStep::Keep => println!(
            "kept {} (the shim is shared by every host; remove it with: rm {})",
            link.display(),
            link.display()
        ),
        LinkStep::Link if dry_run => {
            println!("would link {} -> {}", link.display(), bin.display())
        }
        LinkStep::Link => {
            create_shim_dir(dir)?;
            let tmp = dir.join(format!(".herdr.tmp-{}", std::process::id()));
            let _ = std::fs::remove_file(&tmp);
            std::os::unix::fs::symlink(bin, &tmp)
                .and_then(|()| std::fs::rename(&tmp, &link))
                .map_err(|e| {
                    let _ = std::fs::remove_file(&tmp);
                    format!("cannot link {}: {e}", link.display())
                })?;
            println!("linked {} -> {}", link.display(), bin.display());
        }
    }
    Ok(())
}

/// Creates the shim directory closed to writes by others (what is in it runs as every `herdr`).
fn create_shim_dir(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let meta = std::fs::symlink_metadata(dir).map_err(|e| e.to_string())?;
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o022 != 0 {
        return Err(format!(
            "{} must be a directory of yours that others cannot write to",
            dir.display()
        ));
    }
    Ok(())
}

/// `herdr-link shim-env --dir DIR`: Claude Code's `SessionStart` hook. Appends the PATH line to
/// the file named by `$CLAUDE_ENV_FILE`, which Claude Code runs before each Bash command of the
/// session. Without that variable it does nothing. Never fails the session: errors go to stderr
/// with exit status 1 (a hook error the host reports), never 2.
pub fn env_hook(dir: &Path) -> i32 {
    use std::io::Write;
    let Some(file) = std::env::var_os("CLAUDE_ENV_FILE").filter(|f| !f.is_empty()) else {
        return 0;
    };
    let line = format!("{}\n", path_line(dir));
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    match written {
        Ok(()) => 0,
        Err(e) => {
            eprintln!(
                "herdr-link shim-env: cannot write {}: {e}",
                Path::new(&file).display()
            );
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_line_is_the_library_rule_and_only_inside_herdr() {
        let dir = Path::new("/h/it's dir/shim");
        let line = path_line(dir);
        let run = |env: &[(&str, &str)]| {
            let out = std::process::Command::new("/bin/sh")
                .arg("-c")
                .arg(format!("{line}\n{line}\nprintf %s \"$PATH\""))
                .env_clear()
                .envs(env.iter().copied())
                .output()
                .unwrap();
            String::from_utf8(out.stdout).unwrap()
        };
        for path in [
            "/usr/bin:/bin",
            "/usr/bin:/h/it's dir/shim",
            "/h/it's dir/shim",
            "/h/it's dir/shim2:/bin",
            "/bin:/h/it's dir/shim:/usr/bin",
        ] {
            let rule = herdr_link::paths::path_with_first(dir, path.as_ref())
                .map_or(path.to_string(), |p| p.to_string_lossy().into_owned());
            assert_eq!(run(&[("PATH", path), ("HERDR_ENV", "1")]), rule, "{path}");
            assert_eq!(run(&[("PATH", path)]), path, "outside Herdr: {path}");
        }
        assert_eq!(
            run(&[("PATH", "/usr/bin:/bin"), ("HERDR_ENV", "1")]),
            "/h/it's dir/shim:/usr/bin:/bin"
        );
    }

    #[test]
    fn block_is_added_once_and_removed_cleanly() {
        let dir = Path::new("/s");
        let tmp = std::env::temp_dir().join(format!("herdr-link-rc-{}", std::process::id()));
        std::fs::write(&tmp, "export A=1").unwrap();
        let c = startup_file_change(tmp.clone(), dir, false).unwrap();
        let added = c.after.clone().unwrap();
        assert_eq!(added, format!("export A=1\n\n{}", tagged_block(dir, None)));
        std::fs::write(&tmp, &added).unwrap();
        let again = startup_file_change(tmp.clone(), dir, false).unwrap();
        assert!(again.is_noop(), "{:?}", again.after);
        let removed = startup_file_change(tmp.clone(), dir, true).unwrap();
        assert_eq!(removed.after.as_deref(), Some("export A=1\n"));
        let _ = std::fs::remove_file(&tmp);
        let absent = startup_file_change(tmp.clone(), dir, true).unwrap();
        assert!(absent.is_noop());
    }

    #[test]
    fn host_blocks_share_a_file_and_leave_each_other() {
        let dir = Path::new("/s");
        let tmp = std::env::temp_dir().join(format!("herdr-link-rc2-{}", std::process::id()));
        std::fs::write(&tmp, "export A=1\n").unwrap();
        let apply = |uninstall, host| {
            let c = startup_file_change_for(tmp.clone(), dir, uninstall, host).unwrap();
            std::fs::write(&tmp, c.after.clone().unwrap_or_default()).unwrap();
            c
        };
        apply(false, None);
        apply(false, Some("gemini"));
        assert!(apply(false, Some("gemini")).is_noop());
        apply(false, Some("qwen"));
        let text = std::fs::read_to_string(&tmp).unwrap();
        assert_eq!(text.matches(&path_line(dir)).count(), 3, "{text}");
        assert!(text.contains("# >>> herdr-link shim (herdr-link setup gemini) >>>"));
        // Removing one host's block leaves the shared block and the other host's.
        apply(true, Some("gemini"));
        let text = std::fs::read_to_string(&tmp).unwrap();
        assert!(!text.contains("setup gemini"), "{text}");
        assert!(
            text.contains(BLOCK_START) && text.contains("setup qwen)"),
            "{text}"
        );
        apply(true, Some("qwen"));
        apply(true, None);
        assert_eq!(std::fs::read_to_string(&tmp).unwrap(), "export A=1\n");
        let _ = std::fs::remove_file(&tmp);
        let home = Path::new("/h");
        assert_eq!(
            interactive_startup_files(home, Some("/usr/bin/zsh")),
            [home.join(".zshenv")]
        );
        assert_eq!(
            interactive_startup_files(home, Some("/bin/bash"))[0],
            home.join(".bashrc")
        );
        assert!(interactive_startup_files(home, Some("/usr/bin/fish")).is_empty());
        assert_eq!(
            interactive_startup_files(home, Some("/bin/dash")),
            [home.join(".profile")]
        );
    }

    #[test]
    fn login_profiles() {
        let home = std::env::temp_dir().join(format!("herdr-link-home-{}", std::process::id()));
        std::fs::create_dir_all(&home).unwrap();
        assert_eq!(
            login_profile(&home, Some("/bin/bash")),
            home.join(".profile")
        );
        std::fs::write(home.join(".bash_profile"), "").unwrap();
        assert_eq!(login_profile(&home, None), home.join(".bash_profile"));
        assert_eq!(
            login_profile(&home, Some("/usr/bin/zsh")),
            home.join(".zshenv")
        );
        assert_eq!(
            login_profile(&home, Some("/bin/dash")),
            home.join(".profile")
        );
        let _ = std::fs::remove_dir_all(&home);
    }
}
