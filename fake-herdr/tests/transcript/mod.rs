//! Transcripts of the Herdr CLI: the fake's specification.
//!
//! One corpus (`corpus`) is played against a target: a real Herdr server when recording
//! (`scripts/record-herdr.sh`), the fake when replaying (`tests/transcripts.rs`). Each step is
//! written as one JSON line holding what was run and what came back, normalised so that two
//! runs of one Herdr give the same line: the scratch root reads `$ROOT`, terminal ids read
//! `term#N` by first appearance, `revision` / `state_change_seq` / `viewport_rows` read `<n>`, and timing is kept
//! as coarse facts (reached or not, at the first look or later), never as milliseconds.
#![allow(dead_code)]

use serde_json::{json, Map, Value};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Where the transcripts live (one file per Herdr version).
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/herdr-transcripts")
}

/// The transcript file of `version`.
pub fn file(version: &str) -> PathBuf {
    dir().join(format!("{version}.jsonl"))
}

/// What a step runs against.
pub enum Kind {
    /// A real Herdr server, started by `scripts/record-herdr.sh` with this root's HOME, XDG
    /// dirs and socket; its fake agents write what they read to `$ROOT/inbox/<pane id>`.
    Real,
    /// The fake, its world in `$ROOT/state.json`.
    Fake,
}

/// One target: a `herdr` binary, a scratch root and the version it plays.
pub struct Target {
    pub bin: PathBuf,
    pub root: PathBuf,
    pub version: String,
    pub kind: Kind,
    terms: RefCell<Vec<String>>,
}

/// What one invocation gave, before normalisation.
pub struct Raw {
    pub exit: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Target {
    /// The fake `bin` playing `version` in a fresh scratch root with an empty world (a bare
    /// server has no workspace).
    pub fn fake(bin: &Path, version: &str, name: &str) -> Target {
        let root = std::env::temp_dir().join(format!(
            "herdr-transcript-{name}-{version}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let t = Target {
            bin: bin.to_path_buf(),
            root,
            version: version.to_string(),
            kind: Kind::Fake,
            terms: RefCell::new(Vec::new()),
        };
        let r = t.raw(&["fake".into(), "init".into()], None);
        assert_eq!(r.exit, Some(0), "fake init: {}", r.stderr);
        t
    }

    /// The real server the recorder script started (`HERDR_TRANSCRIPT_BIN`, `_ROOT`, `_VERSION`).
    pub fn real() -> Target {
        let var = |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("{k} is not set"));
        Target {
            bin: var("HERDR_TRANSCRIPT_BIN").into(),
            root: var("HERDR_TRANSCRIPT_ROOT").into(),
            version: var("HERDR_TRANSCRIPT_VERSION"),
            kind: Kind::Real,
            terms: RefCell::new(Vec::new()),
        }
    }

    fn command(&self, argv: &[String], pane: Option<&str>) -> Command {
        let root = self.root.display().to_string();
        let mut c = Command::new(&self.bin);
        c.args(argv.iter().map(|a| a.replace("$ROOT", &root)))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root.join("home"))
            .env("XDG_CONFIG_HOME", self.root.join("cfg"))
            .env("XDG_RUNTIME_DIR", self.root.join("run"))
            .env("HERDR_SOCKET_PATH", self.root.join("h.sock"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Kind::Fake = self.kind {
            c.env("HERDR_FAKE_STATE", self.root.join("state.json"))
                .env("HERDR_FAKE_VERSION", &self.version);
        }
        if let Some(p) = pane {
            c.env("HERDR_PANE_ID", p);
        }
        c
    }

    /// Runs `herdr argv` (`$ROOT` replaced), with `HERDR_PANE_ID` when `pane` is given.
    pub fn raw(&self, argv: &[String], pane: Option<&str>) -> Raw {
        let o = self.command(argv, pane).output().expect("spawn herdr");
        Raw {
            exit: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    /// Runs several invocations at the same moment and waits for them all.
    pub fn together(&self, runs: &[(Vec<String>, Option<String>)]) -> Vec<Raw> {
        let children: Vec<_> = runs
            .iter()
            .map(|(argv, pane)| self.command(argv, pane.as_deref()).spawn().unwrap())
            .collect();
        children
            .into_iter()
            .map(|c| {
                let o = c.wait_with_output().unwrap();
                Raw {
                    exit: o.status.code(),
                    stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
                    stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
                }
            })
            .collect()
    }

    /// The lines the agent in `pane` was given (each Enter one line), once delivery is over.
    pub fn inbox(&self, pane: &str) -> Vec<String> {
        match self.kind {
            Kind::Real => {
                // The fake agent appends each line it reads; wait until it stays the same.
                let path = self.root.join("inbox").join(pane);
                let read = || std::fs::read_to_string(&path).unwrap_or_default();
                let mut last = read();
                let mut still = Instant::now();
                let end = Instant::now() + Duration::from_secs(10);
                while still.elapsed() < Duration::from_millis(1500) && Instant::now() < end {
                    std::thread::sleep(Duration::from_millis(100));
                    let now = read();
                    if now != last {
                        last = now;
                        still = Instant::now();
                    }
                }
                last.lines().map(str::to_string).collect()
            }
            Kind::Fake => {
                let r = self.raw(&["fake".into(), "prompts".into()], None);
                assert_eq!(r.exit, Some(0), "fake prompts: {}", r.stderr);
                let v: Value = serde_json::from_str(&r.stdout).unwrap();
                v.as_array()
                    .unwrap()
                    .iter()
                    .filter(|p| p["pane_id"] == pane)
                    .map(|p| p["text"].as_str().unwrap_or_default().to_string())
                    .collect()
            }
        }
    }

    /// A text with this target's root and terminal ids replaced by their roles.
    pub fn text(&self, s: &str) -> String {
        let s = s.replace(&self.root.display().to_string(), "$ROOT");
        let mut out = String::with_capacity(s.len());
        let mut rest = s.as_str();
        while let Some(i) = rest.find("term_") {
            out.push_str(&rest[..i]);
            let tail = &rest[i + 5..];
            let n = tail
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .unwrap_or(tail.len());
            if n == 0 {
                out.push_str("term_");
                rest = tail;
                continue;
            }
            let id = &rest[i..i + 5 + n];
            let mut terms = self.terms.borrow_mut();
            let k = match terms.iter().position(|t| t == id) {
                Some(k) => k,
                None => {
                    terms.push(id.to_string());
                    terms.len() - 1
                }
            };
            out.push_str(&format!("term#{}", k + 1));
            rest = &tail[n..];
        }
        out.push_str(rest);
        out
    }

    fn json(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.text(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.json(x)).collect()),
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| {
                        // Counters, and the rows a pane gets from the layout (not simulated).
                        let volatile = matches!(
                            k.as_str(),
                            "revision" | "state_change_seq" | "viewport_rows"
                        );
                        let x = if volatile && x.is_number() {
                            json!("<n>")
                        } else {
                            self.json(x)
                        };
                        (k.clone(), x)
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// One output stream: a JSON line becomes its normalised value, anything else its text. A
    /// line whose top-level keys are not in sorted order (Herdr's typed `server_not_running` and
    /// `protocol_mismatch` lines print `id` first) also keeps that order, as `key_order`.
    fn stream(&self, s: &str) -> Value {
        if s.is_empty() {
            return Value::Null;
        }
        match serde_json::from_str::<Value>(s.trim_end()) {
            Ok(v) if s.ends_with('\n') && s.trim_end().lines().count() == 1 => {
                let mut out = json!({"json": self.json(&v)});
                let order = top_level_keys(s.trim_end());
                if !order.windows(2).all(|w| w[0] <= w[1]) {
                    out["key_order"] = json!(order);
                }
                out
            }
            _ => json!({"text": self.text(s)}),
        }
    }

    /// The normalised outcome of one invocation.
    pub fn outcome(&self, r: &Raw) -> Value {
        json!({"exit": r.exit, "stdout": self.stream(&r.stdout), "stderr": self.stream(&r.stderr)})
    }
}

/// One step of the corpus; `out` is what the target gave, normalised.
#[derive(Clone)]
pub enum Step {
    /// Run `herdr argv`, with `HERDR_PANE_ID=pane` when given; `timed` adds the coarse fact
    /// `slow` (took a second or more: Herdr waited or retried).
    Run {
        argv: Vec<String>,
        pane: Option<String>,
        timed: bool,
    },
    /// The fake only: play with real Herdr's delays (`herdr fake config KEY VALUE`; the fake's
    /// defaults are shorter, for fast tests). Nothing on a real Herdr.
    FakeConfig { key: String, value: String },
    /// Poll `herdr argv` until the JSON value at `path` equals `is`, for at most `limit_ms`.
    /// Facts: reached, and whether the first look already showed it.
    Wait {
        argv: Vec<String>,
        path: String,
        is: Value,
        limit_ms: u64,
    },
    /// Run these at the same moment.
    Together { runs: Vec<Vec<String>> },
    /// Sleep (let Herdr's own delays pass).
    Sleep { ms: u64 },
    /// Stop the server (real: `herdr server stop`, then wait until the CLI no longer reaches it;
    /// fake: `herdr fake server stop`). Every later socket command meets no server.
    ServerStop,
    /// The lines the agent in `pane` has been given. `any_order`: each line's characters
    /// sorted, for prompts sent at the same moment (which one is typed first is itself a race;
    /// the fact is whether they became one line).
    Inbox { pane: String, any_order: bool },
}

impl Step {
    /// The step as a transcript line (without `out`), `note` saying why it is there.
    pub fn spec(&self, note: &str) -> Map<String, Value> {
        let v = match self {
            Step::Run { argv, pane, timed } => {
                json!({"op": "run", "argv": argv, "pane": pane, "timed": timed})
            }
            Step::FakeConfig { key, value } => {
                json!({"op": "fake_config", "key": key, "value": value})
            }
            Step::Wait {
                argv,
                path,
                is,
                limit_ms,
            } => json!({"op": "wait", "argv": argv, "path": path, "is": is, "limit_ms": limit_ms}),
            Step::Together { runs } => json!({"op": "together", "runs": runs}),
            Step::Sleep { ms } => json!({"op": "sleep", "ms": ms}),
            Step::ServerStop => json!({"op": "server_stop"}),
            Step::Inbox { pane, any_order } => {
                json!({"op": "inbox", "pane": pane, "any_order": any_order})
            }
        };
        let mut m = v.as_object().unwrap().clone();
        m.insert("note".into(), json!(note));
        m
    }

    /// Reads a step back from a transcript line.
    pub fn from_line(line: &Value) -> Step {
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .unwrap_or_else(|| panic!("not an argv: {v}"))
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect()
        };
        match line["op"].as_str().unwrap() {
            "run" => Step::Run {
                argv: strings(&line["argv"]),
                pane: line["pane"].as_str().map(str::to_string),
                timed: line["timed"].as_bool().unwrap_or(false),
            },
            "fake_config" => Step::FakeConfig {
                key: line["key"].as_str().unwrap().to_string(),
                value: line["value"].as_str().unwrap().to_string(),
            },
            "wait" => Step::Wait {
                argv: strings(&line["argv"]),
                path: line["path"].as_str().unwrap().to_string(),
                is: line["is"].clone(),
                limit_ms: line["limit_ms"].as_u64().unwrap(),
            },
            "together" => Step::Together {
                runs: line["runs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(strings)
                    .collect(),
            },
            "sleep" => Step::Sleep {
                ms: line["ms"].as_u64().unwrap(),
            },
            "server_stop" => Step::ServerStop,
            "inbox" => Step::Inbox {
                pane: line["pane"].as_str().unwrap().to_string(),
                any_order: line["any_order"].as_bool().unwrap_or(false),
            },
            op => panic!("unknown transcript op {op}"),
        }
    }

    /// Plays the step on `t`; returns its normalised `out`.
    pub fn play(&self, t: &Target) -> Value {
        match self {
            Step::Run { argv, pane, timed } => {
                let started = Instant::now();
                let r = t.raw(argv, pane.as_deref());
                let mut out = t.outcome(&r);
                if *timed {
                    out["slow"] = json!(started.elapsed() >= Duration::from_secs(1));
                }
                out
            }
            Step::FakeConfig { key, value } => {
                if let Kind::Fake = t.kind {
                    let r = t.raw(&argv(&["fake", "config", key, value]), None);
                    assert_eq!(r.exit, Some(0), "fake config {key} {value}: {}", r.stderr);
                }
                Value::Null
            }
            Step::Wait {
                argv,
                path,
                is,
                limit_ms,
            } => {
                let end = Instant::now() + Duration::from_millis(*limit_ms);
                let mut first = true;
                loop {
                    let r = t.raw(argv, None);
                    let v: Value = serde_json::from_str(r.stdout.trim()).unwrap_or(Value::Null);
                    let seen = v.pointer(path).cloned().unwrap_or(Value::Null);
                    if &seen == is {
                        return json!({"reached": true, "at_first_look": first});
                    }
                    if Instant::now() >= end {
                        return json!({"reached": false, "last": t.outcome(&r)});
                    }
                    first = false;
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            Step::Together { runs } => {
                let runs: Vec<_> = runs.iter().map(|a| (a.clone(), None)).collect();
                Value::Array(t.together(&runs).iter().map(|r| t.outcome(r)).collect())
            }
            Step::Sleep { ms } => {
                std::thread::sleep(Duration::from_millis(*ms));
                Value::Null
            }
            Step::ServerStop => {
                match t.kind {
                    Kind::Fake => {
                        let r = t.raw(&argv(&["fake", "server", "stop"]), None);
                        assert_eq!(r.exit, Some(0), "fake server stop: {}", r.stderr);
                    }
                    Kind::Real => {
                        let r = t.raw(&argv(&["server", "stop"]), None);
                        assert_eq!(r.exit, Some(0), "herdr server stop: {}", r.stderr);
                        let end = Instant::now() + Duration::from_secs(15);
                        while !t
                            .raw(&argv(&["agent", "list"]), None)
                            .stderr
                            .contains("server_not_running")
                        {
                            assert!(Instant::now() < end, "the server did not stop");
                            std::thread::sleep(Duration::from_millis(100));
                        }
                    }
                }
                Value::Null
            }
            Step::Inbox { pane, any_order } => {
                let mut lines = t.inbox(pane);
                if *any_order {
                    for l in &mut lines {
                        let mut chars: Vec<char> = l.chars().collect();
                        chars.sort_unstable();
                        *l = chars.into_iter().collect();
                    }
                }
                json!(lines)
            }
        }
    }
}

/// The top-level keys of a JSON object, in the order the text has them (empty for anything
/// else).
fn top_level_keys(text: &str) -> Vec<String> {
    struct Keys(Vec<String>);
    impl<'de> serde::de::Visitor<'de> for Keys {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            mut self,
            mut m: A,
        ) -> Result<Self::Value, A::Error> {
            while let Some((k, _)) = m.next_entry::<String, serde::de::IgnoredAny>()? {
                self.0.push(k);
            }
            Ok(self.0)
        }
    }
    use serde::Deserializer;
    serde_json::Deserializer::from_str(text)
        .deserialize_map(Keys(Vec::new()))
        .unwrap_or_default()
}

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

/// The corpus for `version` ("0.8.0" or "0.8.2"): the world, then every command and error
/// path Link uses, usage errors, global flags, the two versions' differences and the timing
/// probes. Each entry: why it is there, and the step.
pub fn corpus(version: &str) -> Vec<(String, Step)> {
    let v082 = version == "0.8.2";
    let mut c = Corpus(Vec::new());
    // Real Herdr's delays, where the fake's defaults are shorter (the start settle and poll,
    // 0.8.2's busy retry): the timing facts below are recorded against these.
    c.step(
        "real start settle",
        Step::FakeConfig {
            key: "settle_ms".into(),
            value: "3000".into(),
        },
    );
    c.step(
        "real start poll",
        Step::FakeConfig {
            key: "poll_ms".into(),
            value: "100".into(),
        },
    );
    if v082 {
        c.step(
            "real busy retry",
            Step::FakeConfig {
                key: "busy_retry_ms".into(),
                value: "2000".into(),
            },
        );
    }

    // --- global flags, a bare server
    c.run("version", &["--version"]);
    c.run("a bare server: no pane", &["pane", "list"]);
    c.run("a bare server: no agent", &["agent", "list"]);

    // --- the world: w1 (alpha: p1 p2 p3 in t1, p4 in t2), w2 (beta: p1)
    c.run(
        "workspace create",
        &[
            "workspace",
            "create",
            "--cwd",
            "$ROOT/alpha",
            "--label",
            "alpha",
            "--no-focus",
        ],
    );
    c.run(
        "pane split, Link's form",
        &[
            "pane",
            "split",
            "w1:p1",
            "--direction",
            "right",
            "--cwd",
            "$ROOT/alpha",
            "--no-focus",
        ],
    );
    c.run(
        "pane split --pane, down, the target's cwd",
        &[
            "pane",
            "split",
            "--pane",
            "w1:p2",
            "--direction",
            "down",
            "--no-focus",
        ],
    );
    c.run(
        "tab create, Link's form",
        &[
            "tab",
            "create",
            "--workspace",
            "w1",
            "--cwd",
            "$ROOT/alpha",
            "--label",
            "side",
            "--no-focus",
        ],
    );
    c.run(
        "second workspace",
        &["workspace", "create", "--cwd", "$ROOT/beta", "--no-focus"],
    );
    c.sleep("the shells start", 1500);
    c.run("pane get of a plain shell", &["pane", "get", "w1:p1"]);
    c.run(
        "pane list --workspace",
        &["pane", "list", "--workspace", "w1"],
    );
    c.run("pane list", &["pane", "list"]);

    // --- agents: worker (named, w1:p2), an unnamed pi (w1:p3), stranger (w2:p1)
    c.timed(
        "agent start: readiness",
        &[
            "agent", "start", "worker", "--kind", "pi", "--pane", "w1:p2", "--",
        ],
    );
    c.wait(
        "worker detected and idle",
        &["agent", "get", "worker"],
        "/result/agent/agent_status",
        json!("idle"),
    );
    c.run(
        "agent start",
        &[
            "agent", "start", "helper", "--kind", "pi", "--pane", "w1:p3", "--",
        ],
    );
    c.wait(
        "helper idle",
        &["agent", "get", "helper"],
        "/result/agent/agent_status",
        json!("idle"),
    );
    c.run(
        "agent rename --clear: an unnamed agent",
        &["agent", "rename", "helper", "--clear"],
    );
    c.run(
        "agent start in another workspace",
        &[
            "agent", "start", "stranger", "--kind", "pi", "--pane", "w2:p1", "--",
        ],
    );
    c.wait(
        "stranger idle",
        &["agent", "get", "stranger"],
        "/result/agent/agent_status",
        json!("idle"),
    );

    // --- reads
    c.run("agent list", &["agent", "list"]);
    c.run("agent get by name", &["agent", "get", "worker"]);
    c.run("agent get by pane id", &["agent", "get", "w1:p2"]);
    c.run("agent get of an unnamed agent", &["agent", "get", "w1:p3"]);
    c.run("agent get of a plain shell", &["agent", "get", "w1:p1"]);
    c.run("agent get of nobody", &["agent", "get", "ghost"]);
    c.run("agent get of a missing pane", &["agent", "get", "w1:p9"]);
    c.run("pane get of an agent pane", &["pane", "get", "w1:p2"]);
    c.run("pane get of a missing pane", &["pane", "get", "w9:p1"]);
    c.run(
        "pane list of the other workspace",
        &["pane", "list", "--workspace", "w2"],
    );
    c.run(
        "pane list of a missing workspace",
        &["pane", "list", "--workspace", "w9"],
    );

    // --- rename
    c.run(
        "agent rename an unnamed agent",
        &["agent", "rename", "w1:p3", "helper2"],
    );
    c.run(
        "agent rename to its own name",
        &["agent", "rename", "helper2", "helper2"],
    );
    c.run(
        "agent rename to a taken name",
        &["agent", "rename", "w1:p3", "worker"],
    );
    c.run(
        "agent rename to an invalid name",
        &["agent", "rename", "w1:p3", "bad name"],
    );
    c.run("agent rename of nobody", &["agent", "rename", "ghost", "x"]);
    c.run(
        "agent rename of a plain shell",
        &["agent", "rename", "w1:p1", "shelly"],
    );
    c.run(
        "agent rename --clear of a named shell",
        &["agent", "rename", "shelly", "--clear"],
    );
    c.run(
        "agent rename --clear",
        &["agent", "rename", "helper2", "--clear"],
    );

    // --- prompt and delivery
    c.run("agent prompt", &["agent", "prompt", "worker", "hello"]);
    c.sleep("Herdr's Enter lands", 1000);
    c.step(
        "one submission",
        Step::Inbox {
            pane: "w1:p2".into(),
            any_order: false,
        },
    );
    c.step(
        "two prompts at the same moment",
        Step::Together {
            runs: vec![
                argv(&["agent", "prompt", "stranger", "X"]),
                argv(&["agent", "prompt", "stranger", "Y"]),
            ],
        },
    );
    c.sleep("Herdr's Enters land", 1000);
    c.step(
        "prompts inside Herdr's submit window join one submission",
        Step::Inbox {
            pane: "w2:p1".into(),
            any_order: true,
        },
    );
    c.run(
        "agent prompt by pane id to an unnamed agent",
        &["agent", "prompt", "w1:p3", "to the unnamed"],
    );
    c.sleep("Herdr's Enter lands", 1000);
    c.step(
        "delivered to the unnamed agent",
        Step::Inbox {
            pane: "w1:p3".into(),
            any_order: false,
        },
    );
    c.run("agent prompt of nobody", &["agent", "prompt", "ghost", "x"]);
    c.run(
        "agent prompt, empty text",
        &["agent", "prompt", "worker", ""],
    );
    c.run(
        "agent prompt to a plain shell",
        &["agent", "prompt", "w1:p1", "x"],
    );
    c.run(
        "agent prompt --wait without --until",
        &[
            "agent",
            "prompt",
            "worker",
            "waited",
            "--wait",
            "--timeout",
            "1000",
        ],
    );
    c.sleep("Herdr's Enter lands", 1000);

    // --- agent start errors
    c.run(
        "agent start: name taken",
        &[
            "agent", "start", "worker", "--kind", "pi", "--pane", "w1:p4", "--",
        ],
    );
    c.run(
        "agent start: invalid name",
        &[
            "agent", "start", "bad name", "--kind", "pi", "--pane", "w1:p4", "--",
        ],
    );
    c.run(
        "agent start: missing pane",
        &[
            "agent", "start", "nova", "--kind", "pi", "--pane", "w1:p9", "--",
        ],
    );
    c.timed(
        "agent start on an agent's pane: busy, at once",
        &[
            "agent", "start", "nova", "--kind", "pi", "--pane", "w1:p2", "--",
        ],
    );
    c.run(
        "agent start: timeout too small",
        &[
            "agent",
            "start",
            "nova",
            "--kind",
            "pi",
            "--pane",
            "w1:p4",
            "--timeout",
            "3000",
            "--",
        ],
    );
    c.run(
        "agent start: control character in an argument",
        &[
            "agent", "start", "nova", "--kind", "pi", "--pane", "w1:p4", "--", "a\u{1}b",
        ],
    );
    c.run(
        "agent start: unknown kind",
        &[
            "agent", "start", "nova", "--kind", "nosuch", "--pane", "w1:p4", "--",
        ],
    );
    for kind in [
        "kimi code",
        "devin cli",
        "mastra code",
        "kilo code",
        "Kimi-Code",
        "PI.exe",
        "qwen",
        "qwen-code",
        "qwen code",
    ] {
        c.run(
            "agent start: kind aliases (the pane is missing, so nothing starts)",
            &[
                "agent", "start", "nova", "--kind", kind, "--pane", "w1:p9", "--",
            ],
        );
    }
    c.run(
        "agent start: missing --kind",
        &["agent", "start", "nova", "--pane", "w1:p4"],
    );
    c.run(
        "agent start: missing --pane",
        &["agent", "start", "nova", "--kind", "pi"],
    );

    // --- pane split forms and errors
    c.run(
        "pane split --current",
        &[
            "pane",
            "split",
            "--current",
            "--direction",
            "down",
            "--no-focus",
        ],
    );
    c.pane(
        "pane split --current with HERDR_PANE_ID",
        &[
            "pane",
            "split",
            "--current",
            "--direction",
            "down",
            "--no-focus",
        ],
        "w1:p4",
    );
    c.run(
        "pane split --right-click pane",
        &[
            "pane",
            "split",
            "w1:p4",
            "--direction",
            "right",
            "--right-click",
            "pane",
            "--no-focus",
        ],
    );
    c.run(
        "pane split --right-click=herdr",
        &[
            "pane",
            "split",
            "w1:p4",
            "--direction",
            "right",
            "--right-click=herdr",
            "--no-focus",
        ],
    );
    c.run(
        "pane split --right-click bad",
        &[
            "pane",
            "split",
            "w1:p4",
            "--direction",
            "right",
            "--right-click",
            "bad",
        ],
    );
    c.run(
        "pane split: bad direction",
        &["pane", "split", "w1:p4", "--direction", "left"],
    );
    c.run("pane split: no direction", &["pane", "split", "w1:p4"]);
    c.run(
        "pane split: bad ratio",
        &[
            "pane",
            "split",
            "w1:p4",
            "--direction",
            "down",
            "--ratio",
            "x",
        ],
    );
    c.run(
        "pane split: unknown option",
        &["pane", "split", "w1:p4", "--direction", "down", "--bogus"],
    );
    c.run(
        "pane split of a missing pane",
        &[
            "pane",
            "split",
            "w9:p1",
            "--direction",
            "down",
            "--no-focus",
        ],
    );
    c.run(
        "pane list after the splits",
        &["pane", "list", "--workspace", "w1"],
    );

    // --- a new pane's shell: agent start right after the split (0.8.2 retries while it starts)
    c.run(
        "pane split for a start",
        &[
            "pane",
            "split",
            "w2:p1",
            "--direction",
            "right",
            "--cwd",
            "$ROOT/beta",
            "--no-focus",
        ],
    );
    // On 0.8.0 a start while the shell still starts is a race with the shell (busy or not),
    // so it waits for the shell first; 0.8.2 retries while the shell starts, so it succeeds.
    if !v082 {
        c.sleep("the shell starts", 1500);
    }
    c.timed(
        "agent start on the new pane",
        &[
            "agent", "start", "fresh", "--kind", "pi", "--pane", "w2:p2", "--",
        ],
    );
    c.wait(
        "fresh idle",
        &["agent", "get", "fresh"],
        "/result/agent/agent_status",
        json!("idle"),
    );

    // --- close
    c.run("pane close of an agent", &["pane", "close", "w2:p2"]);
    c.run("pane close of a missing pane", &["pane", "close", "w2:p2"]);
    c.run("agent get of a closed agent", &["agent", "get", "fresh"]);
    c.run(
        "tab create for a close",
        &["tab", "create", "--workspace", "w2", "--no-focus"],
    );
    c.run("tab close", &["tab", "close", "w2:t2"]);
    c.run("tab close of a missing tab", &["tab", "close", "w2:t2"]);

    // --- usage errors and help
    c.run("no command", &["agent"]);
    c.run("unknown agent verb", &["agent", "bogus"]);
    c.run("agent get without a target", &["agent", "get"]);
    c.run("agent prompt without text", &["agent", "prompt", "worker"]);
    c.run("agent list with an argument", &["agent", "list", "extra"]);
    c.run("pane get without an id", &["pane", "get"]);
    c.run("pane close without an id", &["pane", "close"]);
    c.run("tab create: unknown option", &["tab", "create", "--bogus"]);

    // --- the end state
    c.run("agent list at the end", &["agent", "list"]);

    // --- no server: every command Link runs meets `server_not_running` (after its command line
    // parsed: usage errors and an unknown kind come first; `--version` needs no server)
    c.step("the server stops", Step::ServerStop);
    for (note, words) in [
        ("no server: agent get", &["agent", "get", "worker"][..]),
        ("no server: agent list", &["agent", "list"]),
        (
            "no server: agent prompt",
            &["agent", "prompt", "worker", "hello"],
        ),
        (
            "no server: agent rename",
            &["agent", "rename", "w1:p3", "nova"],
        ),
        (
            "no server: agent start",
            &[
                "agent", "start", "nova", "--kind", "pi", "--pane", "w1:p4", "--",
            ],
        ),
        ("no server: pane get", &["pane", "get", "w1:p1"]),
        (
            "no server: pane list",
            &["pane", "list", "--workspace", "w1"],
        ),
        (
            "no server: pane split",
            &[
                "pane",
                "split",
                "w1:p4",
                "--direction",
                "right",
                "--cwd",
                "$ROOT/alpha",
                "--no-focus",
            ],
        ),
        ("no server: pane close", &["pane", "close", "w1:p4"]),
        (
            "no server: tab create",
            &[
                "tab",
                "create",
                "--workspace",
                "w1",
                "--cwd",
                "$ROOT/alpha",
                "--label",
                "side",
                "--no-focus",
            ],
        ),
        ("no server: tab close", &["tab", "close", "w1:t2"]),
        (
            "no server: a named session",
            &["--session", "work", "agent", "list"],
        ),
        (
            "no server: an unknown kind is refused first",
            &[
                "agent", "start", "nova", "--kind", "nosuch", "--pane", "w1:p4", "--",
            ],
        ),
        ("no server: a usage error comes first", &["agent", "get"]),
        ("no server: --version", &["--version"]),
    ] {
        c.run(note, words);
    }
    c.0
}

/// The corpus being built.
struct Corpus(Vec<(String, Step)>);

impl Corpus {
    fn step(&mut self, note: &str, step: Step) {
        self.0.push((note.to_string(), step));
    }
    fn run(&mut self, note: &str, words: &[&str]) {
        self.step(
            note,
            Step::Run {
                argv: argv(words),
                pane: None,
                timed: false,
            },
        );
    }
    fn timed(&mut self, note: &str, words: &[&str]) {
        self.step(
            note,
            Step::Run {
                argv: argv(words),
                pane: None,
                timed: true,
            },
        );
    }
    fn pane(&mut self, note: &str, words: &[&str], pane: &str) {
        self.step(
            note,
            Step::Run {
                argv: argv(words),
                pane: Some(pane.into()),
                timed: false,
            },
        );
    }
    fn sleep(&mut self, note: &str, ms: u64) {
        self.step(note, Step::Sleep { ms });
    }
    fn wait(&mut self, note: &str, words: &[&str], path: &str, is: Value) {
        self.step(
            note,
            Step::Wait {
                argv: argv(words),
                path: path.into(),
                is,
                limit_ms: 15_000,
            },
        );
    }
}

/// Reads a transcript.
pub fn read(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (record it: scripts/record-herdr.sh)",
            path.display()
        )
    });
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("transcript line is JSON"))
        .collect()
}

/// One transcript line, keys sorted at every level, as written.
pub fn line(spec: Map<String, Value>, out: Value) -> String {
    let mut m = spec;
    m.insert("out".into(), out);
    serde_json::to_string(&sorted(&Value::Object(m))).unwrap()
}

fn sorted(v: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        Value::Object(m) => {
            let b: BTreeMap<&String, Value> = m.iter().map(|(k, x)| (k, sorted(x))).collect();
            let mut out = Map::new();
            for (k, x) in b {
                out.insert(k.clone(), x);
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}
