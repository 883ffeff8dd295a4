//! The test-control surface: `herdr fake <verb> ...` (not part of real Herdr).

use serde::Deserialize;
use serde_json::{json, Value};
use std::fs;
use std::io::Read;
use std::time::{Duration, Instant};

use crate::cli::{Env, Outcome};
use crate::ids;
use crate::kinds;
use crate::settings::{Settings, Version, KEYS};
use crate::state::{Fault, Pane, Paths, State, Tab, Workspace};
use crate::submit::now_us;

const USAGE: &str =
    "usage: herdr fake init|world|agent|move|focus|fault|faults|config|server|env|prompts|log|dump ...";
const STATUSES: [&str; 5] = ["idle", "working", "blocked", "done", "unknown"];

/// Declarative world (stdin of `herdr fake world`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorldSpec {
    /// Settings, as `herdr fake config` sets them (e.g. `{"version":"0.8.2"}`).
    #[serde(default)]
    config: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    workspaces: Vec<WsSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WsSpec {
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    /// Number the first pane of this workspace gets (default 1).
    #[serde(default)]
    next_pane: Option<u64>,
    #[serde(default)]
    tabs: Vec<TabSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TabSpec {
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    panes: Vec<PaneSpec>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PaneSpec {
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    detected: Option<bool>,
    #[serde(default)]
    focused: bool,
    #[serde(default)]
    launch_pending: bool,
    #[serde(default)]
    interactive_ready: bool,
    #[serde(default)]
    prompt_fails: bool,
}

fn out(v: &Value) -> Outcome {
    Outcome::json(v)
}

fn fail(msg: impl AsRef<str>) -> Outcome {
    Outcome {
        stderr: format!("fake herdr: {}\n", msg.as_ref()).into_bytes(),
        code: 1,
        ..Outcome::default()
    }
}

/// Run `herdr fake <args...>` (args exclude the leading `fake`).
pub fn run(args: &[String]) -> Outcome {
    let Some(paths) = Paths::from_env() else {
        return Outcome::usage("fake herdr: HERDR_FAKE_STATE is not set");
    };
    let Some(verb) = args.first() else {
        return Outcome::usage(USAGE);
    };
    let rest = &args[1..];
    // The world JSON is read before taking the lock.
    let world = if verb == "world" {
        let mut buf = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut buf) {
            return fail(format!("cannot read stdin: {e}"));
        }
        match serde_json::from_str::<WorldSpec>(&buf) {
            Ok(w) => Some(w),
            Err(e) => return Outcome::usage(format!("fake herdr: invalid world JSON: {e}")),
        }
    } else {
        None
    };
    if verb == "prompts" {
        return fake_prompts(&paths, rest);
    }
    let _guard = match paths.lock() {
        Ok(g) => g,
        Err(e) => return fail(format!("cannot lock {}: {e}", paths.lock.display())),
    };
    match verb.as_str() {
        "init" | "world" => {
            if !rest.is_empty() {
                return Outcome::usage(format!("usage: herdr fake {verb}"));
            }
            let st = match world {
                Some(w) => match build_world(w) {
                    Ok(st) => st,
                    Err(e) => return Outcome::usage(format!("fake herdr: {e}")),
                },
                None => State::new(),
            };
            let _ = fs::remove_file(&paths.argv_log);
            let _ = fs::remove_file(&paths.prompts);
            if let Err(e) = paths.save(&st) {
                return fail(e);
            }
            if verb == "init" {
                out(&json!({"ok": true, "state": paths.state.to_string_lossy()}))
            } else {
                out(&id_map(&st))
            }
        }
        "log" => {
            if !rest.is_empty() {
                return Outcome::usage(format!("usage: herdr fake {verb}"));
            }
            out(&Value::Array(read_jsonl(&paths.argv_log)))
        }
        "dump" => match paths.load() {
            Ok(Some(st)) => match serde_json::to_value(&st) {
                Ok(v) => out(&v),
                Err(e) => fail(e.to_string()),
            },
            Ok(None) => fail("no state file (run `herdr fake init`)"),
            Err(e) => fail(e),
        },
        _ => {
            let mut st = match paths.load() {
                Ok(Some(st)) => st,
                Ok(None) => return fail("no state file (run `herdr fake init`)"),
                Err(e) => return fail(e),
            };
            let res = match verb.as_str() {
                "agent" => fake_agent(&mut st, rest),
                "move" => fake_move(&mut st, rest),
                "focus" => fake_focus(&mut st, rest),
                "fault" => fake_fault(&mut st, rest),
                "faults" => fake_faults(&mut st, rest),
                "config" => fake_config(&mut st, rest),
                "server" => match Settings::resolve(Some(&st.config)) {
                    Ok(settings) => crate::server::admin(&mut st.server, settings.version, rest),
                    Err(e) => Err(Outcome::usage(format!("fake herdr: {e}"))),
                },
                "env" => fake_env(&st, rest),
                _ => Err(Outcome::usage(USAGE)),
            };
            match res {
                Ok(v) => match paths.save(&st) {
                    Ok(()) => out(&v),
                    Err(e) => fail(e),
                },
                Err(o) => o,
            }
        }
    }
}

/// The lines of a `.jsonl` log (a line that is not JSON comes back as `{"raw": line}`).
fn read_jsonl(path: &std::path::Path) -> Vec<Value> {
    let text = fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| json!({"raw": l})))
        .collect()
}

/// How long `fake prompts` waits at most for Enters still to come.
const PROMPTS_WAIT_CAP: Duration = Duration::from_secs(10);

/// `fake prompts [--now]`: the submissions so far. Without `--now` it first waits (without the
/// lock) until every scheduled Enter has been pressed, so a test sees a send's submission
/// without guessing a sleep; with `--now` it presses only the Enters already due.
fn fake_prompts(paths: &Paths, args: &[String]) -> Outcome {
    let wait = match args {
        [] => true,
        [a] if a == "--now" => false,
        _ => return Outcome::usage("usage: herdr fake prompts [--now]"),
    };
    let started = Instant::now();
    loop {
        let due = {
            let _guard = match paths.lock() {
                Ok(g) => g,
                Err(e) => return fail(format!("cannot lock {}: {e}", paths.lock.display())),
            };
            match paths.load() {
                Ok(Some(st)) => {
                    if st.has_unlogged_submissions() {
                        if let Err(e) = paths.save(&st) {
                            return fail(e);
                        }
                    }
                    st.last_enter_due()
                }
                Ok(None) => None,
                Err(e) => return fail(e),
            }
        };
        let Some(due) = due.filter(|_| wait && started.elapsed() < PROMPTS_WAIT_CAP) else {
            break;
        };
        let left = due.saturating_sub(now_us()) + 1_000;
        std::thread::sleep(Duration::from_micros(left));
    }
    out(&Value::Array(read_jsonl(&paths.prompts)))
}

fn check_status(s: &str) -> Result<(), String> {
    if STATUSES.contains(&s) {
        Ok(())
    } else {
        Err(format!(
            "invalid status {s:?} (expected idle, working, blocked, done or unknown)"
        ))
    }
}

fn build_world(w: WorldSpec) -> Result<State, String> {
    let mut st = State::new();
    for (k, v) in &w.config {
        Settings::check(k, v)?;
    }
    st.config = w.config;
    let mut focus = None;
    for (wi, ws) in w.workspaces.into_iter().enumerate() {
        let n = st.next_workspace;
        st.next_workspace += 1;
        let wid = ids::workspace_id(n);
        let mut workspace = Workspace {
            id: wid.clone(),
            label: ws.label,
            cwd: ws.cwd.clone(),
            next_tab: 1,
            next_pane: ws.next_pane.unwrap_or(1).max(1),
            active_tab: None,
            tabs: Vec::new(),
        };
        let mut tabs = ws.tabs;
        if tabs.is_empty() {
            tabs.push(TabSpec {
                label: None,
                panes: Vec::new(),
            });
        }
        for (ti, ts) in tabs.into_iter().enumerate() {
            let tid = ids::tab_id(&wid, workspace.next_tab);
            let number = workspace.next_tab;
            workspace.next_tab += 1;
            let mut panes = ts.panes;
            if panes.is_empty() {
                panes.push(PaneSpec::default());
            }
            let mut tab = Tab {
                id: tid,
                number,
                label: ts.label,
                focused_pane: None,
                panes: Vec::new(),
            };
            for (pi, ps) in panes.into_iter().enumerate() {
                let pid = ids::pane_id(&wid, workspace.next_pane);
                workspace.next_pane += 1;
                let term = st.new_terminal_id();
                let mut p = Pane::shell(pid, term, ps.cwd.or_else(|| ws.cwd.clone()));
                p.label = ps.label;
                p.process = ps
                    .agent
                    .as_deref()
                    .map(|a| kinds::normalize(a, Version::V082));
                p.detected = ps.detected.unwrap_or(true);
                p.name = ps.name;
                let status = ps.status.unwrap_or_else(|| "idle".to_string());
                check_status(&status)?;
                p.status = status;
                p.launch_pending = ps.launch_pending;
                p.interactive_ready = ps.interactive_ready;
                p.prompt_fails = ps.prompt_fails;
                if ps.focused {
                    focus = Some((wi, ti, pi));
                }
                tab.panes.push(p);
            }
            tab.focused_pane = tab.panes.first().map(|p| p.id.clone());
            workspace.tabs.push(tab);
        }
        workspace.active_tab = workspace.tabs.first().map(|t| t.id.clone());
        st.workspaces.push(workspace);
    }
    st.active_workspace = st.workspaces.first().map(|w| w.id.clone());
    if let Some(l) = focus {
        st.focus(l);
    }
    Ok(st)
}

fn id_map(st: &State) -> Value {
    let mut panes = Vec::new();
    let mut tabs = Vec::new();
    for w in &st.workspaces {
        for t in &w.tabs {
            tabs.push(json!(t.id));
            for p in &t.panes {
                panes.push(json!({
                    "pane_id": p.id,
                    "terminal_id": p.terminal_id,
                    "tab_id": t.id,
                    "workspace_id": w.id,
                }));
            }
        }
    }
    let workspaces: Vec<Value> = st.workspaces.iter().map(|w| json!(w.id)).collect();
    json!({"workspaces": workspaces, "tabs": tabs, "panes": panes})
}

fn value<'a>(it: &mut std::slice::Iter<'a, String>, flag: &str) -> Result<&'a String, Outcome> {
    it.next()
        .ok_or_else(|| Outcome::usage(format!("fake herdr: missing value for {flag}")))
}

fn num<T: std::str::FromStr>(
    it: &mut std::slice::Iter<'_, String>,
    flag: &str,
) -> Result<T, Outcome> {
    let v = value(it, flag)?;
    v.parse::<T>()
        .map_err(|_| Outcome::usage(format!("fake herdr: invalid value for {flag}: {v}")))
}

fn boolean(it: &mut std::slice::Iter<'_, String>, flag: &str) -> Result<bool, Outcome> {
    match value(it, flag)?.as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        v => Err(Outcome::usage(format!(
            "fake herdr: invalid value for {flag}: {v} (expected true or false)"
        ))),
    }
}

fn pane_view(st: &State, l: crate::state::Loc) -> Value {
    let agent = if st.pane(l).is_agent_terminal() {
        st.agent_info(l)
    } else {
        Value::Null
    };
    json!({"pane": st.pane_info(l), "agent": agent})
}

fn fake_agent(st: &mut State, args: &[String]) -> Result<Value, Outcome> {
    let usage = "usage: herdr fake agent <pane> [--kind K] [--name N] [--no-name] [--status S] [--detected true|false] [--pending true|false] [--ready true|false] [--prompt-fails true|false] [--cwd P] [--none]";
    let Some(pane) = args.first() else {
        return Err(Outcome::usage(usage));
    };
    let named = st.named(pane);
    let Some(l) = st
        .find_any(pane)
        .or_else(|| (named.len() == 1).then(|| named[0]))
    else {
        return Err(fail(format!("pane {pane} not found")));
    };
    let mut p = st.pane(l).clone();
    let old_status = p.agent_status().to_string();
    let mut name_set = false;
    let mut it = args[1..].iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--none" => {
                p.process = None;
                p.detected = true;
                p.report = None;
                if !name_set {
                    p.name = None;
                }
                p.launch_pending = false;
                p.interactive_ready = false;
            }
            "--kind" => {
                let k = kinds::normalize(value(&mut it, "--kind")?, Version::V082);
                if p.process.as_deref() != Some(k.as_str()) {
                    if !name_set {
                        p.name = None;
                    }
                    p.report = None;
                    p.interactive_ready = false;
                }
                p.process = Some(k);
                p.detected = true;
            }
            "--name" => {
                p.name = Some(value(&mut it, "--name")?.clone());
                name_set = true;
            }
            "--no-name" => {
                p.name = None;
                name_set = true;
            }
            "--status" => {
                let s = value(&mut it, "--status")?;
                check_status(s).map_err(|e| Outcome::usage(format!("fake herdr: {e}")))?;
                p.status = s.clone();
            }
            "--detected" => p.detected = boolean(&mut it, "--detected")?,
            "--pending" => p.launch_pending = boolean(&mut it, "--pending")?,
            "--ready" => p.interactive_ready = boolean(&mut it, "--ready")?,
            "--prompt-fails" => p.prompt_fails = boolean(&mut it, "--prompt-fails")?,
            "--cwd" => p.cwd = Some(value(&mut it, "--cwd")?.clone()),
            _ => {
                return Err(Outcome::usage(format!(
                    "fake herdr: unknown option: {a}\n{usage}"
                )))
            }
        }
    }
    let changed = p.agent_status() != old_status;
    p.touch(changed);
    *st.pane_mut(l) = p;
    Ok(pane_view(st, l))
}

fn fake_move(st: &mut State, args: &[String]) -> Result<Value, Outcome> {
    let [pane, ws] = args else {
        return Err(Outcome::usage(
            "usage: herdr fake move <pane> <workspace_id>",
        ));
    };
    let Some(l) = st.find_any(pane) else {
        return Err(fail(format!("pane {pane} not found")));
    };
    let Some(dest) = st.workspaces.iter().position(|w| &w.id == ws) else {
        return Err(fail(format!("workspace {ws} not found")));
    };
    if st.workspaces[dest].tabs.is_empty() {
        return Err(fail(format!("workspace {ws} has no tabs")));
    }
    if dest == l.0 {
        return Err(fail(format!("pane {pane} is already in workspace {ws}")));
    }
    let was_focused = st.pane_focused(l);
    let dest_id = st.workspaces[dest].id.clone();
    let mut p = st.remove_pane(l);
    // Removing may have closed the source workspace and shifted indices.
    let Some(dest) = st.workspaces.iter().position(|w| w.id == dest_id) else {
        return Err(fail("internal error: destination vanished"));
    };
    let old = p.id.clone();
    let new = st.alloc_pane_id(dest);
    p.aliases.push(old.clone());
    p.id = new.clone();
    p.touch(false);
    let terminal_id = p.terminal_id.clone();
    st.workspaces[dest].tabs[0].panes.push(p);
    let nl = (dest, 0, st.workspaces[dest].tabs[0].panes.len() - 1);
    if was_focused {
        st.focus(nl);
    }
    Ok(
        json!({"old_pane_id": old, "pane_id": new, "terminal_id": terminal_id, "workspace_id": dest_id}),
    )
}

fn fake_focus(st: &mut State, args: &[String]) -> Result<Value, Outcome> {
    let [pane] = args else {
        return Err(Outcome::usage("usage: herdr fake focus <pane>"));
    };
    let Some(l) = st.find_any(pane) else {
        return Err(fail(format!("pane {pane} not found")));
    };
    st.focus(l);
    Ok(pane_view(st, l))
}

fn fake_fault(st: &mut State, args: &[String]) -> Result<Value, Outcome> {
    let usage = "usage: herdr fake fault <area|*> <verb|*> [--times N] [--after N] [--exit C] [--stdout TEXT] [--stderr TEXT] [--no-newline] [--delay-ms N] [--hang] [--signal N] [--big-stdout BYTES] [--invalid-utf8]";
    if args.len() < 2 {
        return Err(Outcome::usage(usage));
    }
    let mut f = Fault {
        area: args[0].clone(),
        verb: args[1].clone(),
        ..Fault::default()
    };
    let mut it = args[2..].iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--times" => f.times = Some(num(&mut it, a)?),
            "--after" => f.after = num(&mut it, a)?,
            "--exit" => f.exit = Some(num(&mut it, a)?),
            "--stdout" => f.stdout = Some(value(&mut it, a)?.clone()),
            "--stderr" => f.stderr = Some(value(&mut it, a)?.clone()),
            "--no-newline" => f.no_newline = true,
            "--delay-ms" => f.delay_ms = num(&mut it, a)?,
            "--hang" => f.hang = true,
            "--signal" => f.signal = Some(num(&mut it, a)?),
            "--big-stdout" => f.big_stdout = Some(num(&mut it, a)?),
            "--invalid-utf8" => f.invalid_utf8 = true,
            _ => {
                return Err(Outcome::usage(format!(
                    "fake herdr: unknown option: {a}\n{usage}"
                )))
            }
        }
    }
    st.faults.push(f);
    Ok(json!({"ok": true, "fault": st.faults.len() - 1}))
}

fn fake_faults(st: &mut State, args: &[String]) -> Result<Value, Outcome> {
    match args {
        [] => serde_json::to_value(&st.faults).map_err(|e| fail(e.to_string())),
        [c] if c == "--clear" => {
            st.faults.clear();
            Ok(json!({"ok": true}))
        }
        _ => Err(Outcome::usage("usage: herdr fake faults [--clear]")),
    }
}

/// `fake config`: print the resolved settings; `fake config KEY VALUE` sets one,
/// `fake config KEY --unset` removes it (back to the environment or the default).
fn fake_config(st: &mut State, args: &[String]) -> Result<Value, Outcome> {
    let usage = "usage: herdr fake config [KEY VALUE|KEY --unset]";
    match args {
        [] => {}
        [k, u] if u == "--unset" => {
            if !KEYS.iter().any(|x| x.name == k) {
                return Err(Outcome::usage(format!(
                    "fake herdr: unknown setting {k}\n{usage}"
                )));
            }
            st.config.remove(k);
        }
        [k, v] => {
            Settings::check(k, v).map_err(|e| Outcome::usage(format!("fake herdr: {e}")))?;
            st.config.insert(k.clone(), v.clone());
        }
        _ => return Err(Outcome::usage(usage)),
    }
    let s = Settings::resolve(Some(&st.config)).map_err(fail)?;
    Ok(json!({
        "version": s.version.as_str(),
        "protocol": s.version.protocol(),
        "settle_ms": s.settle_ms,
        "shell_start_ms": s.shell_start_ms,
        "busy_retry_ms": s.busy_retry_ms,
        "poll_ms": s.poll_ms,
        "start_status": s.start_status,
        "config": st.config,
    }))
}

/// `fake env <pane>`: the Herdr variables a process started in that pane gets, as the played
/// version sets them (0.8.0: no `HERDR_BIN_PATH`; 0.8.2: the running herdr executable), over
/// the pane's `--env` pairs. Values are those at launch: a moved pane keeps its first id.
fn fake_env(st: &State, args: &[String]) -> Result<Value, Outcome> {
    let [pane] = args else {
        return Err(Outcome::usage("usage: herdr fake env <pane>"));
    };
    let Some(l) = st.find_any(pane) else {
        return Err(fail(format!("pane {pane} not found")));
    };
    let settings = Settings::resolve(Some(&st.config)).map_err(fail)?;
    let p = st.pane(l);
    let launch_id = p.aliases.first().unwrap_or(&p.id).clone();
    let workspace = launch_id
        .split_once(':')
        .map(|(w, _)| w.to_string())
        .unwrap_or_else(|| st.workspaces[l.0].id.clone());
    let mut env: serde_json::Map<String, Value> =
        p.env.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    env.insert("HERDR_ENV".into(), json!("1"));
    env.insert(
        "HERDR_SOCKET_PATH".into(),
        json!(Env::from_process().socket().0),
    );
    if settings.version.at_least_082() {
        let exe = std::env::current_exe().map_err(|e| fail(format!("current exe: {e}")))?;
        env.insert("HERDR_BIN_PATH".into(), json!(exe.to_string_lossy()));
    }
    env.insert("HERDR_WORKSPACE_ID".into(), json!(workspace));
    env.insert(
        "HERDR_TAB_ID".into(),
        json!(st.workspaces[l.0].tabs[l.1].id),
    );
    env.insert("HERDR_PANE_ID".into(), json!(launch_id));
    Ok(Value::Object(env))
}
