//! The words of the guard, at the bottom of its layers: one word of a
//! simple command ([`W`]) with its flags and sentinel bytes, the pattern
//! match over sentinels, and the hex escapes that both the lexer and the
//! static evaluation decode. No IO; depends on nothing else in the guard.

/// Word flag: contains an expansion whose value is unknown here.
pub(super) const DYN: u16 = 1;
/// Word flag: may expand to zero or several words (unquoted expansion,
/// `"$@"`, brace expansion).
pub(super) const SPLIT: u16 = 1 << 1;
/// Word flag: contains unquoted glob characters.
pub(super) const GLOB: u16 = 1 << 2;
/// Word flag: a `NAME=value` assignment.
pub(super) const ASSIGN: u16 = 1 << 3;
/// Word flag: some part of the word was quoted or escaped.
pub(super) const QUOTED: u16 = 1 << 5;
/// Word flag: the word was an IO number (`2` in `2>&1`) and was dropped.
pub(super) const IO_NUMBER: u16 = 1 << 6;
/// Word flag: the word is a redirection target, not an argument.
pub(super) const REDIR: u16 = 1 << 7;
/// Word flag: the word is a here-string (`<<< word`).
pub(super) const HERESTR: u16 = 1 << 8;
/// Word flag: the word holds an unquoted brace expansion (`{a,b}`, `{1..3}`).
pub(super) const BRACE: u16 = 1 << 9;
/// Word flag: the word's unknown value never starts with `-` (a path that
/// `find` substitutes for `{}`).
pub(super) const NODASH: u16 = 1 << 10;

/// Sentinel byte: an expansion (any string).
pub(super) const S_ANY: u8 = 0;
/// Sentinel byte: an unquoted `*` (any string).
pub(super) const S_STAR: u8 = 1;
/// Sentinel byte: an unquoted `?` or bracket expression (one character).
pub(super) const S_ONE: u8 = 2;

/// One word of a simple command: its value (with sentinels) and flags.
#[derive(Debug, Clone, Copy)]
pub(super) struct W<'a> {
    pub(super) b: &'a [u8],
    pub(super) f: u16,
    /// The word's source text (empty for a word the analysis made up).
    pub(super) raw: &'a [u8],
}

impl W<'_> {
    /// The value is fully known (no expansion, no glob).
    pub(super) fn plain(self) -> bool {
        self.f & (DYN | SPLIT | GLOB) == 0
    }

    /// The word may expand to zero or several words.
    pub(super) fn split(self) -> bool {
        self.f & SPLIT != 0
    }

    /// The word is surely `lit`.
    pub(super) fn is(self, lit: &[u8]) -> bool {
        self.plain() && self.b == lit
    }

    /// An unquoted reserved word `lit` (a quoted `"if"` is a command name).
    pub(super) fn reserved(self, lit: &[u8]) -> bool {
        self.f & QUOTED == 0 && self.is(lit)
    }
}

fn is_wild(c: u8) -> bool {
    c == S_ANY || c == S_STAR
}

/// Whether some expansion of `pat` (sentinels: [`S_ANY`]/[`S_STAR`] any
/// string, [`S_ONE`] one byte) equals `lit`, or starts with `lit` when
/// `prefix`. Cost O(|pat| * |lit|); `lit` is always a short constant.
pub(super) fn pat_match(pat: &[u8], lit: &[u8], prefix: bool) -> bool {
    if !pat.iter().any(|&c| c <= S_ONE) {
        return if prefix {
            pat.starts_with(lit)
        } else {
            pat == lit
        };
    }
    let (mut p, mut l) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while l < lit.len() {
        match pat.get(p) {
            Some(&c) if is_wild(c) => {
                star = Some((p, l));
                p += 1;
            }
            Some(&c) if c == S_ONE || c == lit[l] => {
                p += 1;
                l += 1;
            }
            _ => match star {
                Some((sp, sl)) => {
                    p = sp + 1;
                    l = sl + 1;
                    star = Some((sp, sl + 1));
                }
                None => return false,
            },
        }
    }
    if prefix {
        return true;
    }
    pat[p..].iter().all(|&c| is_wild(c))
}

/// Decodes the digits of a `\xHH`, `\uHHHH` or `\UHHHHHHHH` escape (`e` is
/// `x`, `u` or `U`) at the start of `s` into `out` (a byte, or a character
/// in UTF-8); returns how many digits it used. With none, the escape stays
/// as written.
pub(super) fn hex_escape(e: u8, s: &[u8], out: &mut Vec<u8>) -> usize {
    let max = match e {
        b'x' => 2,
        b'u' => 4,
        _ => 8,
    };
    let mut v: u32 = 0;
    let mut n = 0;
    while let Some(d) = s.get(n).copied().and_then(hex_val).filter(|_| n < max) {
        v = v * 16 + d;
        n += 1;
    }
    if n == 0 {
        out.push(b'\\');
        out.push(e);
    } else if e == b'x' {
        out.push(v as u8);
    } else if let Some(ch) = char::from_u32(v) {
        let mut tmp = [0u8; 4];
        out.extend_from_slice(ch.encode_utf8(&mut tmp).as_bytes());
    }
    n
}

fn hex_val(c: u8) -> Option<u32> {
    (c as char).to_digit(16)
}

/// Renders a word value for tests: `$` for an expansion, `*`/`?` for globs.
#[cfg(test)]
pub(super) fn render(b: &[u8]) -> String {
    let mapped: Vec<u8> = b
        .iter()
        .map(|&c| match c {
            S_ANY => b'$',
            S_STAR => b'*',
            S_ONE => b'?',
            _ => c,
        })
        .collect();
    String::from_utf8_lossy(&mapped).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_matching() {
        assert!(pat_match(b"herdr", b"herdr", false));
        assert!(!pat_match(b"herdrx", b"herdr", false));
        assert!(pat_match(&[S_ANY], b"herdr", false));
        assert!(pat_match(&[b'h', S_ANY], b"herdr", false));
        assert!(!pat_match(&[b'x', S_ANY], b"herdr", false));
        assert!(pat_match(&[S_ANY, b'r'], b"herdr", false));
        assert!(pat_match(&[b'w', b'a', S_ONE, b't'], b"wait", false));
        assert!(!pat_match(&[b'w', S_ONE, b't'], b"wait", false));
        assert!(pat_match(&[S_STAR, b'a', S_STAR, b't'], b"wait", false));
        assert!(pat_match(b"--wait=5", b"--wait=", true));
        assert!(pat_match(&[b'-', b'-', S_ANY], b"--wait=", true));
        assert!(!pat_match(b"--waiting", b"--wait=", true));
        assert!(pat_match(&[S_ANY, S_ANY, S_ANY], b"", false));
    }
}
