//! Analysis of the commands the lexer hands up: skips assignments, reserved
//! words and wrappers, recognises Herdr and judges its argv by the wait
//! policy, and reads again the scripts handed to shells, `eval`, `env -S`,
//! `watch`, `find -exec` and `xargs` (with a new [`Lexer`] each: the
//! analysis calls the lexer, never the other way round).

use super::expand::{
    basename, brace_expand, command_opts, command_script, env_split_words, is_name, join, join_raw,
    push_quoted, skip_opts, substituted, with_substitutions, ANY,
};
use super::fallback;
use super::flow::Flow;
use super::lexer::{self, closes_compound, is_name_char, End, Lexer, Simple, Sink, Stop, Text, R};
use super::policy::{self, Verdict};
use super::resolve::{self, Allowed, Arg, Pending, Use, UseKind, Value, Values};
use super::words::{pat_match, ASSIGN, BRACE, DYN, HERESTR, HVAR, NODASH, QUOTED, SPLIT, S_ANY, W};

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
            Err(Stop::Done) => Verdict::BlockEndTurn,
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
        if self.depth + 1 > lexer::MAX_DEPTH || self.stack_low() {
            return Err(Stop::TooDeep);
        }
        self.spend(text.len())?;
        let depth = self.depth;
        let parent_allowed = self.allowed;
        self.allowed = parent_allowed.and(Allowed::for_input(text));
        self.restricted_below |= self.allowed != parent_allowed;
        let parent = std::mem::replace(&mut self.frame, Frame::new());
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
            return Err(Stop::Done);
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

/// Shells whose `-c` script is analysed.
const SHELLS: &[&[u8]] = &[
    b"sh", b"bash", b"rbash", b"zsh", b"dash", b"ksh", b"ash", b"mksh", b"yash", b"posh", b"fish",
    b"ksh93", b"pdksh", b"oksh", b"lksh", b"bash5", b"tcsh", b"csh",
];

/// Commands that run the command after them (skipped before the command
/// word).
const WRAPPERS: &[&[u8]] = &[
    b"env", b"command", b"exec", b"nohup", b"builtin", b"setsid", b"time", b"timeout", b"nice",
    b"sudo", b"doas", b"stdbuf", b"busybox", b"runuser",
];

/// Shells in which `-n` was checked to run nothing (others keep their
/// scripts analysed).
const NOEXEC_SHELLS: &[&[u8]] = &[b"bash", b"rbash", b"sh", b"dash"];

/// The builtins of bash 5.2 (`compgen -b`): only these may follow the
/// `builtin` builtin; for any other name it runs nothing.
const BASH_BUILTINS: &[&[u8]] = &[
    b".",
    b":",
    b"[",
    b"alias",
    b"bg",
    b"bind",
    b"break",
    b"builtin",
    b"caller",
    b"cd",
    b"command",
    b"compgen",
    b"complete",
    b"compopt",
    b"continue",
    b"declare",
    b"dirs",
    b"disown",
    b"echo",
    b"enable",
    b"eval",
    b"exec",
    b"exit",
    b"export",
    b"false",
    b"fc",
    b"fg",
    b"getopts",
    b"hash",
    b"help",
    b"history",
    b"jobs",
    b"kill",
    b"let",
    b"local",
    b"logout",
    b"mapfile",
    b"popd",
    b"printf",
    b"pushd",
    b"pwd",
    b"read",
    b"readarray",
    b"readonly",
    b"return",
    b"set",
    b"shift",
    b"shopt",
    b"source",
    b"suspend",
    b"test",
    b"times",
    b"trap",
    b"true",
    b"type",
    b"typeset",
    b"ulimit",
    b"umask",
    b"unalias",
    b"unset",
    b"wait",
];

/// Paths through which a shell or `source` reads its standard input.
const STDIN_PATHS: &[&[u8]] = &[b"/dev/stdin", b"/dev/fd/0", b"/proc/self/fd/0"];

/// An unquoted reserved word that may come before a command.
fn is_reserved(w: W<'_>) -> bool {
    w.plain()
        && w.f & QUOTED == 0
        && matches!(
            w.b,
            b"!" | b"{"
                | b"}"
                | b"if"
                | b"then"
                | b"elif"
                | b"else"
                | b"fi"
                | b"do"
                | b"done"
                | b"while"
                | b"until"
                | b"esac"
                | b"time"
                | b"for"
                | b"select"
                | b"case"
                | b"function"
                | b"coproc"
                | b"noglob"
                | b"nocorrect"
        )
}

/// Feeds one word of `classes` (any number of them when `split`) to the
/// policy. Deliberately, an unknown TARGET or TEXT (`"$PEER"`) is not taken
/// for a global flag that would shift `-- --wait` into place (the `herdr`
/// shim sees such a value exactly).
fn feed(judge: &mut policy::Judge, classes: policy::Classes, split: bool) {
    let mut classes = classes;
    if classes & policy::EXACT == 0 && judge.past_verb() {
        classes = (classes & !policy::GLOBAL) | policy::Class::Other.bit();
    }
    if split {
        judge.words(classes);
    } else {
        judge.word(classes);
    }
}

/// The classes of the wait policy that `w` may have once expanded. With
/// `strict` (the command word is only possibly Herdr) a word that is not
/// fully known counts only as an unknown word or a waiting option.
fn policy_classes(w: W<'_>, strict: bool) -> policy::Classes {
    if w.plain() {
        return policy::class_of(w.b).bit() | policy::EXACT;
    }
    if w.split() && !strict {
        return policy::ALL;
    }
    // A `find` path substituted for `{}` never starts with `-`.
    let nodash = w.f & NODASH != 0 && w.b.first() == Some(&S_ANY);
    let mut set = policy::Class::Other.bit();
    for &(lit, prefix, class) in policy::WORDS {
        if strict && class != policy::Class::WaitOpt || nodash && lit.starts_with(b"-") {
            continue;
        }
        if w.split() || pat_match(w.b, lit, prefix) {
            set |= class.bit();
        }
    }
    set
}

impl Analysis {
    /// Analyses one simple command. Returns whether it is a shell that reads
    /// its script from standard input.
    fn command(&mut self, words: &[W<'_>]) -> R<bool> {
        let path_lost = self.path_lost;
        let result = self.command_words(words);
        self.path_lost = path_lost;
        result
    }

    /// [`Analysis::command`] itself.
    fn command_words(&mut self, words: &[W<'_>]) -> R<bool> {
        let has_brace = words.iter().any(|w| w.f & (BRACE | ASSIGN) == BRACE);
        let mut bare = false;
        let mut judged_rest = false;
        // Where the trailing run of assignments began (a command of
        // assignments only assigns in the shell itself).
        let mut assigns_from: Option<usize> = None;
        // A wrapper was passed: the command word is no function call.
        let mut wrapped = false;
        // `Some(p)`: the policy run over `words[p..]` as Herdr's arguments can
        // reach nothing that an earlier run did not (see below), so it is
        // skipped; keeps a long run of unknown words linear.
        let mut covered: Option<usize> = None;
        let mut i = 0;
        while let Some(&w) = words.get(i) {
            if has_brace && w.f & ASSIGN == 0 && !is_reserved(w) {
                // Brace expansion happens before the command word is known.
                return Ok(bare || self.braces(&words[i..])?);
            }
            if w.f & ASSIGN == 0 {
                assigns_from = None;
            } else if assigns_from.is_none() {
                assigns_from = Some(i);
            }
            if w.f & ASSIGN != 0 {
                self.note_assignment(w);
                // A startup file for the shell that runs next, from an
                // unknown source (`BASH_ENV=<(...)`).
                if (w.b.starts_with(b"BASH_ENV=") || w.b.starts_with(b"ENV=")) && !w.plain() {
                    self.dyn_text(w.raw)?;
                }
                i += 1;
                continue;
            }
            if w.plain() && w.f & QUOTED == 0 {
                match w.b {
                    b"!" | b"noglob" | b"nocorrect" => {
                        i += 1;
                        continue;
                    }
                    b"{" | b"}" | b"if" | b"then" | b"elif" | b"else" | b"fi" | b"do" | b"done"
                    | b"while" | b"until" | b"esac" => {
                        self.reserved_word(w.b)?;
                        i += 1;
                        continue;
                    }
                    b"for" | b"select" => {
                        self.reserved_word(w.b)?;
                        self.loop_head(w.b == b"for", &words[i + 1..]);
                        if let Some(d) = words.get(i + 1).filter(|w| w.reserved(b"do")) {
                            self.reserved_word(d.b)?;
                        } else if let Some(d) = words.get(i + 2).filter(|w| w.reserved(b"do")) {
                            self.reserved_word(d.b)?;
                        }
                        // `for NAME do ...` / `for ((...)) do ...`: a body
                        // without `;` before `do`.
                        if words.get(i + 1).is_some_and(|w| w.reserved(b"do")) {
                            i += 2;
                            continue;
                        }
                        if words.get(i + 2).is_some_and(|w| w.reserved(b"do")) {
                            i += 3;
                            continue;
                        }
                        return Ok(bare);
                    }
                    b"case" => {
                        self.reserved_word(w.b)?;
                        return Ok(bare);
                    }
                    b"[[" => return Ok(bare),
                    b"time" => {
                        // Bash's `time` keyword takes only `-p` (and `--`).
                        i += 1;
                        while words.get(i).is_some_and(|w| w.is(b"-p") || w.is(b"--")) {
                            i += 1;
                        }
                        continue;
                    }
                    b"function" => {
                        if let Some(name) = words.get(i + 1) {
                            let after = self.frame.after;
                            self.define_function(name.b, after || !name.plain());
                        } else {
                            self.defines_fn = true;
                        }
                        i += 2;
                        continue;
                    }
                    b"coproc" => {
                        i += if words.get(i + 2).is_some_and(|w| w.is(b"{")) {
                            2
                        } else {
                            1
                        };
                        continue;
                    }
                    _ => {}
                }
                // In a substitution, any alias may be in effect (its text is
                // read again when it runs).
                let depth = if self.in_subst { u32::MAX } else { self.depth };
                if let Some(k) = self
                    .aliases
                    .iter()
                    .position(|a| a.name.as_slice() == w.b && a.usable_at(depth))
                {
                    return self.alias_use(k, &words[i + 1..]).map(|()| bare);
                }
            }
            if w.plain() {
                let rest = i + 1;
                if self.allowed.positional && !wrapped && !WRAPPERS.contains(&basename(w.b)) {
                    // (Not after a wrapper, which never calls a function, nor
                    // for one: a chain of them would copy the arguments once
                    // per link.)
                    self.note_call(w.b, &words[rest..]);
                }
                self.note_command(w.b, &words[rest..], !wrapped);
                let resets_path = self.resets_path(w.b, &words[rest..]);
                if resets_path {
                    self.path_lost += 1;
                }
                i = match basename(w.b) {
                    b"herdr" => {
                        if !wrapped && w.b == b"herdr" && self.herdr_is_function() {
                            // A function named `herdr` defined before: bash
                            // calls it (its body was judged where it stands).
                            return Ok(bare);
                        }
                        let route = !w.b.contains(&b'/');
                        self.herdr(&words[rest..], false, route)?;
                        return Ok(bare);
                    }
                    b"trap" => {
                        self.trap(&words[rest..])?;
                        return Ok(bare);
                    }
                    b"alias" => {
                        self.alias_define(&words[rest..]);
                        return Ok(bare);
                    }
                    b"source" | b"." => {
                        return Ok(bare || self.source(&words[rest..])?);
                    }
                    b"su" => {
                        self.su(&words[rest..])?;
                        return Ok(bare);
                    }
                    b"runuser" => {
                        if words[rest..]
                            .iter()
                            .any(|w| w.is(b"-c") || w.b.starts_with(b"--command"))
                        {
                            self.su(&words[rest..])?;
                            return Ok(bare);
                        }
                        skip_opts(
                            words,
                            rest,
                            b"ugGw",
                            &[b"user", b"group", b"supp-group", b"whitelist-environment"],
                        )
                    }
                    b"env" => match self.env(words, rest)? {
                        Some(j) => j,
                        None => return Ok(bare),
                    },
                    b"command" => match command_opts(words, rest) {
                        Some(j) => j,
                        None => return Ok(bare),
                    },
                    b"exec" => skip_opts(words, rest, b"a", &[]),
                    b"builtin" if w.b == b"builtin" => {
                        let j = skip_opts(words, rest, b"", &[]);
                        if self.allowed.builtin
                            && words
                                .get(j)
                                .is_some_and(|n| n.plain() && !BASH_BUILTINS.contains(&n.b))
                        {
                            // Bash refuses `builtin NAME` for a NAME that is no
                            // builtin (`builtin herdr ...`): nothing runs.
                            return Ok(bare);
                        }
                        j
                    }
                    b"nohup" | b"builtin" | b"setsid" => skip_opts(words, rest, b"", &[]),
                    b"time" => skip_opts(words, rest, b"fo", &[b"format", b"output"]),
                    b"timeout" => skip_opts(words, rest, b"sk", &[b"signal", b"kill-after"]) + 1,
                    b"nice" => skip_opts(words, rest, b"n", &[b"adjustment"]),
                    b"sudo" => skip_opts(
                        words,
                        rest,
                        b"ugCDprtTUR",
                        &[
                            b"user",
                            b"group",
                            b"close-from",
                            b"chdir",
                            b"prompt",
                            b"role",
                            b"type",
                            b"command-timeout",
                            b"other-user",
                            b"chroot",
                            b"host",
                        ],
                    ),
                    b"doas" => skip_opts(words, rest, b"uC", &[]),
                    b"stdbuf" => skip_opts(words, rest, b"ioe", &[b"input", b"output", b"error"]),
                    b"busybox" => rest,
                    b"xargs" => {
                        self.xargs(words, rest)?;
                        return Ok(bare);
                    }
                    b"find" => {
                        self.find(words, rest)?;
                        return Ok(bare);
                    }
                    b"watch" => {
                        self.watch(words, rest)?;
                        return Ok(bare);
                    }
                    b"eval" => {
                        let args = &words[rest..];
                        let args = match args.first() {
                            Some(w) if w.is(b"--") => &args[1..],
                            _ => args,
                        };
                        if args.len() == 1 && self.defer_use(args, UseKind::Script) {
                            return Ok(bare);
                        }
                        if args.iter().any(|w| !w.plain()) {
                            // The script comes from a value or a substitution.
                            if let Some(fields) = self.resolved_words(args) {
                                // `eval` joins its arguments with spaces.
                                self.resolved_any = true;
                                self.sub_parse(&fields.join(&b' '), true)?;
                                return Ok(bare);
                            }
                            self.dyn_text(&join_raw(args))?;
                        }
                        if !args.is_empty() {
                            self.sub_parse(&join(args), true)?;
                        }
                        return Ok(bare);
                    }
                    b if SHELLS.contains(&b) => {
                        let stdin = self.shell(b, &words[rest..])?;
                        return Ok(bare || stdin);
                    }
                    _ => return Ok(bare),
                };
                wrapped = true;
                continue;
            }
            // The command word's value is not known here.
            let rest = &words[i + 1..];
            if w.f & HVAR != 0 {
                // (It may name a function.)
                self.values.calls_unknown();
                self.herdr(rest, false, true)?;
                return Ok(bare);
            }
            // It comes from a substitution's output or a value defined
            // elsewhere: judge the text that produces it. The first such word's
            // text covers every later one, so it is judged once (linear cost).
            if !judged_rest {
                judged_rest = true;
                if self.resolved_command(&words[i..])? {
                    return Ok(bare);
                }
                // It may call a function with arguments the analysis does
                // not see, unless it is a value of the input itself.
                let own = self
                    .value_use(w)
                    .is_some_and(|u| u.surely || (u.name == b"@" && u.function.is_some()));
                if !own {
                    self.values.calls_unknown();
                }
                if self.defer_use(&words[i..], UseKind::Command) {
                    // The value may also come from outside the input.
                    self.herdr(rest, true, false)?;
                    return Ok(bare);
                }
                self.dyn_text(&join_raw(&words[i..]))?;
            }
            let base = basename(w.b);
            if pat_match(base, b"herdr", false) {
                if covered != Some(i + 1) {
                    self.herdr(rest, true, false)?;
                }
                // The run over `rest` began with a word that may vanish, so its
                // possibilities include every one of the run over `rest[1..]`
                // (the policy is monotone in its state set): that run is covered.
                covered = rest.first().filter(|r| r.split()).map(|_| i + 2);
            } else {
                covered = None;
            }
            if SHELLS.iter().any(|s| pat_match(base, s, false)) {
                bare |= self.shell(base, rest)?;
            }
            // It may also be a wrapper: judge the rest as a command too.
            i += 1;
        }
        if let Some(k) = assigns_from {
            // Assignments only: they stay in the shell.
            for w in &words[k..] {
                let name = w.b.split(|&c| c == b'=').next().unwrap_or(b"");
                if is_name(name) {
                    self.surely_assigned(name);
                }
            }
        }
        Ok(bare)
    }

    /// `name` is assigned by the command being analysed: when that command
    /// runs in the shell itself, unconditionally, `name` is surely assigned
    /// from here on in its scope.
    fn surely_assigned(&mut self, name: &[u8]) {
        if !self.frame.after && self.frame.made_up == 0 {
            self.frame.flow.assigned(name);
        }
    }

    /// A function definition (`NAME ()` or `function NAME`), `after` `&&`,
    /// `||` or `|`.
    fn define_function(&mut self, name: &[u8], after: bool) {
        self.defines_fn = true;
        self.values.function(name);
        if self.frame.made_up == 0 {
            if !after {
                self.frame.flow.assigned(&function_key(name));
            }
            self.frame.flow.header(name);
        }
    }

    /// Whether a function named `herdr` is surely defined here (and the
    /// input cannot remove it): then `herdr ...` calls it.
    fn herdr_is_function(&self) -> bool {
        !self.values.herdr_unset() && self.frame.flow.surely(&function_key(b"herdr"))
    }

    /// `for NAME in WORDS` (`is_for`) or `select ...`: with literal words,
    /// `NAME` gets each of them, and is surely assigned in the body.
    fn loop_head(&mut self, is_for: bool, rest: &[W<'_>]) {
        let Some(name) = rest.first() else {
            return;
        };
        let literal = is_for
            && name.plain()
            && is_name(name.b)
            && rest.get(1).is_some_and(|w| w.is(b"in"))
            && rest[2..].iter().all(|w| w.plain());
        if !literal || rest.len() > 2 + 256 {
            self.values.unknown(name.b);
            return;
        }
        for w in &rest[2..] {
            self.values.define(name.b, Value::Scalar(w.b.to_vec()));
        }
        if rest.len() > 2 && self.frame.made_up == 0 {
            self.frame.for_name = Some(name.b.to_vec());
        }
    }

    /// Whether the wrapper `name` (with `args`) runs its command without the
    /// `PATH` the shell has, so that a `herdr` there may miss the shim:
    /// `sudo`, `doas`, `su`, `runuser`, `command -p`, `exec` with options,
    /// `env` clearing or setting the environment.
    fn resets_path(&self, name: &[u8], args: &[W<'_>]) -> bool {
        let opt = |w: &W<'_>| w.plain() && w.b.starts_with(b"-");
        match basename(name) {
            b"sudo" | b"doas" | b"su" | b"runuser" | b"pkexec" => true,
            b"command" | b"exec" => args.first().is_some_and(opt),
            b"env" => args
                .iter()
                .take_while(|w| !w.plain() || w.b.starts_with(b"-") || w.b.contains(&b'='))
                .any(|w| !w.plain() || w.b.starts_with(b"-") || w.b.starts_with(b"PATH=")),
            _ => false,
        }
    }

    /// The fields of `words` when each is literal or expands only through
    /// static producers ([`resolve::word_fields`]); `None` otherwise.
    fn resolved_words(&self, words: &[W<'_>]) -> Option<Vec<Vec<u8>>> {
        let mut out = Vec::new();
        for w in words {
            if w.plain() {
                out.push(w.b.to_vec());
            } else if w.raw.is_empty() {
                return None;
            } else {
                out.extend(resolve::word_fields(w.raw, self.allowed)?);
            }
        }
        Some(out)
    }

    /// A command whose first word `words[0]` expands through static
    /// producers only (`$(echo herdr agent list) x`, `$(:)herdr ...`): the
    /// expanded command is analysed exactly. Returns whether it was.
    fn resolved_command(&mut self, words: &[W<'_>]) -> R<bool> {
        if words[0].raw.is_empty() || words[1..].iter().any(|w| w.raw.is_empty()) {
            return Ok(false);
        }
        let Some(fields) = resolve::word_fields(words[0].raw, self.allowed) else {
            return Ok(false);
        };
        if fields
            .first()
            .is_some_and(|f| SHELLS.contains(&basename(f)))
        {
            // A shell may read its standard input, which is not followed here.
            return Ok(false);
        }
        self.resolved_any = true;
        self.made_up_command(&command_script(&fields, &join_raw(&words[1..])))?;
        Ok(true)
    }

    /// Queues `words[0]`, a use of a value (`$c`, `"$@"`, `"${a[@]}"`), for
    /// [`Parser::settle`] at the end of the input, with the words after it.
    /// Returns whether it was queued.
    fn defer_use(&mut self, words: &[W<'_>], kind: UseKind) -> bool {
        let Some((name, form)) = resolve::value_use(words[0].raw) else {
            return false;
        };
        if words[1..].iter().any(|w| w.raw.is_empty()) {
            return false;
        }
        let rest = match kind {
            UseKind::Command => join_raw(&words[1..]),
            UseKind::Script => Vec::new(),
        };
        self.values.defer(Pending {
            name,
            form,
            kind,
            rest,
        });
        true
    }

    /// Analyses a command the analysis built from known values. A shell in
    /// it reading its standard input is not followed: then the whole input
    /// is judged loosely.
    fn made_up_command(&mut self, script: &[u8]) -> R {
        let bare = self.bare_count;
        self.sub_parse(script, true)?;
        if self.bare_count != bare {
            self.frame.loose = true;
        }
        Ok(())
    }

    /// Judges the uses of values queued by [`Parser::defer_use`], now that
    /// every definition in the input is known: the command (or script) is
    /// analysed once per possible value. A value that cannot be known
    /// makes the whole input judged loosely, as before.
    pub(super) fn settle(&mut self) -> R {
        for _ in 0..4 {
            let pending = std::mem::take(&mut self.values.pending);
            if pending.is_empty() {
                return self.settle_herdr();
            }
            for p in pending {
                let values = if p.name == b"@" && !self.allowed.positional {
                    // No `$@` in the input's own text: its calls were not
                    // recorded.
                    None
                } else {
                    self.values.possible(&p.name)
                };
                let Some(values) = values else {
                    self.frame.loose = true;
                    self.values.calls_unknown();
                    continue;
                };
                // Unquoted values are split at every `IFS` the input may set
                // (and at the default one, which holds before).
                let ifs_values = if p.form.splits() {
                    match self.ifs_values() {
                        Some(ifs) => ifs,
                        None => {
                            self.frame.loose = true;
                            self.values.calls_unknown();
                            continue;
                        }
                    }
                } else {
                    vec![resolve::DEFAULT_IFS.to_vec()]
                };
                self.spend(Values::size(&values).saturating_mul(ifs_values.len()))?;
                for (v, ifs) in values
                    .iter()
                    .flat_map(|v| ifs_values.iter().map(move |ifs| (v, ifs)))
                {
                    let Some(fields) = resolve::expand(v, p.form, ifs) else {
                        self.frame.loose = true;
                        continue;
                    };
                    match p.kind {
                        UseKind::Command => {
                            self.made_up_command(&command_script(&fields, &p.rest))?
                        }
                        UseKind::Script => self.sub_parse(&fields.join(&b' '), true)?,
                    }
                }
            }
        }
        if !self.values.pending.is_empty() {
            self.frame.loose = true;
            self.values.calls_unknown();
        }
        self.settle_herdr()
    }

    /// Records what an assignment word gives its name.
    fn note_assignment(&mut self, w: W<'_>) {
        let Some(eq) = w.b.iter().position(|&c| c == b'=') else {
            return;
        };
        let name = &w.b[..eq];
        if let Some(base) = name.strip_suffix(b"+") {
            self.values.unknown(base);
        } else if !is_name(name) {
            // `a[k]=x`: an element; the name is known no more.
            let base = name.split(|&c| c == b'[').next().unwrap_or(name);
            self.values.unknown(base);
        } else if w.raw.get(eq + 1) == Some(&b'(') {
            match resolve::array_elements(w.raw) {
                Some(elems) => self.values.define(name, Value::List(elems)),
                None => self.values.unknown(name),
            }
        } else if w.plain() {
            self.values
                .define(name, Value::Scalar(w.b[eq + 1..].to_vec()));
        } else {
            self.values.unknown(name);
        }
    }

    /// Records what a simple command named `name` may assign: the
    /// positional parameters (`set`, `shift`, a function's calls) and the
    /// names given to `read`, `declare`, `local`, `export`, `mapfile`,
    /// `printf -v`, `getopts`, `unset`.
    fn note_command(&mut self, name: &[u8], args: &[W<'_>], direct: bool) {
        match name {
            b"set" => {
                // `set [options] [--] [args]`: args replace the positional
                // parameters.
                let mut k = 0;
                while let Some(a) = args.get(k) {
                    if a.is(b"--") {
                        k += 1;
                        break;
                    }
                    if a.plain() && (a.b.starts_with(b"-") || a.b.starts_with(b"+")) {
                        k += if a.b.ends_with(b"o") { 2 } else { 1 };
                        continue;
                    }
                    break;
                }
                let positional = args.get(k..).unwrap_or(&[]);
                if k < args.len() || args.last().is_some_and(|a| a.is(b"--")) {
                    if positional.iter().all(|w| w.plain()) {
                        let list = positional.iter().map(|w| w.b.to_vec()).collect();
                        self.values.define(b"@", Value::List(list));
                        if direct {
                            self.surely_assigned(b"@");
                        }
                    } else {
                        self.values.unknown(b"@");
                    }
                }
            }
            b"shift" => self.values.unknown(b"@"),
            b"read" => {
                let simple = match args {
                    [o, n] if o.is(b"-ra") || o.is(b"-ar") => Some(n),
                    [r, a, n] if r.is(b"-r") && a.is(b"-a") => Some(n),
                    _ => None,
                };
                match (simple, self.herestr.take()) {
                    // (`read` splits at `IFS`: only the default one is known here.)
                    (Some(n), Some(text)) if n.plain() && is_name(n.b) && self.allowed.split => {
                        let elems = resolve::read_fields(&text);
                        self.values.define(n.b, Value::List(elems));
                        if direct {
                            self.surely_assigned(n.b);
                        }
                    }
                    _ => self.note_names(args),
                }
            }
            b"mapfile" | b"readarray" => {
                self.values.unknown(b"MAPFILE");
                self.note_names(args);
            }
            b"getopts" => self.note_names(args),
            b"unset" => {
                for a in args {
                    if !a.plain() || a.b == b"herdr" {
                        // It may remove a function named `herdr`.
                        self.values.herdr_unsettled();
                    }
                }
                self.note_names(args);
            }
            b"printf" => {
                if let Some(k) = args.iter().position(|a| a.is(b"-v")) {
                    self.note_names(&args[k + 1..(k + 2).min(args.len())]);
                }
            }
            b"local" | b"declare" | b"typeset" | b"export" | b"readonly" => {
                let option =
                    |a: &W<'_>| a.plain() && (a.b.starts_with(b"-") || a.b.starts_with(b"+"));
                // Attributes that change the values assigned (case, integer,
                // associative arrays): the names' values are not followed.
                let converts = args.iter().filter(|a| option(a)).any(|a| {
                    a.b[1..]
                        .iter()
                        .any(|c| matches!(c, b'l' | b'u' | b'i' | b'c' | b'A'))
                });
                let declares = name != b"export" && name != b"readonly";
                for a in args {
                    let eq = a.b.iter().position(|&c| c == b'=');
                    let base = &a.b[..eq.unwrap_or(a.b.len())];
                    if option(a) {
                        if a.b.contains(&b'n') {
                            // A nameref: assigning it assigns another name.
                            self.values.all_unknown();
                        }
                    } else if !a.plain() && eq.is_none() {
                        self.values.all_unknown();
                    } else if converts {
                        let base = base
                            .split(|&c| c == b'[' || c == b'+')
                            .next()
                            .unwrap_or(b"");
                        self.values.unknown(base);
                    } else if eq.is_some() {
                        self.note_assignment(*a);
                        if direct && is_name(base) {
                            self.surely_assigned(base);
                        }
                    } else if declares && is_name(base) {
                        // `local x`, `declare -a x`: possibly emptied.
                        self.values.define(base, Value::List(Vec::new()));
                    }
                }
            }
            _ => {}
        }
    }

    /// Records a simple command's arguments: when `name` is a function,
    /// they are its positional parameters.
    fn note_call(&mut self, name: &[u8], args: &[W<'_>]) {
        if is_name(name) {
            let args = args
                .iter()
                .map(|&w| {
                    if w.plain() {
                        Some(Arg::Lit(w.b.to_vec()))
                    } else {
                        self.value_use(w).map(Arg::Use)
                    }
                })
                .collect();
            self.values.call(name, args);
        }
    }

    /// The use of a value that `w` is exactly (`"$x"`, `"${a[@]}"`, `$1`),
    /// with what its place in the text tells.
    fn value_use(&self, w: W<'_>) -> Option<Use> {
        let (name, form) = resolve::value_use(w.raw)?;
        let flow = &self.frame.flow;
        Some(Use {
            surely: flow.surely(&name),
            function: flow.function().map(<[u8]>::to_vec),
            name,
            form,
        })
    }

    /// Every value `IFS` may have when the input splits a value: the default,
    /// and each the input assigns; `None` when one is not known.
    fn ifs_values(&self) -> Option<Vec<Vec<u8>>> {
        let mut ifs = vec![resolve::DEFAULT_IFS.to_vec()];
        if !self.allowed.split {
            ifs.extend(self.values.possible(b"IFS")?.into_iter().map(|v| match v {
                Value::Scalar(s) => s,
                Value::List(l) => l.into_iter().next().unwrap_or_default(),
            }));
        }
        Some(ifs)
    }

    /// Every argument that may name a variable gets an unknown value; an
    /// argument whose text is not known may name any.
    fn note_names(&mut self, args: &[W<'_>]) {
        for a in args {
            // `NAME[k]` names an element of `NAME`.
            let base = a.b.split(|&c| c == b'[').next().unwrap_or(b"");
            if !a.plain() {
                self.values.all_unknown();
            } else if is_name(base) {
                self.values.unknown(base);
            }
        }
    }

    /// A script given as one word (`sh -c WORD`, `trap WORD SIG`,
    /// `su -c WORD`): analysed; when the word's value is not known, its
    /// producing text is judged too, unless static producers fix it.
    fn script_word(&mut self, w: W<'_>) -> R {
        if !w.plain() {
            if let Some([script]) = self.resolved_words(&[w]).as_deref() {
                self.resolved_any = true;
                return self.sub_parse(script, true);
            }
            if self.defer_use(&[w], UseKind::Script) {
                return Ok(());
            }
            self.dyn_text(w.raw)?;
        }
        self.sub_parse(w.b, true)
    }

    /// A script file named by a substitution (`source <(...)`, `bash <(...)`,
    /// `bash < <(...)`): analysed exactly when a static producer writes it,
    /// else its text is judged loosely.
    /// Returns whether the script was known.
    fn script_file(&mut self, raw: &[u8]) -> R<bool> {
        let body = raw.strip_prefix(b"<(").and_then(|b| b.strip_suffix(b")"));
        match body.and_then(|b| self.produced(b)) {
            Some(scripts) => {
                self.resolved_any = true;
                for script in scripts {
                    self.sub_parse(&script, true)?;
                }
                Ok(true)
            }
            None => {
                self.dyn_text(raw)?;
                Ok(false)
            }
        }
    }

    /// Every output producer text `text` may give, when static producers
    /// fix it (reserved words before the producer and a group around it are
    /// dropped: `{ echo ...; } | bash`, `then echo ... | bash`).
    fn produced(&self, text: &[u8]) -> Option<Vec<Vec<u8>>> {
        if !self.allowed.producers {
            return None;
        }
        resolve::static_outputs(resolve::strip_lead(text))
    }

    /// Judges the arguments of Herdr by the wait policy. `strict`: the
    /// command word is only possibly Herdr, so `agent` and the verb must be
    /// literal. `route`: the command word reaches Herdr through `PATH` (or
    /// `$HERDR_BIN_PATH`), where the host may have put the shim. Arguments
    /// that use values wait for the end of the input ([`Analysis::settle`]).
    fn herdr(&mut self, args: &[W<'_>], strict: bool, route: bool) -> R {
        let relaxed = self.shim && route && !strict && self.path_lost == 0 && self.allowed.path;
        let uses = !strict
            && self.herdr_uses.len() < HERDR_USES_LIMIT
            && args
                .iter()
                .any(|w| !w.plain() && resolve::value_use(w.raw).is_some());
        if uses {
            let args = args
                .iter()
                .map(|&w| {
                    let unknown = (policy_classes(w, strict), w.split());
                    match (!w.plain()).then(|| self.value_use(w)).flatten() {
                        Some(used) => HerdrArg::Value { used, unknown },
                        None => HerdrArg::Classes(unknown.0, unknown.1),
                    }
                })
                .collect();
            self.herdr_uses.push(HerdrUse { args, relaxed });
            return Ok(());
        }
        let mut judge = policy::Judge::new();
        for &w in args {
            feed(&mut judge, policy_classes(w, strict), w.split());
            if judge.settled() {
                break;
            }
        }
        self.bump(if relaxed {
            judge.least()
        } else {
            judge.verdict()
        })
    }

    /// Judges the Herdr commands whose arguments use values, now that every
    /// value is known: each such argument counts as every list of words it
    /// may expand to, or as unknown when one is not known.
    fn settle_herdr(&mut self) -> R {
        let uses = std::mem::take(&mut self.herdr_uses);
        let ifs = self.ifs_values();
        for u in uses {
            let mut judge = policy::Judge::new();
            for a in &u.args {
                match a {
                    HerdrArg::Classes(c, split) => feed(&mut judge, *c, *split),
                    HerdrArg::Value { used, unknown } => {
                        let alternatives = if used.name == b"@" && !self.allowed.positional {
                            // No `$@` in the input's own text: calls were not
                            // recorded.
                            None
                        } else {
                            match &ifs {
                                Some(ifs) => self.values.alternatives(used, ifs),
                                None if !used.form.splits() => self
                                    .values
                                    .alternatives(used, &[resolve::DEFAULT_IFS.to_vec()]),
                                None => None,
                            }
                        };
                        let Some(alternatives) = alternatives else {
                            feed(&mut judge, unknown.0, unknown.1);
                            continue;
                        };
                        self.spend(alternatives.iter().map(|a| a.len() + 1).sum())?;
                        let start = judge;
                        let mut reached: Option<policy::Judge> = None;
                        for words in &alternatives {
                            let mut j = start;
                            for w in words {
                                j.word(policy::class_of(w).bit() | policy::EXACT);
                            }
                            reached = Some(reached.map_or(j, |r| r.union(j)));
                        }
                        judge = reached.unwrap_or(start);
                    }
                }
                if judge.settled() {
                    break;
                }
            }
            self.bump(if u.relaxed {
                judge.least()
            } else {
                judge.verdict()
            })?;
        }
        Ok(())
    }

    /// Options of a shell. Analyses the `-c` script; returns whether the
    /// shell reads its script from standard input.
    fn shell(&mut self, name: &[u8], args: &[W<'_>]) -> R<bool> {
        let mut i = 0;
        let mut c = false;
        let mut s = false;
        // `-n` / `-o noexec` (the last of `-n`, `+n`, `-o noexec`, `+o
        // noexec` counts): the shell reads its script and runs nothing.
        let mut noexec = false;
        let mut interactive = false;
        let mut login = false;
        while let Some(&w) = args.get(i) {
            if !w.plain() {
                // It may be `+n` (not a `<(...)` path, `/dev/fd/N`).
                if !(w.raw.starts_with(b"<(") || w.raw.starts_with(b">(")) {
                    noexec = false;
                }
                break;
            }
            let b = w.b;
            if b == b"--" || b == b"-" {
                i += 1;
                break;
            }
            if let Some(long) = b.strip_prefix(b"--") {
                if long == b"login" {
                    login = true;
                }
                if long == b"command" {
                    c = true;
                } else if let Some(script) = long.strip_prefix(b"command=") {
                    // fish's --command=SCRIPT
                    self.sub_parse(script, true)?;
                    return Ok(false);
                }
                i += if long == b"rcfile" || long == b"init-file" {
                    2
                } else {
                    1
                };
                continue;
            }
            if b.len() > 1 && (b[0] == b'-' || b[0] == b'+') {
                let on = b[0] == b'-';
                let mut extra = 0;
                for &ch in &b[1..] {
                    match ch {
                        b'c' if on => c = true,
                        b's' if on => s = true,
                        b'i' if on => interactive = true,
                        b'l' if on => login = true,
                        b'n' => noexec = on,
                        b'o' | b'O' => {
                            extra += 1;
                            let arg = args.get(i + extra);
                            if ch == b'o' && arg.is_some_and(|a| a.is(b"noexec")) {
                                noexec = on;
                            } else if arg.is_some_and(|a| !a.plain()) {
                                noexec = false;
                            }
                        }
                        _ => {}
                    }
                }
                i += 1 + extra;
                continue;
            }
            break;
        }
        if login {
            // A login shell reads profiles that may set `PATH` anew.
            self.path_lost += 1;
        }
        if noexec && !interactive && NOEXEC_SHELLS.contains(&name) {
            // Checked in bash and dash: a non-interactive shell with
            // `-n` runs neither its `-c` script, nor a script file, nor
            // standard input (an interactive one ignores `-n`).
            return Ok(false);
        }
        let operands = args.get(i..).unwrap_or(&[]);
        if c {
            if let Some(&script) = operands.first() {
                self.script_word(script)?;
            }
            return Ok(false);
        }
        match operands.first() {
            None => Ok(true),
            Some(_) if s => Ok(true),
            Some(w) if STDIN_PATHS.iter().any(|p| w.is(p)) => Ok(true),
            Some(w) => {
                // A script file from a substitution (`bash <(...)`).
                if !w.plain() {
                    self.script_file(w.raw)?;
                }
                Ok(false)
            }
        }
    }

    /// `source FILE` / `. FILE`: returns whether the script is standard
    /// input; a script from a substitution or a value is judged loosely.
    fn source(&mut self, args: &[W<'_>]) -> R<bool> {
        let args = match args.first() {
            Some(w) if w.is(b"--") => &args[1..],
            _ => args,
        };
        match args.first() {
            Some(w) if STDIN_PATHS.iter().any(|p| w.is(p)) => Ok(true),
            Some(w) if !w.plain() => {
                if !self.script_file(w.raw)? {
                    // That script may assign any name.
                    self.values.all_unknown();
                }
                Ok(false)
            }
            Some(_) => {
                // A script file, not seen here, may assign any name.
                self.values.all_unknown();
                Ok(false)
            }
            None => Ok(false),
        }
    }

    /// `trap [--] HANDLER SIGNAL...`: the handler is a script bash runs
    /// later.
    fn trap(&mut self, args: &[W<'_>]) -> R {
        let args = match args.first() {
            Some(w) if w.is(b"--") => &args[1..],
            _ => args,
        };
        if args.len() < 2 || args[0].is(b"-") || args[0].is(b"-p") || args[0].is(b"-l") {
            return Ok(());
        }
        self.script_word(args[0])
    }

    /// `alias NAME=VALUE...`: remembered, and judged where the alias is used.
    fn alias_define(&mut self, args: &[W<'_>]) {
        self.defines_fn = true;
        for w in args {
            if let Some(eq) = w.b.iter().position(|&c| c == b'=') {
                if !w.plain() {
                    self.frame.loose = true;
                }
                if self.aliases.len() < 64 {
                    self.aliases.push(Alias {
                        name: w.b[..eq].to_vec(),
                        value: w.b[eq + 1..].to_vec(),
                        owner: self.depth,
                        pending: true,
                    });
                } else {
                    // Too many to follow: the whole input, loosely.
                    self.frame.loose = true;
                }
            }
        }
    }

    /// A command that starts with alias number `k`: its value followed by
    /// the rest of the words' source text, analysed as a script (the alias
    /// is not expanded again inside its own value).
    fn alias_use(&mut self, k: usize, rest: &[W<'_>]) -> R {
        let alias = self.aliases.remove(k);
        let mut text = alias.value.clone();
        for w in rest {
            text.push(b' ');
            if w.raw.is_empty() {
                push_quoted(&mut text, w.b);
            } else {
                text.extend_from_slice(w.raw);
            }
        }
        let result = self.sub_parse(&text, true);
        self.aliases.insert(k.min(self.aliases.len()), alias);
        result
    }

    /// `su [options] [-] [user] -c SCRIPT` (also `--command=SCRIPT`,
    /// `--session-command SCRIPT`, `runuser ... -c SCRIPT`).
    fn su(&mut self, args: &[W<'_>]) -> R {
        let mut i = 0;
        while let Some(&w) = args.get(i) {
            i += 1;
            let b = w.b;
            let script = if w.is(b"-c") || w.is(b"--command") || w.is(b"--session-command") {
                args.get(i).copied()
            } else if let Some(s) = b
                .strip_prefix(b"--command=")
                .or_else(|| b.strip_prefix(b"--session-command="))
            {
                self.sub_parse(s, true)?;
                if !w.plain() {
                    self.dyn_text(w.raw)?;
                }
                continue;
            } else if b.len() > 2 && b[0] == b'-' && b[1] != b'-' && b.ends_with(b"c") {
                args.get(i).copied()
            } else {
                continue;
            };
            if let Some(sw) = script {
                self.script_word(sw)?;
                i += 1;
            }
        }
        Ok(())
    }

    /// A command with brace expansions: the words are expanded as bash does
    /// and the result analysed again. Too many words: each brace word is
    /// judged as unknown words instead.
    fn braces(&mut self, words: &[W<'_>]) -> R<bool> {
        let mut text = Vec::new();
        let mut ok = true;
        for w in words {
            if !text.is_empty() {
                text.push(b' ');
            }
            let raw = if w.raw.is_empty() { w.b } else { w.raw };
            if w.f & (BRACE | ASSIGN) == BRACE && !w.raw.is_empty() && w.raw.len() <= 4096 {
                match brace_expand(raw) {
                    Some(alts) => {
                        for (k, a) in alts.iter().enumerate() {
                            if k > 0 {
                                text.push(b' ');
                            }
                            text.extend_from_slice(a);
                        }
                    }
                    None => {
                        ok = false;
                        break;
                    }
                }
            } else if w.f & (BRACE | ASSIGN) == BRACE {
                ok = false;
                break;
            } else if w.raw.is_empty() {
                push_quoted(&mut text, w.b);
            } else {
                text.extend_from_slice(raw);
            }
        }
        if ok && text.len() <= 64 * 1024 {
            self.sub_parse(&text, true)?;
            return Ok(false);
        }
        let v: Vec<W<'_>> = words
            .iter()
            .map(|w| W {
                b: w.b,
                f: if w.f & BRACE != 0 {
                    (w.f & !BRACE) | DYN | SPLIT
                } else {
                    w.f
                },
                raw: w.raw,
            })
            .collect();
        self.command(&v)
    }

    /// `env [options] [NAME=value]... [command]`: returns the index of the
    /// command word, or `None` when there is none or `-S` was handled.
    fn env(&mut self, words: &[W<'_>], mut i: usize) -> R<Option<usize>> {
        while let Some(&w) = words.get(i) {
            if !w.plain() {
                return Ok(Some(i));
            }
            let b = w.b;
            if b == b"--" {
                return Ok(Some(i + 1));
            }
            if b == b"-" {
                i += 1;
                continue;
            }
            if let Some(long) = b.strip_prefix(b"--") {
                if let Some(s) = long.strip_prefix(b"split-string=") {
                    self.env_split(s, &words[i + 1..])?;
                    return Ok(None);
                }
                if long == b"split-string" {
                    if let Some(s) = words.get(i + 1) {
                        self.env_split(s.b, &words[i + 2..])?;
                    }
                    return Ok(None);
                }
                i += if long == b"unset" || long == b"chdir" {
                    2
                } else {
                    1
                };
                continue;
            }
            if b.len() > 1 && b[0] == b'-' {
                let mut next = 0;
                for (k, &c) in b.iter().enumerate().skip(1) {
                    match c {
                        b'S' => {
                            let attached = &b[k + 1..];
                            if attached.is_empty() {
                                if let Some(s) = words.get(i + 1) {
                                    self.env_split(s.b, &words[i + 2..])?;
                                }
                            } else {
                                self.env_split(attached, &words[i + 1..])?;
                            }
                            return Ok(None);
                        }
                        b'u' | b'C' | b'P' => {
                            if k + 1 == b.len() {
                                next = 1;
                            }
                            break;
                        }
                        _ => {}
                    }
                }
                i += 1 + next;
                continue;
            }
            if b.contains(&b'=') {
                i += 1;
                continue;
            }
            return Ok(Some(i));
        }
        Ok(None)
    }

    /// `env -S STRING args...`: STRING is split into words (env's own
    /// rules, not the shell's) before `args`, and env goes on with them.
    fn env_split(&mut self, s: &[u8], rest: &[W<'_>]) -> R {
        let split = env_split_words(s);
        let mut v: Vec<W<'_>> = Vec::with_capacity(split.len() + rest.len() + 1);
        v.push(W {
            b: b"env",
            f: 0,
            raw: b"",
        });
        v.extend(split.iter().map(|(b, f)| W { b, f: *f, raw: b"" }));
        v.extend_from_slice(rest);
        self.nested(&v)
    }

    /// `xargs [options] [command [args]]`: the command receives more
    /// arguments from standard input, or has its replace string substituted.
    fn xargs(&mut self, words: &[W<'_>], mut i: usize) -> R {
        let mut replace: Option<&[u8]> = None;
        while let Some(&w) = words.get(i) {
            if !w.plain() {
                break;
            }
            let b = w.b;
            if b == b"--" {
                i += 1;
                break;
            }
            if let Some(long) = b.strip_prefix(b"--") {
                if long == b"replace" {
                    replace = Some(b"{}");
                } else if let Some(r) = long.strip_prefix(b"replace=") {
                    replace = Some(r);
                }
                let takes: &[&[u8]] = &[
                    b"arg-file",
                    b"delimiter",
                    b"max-args",
                    b"max-procs",
                    b"max-chars",
                    b"process-slot-var",
                ];
                i += if takes.contains(&long) { 2 } else { 1 };
                continue;
            }
            if b.len() > 1 && b[0] == b'-' {
                let mut next = 0;
                for (k, &c) in b.iter().enumerate().skip(1) {
                    let last = k + 1 == b.len();
                    match c {
                        b'I' => {
                            if last {
                                replace = words.get(i + 1).map(|w| w.b);
                                next = 1;
                            } else {
                                replace = Some(&b[k + 1..]);
                            }
                            break;
                        }
                        b'i' => {
                            replace = Some(if last { b"{}" } else { &b[k + 1..] });
                            break;
                        }
                        b'a' | b'd' | b'E' | b'L' | b'n' | b'P' | b's' => {
                            if last {
                                next = 1;
                            }
                            break;
                        }
                        b'e' | b'l' => break,
                        _ => {}
                    }
                }
                i += 1 + next;
                continue;
            }
            break;
        }
        let cmd = words.get(i..).unwrap_or(&[]);
        if cmd.is_empty() {
            return Ok(());
        }
        match replace {
            Some(r) if !r.is_empty() && r.len() <= 64 => {
                // Each input line replaces the string, as one argument.
                let owned = substituted(cmd, r);
                self.nested(&with_substitutions(cmd, &owned, 0))
            }
            _ => {
                // Input words are appended as further arguments.
                let mut v: Vec<W<'_>> = Vec::with_capacity(cmd.len() + 1);
                v.extend_from_slice(cmd);
                v.push(W {
                    b: ANY,
                    f: DYN | SPLIT,
                    raw: b"",
                });
                self.nested(&v)
            }
        }
    }

    /// `find ... -exec|-execdir|-ok|-okdir command ... ;|+`.
    fn find(&mut self, words: &[W<'_>], mut i: usize) -> R {
        while let Some(&w) = words.get(i) {
            i += 1;
            if !(w.plain() && matches!(w.b, b"-exec" | b"-execdir" | b"-ok" | b"-okdir")) {
                continue;
            }
            let s = i;
            while i < words.len() && !(words[i].is(b";") || words[i].is(b"+")) {
                i += 1;
            }
            // `{}` stands for one found path (several with `+`).
            let cmd = &words[s..i];
            let owned = substituted(cmd, b"{}");
            self.nested(&with_substitutions(cmd, &owned, NODASH))?;
            i += 1;
        }
        Ok(())
    }

    /// `watch [options] command...`: joined into a `sh -c` script unless
    /// `-x`/`--exec` is given.
    fn watch(&mut self, words: &[W<'_>], mut i: usize) -> R {
        let mut exec = false;
        while let Some(&w) = words.get(i) {
            if !w.plain() {
                break;
            }
            let b = w.b;
            if b == b"--" {
                i += 1;
                break;
            }
            if let Some(long) = b.strip_prefix(b"--") {
                if long == b"exec" {
                    exec = true;
                }
                i += if long == b"interval" || long == b"equexit" {
                    2
                } else {
                    1
                };
                continue;
            }
            if b.len() > 1 && b[0] == b'-' {
                let mut next = 0;
                for (k, &c) in b.iter().enumerate().skip(1) {
                    match c {
                        b'x' => exec = true,
                        b'n' | b'q' => {
                            if k + 1 == b.len() {
                                next = 1;
                            }
                            break;
                        }
                        _ => {}
                    }
                }
                i += 1 + next;
                continue;
            }
            break;
        }
        let cmd = words.get(i..).unwrap_or(&[]);
        if cmd.is_empty() {
            Ok(())
        } else if exec {
            self.nested(cmd)
        } else {
            self.sub_parse(&join(cmd), true)
        }
    }

    /// Analyses a command built from other words, one level deeper.
    fn nested(&mut self, words: &[W<'_>]) -> R {
        self.spend(words.iter().map(|w| w.b.len() + 1).sum())?;
        self.depth += 1;
        if self.depth > super::lexer::MAX_DEPTH || self.stack_low() {
            return Err(Stop::TooDeep);
        }
        self.frame.made_up += 1;
        let result = self.command(words);
        self.frame.made_up -= 1;
        result?;
        self.depth -= 1;
        Ok(())
    }
}
