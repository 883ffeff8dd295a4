//! `herdr-link guard --host claude|codex|opencode|gemini|qwen|copilot|droid|cline|kimi`: the Bash
//! guard as a pre-tool command hook.
//!
//! Reads the host's hook JSON on stdin, judges the shell command with the library's guard
//! ([`herdr_link::guard::judge`], the analysis behind `hl_bash_guard`), and blocks only when the
//! verdict blocks **and** the MCP server of the same host session answers that it is active
//! ([`crate::activation`]). A block is exit status 2 with the guard's reason on stderr (the
//! form Claude Code and Codex both take as "deny, tell the model this"); everything else is
//! exit 0 with nothing written. Bad or unexpected input always allows, with one line in the
//! operator log. No runtime, no bootstrap, no Herdr call. Gemini CLI (`BeforeTool`) and Qwen
//! Code (`PreToolUse`) take the same exit status 2 with the reason on stderr
//! (docs/hosts-gemini-qwen.md). Factory Droid (`Execute`) and Kimi Code (`Bash`) take exit 2 too;
//! GitHub Copilot CLI gets its `permissionDecision: "deny"` JSON (its exit 2 drops the reason)
//! and Cline its `overrideInput` JSON, replacing the commands with one that fails with the reason
//! (Cline's exit status never blocks and its `cancel` ends the whole run;
//! docs/hosts-more.md).
//!
//! With `--shim DIR` (setup writes it for hosts whose commands it runs with the herdr shim first
//! on PATH) a `herdr` whose arguments the text cannot know (`herdr "$@"` with values from
//! outside the command) is left to the shim, which judges the real argv at exec: the guard asks
//! [`guard::judge_layered`] with the shim in place while `DIR/herdr` exists. Without it, or with
//! the shim gone, the cautious verdict stays.

use std::io::{Read, Write};
use std::path::Path;
use std::time::Instant;

use herdr_link::guard::{self, Verdict};
use herdr_link::oplog;
use serde_json::Value;

use crate::activation::{self, Lookup};
pub use crate::host::Host;
use crate::host::{Deny, HookInput};

/// The most stdin the hook reads; a larger input is allowed unread.
pub const MAX_INPUT: u64 = 8 << 20;

/// Exit status of a block (Claude Code, Codex, Gemini CLI and Qwen Code: "deny, stderr is the
/// reason").
pub const EXIT_BLOCK: i32 = 2;

/// What the hook answers, and what it logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The blocking reason, or `None` to allow.
    pub block: Option<&'static str>,
    /// The operator-log line: code and detail (`None`: nothing to log).
    pub log: Option<(&'static str, String)>,
    /// The host session id from the input, if any (for the log).
    pub session: Option<String>,
}

impl Decision {
    fn allow(log: Option<String>, session: Option<String>) -> Decision {
        Decision {
            block: None,
            log: log.map(|d| ("allow", d)),
            session,
        }
    }
}

/// The shell command(s) and session id of one hook input, or why the input is not a shell call
/// to judge.
#[allow(clippy::type_complexity)]
fn parse(
    host: Host,
    input: &[u8],
) -> Result<(Vec<String>, Option<String>), (String, Option<String>)> {
    let v: Value = serde_json::from_slice(input)
        .map_err(|e| (format!("hook input is not JSON: {e}"), None))?;
    let obj = v
        .as_object()
        .ok_or_else(|| ("hook input is not a JSON object".to_string(), None))?;
    let Some(hook) = host.hook() else {
        return Err((format!("{} has no guard hook", host.name()), None));
    };
    let sh: &HookInput = &hook.input;
    let session = obj
        .get(sh.session)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    let fail = |why: String| (why, session.clone());
    // Cline nests the call under `preToolUse`.
    let call = match sh.call {
        Some(key) => obj
            .get(key)
            .and_then(Value::as_object)
            .ok_or_else(|| fail(format!("`{key}` is missing or not an object")))?,
        None => obj,
    };
    match call.get(sh.tool) {
        Some(Value::String(t)) if t == sh.shell => {}
        Some(Value::String(t)) => return Err(fail(format!("not a {} call: {t:?}", sh.shell))),
        _ => return Err(fail(format!("`{}` is missing or not a string", sh.tool))),
    }
    let missing = || {
        fail(format!(
            "`{}.{}` is missing or not a string",
            sh.args, sh.command
        ))
    };
    // Copilot CLI has sent `toolArgs` as an object and, in older versions, as JSON text.
    let args = match call.get(sh.args) {
        Some(Value::String(text)) if sh.args_as_text => {
            serde_json::from_str::<Value>(text).map_err(|_| missing())?
        }
        Some(a) => a.clone(),
        None => return Err(missing()),
    };
    let command = args.get(sh.command).ok_or_else(missing)?;
    let commands = match (sh.command_list, command) {
        // Cline's `commands`: a list, sent as JSON text or as a list.
        (true, Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(list @ Value::Array(_)) => strings(&list).ok_or_else(missing)?,
            _ => vec![text.clone()],
        },
        (true, list @ Value::Array(_)) => strings(list).ok_or_else(missing)?,
        (_, Value::String(c)) => vec![c.clone()],
        _ => return Err(missing()),
    };
    Ok((commands, session))
}

/// Whether `input` is the pre-tool hook input of a host that grants Link's own MCP tools
/// (Copilot CLI, Droid) for one of them: the host's prefix for the `herdr_link` server
/// (`herdr_link-`, `herdr_link___`) followed by one of Link's tool names. The hook grants it
/// (`permissionDecision: "allow"`), so Link's tools, and only they, run without a prompt in
/// the host's default mode.
pub fn link_grant(host: Host, input: &[u8]) -> bool {
    let Some(hook) = host.hook().filter(|h| h.grants_link_tools) else {
        return false;
    };
    let Some(prefix) = host.link_tool_prefix() else {
        return false;
    };
    serde_json::from_slice::<Value>(input).is_ok_and(|v| {
        v.get(hook.input.tool)
            .and_then(Value::as_str)
            .and_then(|t| t.strip_prefix(prefix.as_str()))
            .is_some_and(|t| {
                t == herdr_link::protocol::GATEWAY
                    || herdr_link::OPERATIONS.iter().any(|op| op.tool == t)
            })
    })
}

/// A JSON array of strings, or `None`.
fn strings(list: &Value) -> Option<Vec<String>> {
    list.as_array()?
        .iter()
        .map(|c| c.as_str().map(str::to_string))
        .collect()
}

/// Whether the shim directory `dir` (from `--shim`) still holds the shim (a `herdr` there that
/// resolves to a file; a dangling link would let the lookup go on to the real Herdr): then the
/// host's commands run `herdr` through it.
pub fn shim_in_place(dir: Option<&Path>) -> bool {
    dir.is_some_and(|d| std::fs::metadata(d.join("herdr")).is_ok_and(|m| m.is_file()))
}

/// The whole decision for one input; `shim` says whether the host's commands run `herdr`
/// through the shim (asked only when the cautious verdict blocks); `lookup` asks the host's live
/// server whether it is active for a Claude Code session id (called only when the command would
/// be blocked in an active session). Only Claude Code gives both sides its session id, so only
/// its id is asked with; elsewhere an id in the server's environment (leaked from an outer
/// Claude Code) means nothing.
pub fn decide(
    host: Host,
    input: &[u8],
    shim: impl FnOnce() -> bool,
    lookup: impl FnOnce(Option<&str>) -> Result<Lookup, String>,
) -> Decision {
    let (commands, session) = match parse(host, input) {
        Ok(p) => p,
        Err((why, session)) => return Decision::allow(Some(why), session),
    };
    // Several commands (Cline's `run_commands`): the first one that would be blocked decides.
    let mut shim = Some(shim);
    let mut present = None;
    let mut judged = (Verdict::Allow, Verdict::Allow);
    for command in &commands {
        let ask = || *present.get_or_insert_with(|| shim.take().is_some_and(|f| f()));
        judged = guard::judge_layered(command, ask);
        if judged.0 != Verdict::Allow {
            break;
        }
    }
    let (cautious, verdict) = judged;
    if cautious != Verdict::Allow && verdict == Verdict::Allow {
        return Decision::allow(
            Some(format!(
                "verdict {} left to the herdr shim: the text does not fix herdr's arguments",
                cautious.code()
            )),
            session,
        );
    }
    let Some(reason) = verdict.reason_for(host.send_form()) else {
        return Decision::allow(None, session);
    };
    let asked = if host.hook().is_some_and(|h| h.server_knows_session) {
        session.as_deref()
    } else {
        None
    };
    match lookup(asked) {
        Err(e) => Decision::allow(
            Some(format!(
                "verdict {} but the activation state is unreadable: {e}",
                verdict.code()
            )),
            session,
        ),
        Ok(Lookup::Dormant) => Decision::allow(
            Some(format!(
                "verdict {} in a dormant session (or Link active in another Claude Code session)",
                verdict.code()
            )),
            session,
        ),
        Ok(Lookup::Active) => Decision {
            block: Some(reason),
            log: Some((
                match verdict {
                    Verdict::BlockEndTurn => "block_end_turn",
                    _ => "block",
                },
                String::new(),
            )),
            session,
        },
    }
}

/// Runs the hook on stdin; returns the exit status (0 allow, [`EXIT_BLOCK`] block). `shim`:
/// the `--shim DIR` the hook was registered with.
pub fn run(host: Host, shim: Option<&Path>) -> i32 {
    let started = Instant::now();
    let mut input = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(MAX_INPUT + 1)
        .read_to_end(&mut input);
    let decision = match read {
        Err(e) => Decision::allow(Some(format!("cannot read stdin: {e}")), None),
        Ok(_) if input.len() as u64 > MAX_INPUT => {
            Decision::allow(Some(format!("hook input over {MAX_INPUT} bytes")), None)
        }
        Ok(_) => std::panic::catch_unwind(|| {
            decide(
                host,
                &input,
                || shim_in_place(shim),
                activation::lookup_self,
            )
        })
        .unwrap_or_else(|_| Decision::allow(Some("internal error (panic)".into()), None)),
    };
    if let Some((code, detail)) = &decision.log {
        let session = match &decision.session {
            Some(s) => format!("{}:{s}", host.name()),
            None => host.name().to_string(),
        };
        oplog::Entry::new(&session, "guard", code, detail)
            .since(started)
            .record_now();
    }
    let grant = decision.block.is_none() && link_grant(host, &input);
    let (stdout, stderr, status) = answer(host, decision.block, grant);
    if !stdout.is_empty() {
        let _ = std::io::stdout().lock().write_all(stdout.as_bytes());
    }
    if !stderr.is_empty() {
        let _ = std::io::stderr().lock().write_all(stderr.as_bytes());
    }
    status
}

/// What the hook of `host` writes (stdout, stderr) and its exit status, for a block with
/// `reason` or (`None`) an allow; `grant`: the allow for one of Link's own tools
/// ([`link_grant`]).
pub fn answer(host: Host, block: Option<&str>, grant: bool) -> (String, String, i32) {
    let deny = host.hook().map_or(Deny::Exit2, |h| h.deny);
    match (deny, block) {
        (Deny::Exit2, Some(reason)) => (String::new(), format!("{reason}\n"), EXIT_BLOCK),
        (Deny::CopilotJson, Some(reason)) => (
            format!(
                "{}\n",
                serde_json::json!({"permissionDecision": "deny", "permissionDecisionReason": reason})
            ),
            String::new(),
            0,
        ),
        // The commands Cline runs instead: one that fails with the reason on stderr, so the
        // model gets a failed call (the original never runs), and the reason once more as the
        // hook's context message.
        (Deny::ClineOverride, Some(reason)) => {
            let failing = format!(
                "printf '%s\\n' {} >&2; exit 1",
                herdr_link::paths::shell_word(reason)
            );
            (
                format!(
                    "{}\n",
                    serde_json::json!({
                        "overrideInput": {"commands": [failing]},
                        "contextModification": reason,
                    })
                ),
                String::new(),
                0,
            )
        }
        // Cline reads a JSON object on stdout whatever the answer.
        (Deny::ClineOverride, None) => ("{}\n".into(), String::new(), 0),
        (Deny::CopilotJson, None) if grant => (
            format!("{}\n", serde_json::json!({"permissionDecision": "allow"})),
            String::new(),
            0,
        ),
        // Droid reads Claude Code's hook output.
        (Deny::Exit2, None) if grant => (
            format!(
                "{}\n",
                serde_json::json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                    "permissionDecision": "allow"}})
            ),
            String::new(),
            0,
        ),
        (_, None) => (String::new(), String::new(), 0),
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    const WAIT: &str = r#"{"session_id":"s1","tool_name":"Bash","tool_input":{"command":"herdr agent wait beta"}}"#;
    const PROMPT: &str = r#"{"session_id":"s1","tool_name":"Bash","tool_input":{"command":"herdr agent prompt beta hi --wait"}}"#;
    const LS: &str = r#"{"session_id":"s1","tool_name":"Bash","tool_input":{"command":"ls -la"}}"#;

    /// No shim in place (the cautious verdicts).
    fn no_shim() -> bool {
        false
    }

    /// A live server recording `session` (its Claude Code session id), answering as the
    /// presence socket does.
    fn active(session: Option<&str>) -> impl FnOnce(Option<&str>) -> Result<Lookup, String> {
        let session = session.map(str::to_string);
        move |asked| {
            Ok(
                if herdr_link::presence::answer_for(
                    true,
                    session.as_deref(),
                    &herdr_link::presence::Question::new(asked, None),
                ) {
                    Lookup::Active
                } else {
                    Lookup::Dormant
                },
            )
        }
    }

    #[test]
    fn blocks_only_active_sessions() {
        let d = decide(Host::Claude, WAIT.as_bytes(), no_shim, active(None));
        assert_eq!(d.block, Verdict::BlockEndTurn.reason());
        assert_eq!(d.log.unwrap().0, "block_end_turn");
        // Codex has only the gateway's send action: the reason never names herdr_link_send.
        let d = decide(Host::Codex, PROMPT.as_bytes(), no_shim, active(None));
        assert_eq!(
            d.block,
            Verdict::Block.reason_for(guard::SendForm::GatewayAction)
        );
        assert!(!d.block.unwrap().contains("herdr_link_send"));
        let d = decide(Host::Claude, PROMPT.as_bytes(), no_shim, active(None));
        assert_eq!(d.block, Verdict::Block.reason());
        let d = decide(Host::Claude, WAIT.as_bytes(), no_shim, |_| {
            Ok(Lookup::Dormant)
        });
        assert_eq!(d.block, None);
        assert!(d.log.unwrap().1.contains("dormant"));
        let d = decide(Host::Claude, WAIT.as_bytes(), no_shim, |_| {
            Err("boom".into())
        });
        assert_eq!(d.block, None);
    }

    /// With the shim in place, a `herdr` whose arguments the text cannot know is the shim's to
    /// judge; what the text shows surely waits is still blocked here; the shim's presence is
    /// asked only when the cautious verdict blocks, and a `--shim DIR` without the shim in it
    /// keeps the cautious verdict.
    #[test]
    fn unknown_arguments_are_left_to_the_shim() {
        let input = |cmd: &str| {
            serde_json::json!({"session_id":"s1","tool_name":"Bash","tool_input":{"command":cmd}})
                .to_string()
        };
        let unknown = input("herdr \"$@\"");
        let d = decide(Host::Claude, unknown.as_bytes(), || true, active(None));
        assert_eq!(d.block, None);
        assert!(d.log.unwrap().1.contains("left to the herdr shim"));
        let d = decide(Host::Claude, unknown.as_bytes(), no_shim, active(None));
        assert_eq!(d.block, Verdict::BlockEndTurn.reason());
        let prompt = input("herdr agent prompt beta hi $OPTS");
        assert!(
            decide(Host::Claude, prompt.as_bytes(), || true, active(None))
                .block
                .is_none()
        );
        assert!(
            decide(Host::Claude, prompt.as_bytes(), no_shim, active(None))
                .block
                .is_some()
        );
        // Surely a wait: blocked whatever the shim.
        for sure in [
            "herdr agent wait \"$PEER\"",
            "herdr agent prompt \"$P\" \"$MSG\" --wait",
        ] {
            let d = decide(Host::Claude, input(sure).as_bytes(), || true, active(None));
            assert!(d.block.is_some(), "{sure}");
        }
        // Not through PATH: an absolute path, or PATH changed, misses the shim.
        for missed in [
            "/opt/herdr/bin/herdr \"$@\"",
            "PATH=/opt/herdr/bin herdr \"$@\"",
            "sudo herdr \"$@\"",
            "bash -lc 'herdr \"$@\"'",
        ] {
            let d = decide(
                Host::Claude,
                input(missed).as_bytes(),
                || true,
                active(None),
            );
            assert!(d.block.is_some(), "{missed}");
        }
        decide(
            Host::Claude,
            LS.as_bytes(),
            || panic!("asked"),
            active(None),
        );
        let dir = std::env::temp_dir().join(format!("hl-hook-shim-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(!shim_in_place(Some(&dir)));
        assert!(!shim_in_place(None));
        std::os::unix::fs::symlink("/nonexistent/herdr-link", dir.join("herdr")).unwrap();
        assert!(!shim_in_place(Some(&dir)), "a dangling link is no shim");
        std::fs::remove_file(dir.join("herdr")).unwrap();
        std::os::unix::fs::symlink(std::env::current_exe().unwrap(), dir.join("herdr")).unwrap();
        assert!(shim_in_place(Some(&dir)));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn allowed_commands_never_read_the_state() {
        let d = decide(Host::Claude, LS.as_bytes(), no_shim, |_| {
            panic!("looked up")
        });
        assert_eq!(d, Decision::allow(None, Some("s1".into())));
    }

    #[test]
    fn claude_session_ids_must_match_when_both_are_known() {
        assert!(
            decide(Host::Claude, WAIT.as_bytes(), no_shim, active(Some("s1")))
                .block
                .is_some()
        );
        assert!(decide(
            Host::Claude,
            WAIT.as_bytes(),
            no_shim,
            active(Some("other"))
        )
        .block
        .is_none());
        let no_id = r#"{"tool_name":"Bash","tool_input":{"command":"herdr agent wait b"}}"#;
        assert!(
            decide(Host::Claude, no_id.as_bytes(), no_shim, active(Some("s1")))
                .block
                .is_some()
        );
    }

    #[test]
    fn bad_input_allows_and_logs() {
        let cases: &[&str] = &[
            "",
            "{",
            "null",
            "[]",
            "\"herdr agent wait x\"",
            r#"{"tool_name":"Read","tool_input":{"command":"herdr agent wait x"}}"#,
            r#"{"tool_name":"bash","tool_input":{"command":"herdr agent wait x"}}"#,
            r#"{"tool_name":"Bash"}"#,
            r#"{"tool_name":"Bash","tool_input":{"cmd":"herdr agent wait x"}}"#,
            r#"{"tool_name":"Bash","tool_input":{"command":["herdr","agent","wait"]}}"#,
            r#"{"tool_name":"Bash","tool_input":"herdr agent wait x"}"#,
            r#"{"tool_name":7,"tool_input":{"command":"herdr agent wait x"}}"#,
        ];
        for c in cases {
            for host in [
                Host::Claude,
                Host::Codex,
                Host::OpenCode,
                Host::Gemini,
                Host::Qwen,
            ] {
                let d = decide(host, c.as_bytes(), no_shim, active(None));
                assert_eq!(d.block, None, "{host:?} {c}");
                assert_eq!(d.log.as_ref().map(|l| l.0), Some("allow"), "{c}");
            }
        }
        let mut junk = vec![0xff, 0xfe];
        junk.extend_from_slice(WAIT.as_bytes());
        assert_eq!(
            decide(Host::Claude, &junk, no_shim, active(None)).block,
            None
        );
    }

    #[test]
    fn no_truncated_or_corrupted_input_blocks() {
        // Every proper prefix of a blocking input is malformed JSON: never a block.
        for host in [Host::Claude, Host::Codex] {
            for end in 0..WAIT.len() {
                let d = decide(host, &WAIT.as_bytes()[..end], no_shim, active(None));
                assert_eq!(d.block, None, "{:?}", &WAIT[..end]);
            }
        }
        // Single-byte corruptions either stay a Bash call with a waiting command (a block is
        // then right) or are allowed; none panics.
        for i in 0..WAIT.len() {
            for b in [b'"', b'{', b'}', 0u8, 0xff, b'x'] {
                let mut bytes = WAIT.as_bytes().to_vec();
                bytes[i] = b;
                let d = decide(Host::Claude, &bytes, no_shim, active(None));
                if d.block.is_some() {
                    let v: Value = serde_json::from_slice(&bytes).unwrap();
                    assert_eq!(v["tool_name"], "Bash");
                    let cmd = v["tool_input"]["command"].as_str().unwrap();
                    assert_ne!(guard::judge(cmd), Verdict::Allow);
                }
            }
        }
    }

    /// Gemini CLI's `BeforeTool` and Qwen Code's `PreToolUse` input as the pinned hosts send it
    /// (docs/hosts-gemini-qwen.md): `run_shell_command` with `tool_input.command`; only that
    /// tool is judged, and the block reason names the send the host shows.
    #[test]
    fn gemini_and_qwen_shapes() {
        let gemini = r#"{"session_id":"7193107f","transcript_path":"/t","cwd":"/p","hook_event_name":"BeforeTool","timestamp":"2026-12-01T21:45:34.120Z","tool_name":"run_shell_command","tool_input":{"command":"herdr agent wait beta","description":"d"}}"#;
        let d = decide(Host::Gemini, gemini.as_bytes(), no_shim, active(None));
        assert_eq!(d.block, Verdict::BlockEndTurn.reason());
        assert_eq!(d.session.as_deref(), Some("7193107f"));
        let qwen = r#"{"session_id":"94bf","hook_event_name":"PreToolUse","permission_mode":"auto","tool_name":"run_shell_command","tool_input":{"command":"herdr agent prompt beta hi --wait"},"tool_use_id":"toolu_1","tool_call_id":"call_1"}"#;
        let d = decide(Host::Qwen, qwen.as_bytes(), no_shim, active(None));
        assert_eq!(
            d.block,
            Verdict::Block.reason_for(guard::SendForm::GatewayAction)
        );
        let d = decide(
            Host::Gemini,
            qwen.replace("--wait", "").as_bytes(),
            no_shim,
            active(None),
        );
        assert_eq!(d.block, None);
        let prompt = gemini.replace("agent wait beta", "agent prompt beta hi --wait");
        assert_eq!(
            decide(Host::Gemini, prompt.as_bytes(), no_shim, active(None)).block,
            Verdict::Block.reason_for(guard::SendForm::Either)
        );
        // Another tool, or Claude Code's shape, is not a shell call of these hosts.
        for other in [
            gemini.replace("run_shell_command", "read_file"),
            WAIT.to_string(),
        ] {
            for host in [Host::Gemini, Host::Qwen] {
                assert_eq!(
                    decide(host, other.as_bytes(), no_shim, active(None)).block,
                    None
                );
            }
        }
        // Only Claude Code's session ids are compared.
        assert!(decide(
            Host::Qwen,
            qwen.as_bytes(),
            no_shim,
            active(Some("claude-outer"))
        )
        .block
        .is_some());
    }

    #[test]
    fn opencode_shape() {
        let wait = r#"{"tool":"bash","sessionID":"ses_1","args":{"command":"herdr agent wait b"}}"#;
        let d = decide(Host::OpenCode, wait.as_bytes(), no_shim, active(None));
        assert_eq!(d.block, Verdict::BlockEndTurn.reason());
        assert_eq!(d.session.as_deref(), Some("ses_1"));
        // Only Claude Code's session ids are compared.
        let d = decide(
            Host::OpenCode,
            wait.as_bytes(),
            no_shim,
            active(Some("claude-outer")),
        );
        assert!(d.block.is_some());
        let codex = WAIT.replace("s1", "codex-session");
        assert!(
            decide(Host::Codex, codex.as_bytes(), no_shim, active(Some("s1")))
                .block
                .is_some()
        );
        assert!(decide(Host::Claude, wait.as_bytes(), no_shim, active(None))
            .block
            .is_none());
    }

    /// The hook inputs of the four hosts of docs/hosts-more.md as the pinned versions send them:
    /// only their shell tool is judged, each blocks in its own way, and Cline's list of
    /// commands (JSON text inside the JSON) is judged command by command.
    #[test]
    fn copilot_droid_cline_and_kimi_shapes() {
        let copilot = r#"{"sessionId":"c-1","timestamp":1,"cwd":"/p","toolName":"bash","toolArgs":{"command":"herdr agent wait beta","description":"d"}}"#;
        let d = decide(Host::Copilot, copilot.as_bytes(), no_shim, active(None));
        assert_eq!(d.block, Verdict::BlockEndTurn.reason());
        assert_eq!(d.session.as_deref(), Some("c-1"));
        // toolArgs as JSON text (older Copilot CLI) is read the same way.
        let text = serde_json::json!({"sessionId":"c-1","toolName":"bash",
            "toolArgs":"{\"command\":\"herdr agent wait beta\"}"})
        .to_string();
        assert!(
            decide(Host::Copilot, text.as_bytes(), no_shim, active(None))
                .block
                .is_some()
        );
        let mcp = copilot.replace("\"bash\"", "\"herdr_link-herdr_link\"");
        assert_eq!(
            decide(Host::Copilot, mcp.as_bytes(), no_shim, active(None)).block,
            None
        );
        let (out, err, status) = answer(Host::Copilot, Verdict::BlockEndTurn.reason(), false);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["permissionDecision"], "deny");
        assert_eq!(
            v["permissionDecisionReason"].as_str(),
            Verdict::BlockEndTurn.reason()
        );
        assert_eq!((err.as_str(), status), ("", 0));
        assert_eq!(
            answer(Host::Copilot, None, false),
            (String::new(), String::new(), 0)
        );
        // Link's own tools are granted; nothing else is, and no other host grants.
        assert!(link_grant(Host::Copilot, mcp.as_bytes()));
        assert!(!link_grant(Host::Copilot, copilot.as_bytes()));
        let other_mcp = copilot.replace("\"bash\"", "\"github-search_code\"");
        assert!(!link_grant(Host::Copilot, other_mcp.as_bytes()));
        assert!(!link_grant(Host::Claude, mcp.as_bytes()));
        let (out, _, status) = answer(Host::Copilot, None, true);
        assert_eq!(
            (serde_json::from_str::<Value>(&out).unwrap(), status),
            (serde_json::json!({"permissionDecision": "allow"}), 0)
        );

        let droid = r#"{"session_id":"d-1","hook_event_name":"PreToolUse","permission_mode":"auto-high","tool_name":"Execute","tool_input":{"command":"herdr agent prompt beta hi --wait","riskLevel":"low","riskLevelReason":"r"}}"#;
        let d = decide(Host::Droid, droid.as_bytes(), no_shim, active(None));
        assert_eq!(d.block, Verdict::Block.reason_for(guard::SendForm::Either));
        // Droid's own input for Link's gateway (as Droid 0.225.2 sent it): granted with Claude
        // Code's allow output; another server's tool, a name that only starts like Link's, the
        // shell tool and Copilot's naming are not.
        let gateway = r#"{"session_id":"d-1","cwd":"/p","permission_mode":"off","hook_event_name":"PreToolUse","tool_name":"herdr_link___herdr_link","tool_input":{"action":"peers","arguments":{}}}"#;
        assert_eq!(
            decide(Host::Droid, gateway.as_bytes(), no_shim, active(None)).block,
            None
        );
        assert!(link_grant(Host::Droid, gateway.as_bytes()));
        let send = gateway.replace("___herdr_link\"", "___herdr_link_send\"");
        assert!(link_grant(Host::Droid, send.as_bytes()));
        for other in [
            "github___search_code",
            "herdr_link____herdr_link",
            "herdr_link___herdr_linker",
            "herdr_link-herdr_link",
            "Execute",
        ] {
            let input = gateway.replace("herdr_link___herdr_link", other);
            assert!(!link_grant(Host::Droid, input.as_bytes()), "{other}");
        }
        assert!(!link_grant(Host::Kimi, gateway.as_bytes()));
        assert!(!link_grant(Host::Droid, droid.as_bytes()));
        let (out, err, status) = answer(Host::Droid, None, true);
        assert_eq!(
            (
                serde_json::from_str::<Value>(&out).unwrap(),
                err.as_str(),
                status
            ),
            (
                serde_json::json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                    "permissionDecision": "allow"}}),
                "",
                0
            )
        );
        let kimi = r#"{"hook_event_name":"PreToolUse","session_id":"k-1","cwd":"/p","client_type":"kimi_code_cli","tool_name":"Bash","tool_input":{"command":"herdr agent prompt beta hi --wait","description":"d"},"tool_call_id":"t"}"#;
        let d = decide(Host::Kimi, kimi.as_bytes(), no_shim, active(None));
        assert_eq!(
            d.block,
            Verdict::Block.reason_for(guard::SendForm::GatewayAction)
        );
        for host in [Host::Droid, Host::Kimi] {
            let (out, err, status) = answer(host, Verdict::BlockEndTurn.reason(), false);
            assert_eq!((out.as_str(), status), ("", EXIT_BLOCK));
            assert_eq!(err.trim_end(), Verdict::BlockEndTurn.reason().unwrap());
        }
        // Each host's own shell tool only: Droid's shape with Kimi's tool, and the other way.
        assert_eq!(
            decide(Host::Droid, kimi.as_bytes(), no_shim, active(None)).block,
            None
        );
        assert_eq!(
            decide(Host::Kimi, droid.as_bytes(), no_shim, active(None)).block,
            None
        );

        let cline = |commands: Value| {
            serde_json::json!({"taskId":"t-1","hookName":"tool_call",
                "preToolUse":{"toolName":"run_commands","parameters":{"commands":commands}}})
            .to_string()
        };
        let text = cline(Value::from(r#"["ls","herdr agent wait beta"]"#));
        let d = decide(Host::Cline, text.as_bytes(), no_shim, active(None));
        assert_eq!(d.block, Verdict::BlockEndTurn.reason());
        assert_eq!(d.session.as_deref(), Some("t-1"));
        let list = cline(serde_json::json!(["herdr agent prompt beta hi --wait"]));
        assert_eq!(
            decide(Host::Cline, list.as_bytes(), no_shim, active(None)).block,
            Verdict::Block.reason_for(guard::SendForm::GatewayAction)
        );
        let plain = cline(Value::from("herdr agent wait beta"));
        assert!(decide(Host::Cline, plain.as_bytes(), no_shim, active(None))
            .block
            .is_some());
        let fine = cline(Value::from(r#"["ls","echo hi"]"#));
        assert_eq!(
            decide(Host::Cline, fine.as_bytes(), no_shim, active(None)).block,
            None
        );
        // The shim is asked once for all the commands, and only when one would be blocked.
        let unknown = cline(serde_json::json!(["herdr \"$@\"", "herdr \"$X\""]));
        let asked = std::cell::Cell::new(0);
        let d = decide(
            Host::Cline,
            unknown.as_bytes(),
            || {
                asked.set(asked.get() + 1);
                true
            },
            active(None),
        );
        assert_eq!((d.block, asked.get()), (None, 1));
        decide(
            Host::Cline,
            fine.as_bytes(),
            || panic!("asked"),
            active(None),
        );
        let other = text.replace("run_commands", "read_files");
        assert_eq!(
            decide(Host::Cline, other.as_bytes(), no_shim, active(None)).block,
            None
        );
        let (out, err, status) = answer(Host::Cline, Verdict::BlockEndTurn.reason(), false);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            v["contextModification"].as_str(),
            Verdict::BlockEndTurn.reason()
        );
        let failing = v["overrideInput"]["commands"][0].as_str().unwrap();
        let ran = std::process::Command::new("sh")
            .args(["-c", failing])
            .output()
            .unwrap();
        assert_eq!(ran.status.code(), Some(1));
        assert_eq!(
            String::from_utf8_lossy(&ran.stderr).trim_end(),
            Verdict::BlockEndTurn.reason().unwrap()
        );
        assert!(v.get("cancel").is_none(), "cancel ends Cline's whole run");
        assert_eq!((err.as_str(), status), ("", 0));
        assert_eq!(answer(Host::Cline, None, false).0, "{}\n");
    }
}
