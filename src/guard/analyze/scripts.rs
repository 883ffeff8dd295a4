//! Text read again as a script: `sh -c`, `eval`, `source`, `trap`, `su -c`,
//! aliases, and script files from substitutions or static producers.

use super::*;

/// Shells whose `-c` script is analysed.
pub(super) const SHELLS: &[&[u8]] = &[
    b"sh", b"bash", b"rbash", b"zsh", b"dash", b"ksh", b"ash", b"mksh", b"yash", b"posh", b"fish",
    b"ksh93", b"pdksh", b"oksh", b"lksh", b"bash5", b"tcsh", b"csh",
];

/// Shells in which `-n` was checked to run nothing (others keep their
/// scripts analysed).
pub(super) const NOEXEC_SHELLS: &[&[u8]] = &[b"bash", b"rbash", b"sh", b"dash"];

/// Paths through which a shell or `source` reads its standard input.
pub(super) const STDIN_PATHS: &[&[u8]] = &[b"/dev/stdin", b"/dev/fd/0", b"/proc/self/fd/0"];

impl Analysis {
    /// `eval [--] ARGS...`: the arguments joined by spaces, read as a script.
    pub(super) fn eval(&mut self, args: &[W<'_>]) -> R {
        let args = match args.first() {
            Some(w) if w.is(b"--") => &args[1..],
            _ => args,
        };
        if args.len() == 1 && self.defer_use(args, UseKind::Script) {
            return Ok(());
        }
        if args.iter().any(|w| !w.plain()) {
            // The script comes from a value or a substitution.
            if let Some(fields) = self.resolved_words(args) {
                // `eval` joins its arguments with spaces.
                self.resolved_any = true;
                return self.read_in_shell(&fields.join(&b' '));
            }
            self.dyn_text(&join_raw(args))?;
        }
        if !args.is_empty() {
            self.read_in_shell(&join(args))?;
        }
        Ok(())
    }

    /// A script given as one word (`sh -c WORD`, `trap WORD SIG`,
    /// `su -c WORD`): analysed; when the word's value is not known, its
    /// producing text is judged too, unless static producers fix it.
    pub(super) fn script_word(&mut self, w: W<'_>) -> R {
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
    pub(super) fn script_file(&mut self, raw: &[u8]) -> R<bool> {
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
    pub(super) fn produced(&self, text: &[u8]) -> Option<Vec<Vec<u8>>> {
        if !self.allowed.producers {
            return None;
        }
        resolve::static_outputs(resolve::strip_lead(text))
    }

    /// Options of a shell. Analyses the `-c` script; returns whether the
    /// shell reads its script from standard input.
    pub(super) fn shell(&mut self, name: &[u8], args: &[W<'_>]) -> R<bool> {
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
    pub(super) fn source(&mut self, args: &[W<'_>]) -> R<bool> {
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
    pub(super) fn trap(&mut self, args: &[W<'_>]) -> R {
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
    pub(super) fn alias_define(&mut self, args: &[W<'_>]) {
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
    pub(super) fn alias_use(&mut self, k: usize, rest: &[W<'_>]) -> R {
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
    pub(super) fn su(&mut self, args: &[W<'_>]) -> R {
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
}
