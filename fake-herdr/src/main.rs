//! `herdr` — a fake of the Herdr 0.8.0, 0.8.2 and 0.9.0 CLIs for herdr-link's tests.
//!
//! Real commands (`agent`, `pane`, `tab`, `workspace`) run against a JSON world in
//! `$HERDR_FAKE_STATE`; `herdr fake ...` is the test-control surface. See README.md.

mod admin;
mod cli;
mod ids;
mod kinds;
mod server;
mod settings;
mod sorted;
mod state;
mod submit;

use serde_json::{json, Value};
use std::ffi::OsString;
use std::io::Write;
use std::time::{Duration, Instant};

use cli::{Env, Exec, Outcome, Parsed, StartWait};
use settings::Settings;
use state::{ApiError, Fault, Paths, State};

fn main() {
    let code = match std::panic::catch_unwind(real_main) {
        Ok(c) => c,
        Err(_) => {
            let _ = std::io::stderr().write_all(b"fake herdr: internal error\n");
            1
        }
    };
    std::process::exit(code)
}

/// Write an outcome's bytes (ignoring EPIPE and friends) and return its exit code.
fn emit(o: &Outcome) -> i32 {
    if !o.stdout.is_empty() {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(&o.stdout);
        let _ = out.flush();
    }
    if !o.stderr.is_empty() {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(&o.stderr);
        let _ = err.flush();
    }
    o.code
}

fn sleep_ms(ms: u64) {
    if ms > 0 {
        std::thread::sleep(Duration::from_millis(ms));
    }
}

fn log_line(argv: &[String], exit: Option<i32>, fault: Option<usize>) -> String {
    let mut v = json!({"argv": argv, "pid": std::process::id(), "exit": exit});
    if let (Some(i), Value::Object(m)) = (fault, &mut v) {
        m.insert("fault".into(), json!(i));
    }
    sorted::to_sorted(&v)
}

fn real_main() -> i32 {
    let raw: Vec<OsString> = std::env::args_os().skip(1).collect();
    if raw.first().is_some_and(|a| a == "fake") {
        let args: Option<Vec<String>> = raw[1..]
            .iter()
            .map(|a| a.to_str().map(String::from))
            .collect();
        return match args {
            Some(args) => emit(&admin::run(&args)),
            None => emit(&Outcome::usage("fake herdr: arguments must be valid UTF-8")),
        };
    }
    let logged: Vec<String> = raw
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let paths = Paths::from_env();
    if let Some(ms) = std::env::var("HERDR_FAKE_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        sleep_ms(ms);
    }

    // Step 1: every argument must be UTF-8.
    let mut args = Vec::with_capacity(raw.len());
    let mut early: Option<Outcome> = None;
    for (i, a) in raw.into_iter().enumerate() {
        match a.into_string() {
            Ok(s) => args.push(s),
            Err(_) => {
                early = Some(Outcome::usage(format!(
                    "error: argument {} is not valid UTF-8\nrun 'herdr --help' for usage",
                    i + 1
                )));
                break;
            }
        }
    }
    // Steps 2-3: --session / --remote / --handoff.
    let mut env = Env::from_process();
    let config = paths
        .as_ref()
        .and_then(|p| p.load().ok().flatten())
        .map(|st| st.config);
    env.settings = match Settings::resolve(config.as_ref()) {
        Ok(s) => s,
        Err(e) => return emit(&Outcome::usage(format!("fake herdr: {e}"))),
    };
    let mut pre_args = Vec::new();
    if early.is_none() {
        match cli::preprocess(args) {
            Ok((a, session)) => {
                env.session_arg = session;
                pre_args = a;
            }
            Err(o) => early = Some(o),
        }
    }
    if early.is_none() && env.session_arg.is_none() && env.socket_path.is_none() {
        if let Some(s) = &env.session_env {
            if let Err(e) = cli::check_session_name(s) {
                early = Some(Outcome::usage(format!("error: {e}")));
            }
        }
    }
    let key = (
        pre_args.first().cloned().unwrap_or_default(),
        pre_args.get(1).cloned().unwrap_or_default(),
    );

    let Some(paths) = paths else {
        // No HERDR_FAKE_STATE at all: behave like a missing server, log nothing.
        let exec = execute(early, &pre_args, &env, None);
        return emit(&exec.outcome);
    };
    let mut guard = paths.lock().ok();
    let mut loaded = if guard.is_some() {
        paths.load()
    } else {
        Ok(None)
    };

    // Faults.
    if early.is_none() {
        if let Ok(Some(st)) = &mut loaded {
            let (seen, chosen) = match_fault(st, &key.0, &key.1);
            if seen {
                if let Err(e) = paths.save(st) {
                    drop(guard);
                    return emit(&Outcome::usage(format!("fake herdr: {e}")));
                }
            }
            if let Some((idx, fault)) = chosen {
                if fault.replaces() || fault.delay_ms > 0 {
                    drop(guard.take());
                    sleep_ms(fault.delay_ms);
                    if fault.replaces() {
                        return perform_fault(&fault, idx, &paths, &logged);
                    }
                    guard = paths.lock().ok();
                    loaded = if guard.is_some() {
                        paths.load()
                    } else {
                        Ok(None)
                    };
                }
            }
        }
    }

    let started = Instant::now();
    let mut exec = execute(early, &pre_args, &env, Some(&mut loaded));
    persist(&paths, guard.is_some(), &loaded, &mut exec);
    drop(guard);
    // 0.8.2's `agent start` retries `agent_pane_busy` while a new pane's shell starts.
    while exec.busy_retry && started.elapsed() < Duration::from_millis(env.settings.busy_retry_ms) {
        sleep_ms(env.settings.poll_ms.max(1));
        let g = paths.lock().ok();
        let mut loaded = if g.is_some() { paths.load() } else { Ok(None) };
        exec = execute(None, &pre_args, &env, Some(&mut loaded));
        persist(&paths, g.is_some(), &loaded, &mut exec);
    }
    // `agent start` then polls until the new agent is ready.
    if let Some(wait) = exec.start_wait.take() {
        exec.outcome = poll_start(&paths, &env, &wait);
    }
    // A 0.9.0 `agent prompt` answers after its Enter.
    if let Some(wait) = exec.prompt_wait.take() {
        if let Some(failed) = await_submission(&paths, &env, &wait) {
            exec.outcome = failed;
        }
    }
    if let Ok(_g) = paths.lock() {
        let _ = Paths::append(
            &paths.argv_log,
            &log_line(&logged, Some(exec.outcome.code), None),
        );
    }
    emit(&exec.outcome)
}

/// Saves a changed state, or one whose loading pressed Enters that submitted something (the
/// save logs those submissions); the lock is held when `locked`.
fn persist(paths: &Paths, locked: bool, loaded: &Result<Option<State>, String>, exec: &mut Exec) {
    if !locked {
        return;
    }
    if let Ok(Some(st)) = loaded {
        if exec.dirty || st.has_unlogged_submissions() {
            if let Err(e) = paths.save(st) {
                exec.outcome = Outcome {
                    stderr: format!("fake herdr: {e}\n").into_bytes(),
                    code: 1,
                    ..Outcome::default()
                };
                exec.start_wait = None;
                exec.busy_retry = false;
                exec.prompt_wait = None;
            }
        }
    }
}

/// `agent start` after the server accepted it: poll the new agent every `poll_ms` until
/// it is ready (`idle`), blocked (`agent_not_ready`), gone, or the deadline passes (`timeout`,
/// after releasing the name), as the real CLI does.
fn poll_start(paths: &Paths, env: &Env, w: &StartWait) -> Outcome {
    let id = "cli:agent:start";
    let fail = |code: &'static str, msg: String| Outcome::api(id, &ApiError::new(code, msg));
    let deadline = Instant::now() + Duration::from_millis(w.timeout_ms);
    loop {
        sleep_ms(env.settings.poll_ms.max(1));
        let Ok(_g) = paths.lock() else {
            return fail("agent_start_transport_failed", "lock failed".into());
        };
        // The server gone while the CLI waits: Herdr prints the error through a JSON value,
        // so with sorted keys.
        let mut st = match paths.load() {
            Ok(Some(st)) if !st.server.stopped => st,
            _ => return server::server_not_running_sorted(id, env),
        };
        let lost = || {
            fail(
                "agent_name_not_found",
                format!("named agent {} no longer owns the target terminal", w.name),
            )
        };
        let Some(l) = st
            .locs()
            .into_iter()
            .find(|l| st.pane(*l).terminal_id == w.terminal_id)
        else {
            return lost();
        };
        let p = st.pane(l);
        if p.name.as_deref() != Some(w.name.as_str()) {
            return lost();
        }
        if let Some(a) = p.effective_label().filter(|a| *a != w.kind) {
            return fail(
                "agent_kind_mismatch",
                format!("expected {}, detected {a}", w.kind),
            );
        }
        if p.interactive_ready {
            let v = serde_json::json!({"id": id, "result": {
                "agent": st.agent_info(l), "argv": w.argv, "type": "agent_started"}});
            return Outcome::json(&v);
        }
        if env.settings.version.at_least_082() && p.agent_status() == "blocked" {
            st.pane_mut(l).launch_pending = false;
            let _ = paths.save(&st);
            return fail(
                "agent_not_ready",
                format!(
                    "agent {} is blocked during startup and is not ready for prompts",
                    w.name
                ),
            );
        }
        if !p.launch_pending {
            return fail(
                "agent_start_failed",
                "agent process exited before becoming interactive".into(),
            );
        }
        if Instant::now() >= deadline {
            let p = st.pane_mut(l);
            p.name = None;
            p.launch_pending = false;
            p.touch(false);
            let _ = paths.save(&st);
            return fail("timeout", "timed out waiting for agent startup".into());
        }
    }
}

/// Waits (without the lock) until the submission's Enter is due, then loads the world (which
/// presses it); `Some(error)` when the pane went before it was submitted.
fn await_submission(paths: &Paths, env: &Env, w: &cli::PromptWait) -> Option<Outcome> {
    let id = "cli:agent:prompt";
    loop {
        let left = w.enter_at_us.saturating_sub(submit::now_us());
        if left > 0 {
            std::thread::sleep(Duration::from_micros(left + 200));
            continue;
        }
        let Ok(_g) = paths.lock() else {
            return Some(Outcome::api(
                id,
                &ApiError::new("agent_prompt_failed", "pty actor closed"),
            ));
        };
        let st = match paths.load() {
            Ok(Some(st)) => st,
            _ => return Some(cli::server_not_running(id, env)),
        };
        if st.has_unlogged_submissions() {
            let _ = paths.save(&st);
        }
        return st.submission_lost(&w.id).then(|| {
            Outcome::api(
                id,
                &ApiError::new(
                    "agent_prompt_failed",
                    "PTY actor closed during input submission",
                ),
            )
        });
    }
}

/// Parse and run one real command against the loaded state.
fn execute(
    early: Option<Outcome>,
    args: &[String],
    env: &Env,
    loaded: Option<&mut Result<Option<State>, String>>,
) -> Exec {
    if let Some(o) = early {
        return o.into();
    }
    match cli::parse(args, env) {
        Parsed::Done(o) => o.into(),
        Parsed::Server(id, cmd) => match loaded {
            // The CLI meets the server (its ping) only once the command line parsed.
            Some(Ok(Some(st))) => {
                match server::refusal(&id, &st.server, env.settings.version, env) {
                    Some(refused) => refused.into(),
                    None => cli::run(&id, cmd, st, env),
                }
            }
            Some(Err(e)) => Outcome {
                stderr: format!("fake herdr: {e}\n").into_bytes(),
                code: 1,
                ..Outcome::default()
            }
            .into(),
            _ => cli::server_not_running(server::first_request_id(&id, env.settings.version), env)
                .into(),
        },
    }
}

/// Find the first active fault for (area, verb); bumps the counters of all matching
/// faults. Returns whether any fault matched (counters changed) and the chosen one.
fn match_fault(st: &mut State, area: &str, verb: &str) -> (bool, Option<(usize, Fault)>) {
    let mut seen = false;
    let mut chosen = None;
    for (i, f) in st.faults.iter_mut().enumerate() {
        if (f.area == "*" || f.area == area) && (f.verb == "*" || f.verb == verb) {
            let n = f.matched;
            f.matched += 1;
            seen = true;
            let active = n >= f.after && f.times.is_none_or(|t| n < f.after.saturating_add(t));
            if active && chosen.is_none() {
                chosen = Some((i, f.clone()));
            }
        }
    }
    (seen, chosen)
}

fn with_newline(text: &str, no_newline: bool) -> Vec<u8> {
    let mut b = text.as_bytes().to_vec();
    if !no_newline && !text.is_empty() && !text.ends_with('\n') {
        b.push(b'\n');
    }
    b
}

/// Apply a replacing fault: output, then hang / signal / exit.
fn perform_fault(f: &Fault, idx: usize, paths: &Paths, logged: &[String]) -> i32 {
    let exit = f
        .exit
        .unwrap_or(if f.stderr.is_some() && f.stdout.is_none() {
            1
        } else {
            0
        });
    let terminal = f.hang || f.signal.is_some();
    if let Ok(_g) = paths.lock() {
        let code = if terminal { None } else { Some(exit) };
        let _ = Paths::append(&paths.argv_log, &log_line(logged, code, Some(idx)));
    }
    let mut o = Outcome {
        code: exit,
        ..Outcome::default()
    };
    if let Some(t) = &f.stdout {
        o.stdout.extend(with_newline(t, f.no_newline));
    }
    if let Some(t) = &f.stderr {
        o.stderr.extend(with_newline(t, f.no_newline));
    }
    if f.invalid_utf8 {
        o.stdout
            .extend_from_slice(b"{\"id\":\"\xff\xfe\xc3\x28\",\"result\":\x80}\n");
    }
    emit(&o);
    if let Some(n) = f.big_stdout {
        let chunk = vec![b'x'; 64 * 1024];
        let mut left = n;
        let mut out = std::io::stdout().lock();
        while left > 0 {
            let k = left.min(chunk.len() as u64) as usize;
            if out.write_all(&chunk[..k]).is_err() {
                break;
            }
            left -= k as u64;
        }
        let _ = out.flush();
    }
    if f.hang {
        std::thread::sleep(Duration::from_secs(3600));
        return 1;
    }
    if let Some(sig) = f.signal {
        // SAFETY: restoring the default disposition and raising a signal on ourselves.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
        return 1;
    }
    exit
}
