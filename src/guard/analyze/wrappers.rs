//! Commands that run other commands: the wrappers (one table row each, with their option
//! grammar, walked by [`walk_opts`]), `xargs`, `find -exec` and `watch`.

use super::*;

/// What a wrapper does once its options are walked.
#[derive(Debug, Clone, Copy)]
pub(super) enum Runs {
    /// Runs its first operand as a command, after `skip` more operands (`timeout DURATION`).
    Operand { skip: usize },
    /// `env`: may also split a string into the command (`-S`), see [`Analysis::env`].
    Env,
    /// `command`: `-v`/`-V` only print.
    Command,
    /// `builtin`: runs only a bash builtin.
    Builtin,
    /// `runuser`: with `-c` a script, like `su`.
    Runuser,
    /// `busybox`: the next word is the applet, options and all.
    Applet,
}

/// A command that runs the command after it (skipped before the command word): its name, its
/// option grammar and what it runs.
#[derive(Debug, Clone, Copy)]
pub(super) struct Wrapper {
    /// Its basename.
    pub(super) name: &'static [u8],
    /// The grammar of its options.
    pub(super) opts: Opts,
    /// What it runs once they are walked.
    pub(super) runs: Runs,
}

/// One row of [`WRAPPERS`].
const fn row(name: &'static [u8], opts: Opts, runs: Runs) -> Wrapper {
    Wrapper { name, opts, runs }
}

/// Runs its first operand.
const RUN: Runs = Runs::Operand { skip: 0 };

/// Every wrapper, by basename.
pub(super) const WRAPPERS: &[Wrapper] = &[
    row(
        b"env",
        Opts {
            with_arg: b"uCPS",
            long_arg: &[b"unset", b"chdir", b"split-string"],
            attached: b"",
            env: true,
        },
        Runs::Env,
    ),
    row(b"command", Opts::NONE, Runs::Command),
    row(b"exec", Opts::short(b"a", &[]), RUN),
    row(b"nohup", Opts::NONE, RUN),
    row(b"builtin", Opts::NONE, Runs::Builtin),
    row(b"setsid", Opts::NONE, RUN),
    row(b"time", Opts::short(b"fo", &[b"format", b"output"]), RUN),
    row(
        b"timeout",
        Opts::short(b"sk", &[b"signal", b"kill-after"]),
        Runs::Operand { skip: 1 },
    ),
    row(b"nice", Opts::short(b"n", &[b"adjustment"]), RUN),
    row(
        b"sudo",
        Opts::short(
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
        RUN,
    ),
    row(b"doas", Opts::short(b"uC", &[]), RUN),
    row(
        b"stdbuf",
        Opts::short(b"ioe", &[b"input", b"output", b"error"]),
        RUN,
    ),
    row(b"busybox", Opts::NONE, Runs::Applet),
    row(
        b"runuser",
        Opts::short(
            b"ugGw",
            &[b"user", b"group", b"supp-group", b"whitelist-environment"],
        ),
        Runs::Runuser,
    ),
];

impl Wrapper {
    /// The wrapper a command word names (by its basename).
    pub(super) fn of(word: &[u8]) -> Option<&'static Wrapper> {
        let base = basename(word);
        WRAPPERS.iter().find(|w| w.name == base)
    }
}

/// The options of `xargs`.
const XARGS: Opts = Opts {
    with_arg: b"IadELnPs",
    long_arg: &[
        b"arg-file",
        b"delimiter",
        b"max-args",
        b"max-procs",
        b"max-chars",
        b"process-slot-var",
    ],
    attached: b"iel",
    env: false,
};

/// The options of `watch`.
const WATCH: Opts = Opts::short(b"nq", &[b"interval", b"equexit"]);

pub(super) const BASH_BUILTINS: &[&[u8]] = &[
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

impl Analysis {
    /// The wrapper `wrapper` (its word `w`, its options from `words[rest]`): the index of the
    /// command it runs, or `None` when it runs none (or its command was analysed here).
    pub(super) fn wrapper(
        &mut self,
        wrapper: &Wrapper,
        w: W<'_>,
        words: &[W<'_>],
        rest: usize,
    ) -> R<Option<usize>> {
        let skip = || skip_opts(words, rest, &wrapper.opts);
        Ok(match wrapper.runs {
            Runs::Operand { skip: n } => Some(skip() + n),
            Runs::Applet => Some(rest),
            Runs::Env => self.env(words, rest, &wrapper.opts)?,
            Runs::Command => command_opts(words, rest),
            Runs::Builtin => {
                let j = skip();
                let refused = w.b == b"builtin"
                    && self.allowed.builtin
                    && words
                        .get(j)
                        .is_some_and(|n| n.plain() && !BASH_BUILTINS.contains(&n.b));
                // Bash refuses `builtin NAME` for a NAME that is no builtin
                // (`builtin herdr ...`): nothing runs.
                (!refused).then_some(j)
            }
            Runs::Runuser => {
                if words[rest..]
                    .iter()
                    .any(|w| w.is(b"-c") || w.b.starts_with(b"--command"))
                {
                    self.su(&words[rest..])?;
                    None
                } else {
                    Some(skip())
                }
            }
        })
    }

    /// `env [options] [NAME=value]... [command]`: returns the index of the
    /// command word, or `None` when there is none or `-S` was handled.
    pub(super) fn env(&mut self, words: &[W<'_>], i: usize, opts: &Opts) -> R<Option<usize>> {
        let mut split = None;
        let command = walk_opts(words, i, opts, |o| {
            let s = o.short == b'S' || o.long == b"split-string";
            if s {
                split = Some((o.arg, o.next));
            }
            s
        });
        if let Some((arg, next)) = split {
            if let Some(s) = arg {
                self.env_split(s, &words[next..])?;
            }
            return Ok(None);
        }
        Ok(command.filter(|&j| j < words.len()))
    }

    /// `env -S STRING args...`: STRING is split into words (env's own
    /// rules, not the shell's) before `args`, and env goes on with them.
    pub(super) fn env_split(&mut self, s: &[u8], rest: &[W<'_>]) -> R {
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
    pub(super) fn xargs(&mut self, words: &[W<'_>], i: usize) -> R {
        let mut replace: Option<&[u8]> = None;
        let i = skip_opts_with(words, i, &XARGS, |o| match (o.short, o.long) {
            (b'I', _) => replace = o.arg,
            (b'i', _) => replace = o.arg.filter(|r| !r.is_empty()).or(Some(b"{}")),
            (0, b"replace") => replace = o.arg.or(Some(b"{}")),
            _ => {}
        });
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
    pub(super) fn find(&mut self, words: &[W<'_>], mut i: usize) -> R {
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
    pub(super) fn watch(&mut self, words: &[W<'_>], i: usize) -> R {
        let mut exec = false;
        let i = skip_opts_with(words, i, &WATCH, |o| {
            exec |= o.short == b'x' || o.long == b"exec";
        });
        let cmd = words.get(i..).unwrap_or(&[]);
        if cmd.is_empty() {
            Ok(())
        } else if exec {
            self.nested(cmd)
        } else {
            self.sub_parse(&join(cmd), true)
        }
    }
}

/// [`skip_opts`], telling `each` every option met.
fn skip_opts_with<'a>(
    words: &[W<'a>],
    i: usize,
    opts: &Opts,
    mut each: impl FnMut(Opt<'a>),
) -> usize {
    walk_opts(words, i, opts, |o| {
        each(o);
        false
    })
    .unwrap_or(i)
}
