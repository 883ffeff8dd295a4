//! Analysis of one simple command: skips assignments, reserved words and
//! wrappers, recognises Herdr and judges its argv, and re-parses the scripts
//! handed to shells, `eval`, `env -S`, `watch`, `find -exec` and `xargs`.

use super::lexer::{Parser, Stop, ASSIGN, DYN, GLOB, HVAR, R, SPLIT, S_ANY, S_ONE, S_STAR};
use super::Verdict;

/// One word of a simple command: its value (with sentinels) and flags.
#[derive(Debug, Clone, Copy)]
pub(super) struct W<'a> {
    pub(super) b: &'a [u8],
    pub(super) f: u16,
}

/// A word standing for one unknown argument.
const ANY: &[u8] = &[S_ANY];

/// Shells whose `-c` script is analysed.
const SHELLS: &[&[u8]] = &[
    b"sh", b"bash", b"zsh", b"dash", b"ksh", b"ash", b"mksh", b"yash", b"posh", b"fish",
];

/// Options of `herdr agent prompt` that make it wait (also as `--opt=value`).
const WAIT_OPTS: &[(&[u8], &[u8])] = &[
    (b"--wait", b"--wait="),
    (b"--until", b"--until="),
    (b"--timeout", b"--timeout="),
];

impl W<'_> {
    /// The value is fully known (no expansion, no glob).
    fn plain(self) -> bool {
        self.f & (DYN | SPLIT | GLOB) == 0
    }

    /// The word may expand to zero or several words.
    fn split(self) -> bool {
        self.f & SPLIT != 0
    }

    /// The word is surely `lit`.
    fn is(self, lit: &[u8]) -> bool {
        self.plain() && self.b == lit
    }

    /// The word may be `lit` once expanded.
    fn may(self, lit: &[u8]) -> bool {
        self.split() || pat_match(self.b, lit, false)
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

/// The part after the last `/`.
fn basename(b: &[u8]) -> &[u8] {
    match b.iter().rposition(|&c| c == b'/') {
        Some(i) => &b[i + 1..],
        None => b,
    }
}

/// A literal wait option (`--wait`, `--until=idle`, ...).
fn is_wait_opt(b: &[u8]) -> bool {
    WAIT_OPTS
        .iter()
        .any(|&(opt, eq)| b == opt || b.starts_with(eq))
}

/// A word that may be a wait option once expanded.
fn may_be_wait_opt(w: W<'_>) -> bool {
    WAIT_OPTS
        .iter()
        .any(|&(opt, eq)| pat_match(w.b, opt, false) || pat_match(w.b, eq, true))
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

/// Appends `w` to a script, quoting it so that it stays one word.
fn push_quoted(text: &mut Vec<u8>, w: W<'_>) {
    if shell_safe(w.b) {
        text.extend_from_slice(w.b);
        return;
    }
    text.push(b'\'');
    for &c in w.b {
        if c == b'\'' {
            text.extend_from_slice(b"'\\''");
        } else {
            text.push(c);
        }
    }
    text.push(b'\'');
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
            },
            Some(b) => W { b, f: w.f | DYN },
            None => w,
        })
        .collect()
}

impl Parser<'_> {
    /// Analyses one simple command. Returns whether it is a shell that reads
    /// its script from standard input.
    pub(super) fn command(&mut self, words: &[W<'_>]) -> R<bool> {
        let mut bare = false;
        let mut i = 0;
        while let Some(&w) = words.get(i) {
            if w.f & ASSIGN != 0 {
                i += 1;
                continue;
            }
            if w.plain() {
                match w.b {
                    b"!" | b"{" | b"}" | b"if" | b"then" | b"elif" | b"else" | b"fi" | b"do"
                    | b"done" | b"while" | b"until" | b"esac" | b"noglob" | b"nocorrect" => {
                        i += 1;
                        continue;
                    }
                    b"for" | b"select" | b"case" | b"[[" => return Ok(bare),
                    b"function" => {
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
                let rest = i + 1;
                i = match basename(w.b) {
                    b"herdr" => {
                        self.herdr(&words[rest..], false)?;
                        return Ok(bare);
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
                        if !args.is_empty() {
                            self.sub_parse(&join(args), true)?;
                        }
                        return Ok(bare);
                    }
                    b if SHELLS.contains(&b) => {
                        let stdin = self.shell(&words[rest..])?;
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
            let base = basename(w.b);
            if pat_match(base, b"herdr", false) {
                self.herdr(rest, true)?;
            }
            if SHELLS.iter().any(|s| pat_match(base, s, false)) {
                bare |= self.shell(rest)?;
            }
            // It may also be a wrapper: judge the rest as a command too.
            i += 1;
        }
        Ok(bare)
    }

    /// Judges the arguments of Herdr. `strict`: the command word is only
    /// possibly Herdr, so `agent` and the verb must be literal.
    fn herdr(&mut self, args: &[W<'_>], strict: bool) -> R {
        let mut v = Stripped {
            args,
            i: 0,
            globals: true,
        };
        let matches = |w: W<'_>, lit: &[u8]| if strict { w.is(lit) } else { w.may(lit) };
        let Some(a0) = v.next() else {
            return Ok(());
        };
        if !strict && a0.split() {
            return self.bump(Verdict::BlockEndTurn);
        }
        if !matches(a0, b"agent") {
            return Ok(());
        }
        let Some(a1) = v.next() else {
            return Ok(());
        };
        if !strict && a1.split() {
            return self.bump(Verdict::BlockEndTurn);
        }
        if matches(a1, b"wait") {
            return self.bump(Verdict::BlockEndTurn);
        }
        if !matches(a1, b"prompt") {
            return Ok(());
        }
        // `agent prompt <target> <text> [--wait] [--until S]... [--timeout MS]`:
        // the text (index 1) is taken literally, whatever it looks like.
        for (j, w) in v.enumerate() {
            let waits = if w.split() {
                true
            } else if j == 1 {
                false
            } else if j == 0 {
                w.plain() && is_wait_opt(w.b)
            } else {
                may_be_wait_opt(w)
            };
            if waits {
                return self.bump(Verdict::Block);
            }
        }
        Ok(())
    }

    /// Options of a shell. Analyses the `-c` script; returns whether the
    /// shell reads its script from standard input.
    fn shell(&mut self, args: &[W<'_>]) -> R<bool> {
        let mut i = 0;
        let mut c = false;
        let mut s = false;
        while let Some(&w) = args.get(i) {
            if !w.plain() {
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
                let mut extra = 0;
                for &ch in &b[1..] {
                    match ch {
                        b'c' if b[0] == b'-' => c = true,
                        b's' if b[0] == b'-' => s = true,
                        b'o' | b'O' => extra += 1,
                        _ => {}
                    }
                }
                i += 1 + extra;
                continue;
            }
            break;
        }
        let operands = args.get(i..).unwrap_or(&[]);
        if c {
            if let Some(script) = operands.first() {
                self.sub_parse(script.b, true)?;
            }
            return Ok(false);
        }
        Ok(s || operands.is_empty())
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

    /// `env -S STRING args...`: STRING is split into words before `args`.
    fn env_split(&mut self, s: &[u8], rest: &[W<'_>]) -> R {
        let mut text = s.to_vec();
        for &w in rest {
            text.push(b' ');
            push_quoted(&mut text, w);
        }
        self.sub_parse(&text, true)
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
            self.nested(&with_substitutions(cmd, &owned, SPLIT))?;
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
        if self.depth > super::lexer::MAX_DEPTH {
            return Err(Stop::TooDeep);
        }
        self.command(words)?;
        self.depth -= 1;
        Ok(())
    }
}

/// The arguments of Herdr without its global flags, which the CLI removes
/// anywhere before a literal `--`.
struct Stripped<'w, 'a> {
    args: &'w [W<'a>],
    i: usize,
    globals: bool,
}

impl<'a> Iterator for Stripped<'_, 'a> {
    type Item = W<'a>;

    fn next(&mut self) -> Option<W<'a>> {
        loop {
            let w = *self.args.get(self.i)?;
            self.i += 1;
            if self.globals && w.plain() {
                let b = w.b;
                if b == b"--" {
                    self.globals = false;
                } else if b == b"--session" || b == b"--remote" || b == b"--remote-keybindings" {
                    self.i += 1;
                    continue;
                } else if b == b"--handoff"
                    || b.starts_with(b"--session=")
                    || b.starts_with(b"--remote=")
                    || b.starts_with(b"--remote-keybindings=")
                {
                    continue;
                }
            }
            return Some(w);
        }
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

    #[test]
    fn options_are_skipped() {
        let mk = |s: &'static str| -> Vec<W<'static>> {
            s.split(' ')
                .map(|b| W {
                    b: b.as_bytes(),
                    f: 0,
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
