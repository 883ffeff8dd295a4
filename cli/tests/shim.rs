//! `herdr-link` run as `herdr` (the exec-boundary guard, docs/guard.md "The exec boundary"):
//! transparency, no recursion, a missing real Herdr, and refusals decided by the live holder of
//! activation among the shim's ancestors.
//!
//! The test process itself is an ancestor of every shim it starts, so it plays the host: it
//! answers for itself over the presence socket (switched between active and dormant), or it
//! starts `herdr-link mcp` as a child that answers for it once activated (the MCP route). Tests
//! that depend on who answers hold one lock.

#[path = "mcp/harness.rs"]
mod harness;

use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use harness::{link_bin, Server, World, WORLD};
use herdr_link::guard::Verdict;
use herdr_link::presence::{self, HostKey};
use serde_json::json;

/// Exit status of a refused wait (documented in docs/guard.md).
const REFUSED: i32 = 77;

/// The stand-in real Herdr: records its arguments (NUL-separated) in `$SHIM_TEST_OUT`, copies
/// stdin to stdout, then exits with `$SHIM_TEST_EXIT` or kills itself with `$SHIM_TEST_SIGNAL`.
const REAL: &str = r#"#!/bin/sh
[ -n "$SHIM_TEST_OUT" ] && printf '%s\0' "$@" > "$SHIM_TEST_OUT"
cat
[ -n "$SHIM_TEST_SIGNAL" ] && kill -"$SHIM_TEST_SIGNAL" $$
exit "${SHIM_TEST_EXIT:-0}"
"#;

/// A temp dir with `shim/herdr` (a symlink to the binary under test) and `real/herdr`.
struct Dirs {
    root: PathBuf,
    shim: PathBuf,
    real: PathBuf,
}

impl Dirs {
    fn new(tag: &str) -> Dirs {
        let root =
            std::env::temp_dir().join(format!("herdr-link-shim-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let shim = root.join("shim");
        let real = root.join("real");
        std::fs::create_dir_all(&shim).unwrap();
        std::fs::create_dir_all(&real).unwrap();
        std::os::unix::fs::symlink(link_bin(), shim.join("herdr")).unwrap();
        write_exec(&real.join("herdr"), REAL);
        Dirs { root, shim, real }
    }

    fn out(&self) -> PathBuf {
        self.root.join("argv.out")
    }

    /// PATH: the given directories, then the system's.
    fn path(&self, dirs: &[&Path]) -> String {
        let mut parts: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        parts.push("/usr/local/bin:/usr/bin:/bin".into());
        parts.join(":")
    }

    /// `herdr ARGS` resolved through `path`, with `stdin`.
    fn herdr(&self, path: &str, args: &[&OsStr], stdin: &[u8], env: &[(&str, &str)]) -> Output {
        let _ = std::fs::remove_file(self.out());
        let mut cmd = Command::new("herdr");
        cmd.args(args)
            .env_clear()
            .env("PATH", path)
            .env("SHIM_TEST_OUT", self.out())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        // Command resolves "herdr" through the child's PATH, as execvp does.
        let mut child = cmd.spawn().unwrap();
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        child.wait_with_output().unwrap()
    }

    /// The arguments the stand-in real Herdr received (`None`: it never ran).
    fn received(&self) -> Option<Vec<Vec<u8>>> {
        let bytes = std::fs::read(self.out()).ok()?;
        Some(
            bytes
                .split(|&b| b == 0)
                .map(<[u8]>::to_vec)
                .collect::<Vec<_>>()
                .split_last()
                .map(|(_, rest)| rest.to_vec())
                .unwrap_or_default(),
        )
    }
}

impl Drop for Dirs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn write_exec(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn os(args: &[&str]) -> Vec<&'static OsStr> {
    args.iter()
        .map(|a| OsStr::new(Box::leak(a.to_string().into_boxed_str())))
        .collect()
}

/// The test process answering for itself; dormant unless a test switches it on.
fn self_holder() -> &'static AtomicBool {
    static ON: OnceLock<(Arc<AtomicBool>, presence::Beacon)> = OnceLock::new();
    let (on, _) = ON.get_or_init(|| {
        let on = Arc::new(AtomicBool::new(false));
        let flag = on.clone();
        let beacon = presence::announce(
            HostKey::of_self().unwrap(),
            Arc::new(move |q| presence::answer_for(flag.load(Ordering::SeqCst), None, q)),
        )
        .unwrap();
        (on, beacon)
    });
    on
}

/// Serializes the tests that depend on who answers, and leaves the self holder dormant.
fn holder_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    self_holder().store(false, Ordering::SeqCst);
    guard
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn dormant_calls_are_transparent() {
    let _l = holder_lock();
    let d = Dirs::new("transparent");
    let path = d.path(&[&d.shim, &d.real]);
    let args = [
        "agent",
        "prompt",
        "beta",
        "two  words",
        "line\nbreak",
        "",
        "--",
        "--wait",
        "tab\there",
    ];
    let o = d.herdr(&path, &os(&args), b"from stdin\n", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(o.stdout, b"from stdin\n", "stdin and stdout pass through");
    assert_eq!(o.stderr, b"");
    let want: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
    assert_eq!(d.received(), Some(want));

    // A wait while dormant reaches Herdr.
    let o = d.herdr(&path, &os(&["agent", "wait", "beta"]), b"", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        d.received(),
        Some(vec![b"agent".to_vec(), b"wait".to_vec(), b"beta".to_vec()])
    );

    // Bytes that are not UTF-8 pass unchanged.
    let odd = OsStr::from_bytes(b"\xff\xfe-x");
    let o = d.herdr(&path, &[OsStr::new("agent"), odd], b"", &[]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        d.received(),
        Some(vec![b"agent".to_vec(), b"\xff\xfe-x".to_vec()])
    );
}

#[test]
fn exit_status_and_signals_are_herdrs() {
    let d = Dirs::new("status");
    let path = d.path(&[&d.shim, &d.real]);
    for code in ["0", "1", "2", "42", "77"] {
        let o = d.herdr(
            &path,
            &os(&["agent", "list"]),
            b"",
            &[("SHIM_TEST_EXIT", code)],
        );
        assert_eq!(o.status.code(), Some(code.parse().unwrap()));
    }
    for (name, number) in [
        ("TERM", libc::SIGTERM),
        ("KILL", libc::SIGKILL),
        ("INT", libc::SIGINT),
    ] {
        let o = d.herdr(
            &path,
            &os(&["agent", "list"]),
            b"",
            &[("SHIM_TEST_SIGNAL", name)],
        );
        assert_eq!(
            o.status.signal(),
            Some(number),
            "killed by SIG{name}: {:?}",
            o.status
        );
    }
    // The shim is replaced, not a parent: a signal sent to the pid the caller started reaches
    // Herdr itself.
    let mut child = Command::new("herdr")
        .args(["agent", "list"])
        .env_clear()
        .env("PATH", &path)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap();
        if exe != link_bin().canonicalize().unwrap() {
            break; // exec'd: now the shell running the stand-in
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the shim never exec'd"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGTERM));
}

#[test]
fn never_runs_itself() {
    let d = Dirs::new("recursion");
    // The shim directory twice, a second link to the binary (hard link and symlink under other
    // directories), and HERDR_BIN_PATH naming the shim: the real Herdr is still found.
    let twin = d.root.join("twin");
    std::fs::create_dir_all(&twin).unwrap();
    let hard = d.root.join("hard");
    std::fs::create_dir_all(&hard).unwrap();
    let linked = std::fs::hard_link(link_bin(), hard.join("herdr")).is_ok();
    std::os::unix::fs::symlink(d.shim.join("herdr"), twin.join("herdr")).unwrap();
    let shim_path = d.shim.join("herdr").display().to_string();
    let mut dirs: Vec<&Path> = vec![&d.shim, &twin, &d.shim];
    if linked {
        dirs.push(&hard);
    }
    dirs.push(&d.real);
    let path = d.path(&dirs);
    let o = d.herdr(
        &path,
        &os(&["agent", "list"]),
        b"",
        &[("HERDR_BIN_PATH", &shim_path)],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        d.received(),
        Some(vec![b"agent".to_vec(), b"list".to_vec()])
    );

    // A real Herdr before the shim on PATH is not "after" it, but the shim started by full path
    // (not found on PATH) takes the first real one.
    let o = Command::new(d.shim.join("herdr"))
        .args(["agent", "list"])
        .env_clear()
        .env("PATH", d.path(&[&d.real]))
        .env("SHIM_TEST_OUT", d.out())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    // Only shims on PATH: 127 and one line, no loop.
    let only: Vec<&Path> = vec![&d.shim, &twin, &d.shim];
    let o = Command::new("herdr")
        .args(["agent", "list"])
        .env_clear()
        .env(
            "PATH",
            only.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(":"),
        )
        .env("HERDR_BIN_PATH", &shim_path)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(127));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no real Herdr found"), "{err}");
}

#[test]
fn missing_real_herdr_is_127() {
    let d = Dirs::new("missing");
    let path = d.path(&[&d.shim]);
    let o = d.herdr(&path, &os(&["agent", "list"]), b"", &[]);
    assert_eq!(o.status.code(), Some(127));
    assert_eq!(
        stderr(&o),
        "herdr: no real Herdr found on PATH after the herdr-link shim (install Herdr or fix PATH)\n"
    );
    // A `herdr` that is not executable does not count.
    let plain = d.root.join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    std::fs::write(plain.join("herdr"), REAL).unwrap();
    let o = d.herdr(
        &d.path(&[&d.shim, &plain]),
        &os(&["agent", "list"]),
        b"",
        &[],
    );
    assert_eq!(o.status.code(), Some(127));
}

/// Every way of asking for a wait, and what the shim answers while active.
#[test]
fn active_waits_are_refused_and_everything_else_runs() {
    let _l = holder_lock();
    let d = Dirs::new("active");
    let path = d.path(&[&d.shim, &d.real]);
    self_holder().store(true, Ordering::SeqCst);
    let end_turn = format!("{}\n", Verdict::BlockEndTurn.reason().unwrap());
    let block = format!("{}\n", Verdict::Block.reason().unwrap());
    for (args, reason) in [
        (&["agent", "wait", "beta"][..], &end_turn),
        (&["--session", "s", "agent", "wait", "beta"], &end_turn),
        (
            &["--session=s", "--handoff", "agent", "wait", "beta"],
            &end_turn,
        ),
        (&["agent", "--session", "s", "wait", "beta"], &end_turn),
        (&["agent", "prompt", "beta", "hi", "--wait"], &block),
        (
            &["agent", "prompt", "beta", "hi", "--until", "idle"],
            &block,
        ),
        (&["agent", "prompt", "beta", "hi", "--timeout", "5"], &block),
    ] {
        let o = d.herdr(&path, &os(args), b"", &[]);
        assert_eq!(o.status.code(), Some(REFUSED), "{args:?}: {}", stderr(&o));
        assert_eq!(&stderr(&o), reason, "{args:?}");
        assert_eq!(o.stdout, b"");
        assert_eq!(d.received(), None, "{args:?} reached Herdr");
    }
    for args in [
        &["agent", "list"][..],
        &["agent", "prompt", "beta", "fix it", "--", "--wait"],
        &["agent", "prompt", "beta", "--wait"],
        &["--", "agent", "wait", "beta"],
        &["pane", "run", "w1:p1", "herdr agent wait beta"],
        &["agent", "wait-for", "x"],
    ] {
        let o = d.herdr(&path, &os(args), b"", &[]);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        let want: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
        assert_eq!(d.received(), Some(want), "{args:?}");
    }
    self_holder().store(false, Ordering::SeqCst);
    let o = d.herdr(&path, &os(&["agent", "wait", "beta"]), b"", &[]);
    assert_eq!(o.status.code(), Some(0), "dormant again: {}", stderr(&o));
}

/// The programs the text guard cannot follow (python, make, a script, env, flock) all end in an
/// exec of `herdr` through PATH, several processes below the host.
#[test]
fn waits_started_by_other_programs_are_refused() {
    let _l = holder_lock();
    let d = Dirs::new("programs");
    let path = d.path(&[&d.shim, &d.real]);
    std::fs::write(d.root.join("Makefile"), "all:\n\therdr agent wait beta\n").unwrap();
    write_exec(
        &d.root.join("wait.sh"),
        "#!/bin/sh\nexec herdr agent wait \"$1\"\n",
    );
    let programs: &[&[&str]] = &[
        &["python3", "-c", "import subprocess,sys; sys.exit(subprocess.run(['herdr','agent','wait','beta']).returncode)"],
        &["make", "-s", "-C", d.root.to_str().unwrap()],
        &["sh", "-c", "cd \"$0\" && ./wait.sh beta", d.root.to_str().unwrap()],
        &["env", "herdr", "agent", "wait", "beta"],
        &["bash", "-c", "x=$(herdr agent wait beta); exit $?"],
    ];
    let run = |argv: &[&str]| {
        let _ = std::fs::remove_file(d.out());
        Command::new(argv[0])
            .args(&argv[1..])
            .env("PATH", &path)
            .env("SHIM_TEST_OUT", d.out())
            .env_remove("CLAUDE_CODE_SESSION_ID")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    self_holder().store(true, Ordering::SeqCst);
    for argv in programs {
        let o = run(argv);
        assert_ne!(o.status.code(), Some(0), "{argv:?} ran");
        assert!(
            stderr(&o).contains("Blocked by Herdr Link"),
            "{argv:?}: {}",
            stderr(&o)
        );
        assert_eq!(d.received(), None, "{argv:?} reached Herdr");
    }
    self_holder().store(false, Ordering::SeqCst);
    for argv in programs {
        let o = run(argv);
        assert_eq!(o.status.code(), Some(0), "{argv:?} dormant: {}", stderr(&o));
        assert!(
            d.received().is_some(),
            "{argv:?} dormant never reached Herdr"
        );
    }
}

/// The MCP route: `herdr-link mcp` (a child of this process, its host) answers once activated;
/// Claude Code's session id is compared; a server that is gone answers nothing (dormant).
#[test]
fn mcp_server_answers_for_its_host_until_it_is_gone() {
    let _l = holder_lock();
    let d = Dirs::new("mcp");
    let world = World::new(WORLD);
    let path = d.path(&[&d.shim, &d.real]);
    let mut env = world.inside();
    env.push(("CLAUDE_CODE_SESSION_ID".into(), "claude-s1".into()));
    let mut server = Server::start(&env, &[], None);
    server.handshake();
    let wait = os(&["agent", "wait", "beta"]);
    let o = d.herdr(&path, &wait, b"", &[]);
    assert_eq!(o.status.code(), Some(0), "dormant server: {}", stderr(&o));
    server.call(2, "herdr_link", json!({}));
    let o = d.herdr(&path, &wait, b"", &[]);
    assert_eq!(
        o.status.code(),
        Some(REFUSED),
        "active server: {}",
        stderr(&o)
    );
    let o = d.herdr(
        &path,
        &wait,
        b"",
        &[("CLAUDE_CODE_SESSION_ID", "claude-s1")],
    );
    assert_eq!(o.status.code(), Some(REFUSED), "same Claude Code session");
    let o = d.herdr(
        &path,
        &wait,
        b"",
        &[("CLAUDE_CODE_SESSION_ID", "claude-other")],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "another Claude Code session: {}",
        stderr(&o)
    );
    // The server dies without a goodbye: nobody answers any more.
    server.kill();
    let o = d.herdr(&path, &wait, b"", &[]);
    assert_eq!(o.status.code(), Some(0), "dead server: {}", stderr(&o));
    assert!(d.received().is_some());
}

/// `$HERDR_BIN_PATH` naming the shim: the library's own Herdr calls (never waits) pass straight
/// through to the real Herdr, also while the session is active.
#[test]
fn library_calls_through_a_shim_named_by_herdr_bin_path_reach_herdr() {
    let _l = holder_lock();
    let d = Dirs::new("binpath");
    let world = World::new(WORLD);
    let real = d.root.join("fake");
    std::fs::create_dir_all(&real).unwrap();
    std::os::unix::fs::symlink(harness::fake_bin(), real.join("herdr")).unwrap();
    let mut env: Vec<(String, String)> = world
        .inside()
        .into_iter()
        .filter(|(k, _)| k != "HERDR_BIN_PATH")
        .collect();
    env.push((
        "HERDR_BIN_PATH".into(),
        d.shim.join("herdr").display().to_string(),
    ));
    env.push(("PATH".into(), d.path(&[&d.shim, &real])));
    let mut server = Server::start(&env, &[], None);
    server.handshake();
    server.call(2, "herdr_link", json!({}));
    let answer = server.call(3, "herdr_link", json!({"action": "peers"}));
    let peers = harness::tool_json(answer.last().unwrap());
    assert!(peers.to_string().contains("worker"), "{peers}");
    let argv = world.argv();
    assert!(
        argv.iter().any(|a| a == &["agent", "list"]),
        "the real Herdr ran agent list: {argv:?}"
    );
}
