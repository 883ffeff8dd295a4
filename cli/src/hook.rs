//! `herdr-link guard --host claude|codex|opencode`: the Bash guard as a pre-tool command hook.
//!
//! Reads the host's hook JSON on stdin, judges the shell command with the library's guard
//! ([`herdr_link::guard::judge`], the analysis behind `hl_bash_guard`), and blocks only when the
//! verdict blocks **and** the MCP server of the same host session answers that it is active
//! ([`crate::activation`]). A block is exit status 2 with the guard's reason on stderr (the
//! form Claude Code and Codex both take as "deny, tell the model this"); everything else is
//! exit 0 with nothing written. Bad or unexpected input always allows, with one line in the
//! operator log. No runtime, no bootstrap, no Herdr call.

use std::io::{Read, Write};
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
}

impl Host {
    /// Parses `claude` | `codex` | `opencode`.
    pub fn parse(s: &str) -> Option<Host> {
        match s {
            "claude" => Some(Host::Claude),
            "codex" => Some(Host::Codex),
            "opencode" => Some(Host::OpenCode),
            _ => None,
        }
    }

    /// How the model sends a message in this host, for the block reason: Codex never shows
    /// the Tier 1 tools, so only the gateway's `send` action exists there; Claude Code and
    /// OpenCode's MCP route show `herdr_link_send` a turn late, so the reason names both.
    fn send_form(self) -> guard::SendForm {
        match self {
            Host::Codex => guard::SendForm::GatewayAction,
            Host::Claude | Host::OpenCode => guard::SendForm::Either,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Host::Claude => "claude",
            Host::Codex => "codex",
            Host::OpenCode => "opencode",
        }
    }
}

/// The most stdin the hook reads; a larger input is allowed unread.
pub const MAX_INPUT: u64 = 8 << 20;

/// Exit status of a block (Claude Code and Codex: "deny, stderr is the reason").
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

/// The whole decision for one input; `lookup` asks the host's live server whether it is
/// active for a Claude Code session id (called only when the command would be blocked in an
/// active session). Only Claude Code gives both sides its session id, so only its id is asked
/// with; elsewhere an id in the server's environment (leaked from an outer Claude Code) means
/// nothing.
pub fn decide(
    host: Host,
    input: &[u8],
    lookup: impl FnOnce(Option<&str>) -> Result<Lookup, String>,
) -> Decision {
    let (command, session) = match parse(host, input) {
        Ok(p) => p,
        Err((why, session)) => return Decision::allow(Some(why), session),
    };
    let verdict = guard::judge(&command);
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

/// Runs the hook on stdin; returns the exit status (0 allow, [`EXIT_BLOCK`] block).
pub fn run(host: Host) -> i32 {
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
        Ok(_) => std::panic::catch_unwind(|| decide(host, &input, activation::lookup_self))
            .unwrap_or_else(|_| Decision::allow(Some("internal error (panic)".into()), None)),
    };
    if let Some((code, detail)) = &decision.log {
        let session = match &decision.session {
            Some(s) => format!("{}:{s}", host.name()),
            None => host.name().to_string(),
        };
        oplog::record_now(&oplog::Entry {
            session: &session,
            tool: "guard",
            action: None,
            calls: &[],
            code,
            detail,
            elapsed: started.elapsed(),
            turn: None,
        });
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
        let d = decide(Host::Claude, WAIT.as_bytes(), active(None));
        assert_eq!(d.block, Verdict::BlockEndTurn.reason());
        assert_eq!(d.log.unwrap().0, "block_end_turn");
        // Codex has only the gateway's send action: the reason never names herdr_link_send.
        let d = decide(Host::Codex, PROMPT.as_bytes(), active(None));
        assert_eq!(
            d.block,
            Verdict::Block.reason_for(guard::SendForm::GatewayAction)
        );
        assert!(!d.block.unwrap().contains("herdr_link_send"));
        let d = decide(Host::Claude, PROMPT.as_bytes(), active(None));
        assert_eq!(d.block, Verdict::Block.reason());
        let d = decide(Host::Claude, WAIT.as_bytes(), |_| Ok(Lookup::Dormant));
        assert_eq!(d.block, None);
        assert!(d.log.unwrap().1.contains("dormant"));
        let d = decide(Host::Claude, WAIT.as_bytes(), |_| Err("boom".into()));
        assert_eq!(d.block, None);
    }

    #[test]
    fn allowed_commands_never_read_the_state() {
        let d = decide(Host::Claude, LS.as_bytes(), |_| panic!("looked up"));
        assert_eq!(d, Decision::allow(None, Some("s1".into())));
    }

    #[test]
    fn claude_session_ids_must_match_when_both_are_known() {
        assert!(decide(Host::Claude, WAIT.as_bytes(), active(Some("s1")))
            .block
            .is_some());
        assert!(decide(Host::Claude, WAIT.as_bytes(), active(Some("other")))
            .block
            .is_none());
        let no_id = r#"{"tool_name":"Bash","tool_input":{"command":"herdr agent wait b"}}"#;
        assert!(decide(Host::Claude, no_id.as_bytes(), active(Some("s1")))
            .block
            .is_some());
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
            for host in [Host::Claude, Host::Codex, Host::OpenCode] {
                let d = decide(host, c.as_bytes(), active(None));
                assert_eq!(d.block, None, "{host:?} {c}");
                assert_eq!(d.log.as_ref().map(|l| l.0), Some("allow"), "{c}");
            }
        }
        let mut junk = vec![0xff, 0xfe];
        junk.extend_from_slice(WAIT.as_bytes());
        assert_eq!(decide(Host::Claude, &junk, active(None)).block, None);
    }

    #[test]
    fn no_truncated_or_corrupted_input_blocks() {
        // Every proper prefix of a blocking input is malformed JSON: never a block.
        for host in [Host::Claude, Host::Codex] {
            for end in 0..WAIT.len() {
                let d = decide(host, &WAIT.as_bytes()[..end], active(None));
                assert_eq!(d.block, None, "{:?}", &WAIT[..end]);
            }
        }
        // Single-byte corruptions either stay a Bash call with a waiting command (a block is
        // then right) or are allowed; none panics.
        for i in 0..WAIT.len() {
            for b in [b'"', b'{', b'}', 0u8, 0xff, b'x'] {
                let mut bytes = WAIT.as_bytes().to_vec();
                bytes[i] = b;
                let d = decide(Host::Claude, &bytes, active(None));
                if d.block.is_some() {
                    let v: Value = serde_json::from_slice(&bytes).unwrap();
                    assert_eq!(v["tool_name"], "Bash");
                    let cmd = v["tool_input"]["command"].as_str().unwrap();
                    assert_ne!(guard::judge(cmd), Verdict::Allow);
                }
            }
        }
    }

    #[test]
    fn opencode_shape() {
        let wait = r#"{"tool":"bash","sessionID":"ses_1","args":{"command":"herdr agent wait b"}}"#;
        let d = decide(Host::OpenCode, wait.as_bytes(), active(None));
        assert_eq!(d.block, Verdict::BlockEndTurn.reason());
        assert_eq!(d.session.as_deref(), Some("ses_1"));
        // Only Claude Code's session ids are compared.
        let d = decide(
            Host::OpenCode,
            wait.as_bytes(),
            active(Some("claude-outer")),
        );
        assert!(d.block.is_some());
        let codex = WAIT.replace("s1", "codex-session");
        assert!(decide(Host::Codex, codex.as_bytes(), active(Some("s1")))
            .block
            .is_some());
        assert!(decide(Host::Claude, wait.as_bytes(), active(None))
            .block
            .is_none());
    }
}
