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
mod fallback;
mod lexer;
pub mod policy;
mod resolve;
mod words;

use lexer::{Parser, Stop};

pub use policy::Verdict;

/// Model-facing reason for [`Verdict::Block`].
const REASON_BLOCK: &str =
    "Blocked by Herdr Link: `herdr agent prompt` with --wait (or --until/--timeout) \
would hold your turn while another agent works. Send the message with the herdr_link_send tool \
instead; it has no waiting variant, and the reply will reach you as an inbound Herdr Link message.";

/// Model-facing reason for [`Verdict::BlockEndTurn`].
const REASON_END_TURN: &str =
    "Blocked by Herdr Link: do not wait for another agent from the shell \
(`herdr agent wait`). End your turn now; the reply will arrive as an inbound Herdr Link message \
and resume you.";

impl Verdict {
    /// The numeric verdict used over the C ABI: 0 allow, 1 block, 2 block
    /// and end the turn.
    pub fn code(self) -> i32 {
        match self {
            Verdict::Allow => 0,
            Verdict::Block => 1,
            Verdict::BlockEndTurn => 2,
        }
    }

    /// The model-facing reason for a blocking verdict (`None` for
    /// [`Verdict::Allow`]). The texts are static and contain no ids.
    pub fn reason(self) -> Option<&'static str> {
        match self {
            Verdict::Allow => None,
            Verdict::Block => Some(REASON_BLOCK),
            Verdict::BlockEndTurn => Some(REASON_END_TURN),
        }
    }

    /// The stronger of two verdicts.
    pub(crate) fn max(self, other: Verdict) -> Verdict {
        if other.code() > self.code() {
            other
        } else {
            self
        }
    }
}

/// Judges one Bash command of an active session (the caller handles dormant
/// sessions, which are always allowed). Runs in time linear in the length of
/// `command`, never panics and does no IO.
pub fn judge(command: &str) -> Verdict {
    let src = command.as_bytes();
    let (verdict, doubtful) = judge_with(src, resolve::Allowed::for_input(src));
    if doubtful {
        // A script re-parsed below allowed less than the text around it (an
        // escaped `echo()` definition, an `IFS` spelt with escapes): judge
        // again without static evaluation, and keep the stronger verdict.
        verdict.max(judge_with(src, resolve::Allowed::NONE).0)
    } else {
        verdict
    }
}

/// One analysis of `src` with the static evaluations `allowed` permits.
/// Also returns whether a resolution was used although a re-parsed script
/// allowed less.
fn judge_with(src: &[u8], allowed: resolve::Allowed) -> (Verdict, bool) {
    let mut parser = Parser::new(src, 0);
    parser.allowed = allowed;
    let result = parser.parse_script();
    // Uses of values wait for the end, where every definition is known.
    // What they add counts for the committed part too (they may stand
    // before a syntax error).
    let (verdict_before, loose_before) = (parser.verdict, parser.loose);
    parser.verdict = Verdict::Allow;
    parser.loose = false;
    let result = match result {
        Ok(()) | Err(Stop::Syntax) => {
            let settled = parser.settle();
            if settled.is_err() {
                // Out of budget with uses left: the whole input, loosely.
                parser.loose = true;
            }
            settled.and(result)
        }
        other => {
            if !parser.values.pending.is_empty() {
                // Uses that were never settled: the whole input, loosely.
                parser.loose = true;
            }
            other
        }
    };
    parser.committed.0 = parser.committed.0.max(parser.verdict);
    parser.committed.1 |= parser.loose;
    parser.verdict = parser.verdict.max(verdict_before);
    parser.loose |= loose_before;
    let doubtful = parser.restricted_below && parser.resolved_any;
    let verdict = parser.verdict;
    // A producer judged on its own text may call a function or an alias
    // defined elsewhere in the input: then the whole input is judged loosely.
    let loose = parser.loose || (parser.defines_fn && parser.dyn_partial);
    let verdict = if loose {
        // The command run comes from text the analysis cannot follow: judge
        // the whole text loosely.
        verdict.max(fallback::loose_sequence(src))
    } else {
        verdict
    };
    let verdict = match result {
        Err(Stop::Done) => Verdict::BlockEndTurn,
        // Bash ran the complete commands before the syntax error, nothing after.
        Err(Stop::Syntax) => {
            let (v, committed_loose) = parser.committed;
            if committed_loose || (parser.defines_fn && parser.dyn_partial) {
                v.max(fallback::loose_sequence(src))
            } else {
                v
            }
        }
        Ok(()) => verdict,
        // Unparseable text or too deep a nesting: also apply the
        // conservative word-sequence rule (the loose one was applied above
        // when a command came from text the analysis could not follow).
        Err(_) => verdict.max(fallback::word_sequence(src)),
    };
    (verdict, doubtful)
}

/// The guard's two conservative rules over raw text, for the parser
/// comparison tool (`tools/guard-compare`), which applies the very same
/// rules behind other parsers. Not part of the stable API.
#[doc(hidden)]
pub mod rules {
    /// The contiguous rule used for text that does not parse (0, 1 or 2).
    pub fn word_sequence(text: &str) -> i32 {
        super::fallback::word_sequence(text.as_bytes()).code()
    }

    /// The loose rule used for text that produces a command (0, 1 or 2).
    pub fn loose_sequence(text: &str) -> i32 {
        super::fallback::loose_sequence(text.as_bytes()).code()
    }
}

#[cfg(test)]
mod tests;
