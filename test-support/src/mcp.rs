//! For tests that run Link in child processes (cli/tests/*.rs and the binary's benchmarks): a
//! fake Herdr world in a temp dir, whose variables are given to each child (never set in the
//! test process), and `herdr-link mcp` spoken to in raw JSON-RPC lines.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The `herdr-link` binary under test, beside the running test in the same target directory
/// (cargo builds a package's binaries before its integration tests).
pub fn link_bin() -> PathBuf {
    // The operator log is on by default, in the XDG state directory: every binary a test
    // starts keeps it in a scratch directory (a World's, or this process's), never the user's.
    let tmp = std::env::temp_dir();
    if !std::env::var_os("XDG_STATE_HOME").is_some_and(|d| PathBuf::from(d).starts_with(&tmp)) {
        std::env::set_var(
            "XDG_STATE_HOME",
            tmp.join(format!("herdr-link-test-state-{}", std::process::id())),
        );
    }
    let bin = crate::target_dir().join("herdr-link");
    assert!(
        bin.is_file(),
        "herdr-link not found at {}: build it first (cargo build -p herdr-link-cli)",
        bin.display()
    );
    bin
}

/// The fake Herdr, next to the binary under test (`<target>/<profile>/herdr`).
pub fn fake_bin() -> PathBuf {
    let bin = link_bin().with_file_name("herdr");
    assert!(
        bin.is_file(),
        "fake Herdr not found at {}: build it first with `cargo build -p fake-herdr` (same target dir and profile)",
        bin.display()
    );
    bin
}

/// Two agents (brain = the caller, worker) in w1, and a stranger in w2.
pub const WORLD: &str = r#"{"workspaces":[
 {"cwd":"/p","tabs":[{"panes":[
   {"cwd":"/p","agent":"pi","name":"brain","status":"idle"},
   {"cwd":"/p","agent":"pi","name":"worker","status":"working"}]}]},
 {"cwd":"/q","tabs":[{"panes":[{"cwd":"/q","agent":"pi","name":"stranger"}]}]}]}"#;

/// A fake Herdr state in its own temp dir (removed on drop).
pub struct World {
    /// The temp dir.
    pub dir: PathBuf,
    /// `$HERDR_FAKE_STATE`.
    pub state: PathBuf,
}

impl World {
    /// A world built from `spec` (see fake-herdr/README.md).
    pub fn new(spec: &str) -> World {
        let dir = std::env::temp_dir().join(format!(
            "herdr-link-mcp-{}-{}",
            std::process::id(),
            rand_suffix()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let world = World {
            state: dir.join("state.json"),
            dir,
        };
        let mut child = Command::new(fake_bin())
            .args(["fake", "world"])
            .env("HERDR_FAKE_STATE", &world.state)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(spec.as_bytes())
            .unwrap();
        assert!(child.wait().unwrap().success(), "herdr fake world failed");
        world
    }

    /// Runs `herdr fake <args>`.
    pub fn fake(&self, args: &[&str]) {
        let ok = Command::new(fake_bin())
            .arg("fake")
            .args(args)
            .env("HERDR_FAKE_STATE", &self.state)
            .stdout(Stdio::null())
            .status()
            .unwrap()
            .success();
        assert!(ok, "herdr fake {args:?} failed");
    }

    /// Environment of a process in pane w1:p1 (brain), gate open.
    pub fn inside(&self) -> Vec<(String, String)> {
        vec![
            ("HERDR_FAKE_STATE".into(), self.state.display().to_string()),
            ("HERDR_ENV".into(), "1".into()),
            ("HERDR_BIN_PATH".into(), fake_bin().display().to_string()),
            ("HERDR_PANE_ID".into(), "w1:p1".into()),
        ]
    }

    /// The argv of every Herdr call made so far.
    pub fn argv(&self) -> Vec<Vec<String>> {
        crate::world::argv_log_of(&self.state)
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    t ^ (N.fetch_add(1, Ordering::Relaxed) << 48)
}

const HERDR_VARS: [&str; 4] = [
    "HERDR_ENV",
    "HERDR_BIN_PATH",
    "HERDR_PANE_ID",
    "HERDR_SOCKET_PATH",
];

/// A `herdr-link mcp` process spoken to in raw lines.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Every frame read so far, in order.
    pub frames: Vec<Value>,
}

impl Server {
    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Starts `herdr-link mcp <args>` with the Herdr variables cleared, then `env` set.
    pub fn start(env: &[(String, String)], args: &[&str], cwd: Option<&Path>) -> Server {
        Server::start_bin(&link_bin(), env, args, cwd)
    }

    /// [`Server::start`] with another `herdr-link` binary.
    pub fn start_bin(
        bin: &Path,
        env: &[(String, String)],
        args: &[&str],
        cwd: Option<&Path>,
    ) -> Server {
        let mut cmd = Command::new(bin);
        cmd.arg("mcp").args(args);
        for k in HERDR_VARS {
            cmd.env_remove(k);
        }
        cmd.env_remove("HERDR_LINK_LOG");
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
        if let Some(d) = cwd {
            cmd.current_dir(d);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn herdr-link mcp");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Server {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            frames: Vec::new(),
        }
    }

    /// Writes one raw line (a `\n` is added).
    pub fn raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Writes bytes as they are (no newline added).
    pub fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Writes one message.
    pub fn send(&mut self, v: &Value) {
        self.raw(&v.to_string());
    }

    /// The next frame, or `None` after `limit`.
    pub fn next(&mut self, limit: Duration) -> Option<Value> {
        match self.lines.recv_timeout(limit) {
            Ok(line) => {
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout carried a non-JSON line {line:?}: {e}"));
                self.frames.push(v.clone());
                Some(v)
            }
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Reads frames until one answers `id`; returns the frames read (the answer last).
    pub fn until_id(&mut self, id: &Value) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut got = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let f = self
                .next(left)
                .unwrap_or_else(|| panic!("no answer to id {id} (got {got:?})"));
            let done = f.get("id") == Some(id) && f.get("method").is_none();
            got.push(f);
            if done {
                return got;
            }
        }
    }

    /// Sends a request and returns the frames up to and including its answer.
    pub fn request(&mut self, id: i64, method: &str, params: Value) -> Vec<Value> {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.until_id(&json!(id))
    }

    /// Sends a request and returns only its answer.
    pub fn ask(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.request(id, method, params).pop().unwrap()
    }

    /// `initialize` plus `notifications/initialized`; returns the initialize result.
    pub fn handshake(&mut self) -> Value {
        self.handshake_as("raw-test")
    }

    /// [`Self::handshake`] with `client` as the client name (`clientInfo.name`).
    pub fn handshake_as(&mut self, client: &str) -> Value {
        let r = self.ask(
            0,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": client, "version": "0"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        r["result"].clone()
    }

    /// The listed tool names.
    pub fn tool_names(&mut self, id: i64) -> Vec<String> {
        let r = self.ask(id, "tools/list", json!({}));
        r["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("bad tools/list answer {r}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    }

    /// `tools/call`; returns the frames up to and including the answer.
    pub fn call(&mut self, id: i64, name: &str, args: Value) -> Vec<Value> {
        self.request(id, "tools/call", json!({"name": name, "arguments": args}))
    }

    /// How many `notifications/tools/list_changed` were read so far.
    pub fn list_changed(&self) -> usize {
        self.frames
            .iter()
            .filter(|f| f["method"] == "notifications/tools/list_changed")
            .count()
    }

    /// Closes stdin and waits (bounded) for the exit status; also returns any frames still
    /// written after EOF.
    pub fn eof(mut self) -> (ExitStatus, Vec<Value>) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut rest = Vec::new();
        while let Some(f) = self.next(Duration::from_millis(50)) {
            rest.push(f);
        }
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                while let Some(f) = self.next(Duration::from_millis(50)) {
                    rest.push(f);
                }
                return (status, rest);
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("herdr-link mcp did not exit at EOF");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Server {
    /// Kills the server (SIGKILL: no goodbye of any kind) and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The text of a tools/call result and whether it is an error result.
pub fn tool_text(answer: &Value) -> (String, bool) {
    let result = &answer["result"];
    assert!(result.is_object(), "not a result: {answer}");
    let text = result["content"][0]["text"].as_str().unwrap().to_string();
    (text, result.get("isError") == Some(&Value::Bool(true)))
}

/// The JSON value inside a successful tools/call result.
pub fn tool_json(answer: &Value) -> Value {
    let (text, err) = tool_text(answer);
    assert!(!err, "tool call failed: {text}");
    assert!(
        answer["result"].get("isError").is_none(),
        "a success carries no isError key: {answer}"
    );
    serde_json::from_str(&text).unwrap()
}
