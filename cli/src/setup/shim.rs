//! The `herdr` shim's installation: the shim directory (a link named `herdr` to this binary)
//! and what the host's shell commands get (docs/setup.md, "The herdr shim"): the shim first on
//! PATH, `$HERDR_BIN_PATH` naming the shim (the real Herdr kept in `$HERDR_LINK_HERDR`), and
//! the host's presence key (`$HERDR_LINK_PRESENCE`, so a detached command still finds its
//! host). Each host gets these its own way (see `hosts.rs`): Claude Code through a
//! `SessionStart` hook writing to `$CLAUDE_ENV_FILE`, OpenCode through the `shell.env` plugin
//! hook, Pi through its extension, Gemini CLI and Qwen Code through the startup files of the
//! shell Herdr types them into (their `bash -c` commands inherit the host's own environment);
//! and every host's login shells (`bash -lc`, which reset PATH
//! from the system profile; Codex runs every command that way) through a block in the user's
//! login profile.

use std::path::{Path, PathBuf};

use herdr_link::paths;
use herdr_link::presence::{self, HostKey};

use super::files::{read_optional, Change};
use super::places::Places;

/// First line of the block setup adds to a shell startup file.
pub const BLOCK_START: &str = "# >>> herdr-link shim (herdr-link setup) >>>";
/// Last line of that block.
pub const BLOCK_END: &str = "# <<< herdr-link shim <<<";

/// The shim directory: `$XDG_DATA_HOME/herdr-link/shim` (default `~/.local/share/...`), by the
/// library's rule ([`paths::shim_dir_in`]).
pub fn dir(places: &Places) -> PathBuf {
    paths::shim_dir_in(&places.data)
}

/// The shell line that puts `dir` first on PATH inside Herdr (`HERDR_ENV=1`): a second run (a
/// nested shell, a sourced file) changes nothing; a PATH that has it later (a command that put
/// another directory first) gets it first again.
pub fn path_line(dir: &Path) -> String {
    let d = paths::single_quoted(&dir.display().to_string());
    format!(
        r#"if [ "${{HERDR_ENV:-}}" = 1 ]; then case "${{PATH:-}}" in {d}|{d}:*) ;; *) PATH={d}${{PATH:+:"$PATH"}}; export PATH ;; esac; fi"#
    )
}

/// Every line the host's commands get inside Herdr: [`path_line`]; `$HERDR_BIN_PATH` naming the
/// shim, with the real Herdr it named kept in `$HERDR_LINK_HERDR` (once: a second run sees the
/// shim there and changes nothing); and `key`, the host's presence key, when known.
pub fn env_lines(dir: &Path, key: Option<HostKey>) -> String {
    let shim = paths::single_quoted(&dir.join("herdr").display().to_string());
    let mut out = path_line(dir);
    out.push('\n');
    out.push_str(&format!(
        r#"if [ "${{HERDR_ENV:-}}" = 1 ] && [ -n "${{HERDR_BIN_PATH:-}}" ] && [ "$HERDR_BIN_PATH" != {shim} ]; then HERDR_LINK_HERDR=$HERDR_BIN_PATH; HERDR_BIN_PATH={shim}; export HERDR_LINK_HERDR HERDR_BIN_PATH; fi"#
    ));
    out.push('\n');
    if let Some(key) = key {
        out.push_str(&format!(
            r#"if [ "${{HERDR_ENV:-}}" = 1 ]; then {var}='{key}'; export {var}; fi"#,
            var = presence::PRESENCE_VAR
        ));
        out.push('\n');
    }
    out
}

/// The presence key a host's wiring gives its commands, computed from the calling process (a
/// hook, a login shell's `shim-env --print`, a plugin's child): its host, the nearest ancestor
/// that is not a shell. The key already in `inherited` is kept when its process cannot be seen
/// from here (a sandbox's own pid namespace: everything this process could find is inside
/// it), and when no host is found: the walk ends at a shell or init (a detached login shell),
/// or at the Herdr server (a pane's own shell).
pub fn host_key(inherited: Option<&str>) -> Option<HostKey> {
    // SAFETY: getppid cannot fail.
    let parent = unsafe { libc::getppid() };
    choose_key(
        inherited.and_then(HostKey::parse),
        presence::host_record_from(parent, presence::stat),
        presence::stat,
    )
}

/// [`host_key`]'s rule over the inherited key and the host record the walk found, with `stat`
/// injectable for tests.
pub fn choose_key(
    inherited: Option<HostKey>,
    found: Option<presence::ProcStat>,
    stat: impl Fn(i32) -> Option<presence::ProcStat>,
) -> Option<HostKey> {
    if let Some(k) = inherited {
        if !stat(k.pid).is_some_and(|p| p.start == k.start) {
            return Some(k);
        }
    }
    found
        .filter(|p| p.pid > 1 && p.comm != "herdr" && !presence::is_shell(&p.comm))
        .map(|p| HostKey {
            pid: p.pid,
            start: p.start,
        })
        .or(inherited)
}

/// First line of the block setup adds to a login profile.
fn block_hosts_line(hosts: &[String]) -> String {
    format!("# for: {}", hosts.join(" "))
}

/// The login-profile block for `hosts`: inside Herdr, every login shell gets [`env_lines`] from
/// `bin shim-env --print` (so its presence key is the login shell's host).
pub fn block(bin: &Path, dir: &Path, hosts: &[String]) -> String {
    let b = paths::single_quoted(&bin.display().to_string());
    let d = paths::single_quoted(&dir.display().to_string());
    format!(
        "{BLOCK_START}\n{}\nif [ \"${{HERDR_ENV:-}}\" = 1 ]; then eval \"$({b} shim-env --dir {d} --print 2>/dev/null)\"; fi\n{BLOCK_END}\n",
        block_hosts_line(hosts)
    )
}

/// `text` with setup's block removed (and the blank line setup put before it), and the hosts
/// the block was for (a block from before hosts were listed was Codex's).
fn without_block(text: &str) -> (String, Vec<String>) {
    let mut out = String::with_capacity(text.len());
    let mut hosts = Vec::new();
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare == BLOCK_START {
            inside = true;
            hosts.push("codex".to_string());
            if out.ends_with("\n\n") {
                out.pop();
            }
            continue;
        }
        if inside {
            if let Some(list) = bare.strip_prefix("# for:") {
                hosts.retain(|h| h != "codex");
                hosts.extend(list.split_whitespace().map(str::to_string));
            }
            if bare == BLOCK_END {
                inside = false;
            }
            continue;
        }
        out.push_str(line);
    }
    hosts.dedup();
    (out, hosts)
}

/// The change to a login profile for `host`: setup's block at its end (replacing an earlier
/// one, and listing every host set up), or, with `uninstall`, `host` taken off the list and the
/// block removed once no host is left.
pub fn startup_file_change(
    path: PathBuf,
    bin: &Path,
    dir: &Path,
    host: &str,
    uninstall: bool,
) -> Result<Change, String> {
    let before = read_optional(&path)?;
    let (rest, mut hosts) = without_block(before.as_deref().unwrap_or(""));
    hosts.retain(|h| h != host);
    if !uninstall {
        hosts.push(host.to_string());
    }
    hosts.sort();
    let after = if hosts.is_empty() {
        before.as_ref().map(|_| rest)
    } else {
        let mut text = rest;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&block(bin, dir, &hosts));
        Some(text)
    };
    Ok(Change {
        path,
        before,
        after,
        executable: false,
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

/// What `herdr-link shim-env --dir DIR` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvMode {
    /// Claude Code's `SessionStart` hook: append [`env_lines`] to `$CLAUDE_ENV_FILE`, which
    /// Claude Code runs before each Bash command of the session.
    ClaudeHook,
    /// `--print`: print [`env_lines`] (the login-profile block evaluates them).
    Print,
    /// `--json`: print, as one JSON object, the variables a shell command of this process's
    /// parent (the host) needs set: the library's [`paths::env_for_commands_in`] for the shim in
    /// DIR applied to this process's `PATH` and `HERDR_BIN_PATH`, and the presence key, inside
    /// Herdr; `{}` outside it (the OpenCode guard plugin's `shell.env`).
    Json,
}

/// [`EnvMode::Json`]'s object, from this process's environment.
fn env_json(dir: &Path, key: Option<HostKey>) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    if std::env::var_os("HERDR_ENV").is_some_and(|v| v == "1") {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let bin = std::env::var_os("HERDR_BIN_PATH");
        out = paths::changes_json(paths::env_for_commands_in(dir, &path, bin.as_deref()));
        if let Some(key) = key {
            out.insert(presence::PRESENCE_VAR.into(), key.to_string().into());
        }
    }
    serde_json::Value::Object(out)
}

/// `herdr-link shim-env --dir DIR [--print | --json]`. Never fails the session: errors go to
/// stderr with exit status 1 (a hook error the host reports), never 2.
pub fn env_hook(dir: &Path, mode: EnvMode) -> i32 {
    use std::io::Write;
    let inherited = std::env::var(presence::PRESENCE_VAR).ok();
    let key = host_key(inherited.as_deref());
    let text = match mode {
        EnvMode::Json => format!("{}\n", env_json(dir, key)),
        EnvMode::Print | EnvMode::ClaudeHook => env_lines(dir, key),
    };
    if mode != EnvMode::ClaudeHook {
        return match std::io::stdout().lock().write_all(text.as_bytes()) {
            Ok(()) => 0,
            Err(_) => 1,
        };
    }
    let Some(file) = std::env::var_os("CLAUDE_ENV_FILE").filter(|f| !f.is_empty()) else {
        return 0;
    };
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
        .and_then(|mut f| f.write_all(text.as_bytes()));
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
    fn path_line_puts_the_shim_first_once_and_only_inside_herdr() {
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
        assert_eq!(
            run(&[("PATH", "/usr/bin:/bin"), ("HERDR_ENV", "1")]),
            "/h/it's dir/shim:/usr/bin:/bin"
        );
        assert_eq!(run(&[("PATH", "/usr/bin:/bin")]), "/usr/bin:/bin");
        // A command that put another directory before it: first again (once).
        assert_eq!(
            run(&[("PATH", "/usr/bin:/h/it's dir/shim"), ("HERDR_ENV", "1")]),
            "/h/it's dir/shim:/usr/bin:/h/it's dir/shim"
        );
        assert_eq!(run(&[("PATH", ""), ("HERDR_ENV", "1")]), "/h/it's dir/shim");
    }

    #[test]
    fn env_lines_name_the_shim_keep_the_real_herdr_and_carry_the_key() {
        let dir = Path::new("/h/it's dir/shim");
        let key = HostKey { pid: 42, start: 7 };
        let lines = env_lines(dir, Some(key));
        let run = |env: &[(&str, &str)]| {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "{lines}{lines}printf '%s|%s|%s|%s' \"$PATH\" \"${{HERDR_BIN_PATH-}}\" \"${{HERDR_LINK_HERDR-}}\" \"${{HERDR_LINK_PRESENCE-}}\""
                ))
                .env_clear()
                .env("PATH", "/usr/bin")
                .envs(env.iter().copied())
                .output()
                .unwrap();
            String::from_utf8(out.stdout).unwrap()
        };
        assert_eq!(
            run(&[("HERDR_ENV", "1"), ("HERDR_BIN_PATH", "/opt/herdr")]),
            "/h/it's dir/shim:/usr/bin|/h/it's dir/shim/herdr|/opt/herdr|42-7"
        );
        // Herdr older than 0.8.2 sets no HERDR_BIN_PATH: none is made up.
        assert_eq!(
            run(&[("HERDR_ENV", "1")]),
            "/h/it's dir/shim:/usr/bin|||42-7"
        );
        assert_eq!(
            run(&[("HERDR_BIN_PATH", "/opt/herdr")]),
            "/usr/bin|/opt/herdr||",
            "outside Herdr nothing changes"
        );
        assert!(!env_lines(dir, None).contains("HERDR_LINK_PRESENCE"));
    }

    #[test]
    fn the_key_is_the_nearest_host_unless_the_inherited_one_lies_beyond_sight() {
        let p = |pid, comm: &str, start| presence::ProcStat {
            pid,
            comm: comm.into(),
            ppid: 1,
            start,
        };
        let key = |pid, start| HostKey { pid, start };
        let table = [p(10, "claude", 100), p(20, "codex", 200)];
        let stat = |pid| table.iter().find(|r| r.pid == pid).cloned();
        // Nothing inherited: the host found.
        assert_eq!(
            choose_key(None, Some(p(20, "codex", 200)), stat),
            Some(key(20, 200))
        );
        // A nested host in sight: the nearer one (its own commands are its own).
        assert_eq!(
            choose_key(Some(key(10, 100)), Some(p(20, "codex", 200)), stat),
            Some(key(20, 200))
        );
        // A walk that found no host keeps the inherited key: a shell ending the chain, init,
        // the Herdr server, nothing.
        for found in [
            Some(p(5, "bash", 50)),
            Some(p(1, "systemd", 1)),
            Some(p(7, "herdr", 70)),
            None,
        ] {
            assert_eq!(
                choose_key(Some(key(10, 100)), found.clone(), stat),
                Some(key(10, 100))
            );
            assert_eq!(choose_key(None, found, stat), None);
        }
        // In a sandbox's own pid namespace the inherited host is out of sight: kept, whatever
        // the walk found inside.
        assert_eq!(
            choose_key(Some(key(4242, 9)), Some(p(2, "python3", 3)), stat),
            Some(key(4242, 9))
        );
        // So is a key whose pid now runs another process (start differs): it is stale, and
        // stays stale (dormant), rather than naming an unrelated process.
        assert_eq!(
            choose_key(Some(key(20, 1)), Some(p(20, "codex", 200)), stat),
            Some(key(20, 1))
        );
    }

    #[test]
    fn block_is_added_once_per_host_and_removed_with_the_last_host() {
        let (bin, dir) = (Path::new("/b/herdr-link"), Path::new("/s"));
        let tmp = std::env::temp_dir().join(format!("herdr-link-rc-{}", std::process::id()));
        std::fs::write(&tmp, "export A=1").unwrap();
        let change = |host: &str, uninstall: bool| {
            let c = startup_file_change(tmp.clone(), bin, dir, host, uninstall).unwrap();
            if let Some(after) = &c.after {
                std::fs::write(&tmp, after).unwrap();
            }
            c
        };
        let c = change("codex", false);
        assert_eq!(
            c.after.unwrap(),
            format!("export A=1\n\n{}", block(bin, dir, &["codex".into()]))
        );
        assert!(change("codex", false).is_noop());
        let c = change("claude", false);
        assert_eq!(
            c.after.unwrap(),
            format!(
                "export A=1\n\n{}",
                block(bin, dir, &["claude".into(), "codex".into()])
            )
        );
        // One host gone: the block stays for the other.
        let c = change("codex", true);
        assert_eq!(
            c.after.unwrap(),
            format!("export A=1\n\n{}", block(bin, dir, &["claude".into()]))
        );
        let c = change("claude", true);
        assert_eq!(c.after.as_deref(), Some("export A=1\n"));
        // A block written before hosts were listed was Codex's.
        std::fs::write(
            &tmp,
            format!("export A=1\n\n{BLOCK_START}\nold line\n{BLOCK_END}\n"),
        )
        .unwrap();
        let c = change("codex", true);
        assert_eq!(c.after.as_deref(), Some("export A=1\n"));
        let _ = std::fs::remove_file(&tmp);
        let absent = startup_file_change(tmp.clone(), bin, dir, "codex", true).unwrap();
        assert!(absent.is_noop());
    }

    #[test]
    fn the_block_gives_login_shells_the_lines_of_shim_env() {
        // `shim-env --print` run from the block: here this very test binary cannot play it,
        // so a stand-in prints what the real one prints for a key it cannot find.
        let root = std::env::temp_dir().join(format!("herdr-link-blk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let dir = root.join("shim");
        let lines = env_lines(&dir, Some(HostKey { pid: 9, start: 9 }));
        let bin = root.join("herdr-link");
        std::fs::write(
            &bin,
            format!("#!/bin/sh\n[ \"$1 $2 $4\" = \"shim-env --dir --print\" ] || exit 3\ncat <<'EOF'\n{lines}EOF\n"),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let text = block(&bin, &dir, &["codex".into()]);
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "{text}printf '%s|%s' \"$PATH\" \"$HERDR_LINK_PRESENCE\""
            ))
            .env_clear()
            .env("PATH", "/usr/bin")
            .env("HERDR_ENV", "1")
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{}:/usr/bin|9-9", dir.display())
        );
        let _ = std::fs::remove_dir_all(&root);
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
