//! `herdr-link guard --host claude|codex|opencode|gemini|qwen`: the Bash guard as a pre-tool
//! command hook.
//!
//! Reads the host's hook JSON on stdin, judges the shell command with the library's guard
//! ([`herdr_link::guard::judge`], the analysis behind `hl_bash_guard`), and blocks only when the
//! verdict blocks **and** the MCP server of the same host session answers that it is active
//! ([`crate::activation`]). A block is exit status 2 with the guard's reason on stderr (the
//! form Claude Code and Codex both take as "deny, tell the model this"); everything else is
//! exit 0 with nothing written. Bad or unexpected input always allows, with one line in the
//! operator log. No runtime, no bootstrap, no Herdr call. Gemini CLI (`BeforeTool`) and Qwen
//! Code (`PreToolUse`) take the same exit status 2 with the reason on stderr
//! (docs/hosts-gemini-qwen.md).
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

/// The host whose hook protocol is spoken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// Claude Code `PreToolUse` (`tool_name` "Bash", `tool_input.command`, `session_id`).
    Claude,
    /// Codex `PreToolUse` (same shape as Claude Code's).
    Codex,
    /// The OpenCode MCP-route plugin: `{"tool":"bash","sessionID":…,"args":{"command":…}}`.
    OpenCode,
    /// Gemini CLI `BeforeTool` (`tool_name` "run_shell_command", `tool_input.command`).
    Gemini,
    /// Qwen Code `PreToolUse` (`tool_name` "run_shell_command", `tool_input.command`).
    Qwen,
}

impl Host {
    /// Parses `claude` | `codex` | `opencode` | `gemini` | `qwen`.
    pub fn parse(s: &str) -> Option<Host> {
        match s {
            "claude" => Some(Host::Claude),
            "codex" => Some(Host::Codex),
            "opencode" => Some(Host::OpenCode),
            "gemini" => Some(Host::Gemini),
            "qwen" => Some(Host::Qwen),
            _ => None,
        }
    }

    /// How the model sends a message in this host, for the block reason: Codex and Qwen Code
    /// never show the Tier 1 tools, so only the gateway's `send` action exists there; Claude
    /// Code, OpenCode's MCP route and Gemini CLI show `herdr_link_send` a turn late, so the
    /// reason names both.
    fn send_form(self) -> guard::SendForm {
        match self {
            Host::Codex | Host::Qwen => guard::SendForm::GatewayAction,
            Host::Claude | Host::OpenCode | Host::Gemini => guard::SendForm::Either,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Host::Claude => "claude",
            Host::Codex => "codex",
            Host::OpenCode => "opencode",
            Host::Gemini => "gemini",
            Host::Qwen => "qwen",
        }
    }
}

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

/// The command and session id of one hook input, or why the input is not a shell call to judge.
fn parse(host: Host, input: &[u8]) -> Result<(String, Option<String>), (String, Option<String>)> {
    let v: Value = serde_json::from_slice(input)
        .map_err(|e| (format!("hook input is not JSON: {e}"), None))?;
    let obj = v
        .as_object()
        .ok_or_else(|| ("hook input is not a JSON object".to_string(), None))?;
    let (session_key, tool_key, tool_want, args_key) = match host {
        Host::Claude | Host::Codex => ("session_id", "tool_name", "Bash", "tool_input"),
        Host::OpenCode => ("sessionID", "tool", "bash", "args"),
        Host::Gemini | Host::Qwen => ("session_id", "tool_name", "run_shell_command", "tool_input"),
    };
    let session = obj
        .get(session_key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    let fail = |why: String| (why, session.clone());
    match obj.get(tool_key) {
        Some(Value::String(t)) if t == tool_want => {}
        Some(Value::String(t)) => return Err(fail(format!("not a {tool_want} call: {t:?}"))),
        _ => return Err(fail(format!("`{tool_key}` is missing or not a string"))),
    }
    let command = obj
        .get(args_key)
        .and_then(|a| a.get("command"))
        .and_then(Value::as_str)
        .ok_or_else(|| fail(format!("`{args_key}.command` is missing or not a string")))?;
    Ok((command.to_string(), session))
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
    let (command, session) = match parse(host, input) {
        Ok(p) => p,
        Err((why, session)) => return Decision::allow(Some(why), session),
    };
    let (cautious, verdict) = guard::judge_layered(&command, shim);
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
    let asked = if host == Host::Claude {
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
    match decision.block {
        Some(reason) => {
            let _ = writeln!(std::io::stderr().lock(), "{reason}");
            EXIT_BLOCK
        }
        None => 0,
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
}
