//! What a failed Herdr CLI call means, decided once, here, by what happened (PROTOCOL §7).
//!
//! Either Herdr is not usable at all — no server, a server of another protocol, a server that
//! cannot serve, a binary that is not this Herdr, a binary that did not run or did not finish —
//! and every operation reports `NOT_IN_HERDR` at every step; or Herdr is there and refused this
//! operation, and the operation's own code applies.

use serde_json::Value;

use super::process::{Exit, Finished};
use crate::error::LinkError;

/// Why Herdr cannot be used right now. Every cause is `NOT_IN_HERDR` to the model; the cause
/// itself is for the operator (the log, `herdr-link doctor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unavailable {
    /// Herdr's CLI found no server at its socket (`server_not_running`).
    NoServer,
    /// The binary and the running server speak different socket protocols
    /// (`protocol_mismatch`): Herdr was upgraded, or downgraded, while its server runs.
    ProtocolMismatch,
    /// The server is there but could not serve the request (`server_unavailable`, a request it
    /// could not read or does not know, an internal failure), or Herdr's CLI failed talking to
    /// it (an `Error: …` io failure, exit status 1).
    ServerFailed,
    /// The binary does not speak Herdr's CLI: it refused a command line Link built itself, or
    /// answered with something that is not Herdr's JSON.
    NotHerdr,
    /// The binary did not give an answer: it could not be started, was killed, or printed more
    /// than Link reads.
    NoAnswer,
    /// The call ran over its time limit and was killed. Herdr may still act on it (0.9 queues a
    /// prompt and types it later), so an operation that knows better says so (send: the message
    /// may still arrive); everywhere else it is `NOT_IN_HERDR` like any call without an answer.
    TimedOut,
}

/// The error codes Herdr's CLI uses for "no usable server" (Herdr 0.8.0 to 0.9: `src/cli.rs`,
/// `src/cli/server_not_running.rs`, `src/cli/protocol_guard.rs`, `src/api/server.rs`,
/// `src/cli/agent.rs`). None of them is a refusal of the operation asked for.
const UNAVAILABLE_CODES: [(&str, Unavailable); 7] = [
    ("server_not_running", Unavailable::NoServer),
    ("protocol_mismatch", Unavailable::ProtocolMismatch),
    // The server could not dispatch or finish the request, or is shutting down.
    ("server_unavailable", Unavailable::ServerFailed),
    // The server could not parse the request line the CLI sent (client and server disagree).
    ("invalid_request", Unavailable::ServerFailed),
    // The server does not know the method the CLI sent.
    ("not_implemented", Unavailable::ServerFailed),
    // The server could not encode its answer.
    ("internal_error", Unavailable::ServerFailed),
    // `agent start`: the CLI lost the server while waiting for the new agent.
    ("agent_start_transport_failed", Unavailable::ServerFailed),
];

/// A CLI call that did not give a usable answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliFailure {
    /// Herdr is not usable (see [`Unavailable`]): `NOT_IN_HERDR` at every step of every
    /// operation, never relabelled.
    Unavailable {
        /// What happened.
        cause: Unavailable,
        /// The internal detail for the operator log.
        detail: String,
    },
    /// The kernel refused the call's argv as too long (`E2BIG`): Herdr was never reached and
    /// is not at fault, so the operation's own code applies (never NOT_IN_HERDR).
    ArgsTooLong(String),
    /// Herdr's CLI refused a value the model or the configuration supplied (a start kind it does
    /// not know, a label or a directory its argument handling takes for one of its own flags): a
    /// usage error, plain text on stderr with exit status 2. Herdr is there and said no to that
    /// value, so the operation's own code applies. Any other usage refusal is of Link's own
    /// command line, which this Herdr would accept: the binary is not Herdr.
    Refused(String),
    /// Herdr answered with a structured error about the operation itself.
    Rejected {
        /// Herdr's error code (e.g. `agent_not_found`).
        code: String,
        /// Herdr's message (may carry ids; internal only).
        message: String,
    },
}

impl CliFailure {
    /// Whether Herdr refused an agent start's kind as one it does not know: its CLI's usage
    /// refusal (`unsupported interactive agent kind: K`, checked before the server is asked) or
    /// the server's `unsupported_agent_kind`.
    pub(crate) fn refuses_kind(&self) -> bool {
        match self {
            CliFailure::Refused(detail) => detail.contains(UNSUPPORTED_KIND),
            _ => self.is_code("unsupported_agent_kind"),
        }
    }

    /// Herdr is not usable, because of `cause`.
    pub fn unavailable(cause: Unavailable, detail: impl Into<String>) -> CliFailure {
        CliFailure::Unavailable {
            cause,
            detail: detail.into(),
        }
    }

    /// Whether Herdr rejected the call with this code.
    pub(crate) fn is_code(&self, code: &str) -> bool {
        matches!(self, CliFailure::Rejected { code: c, .. } if c == code)
    }

    /// Why Herdr is not usable, when that is what this failure says.
    pub fn unavailable_cause(&self) -> Option<Unavailable> {
        match self {
            CliFailure::Unavailable { cause, .. } => Some(*cause),
            _ => None,
        }
    }

    /// The internal detail for logs.
    pub fn detail(&self) -> String {
        match self {
            CliFailure::Unavailable { detail, .. }
            | CliFailure::ArgsTooLong(detail)
            | CliFailure::Refused(detail) => detail.clone(),
            CliFailure::Rejected { code, message } if message.is_empty() => code.clone(),
            CliFailure::Rejected { code, message } => format!("{code}: {message}"),
        }
    }

    /// The one classification every step uses: an unavailable Herdr is NOT_IN_HERDR,
    /// `agent_not_found` is PEER_NOT_FOUND, anything else (an argv too long for the kernel and a
    /// supplied value Herdr's CLI refused included) gets the operation's `fallback` code.
    pub fn classify(self, fallback: impl FnOnce(String) -> LinkError) -> LinkError {
        match &self {
            CliFailure::Unavailable { .. } => LinkError::NotInHerdr(self.detail()),
            _ if self.is_code("agent_not_found") => LinkError::PeerNotFound(self.detail()),
            _ => fallback(self.detail()),
        }
    }

    /// For the operator (`herdr-link doctor`): what makes Herdr unusable, in one line with the
    /// fix, when this failure says Herdr is unusable. `bin` names the binary as the operator
    /// knows it (e.g. `HERDR_BIN_PATH (/usr/local/bin/herdr)`).
    pub fn operator_cause(&self, bin: &str) -> Option<String> {
        let CliFailure::Unavailable { cause, detail } = self else {
            return None;
        };
        Some(match cause {
            Unavailable::NoServer => {
                let (socket, attach) = no_server_parts(detail);
                format!(
                    "the Herdr server is not running at {socket}; fix: start or attach it (`{attach}`), then retry"
                )
            }
            Unavailable::ProtocolMismatch => {
                let fix = if detail.contains("is older than server protocol") {
                    "point HERDR_BIN_PATH at the newer herdr that runs the server".to_string()
                } else {
                    "restart Herdr (`herdr server stop`, then `herdr`; stopping ends the agents in its panes)".to_string()
                };
                format!(
                    "the Herdr server and {bin} speak different protocols ({}); fix: {fix}",
                    protocol_clause(detail)
                )
            }
            Unavailable::NotHerdr => format!(
                "{bin} is not Herdr ({detail}); fix: point HERDR_BIN_PATH at the herdr binary"
            ),
            Unavailable::ServerFailed => format!(
                "the Herdr server could not serve the request ({detail}); fix: retry, and restart Herdr if it persists"
            ),
            Unavailable::NoAnswer => format!(
                "{bin} gave no answer ({detail}); fix: check that HERDR_BIN_PATH names a working herdr binary"
            ),
            Unavailable::TimedOut => format!(
                "{bin} did not answer within the time limit ({detail}); fix: check that the Herdr server is responsive, or raise HERDR_LINK_TIMEOUT_MS"
            ),
        })
    }
}

/// The socket and the start command from Herdr's `server_not_running` message (`no herdr server
/// is running at SOCKET; run `CMD` to start or attach it`), or stand-ins when it says otherwise.
fn no_server_parts(detail: &str) -> (String, String) {
    let parsed = detail
        .split_once("no herdr server is running at ")
        .and_then(|(_, rest)| rest.split_once("; run `"))
        .and_then(|(socket, rest)| Some((socket, rest.split_once('`')?.0)));
    match parsed {
        Some((socket, attach)) => (socket.to_string(), attach.to_string()),
        None => {
            let socket = crate::env::socket_path();
            let socket = if socket.is_empty() {
                "its socket".to_string()
            } else {
                socket
            };
            (socket, "herdr".to_string())
        }
    }
}

/// `client protocol N is newer|older than server protocol M` from a `protocol_mismatch`
/// message, or a stand-in.
fn protocol_clause(detail: &str) -> &str {
    detail
        .find("client protocol ")
        .map(|i| &detail[i..])
        .map(|s| s.split(';').next().unwrap_or(s))
        .unwrap_or("protocol_mismatch")
}

/// The exit status of Herdr's CLI for a command line it refuses (usage and argument
/// validation errors, plain text on stderr). Its other failures exit 1: a server error as JSON,
/// or an io failure as an `Error: …` line.
const USAGE_EXIT: i32 = 2;

/// Whether a usage refusal saying `stderr` is Herdr refusing one of the `supplied` values (what
/// the model or the configuration gave; empty when Link built the whole argv). Herdr's CLI takes
/// any next argv element as an option's value, so with Link's command lines only two refusals
/// are about a supplied value: `agent start`'s `unsupported interactive agent kind: K`, and a
/// value its global argument handling claims as one of its own flags (`--session …`,
/// `--remote …`, `--handoff`: anything starting with `-`).
fn refuses_supplied(stderr: &str, supplied: &[&str]) -> bool {
    supplied.iter().any(|v| {
        v.starts_with('-')
            || stderr
                .strip_prefix(UNSUPPORTED_KIND)
                .is_some_and(|k| k == *v)
    })
}

/// How Herdr's CLI begins its refusal of an agent kind it does not know (then the kind).
const UNSUPPORTED_KIND: &str = "unsupported interactive agent kind: ";

/// Turns a finished process into a JSON value or a classified failure (behaviour doc §2.2).
/// `what` is the call as the log names it (`agent get`); `supplied`, the values in its argv that
/// the model or the configuration gave (none when Link built it all).
pub(super) fn interpret(f: Finished, what: &str, supplied: &[&str]) -> Result<Value, CliFailure> {
    if f.exit == Exit::Code(0) {
        let value: Value = serde_json::from_slice(&f.stdout).map_err(|e| {
            CliFailure::unavailable(
                Unavailable::NotHerdr,
                format!("herdr {what}: response is not JSON: {e}"),
            )
        })?;
        if let Some(rejected) = structured_error(&value).or_else(|| parse_error(&f.stderr)) {
            return Err(rejected);
        }
        return Ok(value);
    }
    if let Some(rejected) = parse_error(&f.stdout).or_else(|| parse_error(&f.stderr)) {
        return Err(rejected);
    }
    let status = match f.exit {
        Exit::Code(c) => format!("exit code {c}"),
        Exit::Signal(s) => format!("signal {s}"),
    };
    let stderr = String::from_utf8_lossy(&f.stderr);
    let stderr: String = stderr.trim().chars().take(300).collect();
    let detail = format!("herdr {what} failed with {status}: {stderr}");
    let cause = match f.exit {
        Exit::Signal(_) => Unavailable::NoAnswer,
        Exit::Code(USAGE_EXIT) if !stderr.is_empty() && refuses_supplied(&stderr, supplied) => {
            return Err(CliFailure::Refused(detail))
        }
        // Herdr's own io failure (`main` returned an error): it could not talk to its server.
        Exit::Code(1) if stderr.starts_with("Error: ") => Unavailable::ServerFailed,
        // A refusal of Link's own command line, or any other non-Herdr answer.
        Exit::Code(_) => Unavailable::NotHerdr,
    };
    Err(CliFailure::unavailable(cause, detail))
}

fn parse_error(bytes: &[u8]) -> Option<CliFailure> {
    let value: Value = serde_json::from_slice(bytes).ok()?;
    structured_error(&value)
}

/// A channel holds a structured CLI error when it is an object whose `error` is an object with a
/// non-empty string `code` (`message` optional). Herdr's "no usable server" codes say Herdr is
/// unavailable; every other code is a rejection of the operation.
fn structured_error(value: &Value) -> Option<CliFailure> {
    let error = value.as_object()?.get("error")?.as_object()?;
    let code = error.get("code")?.as_str().filter(|c| !c.is_empty())?;
    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
    if let Some((_, cause)) = UNAVAILABLE_CODES.iter().find(|(c, _)| *c == code) {
        return Some(CliFailure::unavailable(
            *cause,
            format!("{code}: {message}"),
        ));
    }
    Some(CliFailure::Rejected {
        code: code.to_string(),
        message: message.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fin(code: i32, out: &str, err: &str) -> Finished {
        Finished {
            exit: Exit::Code(code),
            stdout: out.as_bytes().to_vec(),
            stderr: err.as_bytes().to_vec(),
        }
    }

    fn built(f: Finished) -> Result<Value, CliFailure> {
        interpret(f, "agent get", &[])
    }

    fn cause(r: Result<Value, CliFailure>) -> Option<Unavailable> {
        r.unwrap_err().unavailable_cause()
    }

    #[test]
    fn interprets_success_and_errors() {
        assert!(built(fin(0, "{\"result\":{}}\n", "")).is_ok());
        let e = built(fin(1, "", r#"{"error":{"code":"agent_not_found","message":"agent target ghost not found"},"id":"cli:agent:get"}"#))
        .unwrap_err();
        assert!(e.is_code("agent_not_found"));
        assert!(e.detail().contains("agent target ghost not found"));
        // error JSON on stdout
        let e = built(fin(1, r#"{"error":{"code":"agent_not_ready"}}"#, "junk")).unwrap_err();
        assert!(e.is_code("agent_not_ready"));
        // exit 0 with an error object still fails
        let e = built(fin(
            0,
            r#"{"error":{"code":"pane_close_failed","message":"m"}}"#,
            "",
        ))
        .unwrap_err();
        assert!(e.is_code("pane_close_failed"));
        let e = built(fin(0, "{}", r#"{"error":{"code":"x"}}"#)).unwrap_err();
        assert!(e.is_code("x"));
        // Not Herdr's JSON: not this Herdr.
        for out in ["garbage", "", "{} {}"] {
            assert_eq!(
                cause(built(fin(0, out, ""))),
                Some(Unavailable::NotHerdr),
                "{out:?}"
            );
        }
        // Herdr's own io failure.
        assert_eq!(
            cause(built(fin(1, "", "Error: Custom { kind: Other }"))),
            Some(Unavailable::ServerFailed)
        );
        // empty code is not structured
        assert_eq!(
            cause(built(fin(1, "", r#"{"error":{"code":""}}"#))),
            Some(Unavailable::NotHerdr)
        );
        let killed = Finished {
            exit: Exit::Signal(9),
            stdout: Vec::new(),
            stderr: Vec::new(),
        };
        assert_eq!(cause(built(killed)), Some(Unavailable::NoAnswer));
    }

    /// Herdr's own words for "no server" and "other protocol", as its CLI prints them (id
    /// first, on stderr, exit status 1), and its server-side "cannot serve" codes.
    #[test]
    fn herdr_environment_answers_are_unavailable() {
        let no_server = r#"{"id":"cli:agent:get","error":{"code":"server_not_running","message":"no herdr server is running at /run/h.sock; run `herdr` to start or attach it"}}"#;
        let e = built(fin(1, "", no_server)).unwrap_err();
        assert_eq!(e.unavailable_cause(), Some(Unavailable::NoServer));
        assert_eq!(
            e.clone().classify(LinkError::SendFailed).code(),
            "NOT_IN_HERDR"
        );
        let line = e.operator_cause("HERDR_BIN_PATH (/b/herdr)").unwrap();
        assert!(line.contains("not running at /run/h.sock"), "{line}");
        assert!(line.contains("`herdr`"), "{line}");

        let newer = r#"{"id":"cli:pane:close","error":{"code":"protocol_mismatch","message":"client protocol 20 is newer than server protocol 19; restart the Herdr server before using this command. Stop the old server to use the new version.\nStopping exits pane processes.\nRun `herdr server stop`, then run `herdr` again."}}"#;
        let e = built(fin(1, "", newer)).unwrap_err();
        assert_eq!(e.unavailable_cause(), Some(Unavailable::ProtocolMismatch));
        assert_eq!(
            e.clone().classify(LinkError::CloseFailed).code(),
            "NOT_IN_HERDR"
        );
        let line = e.operator_cause("HERDR_BIN_PATH (/b/herdr)").unwrap();
        assert!(
            line.contains("client protocol 20 is newer than server protocol 19"),
            "{line}"
        );
        assert!(line.contains("restart Herdr"), "{line}");
        assert!(!line.contains('\n'), "one line: {line}");

        for code in [
            "server_unavailable",
            "invalid_request",
            "not_implemented",
            "internal_error",
            "agent_start_transport_failed",
        ] {
            let text = format!(r#"{{"error":{{"code":"{code}","message":"m"}},"id":"cli:x"}}"#);
            let e = built(fin(1, "", &text)).unwrap_err();
            assert_eq!(
                e.unavailable_cause(),
                Some(Unavailable::ServerFailed),
                "{code}"
            );
            assert_eq!(e.classify(LinkError::StartFailed).code(), "NOT_IN_HERDR");
        }
        // A code Herdr does not send stays an ordinary rejection.
        let e = built(fin(1, "", r#"{"error":{"code":"not_in_herdr"}}"#)).unwrap_err();
        assert!(e.is_code("not_in_herdr"));
        assert_eq!(e.operator_cause("x"), None);
    }

    /// A usage refusal (exit 2, plain text) of Link's own command line means the binary does not
    /// speak this grammar; Herdr's refusal of a supplied value (a kind, or a label or directory
    /// that looks like one of its flags) keeps the operation's code.
    #[test]
    fn usage_refusals_are_of_a_supplied_value_or_of_a_binary_that_is_not_herdr() {
        let start = |text: &str, supplied: &[&str]| {
            interpret(fin(2, "", text), "agent start", supplied).unwrap_err()
        };
        let kind = "unsupported interactive agent kind: no-such-agent\n";
        let e = start(kind, &["no-such-agent"]);
        assert!(matches!(e, CliFailure::Refused(_)), "{e:?}");
        assert!(e.detail().contains(kind.trim()), "{e:?}");
        assert!(e.refuses_kind(), "the kind is what Herdr refused: {e:?}");
        assert_eq!(e.classify(LinkError::StartFailed).code(), "START_FAILED");
        // A label Herdr's global argument handling takes for its own flag.
        let e = start(
            "error: --remote can only be used with the default launch command",
            &["/p", "--remote"],
        );
        assert!(matches!(e, CliFailure::Refused(_)), "{e:?}");
        assert!(!e.refuses_kind(), "not the kind: {e:?}");
        // The server's own refusal of the kind.
        let server = CliFailure::Rejected {
            code: "unsupported_agent_kind".into(),
            message: "unsupported interactive agent kind x".into(),
        };
        assert!(server.refuses_kind());
        // Another kind named, or a complaint about Link's own words: not Herdr.
        for (text, supplied) in [
            (kind, &["pi"][..]),
            ("usage: herdr agent get <target>", &[][..]),
            (
                "ls: unrecognized option '--kind'\nTry 'ls --help' for more information.",
                &["pi"][..],
            ),
            ("missing value for --cwd", &["/p", "side"][..]),
            ("  \n", &["-x"][..]),
        ] {
            let e = start(text, supplied);
            assert_eq!(e.unavailable_cause(), Some(Unavailable::NotHerdr), "{text}");
            assert!(e.detail().contains(text.trim()), "{e:?}");
        }
        let e = built(fin(2, "", "ls: cannot access 'agent'")).unwrap_err();
        let line = e.operator_cause("HERDR_BIN_PATH (/bin/ls)").unwrap();
        assert!(
            line.starts_with("HERDR_BIN_PATH (/bin/ls) is not Herdr"),
            "{line}"
        );
    }

    #[test]
    fn classification_passes_through() {
        let t = CliFailure::unavailable(Unavailable::NoAnswer, "socket hang up");
        assert_eq!(t.classify(LinkError::SendFailed).code(), "NOT_IN_HERDR");
        let a = CliFailure::Rejected {
            code: "agent_not_found".into(),
            message: "m".into(),
        };
        assert_eq!(a.classify(LinkError::SendFailed).code(), "PEER_NOT_FOUND");
        let o = CliFailure::Rejected {
            code: "agent_not_ready".into(),
            message: "m".into(),
        };
        assert_eq!(o.classify(LinkError::SendFailed).code(), "SEND_FAILED");
        let refused = || CliFailure::Refused("unsupported interactive agent kind: x".into());
        assert_eq!(
            refused().classify(LinkError::StartFailed).code(),
            "START_FAILED"
        );
        let long = || CliFailure::ArgsTooLong("herdr agent prompt: argument list too long".into());
        assert_eq!(long().classify(LinkError::SendFailed).code(), "SEND_FAILED");
        assert_eq!(
            long().classify(LinkError::StartFailed).code(),
            "START_FAILED"
        );
    }
}
