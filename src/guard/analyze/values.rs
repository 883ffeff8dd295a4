//! Values: what the commands assign (variables, arrays, positional
//! parameters), the uses of values that wait for the end of the input, and
//! the command words and scripts built from them.

use super::scripts::SHELLS;
use super::*;

impl Analysis {
    /// The fields of `words` when each is literal or expands only through
    /// static producers ([`resolve::word_fields`]); `None` otherwise.
    pub(super) fn resolved_words(&self, words: &[W<'_>]) -> Option<Vec<Vec<u8>>> {
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
    pub(super) fn resolved_command(&mut self, words: &[W<'_>]) -> R<bool> {
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
    pub(super) fn defer_use(&mut self, words: &[W<'_>], kind: UseKind) -> bool {
        let Some((name, form, op)) = resolve::value_use(words[0].raw) else {
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
            op,
            kind,
            rest,
        });
        true
    }

    /// Analyses a command the analysis built from known values. A shell in
    /// it reading its standard input is not followed: then the whole input
    /// is judged loosely.
    pub(super) fn made_up_command(&mut self, script: &[u8]) -> R {
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
                    let Some(fields) = resolve::expand(v, p.form, &p.op, ifs) else {
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
    pub(super) fn note_assignment(&mut self, w: W<'_>) {
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
    pub(super) fn note_command(&mut self, name: &[u8], args: &[W<'_>], direct: bool) {
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
    pub(super) fn note_call(&mut self, name: &[u8], args: &[W<'_>]) {
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
    pub(super) fn value_use(&self, w: W<'_>) -> Option<Use> {
        let (name, form, op) = resolve::value_use(w.raw)?;
        let flow = &self.frame.flow;
        Some(Use {
            surely: flow.surely(&name),
            function: flow.function().map(<[u8]>::to_vec),
            name,
            form,
            op,
        })
    }

    /// Every value `IFS` may have when the input splits a value: the default,
    /// and each the input assigns; `None` when one is not known.
    pub(super) fn ifs_values(&self) -> Option<Vec<Vec<u8>>> {
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
    pub(super) fn note_names(&mut self, args: &[W<'_>]) {
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
}
