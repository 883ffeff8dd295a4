//! `herdr-link doctor`: a read-only diagnosis for operators. One `PASS`/`FAIL` line per check;
//! the exit code is 0 when every check passes, else 1.
//!
//! It runs only `herdr --version`, `agent get <pane>` and `agent list`, never renames or
//! prompts anything, and (being for operators, not models) shows pane and workspace ids.

use std::ffi::CString;
use std::io::Write;
use std::path::Path;

use herdr_link::env::HerdrEnv;
use herdr_link::herdr::records::{self, AgentRecord};
use herdr_link::herdr::Herdr;

/// One check's outcome.
struct Check {
    name: &'static str,
    ok: bool,
    detail: String,
}

fn pass(name: &'static str, detail: impl Into<String>) -> Check {
    Check {
        name,
        ok: true,
        detail: detail.into(),
    }
}

fn fail(name: &'static str, detail: impl Into<String>) -> Check {
    Check {
        name,
        ok: false,
        detail: detail.into(),
    }
}

fn var(key: &str) -> Option<String> {
    std::env::var(key).ok().filter(|v| !v.is_empty())
}

/// The pane a plugin action was invoked for (`focused_pane_id` of
/// `HERDR_PLUGIN_CONTEXT_JSON`), if any.
fn plugin_focused_pane() -> Option<String> {
    let ctx: serde_json::Value = serde_json::from_str(&var("HERDR_PLUGIN_CONTEXT_JSON")?).ok()?;
    ctx.get("focused_pane_id")?
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn environment() -> Check {
    let mut missing = Vec::new();
    if var("HERDR_ENV").as_deref() != Some("1") {
        missing.push("HERDR_ENV=1");
    }
    let bin = var("HERDR_BIN_PATH");
    if bin.is_none() {
        missing.push("HERDR_BIN_PATH");
    }
    let pane = var("HERDR_PANE_ID");
    if pane.is_none() {
        missing.push("HERDR_PANE_ID");
    }
    if missing.is_empty() {
        let socket = match var("HERDR_SOCKET_PATH") {
            Some(s) => format!(", HERDR_SOCKET_PATH={s}"),
            None => String::new(),
        };
        pass(
            "environment",
            format!(
                "gate open: HERDR_ENV=1, HERDR_BIN_PATH={}, HERDR_PANE_ID={}{socket}",
                bin.unwrap_or_default(),
                pane.unwrap_or_default()
            ),
        )
    } else {
        fail(
            "environment",
            format!(
                "gate closed, missing {}: the MCP server lists no tools here (hosts such as Codex must forward HERDR_ENV, HERDR_BIN_PATH, HERDR_PANE_ID and HERDR_SOCKET_PATH)",
                missing.join(", ")
            ),
        )
    }
}

fn binary(herdr: &Herdr, bin: &str) -> Check {
    match herdr.version() {
        Ok(v) => pass("herdr binary", format!("{bin} runs and reports {v}")),
        Err(e) => fail(
            "herdr binary",
            format!("{bin} does not run: {}", e.detail()),
        ),
    }
}

fn log_target() -> Check {
    let Some(path) = var("HERDR_LINK_LOG") else {
        return pass(
            "operator log",
            "HERDR_LINK_LOG is not set: no operator log (internal error details are discarded)",
        );
    };
    let p = Path::new(&path);
    let target = if p.exists() {
        if !p.is_file() {
            return fail(
                "operator log",
                format!("HERDR_LINK_LOG={path} is not a regular file"),
            );
        }
        p.to_path_buf()
    } else {
        match p.parent().filter(|d| !d.as_os_str().is_empty()) {
            Some(d) if d.is_dir() => d.to_path_buf(),
            Some(d) => {
                return fail(
                    "operator log",
                    format!(
                        "HERDR_LINK_LOG={path}: directory {} does not exist",
                        d.display()
                    ),
                )
            }
            None => Path::new(".").to_path_buf(),
        }
    };
    if writable(&target) {
        pass(
            "operator log",
            format!("one JSON line per operation is appended to {path}"),
        )
    } else {
        fail(
            "operator log",
            format!("HERDR_LINK_LOG={path} is not writable"),
        )
    }
}

fn writable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// The checks that need the caller's live record: self, its Agent Name, its peers.
fn identity_checks(herdr: &Herdr, pane: Option<&str>) -> Vec<Check> {
    let Some(pane) = pane else {
        let why = "no pane to diagnose: HERDR_PANE_ID is not set (or pass --pane)";
        return vec![
            fail("self record", why),
            fail("agent name", "skipped: no self record"),
            fail("peers", "skipped: no self record"),
        ];
    };
    let record = match herdr.agent_get(pane) {
        Ok(v) => AgentRecord::from_response(&v),
        Err(e) => {
            return vec![
                fail(
                    "self record",
                    format!("agent get {pane} failed: {}", e.detail()),
                ),
                fail("agent name", "skipped: no self record"),
                fail("peers", "skipped: no self record"),
            ]
        }
    };
    let Some(record) = record else {
        return vec![
            fail(
                "self record",
                format!("agent get {pane} returned no agent record"),
            ),
            fail("agent name", "skipped: no self record"),
            fail("peers", "skipped: no self record"),
        ];
    };
    let workspace = record.workspace_id.clone().unwrap_or_default();
    let mut checks = Vec::new();
    checks.push(if !record.is_live() {
        fail(
            "self record",
            format!("the occupant of pane {pane} is not live"),
        )
    } else if workspace.is_empty() {
        fail(
            "self record",
            format!("pane {pane} has no workspace_id: every peer lookup would fail closed"),
        )
    } else {
        pass(
            "self record",
            format!(
                "pane {} in workspace {workspace}, state {}",
                record.pane_id.as_deref().unwrap_or(pane),
                record.state.as_str()
            ),
        )
    });
    let self_name = record.stable_name().map(str::to_string);
    checks.push(match &self_name {
        Some(n) => pass("agent name", n.clone()),
        None if record.is_live() => pass(
            "agent name",
            "unnamed: the bootstrap will name it hl-<8 hex> when the MCP server starts or on its first peers/send",
        ),
        None => fail("agent name", "no name, and the occupant is not live"),
    });
    checks.push(match herdr.agent_list() {
        Err(e) => fail("peers", format!("agent list failed: {}", e.detail())),
        Ok(_) if workspace.is_empty() => fail("peers", "skipped: no self workspace"),
        Ok(v) => {
            let mut seen = Vec::new();
            let peers: Vec<String> = records::agent_list(&v)
                .into_iter()
                .filter(|r| r.workspace_id.as_deref() == Some(workspace.as_str()))
                .filter_map(|r| {
                    let name = r.stable_name()?.to_string();
                    if Some(&name) == self_name.as_ref() || seen.contains(&name) {
                        return None;
                    }
                    seen.push(name.clone());
                    Some(match r.pane_id {
                        Some(p) => format!("{name} ({p}, {})", r.state.as_str()),
                        None => format!("{name} ({})", r.state.as_str()),
                    })
                })
                .collect();
            if peers.is_empty() {
                pass(
                    "peers",
                    format!("no other named live agents in workspace {workspace}"),
                )
            } else {
                pass(
                    "peers",
                    format!(
                        "{} in workspace {workspace}: {}",
                        peers.len(),
                        peers.join(", ")
                    ),
                )
            }
        }
    });
    checks
}

/// Runs every check for `pane` (default: `HERDR_PANE_ID`, then the plugin context's focused
/// pane), prints one line each, and returns the exit code.
pub fn run(pane: Option<String>) -> i32 {
    let mut checks = vec![environment()];
    let bin = var("HERDR_BIN_PATH").unwrap_or_else(|| "herdr".to_string());
    let pane = pane
        .or_else(|| var("HERDR_PANE_ID"))
        .or_else(plugin_focused_pane);
    let herdr = Herdr::new(&HerdrEnv {
        bin: bin.clone(),
        pane_id: pane.clone().unwrap_or_default(),
    });
    let runs = binary(&herdr, &bin);
    let bin_ok = runs.ok;
    checks.push(runs);
    if bin_ok {
        checks.extend(identity_checks(&herdr, pane.as_deref()));
    } else {
        for name in ["self record", "agent name", "peers"] {
            checks.push(fail(name, "skipped: the herdr binary does not run"));
        }
    }
    checks.push(log_target());
    let failed = checks.iter().filter(|c| !c.ok).count();
    let mut out = std::io::stdout().lock();
    for c in &checks {
        let _ = writeln!(
            out,
            "{} {}: {}",
            if c.ok { "PASS" } else { "FAIL" },
            c.name,
            c.detail
        );
    }
    let _ = if failed == 0 {
        writeln!(out, "herdr-link doctor: all {} checks passed", checks.len())
    } else {
        writeln!(
            out,
            "herdr-link doctor: {failed} of {} checks failed",
            checks.len()
        )
    };
    i32::from(failed > 0)
}
