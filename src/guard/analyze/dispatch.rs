//! Dispatch of one simple command: assignments, reserved words and aliases
//! before the command word, then the word itself to its handler (a wrapper
//! row, Herdr, a shell, a script reader), or, when its value is not known
//! here, to the producers of that value.

use super::herdr::herdr_variable;
use super::scripts::SHELLS;
use super::wrappers::Wrapper;
use super::*;

/// What a word before the command word does to the reading of a simple command.
enum Lead {
    /// Not a keyword: it is the command word (or an alias).
    Command,
    /// Skipped: the reading goes on at this index.
    Next(usize),
    /// The simple command ends here for the analysis (`case`, `[[`, a loop head).
    Done,
}

/// An unquoted reserved word that may come before a command.
pub(super) fn is_reserved(w: W<'_>) -> bool {
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

impl Analysis {
    /// Analyses one simple command. Returns whether it is a shell that reads
    /// its script from standard input.
    pub(super) fn command(&mut self, words: &[W<'_>]) -> R<bool> {
        let path_lost = self.path_lost;
        let result = self.command_words(words);
        self.path_lost = path_lost;
        result
    }

    /// [`Analysis::command`] itself.
    pub(super) fn command_words(&mut self, words: &[W<'_>]) -> R<bool> {
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
                match self.keyword(words, i)? {
                    Lead::Next(j) => {
                        i = j;
                        continue;
                    }
                    Lead::Done => return Ok(bare),
                    Lead::Command => {}
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
                let wrapper = Wrapper::of(w.b);
                if self.allowed.positional && !wrapped && wrapper.is_none() {
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
                if let Some(wrapper) = wrapper {
                    match self.wrapper(wrapper, w, words, rest)? {
                        Some(j) => {
                            i = j;
                            wrapped = true;
                            continue;
                        }
                        None => return Ok(bare),
                    }
                }
                if bare && matches!(basename(w.b), b"source" | b".") {
                    // Already a shell reading its standard input: `source` is not read.
                    return Ok(true);
                }
                return Ok(self.handle(w, &words[rest..], words, rest, wrapped)? || bare);
            }
            // The command word's value is not known here.
            let rest = &words[i + 1..];
            if herdr_variable(w) {
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

    /// The unquoted word `words[i]` before the command word: a reserved word (followed through
    /// the open compound commands), `!`, `time`, `function NAME`, `coproc`.
    fn keyword(&mut self, words: &[W<'_>], i: usize) -> R<Lead> {
        let w = words[i];
        Ok(match w.b {
            b"!" | b"noglob" | b"nocorrect" => Lead::Next(i + 1),
            b"{" | b"}" | b"if" | b"then" | b"elif" | b"else" | b"fi" | b"do" | b"done"
            | b"while" | b"until" | b"esac" => {
                self.reserved_word(w.b)?;
                Lead::Next(i + 1)
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
                    Lead::Next(i + 2)
                } else if words.get(i + 2).is_some_and(|w| w.reserved(b"do")) {
                    Lead::Next(i + 3)
                } else {
                    Lead::Done
                }
            }
            b"case" => {
                self.reserved_word(w.b)?;
                Lead::Done
            }
            b"[[" => Lead::Done,
            b"time" => {
                // Bash's `time` keyword takes only `-p` (and `--`).
                let mut j = i + 1;
                while words.get(j).is_some_and(|w| w.is(b"-p") || w.is(b"--")) {
                    j += 1;
                }
                Lead::Next(j)
            }
            b"function" => {
                if let Some(name) = words.get(i + 1) {
                    let after = self.frame.after;
                    self.define_function(name.b, after || !name.plain());
                } else {
                    self.defines_fn = true;
                }
                Lead::Next(i + 2)
            }
            b"coproc" => Lead::Next(
                i + if words.get(i + 2).is_some_and(|w| w.is(b"{")) {
                    2
                } else {
                    1
                },
            ),
            _ => Lead::Command,
        })
    }

    /// A command word known exactly, no wrapper: its handler (Herdr, a script reader, a command
    /// that runs a command). `args` are the words after it, from `words[rest]`; `wrapped`: a
    /// wrapper came before it. Returns whether it is a shell reading its standard input.
    fn handle(
        &mut self,
        w: W<'_>,
        args: &[W<'_>],
        words: &[W<'_>],
        rest: usize,
        wrapped: bool,
    ) -> R<bool> {
        match basename(w.b) {
            b"herdr" => {
                if !wrapped && w.b == b"herdr" && self.herdr_is_function() {
                    // A function named `herdr` defined before: bash
                    // calls it (its body was judged where it stands).
                    return Ok(false);
                }
                let route = !w.b.contains(&b'/');
                self.herdr(args, false, route)?;
            }
            b"trap" => self.trap(args)?,
            b"alias" => self.alias_define(args),
            b"source" | b"." => return self.source(args),
            b"su" => self.su(args)?,
            b"xargs" => self.xargs(words, rest)?,
            b"find" => self.find(words, rest)?,
            b"watch" => self.watch(words, rest)?,
            b"eval" => self.eval(args)?,
            b if SHELLS.contains(&b) => return self.shell(b, args),
            _ => {}
        }
        Ok(false)
    }

    /// `name` is assigned by the command being analysed: when that command
    /// runs in the shell itself, unconditionally, `name` is surely assigned
    /// from here on in its scope.
    pub(super) fn surely_assigned(&mut self, name: &[u8]) {
        if !self.frame.after && self.frame.made_up == 0 {
            self.frame.flow.assigned(name);
        }
    }

    /// A function definition (`NAME ()` or `function NAME`), `after` `&&`,
    /// `||` or `|`.
    pub(super) fn define_function(&mut self, name: &[u8], after: bool) {
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
    pub(super) fn herdr_is_function(&self) -> bool {
        !self.values.herdr_unset() && self.frame.flow.surely(&function_key(b"herdr"))
    }

    /// `for NAME in WORDS` (`is_for`) or `select ...`: with literal words,
    /// `NAME` gets each of them, and is surely assigned in the body.
    pub(super) fn loop_head(&mut self, is_for: bool, rest: &[W<'_>]) {
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
    pub(super) fn resets_path(&self, name: &[u8], args: &[W<'_>]) -> bool {
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

    /// A command with brace expansions: the words are expanded as bash does
    /// and the result analysed again. Too many words: each brace word is
    /// judged as unknown words instead.
    pub(super) fn braces(&mut self, words: &[W<'_>]) -> R<bool> {
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

    /// Analyses a command built from other words, one level deeper.
    pub(super) fn nested(&mut self, words: &[W<'_>]) -> R {
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
