//! `herdr-link` run as `herdr` (the exec-boundary guard, docs/guard.md "The exec boundary"):
//! transparency, no recursion, a missing real Herdr, and refusals decided by the live holder of
//! activation among the shim's ancestors.
//!
//! The test process itself is an ancestor of every shim it starts, so it plays the host: it
//! answers for itself over the presence socket (switched between active and dormant), or it
//! starts `herdr-link mcp` as a child that answers for it once activated (the MCP route). Tests
//! that depend on who answers hold one lock.

use test_support::mcp as harness;

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
use test_support::signals;

/// Exit status of a refused wait (documented in docs/guard.md).
const REFUSED: i32 = 77;

/// The stand-in real Herdr: records its arguments (NUL-separated) in `$SHIM_TEST_OUT`; with
/// `$SHIM_TEST_SIGS` it execs `cat` on its own status there instead (the exec keeps the ignored
/// signals and the mask); else it copies stdin to stdout, then exits with `$SHIM_TEST_EXIT` or
/// kills itself with `$SHIM_TEST_SIGNAL`.
const REAL: &str = r#"#!/bin/sh
[ -n "$SHIM_TEST_OUT" ] && printf '%s\0' "$@" > "$SHIM_TEST_OUT"
[ -n "$SHIM_TEST_SIGS" ] && exec cat /proc/self/status > "$SHIM_TEST_SIGS"
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

    /// `herdr ARGS` resolved through `path`, with `stdin`, started with default signal
    /// dispositions (as from a terminal, even when this test runs in a background shell).
    fn herdr(&self, path: &str, args: &[&OsStr], stdin: &[u8], env: &[(&str, &str)]) -> Output {
        let _ = std::fs::remove_file(self.out());
        let mut cmd = Command::new("herdr");
        signals::defaults(&mut cmd);
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

/// What Herdr starts with through the shim is what it starts with when the caller runs it
/// directly: the same ignored signals (SIGPIPE included, which Rust programs ignore for
/// themselves) and the same signal mask, for callers in several states.
#[test]
fn child_starts_with_the_callers_signal_dispositions() {
    let d = Dirs::new("signals");
    let sigs = d.root.join("sigs");
    let started = |path: &str, ignored: &[i32], blocked: &[i32]| {
        let _ = std::fs::remove_file(&sigs);
        let mut cmd = Command::new("herdr");
        cmd.args(["agent", "list"])
            .env_clear()
            .env("PATH", path)
            .env("SHIM_TEST_SIGS", &sigs)
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        signals::with(&mut cmd, ignored, blocked);
        let status = cmd.status().unwrap();
        assert!(status.success(), "{status:?}");
        signals::status_masks(&std::fs::read_to_string(&sigs).unwrap())
    };
    let direct = d.path(&[&d.real]);
    let shimmed = d.path(&[&d.shim, &d.real]);
    let bit = |mask: &str, sig: i32| u64::from_str_radix(mask, 16).unwrap() >> (sig - 1) & 1 == 1;
    for (ignored, blocked) in [
        (&[][..], &[][..]),
        (&[libc::SIGINT, libc::SIGQUIT], &[]),
        (&[libc::SIGPIPE], &[]),
        (&[libc::SIGHUP, libc::SIGTERM], &[libc::SIGUSR1]),
        (&[], &[libc::SIGINT, libc::SIGUSR2]),
    ] {
        let want = started(&direct, ignored, blocked);
        let got = started(&shimmed, ignored, blocked);
        assert_eq!(
            got, want,
            "ignored {ignored:?}, blocked {blocked:?}: (SigIgn, SigBlk) through the shim vs direct"
        );
        for &s in ignored {
            assert!(bit(&want.0, s), "signal {s} should be ignored: {want:?}");
        }
        for &s in blocked {
            assert!(bit(&want.1, s), "signal {s} should be blocked: {want:?}");
        }
        if !ignored.contains(&libc::SIGPIPE) {
            assert!(
                !bit(&got.0, libc::SIGPIPE),
                "SIGPIPE ignored through the shim"
            );
        }
    }
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

/// This process's presence key (what the host wiring gives its commands).
fn own_key() -> String {
    HostKey::of_self().unwrap().to_string()
}

/// `$HERDR_BIN_PATH` naming the shim (what setup's wiring gives the host's commands) while PATH
/// holds no shim: a program that runs `$HERDR_BIN_PATH` (python, a Makefile's `$(HERDR_BIN_PATH)`)
/// is judged too, and the shim finds the real Herdr in `$HERDR_LINK_HERDR`.
#[test]
fn programs_running_herdr_bin_path_are_judged() {
    let _l = holder_lock();
    let d = Dirs::new("binpath-programs");
    let shim = d.shim.join("herdr").display().to_string();
    let real = d.real.join("herdr").display().to_string();
    std::fs::write(
        d.root.join("Makefile"),
        "HERDR ?= $(HERDR_BIN_PATH)\nall:\n\t$(HERDR) agent wait beta\nlist:\n\t$(HERDR) agent list\n",
    )
    .unwrap();
    let py = "import os,subprocess,sys; sys.exit(subprocess.run([os.environ['HERDR_BIN_PATH'],'agent','wait','beta']).returncode)";
    let programs: &[&[&str]] = &[
        &["python3", "-c", py],
        &["make", "-s", "-C", d.root.to_str().unwrap()],
        &["sh", "-c", "\"$HERDR_BIN_PATH\" agent wait beta"],
    ];
    let run = |argv: &[&str]| {
        let _ = std::fs::remove_file(d.out());
        Command::new(argv[0])
            .args(&argv[1..])
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HERDR_BIN_PATH", &shim)
            .env("HERDR_LINK_HERDR", &real)
            .env("SHIM_TEST_OUT", d.out())
            .env_remove("HERDR_LINK_PRESENCE")
            .env_remove("HERDR_LINK_SESSION")
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
    // `agent list` through $HERDR_BIN_PATH passes while active, to the real Herdr.
    let o = run(&["make", "-s", "-C", d.root.to_str().unwrap(), "list"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        d.received(),
        Some(vec![b"agent".to_vec(), b"list".to_vec()])
    );
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

/// Runs `script` (sh) that starts a `herdr agent wait beta` which leaves the caller's process
/// tree, and waits for the detached wait's exit status (`$D/rc`) and stderr (`$D/err`).
fn detached(d: &Dirs, script: &str, env: &[(&str, &str)]) -> (i32, String) {
    let rc = d.root.join("rc");
    let err = d.root.join("err");
    let _ = std::fs::remove_file(&rc);
    let _ = std::fs::remove_file(&err);
    let _ = std::fs::remove_file(d.out());
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(script)
        .env("PATH", d.path(&[&d.shim, &d.real]))
        .env("D", &d.root)
        .env("SHIM_TEST_OUT", d.out())
        .env_remove("HERDR_LINK_PRESENCE")
        .env_remove("HERDR_LINK_SESSION")
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    assert!(cmd.status().unwrap().success());
    // Hang detector only (the detached process sleeps briefly first, so its parent is gone).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(&rc) {
            if text.ends_with('\n') {
                let err = std::fs::read_to_string(&err).unwrap_or_default();
                return (text.trim().parse().unwrap(), err);
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{script}: no exit status"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The detachments the issue names: each wait runs after its parents exited (re-parented to
/// init), so only the presence key in its environment leads to the host.
const DETACHED: &[&str] = &[
    r#"setsid -f sh -c 'sleep 0.3; herdr agent wait beta 2>"$D/err"; echo $? >"$D/rc"'"#,
    r#"( sleep 0.3; herdr agent wait beta 2>"$D/err"; echo $? >"$D/rc" ) & exit 0"#,
    r#"nohup sh -c 'sleep 0.3; herdr agent wait beta 2>"$D/err"; echo $? >"$D/rc"' >/dev/null 2>&1 & exit 0"#,
    r#"python3 -c '
import os, subprocess, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(0.3)
        with open(os.environ["D"] + "/err", "w") as e:
            rc = subprocess.run(["herdr", "agent", "wait", "beta"], stderr=e).returncode
        with open(os.environ["D"] + "/rc", "w") as f:
            f.write("%d\n" % rc)
    os._exit(0)
'"#,
];

#[test]
fn detached_waits_find_their_host_through_the_presence_key() {
    let _l = holder_lock();
    let d = Dirs::new("detached");
    let key = own_key();
    self_holder().store(true, Ordering::SeqCst);
    for script in DETACHED {
        let (rc, err) = detached(&d, script, &[("HERDR_LINK_PRESENCE", &key)]);
        assert_eq!(rc, REFUSED, "{script}: {err}");
        assert!(err.contains("Blocked by Herdr Link"), "{script}: {err}");
        assert_eq!(d.received(), None, "{script} reached Herdr");
    }
    // Without the key the host is really out of reach (the process tree is gone): the wait
    // runs. This is what the key is for.
    let (rc, err) = detached(&d, DETACHED[0], &[]);
    assert_eq!(rc, 0, "{err}");
    assert!(d.received().is_some());
    // A stale or foreign key is dormant.
    let (rc, _) = detached(&d, DETACHED[0], &[("HERDR_LINK_PRESENCE", "999999-1")]);
    assert_eq!(rc, 0);
    self_holder().store(false, Ordering::SeqCst);
    for script in DETACHED {
        let (rc, err) = detached(&d, script, &[("HERDR_LINK_PRESENCE", &key)]);
        assert_eq!(rc, 0, "{script} dormant: {err}");
        assert!(
            d.received().is_some(),
            "{script} dormant never reached Herdr"
        );
    }
}

/// An in-process host's sessions (the OpenCode plugin): each session's commands carry its
/// marker, and the library answers for that session only, through the process tree or not.
#[test]
fn the_library_answers_per_session_marker() {
    let _l = holder_lock();
    let d = Dirs::new("sessions");
    let (a, b) = ("shim-test:session-a", "shim-test:session-b");
    herdr_link::session::start(a);
    herdr_link::session::start(b);
    herdr_link::session::activate(a);
    presence::serve_self(herdr_link::session::exec_answer).unwrap();
    let path = d.path(&[&d.shim, &d.real]);
    let wait = os(&["agent", "wait", "beta"]);
    let o = d.herdr(&path, &wait, b"", &[("HERDR_LINK_SESSION", a)]);
    assert_eq!(
        o.status.code(),
        Some(REFUSED),
        "the active session: {}",
        stderr(&o)
    );
    let o = d.herdr(&path, &wait, b"", &[("HERDR_LINK_SESSION", b)]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "the dormant session: {}",
        stderr(&o)
    );
    assert!(d.received().is_some());
    // No marker (a command of this process the glue did not mark): any active session counts.
    let o = d.herdr(&path, &wait, b"", &[]);
    assert_eq!(o.status.code(), Some(REFUSED), "{}", stderr(&o));
    // Detached, with only the marker: every holder is asked for that session.
    let (rc, err) = detached(&d, DETACHED[0], &[("HERDR_LINK_SESSION", a)]);
    assert_eq!(rc, REFUSED, "{err}");
    let (rc, err) = detached(&d, DETACHED[0], &[("HERDR_LINK_SESSION", b)]);
    assert_eq!(rc, 0, "{err}");
    let (rc, err) = detached(
        &d,
        DETACHED[0],
        &[("HERDR_LINK_SESSION", "another-process:s")],
    );
    assert_eq!(rc, 0, "a marker nobody holds: {err}");
    herdr_link::session::end(a);
    herdr_link::session::end(b);
    let o = d.herdr(&path, &wait, b"", &[("HERDR_LINK_SESSION", a)]);
    assert_eq!(o.status.code(), Some(0), "ended: {}", stderr(&o));
}

/// How a simulated host sandbox restricts Unix sockets (the sandbox always has its own pid
/// and mount namespaces and keeps the user's uid, like bubblewrap's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sockets {
    /// Allowed (Claude Code with `allowAllUnixSockets`), in a network namespace of its own.
    Allowed,
    /// `connect` fails with EPERM (Codex's `workspace-write` seccomp filter).
    NoConnect,
    /// `socket(AF_UNIX, …)` fails with EPERM (Claude Code's default seccomp filter).
    NoUnixSocket,
}

/// Installs a seccomp filter returning EPERM for `connect`, or for `socket(AF_UNIX, …)`.
fn deny_sockets(kind: Sockets) -> std::io::Result<()> {
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const RET_K: u16 = 0x06;
    let ins = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    let allow = libc::SECCOMP_RET_ALLOW;
    let deny = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    let prog: Vec<libc::sock_filter> = match kind {
        Sockets::Allowed => return Ok(()),
        Sockets::NoConnect => vec![
            ins(LD_W_ABS, 0, 0, 0), // nr
            ins(JEQ_K, 0, 1, libc::SYS_connect as u32),
            ins(RET_K, 0, 0, deny),
            ins(RET_K, 0, 0, allow),
        ],
        Sockets::NoUnixSocket => vec![
            ins(LD_W_ABS, 0, 0, 0),
            ins(JEQ_K, 0, 3, libc::SYS_socket as u32),
            ins(LD_W_ABS, 0, 0, 16), // args[0], low word
            ins(JEQ_K, 0, 1, libc::AF_UNIX as u32),
            ins(RET_K, 0, 0, deny),
            ins(RET_K, 0, 0, allow),
        ],
    };
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: prctl with a valid filter program that outlives the call.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &fprog as *const libc::sock_fprog,
            ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// `sh -c script` in a simulated host sandbox: its own pid, mount and (with sockets allowed)
/// network namespace, the same uid; `None` where this machine cannot make one.
fn in_sandbox(kind: Sockets, script: &str, env: &[(&str, &str)]) -> Option<Output> {
    use std::os::unix::process::CommandExt;
    let mut ns = vec!["-c", "--pid", "--fork", "--mount-proc"];
    if kind == Sockets::Allowed {
        ns.push("--net");
    }
    let probe = Command::new("unshare").args(&ns).arg("true").output();
    if !probe.is_ok_and(|o| o.status.success()) {
        return None;
    }
    let mut cmd = Command::new("unshare");
    cmd.args(&ns)
        .args(["sh", "-c", script])
        .env_remove("HERDR_LINK_SESSION")
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    // SAFETY: the closure only calls prctl (async-signal-safe).
    unsafe { cmd.pre_exec(move || deny_sockets(kind)) };
    Some(cmd.output().unwrap())
}

/// Host sandboxes: with Unix sockets allowed the shim asks its host's holder through the
/// presence directory (the holder is outside its pid and network namespaces); where the
/// sandbox forbids them, a holder of its host that exists but cannot be asked refuses the wait,
/// and no holder (a dormant host) lets it through.
#[test]
fn waits_in_host_sandboxes_are_judged_or_refused_when_unknowable() {
    let _l = holder_lock();
    let d = Dirs::new("sandbox");
    let path = d.path(&[&d.shim, &d.real]);
    // The sandbox cannot see this process as an ancestor; only the key leads here. A host of
    // its own: a live key whose holder is this process, switched on and off.
    let host = HostKey {
        pid: std::process::id() as i32,
        start: 77,
    };
    let on = Arc::new(AtomicBool::new(true));
    let flag = on.clone();
    let beacon = presence::announce(
        host,
        Arc::new(move |q| presence::answer_for(flag.load(Ordering::SeqCst), None, q)),
    )
    .unwrap();
    let script = "herdr agent wait beta; echo \"rc=$?\" >&2";
    let out = d.out().display().to_string();
    let key = host.to_string();
    let env = [
        ("PATH", path.as_str()),
        ("SHIM_TEST_OUT", out.as_str()),
        ("HERDR_LINK_PRESENCE", key.as_str()),
    ];
    let mut ran = 0;
    for kind in [Sockets::Allowed, Sockets::NoConnect, Sockets::NoUnixSocket] {
        on.store(true, Ordering::SeqCst);
        let _ = std::fs::remove_file(d.out());
        let Some(o) = in_sandbox(kind, script, &env) else {
            eprintln!("no user/pid namespaces here: sandbox {kind:?} not simulated");
            continue;
        };
        ran += 1;
        let err = stderr(&o);
        assert!(err.contains("rc=77"), "{kind:?} active: {err}");
        assert!(err.contains("Blocked by Herdr Link"), "{kind:?}: {err}");
        assert_eq!(
            err.contains("cannot tell whether Herdr Link is active"),
            kind != Sockets::Allowed,
            "{kind:?}: {err}"
        );
        assert_eq!(d.received(), None, "{kind:?} reached Herdr");
        if kind == Sockets::Allowed {
            // Asked for real: a holder that says no lets the wait through.
            on.store(false, Ordering::SeqCst);
            let o = in_sandbox(kind, script, &env).unwrap();
            assert!(
                stderr(&o).contains("rc=0"),
                "{kind:?} dormant: {}",
                stderr(&o)
            );
            assert!(d.received().is_some());
        }
    }
    drop(beacon);
    // No holder for the key (a dormant MCP server announces nothing): through, everywhere.
    for kind in [Sockets::Allowed, Sockets::NoConnect, Sockets::NoUnixSocket] {
        let _ = std::fs::remove_file(d.out());
        let Some(o) = in_sandbox(kind, script, &env) else {
            continue;
        };
        assert!(
            stderr(&o).contains("rc=0"),
            "{kind:?} no holder: {}",
            stderr(&o)
        );
        assert!(d.received().is_some(), "{kind:?}");
    }
    if ran == 0 {
        eprintln!("waits_in_host_sandboxes: nothing simulated on this machine");
    }
}
