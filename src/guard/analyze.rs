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
use super::lexer::{self, closes_compound, is_name_char, End, Lexer, Simple, Sink, Stop, Text, R};
use super::policy::{self, Verdict};
use super::resolve::{self, Allowed, Form, Pending, UseKind, Value, Values};
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
}

impl Frame {
    fn new() -> Frame {
        Frame {
            verdict: Verdict::Allow,
            loose: false,
            committed: (Verdict::Allow, false),
            open: Vec::new(),
            made_up: 0,
        }
    }
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
}

/// What one analysis of an input found.
pub(super) struct Outcome {
    /// The verdict.
    pub(super) verdict: Verdict,
    /// A resolution was used although a re-parsed script allowed less: the
    /// caller judges again without static evaluation.
    pub(super) doubtful: bool,
}

/// One analysis of `src` with the static evaluations `allowed` permits.
pub(super) fn judge(src: &[u8], allowed: Allowed) -> Outcome {
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
            Ok(()) | Err(Stop::Syntax) => {
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
            // Bash ran the complete commands before the syntax error, nothing after.
            Err(Stop::Syntax) => {
                let (v, committed_loose) = f.committed;
                if committed_loose || elsewhere {
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
        if result == Err(Stop::Syntax) {
            // That shell runs what came before the error, then stops.
            self.frame.verdict = self.frame.verdict.max(sub.committed.0);
            self.frame.loose |= sub.committed.1;
            return Ok(());
        }
        self.frame.verdict = self.frame.verdict.max(sub.verdict);
        self.frame.loose |= sub.loose;
        result
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
        let open = &mut self.frame.open;
        let top = open.last().copied();
        let ok = match w {
            b"if" => {
                open.push(b'i');
                true
            }
            b"while" | b"until" | b"for" | b"select" => {
                open.push(b'w');
                true
            }
            b"case" => {
                open.push(b'c');
                true
            }
            b"{" => {
                open.push(b'{');
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
                        if let Some(n) = next {
                            open.push(n);
                        }
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

    fn end(&mut self, _end: End) {}

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

    fn subshell(&mut self, _open: bool) {}

    fn function(&mut self, name: &[u8]) {
        self.defines_fn = true;
        self.values.function(name);
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
        let has_brace = words.iter().any(|w| w.f & (BRACE | ASSIGN) == BRACE);
        let mut bare = false;
        let mut judged_rest = false;
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
                        if let Some(name) = words.get(i + 1) {
                            self.values.unknown(name.b);
                        }
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
                        self.defines_fn = true;
                        if let Some(name) = words.get(i + 1) {
                            self.values.function(name.b);
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
                if self.allowed.positional && !WRAPPERS.contains(&basename(w.b)) {
                    // (Not for wrappers: a chain of them would copy the
                    // arguments once per link.)
                    self.note_call(w.b, &words[rest..]);
                }
                self.note_command(w.b, &words[rest..]);
                i = match basename(w.b) {
                    b"herdr" => {
                        self.herdr(&words[rest..], false)?;
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
                continue;
            }
            // The command word's value is not known here.
            let rest = &words[i + 1..];
            if w.f & HVAR != 0 {
                self.herdr(rest, false)?;
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
                if self.defer_use(&words[i..], UseKind::Command) {
                    // The value may also come from outside the input.
                    self.herdr(rest, true)?;
                    return Ok(bare);
                }
                self.dyn_text(&join_raw(&words[i..]))?;
            }
            let base = basename(w.b);
            if pat_match(base, b"herdr", false) {
                if covered != Some(i + 1) {
                    self.herdr(rest, true)?;
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
        Ok(bare)
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
                return Ok(());
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
                    continue;
                };
                // Unquoted values are split at every `IFS` the input may set
                // (and at the default one, which holds before).
                let mut ifs_values = vec![resolve::DEFAULT_IFS.to_vec()];
                if !self.allowed.split && matches!(p.form, Form::Unquoted | Form::AllUnquoted) {
                    match self.values.possible(b"IFS") {
                        Some(vals) => ifs_values.extend(vals.into_iter().map(|v| match v {
                            Value::Scalar(s) => s,
                            Value::List(l) => l.into_iter().next().unwrap_or_default(),
                        })),
                        None => {
                            self.frame.loose = true;
                            continue;
                        }
                    }
                }
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
        }
        Ok(())
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
    fn note_command(&mut self, name: &[u8], args: &[W<'_>]) {
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
                    }
                    _ => self.note_names(args),
                }
            }
            b"mapfile" | b"readarray" => {
                self.values.unknown(b"MAPFILE");
                self.note_names(args);
            }
            b"getopts" | b"unset" => self.note_names(args),
            b"printf" => {
                if let Some(k) = args.iter().position(|a| a.is(b"-v")) {
                    self.note_names(&args[k + 1..(k + 2).min(args.len())]);
                }
            }
            b"local" | b"declare" | b"typeset" | b"export" | b"readonly" => {
                for a in args {
                    if a.plain() && a.b.starts_with(b"-") && a.b.contains(&b'n') {
                        // A nameref: assigning it assigns another name.
                        self.values.all_unknown();
                    } else if a.f & ASSIGN != 0 || a.b.contains(&b'=') {
                        self.note_assignment(*a);
                    } else if !a.plain() {
                        self.values.all_unknown();
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
            let literal = args
                .iter()
                .all(|w| w.plain())
                .then(|| args.iter().map(|w| w.b.to_vec()).collect());
            self.values.call(name, literal);
        }
    }

    /// Every argument that may name a variable gets an unknown value; an
    /// argument whose text is not known may name any.
    fn note_names(&mut self, args: &[W<'_>]) {
        for a in args {
            if !a.plain() {
                self.values.all_unknown();
            } else if is_name(a.b) {
                self.values.unknown(a.b);
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
    /// literal.
    fn herdr(&mut self, args: &[W<'_>], strict: bool) -> R {
        let mut judge = policy::Judge::new();
        for &w in args {
            let mut classes = policy_classes(w, strict);
            if classes & policy::EXACT == 0 && judge.past_verb() {
                // Deliberately: an unknown TARGET or TEXT (`"$PEER"`) is not
                // taken for a global flag that would shift `-- --wait` into
                // place (the `herdr` shim sees such a value exactly).
                classes = (classes & !policy::GLOBAL) | policy::Class::Other.bit();
            }
            if w.split() {
                judge.words(classes);
            } else {
                judge.word(classes);
            }
            if judge.settled() {
                break;
            }
        }
        self.bump(judge.verdict())
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
