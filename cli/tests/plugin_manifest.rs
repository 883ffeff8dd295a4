//! `herdr-plugin.toml` as Herdr sees it: the manifest passes Herdr's own validation rules
//! (restated here from how Herdr 0.8.2 loads a manifest: required fields, id alphabets and
//! lengths, platforms, contexts, argv commands, unique action ids, `min_herdr_version`), it
//! builds what its actions run, and every setup action, run with the environment Herdr gives
//! plugin actions, writes exactly what `herdr-link setup <host>` writes.

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use toml_edit::{DocumentMut, Item, Table};

const BIN: &str = env!("CARGO_BIN_EXE_herdr-link");
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

// ---------------------------------------------------------------------------------------------
// Herdr's manifest rules, in our words.

/// The oldest Herdr we support; a manifest asking for a newer one would be refused by it.
const OLDEST_SUPPORTED: (u32, u32, u32) = (0, 8, 0);
const PLATFORMS: &[&str] = &["linux", "macos", "windows"];
const CONTEXTS: &[&str] = &["global", "workspace", "tab", "pane", "selection"];
const TOP_KEYS: &[&str] = &[
    "id",
    "name",
    "version",
    "min_herdr_version",
    "description",
    "platforms",
    "build",
    "startup",
    "actions",
    "events",
    "panes",
    "link_handlers",
];
const ACTION_KEYS: &[&str] = &[
    "id",
    "title",
    "description",
    "contexts",
    "platforms",
    "command",
];
const BUILD_KEYS: &[&str] = &["platforms", "command"];

/// One action as Herdr keeps it.
#[derive(Debug)]
struct Action {
    id: String,
    title: String,
    contexts: Vec<String>,
    command: Vec<String>,
}

/// The parts of a manifest these tests look at, after validation.
#[derive(Debug)]
struct Manifest {
    id: String,
    version: String,
    min_herdr_version: (u32, u32, u32),
    platforms: Option<Vec<String>>,
    build: Vec<Vec<String>>,
    actions: Vec<Action>,
}

/// Herdr's plugin id alphabet (letters, digits, `.`, `:`, `_`, `-`; at most 120 characters);
/// local ids (actions, panes) are the same without the dot.
fn valid_id(value: &str, dot_allowed: bool) -> bool {
    let v = value.trim();
    !v.is_empty()
        && v.chars().count() <= 120
        && v.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || b == b':'
                || b == b'_'
                || b == b'-'
                || (dot_allowed && b == b'.')
        })
}

/// `x.y.z` with an optional leading `v`, each part a number (Herdr's version parser).
fn parse_semver(s: &str) -> Option<(u32, u32, u32)> {
    let s = s.strip_prefix('v').unwrap_or(s);
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 3 {
        return None;
    }
    Some((
        parts[0].parse().ok()?,
        parts[1].parse().ok()?,
        parts[2].parse().ok()?,
    ))
}

fn string(t: &Table, key: &str, what: &str) -> Result<Option<String>, String> {
    match t.get(key) {
        None => Ok(None),
        Some(item) => item
            .as_str()
            .map(|s| Some(s.to_string()))
            .ok_or_else(|| format!("{what}.{key} is not a string")),
    }
}

fn required_trimmed(t: &Table, key: &str, what: &str) -> Result<String, String> {
    let v = string(t, key, what)?.ok_or_else(|| format!("{what}.{key} is missing"))?;
    let v = v.trim().to_string();
    if v.is_empty() {
        return Err(format!("{what}.{key} is empty"));
    }
    Ok(v)
}

fn strings(t: &Table, key: &str, what: &str) -> Result<Option<Vec<String>>, String> {
    let Some(item) = t.get(key) else {
        return Ok(None);
    };
    let arr = item
        .as_array()
        .ok_or_else(|| format!("{what}.{key} is not an array"))?;
    arr.iter()
        .map(|v| {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("{what}.{key} holds a non-string"))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

fn platform_list(t: &Table, what: &str) -> Result<Option<Vec<String>>, String> {
    let Some(list) = strings(t, "platforms", what)? else {
        return Ok(None);
    };
    if list.is_empty() {
        return Err(format!("{what}.platforms is an empty array"));
    }
    for p in &list {
        if !PLATFORMS.contains(&p.as_str()) {
            return Err(format!("{what}.platforms: unknown platform {p:?}"));
        }
    }
    Ok(Some(list))
}

fn command(t: &Table, what: &str) -> Result<Vec<String>, String> {
    let argv = strings(t, "command", what)?.ok_or_else(|| format!("{what}.command is missing"))?;
    if argv.is_empty() || argv.iter().any(String::is_empty) {
        return Err(format!("{what}.command must be non-empty argv strings"));
    }
    Ok(argv)
}

fn no_unknown_keys(t: &Table, known: &[&str], what: &str) -> Result<(), String> {
    // Herdr ignores unknown keys; we refuse them, so a misspelt key cannot go unnoticed.
    match t.iter().find(|(k, _)| !known.contains(k)) {
        Some((k, _)) => Err(format!("{what}: unknown key {k:?}")),
        None => Ok(()),
    }
}

fn tables<'a>(doc: &'a Table, key: &str) -> Result<Vec<&'a Table>, String> {
    match doc.get(key) {
        None => Ok(Vec::new()),
        Some(Item::ArrayOfTables(a)) => Ok(a.iter().collect()),
        Some(_) => Err(format!("{key} is not an array of tables ([[{key}]])")),
    }
}

/// Validates a manifest the way Herdr does when it links or installs a plugin.
fn check_manifest(text: &str) -> Result<Manifest, String> {
    let doc: DocumentMut = text.parse().map_err(|e| format!("parse: {e}"))?;
    let top = doc.as_table();
    no_unknown_keys(top, TOP_KEYS, "manifest")?;
    let id = required_trimmed(top, "id", "manifest")?;
    if !valid_id(&id, true) {
        return Err(format!("invalid plugin id {id:?}"));
    }
    required_trimmed(top, "name", "manifest")?;
    let version = required_trimmed(top, "version", "manifest")?;
    let min = required_trimmed(top, "min_herdr_version", "manifest")?;
    let min_herdr_version =
        parse_semver(&min).ok_or_else(|| format!("min_herdr_version {min:?} is not x.y.z"))?;
    if min_herdr_version > OLDEST_SUPPORTED {
        return Err(format!(
            "min_herdr_version {min} is newer than the oldest supported Herdr"
        ));
    }
    string(top, "description", "manifest")?;
    let platforms = platform_list(top, "manifest")?;
    let mut build = Vec::new();
    for (i, b) in tables(top, "build")?.into_iter().enumerate() {
        let what = format!("build[{i}]");
        no_unknown_keys(b, BUILD_KEYS, &what)?;
        platform_list(b, &what)?;
        build.push(command(b, &what)?);
    }
    let mut actions = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, a) in tables(top, "actions")?.into_iter().enumerate() {
        let what = format!("actions[{i}]");
        no_unknown_keys(a, ACTION_KEYS, &what)?;
        let id = string(a, "id", &what)?.ok_or_else(|| format!("{what}.id is missing"))?;
        if !valid_id(&id, false) {
            return Err(format!("invalid action id {id:?}"));
        }
        let id = id.trim().to_string();
        if !seen.insert(id.clone()) {
            return Err(format!("duplicate action id {id:?}"));
        }
        let title = required_trimmed(a, "title", &what)?;
        string(a, "description", &what)?;
        let contexts = strings(a, "contexts", &what)?.unwrap_or_default();
        for c in &contexts {
            if !CONTEXTS.contains(&c.as_str()) {
                return Err(format!("{what}.contexts: unknown context {c:?}"));
            }
        }
        platform_list(a, &what)?;
        actions.push(Action {
            id,
            title,
            contexts,
            command: command(a, &what)?,
        });
    }
    Ok(Manifest {
        id,
        version,
        min_herdr_version,
        platforms,
        build,
        actions,
    })
}

fn manifest_text() -> String {
    fs::read_to_string(format!("{ROOT}/herdr-plugin.toml")).unwrap()
}

#[test]
fn manifest_passes_herdrs_rules() {
    let m = check_manifest(&manifest_text()).unwrap_or_else(|e| panic!("herdr-plugin.toml: {e}"));
    assert_eq!(m.id, "herdr-link");
    assert_eq!(m.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(m.min_herdr_version, (0, 8, 0));
    // Only what is built and tested (docs/building.md, "Platforms").
    assert_eq!(m.platforms, Some(vec!["linux".to_string()]));
}

/// The validator above refuses what Herdr refuses (so its pass means something).
#[test]
fn the_rules_refuse_what_herdr_refuses() {
    let good = "id = \"p\"\nname = \"P\"\nversion = \"1.0.0\"\nmin_herdr_version = \"0.8.0\"\n\
                platforms = [\"linux\"]\n\n[[actions]]\nid = \"a\"\ntitle = \"A\"\n\
                contexts = [\"global\"]\ncommand = [\"x\"]\n";
    check_manifest(good).unwrap();
    let bad = [
        (
            good.replace("id = \"p\"", "id = \"p q\""),
            "invalid plugin id",
        ),
        (
            good.replace("id = \"a\"", "id = \"a.b\""),
            "invalid action id",
        ),
        (
            good.replace("name = \"P\"", "name = \" \""),
            "name is empty",
        ),
        (
            good.replace("min_herdr_version = \"0.8.0\"\n", ""),
            "min_herdr_version is missing",
        ),
        (good.replace("\"0.8.0\"", "\"0.8\""), "is not x.y.z"),
        (good.replace("\"0.8.0\"", "\"0.9.0\""), "newer than"),
        (good.replace("[\"linux\"]", "[]"), "empty array"),
        (
            good.replace("[\"linux\"]", "[\"beos\"]"),
            "unknown platform",
        ),
        (
            good.replace("[\"global\"]", "[\"window\"]"),
            "unknown context",
        ),
        (good.replace("[\"x\"]", "[]"), "non-empty argv"),
        (good.replace("[\"x\"]", "[\"x\", \"\"]"), "non-empty argv"),
        (
            good.replace("title = \"A\"", "titel = \"A\""),
            "unknown key",
        ),
        (
            format!("{good}\n[[actions]]\nid = \"a\"\ntitle = \"B\"\ncommand = [\"y\"]\n"),
            "duplicate action id",
        ),
        (
            format!("{good}\n[[build]]\ncommand = \"cargo build\"\n"),
            "not an array",
        ),
    ];
    for (text, want) in bad {
        let e = check_manifest(&text).expect_err(want);
        assert!(e.contains(want), "{want}: got {e}");
    }
}

/// Herdr runs the build once at install; every action's program is what the build produces,
/// and the build gives both the binary and the library (setup-pi packs the library).
#[test]
fn build_makes_what_the_actions_run() {
    let m = check_manifest(&manifest_text()).unwrap();
    assert_eq!(
        m.build,
        vec![vec!["cargo", "build", "--release", "--locked"]],
        "a plain release build of the default members: the library and herdr-link"
    );
    let cargo = fs::read_to_string(format!("{ROOT}/Cargo.toml")).unwrap();
    assert!(
        cargo.contains("default-members = [\".\", \"cli\"]"),
        "`cargo build` must build the library (.) and the binary (cli)"
    );
    for a in &m.actions {
        assert_eq!(a.command[0], "./target/release/herdr-link", "{}", a.id);
        assert!(a.title.starts_with("Herdr Link: "), "{}", a.title);
    }
}

#[test]
fn manifest_offers_doctor_and_setup_and_uninstall_for_every_host() {
    let m = check_manifest(&manifest_text()).unwrap();
    let ids: BTreeSet<&str> = m.actions.iter().map(|a| a.id.as_str()).collect();
    let mut want: BTreeSet<String> = ["doctor".to_string(), "watch".to_string()].into();
    for host in [
        "claude", "codex", "opencode", "gemini", "qwen", "copilot", "droid", "cline", "kimi", "pi",
    ] {
        want.insert(format!("setup-{host}"));
        want.insert(format!("uninstall-{host}"));
    }
    assert_eq!(ids, want.iter().map(String::as_str).collect());
    for a in &m.actions {
        if a.id == "doctor" {
            assert_eq!(a.command[1..], ["doctor"]);
            assert_eq!(a.contexts, ["workspace"]);
        } else if a.id == "watch" {
            assert_eq!(a.command[1..], ["plugin-action", "watch"]);
            assert_eq!(
                a.contexts,
                ["workspace"],
                "a view of the invoking workspace"
            );
        } else {
            assert_eq!(a.command[1..], ["plugin-action", a.id.as_str()]);
            assert_eq!(
                a.contexts,
                ["global"],
                "setup is per user, not per workspace"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Running the actions the way Herdr does.

struct World {
    root: PathBuf,
}

impl World {
    fn new(name: &str) -> World {
        let root = std::env::temp_dir().join(format!(
            "herdr-link-plugin-action-{name}-{}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&root);
        for d in ["home", "bin", "state", "config"] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        World { root }
    }

    fn script(&self, rel: &str, body: &str) -> PathBuf {
        let p = self.root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    /// A `herdr` that reports `version` (it plays the Herdr that invokes the action).
    fn herdr(&self, version: &str) -> PathBuf {
        self.script(
            &format!("herdr-{version}/herdr"),
            &format!("echo 'herdr {version}'\n"),
        )
    }

    fn path(&self) -> String {
        format!("{}:/usr/bin:/bin", self.root.join("bin").display())
    }

    /// `herdr-link setup ARGS` as a user runs it, with `herdr` of `version` on PATH.
    fn setup(&self, args: &[&str], herdr: &Path) -> Output {
        Command::new(BIN)
            .arg("setup")
            .args(args)
            .env_clear()
            .env("HOME", self.root.join("home"))
            .env("PATH", self.path())
            .env("HERDR_BIN_PATH", herdr)
            .current_dir(&self.root)
            .output()
            .unwrap()
    }

    /// The manifest's action `id`, run the way Herdr runs it: in the plugin root, with the
    /// runtime plugin environment; `./target/release/herdr-link` is the binary under test.
    fn action(&self, id: &str, herdr: &Path, plugin_root: &Path, extra: &[(&str, &str)]) -> Output {
        let m = check_manifest(&manifest_text()).unwrap();
        let a = m
            .actions
            .iter()
            .find(|a| a.id == id)
            .unwrap_or_else(|| panic!("no action {id}"));
        let mut c = Command::new(BIN);
        c.args(&a.command[1..])
            .env_clear()
            .env("HOME", self.root.join("home"))
            .env("PATH", self.path())
            .env("HERDR_ENV", "1")
            .env("HERDR_BIN_PATH", herdr)
            .env("HERDR_SOCKET_PATH", self.root.join("herdr.sock"))
            .env("HERDR_PLUGIN_ID", "herdr-link")
            .env("HERDR_PLUGIN_ROOT", plugin_root)
            .env("HERDR_PLUGIN_CONFIG_DIR", self.root.join("config"))
            .env("HERDR_PLUGIN_STATE_DIR", self.root.join("state"))
            .env("HERDR_PLUGIN_CONTEXT_JSON", "{}")
            .env("HERDR_PLUGIN_ACTION_ID", id)
            .current_dir(plugin_root);
        for (k, v) in extra {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    /// Every file under `home/` (path relative to it) with its contents.
    fn home_files(&self) -> Vec<(PathBuf, String)> {
        fn walk(base: &Path, dir: &Path, out: &mut Vec<(PathBuf, String)>) {
            let mut entries: Vec<_> = fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            entries.sort();
            for p in entries {
                let rel = p.strip_prefix(base).unwrap().to_path_buf();
                if fs::symlink_metadata(&p).unwrap().is_symlink() {
                    // The `herdr` shim: a link to the binary; compare where it points.
                    let to = fs::read_link(&p).unwrap();
                    out.push((rel, format!("-> {}", to.display())));
                } else if p.is_dir() {
                    walk(base, &p, out);
                } else {
                    out.push((rel, fs::read_to_string(&p).unwrap()));
                }
            }
        }
        let mut out = Vec::new();
        let home = self.root.join("home");
        walk(&home, &home, &mut out);
        out
    }

    fn clear_home(&self) {
        fs::remove_dir_all(self.root.join("home")).unwrap();
        fs::create_dir_all(self.root.join("home")).unwrap();
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

fn ok(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "failed ({}): {}\n{stdout}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// setup-claude/codex/opencode/gemini/qwen/copilot/droid/cline/kimi write what `herdr-link setup <host>` writes (with the invoking
/// Herdr deciding the HERDR_BIN_PATH pin), say what to restart, and uninstall-<host> gives the
/// same files back as `setup --uninstall`.
#[test]
fn setup_actions_write_what_setup_writes() {
    let w = World::new("mcp-hosts");
    let root = PathBuf::from(ROOT).canonicalize().unwrap();
    for (host, title) in [
        ("claude", "Claude Code"),
        ("codex", "Codex"),
        ("opencode", "OpenCode"),
        ("gemini", "Gemini CLI"),
        ("qwen", "Qwen Code"),
        ("copilot", "Copilot CLI"),
        ("droid", "Droid"),
        ("cline", "Cline"),
        ("kimi", "Kimi Code"),
    ] {
        for version in ["0.8.2", "0.8.0"] {
            let herdr = w.herdr(version);
            w.clear_home();
            ok(&w.setup(&[host], &herdr));
            let by_setup = w.home_files();
            assert!(!by_setup.is_empty(), "{host}: setup wrote nothing");
            w.clear_home();
            let out = ok(&w.action(&format!("setup-{host}"), &herdr, &root, &[]));
            assert_eq!(w.home_files(), by_setup, "{host} {version}");
            assert!(
                out.starts_with(&format!("Herdr Link: set up {title}")),
                "{out}"
            );
            assert!(out.contains(&format!("Restart {title} to load")), "{out}");
            assert!(
                out.contains(&format!("run uninstall-{host} before")),
                "{out}"
            );
            let pinned = w
                .home_files()
                .iter()
                .any(|(_, text)| text.contains(&herdr.display().to_string()));
            assert_eq!(
                pinned,
                version == "0.8.0",
                "{host} {version}: the pin follows the invoking Herdr"
            );

            // Uninstall: the action and `setup --uninstall` leave the same files.
            let before = w.home_files();
            let out = ok(&w.action(&format!("uninstall-{host}"), &herdr, &root, &[]));
            assert!(out.contains(&format!("Restart {title} to unload")), "{out}");
            let by_action = strip_backups(w.home_files());
            w.clear_home();
            for (rel, text) in &before {
                let p = w.root.join("home").join(rel);
                fs::create_dir_all(p.parent().unwrap()).unwrap();
                fs::write(p, text).unwrap();
            }
            ok(&w.setup(&[host, "--uninstall"], &herdr));
            assert_eq!(strip_backups(w.home_files()), by_action, "{host} uninstall");
        }
    }
}

fn strip_backups(files: Vec<(PathBuf, String)>) -> Vec<(PathBuf, String)> {
    files
        .into_iter()
        .filter(|(p, _)| !p.to_string_lossy().contains(".herdr-link-backup-"))
        .collect()
}

/// setup-pi packs the extension with the plugin checkout's hosts/pi/pack.sh (here a stand-in
/// that records what it was given) into the plugin's state directory, then runs Pi's own
/// installer on it, as `herdr-link setup pi --package DIR` does; uninstall-pi removes it.
#[test]
fn setup_pi_packs_the_extension_and_runs_pis_installer() {
    let w = World::new("pi");
    let herdr = w.herdr("0.8.2");
    let log = w.root.join("pi.log");
    w.script(
        "bin/pi",
        &format!("printf '%s\\n' \"$*\" >> '{}'\n", log.display()),
    );
    let plugin = w.root.join("plugin");
    let packed = w.root.join("pack.log");
    w.script(
        "plugin/hosts/pi/pack.sh",
        &format!(
            "printf '%s %s %s\\n' \"$1\" \"$HERDR_LINK_LIB\" \"$PWD\" > '{}'\n\
             mkdir -p \"$1/herdr-link-pi\" && echo '{{}}' > \"$1/herdr-link-pi/package.json\"\n",
            packed.display()
        ),
    );
    let lib = w.root.join("libherdr_link.so");
    fs::write(&lib, "").unwrap();
    let lib_env = lib.display().to_string();
    let env = [("HERDR_LINK_LIB", lib_env.as_str())];

    // Nothing installed yet: uninstall says so and succeeds.
    let out = ok(&w.action("uninstall-pi", &herdr, &plugin, &env));
    assert!(out.contains("nothing to remove"), "{out}");
    assert!(!log.exists());

    let out = ok(&w.action("setup-pi", &herdr, &plugin, &env));
    let pkg_out = w.root.join("state/pi-package");
    let pkg = pkg_out.join("herdr-link-pi");
    assert_eq!(
        fs::read_to_string(&packed).unwrap().trim(),
        format!(
            "{} {} {}",
            pkg_out.display(),
            lib.display(),
            plugin.display()
        )
    );
    assert_eq!(
        fs::read_to_string(&log).unwrap(),
        format!("install {}\n", pkg.display())
    );
    assert!(out.starts_with("Herdr Link: set up Pi"), "{out}");
    assert!(out.contains("/reload"), "{out}");

    // The same installer call as `herdr-link setup pi --package DIR`.
    fs::remove_file(&log).unwrap();
    ok(&w.setup(&["pi", "--package", pkg.to_str().unwrap()], &herdr));
    assert_eq!(
        fs::read_to_string(&log).unwrap(),
        format!("install {}\n", pkg.display())
    );

    fs::remove_file(&log).unwrap();
    let out = ok(&w.action("uninstall-pi", &herdr, &plugin, &env));
    assert_eq!(
        fs::read_to_string(&log).unwrap(),
        format!("remove {}\n", pkg.display())
    );
    assert!(
        out.contains("Restart Pi (or run /reload in it) to unload"),
        "{out}"
    );

    // A failing pack is an error that shows pack.sh's complaint, and Pi is not run.
    fs::remove_file(&log).unwrap();
    w.script(
        "plugin/hosts/pi/pack.sh",
        "echo 'npm: command not found' >&2; exit 127\n",
    );
    let out = w.action("setup-pi", &herdr, &plugin, &env);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("npm: command not found"), "{err}");
    assert!(!log.exists());
}

/// Outside Herdr (no plugin environment) setup-pi says how to do it by hand; an unknown
/// action is a usage error.
#[test]
fn plugin_action_outside_herdr_and_unknown_actions() {
    let out = Command::new(BIN)
        .args(["plugin-action", "setup-pi"])
        .env_clear()
        .env("HOME", std::env::temp_dir())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("HERDR_PLUGIN_STATE_DIR is not set") && err.contains("herdr-link setup pi"),
        "{err}"
    );
    let out = Command::new(BIN)
        .args(["plugin-action", "setup-vim"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("setup-claude"));
}

/// "Herdr Link: watch" splits the focused pane of the invoking workspace and runs
/// `herdr-link watch --workspace <id>` in the new pane, with Herdr's argv only.
#[test]
fn the_watch_action_opens_the_view_in_a_new_pane() {
    let w = World::new("watch");
    let log = w.root.join("herdr-argv.log");
    let herdr = w.script(
        "herdr-watch/herdr",
        &format!(
            "printf '%s\\n' \"$*\" >> '{}'\ncase \"$1 $2\" in\n  'pane split') echo '{{\"result\":{{\"pane\":{{\"pane_id\":\"w3:p9\",\"workspace_id\":\"w3\"}}}},\"type\":\"pane_info\"}}' ;;\nesac\n",
            log.display()
        ),
    );
    let out = w.action(
        "watch",
        &herdr,
        &w.root,
        &[(
            "HERDR_PLUGIN_CONTEXT_JSON",
            r#"{"workspace_id":"w3","focused_pane_id":"w3:p2"}"#,
        )],
    );
    let text = ok(&out);
    assert!(text.contains("watch opened in pane w3:p9"), "{text}");
    let calls = fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = calls.lines().collect();
    assert_eq!(lines[0], "pane split w3:p2 --direction down --focus");
    assert!(
        lines[1].starts_with("pane run w3:p9 ")
            && lines[1].ends_with("herdr-link watch --workspace w3"),
        "{calls}"
    );
    assert_eq!(lines.len(), 2, "{calls}");
}
