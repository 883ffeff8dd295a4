//! The argv rule shared by the parser front ends: the same decisions the
//! guard makes on static words (`docs/guard.md`), written once here so that
//! the two parsers are compared on their grammar, not on the rule.
//!
//! A front end turns each simple command into [`W`] words (static text, or
//! the source text of a word whose value the parser cannot know) and calls
//! [`judge_argv`] with a callback that judges a script string (`sh -c`,
//! `eval`, `trap`, a here-document fed to a shell) with the same front end.

use std::borrow::Cow;

/// One word of a simple command after quote removal.
#[derive(Debug, Clone)]
pub enum W<'a> {
    /// A word whose value is known (quotes and escapes removed).
    Lit(String),
    /// A word whose value comes from an expansion or a substitution: its
    /// source text (borrowed: no copy per nesting level), and whether it was
    /// wholly inside double quotes (one word).
    Dyn { text: Cow<'a, str>, quoted: bool },
}

impl W<'_> {
    fn lit(&self) -> Option<&str> {
        match self {
            W::Lit(s) => Some(s),
            W::Dyn { .. } => None,
        }
    }
    fn text(&self) -> &str {
        match self {
            W::Lit(s) => s,
            W::Dyn { text, .. } => text,
        }
    }
}

/// Where a command's standard input comes from, when a front end knows.
pub enum Stdin<'a> {
    /// Nothing known (a terminal, a file, /dev/null).
    None,
    /// A here-document or here-string with a known text.
    Text(&'a str),
    /// A pipe or other producer: the text that produces it (judged loosely).
    Loose(&'a str),
}

const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "yash", "posh", "rbash",
];

fn basename(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

/// Whether `text` is one expansion of `HERDR_BIN_PATH` (`$HERDR_BIN_PATH`,
/// `${HERDR_BIN_PATH}`, `"${HERDR_BIN_PATH:-herdr}"`).
pub fn is_herdr_bin_path(text: &str) -> bool {
    let t = text.trim_matches('"');
    (t == "$HERDR_BIN_PATH" || t.starts_with("${HERDR_BIN_PATH")) && t.matches('$').count() == 1
}

fn is_wait_opt(s: &str) -> bool {
    ["--wait", "--until", "--timeout"]
        .iter()
        .any(|w| s == *w || (s.starts_with(w) && s[w.len()..].starts_with('=')))
}

/// Judges the words after a Herdr command word.
fn herdr_rule(args: &[W]) -> i32 {
    let mut rest: Vec<&W> = Vec::new();
    let mut globals = true;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if globals {
            match a.lit() {
                Some("--") => globals = false,
                Some("--session" | "--remote" | "--remote-keybindings") => {
                    i += 1;
                    continue;
                }
                Some(s)
                    if s == "--handoff"
                        || s.starts_with("--session=")
                        || s.starts_with("--remote=")
                        || s.starts_with("--remote-keybindings=") =>
                {
                    continue
                }
                _ => {}
            }
        }
        rest.push(a);
    }
    match rest.first().map(|w| w.lit()) {
        None => 0,
        Some(None) => 2, // `herdr $CMD ...`: the subcommand is unknown.
        Some(Some("agent")) => match rest.get(1).map(|w| w.lit()) {
            Some(Some("wait")) => 2,
            Some(None) => 2,
            Some(Some("prompt")) => prompt_rule(&rest[2..]),
            _ => 0,
        },
        Some(Some(_)) => 0,
    }
}

/// `agent prompt TARGET TEXT [options]`: a waiting option anywhere but at
/// TEXT gives 1; so does a word that may expand to one (an unknown word
/// after TEXT, an unquoted unknown TEXT that may split).
fn prompt_rule(opts: &[&W]) -> i32 {
    for (j, o) in opts.iter().enumerate() {
        match o {
            W::Lit(s) if j != 1 && is_wait_opt(s) => return 1,
            W::Lit(_) => {}
            W::Dyn { quoted, .. } => {
                if j > 1 || !quoted {
                    return 1;
                }
            }
        }
    }
    0
}

fn takes_value(opt: &str, with_value: &[&str]) -> bool {
    with_value.contains(&opt)
}

/// Skips a wrapper's options: returns the index of its first operand.
fn skip_opts(words: &[W], mut i: usize, with_value: &[&str]) -> usize {
    while let Some(w) = words.get(i) {
        let Some(s) = w.lit() else { break };
        if s == "--" {
            return i + 1;
        }
        if !s.starts_with('-') || s == "-" {
            break;
        }
        i += if takes_value(s, with_value) { 2 } else { 1 };
    }
    i
}

/// Judges one simple command (assignments already removed). `sub` judges a
/// script string with the calling front end.
pub fn judge_argv(words: &[W], stdin: &Stdin, sub: &mut dyn FnMut(&str) -> i32) -> i32 {
    let mut i = 0;
    loop {
        let Some(w) = words.get(i) else { return 0 };
        let s = match w {
            W::Dyn { text, .. } => {
                if is_herdr_bin_path(text) {
                    return herdr_rule(&words[i + 1..]);
                }
                return unknown_command(&words[i..], stdin, sub);
            }
            W::Lit(s) => s.as_str(),
        };
        match basename(s) {
            "herdr" => return herdr_rule(&words[i + 1..]),
            "env" => {
                i += 1;
                while let Some(w) = words.get(i) {
                    let Some(a) = w.lit() else { break };
                    if a == "-S" || a == "--split-string" {
                        let script = join(&words[i + 1..]);
                        return sub(&env_split(&script));
                    }
                    if let Some(rest) = a.strip_prefix("-S").or(a.strip_prefix("--split-string=")) {
                        let mut script = rest.to_string();
                        script.push(' ');
                        script.push_str(&join(&words[i + 1..]));
                        return sub(&env_split(&script));
                    }
                    if matches!(a, "-u" | "-C" | "-P" | "--unset" | "--chdir") {
                        i += 2;
                    } else if a == "--" {
                        i += 1;
                        break;
                    } else if a.starts_with('-') || a.contains('=') {
                        i += 1;
                    } else {
                        break;
                    }
                }
            }
            "command" => {
                i += 1;
                while let Some(a) = words.get(i).and_then(W::lit) {
                    match a {
                        "-v" | "-V" => return 0,
                        "-p" => i += 1,
                        "--" => {
                            i += 1;
                            break;
                        }
                        _ => break,
                    }
                }
            }
            "builtin" | "nohup" | "setsid" => i = skip_opts(words, i + 1, &[]),
            "exec" => i = skip_opts(words, i + 1, &["-a"]),
            // bash's `time` keyword takes only `-p` (`time -f` runs `-f`).
            "time" => {
                i += 1;
                while matches!(words.get(i).and_then(W::lit), Some("-p" | "--")) {
                    i += 1;
                }
            }
            "busybox" => i += 1,
            "su" | "runuser" => {
                // `su [-] [USER] -c SCRIPT`, `--command[=]SCRIPT`; `runuser -u USER -- CMD`.
                let mut k = i + 1;
                while k < words.len() {
                    match words[k].lit() {
                        Some("-c" | "--command" | "--session-command") => {
                            return match words.get(k + 1) {
                                Some(W::Lit(s)) => sub(s),
                                Some(W::Dyn { text, .. }) => loose(text),
                                None => 0,
                            }
                        }
                        Some(a) if a.starts_with("--command=") => return sub(&a[10..]),
                        Some("-u" | "-g" | "-G") => k += 2,
                        Some("--") => {
                            return judge_argv(&words[k + 1..], stdin, sub);
                        }
                        _ => k += 1,
                    }
                }
                return 0;
            }
            "nice" => i = skip_opts(words, i + 1, &["-n"]),
            "stdbuf" => i = skip_opts(words, i + 1, &["-i", "-o", "-e"]),
            "timeout" => i = skip_opts(words, i + 1, &["-s", "-k"]) + 1,
            "sudo" => {
                i += 1;
                // Flags; a cluster ending in a letter that takes a value (`-iu root`).
                while let Some(a) = words.get(i).and_then(W::lit) {
                    if a == "--" {
                        i += 1;
                        break;
                    }
                    if !a.starts_with('-') {
                        break;
                    }
                    let takes = !a.starts_with("--")
                        && a.ends_with(['u', 'g', 'C', 'D', 'p', 'r', 't', 'T', 'U', 'R']);
                    i += if takes { 2 } else { 1 };
                }
                while words
                    .get(i)
                    .and_then(W::lit)
                    .is_some_and(|a| a.contains('='))
                {
                    i += 1;
                }
            }
            "doas" => i = skip_opts(words, i + 1, &["-u", "-C"]),
            "xargs" => {
                let replace = words[i + 1..]
                    .iter()
                    .filter_map(W::lit)
                    .take_while(|a| a.starts_with('-'))
                    .any(|a| a == "-I" || a.starts_with("-i") || a.starts_with("--replace"));
                i = skip_opts(
                    words,
                    i + 1,
                    &["-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s"],
                );
                // The command gets more arguments from standard input
                // (`-I R`: in place of R, which is then an unknown word).
                let mut rest = words[i..].to_vec();
                if rest.is_empty() {
                    return 0;
                }
                if !replace {
                    rest.push(W::Dyn {
                        text: "<stdin>".into(),
                        quoted: false,
                    });
                }
                let inner = match stdin {
                    Stdin::Loose(t) => loose(t),
                    _ => 0,
                };
                return inner.max(judge_argv(&rest, &Stdin::None, sub));
            }
            "eval" => {
                let args = &words[i + 1..];
                if args.iter().all(|w| w.lit().is_some()) {
                    return sub(&join(args));
                }
                return loose(&join(args));
            }
            "trap" => {
                let args = &words[i + 1..];
                let k = usize::from(args.first().and_then(W::lit) == Some("--"));
                return match args.get(k) {
                    Some(W::Lit(h)) if args.len() > k + 1 => sub(h),
                    Some(W::Dyn { text, .. }) => loose(text),
                    _ => 0,
                };
            }
            "source" | "." => {
                return match words.get(i + 1) {
                    Some(W::Lit(f)) if is_stdin_path(f) => stdin_script(stdin, sub),
                    Some(W::Dyn { text, .. }) => loose(text),
                    _ => 0,
                };
            }
            "find" => {
                let mut v = 0;
                let mut k = i + 1;
                while k < words.len() {
                    if matches!(
                        words[k].lit(),
                        Some("-exec" | "-execdir" | "-ok" | "-okdir")
                    ) {
                        let start = k + 1;
                        let mut end = start;
                        while end < words.len() && !matches!(words[end].lit(), Some(";" | "+")) {
                            end += 1;
                        }
                        v = v.max(judge_argv(&words[start..end], &Stdin::None, sub));
                        k = end;
                    }
                    k += 1;
                }
                return v;
            }
            "watch" => {
                let mut k = i + 1;
                let mut exec = false;
                while let Some(a) = words.get(k).and_then(W::lit) {
                    match a {
                        "-x" | "--exec" => {
                            exec = true;
                            k += 1
                        }
                        "-n" | "--interval" => k += 2,
                        "--" => {
                            k += 1;
                            break;
                        }
                        _ if a.starts_with('-') => k += 1,
                        _ => break,
                    }
                }
                return if exec {
                    judge_argv(&words[k..], &Stdin::None, sub)
                } else {
                    sub(&join(&words[k..]))
                };
            }
            b if SHELLS.contains(&b) => return shell(&words[i + 1..], stdin, sub),
            _ => return 0,
        }
        if i >= words.len() {
            return 0;
        }
    }
}

fn is_stdin_path(f: &str) -> bool {
    matches!(f, "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0")
}

fn stdin_script(stdin: &Stdin, sub: &mut dyn FnMut(&str) -> i32) -> i32 {
    match stdin {
        Stdin::None => 0,
        Stdin::Text(t) => sub(t),
        Stdin::Loose(t) => loose(t),
    }
}

/// `bash [opts] [-c SCRIPT | FILE | (stdin)]`.
fn shell(args: &[W], stdin: &Stdin, sub: &mut dyn FnMut(&str) -> i32) -> i32 {
    let mut k = 0;
    let mut c = false;
    while let Some(a) = args.get(k).and_then(W::lit) {
        if a == "--" {
            k += 1;
            break;
        }
        if a.starts_with("--") {
            k += 1;
            continue;
        }
        if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 {
            if a[1..].contains('c') {
                c = true;
            }
            // `-o OPTION` takes a value.
            k += if a[1..].contains('o') { 2 } else { 1 };
            continue;
        }
        break;
    }
    match args.get(k) {
        Some(W::Lit(s)) if c => sub(s),
        Some(W::Dyn { text, .. }) => loose(text),
        Some(W::Lit(f)) if is_stdin_path(f) => stdin_script(stdin, sub),
        Some(W::Lit(_)) => 0,
        None => stdin_script(stdin, sub),
    }
}

/// A command word whose value is not known: the producing text is judged
/// loosely; it may be Herdr (then literal `agent wait|prompt` must follow),
/// a wrapper (the words after it are a command) or a shell.
fn unknown_command(words: &[W], stdin: &Stdin, sub: &mut dyn FnMut(&str) -> i32) -> i32 {
    let first = words[0].text();
    let mut v = if first.contains("$(") || first.contains('`') || first.contains("<(") {
        loose(&join(words))
    } else {
        0
    };
    if words.get(1).and_then(W::lit) == Some("agent") {
        match words.get(2).and_then(W::lit) {
            Some("wait") => return 2,
            Some("prompt") => {
                let rest: Vec<&W> = words[3..].iter().collect();
                v = v.max(prompt_rule(&rest));
            }
            _ => {}
        }
    }
    if words.len() > 1 {
        v = v.max(judge_argv(&words[1..], stdin, sub));
    }
    // It may be a shell reading a -c script.
    if let Some(k) = words.iter().position(|w| w.lit() == Some("-c")) {
        if let Some(W::Lit(s)) = words.get(k + 1) {
            v = v.max(sub(s));
        }
    }
    v
}

fn join(words: &[W]) -> String {
    let mut out = String::new();
    for w in words {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w.text());
    }
    out
}

/// The guard's own contiguous rule for text that does not parse.
pub fn word_sequence(text: &str) -> i32 {
    herdr_link::guard::rules::word_sequence(text)
}

/// The guard's own loose rule for text that produces a command.
pub fn loose(text: &str) -> i32 {
    herdr_link::guard::rules::loose_sequence(text)
}

/// `env -S STRING` by env's own rules, roughly: `\_` separates words, `\t`
/// is a character (not a separator), `\c` ends the string.
fn env_split(s: &str) -> String {
    let s = s.split("\\c").next().unwrap_or(s);
    s.replace("\\_", " ").replace("\\t", "'\t'")
}

/// Decodes the body of `$'...'` (without the `$'` and `'`).
pub fn ansi_c(body: &str) -> String {
    let b: Vec<char> = body.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        i += 1;
        if c != '\\' || i >= b.len() {
            out.push(c);
            continue;
        }
        let e = b[i];
        i += 1;
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'v' => out.push('\x0b'),
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut n = 0u32;
                let mut k = 0;
                while k < max && i < b.len() && b[i].is_ascii_hexdigit() {
                    n = n * 16 + b[i].to_digit(16).unwrap_or(0);
                    i += 1;
                    k += 1;
                }
                if k == 0 {
                    out.push('\\');
                    out.push(e);
                } else if let Some(ch) = char::from_u32(n) {
                    out.push(ch);
                }
            }
            '0'..='7' => {
                let mut n = e.to_digit(8).unwrap_or(0);
                let mut k = 1;
                while k < 3 && i < b.len() && ('0'..='7').contains(&b[i]) {
                    n = n * 8 + b[i].to_digit(8).unwrap_or(0);
                    i += 1;
                    k += 1;
                }
                if let Some(ch) = char::from_u32(n & 0xff) {
                    out.push(ch);
                }
            }
            'c' if i < b.len() => {
                let ch = b[i];
                i += 1;
                out.push(char::from_u32((ch as u32) & 0x1f).unwrap_or(ch));
            }
            '\\' | '\'' | '"' | '?' => out.push(e),
            _ => {
                out.push('\\');
                out.push(e);
            }
        }
    }
    out
}

/// A word being built from pieces: each character with whether it was
/// quoted (quoted `{`, `,`, `}` and glob characters are literal).
#[derive(Default)]
pub struct WordBuf {
    chars: Vec<(char, bool)>,
    /// The source text of an unknown piece, when there was one.
    pub dynamic: bool,
    /// Whether every unknown piece was inside double quotes.
    pub all_quoted: bool,
    /// Whether any piece was quoted (`""` is a word, an empty expansion not).
    quoted_any: bool,
}

impl WordBuf {
    /// A new, empty word.
    pub fn new() -> WordBuf {
        WordBuf {
            chars: Vec::new(),
            dynamic: false,
            all_quoted: true,
            quoted_any: false,
        }
    }
    /// Appends text, quoted or not.
    pub fn push(&mut self, s: &str, quoted: bool) {
        self.quoted_any |= quoted;
        self.chars.extend(s.chars().map(|c| (c, quoted)));
    }
    /// Marks an unknown piece.
    pub fn unknown(&mut self, quoted: bool) {
        self.dynamic = true;
        self.all_quoted &= quoted;
    }
    /// The finished words: brace expansion of the unquoted braces (at most
    /// 256 words), an unquoted glob character makes the word unknown.
    pub fn finish<'a>(self, source: &'a str, out: &mut Vec<W<'a>>) {
        if self.dynamic {
            out.push(W::Dyn {
                text: Cow::Borrowed(source),
                quoted: self.all_quoted,
            });
            return;
        }
        let mut words = vec![Vec::new()];
        brace_expand(&self.chars, &mut words);
        if words.len() > 256 {
            out.push(W::Dyn {
                text: Cow::Borrowed(source),
                quoted: false,
            });
            return;
        }
        for w in words {
            if w.iter().any(|&(c, q)| !q && matches!(c, '*' | '?' | '[')) {
                out.push(W::Dyn {
                    text: Cow::Borrowed(source),
                    quoted: false,
                });
            } else if !w.is_empty() || self.quoted_any {
                out.push(W::Lit(w.iter().map(|&(c, _)| c).collect()));
            }
        }
    }
}

/// A character and whether it was quoted.
type Marked = (char, bool);

/// Bash brace expansion over unquoted `{a,b}` and `{x..y}`: every prefix in
/// `acc` is extended by each alternative (cartesian product).
fn brace_expand(s: &[(char, bool)], acc: &mut Vec<Vec<(char, bool)>>) {
    let mut i = 0;
    while i < s.len() {
        if acc.len() > 256 {
            return;
        }
        if s[i] == ('{', false) {
            if let Some((end, alts)) = brace_at(s, i) {
                let mut next = Vec::new();
                for prefix in acc.iter() {
                    for alt in &alts {
                        let mut sub = vec![prefix.clone()];
                        brace_expand(alt, &mut sub);
                        next.extend(sub);
                    }
                }
                *acc = next;
                i = end + 1;
                continue;
            }
        }
        for w in acc.iter_mut() {
            w.push(s[i]);
        }
        i += 1;
    }
}

/// The alternatives of the brace expression opening at `open`, and the
/// index of its closing brace.
fn brace_at(s: &[Marked], open: usize) -> Option<(usize, Vec<Vec<Marked>>)> {
    let mut depth = 0;
    let mut parts = Vec::new();
    let mut start = open + 1;
    for k in open..s.len() {
        match s[k] {
            ('{', false) => depth += 1,
            ('}', false) => {
                depth -= 1;
                if depth == 0 {
                    parts.push(s[start..k].to_vec());
                    if parts.len() > 1 {
                        return Some((k, parts));
                    }
                    return sequence(&s[open + 1..k]).map(|alts| (k, alts));
                }
            }
            (',', false) if depth == 1 => {
                parts.push(s[start..k].to_vec());
                start = k + 1;
            }
            _ => {}
        }
    }
    None
}

/// `{1..3}`, `{a..e..2}`.
fn sequence(body: &[(char, bool)]) -> Option<Vec<Vec<(char, bool)>>> {
    let text: String = body.iter().map(|&(c, _)| c).collect();
    let parts: Vec<&str> = text.split("..").collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let step: i64 = match parts.get(2) {
        Some(s) => s.parse().ok()?,
        None => 1,
    };
    let step = step.unsigned_abs().max(1) as usize;
    let items: Vec<String> =
        if let (Ok(a), Ok(b)) = (parts[0].parse::<i64>(), parts[1].parse::<i64>()) {
            if a.abs_diff(b) > 256 {
                return None;
            }
            let v: Vec<i64> = if a <= b {
                (a..=b).collect()
            } else {
                (b..=a).rev().collect()
            };
            v.into_iter().step_by(step).map(|n| n.to_string()).collect()
        } else {
            let (a, b) = (parts[0], parts[1]);
            let (Some(a), Some(b)) = (single(a), single(b)) else {
                return None;
            };
            let v: Vec<char> = if a <= b {
                (a..=b).collect()
            } else {
                (b..=a).rev().collect()
            };
            v.into_iter().step_by(step).map(String::from).collect()
        };
    Some(
        items
            .into_iter()
            .map(|s| s.chars().map(|c| (c, false)).collect())
            .collect(),
    )
}

fn single(s: &str) -> Option<char> {
    let mut it = s.chars();
    let c = it.next()?;
    (it.next().is_none() && c.is_ascii_alphabetic()).then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lits(ws: &[&str]) -> Vec<W<'static>> {
        ws.iter().map(|s| W::Lit(s.to_string())).collect()
    }

    fn j(ws: &[&str]) -> i32 {
        judge_argv(&lits(ws), &Stdin::None, &mut |_| 9)
    }

    #[test]
    fn argv_rule() {
        assert_eq!(j(&["herdr", "agent", "wait", "x"]), 2);
        assert_eq!(j(&["/usr/bin/herdr", "--session", "s", "agent", "wait"]), 2);
        assert_eq!(j(&["herdr", "agent", "prompt", "p", "hi", "--wait"]), 1);
        assert_eq!(j(&["herdr", "agent", "prompt", "p", "--wait"]), 0);
        assert_eq!(
            j(&["herdr", "agent", "prompt", "p", "hi", "--timeout=5"]),
            1
        );
        assert_eq!(
            j(&["env", "A=1", "nice", "-n", "5", "herdr", "agent", "wait"]),
            2
        );
        assert_eq!(
            j(&["timeout", "-s", "KILL", "30", "herdr", "agent", "wait"]),
            2
        );
        assert_eq!(j(&["command", "-v", "herdr", "agent", "wait"]), 0);
        assert_eq!(j(&["echo", "herdr", "agent", "wait"]), 0);
        assert_eq!(j(&["bash", "-c", "whatever"]), 9);
        assert_eq!(j(&["herdr", "agent", "get", "x"]), 0);
    }

    #[test]
    fn loose_rule() {
        assert_eq!(loose("$(echo herdr agent wait x)"), 2);
        assert_eq!(loose("echo 'herdr agent prompt p hi --wait'"), 1);
        assert_eq!(loose("echo herdr agent list; echo ok"), 0);
        assert_eq!(word_sequence("echo herdr agent list; wait x"), 0);
        assert_eq!(word_sequence("herdr agent wait x ("), 2);
    }

    #[test]
    fn braces_and_ansi_c() {
        let mut b = WordBuf::new();
        b.push("{herdr,}", false);
        let mut out = Vec::new();
        b.finish("{herdr,}", &mut out);
        let v: Vec<&str> = out.iter().map(|w| w.text()).collect();
        assert_eq!(v, ["herdr"]);
        assert_eq!(ansi_c(r"\x68erdr"), "herdr");
        assert_eq!(ansi_c(r"\150erdr"), "herdr");
    }
}
