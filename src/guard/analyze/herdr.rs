//! Herdr's argv: recognises the command word that is Herdr (`herdr`, the
//! `$HERDR_BIN_PATH` the host sets) and judges its arguments by the wait
//! policy, now or, when they use values, once every value is known.

use super::*;

/// The variable a host sets to the `herdr` its commands run (the shim, where
/// one is in place).
const HERDR_BIN_PATH: &[u8] = b"HERDR_BIN_PATH";

/// Whether `w` is exactly one expansion of `$HERDR_BIN_PATH`, quoted or not:
/// `$HERDR_BIN_PATH`, `${HERDR_BIN_PATH}`, or with a default that only
/// stands in when it is unset or empty (`${HERDR_BIN_PATH:-herdr}`,
/// `:=`, `:?` and the forms without `:`). An operator that changes the
/// value (`${HERDR_BIN_PATH%/*}`, `${HERDR_BIN_PATH/h/x}`, `${...:+x}`)
/// makes it a word like any other whose value is not known.
pub(super) fn herdr_variable(w: W<'_>) -> bool {
    if w.b != [S_ANY] {
        return false;
    }
    let raw = match w.raw {
        [b'"', inner @ .., b'"'] => inner,
        raw => raw,
    };
    let Some(body) = raw.strip_prefix(b"$") else {
        return false;
    };
    match body {
        [b'{', inner @ .., b'}'] => inner.strip_prefix(HERDR_BIN_PATH).is_some_and(|rest| {
            let rest = rest.strip_prefix(b":").unwrap_or(rest);
            rest.is_empty() || matches!(rest[0], b'-' | b'=' | b'?')
        }),
        _ => body == HERDR_BIN_PATH,
    }
}

/// Feeds one word of `classes` (any number of them when `split`) to the
/// policy. Deliberately, an unknown TARGET or TEXT (`"$PEER"`) is not taken
/// for a global flag that would shift `-- --wait` into place (the `herdr`
/// shim sees such a value exactly).
pub(super) fn feed(judge: &mut policy::Judge, classes: policy::Classes, split: bool) {
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
pub(super) fn policy_classes(w: W<'_>, strict: bool) -> policy::Classes {
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
    /// Judges the arguments of Herdr by the wait policy. `strict`: the
    /// command word is only possibly Herdr, so `agent` and the verb must be
    /// literal. `route`: the command word reaches Herdr through `PATH` (or
    /// `$HERDR_BIN_PATH`), where the host may have put the shim. Arguments
    /// that use values wait for the end of the input ([`Analysis::settle`]).
    pub(super) fn herdr(&mut self, args: &[W<'_>], strict: bool, route: bool) -> R {
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
    pub(super) fn settle_herdr(&mut self) -> R {
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
}
