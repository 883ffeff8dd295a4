//! `herdr-link doctor`: a read-only diagnosis for operators. One `PASS`/`FAIL`/`SKIP` line per
//! check (`SKIP` when a check cannot run because an earlier one failed or does not apply); the
//! exit code is 1 when any check failed, else 0.
//!
//! It runs only `herdr --version`, `agent get <pane>` and `agent list`, never renames or prompts
//! anything, never writes the operator log, and (being for operators, not models) shows pane
//! and workspace ids. Run as a Herdr plugin action (`HERDR_PLUGIN_CONTEXT_JSON` set), it
//! diagnoses the pane the action was invoked for.

use std::ffi::CString;
use std::io::Write;
use std::path::Path;

use herdr_link::env::{self, HerdrEnv};
use herdr_link::herdr::records::{self, AgentRecord};
use herdr_link::herdr::Herdr;
use serde_json::Value;

/// How a check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Pass,
    Fail,
    Skip,
}

/// One check's outcome.
struct Check {
    name: &'static str,
    status: Status,
    detail: String,
}

fn pass(name: &'static str, detail: impl Into<String>) -> Check {
    Check {
        name,
        status: Status::Pass,
        detail: detail.into(),
    }
}

fn fail(name: &'static str, detail: impl Into<String>) -> Check {
    Check {
        name,
        status: Status::Fail,
        detail: detail.into(),
    }
}

fn skip(name: &'static str, detail: impl Into<String>) -> Check {
    Check {
        name,
        status: Status::Skip,
        detail: detail.into(),
    }
}

fn var(key: &str) -> Option<String> {
    std::env::var(key).ok().filter(|v| !v.is_empty())
}

/// What a plugin action was invoked for (`HERDR_PLUGIN_CONTEXT_JSON`).
struct PluginContext {
    workspace_id: Option<String>,
    focused_pane_id: Option<String>,
}

/// The plugin context, if doctor runs as a Herdr plugin action: `Some(Err)` when the variable
/// is set but is not a JSON object.
fn plugin_context() -> Option<Result<PluginContext, String>> {
    let text = var("HERDR_PLUGIN_CONTEXT_JSON")?;
    let field = |v: &Value, k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    Some(match serde_json::from_str::<Value>(&text) {
        Ok(v) if v.is_object() => Ok(PluginContext {
            workspace_id: field(&v, "workspace_id"),
            focused_pane_id: field(&v, "focused_pane_id"),
        }),
        _ => Err("HERDR_PLUGIN_CONTEXT_JSON is not a JSON object".to_string()),
    })
}

fn environment(plugin: bool) -> Check {
    if plugin {
        return skip(
            "environment",
            "run as a Herdr plugin action: the agents' own environment is not visible from here (run `herdr-link doctor` in the agent's pane to check its gate)",
        );
    }
    if let Some(hint) = env::bin_path_hint() {
        return fail("environment", hint);
    }
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

fn plugin_check(ctx: &Result<PluginContext, String>, pane: Option<&str>) -> Check {
    match ctx {
        Err(e) => fail("plugin context", e.clone()),
        Ok(c) => {
            let ws = c
                .workspace_id
                .as_deref()
                .map(|w| format!(" in workspace {w}"))
                .unwrap_or_default();
            match (&c.focused_pane_id, pane) {
                (Some(p), _) => pass(
                    "plugin context",
                    format!("invoked for focused pane {p}{ws}"),
                ),
                (None, Some(p)) => pass(
                    "plugin context",
                    format!("no focused_pane_id{ws}; diagnosing pane {p}"),
                ),
                (None, None) => fail(
                    "plugin context",
                    format!("no focused_pane_id{ws}: no pane to diagnose (pass --pane)"),
                ),
            }
        }
    }
}

/// `herdr X.Y.Z[-...]` -> (X, Y, Z).
fn parse_version(line: &str) -> Option<(u64, u64, u64)> {
    let v = line.split_whitespace().nth(1)?;
    let core = v.split(['-', '+']).next()?;
    let mut it = core.split('.').map(|n| n.parse::<u64>().ok());
    Some((it.next()??, it.next()??, it.next()??))
}

fn binary(herdr: &Herdr, bin: &str) -> Check {
    let line = match herdr.version() {
        Ok(v) => v,
        Err(e) => {
            return fail(
                "herdr binary",
                format!("{bin} does not run: {}", e.detail()),
            )
        }
    };
    match parse_version(&line) {
        Some(v) if v < (0, 8, 0) => fail(
            "herdr binary",
            format!("{bin} reports {line}: older than 0.8.0, the oldest Herdr herdr-link supports"),
        ),
        Some(v) if v < (0, 8, 2) => pass(
            "herdr binary",
            format!(
                "{bin} runs and reports {line} (before 0.8.2 Herdr sets no HERDR_BIN_PATH in panes: agents there need it exported; see the README's supported versions)"
            ),
        ),
        _ => pass("herdr binary", format!("{bin} runs and reports {line}")),
    }
}

fn log_target(log: Option<&str>) -> Check {
    let Some(path) = log else {
        return pass(
            "operator log",
            "HERDR_LINK_LOG is not set: no operator log (internal error details are discarded)",
        );
    };
    let p = Path::new(path);
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

/// Whether the herdr shim is the first `herdr` on this pane's PATH (the exec-boundary guard,
/// docs/guard.md), and which real Herdr it runs.
fn shim_check() -> Check {
    const NAME: &str = "herdr shim";
    let path = std::env::var_os("PATH").unwrap_or_default();
    let Some(first) = crate::shim::first_on_path(&path) else {
        return fail(NAME, "no `herdr` on PATH at all");
    };
    if !crate::shim::is_shim_binary(&first) {
        return fail(
            NAME,
            format!(
                "the first `herdr` on PATH is {}, not the herdr shim: a wait a program starts in \
                 this pane is not judged where it runs (herdr-link setup; docs/setup.md, \
                 \"The herdr shim\")",
                first.display()
            ),
        );
    }
    let me = std::env::current_exe().ok();
    let named = std::env::var_os(crate::shim::REAL_VAR);
    match crate::shim::find_real(named.as_deref(), &path, me.as_deref()) {
        Some(real) => pass(
            NAME,
            format!(
                "{} is first on PATH; it runs {} (and refuses waits of an active session)",
                first.display(),
                real.display()
            ),
        ),
        None => fail(
            NAME,
            format!(
                "{} is first on PATH but no real `herdr` follows it: every herdr call fails",
                first.display()
            ),
        ),
    }
}

/// Invalid `HERDR_LINK_*` values fail (each naming the default used instead).
fn settings() -> Check {
    let bad = env::invalid_settings();
    if bad.is_empty() {
        pass(
            "settings",
            format!(
                "call limit {} ms, start limit {} ms",
                env::call_timeout().as_millis(),
                env::start_timeout().as_millis()
            ),
        )
    } else {
        fail(
            "settings",
            bad.iter()
                .map(|b| b.message())
                .collect::<Vec<_>>()
                .join("; "),
        )
    }
}

/// The checks that need the caller's live record: self, its Agent Name, its peers.
fn identity_checks(herdr: &Herdr, pane: Option<&str>) -> Vec<Check> {
    let dependents = |why: &str| {
        vec![
            skip("agent name", format!("skipped: {why}")),
            skip("peers", format!("skipped: {why}")),
        ]
    };
    let Some(pane) = pane else {
        let mut v = vec![skip(
            "self record",
            "skipped: no pane to diagnose (HERDR_PANE_ID is not set; pass --pane)",
        )];
        v.extend(dependents("no pane to diagnose"));
        return v;
    };
    let record = match herdr.agent_get(pane) {
        Ok(v) => AgentRecord::from_response(&v),
        Err(e) => {
            let mut v = vec![fail(
                "self record",
                format!("agent get {pane} failed: {}", e.detail()),
            )];
            v.extend(dependents("no self record"));
            return v;
        }
    };
    let Some(record) = record else {
        let mut v = vec![fail(
            "self record",
            format!("agent get {pane} returned no agent record"),
        )];
        v.extend(dependents("no self record"));
        return v;
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
    if workspace.is_empty() {
        checks.push(skip("peers", "skipped: no self workspace"));
        return checks;
    }
    checks.push(match herdr.agent_list() {
        Err(e) => fail("peers", format!("agent list failed: {}", e.detail())),
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

/// For `herdr-link mcp` at start: when the gate is closed only by a missing `HERDR_BIN_PATH`,
/// the same hint doctor gives, once on stderr and once in the operator log (never to the model:
/// the server stays dormant, exactly as the gate says).
pub fn mcp_startup_hint() {
    if let Some(hint) = env::bin_path_hint() {
        eprintln!("herdr-link mcp: {hint}");
        herdr_link::oplog::note("mcp", "NOT_IN_HERDR", &hint);
    }
}

/// Runs every check for `pane` (default: the plugin context's focused pane, then
/// `HERDR_PANE_ID`), prints one line each, and returns the exit code.
pub fn run(pane: Option<String>) -> i32 {
    // Doctor is read-only, the operator log included: take the variable out of this process's
    // environment (nothing else runs yet) so no library path can append to it.
    let log = var("HERDR_LINK_LOG");
    std::env::remove_var("HERDR_LINK_LOG");

    let plugin = plugin_context();
    let plugin_pane = match &plugin {
        Some(Ok(c)) => c.focused_pane_id.clone(),
        _ => None,
    };
    let pane = pane.or(plugin_pane).or_else(|| var("HERDR_PANE_ID"));
    let mut checks = vec![environment(plugin.is_some())];
    if let Some(ctx) = &plugin {
        checks.push(plugin_check(ctx, pane.as_deref()));
    }
    let bin = var("HERDR_BIN_PATH")
        .or_else(|| env::herdr_on_path().map(|p| p.display().to_string()))
        .unwrap_or_else(|| "herdr".to_string());
    let herdr = Herdr::new(&HerdrEnv {
        bin: bin.clone(),
        pane_id: pane.clone().unwrap_or_default(),
    });
    let runs = binary(&herdr, &bin);
    let bin_ok = runs.status == Status::Pass;
    checks.push(runs);
    if bin_ok {
        checks.extend(identity_checks(&herdr, pane.as_deref()));
    } else {
        for name in ["self record", "agent name", "peers"] {
            checks.push(skip(name, "skipped: the herdr binary does not run"));
        }
    }
    checks.push(shim_check());
    checks.push(log_target(log.as_deref()));
    checks.push(settings());
    let count = |s: Status| checks.iter().filter(|c| c.status == s).count();
    let (failed, skipped) = (count(Status::Fail), count(Status::Skip));
    let mut out = std::io::stdout().lock();
    for c in &checks {
        let tag = match c.status {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Skip => "SKIP",
        };
        let _ = writeln!(out, "{tag} {}: {}", c.name, c.detail);
    }
    let _ = if failed == 0 && skipped == 0 {
        writeln!(out, "herdr-link doctor: all {} checks passed", checks.len())
    } else {
        writeln!(
            out,
            "herdr-link doctor: {failed} failed, {skipped} skipped, {} passed",
            checks.len() - failed - skipped
        )
    };
    i32::from(failed > 0)
}

#[cfg(test)]
mod tests {
    use super::parse_version;

    #[test]
    fn versions_parse() {
        assert_eq!(parse_version("herdr 0.8.0"), Some((0, 8, 0)));
        assert_eq!(parse_version("herdr 0.8.2-preview.7"), Some((0, 8, 2)));
        assert_eq!(parse_version("herdr 0.10.1"), Some((0, 10, 1)));
        assert_eq!(parse_version("herdr"), None);
        assert_eq!(parse_version("herdr x.y.z"), None);
    }
}
