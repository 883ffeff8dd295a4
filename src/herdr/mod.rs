//! The Herdr CLI driver: the only code in the library that starts processes.
//!
//! Every call runs `$HERDR_BIN_PATH` with an argv array (never a shell), under a time limit, and
//! reads one JSON document from stdout or a `{"error":{"code","message"}}` object from stderr or
//! stdout. The public methods are exactly the command surface of PROTOCOL §8, so nothing else
//! (no `--wait`, `agent wait`, `agent read`, `pane read`, `send-text`, ...) can be run through it.

pub mod process;
pub mod records;
pub mod version;

use std::cell::RefCell;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::env::{self, HerdrEnv};
use crate::error::LinkError;
pub use crate::oplog::CallTrace;
use process::{Exit, RunError};

/// A CLI call that did not give a usable answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliFailure {
    /// Spawn failure, oversized or non-JSON output, or any other transport problem.
    Transport(String),
    /// The call ran out of its time limit and was killed. Herdr may still have acted on it (a
    /// prompt queued in Herdr 0.9 is typed later); it classifies like a transport failure
    /// unless the operation knows better (send: the message may still arrive).
    TimedOut(String),
    /// The kernel refused the call's argv as too long (`E2BIG`): Herdr was never reached and
    /// is not at fault, so the operation's own code applies (never NOT_IN_HERDR).
    ArgsTooLong(String),
    /// Herdr's CLI ran and refused the command line itself: a usage or validation error, as
    /// plain text on stderr with exit status 2 (for example `unsupported interactive agent
    /// kind: X` from `agent start`). Herdr is there and said no, so the operation's own code
    /// applies (never NOT_IN_HERDR).
    Refused(String),
    /// Herdr answered with a structured error.
    Rejected {
        /// Herdr's error code (e.g. `agent_not_found`).
        code: String,
        /// Herdr's message (may carry ids; internal only).
        message: String,
    },
}

impl CliFailure {
    /// Whether Herdr rejected the call with this code.
    pub fn is_code(&self, code: &str) -> bool {
        matches!(self, CliFailure::Rejected { code: c, .. } if c == code)
    }

    /// The internal detail for logs.
    pub fn detail(&self) -> String {
        match self {
            CliFailure::Transport(d)
            | CliFailure::TimedOut(d)
            | CliFailure::ArgsTooLong(d)
            | CliFailure::Refused(d) => d.clone(),
            CliFailure::Rejected { code, message } if message.is_empty() => code.clone(),
            CliFailure::Rejected { code, message } => format!("{code}: {message}"),
        }
    }

    /// The common classification: transport failures and `not_in_herdr` are NOT_IN_HERDR,
    /// `agent_not_found` is PEER_NOT_FOUND, anything else (an argv too long for the kernel and
    /// a command line Herdr's CLI refused included) gets the operation's `fallback` code.
    pub fn classify(self, fallback: impl FnOnce(String) -> LinkError) -> LinkError {
        match &self {
            CliFailure::Transport(_) | CliFailure::TimedOut(_) => {
                LinkError::NotInHerdr(self.detail())
            }
            _ if self.is_code("not_in_herdr") => LinkError::NotInHerdr(self.detail()),
            _ if self.is_code("agent_not_found") => LinkError::PeerNotFound(self.detail()),
            _ => fallback(self.detail()),
        }
    }
}

/// A handle on the Herdr CLI for one operation; it records every call for the operator log.
pub struct Herdr {
    bin: String,
    timeout: Duration,
    start_timeout: Duration,
    trace: RefCell<Vec<CallTrace>>,
}

impl Herdr {
    /// A driver for the binary the environment names, with the limits the environment sets.
    pub fn new(env: &HerdrEnv) -> Herdr {
        Herdr {
            bin: env.bin.clone(),
            timeout: env::call_timeout(),
            start_timeout: env::start_timeout(),
            trace: RefCell::new(Vec::new()),
        }
    }

    /// The time limit of one ordinary call (`HERDR_LINK_TIMEOUT_MS`).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Takes the calls recorded so far.
    pub fn take_trace(&self) -> Vec<CallTrace> {
        std::mem::take(&mut self.trace.borrow_mut())
    }

    /// `agent get <target>`.
    pub fn agent_get(&self, target: &str) -> Result<Value, CliFailure> {
        self.run(&["agent", "get", target], self.timeout)
    }

    /// `agent list`.
    pub fn agent_list(&self) -> Result<Value, CliFailure> {
        self.run(&["agent", "list"], self.timeout)
    }

    /// `agent prompt <target> <text>`: exactly four argv elements, never `--wait`. It gets the
    /// whole call limit, however long the delivery waited for its turn before.
    pub fn agent_prompt(&self, target: &str, text: &str) -> Result<Value, CliFailure> {
        self.run(&["agent", "prompt", target, text], self.timeout)
    }

    /// `agent rename <pane> <name>`: only the self-identity bootstrap calls this.
    pub fn agent_rename(&self, pane: &str, name: &str) -> Result<Value, CliFailure> {
        self.run(&["agent", "rename", pane, name], self.timeout)
    }

    /// `agent start <name> --kind <kind> --pane <pane> -- <args...>` (the `--` always present).
    pub fn agent_start(
        &self,
        name: &str,
        kind: &str,
        pane: &str,
        args: &[String],
    ) -> Result<Value, CliFailure> {
        let mut argv = vec!["agent", "start", name, "--kind", kind, "--pane", pane, "--"];
        argv.extend(args.iter().map(String::as_str));
        self.run(&argv, self.start_timeout)
    }

    /// `pane get <pane>`.
    pub fn pane_get(&self, pane: &str) -> Result<Value, CliFailure> {
        self.run(&["pane", "get", pane], self.timeout)
    }

    /// `pane list --workspace <ws>`.
    pub fn pane_list(&self, workspace: &str) -> Result<Value, CliFailure> {
        self.run(&["pane", "list", "--workspace", workspace], self.timeout)
    }

    /// `pane split <pane> --direction right --cwd <cwd> --no-focus`.
    pub fn pane_split(&self, pane: &str, cwd: &str) -> Result<Value, CliFailure> {
        self.run(
            &[
                "pane",
                "split",
                pane,
                "--direction",
                "right",
                "--cwd",
                cwd,
                "--no-focus",
            ],
            self.timeout,
        )
    }

    /// `pane close <pane>` (the whole call limit, after any wait for the delivery turn).
    pub fn pane_close(&self, pane: &str) -> Result<Value, CliFailure> {
        self.run(&["pane", "close", pane], self.timeout)
    }

    /// `tab create --workspace <ws> --cwd <cwd> [--label <label>] --no-focus`.
    pub fn tab_create(
        &self,
        workspace: &str,
        cwd: &str,
        label: Option<&str>,
    ) -> Result<Value, CliFailure> {
        let mut argv = vec!["tab", "create", "--workspace", workspace, "--cwd", cwd];
        if let Some(label) = label {
            argv.extend(["--label", label]);
        }
        argv.push("--no-focus");
        self.run(&argv, self.timeout)
    }

    /// `tab close <tab>`: only a failed start's rollback calls this.
    pub fn tab_close(&self, tab: &str) -> Result<Value, CliFailure> {
        self.run(&["tab", "close", tab], self.timeout)
    }

    /// `--version`, for the operator's `doctor` only: the first line of stdout (e.g.
    /// `herdr 0.8.0`).
    pub fn version(&self) -> Result<String, CliFailure> {
        let f = process::run(&self.bin, &["--version"], self.timeout)
            .map_err(|e| CliFailure::Transport(format!("herdr --version: {e}")))?;
        let out = String::from_utf8_lossy(&f.stdout);
        match (f.exit, out.lines().next()) {
            (Exit::Code(0), Some(line)) if !line.trim().is_empty() => Ok(line.trim().to_string()),
            _ => Err(CliFailure::Transport(format!(
                "herdr --version ended with {:?} and printed {:?}",
                f.exit,
                out.trim()
            ))),
        }
    }

    fn run(&self, args: &[&str], limit: Duration) -> Result<Value, CliFailure> {
        let started = Instant::now();
        let result = process::run(&self.bin, args, limit);
        let outcome = match &result {
            Ok(f) => match f.exit {
                Exit::Code(c) => format!("exit={c}"),
                Exit::Signal(s) => format!("signal={s}"),
            },
            Err(RunError::Spawn(_)) => "spawn-failed".into(),
            Err(RunError::ArgsTooLong(_)) => "args-too-long".into(),
            Err(RunError::Timeout(_)) => "timeout".into(),
            Err(RunError::TooLarge) => "too-large".into(),
            Err(RunError::Io(_)) => "io-error".into(),
        };
        self.trace.borrow_mut().push(CallTrace {
            argv: args.iter().map(|s| s.to_string()).collect(),
            outcome,
            duration: started.elapsed(),
        });
        let finished = result.map_err(|e| {
            let detail = format!("herdr {}: {e}", args[..2].join(" "));
            match e {
                RunError::ArgsTooLong(_) => CliFailure::ArgsTooLong(detail),
                RunError::Timeout(_) => CliFailure::TimedOut(detail),
                _ => CliFailure::Transport(detail),
            }
        })?;
        interpret(finished, args)
    }
}

/// Turns a finished process into a JSON value or a classified failure (behaviour doc §2.2).
fn interpret(f: process::Finished, args: &[&str]) -> Result<Value, CliFailure> {
    let what = args[..2.min(args.len())].join(" ");
    if f.exit == Exit::Code(0) {
        let value: Value = serde_json::from_slice(&f.stdout).map_err(|e| {
            CliFailure::Transport(format!("herdr {what}: response is not JSON: {e}"))
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
    if f.exit == Exit::Code(USAGE_EXIT) && !stderr.is_empty() {
        return Err(CliFailure::Refused(detail));
    }
    Err(CliFailure::Transport(detail))
}

/// The exit status of Herdr's CLI for a command line it refuses (usage and argument
/// validation errors, plain text on stderr). Its other failures exit 1: a server error as JSON
/// (handled above), or an io failure as an `Error: …` line, which is a transport failure.
const USAGE_EXIT: i32 = 2;

fn parse_error(bytes: &[u8]) -> Option<CliFailure> {
    let value: Value = serde_json::from_slice(bytes).ok()?;
    structured_error(&value)
}

/// A channel holds a structured CLI error when it is an object whose `error` is an object with a
/// non-empty string `code` (`message` optional).
fn structured_error(value: &Value) -> Option<CliFailure> {
    let error = value.as_object()?.get("error")?.as_object()?;
    let code = error.get("code")?.as_str().filter(|c| !c.is_empty())?;
    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
    Some(CliFailure::Rejected {
        code: code.to_string(),
        message: message.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fin(code: i32, out: &str, err: &str) -> process::Finished {
        process::Finished {
            exit: Exit::Code(code),
            stdout: out.as_bytes().to_vec(),
            stderr: err.as_bytes().to_vec(),
        }
    }

    const ARGS: &[&str] = &["agent", "get", "x"];

    #[test]
    fn interprets_success_and_errors() {
        assert!(interpret(fin(0, "{\"result\":{}}\n", ""), ARGS).is_ok());
        let e = interpret(
            fin(1, "", r#"{"error":{"code":"agent_not_found","message":"agent target ghost not found"},"id":"cli:agent:get"}"#),
            ARGS,
        )
        .unwrap_err();
        assert!(e.is_code("agent_not_found"));
        assert!(e.detail().contains("agent target ghost not found"));
        // error JSON on stdout
        let e = interpret(
            fin(1, r#"{"error":{"code":"agent_not_ready"}}"#, "junk"),
            ARGS,
        )
        .unwrap_err();
        assert!(e.is_code("agent_not_ready"));
        // exit 0 with an error object still fails
        let e = interpret(
            fin(
                0,
                r#"{"error":{"code":"pane_close_failed","message":"m"}}"#,
                "",
            ),
            ARGS,
        )
        .unwrap_err();
        assert!(e.is_code("pane_close_failed"));
        let e = interpret(fin(0, "{}", r#"{"error":{"code":"x"}}"#), ARGS).unwrap_err();
        assert!(e.is_code("x"));
        // non-JSON
        assert!(matches!(
            interpret(fin(0, "garbage", ""), ARGS),
            Err(CliFailure::Transport(_))
        ));
        assert!(matches!(
            interpret(fin(0, "", ""), ARGS),
            Err(CliFailure::Transport(_))
        ));
        assert!(matches!(
            interpret(fin(0, "{} {}", ""), ARGS),
            Err(CliFailure::Transport(_))
        ));
        assert!(matches!(
            interpret(fin(1, "", "Error: Custom { kind: Other }"), ARGS),
            Err(CliFailure::Transport(_))
        ));
        // A command line Herdr's CLI refused (exit 2, plain text) is not a transport failure.
        for text in [
            "usage: herdr agent get <target>",
            "unsupported interactive agent kind: no-such-agent\n",
            "missing value for --cwd",
            "error: invalid session name",
        ] {
            let e = interpret(fin(2, "", text), ARGS).unwrap_err();
            assert!(matches!(e, CliFailure::Refused(_)), "{text}: {e:?}");
            assert!(e.detail().contains(text.trim()), "{e:?}");
        }
        // Exit 2 with nothing said, or an io failure (exit 1), stays a transport failure.
        assert!(matches!(
            interpret(fin(2, "", "  \n"), ARGS),
            Err(CliFailure::Transport(_))
        ));
        // empty code is not structured
        assert!(matches!(
            interpret(fin(1, "", r#"{"error":{"code":""}}"#), ARGS),
            Err(CliFailure::Transport(_))
        ));
    }

    #[test]
    fn classification_passes_through() {
        let t = CliFailure::Transport("socket hang up".into());
        assert_eq!(t.classify(LinkError::SendFailed).code(), "NOT_IN_HERDR");
        let t = CliFailure::TimedOut("herdr agent get: timed out".into());
        assert_eq!(t.classify(LinkError::SendFailed).code(), "NOT_IN_HERDR");
        let n = CliFailure::Rejected {
            code: "not_in_herdr".into(),
            message: String::new(),
        };
        assert_eq!(n.classify(LinkError::CloseFailed).code(), "NOT_IN_HERDR");
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
        assert_eq!(
            refused().classify(LinkError::SendFailed).code(),
            "SEND_FAILED"
        );
        assert_eq!(
            refused().classify(LinkError::CloseFailed).code(),
            "CLOSE_FAILED"
        );
        let long = || CliFailure::ArgsTooLong("herdr agent prompt: argument list too long".into());
        assert_eq!(long().classify(LinkError::SendFailed).code(), "SEND_FAILED");
        assert_eq!(
            long().classify(LinkError::StartFailed).code(),
            "START_FAILED"
        );
    }
}
