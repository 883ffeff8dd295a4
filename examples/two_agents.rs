//! The main job, end to end: two agents in one simulated Herdr workspace talk through the
//! herdr-link plugin, loaded exactly as a host loads it (dlopen + the C ABI).
//!
//! Run it with `scripts/demo.sh` (which builds the plugin and the bundled fake Herdr first), or
//! `cargo build && cargo build -p fake-herdr && cargo run --example two_agents`.

use std::ffi::{c_char, CStr, CString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

type JsonFn = unsafe extern "C" fn(*const c_char) -> *mut c_char;
type SessionFn = unsafe extern "C" fn(*const c_char);
type GuardFn = unsafe extern "C" fn(*const c_char, *const c_char, *mut *mut c_char) -> i32;
type FreeFn = unsafe extern "C" fn(*mut c_char);

/// The plugin as a host sees it.
struct Plugin {
    _lib: libloading::Library,
    session_start: SessionFn,
    tool_call: JsonFn,
    presentation: JsonFn,
    bash_guard: GuardFn,
    free: FreeFn,
}

impl Plugin {
    fn load(path: &Path) -> Plugin {
        // SAFETY: our own cdylib, with the signatures of include/herdr_link.h.
        unsafe {
            let lib = libloading::Library::new(path)
                .unwrap_or_else(|e| panic!("cannot load {}: {e}", path.display()));
            Plugin {
                session_start: *lib.get(b"hl_session_start").unwrap(),
                tool_call: *lib.get(b"hl_tool_call").unwrap(),
                presentation: *lib.get(b"hl_presentation").unwrap(),
                bash_guard: *lib.get(b"hl_bash_guard").unwrap(),
                free: *lib.get(b"hl_free").unwrap(),
                _lib: lib,
            }
        }
    }

    fn take(&self, p: *mut c_char) -> Value {
        // SAFETY: a string returned by the plugin, released right after reading.
        let text = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        unsafe { (self.free)(p) };
        serde_json::from_str(&text).expect("the plugin always answers JSON")
    }

    fn call(&self, session: &str, tool: &str, input: Value) -> Value {
        let req =
            CString::new(json!({"session": session, "tool": tool, "input": input}).to_string())
                .unwrap();
        // SAFETY: valid C string.
        self.take(unsafe { (self.tool_call)(req.as_ptr()) })
    }

    fn present(&self, session: &str) -> Value {
        let req =
            CString::new(json!({"session": session, "style": "deferred"}).to_string()).unwrap();
        // SAFETY: valid C string.
        self.take(unsafe { (self.presentation)(req.as_ptr()) })
    }

    fn start(&self, session: &str) {
        let s = CString::new(session).unwrap();
        // SAFETY: valid C string.
        unsafe { (self.session_start)(s.as_ptr()) }
    }

    fn guard(&self, session: &str, command: &str) -> (i32, String) {
        let s = CString::new(session).unwrap();
        let c = CString::new(command).unwrap();
        let mut reason: *mut c_char = std::ptr::null_mut();
        // SAFETY: valid strings and out pointer; the reason is freed below.
        let v = unsafe { (self.bash_guard)(s.as_ptr(), c.as_ptr(), &mut reason) };
        let text = if reason.is_null() {
            String::new()
        } else {
            let t = unsafe { CStr::from_ptr(reason) }
                .to_string_lossy()
                .into_owned();
            unsafe { (self.free)(reason) };
            t
        };
        (v, text)
    }
}

fn step(title: &str) {
    println!("\n\x1b[1m── {title}\x1b[0m");
}

fn show(label: &str, v: &Value) {
    println!("{label}: {v}");
}

fn tool_names(p: &Value) -> Vec<String> {
    p["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

fn fake(fake_bin: &Path, state: &Path, args: &[&str], stdin: Option<&str>) -> String {
    let mut child = Command::new(fake_bin)
        .args(args)
        .env("HERDR_FAKE_STATE", state)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run the fake herdr");
    if let Some(input) = stdin {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "fake herdr {args:?} failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn main() {
    let target = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let lib = std::env::var_os("HERDR_LINK_LIB")
        .map(PathBuf::from)
        .unwrap_or_else(|| target.join("libherdr_link.so"));
    let fake_bin = std::env::var_os("HERDR_FAKE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| target.join("herdr"));
    if !lib.is_file() || !fake_bin.is_file() {
        eprintln!("build first: cargo build && cargo build -p fake-herdr (or run scripts/demo.sh)");
        std::process::exit(2);
    }
    let dir = std::env::temp_dir().join(format!("herdr-link-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("state.json");

    step("A simulated Herdr workspace with two agents");
    let world = json!({"workspaces": [{"cwd": dir, "label": "demo", "tabs": [{"panes": [
        {"cwd": dir, "agent": "pi", "name": "brain", "status": "working"},
        {"cwd": dir, "agent": "claude", "name": "reviewer", "status": "idle"}
    ]}]}]});
    fake(
        &fake_bin,
        &state,
        &["fake", "world"],
        Some(&world.to_string()),
    );
    println!("workspace w1: pane w1:p1 runs `brain` (pi), pane w1:p2 runs `reviewer` (claude)");
    println!("(pane ids appear here only because this is the operator's view; the model never sees them)");

    // Both agents live in one process here; each call reads who "we" are from HERDR_PANE_ID,
    // exactly as a plugin inside each pane would.
    std::env::set_var("HERDR_ENV", "1");
    std::env::set_var("HERDR_BIN_PATH", &fake_bin);
    std::env::set_var("HERDR_FAKE_STATE", &state);
    let as_brain = || std::env::set_var("HERDR_PANE_ID", "w1:p1");
    let as_reviewer = || std::env::set_var("HERDR_PANE_ID", "w1:p2");

    let plugin = Plugin::load(&lib);
    as_brain();
    plugin.start("brain-session");

    step("brain's session starts dormant: only the gateway is visible, no Contract");
    let p = plugin.present("brain-session");
    println!("tools: {:?}\ncontract: {}", tool_names(&p), p["contract"]);

    step("The user asks brain to use Herdr; the model calls the gateway with {}");
    let r = plugin.call("brain-session", "herdr_link", json!({}));
    show("herdr_link {}", &r);
    let p = plugin.present("brain-session");
    println!("tools now: {:?}", tool_names(&p));
    println!(
        "Contract injected into the system prompt:\n{}",
        p["contract"].as_str().unwrap()
    );

    step("brain looks for peers");
    show(
        "herdr_link_peers",
        &plugin.call("brain-session", "herdr_link_peers", json!({}))["result"],
    );

    step("brain sends a request to reviewer");
    let r = plugin.call(
        "brain-session",
        "herdr_link_send",
        json!({"to": "reviewer", "message": "Please review the retry logic in src/net.rs and tell me what you find."}),
    );
    show("herdr_link_send", &r["result"]);

    step("brain tries to wait for the answer in Bash — the guard stops it");
    let (v, reason) = plugin.guard(
        "brain-session",
        "herdr agent wait reviewer --timeout 600000",
    );
    println!("hl_bash_guard(\"herdr agent wait reviewer ...\") = {v}  ({reason})");
    let (v, _) = plugin.guard("brain-session", "grep -rn 'herdr agent wait' docs/");
    println!("hl_bash_guard(\"grep -rn 'herdr agent wait' docs/\") = {v}  (a mention is fine)");

    step("What reviewer's terminal received (a dormant reviewer can still understand it)");
    let prompts: Value =
        serde_json::from_str(&fake(&fake_bin, &state, &["fake", "prompts"], None)).unwrap();
    let delivered = prompts[0]["text"].as_str().unwrap().to_string();
    println!("{delivered}");

    step("reviewer activates its own gateway and replies to envelope.from");
    as_reviewer();
    plugin.start("reviewer-session");
    let envelope =
        herdr_link::protocol::extract_envelope(&delivered).expect("an envelope on the last line");
    println!(
        "extracted envelope: from={} id={} message={:?}",
        envelope.from, envelope.id, envelope.message
    );
    plugin.call("reviewer-session", "herdr_link", json!({}));
    let r = plugin.call(
        "reviewer-session",
        "herdr_link_send",
        json!({"to": envelope.from, "message": "Reviewed: the retry loop never backs off; see line 42. Otherwise fine."}),
    );
    show("reviewer: herdr_link_send", &r["result"]);
    let prompts: Value =
        serde_json::from_str(&fake(&fake_bin, &state, &["fake", "prompts"], None)).unwrap();
    let reply =
        herdr_link::protocol::extract_envelope(prompts[1]["text"].as_str().unwrap()).unwrap();
    println!(
        "brain's next turn begins with the inbound message from {}: {:?}",
        reply.from, reply.message
    );

    step("brain's lifecycle decision: reviewer is done, so brain closes it");
    as_brain();
    show(
        "herdr_link_close",
        &plugin.call(
            "brain-session",
            "herdr_link_close",
            json!({"agent": "reviewer"}),
        )["result"],
    );
    show(
        "herdr_link_peers",
        &plugin.call("brain-session", "herdr_link_peers", json!({}))["result"],
    );

    step("Errors the model sees are stable codes with fixed reasons, never ids");
    show(
        "send to a ghost",
        &plugin.call(
            "brain-session",
            "herdr_link_send",
            json!({"to": "ghost", "message": "hi"}),
        )["error"],
    );

    let _ = std::fs::remove_dir_all(&dir);
    println!("\nDone: dormant → active, peers, send, guarded wait, reply, close — all through the C ABI.");
}
