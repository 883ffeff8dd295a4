//! Bash-boundary guard: decides whether one Bash tool command of an active
//! Herdr Link session must be blocked because it would make the model wait
//! for another agent inside its own turn.
//!
//! The reference guard (herdr-link 0.5) ran two regular expressions over the
//! raw text. This module replaces them with a small, linear-time, shell-aware
//! analysis (hand-written, std only, no IO):
//!
//! * The text is split into words (single and double quotes, backslashes,
//!   `$'...'`, line continuations) and simple commands (`;`, `&&`, `||`, `|`,
//!   `&`, newlines, `(`, `)`). Comments and heredoc bodies are skipped; command
//!   substitutions (`$(...)`, backticks, `<(...)`) inside words, in unquoted
//!   heredoc bodies and in `${...}` are analysed as commands of their own, and
//!   so are the scripts given to `sh|bash|zsh|dash|ksh -c`, `eval`,
//!   `env -S`, `watch`, `find -exec` and `xargs`.
//! * Leading assignments, reserved words and wrappers (`env`, `command`,
//!   `exec`, `nohup`, `time`, `timeout`, `nice`, `setsid`, `sudo`, `doas`,
//!   `xargs`, `stdbuf`, `busybox`) are skipped before the command word.
//! * The command is Herdr when its basename is `herdr`, when it is
//!   `$HERDR_BIN_PATH`/`${HERDR_BIN_PATH}`, or (then requiring literal
//!   `agent` and `wait`/`prompt` words after it) when its value cannot be
//!   known here, e.g. `$H agent wait x`. Its arguments are judged by the
//!   wait policy ([`policy`]: global flags, options, `--`), the same one the
//!   `herdr` shim applies to a real argv; a word whose value is not known
//!   counts as every word it may be.
//! * Text that does not parse, or nests deeper than the analysis allows, is
//!   judged by a conservative word-sequence rule over the whole text.
//!
//! See `docs/guard.md` for the verdict table and the known limits.

mod analyze;
mod expand;
mod fallback;
mod flow;
mod lexer;
pub mod policy;
mod resolve;
mod words;

pub use policy::Verdict;

/// How the model that gets a block reason sends a Herdr Link message in its host: the words
/// [`Verdict::reason_for`] uses, so the reason never names a tool the model does not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendForm {
    /// The host shows the `herdr_link_send` tool (deferred style: Pi).
    Tool,
    /// Only the gateway's `send` action exists (single-gateway style: OpenCode's plugin; Codex,
    /// which never shows the Tier 1 tools).
    GatewayAction,
    /// Either may be what the model has (MCP hosts that show Tier 1 late or not at all, and
    /// callers that do not say): the wording names both.
    Either,
}

/// Model-facing reason for [`Verdict::Block`] where the `herdr_link_send` tool exists. (The
/// three block reasons differ only in the way to send; `tests/hosts` reads them by name.)
const REASON_BLOCK_TOOL: &str =
    "Blocked by Herdr Link: `herdr agent prompt` with --wait (or --until/--timeout) \
would hold your turn while another agent works. Send the message with the herdr_link_send tool \
instead; it has no waiting variant, and the reply will reach you as an inbound Herdr Link message.";

/// Model-facing reason for [`Verdict::Block`] where only the gateway dispatches.
const REASON_BLOCK_GATEWAY: &str =
    "Blocked by Herdr Link: `herdr agent prompt` with --wait (or --until/--timeout) \
would hold your turn while another agent works. Send the message through the herdr_link tool \
with action \"send\" instead; it has no waiting variant, and the reply will reach you as an \
inbound Herdr Link message.";

/// Model-facing reason for [`Verdict::Block`] true in every host.
const REASON_BLOCK_EITHER: &str =
    "Blocked by Herdr Link: `herdr agent prompt` with --wait (or --until/--timeout) \
would hold your turn while another agent works. Send the message with Herdr Link's send (the \
herdr_link_send tool, or the herdr_link tool with action \"send\" where only that gateway is \
available) instead; it has no waiting variant, and the reply will reach you as an inbound Herdr \
Link message.";

/// Model-facing reason for [`Verdict::BlockEndTurn`].
const REASON_END_TURN: &str =
    "Blocked by Herdr Link: do not wait for another agent from the shell \
(`herdr agent wait`). End your turn now; the reply will arrive as an inbound Herdr Link message \
and resume you.";

impl Verdict {
    /// The model-facing reason for a blocking verdict (`None` for
    /// [`Verdict::Allow`]), in words true in every host ([`SendForm::Either`]).
    /// The texts are static and contain no ids.
    pub fn reason(self) -> Option<&'static str> {
        self.reason_for(SendForm::Either)
    }

    /// The model-facing reason for a blocking verdict, naming the way to send
    /// a message that the model's host has (`form`).
    pub fn reason_for(self, form: SendForm) -> Option<&'static str> {
        match (self, form) {
            (Verdict::Allow, _) => None,
            (Verdict::Block, SendForm::Tool) => Some(REASON_BLOCK_TOOL),
            (Verdict::Block, SendForm::GatewayAction) => Some(REASON_BLOCK_GATEWAY),
            (Verdict::Block, SendForm::Either) => Some(REASON_BLOCK_EITHER),
            (Verdict::BlockEndTurn, _) => Some(REASON_END_TURN),
        }
    }
}

/// Whether the host's commands reach Herdr through the `herdr` shim, which
/// judges the real argv at exec (see `docs/guard.md`, "Two layers").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExecLayer {
    /// No shim is known to be in place: a `herdr` whose arguments the text
    /// cannot know is judged cautiously (every value it may have).
    #[default]
    Absent,
    /// The host puts the shim first on `PATH` (and makes `$HERDR_BIN_PATH`
    /// the shim) for its commands: a `herdr` found that way whose arguments
    /// the text cannot know is left to the shim; only what the text shows
    /// surely waits is blocked here.
    Shim,
}

/// Judges one Bash command of an active session (the caller handles dormant
/// sessions, which are always allowed), with no exec layer assumed. Runs in
/// time linear in the length of `command`, never panics and does no IO.
pub fn judge(command: &str) -> Verdict {
    judge_with(command, ExecLayer::Absent)
}

/// The verdict for a host that may run its commands through the shim: [`judge`], and only when
/// that blocks and `shim_in_place()` says the shim is there, [`judge_with`] [`ExecLayer::Shim`].
/// Returns (the cautious verdict, the verdict to apply); they differ when the shim was left a
/// `herdr` whose arguments the text cannot know. An ordinary command is analysed once and never
/// asks. The `herdr-link guard` hook and `hl_bash_guard` both judge this way.
pub fn judge_layered(command: &str, shim_in_place: impl FnOnce() -> bool) -> (Verdict, Verdict) {
    let cautious = judge(command);
    if cautious != Verdict::Allow && shim_in_place() {
        (cautious, judge_with(command, ExecLayer::Shim))
    } else {
        (cautious, cautious)
    }
}

/// [`judge`] for a host whose commands run `herdr` through `exec`.
pub fn judge_with(command: &str, exec: ExecLayer) -> Verdict {
    let src = command.as_bytes();
    let shim = exec == ExecLayer::Shim;
    let first = analyze::judge(src, resolve::Allowed::for_input(src), shim);
    if first.doubtful {
        // A script re-parsed below allowed less than the text around it (an
        // escaped `echo()` definition, an `IFS` spelt with escapes): judge
        // again without static evaluation, and keep the stronger verdict.
        first
            .verdict
            .max(analyze::judge(src, resolve::Allowed::NONE, shim).verdict)
    } else {
        first.verdict
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod reason_tests {
    use super::{SendForm, Verdict};

    #[test]
    fn a_block_names_only_what_the_host_has() {
        let tool = Verdict::Block.reason_for(SendForm::Tool).unwrap();
        assert!(tool.contains("with the herdr_link_send tool"), "{tool}");
        assert!(!tool.contains("action"), "{tool}");
        // Only the gateway exists: never "the herdr_link_send tool".
        let gateway = Verdict::Block.reason_for(SendForm::GatewayAction).unwrap();
        assert!(!gateway.contains("herdr_link_send"), "{gateway}");
        assert!(
            gateway.contains("herdr_link tool with action \"send\""),
            "{gateway}"
        );
        // Not knowing the host: both ways, and it is the default reason.
        let either = Verdict::Block.reason_for(SendForm::Either).unwrap();
        assert!(either.contains("herdr_link_send") && either.contains("action \"send\""));
        assert_eq!(Verdict::Block.reason(), Some(either));
        for form in [SendForm::Tool, SendForm::GatewayAction, SendForm::Either] {
            let block = Verdict::Block.reason_for(form).unwrap();
            assert!(block.starts_with("Blocked by Herdr Link: `herdr agent prompt`"));
            assert!(block.ends_with("inbound Herdr Link message."), "{block}");
            assert!(!block.contains("  "), "{block}");
            assert_eq!(
                Verdict::BlockEndTurn.reason_for(form),
                Verdict::BlockEndTurn.reason()
            );
            assert_eq!(Verdict::Allow.reason_for(form), None);
        }
    }
}
