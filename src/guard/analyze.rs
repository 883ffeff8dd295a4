//! Analysis of one simple command: skips assignments, reserved words and
//! wrappers, recognises Herdr and judges its argv, and re-parses the scripts
//! handed to shells, `eval`, `env -S`, `watch`, `find -exec` and `xargs`.

use super::lexer::{Alias, Analysis, Parser, Stop, R};
use super::policy;
use super::resolve::{self, Form, Pending, UseKind, Value, Values};
use super::words::{pat_match, ASSIGN, BRACE, DYN, HVAR, NODASH, QUOTED, SPLIT, S_ANY, W};

/// A word standing for one unknown argument.
const ANY: &[u8] = &[S_ANY];

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

/// Most words a brace expansion may produce before the analysis gives up
/// on it (and judges the words as unknown).
const BRACE_LIMIT: usize = 256;

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

/// Bash brace expansion of one word's source text (quotes, `${...}`,
/// `$(...)` and backquotes respected). `None` when it would produce more
/// than [`BRACE_LIMIT`] words.
pub(super) fn brace_expand(raw: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    expand_into(raw, &mut out, 0)?;
    Some(out)
}

/// Index after the quoted or substituted part that starts at `i`, if one
/// does (`'...'`, `"..."`, `\x`, `` `...` ``, `${...}`, `$(...)`).
fn skip_quoted(raw: &[u8], i: usize) -> Option<usize> {
    let find = |from: usize, close: u8| -> usize {
        let mut k = from;
        while k < raw.len() {
            if raw[k] == b'\\' && close != b'\'' {
                k += 2;
                continue;
            }
            if raw[k] == close {
                return k + 1;
            }
            k += 1;
        }
        raw.len()
    };
    let nest = |from: usize, open: u8, close: u8| -> usize {
        let mut depth = 1u32;
        let mut k = from;
        while k < raw.len() {
            match raw[k] {
                b'\\' => k += 1,
                c if c == open => depth += 1,
                c if c == close => {
                    depth -= 1;
                    if depth == 0 {
                        return k + 1;
                    }
                }
                _ => {}
            }
            k += 1;
        }
        raw.len()
    };
    match raw[i] {
        b'\\' => Some((i + 2).min(raw.len())),
        b'\'' => Some(find(i + 1, b'\'')),
        b'"' => Some(find(i + 1, b'"')),
        b'`' => Some(find(i + 1, b'`')),
        b'$' => match raw.get(i + 1) {
            Some(b'{') => Some(nest(i + 2, b'{', b'}')),
            Some(b'(') => Some(nest(i + 2, b'(', b')')),
            Some(b'\'') => Some(find(i + 2, b'\'')),
            _ => None,
        },
        _ => None,
    }
}

fn expand_into(raw: &[u8], out: &mut Vec<Vec<u8>>, depth: u32) -> Option<()> {
    if depth > 32 {
        return None;
    }
    let mut i = 0;
    while i < raw.len() {
        if let Some(next) = skip_quoted(raw, i) {
            i = next;
            continue;
        }
        if raw[i] == b'{' {
            // The matching `}` and the top-level commas.
            let mut k = i + 1;
            let mut level = 0u32;
            let mut commas = Vec::new();
            let mut close = None;
            while k < raw.len() {
                if let Some(next) = skip_quoted(raw, k) {
                    k = next;
                    continue;
                }
                match raw[k] {
                    b'{' => level += 1,
                    b'}' if level == 0 => {
                        close = Some(k);
                        break;
                    }
                    b'}' => level -= 1,
                    b',' if level == 0 => commas.push(k),
                    _ => {}
                }
                k += 1;
            }
            if let Some(close) = close {
                let (prefix, suffix) = (&raw[..i], &raw[close + 1..]);
                let mut alts: Vec<Vec<u8>> = Vec::new();
                if !commas.is_empty() {
                    let mut start = i + 1;
                    for &c in commas.iter().chain(std::iter::once(&close)) {
                        alts.push(raw[start..c].to_vec());
                        start = c + 1;
                    }
                } else if let Some(seq) = sequence(&raw[i + 1..close]) {
                    alts = seq?;
                }
                if !alts.is_empty() {
                    for alt in alts {
                        let mut t = Vec::with_capacity(prefix.len() + alt.len() + suffix.len());
                        t.extend_from_slice(prefix);
                        t.extend_from_slice(&alt);
                        t.extend_from_slice(suffix);
                        expand_into(&t, out, depth + 1)?;
                        if out.len() > BRACE_LIMIT {
                            return None;
                        }
                    }
                    return Some(());
                }
            }
        }
        i += 1;
    }
    out.push(raw.to_vec());
    (out.len() <= BRACE_LIMIT).then_some(())
}

/// A sequence expression `A..B[..STEP]` (integers or single letters):
/// `None` when it is not one, `Some(None)` when it is too long.
fn sequence(body: &[u8]) -> Option<Option<Vec<Vec<u8>>>> {
    let text = std::str::from_utf8(body).ok()?;
    let parts: Vec<&str> = text.split("..").collect();
    if parts.len() < 2 || parts.len() > 3 {
        return None;
    }
    let step: i64 = match parts.get(2) {
        Some(s) => s.parse::<i64>().ok()?.checked_abs()?.max(1),
        None => 1,
    };
    let (a, b, letters) = match (parts[0].parse::<i64>(), parts[1].parse::<i64>()) {
        (Ok(a), Ok(b)) => (a, b, false),
        _ => {
            let (x, y) = (parts[0].as_bytes(), parts[1].as_bytes());
            if x.len() != 1
                || y.len() != 1
                || !x[0].is_ascii_alphabetic()
                || !y[0].is_ascii_alphabetic()
            {
                return None;
            }
            (i64::from(x[0]), i64::from(y[0]), true)
        }
    };
    let count = (a - b).unsigned_abs() / step as u64 + 1;
    if count > BRACE_LIMIT as u64 {
        return Some(None);
    }
    let dir = if b >= a { step } else { -step };
    let mut v = Vec::new();
    let mut x = a;
    for _ in 0..count {
        v.push(if letters {
            vec![x as u8]
        } else {
            x.to_string().into_bytes()
        });
        x += dir;
    }
    Some(Some(v))
}

/// The words of an `env -S` string: blanks separate, `'...'` and `"..."`
/// quote, `\_` is a blank outside double quotes (a space inside), `\t`,
/// `\n`, ... are characters, `\c` ends the string, `#` at the start of a
/// word starts a comment, and `${NAME}` is an unknown value.
pub(super) fn env_split_words(s: &[u8]) -> Vec<(Vec<u8>, u16)> {
    let mut words = Vec::new();
    let mut cur: Option<(Vec<u8>, u16)> = None;
    let mut i = 0;
    let mut dq = false;
    let mut sq = false;
    while i < s.len() {
        let c = s[i];
        i += 1;
        if sq {
            match c {
                b'\'' => sq = false,
                b'\\' if matches!(s.get(i), Some(b'\\' | b'\'')) => {
                    cur.get_or_insert_with(Default::default).0.push(s[i]);
                    i += 1;
                }
                _ => cur.get_or_insert_with(Default::default).0.push(c),
            }
            continue;
        }
        match c {
            b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c' if !dq => {
                if let Some(w) = cur.take() {
                    words.push(w);
                }
            }
            b'#' if !dq && cur.is_none() => break,
            b'\'' if !dq => {
                sq = true;
                cur.get_or_insert_with(Default::default);
            }
            b'"' => {
                dq = !dq;
                cur.get_or_insert_with(Default::default);
            }
            b'$' if s.get(i) == Some(&b'{') => {
                let end = s[i..]
                    .iter()
                    .position(|&x| x == b'}')
                    .map_or(s.len(), |k| i + k + 1);
                let w = cur.get_or_insert_with(Default::default);
                w.0.push(S_ANY);
                w.1 |= DYN;
                i = end;
            }
            b'\\' => {
                let Some(&e) = s.get(i) else { break };
                i += 1;
                let ch = match e {
                    b'_' if !dq => {
                        if let Some(w) = cur.take() {
                            words.push(w);
                        }
                        continue;
                    }
                    b'_' => b' ',
                    b'c' => break,
                    b't' => b'\t',
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b'f' => 0x0c,
                    b'v' => 0x0b,
                    other => other,
                };
                cur.get_or_insert_with(Default::default).0.push(ch);
            }
            _ => cur.get_or_insert_with(Default::default).0.push(c),
        }
    }
    if let Some(w) = cur.take() {
        words.push(w);
    }
    words
}

/// A valid shell variable name.
fn is_name(b: &[u8]) -> bool {
    b.first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// The part after the last `/`.
fn basename(b: &[u8]) -> &[u8] {
    match b.iter().rposition(|&c| c == b'/') {
        Some(i) => &b[i + 1..],
        None => b,
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

/// Skips the options of a wrapper and returns the index of its command
/// word. `with_arg` lists the short options taking an argument, `long_arg`
/// the long ones (without `--`) taking the next word when written without
/// `=`. An unknown word ends the options.
fn skip_opts(words: &[W<'_>], mut i: usize, with_arg: &[u8], long_arg: &[&[u8]]) -> usize {
    while let Some(&w) = words.get(i) {
        if !w.plain() {
            return i;
        }
        let b = w.b;
        if b == b"--" {
            return i + 1;
        }
        if let Some(long) = b.strip_prefix(b"--") {
            i += if !long.contains(&b'=') && long_arg.contains(&long) {
                2
            } else {
                1
            };
            continue;
        }
        if b.len() > 1 && b[0] == b'-' {
            let mut next = 0;
            for (k, c) in b.iter().enumerate().skip(1) {
                if with_arg.contains(c) {
                    if k + 1 == b.len() {
                        next = 1;
                    }
                    break;
                }
            }
            i += 1 + next;
            continue;
        }
        return i;
    }
    i
}

/// Whether a word can be pasted into a script unquoted.
fn shell_safe(b: &[u8]) -> bool {
    !b.is_empty()
        && b.iter().all(|&c| {
            c.is_ascii_alphanumeric()
                || matches!(
                    c,
                    b'_' | b'-' | b'.' | b'/' | b'=' | b':' | b'+' | b',' | b'@' | b'%'
                )
        })
}

/// Appends `b` to a script, quoting it so that it stays one word.
fn push_quoted(text: &mut Vec<u8>, b: &[u8]) {
    if shell_safe(b) {
        text.extend_from_slice(b);
        return;
    }
    text.push(b'\'');
    for &c in b {
        if c == b'\'' {
            text.extend_from_slice(b"'\\''");
        } else {
            text.push(c);
        }
    }
    text.push(b'\'');
}

/// A command made of `fields` (each stays one word) and `rest`, source text
/// of further words.
fn command_script(fields: &[Vec<u8>], rest: &[u8]) -> Vec<u8> {
    let mut script = Vec::new();
    for f in fields {
        push_quoted(&mut script, f);
        script.push(b' ');
    }
    script.extend_from_slice(rest);
    script
}

/// Joins the words' source texts with spaces (empty when one was made up
/// by the analysis, so that the caller judges the whole input).
fn join_raw(words: &[W<'_>]) -> Vec<u8> {
    if words.iter().any(|w| w.raw.is_empty()) {
        return Vec::new();
    }
    let mut text = Vec::new();
    for (k, w) in words.iter().enumerate() {
        if k > 0 {
            text.push(b' ');
        }
        text.extend_from_slice(w.raw);
    }
    text
}

/// Joins word values with spaces (how `eval` and `watch` build a script).
fn join(words: &[W<'_>]) -> Vec<u8> {
    let mut text = Vec::with_capacity(words.iter().map(|w| w.b.len() + 1).sum());
    for (k, w) in words.iter().enumerate() {
        if k > 0 {
            text.push(b' ');
        }
        text.extend_from_slice(w.b);
    }
    text
}

/// Each word with every occurrence of `pat` (non-empty, at most 64 bytes)
/// replaced by an unknown value, or `None` when it has none.
fn substituted(words: &[W<'_>], pat: &[u8]) -> Vec<Option<Vec<u8>>> {
    words
        .iter()
        .map(|w| {
            if !w.b.windows(pat.len()).any(|x| x == pat) {
                return None;
            }
            let mut out = Vec::with_capacity(w.b.len());
            let mut k = 0;
            while k < w.b.len() {
                if w.b[k..].starts_with(pat) {
                    out.push(S_ANY);
                    k += pat.len();
                } else {
                    out.push(w.b[k]);
                    k += 1;
                }
            }
            Some(out)
        })
        .collect()
}

/// The words with the substitutions of [`substituted`] applied; a word that
/// was exactly the pattern also gets `whole_flags`.
fn with_substitutions<'a>(
    words: &[W<'a>],
    owned: &'a [Option<Vec<u8>>],
    whole_flags: u16,
) -> Vec<W<'a>> {
    words
        .iter()
        .zip(owned)
        .map(|(&w, o)| match o {
            Some(b) if b.as_slice() == ANY => W {
                b,
                f: w.f | DYN | whole_flags,
                raw: w.raw,
            },
            Some(b) => W {
                b,
                f: w.f | DYN,
                raw: w.raw,
            },
            None => w,
        })
        .collect()
}

impl Analysis for Parser<'_> {
    fn simple_command(&mut self, words: &[W<'_>]) -> R<bool> {
        self.command(words)
    }

    fn produced_scripts(&self, text: &[u8]) -> Option<Vec<Vec<u8>>> {
        self.produced(text)
    }

    fn script_from_file(&mut self, raw: &[u8]) -> R<bool> {
        self.script_file(raw)
    }
}

impl Parser<'_> {
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
                let depth = if self.in_subst > 0 {
                    u32::MAX
                } else {
                    self.depth
                };
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
            self.loose = true;
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
                    self.loose = true;
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
                            self.loose = true;
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
                        self.loose = true;
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
            self.loose = true;
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
                    self.loose = true;
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
                    self.loose = true;
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
        self.made_up += 1;
        let result = self.command(words);
        self.made_up -= 1;
        result?;
        self.depth -= 1;
        Ok(())
    }
}

/// `command [-p] [-v|-V] ...`: index of the command word, or `None` when
/// nothing is run (`-v`/`-V` only print).
fn command_opts(words: &[W<'_>], mut i: usize) -> Option<usize> {
    while let Some(&w) = words.get(i) {
        if !w.plain() {
            return Some(i);
        }
        if w.b == b"--" {
            return Some(i + 1);
        }
        if w.b.len() > 1 && w.b[0] == b'-' {
            if w.b.contains(&b'v') || w.b.contains(&b'V') {
                return None;
            }
            i += 1;
            continue;
        }
        return Some(i);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_skipped() {
        let mk = |s: &'static str| -> Vec<W<'static>> {
            s.split(' ')
                .map(|b| W {
                    b: b.as_bytes(),
                    f: 0,
                    raw: b.as_bytes(),
                })
                .collect()
        };
        let w = mk("sudo -u root -E -- herdr");
        assert_eq!(skip_opts(&w, 1, b"u", &[]), 5);
        let w = mk("sudo -Eu root herdr");
        assert_eq!(skip_opts(&w, 1, b"u", &[]), 3);
        let w = mk("sudo -uroot herdr");
        assert_eq!(skip_opts(&w, 1, b"u", &[]), 2);
        let w = mk("sudo --user root herdr");
        assert_eq!(skip_opts(&w, 1, b"u", &[b"user"]), 3);
        let w = mk("sudo --user=root herdr");
        assert_eq!(skip_opts(&w, 1, b"u", &[b"user"]), 2);
        let w = mk("command -v herdr");
        assert_eq!(command_opts(&w, 1), None);
        let w = mk("command -p herdr");
        assert_eq!(command_opts(&w, 1), Some(2));
    }
}
