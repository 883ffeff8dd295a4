//! The simulated Herdr world: workspaces, tabs, panes and their occupants, plus
//! persistence (exclusive `flock` + atomic rename) and the record views
//! (AgentInfo, PaneInfo, TabInfo, WorkspaceInfo) exactly as Herdr prints them.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;

use crate::ids;
use crate::submit::{self, Input};

/// Files the fake uses, all derived from `HERDR_FAKE_STATE`.
#[derive(Debug, Clone)]
pub struct Paths {
    /// The state JSON file.
    pub state: PathBuf,
    /// Lock file taken with `flock(LOCK_EX)` around every access.
    pub lock: PathBuf,
    /// Argv log (`.argv.jsonl`).
    pub argv_log: PathBuf,
    /// Prompt log (`.prompts.jsonl`).
    pub prompts: PathBuf,
}

impl Paths {
    /// Paths from the `HERDR_FAKE_STATE` environment variable, if set and non-empty.
    pub fn from_env() -> Option<Paths> {
        let base = std::env::var_os("HERDR_FAKE_STATE")?;
        if base.is_empty() {
            return None;
        }
        let with = |suffix: &str| {
            let mut s = base.clone();
            s.push(suffix);
            PathBuf::from(s)
        };
        Some(Paths {
            state: PathBuf::from(&base),
            lock: with(".lock"),
            argv_log: with(".argv.jsonl"),
            prompts: with(".prompts.jsonl"),
        })
    }

    /// Take the exclusive lock; it is released when the returned file is dropped.
    pub fn lock(&self) -> io::Result<File> {
        let f = OpenOptions::new()
            .create(true)
            .read(true)
            .write(true)
            .truncate(false)
            .open(&self.lock)?;
        loop {
            // SAFETY: flock on a valid, owned file descriptor.
            let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) };
            if r == 0 {
                return Ok(f);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Load the state, brought up to the present ([`State::reconcile`]); `Ok(None)` when the
    /// file does not exist ("no server").
    pub fn load(&self) -> Result<Option<State>, String> {
        let bytes = match fs::read(&self.state) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(format!(
                    "cannot read state file {}: {e}",
                    self.state.display()
                ))
            }
        };
        let mut st = serde_json::from_slice::<State>(&bytes)
            .map_err(|e| format!("invalid state file {}: {e}", self.state.display()))?;
        st.reconcile(crate::settings::now_ms());
        st.press_due_enters(submit::now_us());
        Ok(Some(st))
    }

    /// Write the state atomically (temp file + rename), then log the submissions its loading
    /// pressed (see submit.rs). Call with the lock held.
    pub fn save(&self, st: &State) -> Result<(), String> {
        let text = serde_json::to_vec(st).map_err(|e| format!("cannot encode state: {e}"))?;
        let mut tmp = self.state.clone().into_os_string();
        tmp.push(format!(".tmp.{}", std::process::id()));
        let tmp = PathBuf::from(tmp);
        let write = || -> io::Result<()> {
            let mut f = File::create(&tmp)?;
            f.write_all(&text)?;
            drop(f);
            fs::rename(&tmp, &self.state)
        };
        write().map_err(|e| {
            let _ = fs::remove_file(&tmp);
            format!("cannot write state file {}: {e}", self.state.display())
        })?;
        for s in st.take_submissions() {
            let _ = Paths::append(&self.prompts, &crate::sorted::to_sorted(&s));
        }
        Ok(())
    }

    /// Append one line to a `.jsonl` log (O_APPEND). Call with the lock held.
    pub fn append(path: &PathBuf, line: &str) -> io::Result<()> {
        let mut f = OpenOptions::new().create(true).append(true).open(path)?;
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
        f.write_all(&buf)
    }
}

/// A hook report (`pane report-agent`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    /// `--source`.
    pub source: String,
    /// Normalized `--agent` label.
    pub agent: String,
}

/// One pane and its terminal occupant.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pane {
    /// Current public pane id.
    pub id: String,
    /// Old ids after moves (accepted by pane get/close/split, not by agent targets).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Terminal id (`term_<hex>`), stable across moves.
    pub terminal_id: String,
    /// Pane cwd.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Manual pane label.
    #[serde(default)]
    pub label: Option<String>,
    /// Revision counter.
    #[serde(default)]
    pub revision: u64,
    /// State change counter.
    #[serde(default)]
    pub state_change_seq: u64,
    /// Agent kind of the foreground process (None = plain shell at its prompt).
    #[serde(default)]
    pub process: Option<String>,
    /// Whether Herdr has detected `process`.
    #[serde(default = "yes")]
    pub detected: bool,
    /// Agent name.
    #[serde(default)]
    pub name: Option<String>,
    /// Agent state: idle | working | blocked | done | unknown.
    #[serde(default = "idle")]
    pub status: String,
    /// Hook authority from `pane report-agent`.
    #[serde(default)]
    pub report: Option<Report>,
    /// `agent start` still pending.
    #[serde(default)]
    pub launch_pending: bool,
    /// `agent start` finished and the agent is interactive.
    #[serde(default)]
    pub interactive_ready: bool,
    /// The argv `agent start` launched (for inspection).
    #[serde(default)]
    pub launch_argv: Option<Vec<String>>,
    /// `--env` pairs given at creation (for inspection).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// `agent prompt` to this pane fails with `agent_prompt_failed` (a failed PTY write).
    #[serde(default)]
    pub prompt_fails: bool,
    /// The new pane's shell is still starting until this time (ms since the epoch).
    #[serde(default)]
    pub shell_ready_at_ms: Option<u64>,
    /// `agent start`: the new agent stays `unknown` until this time (ms since the epoch).
    #[serde(default)]
    pub settle_at_ms: Option<u64>,
    /// `agent start`: the status the new agent settles into.
    #[serde(default)]
    pub settle_status: Option<String>,
    /// 0.8.0 `agent start`: a new agent that settles `blocked` is ready too.
    #[serde(default)]
    pub settle_blocked_ready: bool,
    /// Typed text not yet submitted and the Enters still to come (Herdr's submit delay).
    #[serde(default, skip_serializing_if = "Input::is_empty")]
    pub input: Input,
}

fn yes() -> bool {
    true
}
fn idle() -> String {
    "idle".to_string()
}

impl Pane {
    /// A fresh plain-shell pane.
    pub fn shell(id: String, terminal_id: String, cwd: Option<String>) -> Pane {
        Pane {
            id,
            aliases: Vec::new(),
            terminal_id,
            cwd,
            label: None,
            revision: 0,
            state_change_seq: 0,
            process: None,
            detected: true,
            name: None,
            status: idle(),
            report: None,
            launch_pending: false,
            interactive_ready: false,
            launch_argv: None,
            env: BTreeMap::new(),
            prompt_fails: false,
            shell_ready_at_ms: None,
            settle_at_ms: None,
            settle_status: None,
            settle_blocked_ready: false,
            input: Input::default(),
        }
    }

    /// Whether the pane's shell is still starting at `now_ms`.
    pub fn shell_starting(&self, now_ms: u64) -> bool {
        self.shell_ready_at_ms.is_some_and(|t| now_ms < t)
    }

    /// The detected process kind, if any.
    pub fn detected_process(&self) -> Option<&str> {
        if self.detected {
            self.process.as_deref()
        } else {
            None
        }
    }

    /// Effective agent label: the hook report, else the detected process kind.
    pub fn effective_label(&self) -> Option<&str> {
        if let Some(r) = &self.report {
            return Some(r.agent.as_str());
        }
        self.detected_process()
    }

    /// `is_agent_terminal`: a name, or an effective label.
    pub fn is_agent_terminal(&self) -> bool {
        self.name.is_some() || self.effective_label().is_some()
    }

    /// Public `agent_status`.
    pub fn agent_status(&self) -> &str {
        if self.effective_label().is_none() {
            "unknown"
        } else {
            self.status.as_str()
        }
    }

    /// Debug-style internal state name used in candidate lists.
    pub fn state_debug(&self) -> &'static str {
        match self.agent_status() {
            "idle" | "done" => "Idle",
            "working" => "Working",
            "blocked" => "Blocked",
            _ => "Unknown",
        }
    }

    /// Bump the revision (and the state change counter when `status_changed`).
    pub fn touch(&mut self, status_changed: bool) {
        self.revision += 1;
        if status_changed {
            self.state_change_seq += 1;
        }
    }
}

/// A tab.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tab {
    /// Public tab id.
    pub id: String,
    /// Stable tab number.
    pub number: u64,
    /// Custom label.
    #[serde(default)]
    pub label: Option<String>,
    /// The tab's focused pane id.
    #[serde(default)]
    pub focused_pane: Option<String>,
    /// Panes in layout order.
    pub panes: Vec<Pane>,
}

/// A workspace.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Workspace {
    /// Public workspace id.
    pub id: String,
    /// Custom label.
    #[serde(default)]
    pub label: Option<String>,
    /// Workspace cwd (default cwd for new tabs).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Next tab number.
    pub next_tab: u64,
    /// Next pane number.
    pub next_pane: u64,
    /// Active tab id.
    #[serde(default)]
    pub active_tab: Option<String>,
    /// Tabs in order.
    pub tabs: Vec<Tab>,
}

/// An injected fault (`herdr fake fault`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Fault {
    /// Command area (`agent`, `pane`, ...) or `*`.
    pub area: String,
    /// Command verb or `*`.
    pub verb: String,
    /// Apply to this many matching calls (None = all).
    #[serde(default)]
    pub times: Option<u64>,
    /// Skip this many matching calls first.
    #[serde(default)]
    pub after: u64,
    /// Exit code.
    #[serde(default)]
    pub exit: Option<i32>,
    /// Text for stdout.
    #[serde(default)]
    pub stdout: Option<String>,
    /// Text for stderr.
    #[serde(default)]
    pub stderr: Option<String>,
    /// Do not append `\n` to --stdout/--stderr texts.
    #[serde(default)]
    pub no_newline: bool,
    /// Sleep first.
    #[serde(default)]
    pub delay_ms: u64,
    /// Sleep ~forever.
    #[serde(default)]
    pub hang: bool,
    /// Kill self with this signal.
    #[serde(default)]
    pub signal: Option<i32>,
    /// Print this many junk bytes.
    #[serde(default)]
    pub big_stdout: Option<u64>,
    /// Print invalid UTF-8.
    #[serde(default)]
    pub invalid_utf8: bool,
    /// How many matching calls have been seen.
    #[serde(default)]
    pub matched: u64,
}

impl Fault {
    /// Whether this fault replaces the normal behaviour (no state change).
    pub fn replaces(&self) -> bool {
        self.exit.is_some()
            || self.stdout.is_some()
            || self.stderr.is_some()
            || self.hang
            || self.signal.is_some()
            || self.big_stdout.is_some()
            || self.invalid_utf8
    }
}

/// The whole world.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    /// Format version.
    pub version: u32,
    /// Next workspace number.
    pub next_workspace: u64,
    /// Terminal id counter.
    pub term_counter: u64,
    /// Active workspace id.
    #[serde(default)]
    pub active_workspace: Option<String>,
    /// Workspaces in sidebar order.
    #[serde(default)]
    pub workspaces: Vec<Workspace>,
    /// Injected faults.
    #[serde(default)]
    pub faults: Vec<Fault>,
    /// Settings (`herdr fake config`): version and simulated delays; see settings.rs.
    #[serde(default)]
    pub config: BTreeMap<String, String>,
    /// 0.9.0 submissions lost with their pane before their Enter (the newest [`LOST_CAP`]):
    /// the CLI call waiting for one answers `agent_prompt_failed`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost_submissions: Vec<String>,
    /// The simulated server (`herdr fake server`): running or stopped, its protocol; see
    /// server.rs.
    #[serde(default)]
    pub server: Server,
    /// Submissions pressed while loading, logged when this state is saved (never stored).
    #[serde(skip)]
    pub submitted: RefCell<Vec<Value>>,
}

/// How many lost submission ids the state keeps.
pub const LOST_CAP: usize = 4096;
/// The Herdr server the CLI meets (part of the state; a fresh world has a running server of the
/// played version's protocol). What the CLI answers in each state is in server.rs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Server {
    /// Stopped: every socket command answers `server_not_running`; the world is kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stopped: bool,
    /// The server's protocol, when it is not the CLI's own (Herdr upgraded or downgraded while
    /// its server runs): every socket command answers `protocol_mismatch`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<u32>,
}

/// Location of a pane: (workspace index, tab index, pane index).
pub type Loc = (usize, usize, usize);

/// A server-side error (`{"error":{"code","message"}}`).
#[derive(Debug, Clone)]
pub struct ApiError {
    /// Error code.
    pub code: &'static str,
    /// Message.
    pub message: String,
}

impl ApiError {
    /// Build an error.
    pub fn new(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            message: message.into(),
        }
    }
}

const STATUS_RANK: [&str; 5] = ["unknown", "idle", "done", "working", "blocked"];

fn aggregate<'a>(panes: impl Iterator<Item = &'a Pane>) -> &'static str {
    let mut best = 0;
    for p in panes.filter(|p| p.is_agent_terminal()) {
        let s = p.agent_status();
        if let Some(i) = STATUS_RANK.iter().position(|r| *r == s) {
            best = best.max(i);
        }
    }
    STATUS_RANK[best]
}

fn put(m: &mut Map<String, Value>, k: &str, v: Option<&str>) {
    if let Some(v) = v {
        m.insert(k.to_string(), Value::String(v.to_string()));
    }
}

impl Default for State {
    fn default() -> Self {
        State::new()
    }
}

impl State {
    /// An empty world (a bare `herdr server`: zero workspaces).
    pub fn new() -> State {
        State {
            version: 1,
            next_workspace: 1,
            term_counter: 0,
            active_workspace: None,
            workspaces: Vec::new(),
            faults: Vec::new(),
            config: BTreeMap::new(),
            lost_submissions: Vec::new(),
            server: Server::default(),
            submitted: RefCell::default(),
        }
    }

    /// What the server does as time passes: shells finish starting, and an agent start that
    /// has settled becomes detected with its final status (ready when `idle`, or `blocked` on
    /// 0.8.0).
    pub fn reconcile(&mut self, now_ms: u64) {
        for l in self.locs() {
            let p = self.pane_mut(l);
            if p.shell_ready_at_ms.is_some_and(|t| now_ms >= t) {
                p.shell_ready_at_ms = None;
            }
            if p.settle_at_ms.is_some_and(|t| now_ms >= t) {
                p.settle_at_ms = None;
                let status = p.settle_status.take().unwrap_or_else(idle);
                p.detected = true;
                let changed = p.status != status;
                if p.launch_pending
                    && (status == "idle" || status == "blocked" && p.settle_blocked_ready)
                {
                    p.launch_pending = false;
                    p.interactive_ready = true;
                }
                p.status = status;
                p.touch(changed);
            }
        }
    }

    /// A fresh terminal id `term_<hex micros><hex counter>`.
    pub fn new_terminal_id(&mut self) -> String {
        self.term_counter += 1;
        let micros = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as u64)
            .unwrap_or(0);
        format!("term_{micros:x}{:x}", self.term_counter)
    }

    /// Pane at a location.
    pub fn pane(&self, l: Loc) -> &Pane {
        &self.workspaces[l.0].tabs[l.1].panes[l.2]
    }

    /// Mutable pane at a location.
    pub fn pane_mut(&mut self, l: Loc) -> &mut Pane {
        &mut self.workspaces[l.0].tabs[l.1].panes[l.2]
    }

    /// All pane locations in order (workspaces, tabs, panes).
    pub fn locs(&self) -> Vec<Loc> {
        let mut v = Vec::new();
        for (wi, w) in self.workspaces.iter().enumerate() {
            for (ti, t) in w.tabs.iter().enumerate() {
                for pi in 0..t.panes.len() {
                    v.push((wi, ti, pi));
                }
            }
        }
        v
    }

    /// Exact current public pane id.
    pub fn find_current(&self, id: &str) -> Option<Loc> {
        self.locs().into_iter().find(|l| self.pane(*l).id == id)
    }

    /// Current id, else an alias (what `parse_pane_id` accepts).
    pub fn find_any(&self, id: &str) -> Option<Loc> {
        self.find_current(id).or_else(|| {
            self.locs()
                .into_iter()
                .find(|l| self.pane(*l).aliases.iter().any(|a| a == id))
        })
    }

    /// Workspace index by exact id, `w_<N>` or `<N>` (1-based index).
    pub fn find_workspace(&self, id: &str) -> Option<usize> {
        if let Some(i) = self.workspaces.iter().position(|w| w.id == id) {
            return Some(i);
        }
        let n = id.strip_prefix("w_").unwrap_or(id).parse::<usize>().ok()?;
        if n >= 1 && n <= self.workspaces.len() {
            Some(n - 1)
        } else {
            None
        }
    }

    /// Tab location by exact id or `<ws>:<N>` (1-based index).
    pub fn find_tab(&self, id: &str) -> Option<(usize, usize)> {
        for (wi, w) in self.workspaces.iter().enumerate() {
            if let Some(ti) = w.tabs.iter().position(|t| t.id == id) {
                return Some((wi, ti));
            }
        }
        let (ws, n) = id.rsplit_once(':')?;
        let n = n.parse::<usize>().ok()?;
        let wi = self.workspaces.iter().position(|w| w.id == ws)?;
        if n >= 1 && n <= self.workspaces[wi].tabs.len() {
            Some((wi, n - 1))
        } else {
            None
        }
    }

    /// Panes holding a name.
    pub fn named(&self, name: &str) -> Vec<Loc> {
        self.locs()
            .into_iter()
            .filter(|l| self.pane(*l).name.as_deref() == Some(name))
            .collect()
    }

    /// `candidates: ...` text listing panes.
    pub fn candidates(&self, locs: &[Loc]) -> String {
        locs.iter()
            .map(|l| {
                let p = self.pane(*l);
                let w = &self.workspaces[l.0];
                format!(
                    "terminal_id={} pane_id={} workspace_id={} tab_id={} cwd={} status={}",
                    p.terminal_id,
                    p.id,
                    w.id,
                    w.tabs[l.1].id,
                    p.cwd.as_deref().unwrap_or(""),
                    p.state_debug()
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// `App::resolve_agent_target`: exact current pane id of an agent terminal,
    /// else exactly one live agent name.
    pub fn resolve_agent(&self, target: &str) -> Result<Loc, ApiError> {
        if let Some(l) = self.find_current(target) {
            if self.pane(l).is_agent_terminal() {
                return Ok(l);
            }
        }
        let named = self.named(target);
        match named.len() {
            0 => Err(ApiError::new(
                "agent_not_found",
                format!("agent target {target} not found"),
            )),
            1 => Ok(named[0]),
            _ => Err(ApiError::new(
                "agent_target_ambiguous",
                format!(
                    "agent target {target} is ambiguous; candidates: {}",
                    self.candidates(&named)
                ),
            )),
        }
    }

    /// Whether the pane at `l` is the focused pane of the active tab of the active workspace.
    pub fn pane_focused(&self, l: Loc) -> bool {
        let w = &self.workspaces[l.0];
        let t = &w.tabs[l.1];
        self.active_workspace.as_deref() == Some(w.id.as_str())
            && w.active_tab.as_deref() == Some(t.id.as_str())
            && t.focused_pane.as_deref() == Some(t.panes[l.2].id.as_str())
    }

    /// Whether the tab is the active tab of the active workspace.
    pub fn tab_focused(&self, wi: usize, ti: usize) -> bool {
        let w = &self.workspaces[wi];
        self.active_workspace.as_deref() == Some(w.id.as_str())
            && w.active_tab.as_deref() == Some(w.tabs[ti].id.as_str())
    }

    /// Make the pane focused (and its tab and workspace active).
    pub fn focus(&mut self, l: Loc) {
        let pid = self.pane(l).id.clone();
        let tid = self.workspaces[l.0].tabs[l.1].id.clone();
        let wid = self.workspaces[l.0].id.clone();
        self.workspaces[l.0].tabs[l.1].focused_pane = Some(pid);
        self.workspaces[l.0].active_tab = Some(tid);
        self.active_workspace = Some(wid);
    }

    /// AgentInfo for the pane at `l`.
    pub fn agent_info(&self, l: Loc) -> Value {
        let p = self.pane(l);
        let w = &self.workspaces[l.0];
        let mut m = Map::new();
        m.insert("terminal_id".into(), json!(p.terminal_id));
        m.insert("agent_status".into(), json!(p.agent_status()));
        m.insert("workspace_id".into(), json!(w.id));
        m.insert("tab_id".into(), json!(w.tabs[l.1].id));
        m.insert("pane_id".into(), json!(p.id));
        m.insert("focused".into(), json!(self.pane_focused(l)));
        m.insert("state_change_seq".into(), json!(p.state_change_seq));
        m.insert("revision".into(), json!(p.revision));
        put(&mut m, "name", p.name.as_deref());
        put(&mut m, "agent", p.effective_label());
        put(&mut m, "cwd", p.cwd.as_deref());
        // The foreground process's cwd: the agent's, or the shell's at its prompt.
        put(&mut m, "foreground_cwd", p.cwd.as_deref());
        if p.launch_pending {
            m.insert("launch_pending".into(), json!(true));
        }
        if p.interactive_ready {
            m.insert("interactive_ready".into(), json!(true));
        }
        Value::Object(m)
    }

    /// PaneInfo for the pane at `l`, as every command that answers one gives it (`pane get`,
    /// `pane list`, `pane split`, the `root_pane` of `tab create` / `workspace create`).
    pub fn pane_info(&self, l: Loc) -> Value {
        let p = self.pane(l);
        let w = &self.workspaces[l.0];
        let mut m = Map::new();
        m.insert("pane_id".into(), json!(p.id));
        m.insert("terminal_id".into(), json!(p.terminal_id));
        m.insert("workspace_id".into(), json!(w.id));
        m.insert("tab_id".into(), json!(w.tabs[l.1].id));
        m.insert("focused".into(), json!(self.pane_focused(l)));
        m.insert("agent_status".into(), json!(p.agent_status()));
        m.insert("revision".into(), json!(p.revision));
        put(&mut m, "cwd", p.cwd.as_deref());
        put(&mut m, "foreground_cwd", p.cwd.as_deref());
        put(&mut m, "label", p.label.as_deref());
        put(&mut m, "agent", p.effective_label());
        m.insert(
            "scroll".into(),
            json!({"offset_from_bottom":0,"max_offset_from_bottom":0,"viewport_rows":40}),
        );
        Value::Object(m)
    }

    /// TabInfo.
    pub fn tab_info(&self, wi: usize, ti: usize) -> Value {
        let w = &self.workspaces[wi];
        let t = &w.tabs[ti];
        let label = t.label.clone().unwrap_or_else(|| (ti + 1).to_string());
        json!({
            "tab_id": t.id,
            "workspace_id": w.id,
            "number": t.number,
            "label": label,
            "focused": self.tab_focused(wi, ti),
            "pane_count": t.panes.len(),
            "agent_status": aggregate(t.panes.iter()),
        })
    }

    /// WorkspaceInfo.
    pub fn workspace_info(&self, wi: usize) -> Value {
        let w = &self.workspaces[wi];
        let label = w.label.clone().unwrap_or_else(|| {
            w.cwd
                .as_deref()
                .and_then(|c| c.trim_end_matches('/').rsplit('/').next())
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .unwrap_or_else(|| (wi + 1).to_string())
        });
        let active = w
            .active_tab
            .clone()
            .or_else(|| w.tabs.first().map(|t| t.id.clone()))
            .unwrap_or_default();
        json!({
            "workspace_id": w.id,
            "number": wi + 1,
            "label": label,
            "focused": self.active_workspace.as_deref() == Some(w.id.as_str()),
            "pane_count": w.tabs.iter().map(|t| t.panes.len()).sum::<usize>(),
            "tab_count": w.tabs.len(),
            "active_tab_id": active,
            "agent_status": aggregate(w.tabs.iter().flat_map(|t| t.panes.iter())),
        })
    }

    /// Allocate the next pane id of workspace `wi`.
    pub fn alloc_pane_id(&mut self, wi: usize) -> String {
        let w = &mut self.workspaces[wi];
        let id = ids::pane_id(&w.id, w.next_pane);
        w.next_pane += 1;
        id
    }

    /// Allocate the next tab id (and its number) of workspace `wi`.
    pub fn alloc_tab(&mut self, wi: usize) -> (String, u64) {
        let w = &mut self.workspaces[wi];
        let n = w.next_tab;
        w.next_tab += 1;
        (ids::tab_id(&w.id, n), n)
    }

    /// Create a workspace with one tab and one shell pane; returns its index.
    pub fn create_workspace(&mut self, label: Option<String>, cwd: Option<String>) -> usize {
        let n = self.next_workspace;
        self.next_workspace += 1;
        self.workspaces.push(Workspace {
            id: ids::workspace_id(n),
            label,
            cwd: cwd.clone(),
            next_tab: 1,
            next_pane: 1,
            active_tab: None,
            tabs: Vec::new(),
        });
        let wi = self.workspaces.len() - 1;
        self.create_tab(wi, None, cwd);
        if self.active_workspace.is_none() {
            self.active_workspace = Some(self.workspaces[wi].id.clone());
        }
        wi
    }

    /// Create a tab with one shell pane in workspace `wi`; returns its index.
    pub fn create_tab(&mut self, wi: usize, label: Option<String>, cwd: Option<String>) -> usize {
        let (tid, number) = self.alloc_tab(wi);
        let pid = self.alloc_pane_id(wi);
        let term = self.new_terminal_id();
        let w = &mut self.workspaces[wi];
        w.tabs.push(Tab {
            id: tid.clone(),
            number,
            label,
            focused_pane: Some(pid.clone()),
            panes: vec![Pane::shell(pid, term, cwd)],
        });
        if w.active_tab.is_none() {
            w.active_tab = Some(tid);
        }
        w.tabs.len() - 1
    }

    /// Remove a pane; an emptied tab is closed, an emptied workspace too.
    /// Returns the removed pane.
    pub fn remove_pane(&mut self, l: Loc) -> Pane {
        let pane = self.workspaces[l.0].tabs[l.1].panes.remove(l.2);
        self.lose_input(&pane);
        let tab = &mut self.workspaces[l.0].tabs[l.1];
        if tab.panes.is_empty() {
            self.remove_tab(l.0, l.1);
        } else if tab.focused_pane.as_deref() == Some(pane.id.as_str()) {
            let next = l.2.min(tab.panes.len() - 1);
            tab.focused_pane = Some(tab.panes[next].id.clone());
        }
        pane
    }

    /// Remove a tab; an emptied workspace is closed.
    pub fn remove_tab(&mut self, wi: usize, ti: usize) {
        let tab = self.workspaces[wi].tabs.remove(ti);
        for p in &tab.panes {
            self.lose_input(p);
        }
        let w = &mut self.workspaces[wi];
        if w.tabs.is_empty() {
            let wid = w.id.clone();
            self.workspaces.remove(wi);
            if self.active_workspace.as_deref() == Some(wid.as_str()) {
                self.active_workspace = if self.workspaces.is_empty() {
                    None
                } else {
                    let next = wi.min(self.workspaces.len() - 1);
                    Some(self.workspaces[next].id.clone())
                };
            }
        } else if w.active_tab.as_deref() == Some(tab.id.as_str()) {
            let next = ti.min(w.tabs.len() - 1);
            w.active_tab = Some(w.tabs[next].id.clone());
        }
    }
}

/// What a pane's Enters submitted, as the prompt log records it, and the 0.9.0 submissions a
/// closed pane took with it.
impl State {
    /// Press every Enter due by `now_us`, across all panes in time order. Each submission is
    /// queued in [`State::submitted`] and written to the prompt log when this state is saved.
    pub fn press_due_enters(&mut self, now_us: u64) {
        let mut due: Vec<(u64, Loc, submit::Submitted)> = Vec::new();
        for l in self.locs() {
            for s in self.pane_mut(l).input.press(now_us) {
                due.push((s.at_us, l, s));
            }
        }
        due.sort_by_key(|(t, l, _)| (*t, *l));
        for (_, l, s) in due {
            let p = self.pane(l);
            let text: String = s.parts.iter().map(|x| x.text.as_str()).collect();
            let record = json!({
                "target": s.parts[0].target,
                "pane_id": p.id,
                "name": p.name,
                "text": text,
                "parts": s.parts.len(),
            });
            self.submitted.borrow_mut().push(record);
        }
    }

    /// The latest Enter still to come on any pane (µs since the epoch), if any.
    pub fn last_enter_due(&self) -> Option<u64> {
        self.locs()
            .into_iter()
            .filter_map(|l| self.pane(l).input.last_enter_due())
            .max()
    }

    /// Whether pressed Enters produced submissions this state has not logged yet.
    pub fn has_unlogged_submissions(&self) -> bool {
        !self.submitted.borrow().is_empty()
    }

    /// Takes the submissions to log (the caller is saving this state).
    pub fn take_submissions(&self) -> Vec<Value> {
        std::mem::take(&mut *self.submitted.borrow_mut())
    }

    /// Whether the 0.9.0 submission `id` was lost with its pane.
    pub fn submission_lost(&self, id: &str) -> bool {
        self.lost_submissions.iter().any(|x| x == id)
    }

    /// A pane is gone: what it had typed is lost, and its queued submissions fail.
    fn lose_input(&mut self, pane: &Pane) {
        self.lost_submissions
            .extend(pane.input.unsubmitted().map(str::to_string));
        let over = self.lost_submissions.len().saturating_sub(LOST_CAP);
        self.lost_submissions.drain(..over);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world(panes: usize) -> State {
        let mut st = State::new();
        st.workspaces.push(Workspace {
            id: "w1".into(),
            label: None,
            cwd: None,
            next_tab: 2,
            next_pane: panes as u64 + 1,
            active_tab: None,
            tabs: vec![Tab {
                id: "w1:t1".into(),
                number: 1,
                label: None,
                focused_pane: None,
                panes: (1..=panes)
                    .map(|i| Pane::shell(format!("w1:p{i}"), format!("term_{i}"), None))
                    .collect(),
            }],
        });
        st
    }

    fn typed(st: &mut State, pane: usize, text: &str, at_ms: u64) {
        st.press_due_enters(at_ms * 1000);
        st.pane_mut((0, 0, pane))
            .input
            .type_prompt("t", text, at_ms * 1000);
    }

    fn texts(st: &State) -> Vec<(String, u64)> {
        st.take_submissions()
            .iter()
            .map(|v| {
                (
                    v["text"].as_str().unwrap().to_string(),
                    v["parts"].as_u64().unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn submissions_come_out_in_time_order_across_panes() {
        let mut st = world(2);
        typed(&mut st, 1, "late-pane-first", 0);
        typed(&mut st, 0, "x", 100);
        typed(&mut st, 1, "y", 500);
        st.press_due_enters(10_000_000);
        assert_eq!(
            texts(&st),
            [
                ("late-pane-first".to_string(), 1),
                ("x".to_string(), 1),
                ("y".to_string(), 1)
            ]
        );
        assert_eq!(st.last_enter_due(), None);
    }

    #[test]
    fn last_enter_due_is_the_latest_pending_one() {
        let mut st = world(2);
        typed(&mut st, 0, "a", 1000);
        typed(&mut st, 1, "b", 1100);
        assert_eq!(
            st.last_enter_due(),
            Some(1_100_000 + submit::SUBMIT_DELAY_US)
        );
    }

    #[test]
    fn a_closed_pane_loses_its_queued_submissions() {
        let mut st = world(2);
        let input = &mut st.pane_mut((0, 0, 1)).input;
        input.queue_submission("s1".into(), "t", "a", 0).unwrap();
        input.queue_submission("s2".into(), "t", "b", 0).unwrap();
        st.press_due_enters(400_000); // s1 submitted, s2 typed
        assert_eq!(texts(&st), [("a".to_string(), 1)]);
        st.remove_pane((0, 0, 1));
        assert!(st.submission_lost("s2"));
        assert!(!st.submission_lost("s1"));
        st.press_due_enters(10_000_000);
        assert!(texts(&st).is_empty(), "nothing from the closed pane");
    }
}
