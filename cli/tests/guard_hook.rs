//! `herdr-link guard` as a pre-tool hook, with the activation shared by `herdr-link mcp`.
//!
//! Each case runs a fake host (tests/hooks/fake_host.py, a python3 process standing in for
//! Claude Code or Codex) that starts `herdr-link mcp` as its child and runs the hook as its
//! child (Codex) or through `sh -c` (Claude Code). Needs python3 and the fake Herdr built next
//! to the binary (`cargo build -p fake-herdr`).

use test_support::mcp as harness;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use harness::{World, WORLD};
use herdr_link::guard::Verdict;
use serde_json::{json, Value};

fn end_turn() -> String {
    format!("{}\n", Verdict::BlockEndTurn.reason().unwrap())
}

/// Verdict 1's reason as the hook of `host` words it: Codex and Qwen Code have only the
/// gateway's send action.
fn block(host: &str) -> String {
    let form = match host {
        "codex" | "qwen" => herdr_link::guard::SendForm::GatewayAction,
        _ => herdr_link::guard::SendForm::Either,
    };
    format!("{}\n", Verdict::Block.reason_for(form).unwrap())
}

/// The fake host process.
struct Host {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// Environment for the hook processes.
    hook_env: Vec<(String, String)>,
}

impl Host {
    fn start() -> Host {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/hooks/fake_host.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(harness::link_bin())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 is required for the hook tests");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
        Host {
            child,
            stdin,
            stdout,
            hook_env: vec![("PATH".into(), path)],
        }
    }

    fn ask(&mut self, cmd: Value) -> Value {
        writeln!(self.stdin, "{cmd}").unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("fake host answered {line:?} to {cmd}: {e}"));
        assert!(v.get("error").is_none(), "{v}");
        v
    }

    fn pid(&mut self) -> i32 {
        self.ask(json!({"op": "pid"}))["pid"].as_i64().unwrap() as i32
    }

    fn start_mcp(&mut self, env: &[(String, String)]) {
        let env: serde_json::Map<String, Value> = env
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        self.ask(json!({"op": "start_mcp", "env": env}));
    }

    fn activate(&mut self) {
        let r = self.ask(json!({"op": "call", "name": "herdr_link", "args": {}}));
        let text = r["result"]["result"]["content"][0]["text"]
            .as_str()
            .unwrap();
        assert!(text.contains("\"active\""), "{r}");
    }

    /// Runs the hook; returns (exit code, stdout, stderr).
    fn hook_raw(&mut self, host: &str, via: &str, input: &str) -> (i64, String, String) {
        let env: serde_json::Map<String, Value> = self
            .hook_env
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let r =
            self.ask(json!({"op": "hook", "host": host, "via": via, "input": input, "env": env}));
        (
            r["code"].as_i64().unwrap(),
            r["stdout"].as_str().unwrap().to_string(),
            r["stderr"].as_str().unwrap().to_string(),
        )
    }

    /// Runs the hook on a Bash call of `command`, in Claude Code's (`sh -c`), Gemini CLI's and
    /// Qwen Code's (`bash -c`, the same stay-put shell) or Codex's (direct) way; returns (exit
    /// code, stderr) and checks stdout stays empty.
    fn bash(&mut self, host: &str, command: &str) -> (i64, String) {
        let (input, via) = match host {
            "gemini" => (
                json!({"session_id": "g-1", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
                       "hook_event_name": "BeforeTool", "timestamp": "2026-12-01T21:45:34.120Z",
                       "tool_name": "run_shell_command",
                       "tool_input": {"command": command, "description": "d"}}),
                "sh-stay",
            ),
            "qwen" => (
                json!({"session_id": "q-1", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
                       "hook_event_name": "PreToolUse", "timestamp": "2026-12-01T21:52:26.278Z",
                       "permission_mode": "auto", "tool_name": "run_shell_command",
                       "tool_input": {"command": command, "description": "d"},
                       "tool_use_id": "toolu_1", "tool_call_id": "call_1"}),
                "sh-stay",
            ),
            "claude" => (
                json!({"session_id": "sess-1", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
                       "permission_mode": "default", "hook_event_name": "PreToolUse",
                       "tool_name": "Bash", "tool_input": {"command": command},
                       "tool_use_id": "toolu_1"}),
                "sh-stay",
            ),
            _ => (
                json!({"session_id": "s", "turn_id": "t", "transcript_path": null, "cwd": "/tmp",
                       "hook_event_name": "PreToolUse", "model": "m", "permission_mode": "default",
                       "tool_name": "Bash", "tool_input": {"command": command},
                       "tool_use_id": "call_1"}),
                "direct",
            ),
        };
        let (code, stdout, stderr) = self.hook_raw(host, via, &input.to_string());
        assert_eq!(stdout, "", "the hook never writes stdout");
        if code == 0 {
            assert_eq!(stderr, "", "an allow is silent");
        }
        (code, stderr)
    }

    fn kill_mcp(&mut self) {
        self.ask(json!({"op": "kill_mcp"}));
    }

    fn stop_mcp(&mut self) {
        let r = self.ask(json!({"op": "stop_mcp"}));
        assert_eq!(r["status"], 0);
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const WAIT: &str = "herdr agent wait beta";
const PROMPT_WAIT: &str = "herdr agent prompt beta hi --wait";

fn allowed(r: (i64, String)) -> bool {
    r == (0, String::new())
}

#[test]
fn dormant_allows_activated_blocks_and_a_dead_server_allows_again() {
    let w = World::new(WORLD);
    let mut h = Host::start();
    h.start_mcp(&w.inside());
    for host in ["claude", "codex", "gemini", "qwen"] {
        assert!(allowed(h.bash(host, WAIT)), "dormant {host}");
        assert!(allowed(h.bash(host, PROMPT_WAIT)), "dormant {host}");
    }
    h.activate();
    for host in ["claude", "codex", "gemini", "qwen"] {
        assert_eq!(h.bash(host, WAIT), (2, end_turn()), "{host}");
        assert_eq!(h.bash(host, PROMPT_WAIT), (2, block(host)), "{host}");
        assert!(allowed(h.bash(host, "ls -la && echo 'herdr agent wait x'")));
    }
    // Claude Code's shell may also exec the hook: same host either way.
    let input = json!({"session_id": "x", "tool_name": "Bash", "tool_input": {"command": WAIT}});
    let (code, _, stderr) = h.hook_raw("claude", "sh", &input.to_string());
    assert_eq!((code, stderr), (2, end_turn()));

    // A crashed server: its file stays behind, but nobody holds its lock.
    h.kill_mcp();
    assert!(allowed(h.bash("claude", WAIT)));
    assert!(allowed(h.bash("codex", WAIT)));
    // A new connection starts dormant, then activates; an exited server is dormant too.
    h.start_mcp(&w.inside());
    assert!(allowed(h.bash("claude", WAIT)));
    h.activate();
    assert_eq!(h.bash("claude", WAIT).0, 2);
    h.stop_mcp();
    assert!(allowed(h.bash("claude", WAIT)));
    assert!(
        w.argv().iter().all(|a| !a.iter().any(|x| x == "wait")),
        "{:?}",
        w.argv()
    );
}

#[test]
fn two_hosts_keep_separate_activation() {
    let w = World::new(WORLD);
    let mut a = Host::start();
    let mut b = Host::start();
    a.start_mcp(&w.inside());
    b.start_mcp(&w.inside());
    a.activate();
    assert_eq!(a.bash("claude", WAIT).0, 2);
    assert!(allowed(b.bash("claude", WAIT)));
    assert!(allowed(b.bash("codex", WAIT)));
    b.activate();
    assert_eq!(b.bash("codex", WAIT).0, 2);
    a.stop_mcp();
    assert!(allowed(a.bash("claude", WAIT)));
    assert_eq!(b.bash("claude", WAIT).0, 2);
}

#[test]
fn claude_session_id_must_match_the_servers() {
    let w = World::new(WORLD);
    let mut h = Host::start();
    let mut env = w.inside();
    env.push(("CLAUDE_CODE_SESSION_ID".into(), "sess-1".into()));
    h.start_mcp(&env);
    h.activate();
    let mk = |sid: &str| {
        json!({"session_id": sid, "tool_name": "Bash", "tool_input": {"command": WAIT}}).to_string()
    };
    assert_eq!(h.hook_raw("claude", "sh-stay", &mk("sess-1")).0, 2);
    assert_eq!(
        h.hook_raw("claude", "sh-stay", &mk("sess-2")),
        (0, String::new(), String::new())
    );
}

/// The base directory the former activation files used (the same rule as the binary's private
/// runtime directory): nothing of the activation may appear there any more.
fn base_dir() -> PathBuf {
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let run = PathBuf::from(format!("/run/user/{uid}"));
    match std::fs::symlink_metadata(&run) {
        Ok(m) if m.is_dir() && m.uid() == uid && m.mode() & 0o077 == 0 => run.join("herdr-link"),
        _ => PathBuf::from(format!("/tmp/herdr-link-{uid}")),
    }
}

fn start_time(pid: i32) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &text[text.rfind(')').unwrap() + 1..];
    rest.split_whitespace().nth(19).unwrap().parse().unwrap()
}

fn parent_of(pid: i32) -> i32 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &text[text.rfind(')').unwrap() + 1..];
    rest.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Entries of the presence directory whose names start with `prefix`.
fn listed(prefix: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(base_dir().join("presence"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with(prefix))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn activation_is_a_live_socket_of_the_server_never_a_file() {
    use std::os::unix::fs::FileTypeExt;
    let w = World::new(WORLD);
    let mut h = Host::start();
    let pid = h.pid();
    let prefix = format!("{pid}-{}.", start_time(pid));
    let host_dir = base_dir().join(format!("{pid}-{}", start_time(pid)));
    h.start_mcp(&w.inside());
    assert_eq!(
        listed(&prefix),
        Vec::<String>::new(),
        "a dormant server answers nothing"
    );
    h.activate();
    let names = listed(&prefix);
    assert_eq!(names.len(), 1, "{names:?}");
    // A socket (no content), of the server, a child of the host; the name holds no Herdr id
    // and ends in 64 random bits.
    let path = base_dir().join("presence").join(&names[0]);
    let meta = std::fs::symlink_metadata(&path).unwrap();
    assert!(meta.file_type().is_socket(), "{names:?}");
    assert_eq!(
        std::fs::symlink_metadata(path.parent().unwrap())
            .unwrap()
            .mode()
            & 0o777,
        0o700
    );
    let mut parts = names[0][prefix.len()..].split('.');
    let holder: i32 = parts.next().unwrap().parse().unwrap();
    assert_eq!(parent_of(holder), pid);
    assert_eq!(parts.next().map(str::len), Some(16));
    for id in ["w1", "p1", "brain", "HERDR"] {
        assert!(!names[0].contains(id), "{id} in {names:?}");
    }
    // That is the server's one presence socket: the library core it runs starts none of its
    // own (answering for itself, under its own pid as host, would be a second one).
    let everyone = listed("");
    let held: Vec<&String> = everyone
        .iter()
        .filter(|n| n.split('.').nth(1) == Some(holder.to_string().as_str()))
        .collect();
    assert_eq!(held, [&names[0]], "the server holds {held:?}");
    assert!(
        !host_dir.exists(),
        "activation written to {}",
        host_dir.display()
    );
    h.stop_mcp();
    assert_eq!(
        listed(&prefix),
        Vec::<String>::new(),
        "gone with the server"
    );
}

#[test]
fn bad_input_is_allowed_silently_and_logged() {
    let w = World::new(WORLD);
    let log = w.dir.join("oplog.jsonl");
    let mut h = Host::start();
    h.start_mcp(&w.inside());
    h.activate();
    h.hook_env
        .push(("HERDR_LINK_LOG".into(), log.display().to_string()));
    let inputs = [
        "",
        "{not json",
        "null",
        r#"{"tool_name":"Read","tool_input":{"file_path":"/x"}}"#,
        r#"{"tool_name":"Bash","tool_input":{}}"#,
        r#"{"tool_name":"Bash","tool_input":{"command":["herdr","agent","wait","b"]}}"#,
    ];
    for input in inputs {
        for (host, via) in [("claude", "sh-stay"), ("codex", "direct")] {
            assert_eq!(
                h.hook_raw(host, via, input),
                (0, String::new(), String::new()),
                "{host} {input:?}"
            );
        }
    }
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), inputs.len() * 2, "{lines:?}");
    for l in &lines {
        assert_eq!(l["tool"], "guard");
        assert_eq!(l["code"], "allow");
        assert!(!l["detail"].as_str().unwrap().is_empty());
    }
    // A block is logged too; an ordinary allow is not.
    assert_eq!(h.bash("codex", WAIT).0, 2);
    assert!(allowed(h.bash("codex", "ls")));
    let last: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(last.len(), lines.len() + 1);
    assert_eq!(last.last().unwrap()["code"], "block_end_turn");
}

#[test]
fn misconfigured_hook_never_blocks() {
    for args in [
        &["guard"][..],
        &["guard", "--host", "vim"],
        &["guard", "--host"],
    ] {
        let out = Command::new(harness::link_bin())
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty());
    }
}
