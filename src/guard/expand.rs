//! Word-level expansions and rewriting the analysis needs, with no state:
//! bash's brace expansion, `env -S` splitting, wrapper options, and building
//! a script back from words (quoting each so that it stays one word). Below
//! the analysis; looks only at the words ([`super::words`]).

use super::words::{DYN, S_ANY, W};

/// A word standing for one unknown argument.
pub(super) const ANY: &[u8] = &[S_ANY];

/// Most words a brace expansion may produce before the analysis gives up
/// on it (and judges the words as unknown).
const BRACE_LIMIT: usize = 256;

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
pub(super) fn skip_quoted(raw: &[u8], i: usize) -> Option<usize> {
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

pub(super) fn expand_into(raw: &[u8], out: &mut Vec<Vec<u8>>, depth: u32) -> Option<()> {
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
pub(super) fn sequence(body: &[u8]) -> Option<Option<Vec<Vec<u8>>>> {
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
pub(super) fn is_name(b: &[u8]) -> bool {
    b.first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// The part after the last `/`.
pub(super) fn basename(b: &[u8]) -> &[u8] {
    match b.iter().rposition(|&c| c == b'/') {
        Some(i) => &b[i + 1..],
        None => b,
    }
}

/// The getopt grammar of a command's options, for [`walk_opts`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Opts {
    /// Short options taking an argument (attached, `-uroot`, or the next word).
    pub(super) with_arg: &'static [u8],
    /// Long options (without `--`) taking the next word when written without `=`.
    pub(super) long_arg: &'static [&'static [u8]],
    /// Short options whose optional argument is only ever attached (`xargs -i[R]`).
    pub(super) attached: &'static [u8],
    /// `env`'s grammar: a lone `-` is an option, `NAME=value` words are skipped.
    pub(super) env: bool,
}

impl Opts {
    /// Options that take no argument (`nohup`, `setsid`, ...).
    pub(super) const NONE: Opts = Opts::short(b"", &[]);

    /// Short options `with_arg` and long ones `long_arg` taking an argument.
    pub(super) const fn short(with_arg: &'static [u8], long_arg: &'static [&'static [u8]]) -> Opts {
        Opts {
            with_arg,
            long_arg,
            attached: b"",
            env: false,
        }
    }
}

/// One option met by [`walk_opts`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Opt<'a> {
    /// The letter of a short option (`0` for a long one).
    pub(super) short: u8,
    /// The name of a long option, without `--` and `=value` (empty for a short one).
    pub(super) long: &'a [u8],
    /// Its argument (attached, or the next word for an option that takes one).
    pub(super) arg: Option<&'a [u8]>,
    /// The index of the word after the option's word (and after its argument when that is the
    /// next word).
    pub(super) next: usize,
}

/// Walks the options of a command from `words[i]` by the grammar `opts`, handing each to
/// `seen`, which returns `true` to stop there. Returns the index of the first operand (the
/// command word of a wrapper), or `None` when `seen` stopped. A word that is not known, or
/// does not start with `-`, ends the options; `--` ends them and is skipped.
pub(super) fn walk_opts<'a>(
    words: &[W<'a>],
    mut i: usize,
    opts: &Opts,
    mut seen: impl FnMut(Opt<'a>) -> bool,
) -> Option<usize> {
    while let Some(&w) = words.get(i) {
        if !w.plain() {
            return Some(i);
        }
        let b = w.b;
        if b == b"--" {
            return Some(i + 1);
        }
        if opts.env && (b == b"-" || (b.contains(&b'=') && !b.starts_with(b"-"))) {
            i += 1;
            continue;
        }
        if let Some(long) = b.strip_prefix(b"--") {
            let (name, arg, next) = match long.iter().position(|&c| c == b'=') {
                Some(eq) => (&long[..eq], Some(&long[eq + 1..]), i + 1),
                None if opts.long_arg.contains(&long) => {
                    (long, words.get(i + 1).map(|w| w.b), i + 2)
                }
                None => (long, None, i + 1),
            };
            let opt = Opt {
                short: 0,
                long: name,
                arg,
                next,
            };
            if seen(opt) {
                return None;
            }
            i = next;
            continue;
        }
        if b.len() > 1 && b[0] == b'-' {
            let mut next = i + 1;
            for (k, &c) in b.iter().enumerate().skip(1) {
                let attached = &b[k + 1..];
                let takes = opts.with_arg.contains(&c) || opts.attached.contains(&c);
                let arg = if !takes {
                    None
                } else if attached.is_empty() && opts.with_arg.contains(&c) {
                    next = i + 2;
                    words.get(i + 1).map(|w| w.b)
                } else {
                    Some(attached)
                };
                let opt = Opt {
                    short: c,
                    long: b"",
                    arg,
                    next,
                };
                if seen(opt) {
                    return None;
                }
                if takes {
                    break;
                }
            }
            i = next;
            continue;
        }
        return Some(i);
    }
    Some(i)
}

/// Skips the options of a command by the grammar `opts`: the index of its first operand.
pub(super) fn skip_opts(words: &[W<'_>], i: usize, opts: &Opts) -> usize {
    walk_opts(words, i, opts, |_| false).unwrap_or(i)
}

/// Whether a word can be pasted into a script unquoted.
pub(super) fn shell_safe(b: &[u8]) -> bool {
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
pub(super) fn push_quoted(text: &mut Vec<u8>, b: &[u8]) {
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
pub(super) fn command_script(fields: &[Vec<u8>], rest: &[u8]) -> Vec<u8> {
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
pub(super) fn join_raw(words: &[W<'_>]) -> Vec<u8> {
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
pub(super) fn join(words: &[W<'_>]) -> Vec<u8> {
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
pub(super) fn substituted(words: &[W<'_>], pat: &[u8]) -> Vec<Option<Vec<u8>>> {
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
pub(super) fn with_substitutions<'a>(
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

/// `command [-p] [-v|-V] ...`: index of the command word, or `None` when
/// nothing is run (`-v`/`-V` only print).
pub(super) fn command_opts(words: &[W<'_>], i: usize) -> Option<usize> {
    let prints = |o: Opt<'_>| {
        matches!(o.short, b'v' | b'V') || o.long.iter().any(|c| matches!(c, b'v' | b'V'))
    };
    walk_opts(words, i, &Opts::NONE, prints).filter(|&j| j < words.len())
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
        assert_eq!(skip_opts(&w, 1, &Opts::short(b"u", &[])), 5);
        let w = mk("sudo -Eu root herdr");
        assert_eq!(skip_opts(&w, 1, &Opts::short(b"u", &[])), 3);
        let w = mk("sudo -uroot herdr");
        assert_eq!(skip_opts(&w, 1, &Opts::short(b"u", &[])), 2);
        let w = mk("sudo --user root herdr");
        assert_eq!(skip_opts(&w, 1, &Opts::short(b"u", &[b"user"])), 3);
        let w = mk("sudo --user=root herdr");
        assert_eq!(skip_opts(&w, 1, &Opts::short(b"u", &[b"user"])), 2);
        let w = mk("command -v herdr");
        assert_eq!(command_opts(&w, 1), None);
        let w = mk("command -p herdr");
        assert_eq!(command_opts(&w, 1), Some(2));
    }
}
