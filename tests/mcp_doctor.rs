//! `herdr-link doctor` against the fake Herdr: one PASS/FAIL line per check, exit 0 or 1, and
//! read-only (only `--version`, `agent get`, `agent list`).

#[path = "mcp/harness.rs"]
mod harness;

use std::process::{Command, Output};

use harness::{fake_bin, link_bin, World, WORLD};

fn doctor(env: &[(String, String)], args: &[&str]) -> (i32, Vec<String>) {
    let mut cmd = Command::new(link_bin());
    cmd.arg("doctor").args(args);
    for k in [
        "HERDR_ENV",
        "HERDR_BIN_PATH",
        "HERDR_PANE_ID",
        "HERDR_SOCKET_PATH",
        "HERDR_LINK_LOG",
        "HERDR_PLUGIN_CONTEXT_JSON",
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
        let allowed =
            argv == ["--version"] || argv[..2] == ["agent", "get"] || argv == ["agent", "list"];
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
        "operator log",
    ] {
        assert!(line(&lines, check).starts_with("PASS "), "{lines:#?}");
    }
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
    assert_eq!(lines.len(), 7, "six checks and a summary: {lines:#?}");
    assert_read_only(&w);
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
    assert!(line(&lines, "operator log").starts_with("PASS "));
    assert!(lines.last().unwrap().contains("failed"));
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
    assert!(line(&lines, "self record").starts_with("FAIL "));

    let (code, lines) = doctor(&w.inside(), &["--pane", "w1:p9"]);
    assert_eq!(code, 1);
    assert!(
        line(&lines, "self record").starts_with("FAIL "),
        "{lines:#?}"
    );

    let (code, lines) = doctor(&w.inside(), &["--pane", "w2:p1"]);
    assert_eq!(code, 0, "{lines:#?}");
    assert!(line(&lines, "agent name").ends_with("stranger"));
    assert!(line(&lines, "peers").contains("no other named live agents"));
    assert!(fake_bin().is_file());
    assert_read_only(&w);
}

#[test]
fn plugin_context_names_the_pane_when_herdr_pane_id_is_absent() {
    let w = World::new(WORLD);
    let mut env = w.inside();
    env.retain(|(k, _)| k != "HERDR_PANE_ID");
    env.push((
        "HERDR_PLUGIN_CONTEXT_JSON".into(),
        r#"{"workspace_id":"w1","focused_pane_id":"w1:p2"}"#.into(),
    ));
    let (code, lines) = doctor(&env, &[]);
    // The gate itself is closed (no HERDR_PANE_ID), but the focused pane is diagnosed.
    assert_eq!(code, 1);
    assert!(line(&lines, "environment").starts_with("FAIL "));
    assert!(line(&lines, "agent name").ends_with("worker"), "{lines:#?}");
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
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/herdr-plugin.toml")).unwrap();
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
    assert!(text.contains(
        r#"command = ["cargo", "build", "--release", "--locked", "--bin", "herdr-link"]"#
    ));
}
