//! `herdr-link doctor`: a read-only diagnosis for operators. One `PASS`/`FAIL`/`SKIP` line per
//! check (`SKIP` when a check cannot run because an earlier one failed or does not apply); the
//! exit code is 1 when any check failed, else 0.
//!
//! It runs only `herdr --version`, `agent get <pane>` (with `pane get` when the pane is not found,
//! to follow a moved pane as Link does) and `agent list`, never renames or prompts
//! anything, never writes the operator log, and (being for operators, not models) shows pane
//! and workspace ids. Run as a Herdr plugin action (`HERDR_PLUGIN_CONTEXT_JSON` set), it
//! diagnoses the pane the action was invoked for.

use std::ffi::CString;
use std::io::Write;
use std::path::Path;

use herdr_link::env::{self, HerdrEnv};
use herdr_link::herdr::records;
use herdr_link::herdr::{version, CliFailure, Herdr, Unavailable};
use herdr_link::identity::{self, SelfRecord};
use herdr_link::visible_peers;
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
pub(crate) struct PluginContext {
    /// The workspace the action was invoked in.
    pub(crate) workspace_id: Option<String>,
    /// The pane that had the focus.
    pub(crate) focused_pane_id: Option<String>,
}

/// The plugin context, if doctor runs as a Herdr plugin action: `Some(Err)` when the variable
/// is set but is not a JSON object.
pub(crate) fn plugin_context() -> Option<Result<PluginContext, String>> {
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
    let missing = env::gate_missing();
    match env::gate() {
        Some(gate) => {
            let socket = match var("HERDR_SOCKET_PATH") {
                Some(s) => format!(", HERDR_SOCKET_PATH={s}"),
                None => String::new(),
            };
            pass(
                "environment",
                format!(
                    "gate open: HERDR_ENV=1, HERDR_BIN_PATH={}, HERDR_PANE_ID={}{socket}",
                    gate.bin, gate.pane_id
                ),
            )
        }
        None => fail(
            "environment",
            format!(
                "gate closed, missing {}: the MCP server lists no tools here (hosts such as Codex must forward HERDR_ENV, HERDR_BIN_PATH, HERDR_PANE_ID and HERDR_SOCKET_PATH)",
                missing.join(", ")
            ),
        ),
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

fn binary(herdr: &Herdr, bin: &str, bin_label: &str) -> Check {
    let line = match herdr.version() {
        Ok(v) => v,
        Err(e) => {
            let why = match e.unavailable_cause() {
                // It ran and did not answer `--version` as Herdr does.
                Some(Unavailable::NotHerdr) => e.operator_cause(bin_label),
                _ => None,
            };
            return fail(
                "herdr binary",
                why.unwrap_or_else(|| format!("{bin} does not run: {}", e.detail())),
            );
        }
    };
    let named_herdr = line.split_whitespace().next() == Some("herdr");
    match version::parse(&line) {
        _ if !named_herdr => fail(
            "herdr binary",
            format!("{bin_label} is not Herdr (`--version` printed {line:?}); fix: point HERDR_BIN_PATH at the herdr binary"),
        ),
        Some(v) if v < version::OLDEST_SUPPORTED => fail(
            "herdr binary",
            format!("{bin} reports {line}: older than 0.8.0, the oldest Herdr herdr-link supports"),
        ),
        Some(v) if v < version::SETS_BIN_PATH => pass(
            "herdr binary",
            format!(
                "{bin} runs and reports {line} (before 0.8.2 Herdr sets no HERDR_BIN_PATH in panes: agents there need it exported; see docs/herdr-versions.md)"
            ),
        ),
        _ => pass("herdr binary", format!("{bin} runs and reports {line}")),
    }
}

/// The operator log's target as the library would write it (`chosen`: `HERDR_LINK_LOG` was
/// set; `None`: turned off or no home). The default file's missing directory is made on the
/// first line, so it is usable when its nearest existing ancestor is writable.
fn log_target(target: Option<(std::path::PathBuf, bool)>, chosen: bool) -> Check {
    let Some((path_buf, is_default)) = target else {
        return pass(
            "operator log",
            if herdr_link::env::log_off() {
                "off (HERDR_LINK_LOG_OFF=1): internal error details are discarded"
            } else {
                "no state directory (neither XDG_STATE_HOME nor HOME is set) and no HERDR_LINK_LOG: internal error details are discarded"
            },
        );
    };
    let path = &path_buf.display().to_string();
    let text = if herdr_link::env::log_text() {
        "with message text"
    } else {
        "without message text (HERDR_LINK_LOG_TEXT=0)"
    };
    if is_default && !chosen {
        let mut existing = path_buf.as_path();
        while !existing.exists() {
            match existing.parent() {
                Some(p) => existing = p,
                None => break,
            }
        }
        return if writable(existing) {
            pass(
                "operator log",
                format!("on by default, {text}: {path} (`herdr-link log` reads it; HERDR_LINK_LOG_OFF=1 turns it off)"),
            )
        } else {
            fail(
                "operator log",
                format!("{path}: {} is not writable", existing.display()),
            )
        };
    }
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
            format!("one JSON line per operation is appended to {path}, {text}"),
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

/// When doctor runs as a shell command of a host it recognises: whether that host's settings
/// register the `herdr_link` server and the guard hook (`herdr-link setup <host>`). `None` (no
/// line) anywhere else.
fn host_check() -> Option<Check> {
    const NAME: &str = "host";
    // The hosts doctor recognises by the variable they set for their shell commands (their
    // descriptors' `doctor_marker`: Gemini CLI `GEMINI_CLI=1`, Qwen Code `QWEN_CODE=1`,
    // docs/hosts-gemini-qwen.md; Copilot CLI `COPILOT_CLI=1`, docs/hosts-more.md).
    let d = crate::host::HOSTS.iter().find(|d| {
        d.doctor_marker
            .is_some_and(|(key, value)| var(key).as_deref() == Some(value))
    })?;
    let (host, id, title) = (d.host, d.name, d.title);
    let places = match crate::setup::Places::from_env() {
        Ok(p) => p,
        Err(e) => return Some(fail(NAME, format!("{title}: {e}"))),
    };
    let cwd = std::env::current_dir().unwrap_or_default();
    let found = crate::setup::registrations(host, &places, &cwd).unwrap_or_default();
    let shown = |r: &crate::setup::Registration| r.file.display().to_string();
    Some(match found.iter().find(|r| r.server && r.guard) {
        Some(r) => pass(
            NAME,
            format!(
                "{title}: the herdr_link server and the guard hook are registered in {}",
                shown(r)
            ),
        ),
        None => {
            let partial: Vec<String> = found
                .iter()
                .filter(|r| r.server || r.guard)
                .map(|r| {
                    let has = if r.server {
                        "the server"
                    } else {
                        "the guard hook"
                    };
                    format!("{} has only {has}", shown(r))
                })
                .collect();
            let looked = found.iter().map(shown).collect::<Vec<_>>().join(", ");
            let detail = if partial.is_empty() {
                format!("no herdr_link registration in {looked}")
            } else {
                partial.join("; ")
            };
            fail(
                NAME,
                format!("{title}: {detail}: run `herdr-link setup {id}` and restart {title}"),
            )
        }
    })
}

/// Invalid `HERDR_LINK_*` values fail (each naming the default used instead). `follow`:
/// whether deliveries are followed (read before doctor turned its own log off).
fn settings(follow: bool) -> Check {
    let bad = env::invalid_settings();
    if bad.is_empty() {
        pass(
            "settings",
            format!(
                "call limit {} ms, start limit {} ms, delivery turn wait {} ms, margin after a 0.8 Enter {} ms, {}",
                env::call_timeout().as_millis(),
                env::start_timeout().as_millis(),
                env::turn_wait().as_millis(),
                env::turn_margin().as_millis(),
                if follow {
                    format!(
                        "deliveries followed until taken up or {} ms",
                        env::taken_up_bound().as_millis()
                    )
                } else {
                    "deliveries not followed".to_string()
                }
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

/// What a failed call says: the cause and its fix in one line when Herdr is unusable (no
/// server, another protocol, not Herdr), else Herdr's own answer.
fn failed_call(call: &str, e: &CliFailure, bin: &str) -> String {
    match e.operator_cause(bin) {
        Some(cause) => format!("{call}: {cause}"),
        None => format!("{call} failed: {}", e.detail()),
    }
}

/// The checks that need the caller's live record: self, its Agent Name, its peers. Each asks
/// what Link's own calls ask and decides with Link's own rules ([`identity::probe_self`] with
/// its moved-pane fallback, [`identity::judge_self`], [`visible_peers`]), so a PASS here is a
/// call that works there; only the wording (and the ids, for operators) is doctor's. `bin`
/// names the binary as the operator set it.
fn identity_checks(herdr: &Herdr, pane: Option<&str>, bin: &str) -> Vec<Check> {
    let dependents = |why: &str| {
        vec![
            skip("agent name", format!("skipped: {why}")),
            skip("peers", format!("skipped: {why}")),
        ]
    };
    let with_dependents = |first: Check, why: &str| {
        let mut v = vec![first];
        v.extend(dependents(why));
        v
    };
    let Some(pane) = pane else {
        return with_dependents(
            skip(
                "self record",
                "skipped: no pane to diagnose (HERDR_PANE_ID is not set; pass --pane)",
            ),
            "no pane to diagnose",
        );
    };
    let (record, current) = match identity::probe_self(herdr, pane) {
        Ok(found) => found,
        Err(e) => {
            // Link answers with its code only; the driver kept how Herdr failed, so an
            // unusable Herdr is named with its cause and fix, as `failed_call` does.
            let said = match herdr.last_failure() {
                Some(f) if f.unavailable_cause().is_some() => {
                    failed_call(&format!("agent get {pane}"), &f, bin)
                }
                _ => format!("agent get {pane} failed: {}", e.detail()),
            };
            return with_dependents(
                fail("self record", format!("{said} (Link answers {})", e.code())),
                "no self record",
            );
        }
    };
    let verdict = identity::judge_self(record.as_ref(), &current);
    let record = match (record, verdict.clone()) {
        (Some(r), SelfRecord::Named | SelfRecord::Unnamed) => r,
        (None, _) => {
            return with_dependents(
                fail(
                    "self record",
                    format!(
                        "agent get {current} returned no agent record (Link answers SELF_UNNAMED)"
                    ),
                ),
                "no self record",
            )
        }
        (Some(r), SelfRecord::Refused(why)) => {
            let shown = r.pane_id.as_deref().unwrap_or("no pane id");
            let state = if r.is_live() { "live" } else { "not live" };
            return with_dependents(
                fail(
                    "self record",
                    format!(
                        "{why}: agent get {current} answered for {shown} ({state}); Link answers SELF_UNNAMED"
                    ),
                ),
                "no usable self record",
            );
        }
    };
    let moved = if current == pane {
        String::new()
    } else {
        format!(" (moved: {pane} is now {current})")
    };
    let workspace = record.workspace_id.clone().unwrap_or_default();
    let mut checks = vec![if workspace.is_empty() {
        fail(
            "self record",
            format!(
                "pane {current}{moved} has no workspace_id: every peer lookup would fail closed"
            ),
        )
    } else {
        pass(
            "self record",
            format!(
                "pane {current}{moved} in workspace {workspace}, state {}",
                record.state.as_str()
            ),
        )
    }];
    let self_name = match verdict {
        SelfRecord::Named => {
            let name = record.stable_name().unwrap_or_default().to_string();
            checks.push(pass("agent name", name.clone()));
            name
        }
        _ => {
            checks.push(pass(
                "agent name",
                "unnamed: the bootstrap will name it hl-<8 hex> when the MCP server starts or on its first peers/send",
            ));
            String::new()
        }
    };
    if workspace.is_empty() {
        checks.push(skip("peers", "skipped: no self workspace"));
        return checks;
    }
    checks.push(match herdr.agent_list() {
        Err(e) => fail("peers", failed_call("agent list", &e, bin)),
        Ok(v) => {
            let list = records::agent_list(&v);
            let peers: Vec<String> = visible_peers(&self_name, &workspace, &list)
                .into_iter()
                .map(|r| {
                    let name = r.name.as_deref().unwrap_or_default();
                    match &r.pane_id {
                        Some(p) => format!("{name} ({p}, {})", r.state.as_str()),
                        None => format!("{name} ({})", r.state.as_str()),
                    }
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

/// Whether deliveries of every process of this user meet on one set of delivery turns
/// (`herdr_link::turn`): when they do not, two processes sending to one agent can glue their
/// messages into one submission.
fn turns_check() -> Check {
    const NAME: &str = "delivery turns";
    match herdr_link::turn::survey() {
        Ok((dir, None)) => pass(NAME, format!("shared by this user's processes in {}", dir.display())),
        Ok((dir, Some(why))) => pass(
            NAME,
            format!(
                "shared in {} (fallback: {why}); a process that sees another /tmp keeps its own",
                dir.display()
            ),
        ),
        Err(why) => fail(
            NAME,
            format!("not shared: {why}; each process keeps its own turns, so messages from two processes to one agent can arrive glued together"),
        ),
    }
}

/// For `herdr-link mcp` at start: when the gate is closed only by a missing `HERDR_BIN_PATH`,
/// the same hint doctor gives, once on stderr and once in the operator log (never to the model:
/// the server stays dormant, exactly as the gate says).
pub fn mcp_startup_hint() {
    if let Some(hint) = env::bin_path_hint() {
        eprintln!("herdr-link mcp: {hint}");
        let code = herdr_link::LinkError::NotInHerdr(String::new()).code();
        herdr_link::oplog::note("mcp", code, &hint);
    }
}

/// Runs every check for `pane` (default: the plugin context's focused pane, then
/// `HERDR_PANE_ID`), prints one line each, and returns the exit code.
pub fn run(pane: Option<String>) -> i32 {
    // Doctor is read-only, the operator log included: note where it goes, then turn it off in
    // this process's environment (nothing else runs yet) so no library path can append to it.
    let log = herdr_link::oplog::path();
    let chosen = var("HERDR_LINK_LOG").is_some();
    let log_check = log_target(log, chosen);
    // Read with the user's settings, before doctor's own switch below.
    let settings_check = settings(env::follow());
    std::env::set_var("HERDR_LINK_LOG_OFF", "1");

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
    let bin_label = match var("HERDR_BIN_PATH") {
        Some(b) => format!("HERDR_BIN_PATH ({b})"),
        None => bin.clone(),
    };
    let herdr = Herdr::new(&HerdrEnv {
        bin: bin.clone(),
        pane_id: pane.clone().unwrap_or_default(),
    });
    let runs = binary(&herdr, &bin, &bin_label);
    let bin_ok = runs.status == Status::Pass;
    checks.push(runs);
    if bin_ok {
        checks.extend(identity_checks(&herdr, pane.as_deref(), &bin_label));
    } else {
        for name in ["self record", "agent name", "peers"] {
            checks.push(skip(name, "skipped: no working herdr binary"));
        }
    }
    checks.push(shim_check());
    checks.push(turns_check());
    checks.extend(host_check());
    checks.push(log_check);
    checks.push(settings_check);
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
