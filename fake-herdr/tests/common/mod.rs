//! Shared helpers for the fake-herdr tests: an isolated state dir per test, a runner,
//! and a strict checker for "compact JSON with sorted keys".
#![allow(dead_code)]

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// Path of the fake binary.
pub const BIN: &str = env!("CARGO_BIN_EXE_herdr");

/// One isolated fake world.
pub struct Fake {
    pub dir: PathBuf,
    pub state: PathBuf,
}

/// Result of one invocation.
pub struct Out {
    pub stdout: String,
    pub stderr: String,
    pub raw_stdout: Vec<u8>,
    pub code: Option<i32>,
}

impl Fake {
    /// A fresh directory, without any state file ("no server").
    pub fn empty(name: &str) -> Fake {
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("fhtest-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create test dir");
        let state = dir.join("state.json");
        Fake { dir, state }
    }

    /// A fresh directory with `herdr fake init` done.
    pub fn new(name: &str) -> Fake {
        let f = Fake::empty(name);
        let o = f.run(&["fake", "init"]);
        assert_eq!(o.code, Some(0), "fake init failed: {}", o.stderr);
        f
    }

    /// A fresh directory with the given world loaded; returns the id map too.
    pub fn with_world(name: &str, world: &str) -> (Fake, Value) {
        let f = Fake::empty(name);
        let map = f.world(world);
        (f, map)
    }

    /// A command with a clean environment pointing at this world.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .env_remove("HERDR_SOCKET_PATH")
            .env_remove("HERDR_SESSION")
            .env_remove("HERDR_PANE_ID")
            .env_remove("HERDR_FAKE_DELAY_MS")
            .env_remove("HERDR_FAKE_VERSION")
            .env_remove("HERDR_FAKE_SETTLE_MS")
            .env_remove("HERDR_FAKE_SHELL_START_MS")
            .env_remove("HERDR_FAKE_BUSY_RETRY_MS")
            .env_remove("HERDR_FAKE_POLL_MS")
            .env_remove("HERDR_FAKE_START_STATUS")
            .env_remove("XDG_CONFIG_HOME")
            .env("HOME", &self.dir)
            .env("HERDR_FAKE_STATE", &self.state)
            .stdin(Stdio::null());
        c
    }

    /// Run with extra environment variables.
    pub fn run_env(&self, args: &[&str], envs: &[(&str, &str)]) -> Out {
        let mut c = self.cmd(args);
        for (k, v) in envs {
            c.env(k, v);
        }
        to_out(c.output().expect("spawn fake herdr"))
    }

    /// Run the fake.
    pub fn run(&self, args: &[&str]) -> Out {
        self.run_env(args, &[])
    }

    /// Load a world from JSON text; returns the id map.
    pub fn world(&self, world: &str) -> Value {
        use std::io::Write;
        let mut c = self.cmd(&["fake", "world"]);
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().expect("spawn fake world");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(world.as_bytes())
            .expect("write world");
        let o = to_out(child.wait_with_output().expect("wait fake world"));
        assert_eq!(o.code, Some(0), "fake world failed: {}", o.stderr);
        serde_json::from_str(&o.stdout).expect("world output is JSON")
    }

    /// Run, expect exit 0 and one sorted compact JSON line on stdout, empty stderr.
    pub fn ok(&self, args: &[&str]) -> Value {
        self.ok_env(args, &[])
    }

    /// `ok` with extra environment variables.
    pub fn ok_env(&self, args: &[&str], envs: &[(&str, &str)]) -> Value {
        let o = self.run_env(args, envs);
        assert_eq!(o.code, Some(0), "{args:?} failed: {}", o.stderr);
        assert_eq!(o.stderr, "", "{args:?} wrote stderr");
        assert_one_sorted_line(&o.stdout);
        serde_json::from_str(&o.stdout).expect("stdout JSON")
    }

    /// Run, expect exit 1, nothing on stdout and a server error line on stderr;
    /// returns (code, message).
    pub fn err(&self, args: &[&str]) -> (String, String) {
        let o = self.run(args);
        assert_eq!(
            o.code,
            Some(1),
            "{args:?}: expected exit 1, stdout={}",
            o.stdout
        );
        assert_eq!(o.stdout, "", "{args:?} wrote stdout");
        assert_one_sorted_line(&o.stderr);
        let v: Value = serde_json::from_str(&o.stderr).expect("stderr JSON");
        let id = args.iter().take(2).copied().collect::<Vec<_>>().join(":");
        assert_eq!(v["id"], format!("cli:{id}"), "error id");
        assert_eq!(v.as_object().map(|m| m.len()), Some(2), "error keys: {v}");
        (
            v["error"]["code"].as_str().expect("code").to_string(),
            v["error"]["message"].as_str().expect("message").to_string(),
        )
    }

    /// Run, expect exit 2 and plain text on stderr; returns stderr trimmed.
    pub fn usage(&self, args: &[&str]) -> String {
        self.usage_env(args, &[])
    }

    /// `usage` with extra environment variables.
    pub fn usage_env(&self, args: &[&str], envs: &[(&str, &str)]) -> String {
        let o = self.run_env(args, envs);
        assert_eq!(
            o.code,
            Some(2),
            "{args:?}: expected exit 2, stderr={}",
            o.stderr
        );
        assert_eq!(o.stdout, "", "{args:?} wrote stdout");
        assert!(
            serde_json::from_str::<Value>(&o.stderr).is_err(),
            "usage errors are plain text"
        );
        o.stderr.trim_end().to_string()
    }

    /// The argv log as JSON values.
    pub fn log(&self) -> Vec<Value> {
        let v = self.ok_admin(&["fake", "log"]);
        v.as_array().expect("log array").clone()
    }

    /// Run an admin verb, expect exit 0 and JSON.
    pub fn ok_admin(&self, args: &[&str]) -> Value {
        let o = self.run(args);
        assert_eq!(o.code, Some(0), "{args:?} failed: {}", o.stderr);
        serde_json::from_str(&o.stdout).expect("admin JSON")
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Convert a process output.
pub fn to_out(o: Output) -> Out {
    Out {
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        raw_stdout: o.stdout,
        code: o.status.code(),
    }
}

/// Assert `s` is exactly one `\n`-terminated line of compact JSON whose object keys
/// are strictly ascending at every level.
pub fn assert_one_sorted_line(s: &str) {
    assert!(s.ends_with('\n'), "not newline-terminated: {s:?}");
    let body = &s[..s.len() - 1];
    assert!(!body.contains('\n'), "more than one line: {s:?}");
    let b = body.as_bytes();
    let mut i = 0;
    check_value(b, &mut i, body);
    assert_eq!(i, b.len(), "trailing data in {body}");
}

fn check_value(b: &[u8], i: &mut usize, all: &str) {
    match b.get(*i) {
        Some(b'{') => {
            *i += 1;
            if b.get(*i) == Some(&b'}') {
                *i += 1;
                return;
            }
            let mut prev: Option<String> = None;
            loop {
                let key = read_string(b, i, all);
                if let Some(p) = &prev {
                    assert!(p < &key, "keys not sorted ({p} then {key}) in {all}");
                }
                prev = Some(key);
                assert_eq!(b.get(*i), Some(&b':'), "expected ':' in {all}");
                *i += 1;
                check_value(b, i, all);
                match b.get(*i) {
                    Some(b',') => *i += 1,
                    Some(b'}') => {
                        *i += 1;
                        return;
                    }
                    _ => panic!("bad object at {i} in {all}"),
                }
            }
        }
        Some(b'[') => {
            *i += 1;
            if b.get(*i) == Some(&b']') {
                *i += 1;
                return;
            }
            loop {
                check_value(b, i, all);
                match b.get(*i) {
                    Some(b',') => *i += 1,
                    Some(b']') => {
                        *i += 1;
                        return;
                    }
                    _ => panic!("bad array at {i} in {all}"),
                }
            }
        }
        Some(b'"') => {
            read_string(b, i, all);
        }
        Some(_) => {
            let start = *i;
            while *i < b.len() && !matches!(b[*i], b',' | b']' | b'}') {
                assert!(!b[*i].is_ascii_whitespace(), "whitespace in {all}");
                *i += 1;
            }
            let tok = &all[start..*i];
            assert!(
                serde_json::from_str::<Value>(tok).is_ok(),
                "bad scalar {tok} in {all}"
            );
        }
        None => panic!("unexpected end of {all}"),
    }
}

fn read_string(b: &[u8], i: &mut usize, all: &str) -> String {
    assert_eq!(b.get(*i), Some(&b'"'), "expected string at {i} in {all}");
    let start = *i;
    *i += 1;
    while *i < b.len() && b[*i] != b'"' {
        if b[*i] == b'\\' {
            *i += 1;
        }
        *i += 1;
    }
    assert!(*i < b.len(), "unterminated string in {all}");
    *i += 1;
    serde_json::from_str(&all[start..*i]).expect("string literal")
}
