//! The Herdr CLI driver: the only code in the library that starts processes.
//!
//! Every call runs `$HERDR_BIN_PATH` with an argv array (never a shell), under a time limit, and
//! reads one JSON document from stdout or a `{"error":{"code","message"}}` object from stderr or
//! stdout. The public methods are exactly the command surface of PROTOCOL §8, so nothing else
//! (no `--wait`, `agent wait`, `agent read`, `pane read`, `send-text`, ...) can be run through it.
//! What a failed call means is decided once, in [`failure`], for every step of every operation.

mod failure;
pub(crate) mod process;
pub mod records;
pub mod version;

use std::cell::RefCell;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::env::{self, HerdrEnv};
pub use failure::{CliFailure, Unavailable};
use process::{Exit, RunError};

/// The record of this driver's calls is the operator log's (defined there, so the log stays a
/// leaf that imports no driver).
pub use crate::oplog::CallTrace;

/// A handle on the Herdr CLI for one operation; it records every call for the operator log.
pub struct Herdr {
    bin: String,
    timeout: Duration,
    start_timeout: Duration,
    trace: RefCell<Vec<CallTrace>>,
    last_failure: RefCell<Option<CliFailure>>,
}

impl Herdr {
    /// A driver for the binary the environment names, with the limits the environment sets.
    pub fn new(env: &HerdrEnv) -> Herdr {
        Herdr {
            bin: env.bin.clone(),
            timeout: env::call_timeout(),
            start_timeout: env::start_timeout(),
            trace: RefCell::new(Vec::new()),
            last_failure: RefCell::new(None),
        }
    }

    /// The time limit of one ordinary call (`HERDR_LINK_TIMEOUT_MS`).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Takes the calls recorded so far.
    pub(crate) fn take_trace(&self) -> Vec<CallTrace> {
        std::mem::take(&mut self.trace.borrow_mut())
    }

    /// How long the most recent call took, if one was made.
    pub(crate) fn last_duration(&self) -> Option<Duration> {
        self.trace.borrow().last().map(|c| c.duration)
    }

    /// How the most recent failed call failed, for an operator tool that reports the cause of
    /// a Link error in Herdr's terms (`herdr-link doctor`, after a call through
    /// [`crate::identity`] that answers only with the Link code).
    pub fn last_failure(&self) -> Option<CliFailure> {
        self.last_failure.borrow().clone()
    }

    /// `agent get <target>`.
    pub(crate) fn agent_get(&self, target: &str) -> Result<Value, CliFailure> {
        self.run(&["agent", "get", target], self.timeout)
    }

    /// `agent list`.
    pub fn agent_list(&self) -> Result<Value, CliFailure> {
        self.run(&["agent", "list"], self.timeout)
    }

    /// `agent prompt <target> <text>`: exactly four argv elements, never `--wait`. It gets the
    /// whole call limit, however long the delivery waited for its turn before.
    pub(crate) fn agent_prompt(&self, target: &str, text: &str) -> Result<Value, CliFailure> {
        self.run(&["agent", "prompt", target, text], self.timeout)
    }

    /// `agent rename <pane> <name>`: only the self-identity bootstrap calls this.
    pub(crate) fn agent_rename(&self, pane: &str, name: &str) -> Result<Value, CliFailure> {
        self.run(&["agent", "rename", pane, name], self.timeout)
    }

    /// `agent start <name> --kind <kind> --pane <pane> -- <args...>` (the `--` always present).
    /// The kind comes from the model or the configuration, which Herdr may refuse
    /// ([`CliFailure::Refused`]); the args after `--` are never parsed by Herdr.
    pub(crate) fn agent_start(
        &self,
        name: &str,
        kind: &str,
        pane: &str,
        args: &[String],
    ) -> Result<Value, CliFailure> {
        let mut argv = vec!["agent", "start", name, "--kind", kind, "--pane", pane, "--"];
        argv.extend(args.iter().map(String::as_str));
        self.call(&argv, self.start_timeout, &[kind])
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
    pub(crate) fn pane_split(&self, pane: &str, cwd: &str) -> Result<Value, CliFailure> {
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
    pub(crate) fn pane_close(&self, pane: &str) -> Result<Value, CliFailure> {
        self.run(&["pane", "close", pane], self.timeout)
    }

    /// `tab create --workspace <ws> --cwd <cwd> [--label <label>] --no-focus`. The directory and
    /// the label come from the model or the configuration, which Herdr may refuse.
    pub(crate) fn tab_create(
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
        let supplied: Vec<&str> = [Some(cwd), label].into_iter().flatten().collect();
        self.call(&argv, self.timeout, &supplied)
    }

    /// `tab close <tab>`: only a failed start's rollback calls this.
    pub(crate) fn tab_close(&self, tab: &str) -> Result<Value, CliFailure> {
        self.run(&["tab", "close", tab], self.timeout)
    }

    /// `--version`, for the operator's `doctor` only: the first line of stdout (e.g.
    /// `herdr 0.8.0`).
    pub fn version(&self) -> Result<String, CliFailure> {
        let f = process::run(&self.bin, &["--version"], self.timeout).map_err(|e| {
            CliFailure::unavailable(Unavailable::NoAnswer, format!("herdr --version: {e}"))
        })?;
        let out = String::from_utf8_lossy(&f.stdout);
        match (f.exit, out.lines().next()) {
            (Exit::Code(0), Some(line)) if !line.trim().is_empty() => Ok(line.trim().to_string()),
            _ => Err(CliFailure::unavailable(
                Unavailable::NotHerdr,
                format!(
                    "herdr --version ended with {} and printed {:?}",
                    match f.exit {
                        Exit::Code(c) => format!("exit code {c}"),
                        Exit::Signal(s) => format!("signal {s}"),
                    },
                    out.trim()
                ),
            )),
        }
    }

    /// A call whose argv Link built entirely.
    fn run(&self, args: &[&str], limit: Duration) -> Result<Value, CliFailure> {
        self.call(args, limit, &[])
    }

    /// Runs one call under `limit` and classifies its outcome ([`failure`]), recording it.
    /// `supplied`: the values in `args` that the model or the configuration gave.
    fn call(&self, args: &[&str], limit: Duration, supplied: &[&str]) -> Result<Value, CliFailure> {
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
        let answer = result
            .map_err(|e| {
                let detail = format!("herdr {}: {e}", args[..2].join(" "));
                match e {
                    RunError::ArgsTooLong(_) => CliFailure::ArgsTooLong(detail),
                    RunError::Timeout(_) => CliFailure::unavailable(Unavailable::TimedOut, detail),
                    _ => CliFailure::unavailable(Unavailable::NoAnswer, detail),
                }
            })
            .and_then(|finished| {
                failure::interpret(finished, &args[..2.min(args.len())].join(" "), supplied)
            });
        if let Err(f) = &answer {
            *self.last_failure.borrow_mut() = Some(f.clone());
        }
        answer
    }
}
