//! Test support: loads the built cdylib through its C ABI only (libloading), and drives the
//! bundled fake Herdr (`fake-herdr`, binary `herdr`) to build worlds and read its logs.
//!
//! The environment gate is per process, so every test takes [`serial`] and sets the Herdr
//! variables for its own world; scenarios that need another environment live in their own test
//! binary.
#![allow(dead_code)]

use std::ffi::{c_char, CStr, CString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard, OnceLock};

use serde_json::{json, Value};

type SessionFn = unsafe extern "C" fn(*const c_char);
type JsonFn = unsafe extern "C" fn(*const c_char) -> *mut c_char;
type ActiveFn = unsafe extern "C" fn(*const c_char) -> i32;
type GuardFn = unsafe extern "C" fn(*const c_char, *const c_char, *mut *mut c_char) -> i32;
type StyledGuardFn =
    unsafe extern "C" fn(*const c_char, *const c_char, *const c_char, *mut *mut c_char) -> i32;
type FreeFn = unsafe extern "C" fn(*mut c_char);
type VersionFn = extern "C" fn() -> *const c_char;

pub use crate::target_dir;

/// The C ABI of the built library.
pub struct Abi {
    _lib: libloading::Library,
    pub session_start: SessionFn,
    pub session_end: SessionFn,
    pub tool_call: JsonFn,
    pub is_active: ActiveFn,
    pub bash_guard: GuardFn,
    /// `None` for a library older than the function (so the other tests can still run on it).
    pub bash_guard_in_style: Option<StyledGuardFn>,
    pub presentation: JsonFn,
    /// `None` for a library older than the function.
    pub command_env: Option<JsonFn>,
    pub free: FreeFn,
    pub version: VersionFn,
}

/// The library, loaded once per test process.
pub fn abi() -> &'static Abi {
    static ABI: OnceLock<Abi> = OnceLock::new();
    ABI.get_or_init(|| {
        let path = std::env::var_os("HERDR_LINK_LIB")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                // `cargo test` rebuilds the cdylib in deps/ (it only uplifts on `cargo build`).
                let exe = std::env::current_exe().expect("current exe");
                exe.parent().expect("deps dir").join("libherdr_link.so")
            });
        // SAFETY: loading our own cdylib; its initialisers have no preconditions.
        let lib = unsafe { libloading::Library::new(&path) }
            .unwrap_or_else(|e| panic!("cannot load {}: {e}", path.display()));
        // SAFETY: the symbols have exactly these signatures (include/herdr_link.h).
        unsafe {
            Abi {
                session_start: *lib.get(b"hl_session_start").unwrap(),
                session_end: *lib.get(b"hl_session_end").unwrap(),
                tool_call: *lib.get(b"hl_tool_call").unwrap(),
                is_active: *lib.get(b"hl_is_active").unwrap(),
                bash_guard: *lib.get(b"hl_bash_guard").unwrap(),
                bash_guard_in_style: lib.get(b"hl_bash_guard_in_style").ok().map(|f| *f),
                presentation: *lib.get(b"hl_presentation").unwrap(),
                command_env: lib.get(b"hl_command_env").ok().map(|f| *f),
                free: *lib.get(b"hl_free").unwrap(),
                version: *lib.get(b"hl_version").unwrap(),
                _lib: lib,
            }
        }
    })
}

fn cstr(s: &str) -> CString {
    CString::new(s).expect("no NUL in test strings")
}

impl Abi {
    /// Takes ownership of a returned string, parses it, and frees it with `hl_free`.
    pub fn take(&self, p: *mut c_char) -> Value {
        assert!(!p.is_null(), "the library returned NULL");
        // SAFETY: a NUL-terminated string returned by the library, released right after.
        let text = unsafe { CStr::from_ptr(p) }
            .to_str()
            .expect("UTF-8")
            .to_string();
        unsafe { (self.free)(p) };
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    }

    /// `hl_tool_call` with a raw request text.
    pub fn call_text(&self, request: &str) -> Value {
        let c = cstr(request);
        // SAFETY: valid C string.
        self.take(unsafe { (self.tool_call)(c.as_ptr()) })
    }

    /// `hl_tool_call` for `tool` with `input` in `session`.
    pub fn tool(&self, session: &str, tool: &str, input: Value) -> Value {
        self.call_text(&json!({"session": session, "tool": tool, "input": input}).to_string())
    }

    /// `hl_tool_call` with a context directory.
    pub fn tool_in(&self, session: &str, tool: &str, input: Value, dir: &Path) -> Value {
        self.call_text(
            &json!({"session": session, "tool": tool, "input": input, "context_dir": dir})
                .to_string(),
        )
    }

    /// `hl_presentation`.
    pub fn present(&self, session: &str, style: &str) -> Value {
        let c = cstr(&json!({"session": session, "style": style}).to_string());
        // SAFETY: valid C string.
        self.take(unsafe { (self.presentation)(c.as_ptr()) })
    }

    /// A guard's reason out-parameter as text (NULL: none), released.
    fn take_reason(&self, reason: *mut c_char) -> Option<String> {
        (!reason.is_null()).then(|| {
            // SAFETY: returned by the library; freed right after.
            let t = unsafe { CStr::from_ptr(reason) }
                .to_str()
                .unwrap()
                .to_string();
            unsafe { (self.free)(reason) };
            t
        })
    }

    /// `hl_bash_guard`, returning the verdict and the reason (freed).
    pub fn guard(&self, session: &str, command: &str) -> (i32, Option<String>) {
        let s = cstr(session);
        let c = cstr(command);
        let mut reason: *mut c_char = std::ptr::null_mut();
        // SAFETY: valid C strings and a writable out pointer.
        let verdict = unsafe { (self.bash_guard)(s.as_ptr(), c.as_ptr(), &mut reason) };
        (verdict, self.take_reason(reason))
    }

    /// `hl_bash_guard_in_style` (`style` NULL when `None`), returning the verdict and the
    /// reason (freed).
    pub fn guard_in_style(
        &self,
        session: &str,
        command: &str,
        style: Option<&str>,
    ) -> (i32, Option<String>) {
        let s = cstr(session);
        let c = cstr(command);
        let y = style.map(cstr);
        let y_ptr = y.as_ref().map_or(std::ptr::null(), |y| y.as_ptr());
        let mut reason: *mut c_char = std::ptr::null_mut();
        // SAFETY: valid C strings (or NULL style) and a writable out pointer.
        let f = self
            .bash_guard_in_style
            .expect("the library has hl_bash_guard_in_style");
        let verdict = unsafe { f(s.as_ptr(), c.as_ptr(), y_ptr, &mut reason) };
        (verdict, self.take_reason(reason))
    }

    pub fn start(&self, session: &str) {
        let s = cstr(session);
        // SAFETY: valid C string.
        unsafe { (self.session_start)(s.as_ptr()) }
    }

    pub fn end(&self, session: &str) {
        let s = cstr(session);
        // SAFETY: valid C string.
        unsafe { (self.session_end)(s.as_ptr()) }
    }

    pub fn active(&self, session: &str) -> bool {
        let s = cstr(session);
        // SAFETY: valid C string.
        unsafe { (self.is_active)(s.as_ptr()) == 1 }
    }
}

/// Serializes the tests of one binary: they share the process environment.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// The fake Herdr executable.
pub fn fake_bin() -> PathBuf {
    let path = std::env::var_os("HERDR_FAKE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| target_dir().join("herdr"));
    assert!(
        path.is_file(),
        "fake Herdr not found at {}: run `cargo build -p fake-herdr` first (the README test command does)",
        path.display()
    );
    path
}

/// The Herdr version the fake plays in this run: `HERDR_FAKE_VERSION` (scripts/test.sh runs the
/// send and start suites a second time with `0.8.2`), default `0.8.0`. A world whose JSON has
/// `"config": {"version": ...}` plays that version instead.
pub fn herdr_version() -> String {
    std::env::var("HERDR_FAKE_VERSION")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "0.8.0".to_string())
}

/// Makes a script the test wrote executable (mode 0755).
pub fn make_executable(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A fresh fake-Herdr world in its own temporary directory.
pub struct World {
    pub dir: PathBuf,
    pub state: PathBuf,
}

impl World {
    /// Builds a world from the fake's declarative JSON and points the process environment at it
    /// (HERDR_ENV=1, HERDR_BIN_PATH = the fake, HERDR_PANE_ID = `self_pane`).
    pub fn new(spec: Value, self_pane: &str) -> World {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "herdr-link-test-{}-{}-{n}",
            std::process::id(),
            std::thread::current()
                .name()
                .unwrap_or("t")
                .replace("::", "-")
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let state = dir.join("state.json");
        let world = World { dir, state };
        world.admin_stdin(&["fake", "world"], &spec.to_string());
        std::env::set_var("HERDR_FAKE_STATE", &world.state);
        std::env::set_var("HERDR_ENV", "1");
        std::env::set_var("HERDR_BIN_PATH", fake_bin());
        std::env::set_var("HERDR_PANE_ID", self_pane);
        // Each world is its own Herdr server: deliveries to its panes never share a turn with
        // another world's panes of the same id (see src/turn.rs).
        std::env::set_var("HERDR_SOCKET_PATH", world.dir.join("herdr.sock"));
        std::env::remove_var("HERDR_LINK_TIMEOUT_MS");
        std::env::remove_var("HERDR_LINK_START_TIMEOUT_MS");
        std::env::remove_var("HERDR_LINK_TURN_WAIT_MS");
        // The operator log is on by default: each world keeps its default log in its own
        // state directory (never the user's), with message text as by default. Deliveries are
        // not followed unless a test turns that on (its `agent get` calls would otherwise run
        // behind every send of every test).
        std::env::set_var("XDG_STATE_HOME", world.dir.join("state"));
        for switch in [
            "HERDR_LINK_LOG_OFF",
            "HERDR_LINK_LOG_TEXT",
            "HERDR_LINK_TAKEN_UP_MS",
        ] {
            std::env::remove_var(switch);
        }
        std::env::set_var("HERDR_LINK_FOLLOW", "0");
        world
    }

    /// A typical world: workspace w1 with brain (w1:p1), worker-a (w1:p2, working) and an
    /// unnamed agent; workspace w2 with stranger (w2:p1).
    pub fn standard() -> World {
        World::new(
            json!({"workspaces": [
                {"cwd": "/proj", "tabs": [{"panes": [
                    {"cwd": "/proj", "agent": "pi", "name": "brain", "status": "idle"},
                    {"cwd": "/proj", "agent": "claude", "name": "worker-a", "status": "working"},
                    {"cwd": "/proj", "agent": "codex", "status": "idle"}
                ]}]},
                {"cwd": "/other", "tabs": [{"panes": [
                    {"cwd": "/other", "agent": "pi", "name": "stranger", "status": "idle"}
                ]}]}
            ]}),
            "w1:p1",
        )
    }

    fn command(&self) -> Command {
        let mut c = Command::new(fake_bin());
        c.env("HERDR_FAKE_STATE", &self.state);
        c
    }

    /// Runs a fake admin or CLI command; panics unless it succeeds. Returns stdout.
    pub fn admin(&self, args: &[&str]) -> String {
        let out = self.command().args(args).output().expect("run fake herdr");
        assert!(
            out.status.success(),
            "fake herdr {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn admin_stdin(&self, args: &[&str], input: &str) -> String {
        use std::io::Write;
        let mut child = self
            .command()
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn fake herdr");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "fake herdr {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Every argv the fake received (excluding its `fake` admin commands).
    pub fn argv_log(&self) -> Vec<Vec<String>> {
        argv_log_of(&self.state)
    }

    /// The argv log as space-joined strings, for readable assertions.
    pub fn calls(&self) -> Vec<String> {
        self.argv_log().iter().map(|a| a.join(" ")).collect()
    }

    /// Forgets the argv log so far.
    pub fn clear_log(&self) {
        let _ = std::fs::remove_file(format!("{}.argv.jsonl", self.state.display()));
    }

    /// Submissions so far (one per Enter that submitted text; `parts` > 1 means prompts were
    /// glued together). Waits until every pending Enter has been pressed (Herdr submits 300 ms
    /// after each prompt; see fake-herdr/README.md, "Submit delay").
    pub fn prompts(&self) -> Vec<Value> {
        serde_json::from_str(&self.admin(&["fake", "prompts"])).expect("fake prompts is JSON")
    }

    /// Submissions so far, without waiting for pending Enters.
    pub fn prompts_now(&self) -> Vec<Value> {
        serde_json::from_str(&self.admin(&["fake", "prompts", "--now"]))
            .expect("fake prompts is JSON")
    }

    /// Injects a fault for `area verb` (see fake-herdr/README.md).
    pub fn fault(&self, area: &str, verb: &str, opts: &[&str]) {
        let mut args = vec!["fake", "fault", area, verb];
        args.extend(opts);
        self.admin(&args);
    }

    /// The current state (for inspecting topology).
    pub fn dump(&self) -> Value {
        serde_json::from_str(&self.admin(&["fake", "dump"])).unwrap()
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Every argv a fake Herdr with state file `state` received (its `<state>.argv.jsonl`).
pub fn argv_log_of(state: &Path) -> Vec<Vec<String>> {
    read_jsonl(&PathBuf::from(format!("{}.argv.jsonl", state.display())))
        .into_iter()
        .map(|v| {
            v["argv"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

fn read_jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A raw Herdr id (`w1:p2`, `w1:t1`, `w2`, `term_…`) anywhere in `text`?
pub fn has_raw_id(text: &str) -> bool {
    let bytes = text.as_bytes();
    if text.contains("term_") {
        return true;
    }
    for i in 0..bytes.len() {
        if bytes[i] == b'w' && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric()) {
            let rest = &text[i + 1..];
            let digits = rest
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric())
                .count();
            if digits > 0 && rest[digits..].starts_with(':') {
                return true;
            }
            if digits > 0
                && rest[..digits].bytes().all(|b| b.is_ascii_digit())
                && !rest[digits..].starts_with(|c: char| c.is_ascii_alphanumeric())
            {
                return true;
            }
        }
    }
    false
}

/// Child processes of this test process that still exist (zombies included).
pub fn children() -> Vec<u32> {
    let me = std::process::id();
    let mut out = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                // pid (comm) state ppid ...
                if let Some(after) = stat.rsplit_once(')').map(|(_, a)| a) {
                    let ppid: u32 = after
                        .split_whitespace()
                        .nth(1)
                        .and_then(|p| p.parse().ok())
                        .unwrap_or(0);
                    if ppid == me {
                        out.push(pid);
                    }
                }
            }
        }
    }
    out
}
