//! Analysis of the commands the lexer hands up: skips assignments, reserved
//! words and wrappers, recognises Herdr and judges its argv by the wait
//! policy, and reads again the scripts handed to shells, `eval`, `env -S`,
//! `watch`, `find -exec` and `xargs` (with a new [`Lexer`] each: the
//! analysis calls the lexer, never the other way round).
//!
//! This file holds the analysis' state ([`Analysis`], one [`Frame`] per text
//! being read), its [`Sink`] side and the verdict at the end; the methods of
//! each concern live in a child module: [`dispatch`] (one simple command to
//! its handler), [`wrappers`] (commands that run a command: one table row
//! each, one option walker), [`scripts`] (text read again as a script),
//! [`herdr`] (Herdr's argv) and [`values`] (assignments and their uses).

use super::expand::{
    basename, brace_expand, command_opts, command_script, env_split_words, is_name, join, join_raw,
    push_quoted, skip_opts, substituted, walk_opts, with_substitutions, Opt, Opts, ANY,
};
use super::fallback;
use super::flow::Flow;
use super::lexer::{self, closes_compound, is_name_char, End, Lexer, Simple, Sink, Stop, Text, R};
use super::policy::{self, Verdict};
use super::resolve::{self, Allowed, Arg, Pending, Use, UseKind, Value, Values};
use super::words::{pat_match, ASSIGN, BRACE, DYN, HERESTR, NODASH, QUOTED, SPLIT, S_ANY, W};

mod dispatch;
mod herdr;
mod scripts;
mod values;
mod wrappers;

/// Work allowed for re-analysis (re-parsed scripts, heredoc bodies, rebuilt
/// word lists), as a multiple of the input length plus a constant. Beyond
/// it the word-sequence rule decides, which keeps chains such as
/// `eval eval eval ...` linear.
const BUDGET_FACTOR: usize = 2;
const BUDGET_BASE: usize = 64 * 1024;

/// An alias the input defines.
#[derive(Debug, Clone)]
struct Alias {
    name: Vec<u8>,
    value: Vec<u8>,
    /// Depth of the script that defined it (or ran the script that did).
    owner: u32,
    /// Defined on the line being read by its owner, so not yet in effect
    /// there (bash expands aliases when it reads a line, before running it).
    pending: bool,
}

impl Alias {
    /// Whether a command read by a script at `depth` sees the alias: from
    /// the owner's next line, or in any script read later (`eval`, ...).
    fn usable_at(&self, depth: u32) -> bool {
        !self.pending || self.owner < depth
    }
}

/// What the analysis found in one text (the whole input, or a script read
/// again from a word): its verdict and how sure it is, and the state of its
/// compound commands.
#[derive(Debug)]
struct Frame {
    /// Strongest verdict found so far.
    verdict: Verdict,
    /// The command run comes from text the analysis cannot follow exactly
    /// (a shell reading a pipe, a command word from a substitution or a
    /// variable, an alias, ...): the whole text is also judged by the loose
    /// word-sequence rule.
    loose: bool,
    /// Verdict and loose flag as of the last complete top-level command
    /// (what bash has run when it meets a syntax error after it).
    committed: (Verdict, bool),
    /// Open compound commands, innermost last: `i` if (before `then`), `t`
    /// then/elif body, `e` else body, `w` while/until/for/select (before
    /// `do`), `d` do body, `c` case, `{` brace group.
    open: Vec<u8>,
    /// Inside a command made up by the analysis (`xargs CMD`, `find -exec`):
    /// reserved words there are plain command names.
    made_up: u32,
    /// The names surely assigned at the point being read.
    flow: Flow,
    /// The command being analysed stands after `&&`, `||` or `|` in its
    /// scope: what it assigns is not surely assigned after it.
    after: bool,
    /// `for NAME in WORDS` was read: at its `do`, `NAME` is surely assigned.
    for_name: Option<Vec<u8>>,
}

impl Frame {
    fn new() -> Frame {
        Frame {
            verdict: Verdict::Allow,
            loose: false,
            committed: (Verdict::Allow, false),
            open: Vec::new(),
            made_up: 0,
            flow: Flow::default(),
            after: false,
            for_name: None,
        }
    }
}

/// The key under which [`Flow`] follows a function definition (no variable
/// has this name).
fn function_key(name: &[u8]) -> Vec<u8> {
    [b"()".as_slice(), name].concat()
}

/// Most Herdr commands whose arguments wait for the end of the input;
/// beyond, they are judged at once with their uses unknown.
const HERDR_USES_LIMIT: usize = 64;

/// One argument of a Herdr command waiting for the end of the input.
#[derive(Debug)]
enum HerdrArg {
    /// Judged as the classes it may have (see [`policy_classes`]), one word
    /// or any number of them (`split`).
    Classes(policy::Classes, bool),
    /// A use of a value: its values when they are known, else `unknown`.
    Value {
        used: Use,
        unknown: (policy::Classes, bool),
    },
}

/// A Herdr command whose arguments use values (`herdr "${args[@]}"`).
#[derive(Debug)]
struct HerdrUse {
    args: Vec<HerdrArg>,
    /// The text guard leaves unknown words to the exec layer here.
    relaxed: bool,
}

/// The analysis of one input: the [`Sink`] the lexer hands its commands to.
pub(super) struct Analysis {
    /// The text being read now.
    frame: Frame,
    /// Nesting depth of the command being analysed.
    depth: u32,
    /// That command stands inside a command or process substitution.
    in_subst: bool,
    /// Which static evaluations the text being read allows (see
    /// [`super::resolve`]).
    allowed: Allowed,
    /// A re-parsed script allows less than its parent did (e.g. an escaped
    /// `\x65cho() {...}` in a `$'...'` script): resolutions made before it
    /// was seen may be wrong, so the caller judges again without any.
    restricted_below: bool,
    /// A static evaluation was used.
    resolved_any: bool,
    /// The input defines a function or an alias, whose body a producer
    /// judged by [`Analysis::dyn_text`] may call.
    defines_fn: bool,
    /// [`Analysis::dyn_text`] judged only part of the input.
    dyn_partial: bool,
    /// Shells found reading their standard input.
    bare_count: u32,
    /// The plain value of the current command's here-string (for `read`).
    herestr: Option<Vec<u8>>,
    /// Aliases defined so far.
    aliases: Vec<Alias>,
    /// Values assigned anywhere in the input, and the uses waiting for them.
    values: Values,
    /// Remaining re-analysis work.
    budget: usize,
    /// [`lexer::stack_mark`] when the analysis began.
    stack_base: usize,
    /// The host runs `herdr` through the shim (`ExecLayer::Shim`).
    shim: bool,
    /// Inside a command reached through a wrapper or shell that does not
    /// keep `PATH` (`sudo`, `env -i`, `bash -l`...): the shim may be missed.
    path_lost: u32,
    /// Herdr commands whose arguments use values.
    herdr_uses: Vec<HerdrUse>,
}

/// What one analysis of an input found.
pub(super) struct Outcome {
    /// The verdict.
    pub(super) verdict: Verdict,
    /// A resolution was used although a re-parsed script allowed less: the
    /// caller judges again without static evaluation.
    pub(super) doubtful: bool,
}

/// One analysis of `src` with the static evaluations `allowed` permits;
/// `shim`: unknown arguments of `herdr` are the exec layer's to judge.
pub(super) fn judge(src: &[u8], allowed: Allowed, shim: bool) -> Outcome {
    let mut a = Analysis {
        frame: Frame::new(),
        depth: 0,
        in_subst: false,
        allowed,
        restricted_below: false,
        resolved_any: false,
        defines_fn: false,
        dyn_partial: false,
        bare_count: 0,
        herestr: None,
        aliases: Vec::new(),
        values: Values::default(),
        budget: src.len().saturating_mul(BUDGET_FACTOR) + BUDGET_BASE,
        stack_base: lexer::stack_mark(),
        shim,
        path_lost: 0,
        herdr_uses: Vec::new(),
    };
    let result = Lexer::new(src, 0, a.stack_base, &mut a).script();
    a.depth = 0;
    a.finish(src, result)
}

impl Analysis {
    /// The verdict once the text is read (with `result`): the uses of
    /// values are settled, and the fallback rules applied where the text
    /// could not be followed.
    fn finish(mut self, src: &[u8], result: R) -> Outcome {
        // Uses of values wait for the end, where every definition is known.
        // What they add counts for the committed part too (they may stand
        // before a syntax error).
        let (verdict_before, loose_before) = (self.frame.verdict, self.frame.loose);
        self.frame.verdict = Verdict::Allow;
        self.frame.loose = false;
        let result = match result {
            Ok(()) | Err(Stop::Syntax | Stop::Broken) => {
                let settled = self.settle();
                if settled.is_err() {
                    // Out of budget with uses left: the whole input, loosely.
                    self.frame.loose = true;
                }
                settled.and(result)
            }
            other => {
                if !self.values.pending.is_empty() {
                    // Uses that were never settled: the whole input, loosely.
                    self.frame.loose = true;
                }
                other
            }
        };
        let f = &mut self.frame;
        f.committed.0 = f.committed.0.max(f.verdict);
        f.committed.1 |= f.loose;
        f.verdict = f.verdict.max(verdict_before);
        f.loose |= loose_before;
        let doubtful = self.restricted_below && self.resolved_any;
        // A producer judged on its own text may call a function or an alias
        // defined elsewhere in the input: then the whole input is judged loosely.
        let elsewhere = self.defines_fn && self.dyn_partial;
        let f = &self.frame;
        let verdict = if f.loose || elsewhere {
            // The command run comes from text the analysis cannot follow:
            // judge the whole text loosely.
            f.verdict.max(fallback::loose_sequence(src))
        } else {
            f.verdict
        };
        let verdict = match result {
            // Only [`Sink::line`] halts, after a complete line that waits.
            Err(Stop::Halt) => Verdict::BlockEndTurn,
            // Bash ran the complete commands before the syntax error (a
            // reserved word out of place, an unclosed quote or `$(`),
            // nothing after: it reads a whole line before running it.
            Err(Stop::Syntax | Stop::Broken) => {
                let (v, committed_loose) = f.committed;
                if committed_loose || elsewhere {
                    v.max(fallback::loose_sequence(src))
                } else {
                    v
                }
            }
            Ok(()) => verdict,
            // Text the lexer cannot read, or too deep a nesting: also apply
            // the conservative word-sequence rule (the loose one was applied
            // above when a command came from text the analysis could not
            // follow).
            Err(_) => verdict.max(fallback::word_sequence(src)),
        };
        Outcome { verdict, doubtful }
    }

    /// Raises the verdict. The analysis goes on to the end of the line even
    /// after the strongest verdict: a syntax error later on the line means
    /// bash runs none of it.
    fn bump(&mut self, v: Verdict) -> R {
        self.frame.verdict = self.frame.verdict.max(v);
        Ok(())
    }

    /// More than the allowed stack is in use.
    fn stack_low(&self) -> bool {
        lexer::stack_low(self.stack_base)
    }

    /// Analyses `text` as a script (`script`) or as an expanding heredoc
    /// body, one level deeper, and merges the findings.
    fn sub_parse(&mut self, text: &[u8], script: bool) -> R {
        self.read_text(text, script, false)
    }

    /// Analyses `text` as a script that runs in this shell (`eval`): the
    /// names surely assigned here are so at its start, and what it surely
    /// assigns at its top level is so after it (when it reads without error).
    fn read_in_shell(&mut self, text: &[u8]) -> R {
        self.read_text(text, true, true)
    }

    /// [`Analysis::sub_parse`], in this shell with `in_shell`.
    fn read_text(&mut self, text: &[u8], script: bool, in_shell: bool) -> R {
        if self.depth + 1 > lexer::MAX_DEPTH || self.stack_low() {
            return Err(Stop::TooDeep);
        }
        self.spend(text.len())?;
        let depth = self.depth;
        let parent_allowed = self.allowed;
        self.allowed = parent_allowed.and(Allowed::for_input(text));
        self.restricted_below |= self.allowed != parent_allowed;
        let in_shell = in_shell && self.frame.made_up == 0;
        let mut frame = Frame::new();
        if in_shell {
            for name in self.frame.flow.names() {
                frame.flow.assigned(name);
            }
        }
        let parent = std::mem::replace(&mut self.frame, frame);
        let (base, stack) = (depth + 1, self.stack_base);
        let result = {
            let lexer = Lexer::new(text, base, stack, self);
            if script {
                lexer.script()
            } else {
                lexer.expanding_body()
            }
        };
        let sub = std::mem::replace(&mut self.frame, parent);
        self.allowed = parent_allowed;
        self.depth = depth;
        for a in self.aliases.iter_mut().filter(|a| a.owner > depth) {
            // Defined by a script this one ran (`eval 'alias ...'`): in
            // effect from this script's next line.
            a.owner = depth;
            a.pending = true;
        }
        match result {
            Err(Stop::Syntax) => {
                // That shell runs what came before the error, then stops.
                self.frame.verdict = self.frame.verdict.max(sub.committed.0);
                self.frame.loose |= sub.committed.1;
                Ok(())
            }
            Err(Stop::Broken) => {
                // The text does not parse. Bash rejects it when it reads it
                // (a script, a backquoted or here-document substitution at
                // the time it runs) and goes on with the text around it; the
                // text was built or unescaped here, so it is also judged by
                // the word-sequence rule.
                let v = sub.verdict.max(fallback::word_sequence(text));
                self.frame.verdict = self.frame.verdict.max(v);
                self.frame.loose |= sub.loose;
                Ok(())
            }
            _ => {
                self.frame.verdict = self.frame.verdict.max(sub.verdict);
                self.frame.loose |= sub.loose;
                if in_shell && result.is_ok() {
                    for name in sub.flow.names() {
                        self.surely_assigned(name);
                    }
                }
                result
            }
        }
    }

    /// Judges text that produces a command the analysis cannot follow (a
    /// substitution's output, a script on a pipe): by the loose rule over
    /// that text, or over the whole input when it uses values defined
    /// elsewhere (`$NAME`, `"$@"`).
    fn dyn_text(&mut self, raw: &[u8]) -> R {
        let uses_values = raw.is_empty()
            || raw.iter().enumerate().any(|(k, &c)| {
                c == S_ANY
                    || (c == b'$'
                        && raw.get(k + 1).is_some_and(|&n| {
                            is_name_char(n)
                                || matches!(n, b'{' | b'@' | b'*' | b'#' | b'?' | b'!' | b'-')
                        }))
            });
        if uses_values {
            self.frame.loose = true;
            Ok(())
        } else {
            self.dyn_partial = true;
            self.bump(fallback::loose_sequence(raw))
        }
    }

    /// Follows a reserved word at command position through the open
    /// compound commands; a word out of place is a syntax error. Inside a
    /// `case` (where patterns sit at command position) nothing is checked.
    fn reserved_word(&mut self, w: &[u8]) -> R {
        if self.frame.made_up > 0 {
            return Ok(());
        }
        let frame = &mut self.frame;
        let open = &mut frame.open;
        let flow = &mut frame.flow;
        let top = open.last().copied();
        if matches!(
            w,
            b"if" | b"while" | b"until" | b"for" | b"select" | b"case" | b"{"
        ) {
            // The words after it stand first in a new scope.
            frame.after = false;
        }
        let ok = match w {
            b"if" => {
                open.push(b'i');
                flow.open(false);
                true
            }
            b"while" | b"until" | b"for" | b"select" => {
                open.push(b'w');
                flow.open(false);
                true
            }
            b"case" => {
                open.push(b'c');
                flow.open(true);
                true
            }
            b"{" => {
                open.push(b'{');
                flow.open(false);
                true
            }
            b"then" | b"elif" | b"else" | b"fi" | b"do" | b"done" | b"esac" | b"}" => {
                let (need, next): (&[u8], Option<u8>) = match w {
                    b"then" => (b"i", Some(b't')),
                    b"elif" => (b"t", Some(b'i')),
                    b"else" => (b"t", Some(b'e')),
                    b"fi" => (b"te", None),
                    b"do" => (b"w", Some(b'd')),
                    b"done" => (b"d", None),
                    b"esac" => (b"c", None),
                    _ => (b"{", None),
                };
                match top {
                    Some(t) if need.contains(&t) => {
                        open.pop();
                        flow.close();
                        if let Some(n) = next {
                            open.push(n);
                            flow.open(false);
                            if n == b'd' {
                                // `for NAME in WORDS; do`: assigned before
                                // each run of the body.
                                if let Some(name) = frame.for_name.take() {
                                    flow.assigned(&name);
                                }
                            }
                        }
                        frame.after = next.is_none();
                        true
                    }
                    Some(b'c') => true,
                    _ => false,
                }
            }
            _ => true,
        };
        if ok {
            Ok(())
        } else {
            Err(Stop::Syntax)
        }
    }

    /// Takes `cost` from the re-analysis budget.
    fn spend(&mut self, cost: usize) -> R {
        match self.budget.checked_sub(cost) {
            Some(rest) => {
                self.budget = rest;
                Ok(())
            }
            None => Err(Stop::TooDeep),
        }
    }
}

impl Sink for Analysis {
    fn command(&mut self, cmd: &Simple<'_>) -> R<bool> {
        self.depth = cmd.depth;
        self.in_subst = cmd.in_subst;
        self.frame.after = cmd.after_and_or || cmd.piped_in;
        self.herestr = cmd
            .redirs
            .iter()
            .find(|w| w.f & HERESTR != 0 && w.f & DYN == 0)
            .map(|w| w.b.to_vec());
        let bare_shell = self.command(cmd.words);
        self.herestr = None;
        if !bare_shell? {
            return Ok(false);
        }
        self.bare_count = self.bare_count.saturating_add(1);
        // Standard input from a pipe or from an unknown file (`< <(...)`,
        // `< "$f"`): the script cannot be seen.
        if cmd.piped_in {
            if let Some(scripts) = self.produced(cmd.producer) {
                // `echo '...' | bash`: the script is known.
                self.resolved_any = true;
                for script in scripts {
                    self.sub_parse(&script, true)?;
                }
            } else if cmd.pipeline.windows(2).any(|w| w == b"<<") {
                // A here-document's body comes after this line.
                self.frame.loose = true;
            } else if closes_compound(cmd.producer) {
                // `{ ...; } | bash`, `for ...; done | sh`: the producer
                // starts before this simple command's text.
                self.frame.loose = true;
            } else {
                self.dyn_text(cmd.pipeline)?;
            }
        }
        for w in cmd.redirs {
            if w.f & HERESTR == 0 && w.f & DYN != 0 {
                self.script_file(w.raw)?;
            }
        }
        for w in cmd.redirs.iter().filter(|w| w.f & HERESTR != 0) {
            self.sub_parse(w.b, true)?;
        }
        Ok(true)
    }

    fn end(&mut self, end: End) {
        self.frame.flow.end(end);
    }

    fn line(&mut self, depth: u32) -> R {
        if !self.frame.open.is_empty() {
            return Ok(());
        }
        self.frame.committed = (self.frame.verdict, self.frame.loose);
        for a in self.aliases.iter_mut().filter(|a| a.owner == depth) {
            // Bash reads a whole line before running it: an alias works
            // from the next line on.
            a.pending = false;
        }
        if depth == 0 && self.frame.verdict == Verdict::BlockEndTurn {
            // A complete line with a wait: nothing more to learn.
            return Err(Stop::Halt);
        }
        Ok(())
    }

    fn subshell(&mut self, open: bool) {
        if open {
            self.frame.flow.open(false);
        } else {
            self.frame.flow.close();
        }
    }

    fn function(&mut self, name: &[u8], after: bool) {
        self.define_function(name, after);
    }

    fn assigns(&mut self, name: Option<&[u8]>) {
        match name {
            Some(n) => self.values.unknown(n),
            None => self.values.all_unknown(),
        }
    }

    fn text(&mut self, text: &[u8], kind: Text, depth: u32) -> R {
        self.depth = depth;
        self.sub_parse(text, kind != Text::HeredocBody)
    }

    fn spend(&mut self, cost: usize) -> R {
        Analysis::spend(self, cost)
    }
}
