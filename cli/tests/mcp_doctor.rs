//! `herdr-link doctor` against the fake Herdr: one PASS/FAIL/SKIP line per check, exit 1 only
//! when a check failed, and read-only (only `--version`, `agent get`, `agent list`; never the
//! operator log). Also the start-up hint `herdr-link mcp` gives when only HERDR_BIN_PATH is
//! missing.

use test_support::mcp as harness;

use std::process::{Command, Output};

use harness::{fake_bin, link_bin, World, WORLD};

/// A PATH as in a pane set up by `herdr-link setup`: the herdr shim first, then the (fake) real
/// Herdr, then the test's own PATH. The links live under Cargo's directory for test files (this
/// process never gets to remove them), replaced by the next run.
fn shim_first_path() -> String {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("doctor-shim");
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("shim")).unwrap();
        std::fs::create_dir_all(d.join("real")).unwrap();
        std::os::unix::fs::symlink(link_bin(), d.join("shim/herdr")).unwrap();
        std::os::unix::fs::symlink(fake_bin(), d.join("real/herdr")).unwrap();
        d
    });
    format!(
        "{}:{}:{}",
        dir.join("shim").display(),
        dir.join("real").display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Runs doctor with `env` (PATH, unless `env` sets it: [`shim_first_path`]).
fn doctor(env: &[(String, String)], args: &[&str]) -> (i32, Vec<String>) {
    let mut cmd = Command::new(link_bin());
    cmd.env("PATH", shim_first_path());
    cmd.arg("doctor").args(args);
    for k in [
        "HERDR_ENV",
        "HERDR_BIN_PATH",
        "HERDR_PANE_ID",
        "HERDR_SOCKET_PATH",
        "HERDR_LINK_LOG",
        "HERDR_PLUGIN_CONTEXT_JSON",
        "HERDR_LINK_TIMEOUT_MS",
        "HERDR_LINK_START_TIMEOUT_MS",
        // the hosts doctor recognises (a test run from one of their shells)
        "GEMINI_CLI",
        "QWEN_CODE",
        "GEMINI_CLI_HOME",
        "QWEN_HOME",
    ] {
        cmd.env_remove(k);
    }
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    let Output { status, stdout, .. } = cmd.output().unwrap();
    let lines = String::from_utf8(stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    (status.code().unwrap(), lines)
}

fn line<'a>(lines: &'a [String], check: &str) -> &'a str {
    lines
        .iter()
        .find(|l| {
            l.split_once(' ')
                .is_some_and(|(_, r)| r.starts_with(&format!("{check}:")))
        })
        .unwrap_or_else(|| panic!("no {check} line in {lines:#?}"))
}

fn assert_read_only(w: &World) {
    for argv in w.argv() {
        let allowed = argv == ["--version"]
            || argv[..2] == ["agent", "get"]
            || argv[..2] == ["pane", "get"]
            || argv == ["agent", "list"];
        assert!(allowed, "doctor ran {argv:?}");
    }
}

#[test]
fn healthy_pane_passes_every_check() {
    let w = World::new(WORLD);
    let log = w.dir.join("oplog.jsonl");
    let mut env = w.inside();
    env.push(("HERDR_LINK_LOG".into(), log.display().to_string()));
    let (code, lines) = doctor(&env, &[]);
    assert_eq!(code, 0, "{lines:#?}");
    for check in [
        "environment",
        "herdr binary",
        "self record",
        "agent name",
        "peers",
        "herdr shim",
        "delivery turns",
        "operator log",
        "settings",
    ] {
        assert!(line(&lines, check).starts_with("PASS "), "{lines:#?}");
    }
    assert!(
        line(&lines, "herdr shim").contains("shim/herdr is first on PATH; it runs"),
        "{lines:#?}"
    );
    assert!(line(&lines, "herdr binary").contains("herdr 0.8.0"));
    assert!(line(&lines, "self record").contains("w1:p1"));
    assert!(line(&lines, "agent name").ends_with("brain"));
    let peers = line(&lines, "peers");
    assert!(
        peers.contains("worker") && !peers.contains("stranger"),
        "{peers}"
    );
    assert!(line(&lines, "operator log").contains(&log.display().to_string()));
    assert!(!log.exists(), "doctor must not create the log");
    let settings = line(&lines, "settings");
    assert!(
        settings.contains("call limit 10000 ms, start limit 45000 ms, delivery turn wait 48000 ms, margin after a 0.8 Enter 25 ms, deliveries followed until taken up or 15000 ms"),
        "{settings}"
    );
    assert!(line(&lines, "delivery turns").contains("shared by this user's processes in /"));
    assert_eq!(lines.len(), 10, "nine checks and a summary: {lines:#?}");
    assert_eq!(
        lines.last().unwrap(),
        "herdr-link doctor: all 9 checks passed"
    );
    assert_read_only(&w);
}

#[test]
fn shim_not_first_on_path_fails_and_says_why() {
    let w = World::new(WORLD);
    let real = w.dir.join("real");
    std::fs::create_dir_all(&real).unwrap();
    std::os::unix::fs::symlink(fake_bin(), real.join("herdr")).unwrap();
    let mut env = w.inside();
    env.push(("PATH".into(), format!("{}:/usr/bin:/bin", real.display())));
    let (code, lines) = doctor(&env, &[]);
    assert_eq!(code, 1, "{lines:#?}");
    let shim = line(&lines, "herdr shim");
    assert!(shim.starts_with("FAIL "), "{shim}");
    assert!(shim.contains("not the herdr shim"), "{shim}");
    // The shim first with nothing after it: every herdr call would fail.
    let only = w.dir.join("only");
    std::fs::create_dir_all(&only).unwrap();
    std::os::unix::fs::symlink(link_bin(), only.join("herdr")).unwrap();
    let mut env = w.inside();
    env.push(("PATH".into(), format!("{}:/usr/bin:/bin", only.display())));
    let (_, lines) = doctor(&env, &[]);
    assert!(
        line(&lines, "herdr shim").contains("no real `herdr` follows it"),
        "{lines:#?}"
    );
}

#[test]
fn unnamed_pane_reports_the_bootstrap_without_renaming() {
    let w = World::new(WORLD);
    w.fake(&["agent", "w1:p1", "--no-name"]);
    let (code, lines) = doctor(&w.inside(), &[]);
    assert_eq!(code, 0, "{lines:#?}");
    let name = line(&lines, "agent name");
    assert!(
        name.starts_with("PASS ") && name.contains("bootstrap"),
        "{name}"
    );
    assert_read_only(&w);
}

#[test]
fn outside_herdr_fails_with_exit_1() {
    let (code, lines) = doctor(&[("PATH".into(), "/nonexistent".into())], &[]);
    assert_eq!(code, 1);
    let env = line(&lines, "environment");
    assert!(
        env.starts_with("FAIL ") && env.contains("HERDR_ENV=1"),
        "{env}"
    );
    assert!(line(&lines, "herdr binary").starts_with("FAIL "));
    // What cannot run is skipped, not failed.
    for check in ["self record", "agent name", "peers"] {
        assert!(line(&lines, check).starts_with("SKIP "), "{lines:#?}");
    }
    assert!(line(&lines, "operator log").starts_with("PASS "));
    assert!(line(&lines, "herdr shim").contains("no `herdr` on PATH at all"));
    assert_eq!(
        lines.last().unwrap(),
        "herdr-link doctor: 3 failed, 3 skipped, 3 passed"
    );
}

#[test]
fn broken_binary_and_unknown_pane_fail() {
    let w = World::new(WORLD);
    let mut env = w.inside();
    env.retain(|(k, _)| k != "HERDR_BIN_PATH");
    env.push(("HERDR_BIN_PATH".into(), "/nonexistent/herdr".into()));
    let (code, lines) = doctor(&env, &[]);
    assert_eq!(code, 1);
    assert!(line(&lines, "environment").starts_with("PASS "));
    assert!(line(&lines, "herdr binary").starts_with("FAIL "));
    assert!(line(&lines, "self record").starts_with("SKIP "));
    assert!(line(&lines, "agent name").starts_with("SKIP "));

    let (code, lines) = doctor(&w.inside(), &["--pane", "w1:p9"]);
    assert_eq!(code, 1);
    assert!(
        line(&lines, "self record").starts_with("FAIL "),
        "{lines:#?}"
    );
    assert!(line(&lines, "agent name").starts_with("SKIP "));
    assert!(line(&lines, "peers").starts_with("SKIP "));
    assert_eq!(
        lines.last().unwrap(),
        "herdr-link doctor: 1 failed, 2 skipped, 6 passed"
    );

    let (code, lines) = doctor(&w.inside(), &["--pane", "w2:p1"]);
    assert_eq!(code, 0, "{lines:#?}");
    assert!(line(&lines, "agent name").ends_with("stranger"));
    assert!(line(&lines, "peers").contains("no other named live agents"));
    assert!(fake_bin().is_file());
    assert_read_only(&w);
}

/// The environment of a Herdr plugin action invoked for `focused` (the action gets
/// HERDR_BIN_PATH; the context names the pane).
fn plugin_env(w: &World, context: &str) -> Vec<(String, String)> {
    let mut env = w.inside();
    env.retain(|(k, _)| k != "HERDR_PANE_ID" && k != "HERDR_ENV");
    env.push(("HERDR_PLUGIN_CONTEXT_JSON".into(), context.into()));
    env
}

#[test]
fn plugin_action_diagnoses_the_focused_pane() {
    let w = World::new(WORLD);
    let (code, lines) = doctor(
        &plugin_env(
            &w,
            r#"{"workspace_id":"w1","focused_pane_id":"w1:p2","tab_id":"w1:t1"}"#,
        ),
        &[],
    );
    assert_eq!(code, 0, "{lines:#?}");
    // The agents' own gate is not visible from a plugin action: skipped, not failed.
    assert!(
        line(&lines, "environment").starts_with("SKIP "),
        "{lines:#?}"
    );
    let ctx = line(&lines, "plugin context");
    assert!(
        ctx.starts_with("PASS ") && ctx.contains("w1:p2") && ctx.contains("w1"),
        "{ctx}"
    );
    assert!(
        line(&lines, "self record").contains("pane w1:p2"),
        "{lines:#?}"
    );
    assert!(line(&lines, "agent name").ends_with("worker"), "{lines:#?}");
    assert!(line(&lines, "peers").contains("brain"), "{lines:#?}");
    assert_read_only(&w);

    // The context's pane wins over an inherited HERDR_PANE_ID; --pane wins over both.
    let mut env = plugin_env(&w, r#"{"workspace_id":"w1","focused_pane_id":"w1:p2"}"#);
    env.push(("HERDR_PANE_ID".into(), "w1:p1".into()));
    let (_, lines) = doctor(&env, &[]);
    assert!(line(&lines, "agent name").ends_with("worker"), "{lines:#?}");
    let (_, lines) = doctor(&env, &["--pane", "w2:p1"]);
    assert!(
        line(&lines, "agent name").ends_with("stranger"),
        "{lines:#?}"
    );

    // A context that names no pane, or is not JSON, fails that check.
    let (code, lines) = doctor(&plugin_env(&w, r#"{"workspace_id":"w1"}"#), &[]);
    assert_eq!(code, 1);
    assert!(
        line(&lines, "plugin context").starts_with("FAIL "),
        "{lines:#?}"
    );
    assert!(
        line(&lines, "self record").starts_with("SKIP "),
        "{lines:#?}"
    );
    let (code, lines) = doctor(&plugin_env(&w, "not json"), &[]);
    assert_eq!(code, 1);
    assert!(line(&lines, "plugin context").contains("not a JSON object"));
}

/// A directory holding a `herdr` (a copy of the fake) to put on PATH.
fn path_with_herdr(w: &World, dir: &str) -> std::path::PathBuf {
    let d = w.dir.join(dir);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::copy(fake_bin(), d.join("herdr")).unwrap();
    d
}

/// Inside a pane of a Herdr that sets no HERDR_BIN_PATH (before 0.8.2).
fn without_bin_path(w: &World, path: &str) -> Vec<(String, String)> {
    let mut env = w.inside();
    env.retain(|(k, _)| k != "HERDR_BIN_PATH");
    env.push(("PATH".into(), path.into()));
    env
}

#[test]
fn missing_bin_path_alone_gets_the_exact_fix() {
    let w = World::new(WORLD);
    let dir = path_with_herdr(&w, "bin");
    let path = format!("/nonexistent:{}:/usr/bin:/bin", dir.display());
    let (code, lines) = doctor(&without_bin_path(&w, &path), &[]);
    assert_eq!(code, 1, "{lines:#?}");
    let env = line(&lines, "environment");
    assert!(env.starts_with("FAIL "), "{env}");
    assert!(
        env.contains(&format!(
            "Fix: export HERDR_BIN_PATH={}/herdr",
            dir.display()
        )),
        "{env}"
    );
    assert!(env.contains("HERDR_ENV=1 and HERDR_PANE_ID are set but HERDR_BIN_PATH is not"));
    assert!(env.contains("0.8.2 and later set it themselves"), "{env}");
    // Everything else is checked with the herdr found on PATH, and passes.
    let bin = line(&lines, "herdr binary");
    assert!(
        bin.starts_with("PASS ") && bin.contains(&dir.display().to_string()),
        "{bin}"
    );
    assert!(bin.contains("before 0.8.2"), "0.8.0 gets the note: {bin}");
    assert!(line(&lines, "agent name").ends_with("brain"));
    // That PATH has no shim in front of Herdr.
    assert!(line(&lines, "herdr shim").starts_with("FAIL "));
    assert_eq!(
        lines.last().unwrap(),
        "herdr-link doctor: 2 failed, 0 skipped, 7 passed"
    );

    // No herdr on PATH: the fix names a placeholder.
    let (code, lines) = doctor(&without_bin_path(&w, "/nonexistent"), &[]);
    assert_eq!(code, 1);
    let env = line(&lines, "environment");
    assert!(env.contains("no `herdr` was found on PATH"), "{env}");
    assert!(line(&lines, "herdr binary").starts_with("FAIL "));

    // Other closed gates keep the generic message.
    let mut env = without_bin_path(&w, &path);
    env.retain(|(k, _)| k != "HERDR_PANE_ID");
    let (_, lines) = doctor(&env, &[]);
    let e = line(&lines, "environment");
    assert!(
        e.contains("missing HERDR_BIN_PATH, HERDR_PANE_ID") && !e.contains("export"),
        "{e}"
    );
}

#[test]
fn herdr_0_8_2_needs_no_note() {
    let w = World::new(&WORLD.replacen('{', r#"{"config":{"version":"0.8.2"},"#, 1));
    let (code, lines) = doctor(&w.inside(), &[]);
    assert_eq!(code, 0, "{lines:#?}");
    let bin = line(&lines, "herdr binary");
    assert!(bin.ends_with("reports herdr 0.8.2"), "{bin}");
}

#[test]
fn invalid_settings_fail_and_name_the_default() {
    let w = World::new(WORLD);
    let log = w.dir.join("oplog.jsonl");
    let mut env = w.inside();
    env.push(("HERDR_LINK_TIMEOUT_MS".into(), "abc".into()));
    env.push(("HERDR_LINK_START_TIMEOUT_MS".into(), "0".into()));
    env.push(("HERDR_LINK_LOG".into(), log.display().to_string()));
    let (code, lines) = doctor(&env, &[]);
    assert_eq!(code, 1, "{lines:#?}");
    let s = line(&lines, "settings");
    assert!(s.starts_with("FAIL "), "{s}");
    assert!(
        s.contains("HERDR_LINK_TIMEOUT_MS=\"abc\" is not a whole number of milliseconds above 0; the default 10000 ms is used"),
        "{s}"
    );
    assert!(s.contains("HERDR_LINK_START_TIMEOUT_MS=\"0\""), "{s}");
    assert!(s.contains("the default 45000 ms is used"), "{s}");
    // The defaults are used: the rest of the diagnosis works, and nothing was logged.
    assert!(line(&lines, "self record").starts_with("PASS "));
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(!log.exists(), "doctor never writes the operator log");
}

/// `herdr-link mcp` with stdin closed after 300 ms (time for the operator log's background
/// writer); returns (exit code, stderr).
fn mcp_until_eof(env: &[(String, String)]) -> (i32, String) {
    let mut cmd = Command::new(link_bin());
    cmd.arg("mcp")
        .current_dir(std::env::temp_dir())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for k in [
        "HERDR_ENV",
        "HERDR_BIN_PATH",
        "HERDR_PANE_ID",
        "HERDR_SOCKET_PATH",
        "HERDR_LINK_LOG",
        "HERDR_LINK_TIMEOUT_MS",
        "HERDR_LINK_START_TIMEOUT_MS",
        // the hosts doctor recognises (a test run from one of their shells)
        "GEMINI_CLI",
        "QWEN_CODE",
        "GEMINI_CLI_HOME",
        "QWEN_HOME",
    ] {
        cmd.env_remove(k);
    }
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    let mut child = cmd.spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn read_log(path: &std::path::Path, lines: usize) -> Vec<serde_json::Value> {
    for _ in 0..100 {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.lines().count() >= lines {
            return text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("fewer than {lines} lines in {}", path.display());
}

#[test]
fn mcp_gives_the_hint_once_on_stderr_and_in_the_log() {
    let w = World::new(WORLD);
    let dir = path_with_herdr(&w, "bin");
    let log = w.dir.join("oplog.jsonl");
    let mut env = without_bin_path(&w, &format!("{}:/usr/bin:/bin", dir.display()));
    env.push(("HERDR_LINK_LOG".into(), log.display().to_string()));
    let (code, stderr) = mcp_until_eof(&env);
    assert_eq!(code, 0, "{stderr}");
    let fix = format!("export HERDR_BIN_PATH={}/herdr", dir.display());
    assert_eq!(stderr.matches(&fix).count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("herdr-link mcp: the Herdr Link gate is closed"),
        "{stderr}"
    );
    let lines = read_log(&log, 1);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert_eq!(lines[0]["tool"], "mcp");
    assert!(lines[0]["detail"].as_str().unwrap().contains(&fix));
    // The gate stays closed: the server made no Herdr call.
    assert!(w.argv().is_empty(), "{:?}", w.argv());

    // Gate open, or outside Herdr altogether: no hint.
    let (_, stderr) = mcp_until_eof(&w.inside());
    assert!(!stderr.contains("HERDR_BIN_PATH"), "{stderr}");
    let (_, stderr) = mcp_until_eof(&[("PATH".into(), format!("{}", dir.display()))]);
    assert!(!stderr.contains("HERDR_BIN_PATH"), "{stderr}");
}

#[test]
fn invalid_setting_is_logged_once_with_its_default() {
    let w = World::new(WORLD);
    let log = w.dir.join("oplog.jsonl");
    let mut env = w.inside();
    env.push(("HERDR_LINK_TIMEOUT_MS".into(), "abc".into()));
    env.push(("HERDR_LINK_LOG".into(), log.display().to_string()));
    // The server's start-up bootstrap and its drain limit both read the settings.
    let (code, stderr) = mcp_until_eof(&env);
    assert_eq!(code, 0, "{stderr}");
    let lines = read_log(&log, 1);
    let settings: Vec<_> = lines.iter().filter(|l| l["tool"] == "settings").collect();
    assert_eq!(settings.len(), 1, "{lines:#?}");
    assert_eq!(settings[0]["code"], "INVALID_SETTING");
    assert_eq!(
        settings[0]["detail"],
        "HERDR_LINK_TIMEOUT_MS=\"abc\" is not a whole number of milliseconds above 0; the default 10000 ms is used"
    );
}

#[test]
fn unwritable_log_fails() {
    let w = World::new(WORLD);
    let mut env = w.inside();
    env.push((
        "HERDR_LINK_LOG".into(),
        "/nonexistent/dir/oplog.jsonl".into(),
    ));
    let (code, lines) = doctor(&env, &[]);
    assert_eq!(code, 1);
    assert!(line(&lines, "operator log").starts_with("FAIL "));
}

#[test]
fn plugin_manifest_runs_doctor_and_matches_the_crate_version() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../herdr-plugin.toml"))
            .unwrap();
    let value = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{key} = ")))
            .unwrap_or_else(|| panic!("no top-level {key}"))
            .trim_matches('"')
            .to_string()
    };
    assert_eq!(value("id"), "herdr-link");
    assert_eq!(value("version"), env!("CARGO_PKG_VERSION"));
    assert!(text.contains("[[actions]]\nid = \"doctor\"\n"));
    assert!(text.contains(r#"command = ["./target/release/herdr-link", "doctor"]"#));
    assert!(text.contains(r#"command = ["cargo", "build", "--release", "--locked"]"#));
}

#[test]
fn min_herdr_version_matches_the_supported_versions_table() {
    let read = |p: &str| {
        std::fs::read_to_string(format!("{}/../{p}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    };
    let manifest = read("herdr-plugin.toml");
    let min = manifest
        .lines()
        .find_map(|l| l.strip_prefix("min_herdr_version = "))
        .expect("min_herdr_version")
        .trim_matches('"')
        .to_string();
    let readme = read("docs/herdr-versions.md");
    let section = readme
        .split("## Supported Herdr versions")
        .nth(1)
        .expect("docs/herdr-versions.md has a Supported Herdr versions section");
    let section = section.split("\n## ").next().unwrap();
    let rows: Vec<(&str, &str)> = section
        .lines()
        .filter_map(|l| {
            let mut cells = l.split('|').map(str::trim).skip(1);
            Some((cells.next()?, cells.next()?))
        })
        .filter(|(v, _)| v.starts_with("0.") || *v == "older")
        .collect();
    let versions: Vec<&str> = rows.iter().map(|r| r.0).collect();
    assert_eq!(
        versions,
        ["0.9.0 – 0.9.x", "0.8.2", "0.8.1", "0.8.0", "older"],
        "{rows:?}"
    );
    // The oldest row that works is the manifest's minimum; older ones do not work.
    let oldest_working = rows
        .iter()
        .rev()
        .find(|r| r.1.starts_with("yes"))
        .unwrap()
        .0;
    assert_eq!(oldest_working, min);
    assert_eq!(rows.last().unwrap().1, "no");
    assert!(section.contains(&format!(
        "`min_herdr_version` in [`herdr-plugin.toml`](../herdr-plugin.toml) is {min}"
    )));
    // The export it gives is the one line every other doc gives (docs/setup.md).
    let snippet = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.contains("export HERDR_BIN_PATH=\"$(command -v herdr)\""))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(snippet(section), snippet(&read("docs/setup.md")));
    assert_eq!(snippet(section).len(), 1);
    // Every version the fake Herdr plays is in the table.
    for v in ["0.8.0", "0.8.2"] {
        assert!(versions.contains(&v));
    }
}

/// Run as a shell command of Gemini CLI (`GEMINI_CLI=1`) or Qwen Code (`QWEN_CODE=1`), doctor
/// adds a `host` line: FAIL (exit 1) naming the settings files it read and the setup command
/// until `herdr-link setup <host>` registered the server and the guard, PASS after; FAIL again
/// when only one of the two is left. Elsewhere there is no such line (the other tests).
#[test]
fn doctor_recognises_gemini_and_qwen_and_checks_their_setup() {
    let w = World::new(WORLD);
    for (var, host, title, settings) in [
        (
            "GEMINI_CLI",
            "gemini",
            "Gemini CLI",
            ".gemini/settings.json",
        ),
        ("QWEN_CODE", "qwen", "Qwen Code", ".qwen/settings.json"),
    ] {
        let home = w.dir.join(format!("home-{host}"));
        std::fs::create_dir_all(&home).unwrap();
        let mut env = w.inside();
        env.push(("HOME".into(), home.display().to_string()));
        env.push((var.into(), "1".into()));
        let (code, lines) = doctor(&env, &[]);
        assert_eq!(code, 1, "{lines:#?}");
        let l = line(&lines, "host");
        assert!(
            l.starts_with(&format!(
                "FAIL host: {title}: no herdr_link registration in "
            )),
            "{l}"
        );
        assert!(
            l.contains(&home.join(settings).display().to_string()),
            "{l}"
        );
        assert!(l.contains(&format!("run `herdr-link setup {host}`")), "{l}");

        let out = Command::new(link_bin())
            .args(["setup", host, "--herdr"])
            .arg(fake_bin())
            .env_clear()
            .env("HOME", &home)
            .env("HERDR_FAKE_VERSION", "0.8.2")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (code, lines) = doctor(&env, &[]);
        assert_eq!(code, 0, "{lines:#?}");
        assert_eq!(
            line(&lines, "host"),
            format!(
                "PASS host: {title}: the herdr_link server and the guard hook are registered in {}",
                home.join(settings).display()
            )
        );

        // The server without the guard hook is not a working setup.
        let file = home.join(settings);
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("hooks");
        std::fs::write(&file, v.to_string()).unwrap();
        let (code, lines) = doctor(&env, &[]);
        assert_eq!(code, 1);
        assert!(
            line(&lines, "host").contains("has only the server"),
            "{lines:#?}"
        );
    }
}

/// Herdr unusable: doctor names the cause in one line with its fix — the server is not running
/// at its socket, the server and the binary speak different protocols, HERDR_BIN_PATH is not
/// Herdr.
#[test]
fn doctor_names_why_herdr_is_unusable() {
    let w = World::new(WORLD);
    let sock = w.dir.join("h.sock").display().to_string();
    let mut env = w.inside();
    env.push(("HERDR_SOCKET_PATH".into(), sock.clone()));

    w.fake(&["server", "stop"]);
    let (code, lines) = doctor(&env, &[]);
    assert_eq!(code, 1);
    assert!(
        line(&lines, "herdr binary").starts_with("PASS "),
        "{lines:#?}"
    );
    assert_eq!(
        line(&lines, "self record"),
        format!("FAIL self record: agent get w1:p1: the Herdr server is not running at {sock}; fix: start or attach it (`herdr`), then retry (Link answers NOT_IN_HERDR)")
    );

    w.fake(&["server", "start"]);
    w.fake(&["server", "protocol", "22"]);
    let (_, lines) = doctor(&env, &[]);
    let self_line = line(&lines, "self record");
    assert!(
        self_line.starts_with(
            "FAIL self record: agent get w1:p1: the Herdr server and HERDR_BIN_PATH ("
        ),
        "{self_line}"
    );
    assert!(
        self_line.contains("speak different protocols (client protocol 19 is older than server protocol 22); fix: "),
        "{self_line}"
    );
    w.fake(&["server", "protocol", "18"]);
    let (_, lines) = doctor(&env, &[]);
    assert!(
        line(&lines, "self record").ends_with("fix: restart Herdr (`herdr server stop`, then `herdr`; stopping ends the agents in its panes) (Link answers NOT_IN_HERDR)"),
        "{lines:#?}"
    );
    w.fake(&["server", "protocol", "--unset"]);

    // Something that is not Herdr: it answers neither `--version` nor `agent get` as Herdr does.
    let script = w.dir.join("not-herdr");
    std::fs::write(
        &script,
        "#!/bin/sh\necho \"not-herdr: unknown command '$1'\" >&2\nexit 2\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    env.retain(|(k, _)| k != "HERDR_BIN_PATH");
    env.push(("HERDR_BIN_PATH".into(), script.display().to_string()));
    let (code, lines) = doctor(&env, &[]);
    assert_eq!(code, 1);
    let bin = line(&lines, "herdr binary");
    assert!(
        bin.starts_with(&format!(
            "FAIL herdr binary: HERDR_BIN_PATH ({}) is not Herdr",
            script.display()
        )),
        "{bin}"
    );
    assert!(
        bin.ends_with("fix: point HERDR_BIN_PATH at the herdr binary"),
        "{bin}"
    );
    // One that answers `--version` as something else.
    let ls = ["/bin/ls", "/usr/bin/ls"]
        .into_iter()
        .find(|p| std::path::Path::new(p).is_file())
        .unwrap();
    env.retain(|(k, _)| k != "HERDR_BIN_PATH");
    env.push(("HERDR_BIN_PATH".into(), ls.into()));
    let (_, lines) = doctor(&env, &[]);
    let bin = line(&lines, "herdr binary");
    assert!(
        bin.starts_with(&format!(
            "FAIL herdr binary: HERDR_BIN_PATH ({ls}) is not Herdr (`--version` printed"
        )),
        "{bin}"
    );
    for l in &lines {
        assert!(!l.contains('\n'));
    }
}
