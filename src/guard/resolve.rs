//! Static evaluation of text whose output the text itself fixes: a
//! command substitution, process substitution or pipe whose producer is a
//! list of `echo`, `printf`, `:` and `true` commands with literal words.
//!
//! `$(echo herdr agent list)`, `source <(echo 'ls')` and
//! `echo 'herdr agent get p' | bash` produce a command or a script that is
//! fully known, so the analysis judges that exactly instead of applying the
//! loose rule to the producing text. Anything outside the small grammar
//! below (an expansion, a glob, a backslash in an echoed word, another
//! command, a redirection) is not evaluated, and the caller falls back to
//! the loose rule as before.

use super::words::hex_escape;

/// Which evaluations the whole input allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Allowed {
    /// `echo`, `printf`, `:` and `true` are the builtins: the input defines
    /// no alias or function (and disables no builtin) that could replace
    /// them.
    pub(super) producers: bool,
    /// Word splitting uses the default `IFS` (the input never mentions
    /// `IFS`).
    pub(super) split: bool,
    /// The input uses the positional parameters (`$@`, `$*`, `$1`...):
    /// only then are commands' arguments recorded, for the functions whose
    /// `"$@"` they become. Inherited by re-parsed scripts as it is.
    pub(super) positional: bool,
    /// `builtin` is bash's builtin: the input cannot define a function or
    /// alias of that name, disable it, or run text it builds (no `(`,
    /// backquote, backslash, `alias`, `function`, `enable`, `eval`,
    /// `source`, `.` command, `BASH_` variable).
    pub(super) builtin: bool,
    /// The input never names `PATH` (but as part of `HERDR_BIN_PATH`) nor
    /// runs `hash`: a `herdr` found through `PATH` is the one the host put
    /// first there.
    pub(super) path: bool,
}

impl Allowed {
    /// No static evaluation at all.
    pub(super) const NONE: Allowed = Allowed {
        producers: false,
        split: false,
        positional: false,
        builtin: false,
        path: false,
    };
    /// What both allow.
    pub(super) fn and(self, other: Allowed) -> Allowed {
        Allowed {
            producers: self.producers && other.producers,
            split: self.split && other.split,
            positional: self.positional,
            builtin: self.builtin && other.builtin,
            path: self.path && other.path,
        }
    }

    /// What `input` (the whole command) allows. One pass over the bytes.
    pub(super) fn for_input(input: &[u8]) -> Allowed {
        let mut allowed = Allowed {
            producers: true,
            split: true,
            positional: false,
            builtin: true,
            path: true,
        };
        for (i, &c) in input.iter().enumerate() {
            let rest = &input[i..];
            let redefinable = match c {
                b'(' | b'`' | b'\\' => true,
                b'.' => !rest.get(1).is_some_and(|n| !n.is_ascii_whitespace()),
                b'a' => rest.starts_with(b"alias"),
                b'f' => rest.starts_with(b"function"),
                b'e' => rest.starts_with(b"enable") || rest.starts_with(b"eval"),
                b's' => rest.starts_with(b"source"),
                b'B' => rest.starts_with(b"BASH_"),
                _ => false,
            };
            if redefinable {
                allowed.builtin = false;
            }
            match c {
                b'a' if rest.starts_with(b"alias") => allowed.producers = false,
                b'f' if rest.starts_with(b"function") => allowed.producers = false,
                b'e' if rest.starts_with(b"enable") => allowed.producers = false,
                b'e' | b'p' | b't' | b':' => {
                    let name: &[u8] = match c {
                        b'e' => b"echo",
                        b'p' => b"printf",
                        b't' => b"true",
                        _ => b":",
                    };
                    if rest.starts_with(name)
                        && rest[name.len()..]
                            .iter()
                            .find(|c| !matches!(c, b' ' | b'\t'))
                            == Some(&b'(')
                    {
                        // `echo () ...`: a function that replaces a producer.
                        allowed.producers = false;
                    }
                }
                b'I' if rest.starts_with(b"IFS") => allowed.split = false,
                b'P' if rest.starts_with(b"PATH") && !input[..i].ends_with(b"HERDR_BIN_") => {
                    allowed.path = false;
                }
                b'h' if rest.starts_with(b"hash") => allowed.path = false,
                b'$' if matches!(rest.get(1), Some(b'@' | b'*' | b'1'..=b'9'))
                    || rest.starts_with(b"${@")
                    || rest.starts_with(b"${*")
                    || (rest.starts_with(b"${") && rest.get(2).is_some_and(u8::is_ascii_digit)) =>
                {
                    allowed.positional = true;
                }
                _ => {}
            }
        }
        allowed
    }
}

/// Bytes that stand for themselves outside quotes.
fn is_plain(c: u8) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            b'_' | b'-' | b'.' | b'/' | b':' | b',' | b'=' | b'+' | b'@' | b'%' | b'^'
        )
}

/// Glob characters: an unquoted expansion holding one is not evaluated.
fn is_glob(c: u8) -> bool {
    matches!(c, b'*' | b'?' | b'[')
}

/// Reads one literal word at `s[*i..]`: plain bytes, `'...'`, `"..."`
/// without `$`, backquote or backslash, and `\X` outside quotes. Stops
/// before a blank, `;`, `&`, a newline, `)` or the end; `None` for anything
/// else.
fn literal_word(s: &[u8], i: &mut usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let start = *i;
    while let Some(&c) = s.get(*i) {
        match c {
            b' ' | b'\t' | b'\n' | b';' | b'&' | b')' => break,
            b'\'' => {
                let end = s[*i + 1..].iter().position(|&c| c == b'\'')? + *i + 1;
                out.extend_from_slice(&s[*i + 1..end]);
                *i = end + 1;
            }
            b'"' => {
                let end = s[*i + 1..].iter().position(|&c| c == b'"')? + *i + 1;
                let body = &s[*i + 1..end];
                if body.iter().any(|&c| matches!(c, b'$' | b'`' | b'\\')) {
                    return None;
                }
                out.extend_from_slice(body);
                *i = end + 1;
            }
            b'\\' => {
                let next = *s.get(*i + 1)?;
                if next == b'\n' {
                    return None;
                }
                out.push(next);
                *i += 2;
            }
            c if is_plain(c) => {
                out.push(c);
                *i += 1;
            }
            _ => return None,
        }
    }
    (*i > start).then_some(out)
}

/// The simple commands of `text` (`;`, newlines and `&&` between them), as
/// literal words; `None` when `text` is anything more.
fn commands(text: &[u8]) -> Option<Vec<Vec<Vec<u8>>>> {
    let mut cmds = Vec::new();
    let mut words: Vec<Vec<u8>> = Vec::new();
    let mut i = 0;
    loop {
        match text.get(i) {
            Some(b' ' | b'\t') => i += 1,
            None | Some(b';' | b'\n') => {
                if !words.is_empty() {
                    cmds.push(std::mem::take(&mut words));
                }
                if i >= text.len() {
                    return Some(cmds);
                }
                i += 1;
            }
            Some(b'&') if text.get(i + 1) == Some(&b'&') && !words.is_empty() => {
                cmds.push(std::mem::take(&mut words));
                i += 2;
            }
            Some(_) => words.push(literal_word(text, &mut i)?),
        }
    }
}

/// Whose `echo` runs: bash (escapes only with `-e`), bash with `xpg_echo`
/// (escapes unless `-E`; also `sh` on some systems), or dash (only `-n` is
/// an option; escapes always). The shell is not known here, so every model
/// is tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EchoModel {
    Bash,
    Xpg,
    Dash,
}

const ECHO_MODELS: [EchoModel; 3] = [EchoModel::Bash, EchoModel::Xpg, EchoModel::Dash];

/// Decodes the escapes `echo` knows in `model` into `out`; returns `false`
/// after `\c` (nothing more is printed).
fn echo_escapes(a: &[u8], model: EchoModel, out: &mut Vec<u8>) -> bool {
    let bash = model != EchoModel::Dash;
    let mut i = 0;
    while i < a.len() {
        let c = a[i];
        if c != b'\\' || i + 1 >= a.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let e = a[i + 1];
        i += 2;
        let simple = match e {
            b'b' => Some(8),
            b'f' => Some(12),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(11),
            b'\\' => Some(b'\\'),
            b'a' if bash => Some(7),
            b'e' | b'E' if bash => Some(27),
            _ => None,
        };
        if let Some(b) = simple {
            out.push(b);
            continue;
        }
        match e {
            b'c' => return false,
            b'0' => {
                let mut v: u32 = 0;
                let mut n = 0;
                while n < 3 && i < a.len() && (b'0'..=b'7').contains(&a[i]) {
                    v = v * 8 + u32::from(a[i] - b'0');
                    i += 1;
                    n += 1;
                }
                out.push(v as u8);
            }
            b'x' | b'u' | b'U' if bash => i += hex_escape(e, &a[i..], out),
            _ => {
                out.push(b'\\');
                out.push(e);
            }
        }
    }
    true
}

/// What `echo args` prints in `model`.
fn echo(args: &[Vec<u8>], model: EchoModel, out: &mut Vec<u8>) {
    let mut newline = true;
    let mut escapes = model != EchoModel::Bash;
    let mut k = 0;
    if model == EchoModel::Dash {
        if args.first().is_some_and(|a| a == b"-n") {
            newline = false;
            k = 1;
        }
    } else {
        while let Some(a) = args.get(k) {
            let opts = a.len() > 1 && a[0] == b'-' && a[1..].iter().all(|c| b"neE".contains(c));
            if !opts {
                break;
            }
            for &o in &a[1..] {
                match o {
                    b'n' => newline = false,
                    b'e' => escapes = true,
                    _ => escapes = false,
                }
            }
            k += 1;
        }
    }
    for (j, a) in args[k..].iter().enumerate() {
        if j > 0 {
            out.push(b' ');
        }
        if !escapes {
            out.extend_from_slice(a);
        } else if !echo_escapes(a, model, out) {
            return;
        }
    }
    if newline {
        out.push(b'\n');
    }
}

/// What `printf FORMAT ARGS...` prints, for a format made of plain bytes,
/// `%s`, `%%` and the escapes `\n`, `\t`, `\\`; `None` for anything else.
fn printf(args: &[Vec<u8>], out: &mut Vec<u8>) -> Option<()> {
    let (format, mut rest) = args.split_first()?;
    if format.first() == Some(&b'-') {
        return None;
    }
    let slots = format.windows(2).filter(|w| w == b"%s").count();
    loop {
        let mut k = 0;
        while k < format.len() {
            match (format[k], format.get(k + 1)) {
                (b'%', Some(b's')) => {
                    if let Some((a, more)) = rest.split_first() {
                        out.extend_from_slice(a);
                        rest = more;
                    }
                    k += 2;
                }
                (b'%', Some(b'%')) => {
                    out.push(b'%');
                    k += 2;
                }
                (b'%', _) => return None,
                (b'\\', Some(b'n')) => {
                    out.push(b'\n');
                    k += 2;
                }
                (b'\\', Some(b't')) => {
                    out.push(b'\t');
                    k += 2;
                }
                (b'\\', Some(b'\\')) => {
                    out.push(b'\\');
                    k += 2;
                }
                (b'\\', _) => return None,
                (c, _) => {
                    out.push(c);
                    k += 1;
                }
            }
        }
        // The format is reused while arguments remain.
        if slots == 0 || rest.is_empty() {
            return Some(());
        }
    }
}

/// Every standard output `text` may give (one per [`EchoModel`], without
/// repeats) when it is a list of `echo`, `printf`, `:` and `true` commands
/// with literal words (see [`Allowed::producers`]).
pub(super) fn static_outputs(text: &[u8]) -> Option<Vec<Vec<u8>>> {
    let cmds = commands(text)?;
    let mut outs: Vec<Vec<u8>> = Vec::new();
    for model in ECHO_MODELS {
        let mut out = Vec::new();
        for words in &cmds {
            let (name, args) = words.split_first()?;
            match name.as_slice() {
                b"echo" => echo(args, model, &mut out),
                b"printf" => printf(args, &mut out)?,
                b":" | b"true" => {}
                _ => return None,
            }
            if out.len() > 1 << 20 {
                return None;
            }
        }
        if !outs.contains(&out) {
            outs.push(out);
        }
    }
    Some(outs)
}

/// The first word of `s` and what follows it.
fn next_word(s: &[u8]) -> (&[u8], &[u8]) {
    let s = s.trim_ascii_start();
    let end = s
        .iter()
        .position(|c| matches!(c, b' ' | b'\t' | b'\n'))
        .unwrap_or(s.len());
    (&s[..end], &s[end..])
}

/// `text` without the reserved words that may stand before a pipeline's
/// first command (`{`, `!`, `then`, `do`, `else`, `if`, `while`, `until`,
/// `time [-p]`, `for NAME do`), and without the `}` that closes a leading `{`.
pub(super) fn strip_lead(mut text: &[u8]) -> &[u8] {
    let mut brace = false;
    loop {
        let t = text.trim_ascii_start();
        let word_end = t
            .iter()
            .position(|c| matches!(c, b' ' | b'\t' | b'\n'))
            .unwrap_or(t.len());
        match &t[..word_end] {
            b"{" => brace = true,
            b"!" | b"then" | b"do" | b"else" | b"if" | b"while" | b"until" | b"time" | b"-p"
                if word_end < t.len() => {}
            b"for" => {
                // `for NAME do ...`: a loop over the positional parameters.
                let (_, after_name) = next_word(&t[word_end..]);
                match next_word(after_name) {
                    (b"do", rest) if !rest.is_empty() => {
                        text = rest;
                        continue;
                    }
                    _ => {
                        text = t;
                        break;
                    }
                }
            }
            _ => {
                text = t;
                break;
            }
        }
        text = &t[word_end..];
    }
    if brace {
        let t = text.trim_ascii_end();
        if let Some(t) = t.strip_suffix(b"}") {
            let t = t.trim_ascii_end();
            return t.strip_suffix(b";").unwrap_or(t);
        }
    }
    text
}

/// The standard output of `text` when every [`EchoModel`] gives the same.
pub(super) fn static_output(text: &[u8]) -> Option<Vec<u8>> {
    let mut outs = static_outputs(text)?;
    if outs.len() == 1 {
        outs.pop()
    } else {
        None
    }
}

/// The end of a `$(...)` body starting at `s[i]`: the first `)` outside
/// quotes (the producer grammar has no other use for it).
fn subst_end(s: &[u8], mut i: usize, close: u8) -> Option<usize> {
    while let Some(&c) = s.get(i) {
        match c {
            b'\'' | b'"' => i += s[i + 1..].iter().position(|&q| q == c)? + 2,
            b'\\' => i += 2,
            c if c == close => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// Words being built by [`word_fields`].
#[derive(Default)]
struct Fields {
    done: Vec<Vec<u8>>,
    cur: Vec<u8>,
    /// The current field exists (it may be empty: `""`).
    open: bool,
}

impl Fields {
    fn literal(&mut self, b: &[u8]) {
        self.cur.extend_from_slice(b);
        self.open = true;
    }

    /// An unquoted expansion's value: split at blanks and newlines.
    fn split(&mut self, value: &[u8]) -> Option<()> {
        if value.iter().any(|&c| is_glob(c)) {
            return None;
        }
        for &c in value {
            if matches!(c, b' ' | b'\t' | b'\n') {
                if self.open {
                    self.done.push(std::mem::take(&mut self.cur));
                    self.open = false;
                }
            } else {
                self.cur.push(c);
                self.open = true;
            }
        }
        Some(())
    }
}

/// The output of a command substitution body: the producer's output without
/// its trailing newlines.
fn subst_value(body: &[u8]) -> Option<Vec<u8>> {
    let mut v = static_output(body)?;
    while v.last() == Some(&b'\n') {
        v.pop();
    }
    Some(v)
}

/// The fields one word's source text expands to, when every expansion in it
/// is a command substitution (`$(...)`, backquotes, quoted or not) with a
/// static producer; `None` otherwise. `allowed.split` must hold for an
/// unquoted substitution.
pub(super) fn word_fields(raw: &[u8], allowed: Allowed) -> Option<Vec<Vec<u8>>> {
    if !allowed.producers {
        return None;
    }
    let mut f = Fields::default();
    let mut i = 0;
    while let Some(&c) = raw.get(i) {
        match c {
            b'$' if raw.get(i + 1) == Some(&b'(') && raw.get(i + 2) != Some(&b'(') => {
                let end = subst_end(raw, i + 2, b')')?;
                if !allowed.split {
                    return None;
                }
                f.split(&subst_value(&raw[i + 2..end])?)?;
                i = end + 1;
            }
            b'`' => {
                let end = raw[i + 1..].iter().position(|&q| q == b'`')? + i + 1;
                let body = &raw[i + 1..end];
                if body.contains(&b'\\') || !allowed.split {
                    return None;
                }
                f.split(&subst_value(body)?)?;
                i = end + 1;
            }
            b'"' => {
                f.open = true;
                i += 1;
                loop {
                    match *raw.get(i)? {
                        b'"' => break,
                        b'$' if raw.get(i + 1) == Some(&b'(') && raw.get(i + 2) != Some(&b'(') => {
                            let end = subst_end(raw, i + 2, b')')?;
                            f.literal(&subst_value(&raw[i + 2..end])?);
                            i = end + 1;
                        }
                        b'`' => {
                            let end = raw[i + 1..].iter().position(|&q| q == b'`')? + i + 1;
                            let body = &raw[i + 1..end];
                            if body.contains(&b'\\') {
                                return None;
                            }
                            f.literal(&subst_value(body)?);
                            i = end + 1;
                        }
                        b'$' | b'\\' => return None,
                        c => {
                            f.literal(&[c]);
                            i += 1;
                        }
                    }
                }
                i += 1;
            }
            b'\'' => {
                let end = raw[i + 1..].iter().position(|&q| q == b'\'')? + i + 1;
                f.literal(&raw[i + 1..end]);
                i = end + 1;
            }
            b'\\' => {
                let next = *raw.get(i + 1)?;
                if next == b'\n' {
                    return None;
                }
                f.literal(&[next]);
                i += 2;
            }
            c if is_plain(c) => {
                f.literal(&[c]);
                i += 1;
            }
            _ => return None,
        }
    }
    if f.open {
        f.done.push(f.cur);
    }
    Some(f.done)
}

/// A value the input gives a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Value {
    /// `NAME=value`.
    Scalar(Vec<u8>),
    /// `NAME=(a b c)`, `read -a NAME`, and the positional parameters (`@`).
    List(Vec<Vec<u8>>),
}

impl Value {
    fn len(&self) -> usize {
        match self {
            Value::Scalar(s) => s.len(),
            Value::List(l) => l.iter().map(|e| e.len() + 1).sum(),
        }
    }
}

/// How a command word uses a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    /// `$NAME`, `${NAME}`: the first element, split.
    Unquoted,
    /// `"$NAME"`: the first element, one word.
    Quoted,
    /// `"$@"`, `"${NAME[@]}"`: every element, one word each.
    AllQuoted,
    /// `$@`, `$*`, `${NAME[@]}`, `${NAME[*]}`: every element, split.
    AllUnquoted,
    /// `$N`, `${N}` (a positional parameter, `N` from 1): that element, split.
    Nth(usize),
    /// `"$N"`, `"${N}"`: that element, one word.
    NthQuoted(usize),
}

impl Form {
    /// The value is split into fields (the form is unquoted).
    pub(super) fn splits(self) -> bool {
        matches!(self, Form::Unquoted | Form::AllUnquoted | Form::Nth(_))
    }
}

/// What a deferred use does with the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum UseKind {
    /// The value is the command word (and more words): `$c x`, `"$@"`.
    Command,
    /// The value is a script: `eval "$c"`, `sh -c "$c"`.
    Script,
}

/// A use of a value that waits for the end of the input, where every
/// definition is known.
#[derive(Debug, Clone)]
pub(super) struct Pending {
    /// The name (`@` for the positional parameters).
    pub(super) name: Vec<u8>,
    pub(super) form: Form,
    /// The operator applied to the value.
    pub(super) op: Op,
    pub(super) kind: UseKind,
    /// The source text of the words after it.
    pub(super) rest: Vec<u8>,
}

/// A list of words.
type Words = Vec<Vec<u8>>;

/// One use of a value in a word of its own (`"$x"`, `${a[@]}`, `"$@"`,
/// `$1`), with what the place of the use tells about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Use {
    /// The name (`@` for the positional parameters).
    pub(super) name: Vec<u8>,
    pub(super) form: Form,
    /// The operator applied to the value.
    pub(super) op: Op,
    /// An assignment of the same text surely ran before the use (see
    /// `guard/flow.rs`): no value from outside the input.
    pub(super) surely: bool,
    /// The function whose body holds the use: there `@` and `$N` are the
    /// arguments of its calls.
    pub(super) function: Option<Vec<u8>>,
}

/// One argument of a recorded call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Arg {
    /// A word known exactly.
    Lit(Vec<u8>),
    /// A word that is one use of a value (a function forwarding `"$@"`).
    Use(Use),
}

/// Most alternatives a use may have before it counts as unknown.
const ALTERNATIVES_LIMIT: usize = 64;

/// Deepest chain of functions forwarding their arguments that is followed.
const FORWARD_DEPTH: u32 = 4;

/// Most definitions and pending uses kept; beyond, values are unknown.
const VALUES_LIMIT: usize = 4096;

/// Every value the input assigns, collected over the whole analysis (the
/// definitions may come after a use: loops, functions), and the uses that
/// wait for them.
#[derive(Debug, Default)]
pub(super) struct Values {
    defs: Vec<(Vec<u8>, Value)>,
    unknown: Vec<Vec<u8>>,
    /// A value may have been assigned in a way the analysis cannot read
    /// (a name from an expansion, a sourced file, a nameref).
    all_unknown: bool,
    /// Names of the functions the input defines.
    functions: Vec<Vec<u8>>,
    /// The arguments of the simple commands, by command name (a function's
    /// positional parameters come from its calls).
    calls: Vec<(Vec<u8>, Option<Vec<Arg>>)>,
    /// A command word whose value is not known may call a function with
    /// arguments not recorded.
    calls_unknown: bool,
    /// The input may remove a function named `herdr` (`unset herdr`).
    herdr_unset: bool,
    pub(super) pending: Vec<Pending>,
}

impl Values {
    /// `name` gets `value` somewhere in the input.
    pub(super) fn define(&mut self, name: &[u8], value: Value) {
        if self.defs.len() >= VALUES_LIMIT {
            self.all_unknown = true;
        } else {
            self.defs.push((name.to_vec(), value));
        }
    }

    /// `name` gets a value the analysis cannot read.
    pub(super) fn unknown(&mut self, name: &[u8]) {
        if self.unknown.len() >= VALUES_LIMIT {
            self.all_unknown = true;
        } else if !self.unknown.iter().any(|n| n == name) {
            self.unknown.push(name.to_vec());
        }
    }

    /// Any name may get a value the analysis cannot read.
    pub(super) fn all_unknown(&mut self) {
        self.all_unknown = true;
    }

    /// A function named `name` is defined.
    pub(super) fn function(&mut self, name: &[u8]) {
        if self.functions.len() >= VALUES_LIMIT {
            self.all_unknown = true;
        } else {
            self.functions.push(name.to_vec());
        }
    }

    /// A simple command named `name` runs with `args` (`None`: one is
    /// neither literal nor a use of a value).
    pub(super) fn call(&mut self, name: &[u8], args: Option<Vec<Arg>>) {
        if self.calls.len() >= VALUES_LIMIT {
            self.all_unknown = true;
        } else {
            self.calls.push((name.to_vec(), args));
        }
    }

    /// A command may call a function with arguments the analysis does not
    /// see.
    pub(super) fn calls_unknown(&mut self) {
        self.calls_unknown = true;
    }

    /// A command may remove a function named `herdr`.
    pub(super) fn herdr_unsettled(&mut self) {
        self.herdr_unset = true;
    }

    /// Whether a command may remove a function named `herdr`.
    pub(super) fn herdr_unset(&self) -> bool {
        self.herdr_unset
    }

    /// Queues a use for [`Values::possible`] at the end.
    pub(super) fn defer(&mut self, use_: Pending) {
        if self.pending.len() >= VALUES_LIMIT {
            self.all_unknown = true;
        }
        self.pending.push(use_);
    }

    /// Every value `name` may have, when all of them are known; `None` when
    /// one is not, or when there is none (the value then comes from outside
    /// the input).
    pub(super) fn possible(&self, name: &[u8]) -> Option<Vec<Value>> {
        if self.all_unknown || self.unknown.iter().any(|n| n == name) {
            return None;
        }
        let mut out: Vec<Value> = self
            .defs
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .collect();
        if name == b"@" && !self.functions.is_empty() {
            // Inside a function, the positional parameters are the
            // arguments of its calls.
            for (n, args) in &self.calls {
                if self.functions.iter().any(|f| f == n) {
                    let words = args
                        .as_ref()?
                        .iter()
                        .map(|a| match a {
                            Arg::Lit(w) => Some(w.clone()),
                            Arg::Use(_) => None,
                        })
                        .collect::<Option<Words>>()?;
                    out.push(Value::List(words));
                }
            }
        }
        (!out.is_empty()).then_some(out)
    }

    /// Every list of words `u` may expand to (each unquoted value split at
    /// each of `ifs`), when all are known; `None` when one is not (a value
    /// the analysis cannot read, or from outside the input), or when there
    /// are more than [`ALTERNATIVES_LIMIT`].
    pub(super) fn alternatives(&self, u: &Use, ifs: &[Vec<u8>]) -> Option<Vec<Words>> {
        self.alternatives_at(u, ifs, 0)
    }

    fn alternatives_at(&self, u: &Use, ifs: &[Vec<u8>], depth: u32) -> Option<Vec<Words>> {
        if depth > FORWARD_DEPTH || self.all_unknown || self.unknown.contains(&u.name) {
            return None;
        }
        let mut values: Vec<Value> = self
            .defs
            .iter()
            .filter(|(n, _)| *n == u.name)
            .map(|(_, v)| v.clone())
            .collect();
        match &u.function {
            Some(f) if u.name == b"@" => {
                // The arguments of every call of that function (and of no
                // other caller: none outside the input can call it).
                if self.calls_unknown {
                    return None;
                }
                let mut any = false;
                for (_, args) in self.calls.iter().filter(|(n, _)| n == f) {
                    any = true;
                    for words in self.call_words(args.as_ref()?, ifs, depth)? {
                        values.push(Value::List(words));
                        if values.len() > ALTERNATIVES_LIMIT {
                            return None;
                        }
                    }
                }
                if !any {
                    return None;
                }
            }
            _ if !u.surely => return None,
            _ => {}
        }
        if values.is_empty() {
            return None;
        }
        let splits: &[Vec<u8>] = if u.form.splits() { ifs } else { &ifs[..1] };
        let mut out: Vec<Words> = Vec::new();
        for v in &values {
            for sep in splits {
                let fields = expand(v, u.form, &u.op, sep)?;
                if !out.contains(&fields) {
                    out.push(fields);
                }
                if out.len() > ALTERNATIVES_LIMIT {
                    return None;
                }
            }
        }
        Some(out)
    }

    /// Every list of words one call's arguments may be.
    fn call_words(&self, args: &[Arg], ifs: &[Vec<u8>], depth: u32) -> Option<Vec<Words>> {
        let mut alts: Vec<Words> = vec![Vec::new()];
        for a in args {
            match a {
                Arg::Lit(w) => alts.iter_mut().for_each(|alt| alt.push(w.clone())),
                Arg::Use(u) => {
                    let choices = self.alternatives_at(u, ifs, depth + 1)?;
                    if alts.len().saturating_mul(choices.len()) > ALTERNATIVES_LIMIT {
                        return None;
                    }
                    let mut next = Vec::with_capacity(alts.len() * choices.len());
                    for alt in &alts {
                        for c in &choices {
                            let mut x = alt.clone();
                            x.extend(c.iter().cloned());
                            next.push(x);
                        }
                    }
                    alts = next;
                }
            }
        }
        Some(alts)
    }

    /// Total size of the values `name` may have (for the work budget).
    pub(super) fn size(values: &[Value]) -> usize {
        values.iter().map(Value::len).sum()
    }
}

/// The name, form and operator of a word that is exactly one use of a value
/// (`$c`, `"${c}"`, `"$@"`, `"${a[@]}"`, `${c%% *}`, `"${a[@]:1:2}"`, ...);
/// `None` otherwise.
pub(super) fn value_use(raw: &[u8]) -> Option<(Vec<u8>, Form, Op)> {
    let (inner, quoted) = match raw {
        [b'"', inner @ .., b'"'] => (inner, true),
        _ => (raw, false),
    };
    let body = inner.strip_prefix(b"$")?;
    let (param, mut op) = match body {
        [b'{', b @ .., b'}'] => {
            // The parameter, then its operator.
            let end = match b.first()? {
                b'@' | b'*' => 1,
                c if c.is_ascii_digit() => b.iter().take_while(|c| c.is_ascii_digit()).count(),
                _ => {
                    let n = b
                        .iter()
                        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                        .count();
                    let sub = &b[n..];
                    n + if sub.starts_with(b"[@]") || sub.starts_with(b"[*]") {
                        3
                    } else {
                        0
                    }
                }
            };
            let op = &b[end..];
            if quoted && op.iter().any(|&c| c == b'\'' || c == b'\\') {
                // Quotes and escapes in an operator inside double quotes
                // follow other rules: not followed here.
                return None;
            }
            (&b[..end], Op::parse(op)?)
        }
        _ => (body, Op::None),
    };
    let braced = body.first() == Some(&b'{');
    if matches!(param, b"@" | b"*") {
        // `${@:K}` starts at `$K`: element K-1 of the list (`$0` is not known).
        op = match op {
            Op::Slice(0, _) => return None,
            Op::Slice(k, len) => Op::Slice(k - 1, len),
            op => op,
        };
    }
    let all = |name: &[u8]| {
        Some((
            name.to_vec(),
            if quoted {
                Form::AllQuoted
            } else {
                Form::AllUnquoted
            },
            op.clone(),
        ))
    };
    if !param.is_empty() && param.iter().all(u8::is_ascii_digit) && (param.len() == 1 || braced) {
        let k: usize = std::str::from_utf8(param).ok()?.parse().ok()?;
        if k == 0 {
            return None;
        }
        let form = if quoted {
            Form::NthQuoted(k)
        } else {
            Form::Nth(k)
        };
        return Some((b"@".to_vec(), form, op));
    }
    match param {
        b"@" => all(b"@"),
        b"*" if !quoted => all(b"@"),
        _ => {
            let (name, whole) = match param.strip_suffix(b"[@]") {
                Some(n) => (n, true),
                None => match param.strip_suffix(b"[*]").filter(|_| !quoted) {
                    Some(n) => (n, true),
                    None => (param, false),
                },
            };
            let valid = name
                .first()
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
                && name.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_');
            if !valid {
                return None;
            }
            if whole {
                all(name)
            } else if quoted {
                Some((name.to_vec(), Form::Quoted, op))
            } else {
                Some((name.to_vec(), Form::Unquoted, op))
            }
        }
    }
}

/// Longest value a pattern operator is applied to (its cost is quadratic in
/// the value's length); a longer one is not known.
const OP_VALUE_LIMIT: usize = 512;

/// An operator of a parameter expansion, applied to each element the form
/// selects (a slice selects the elements of `@` and `NAME[@]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Op {
    /// No operator: the value as it is.
    None,
    /// `${x:OFFSET}`, `${x:OFFSET:LENGTH}` (non-negative numbers only).
    Slice(usize, Option<usize>),
    /// `${x^^}`, `${x^}`, `${x,,}`, `${x,}`: to upper case (`upper`), every
    /// letter or the first (`all`).
    Case { upper: bool, all: bool },
    /// `${x#P}`, `${x##P}`, `${x%P}`, `${x%%P}`: the shortest or `longest`
    /// match of the pattern removed from the start, or from the end (`suffix`).
    Remove {
        suffix: bool,
        longest: bool,
        pat: Vec<Pat>,
    },
    /// `${x/P/R}`, `${x//P/R}`, `${x/#P/R}`, `${x/%P/R}`: the longest match of
    /// the pattern replaced, the first or `all`; `at`: only at the start
    /// (`Some(false)`) or the end (`Some(true)`).
    Replace {
        all: bool,
        at: Option<bool>,
        pat: Vec<Pat>,
        rep: Vec<u8>,
    },
}

impl Op {
    /// The operator spelt `text` (what follows the parameter inside `${...}`);
    /// `None` for one that is not followed here (defaults, alternatives,
    /// indirection, arithmetic offsets, bracket or quoted patterns, ...).
    fn parse(text: &[u8]) -> Option<Op> {
        let number = |t: &[u8]| -> Option<usize> {
            if t.is_empty() || !t.iter().all(u8::is_ascii_digit) || t.len() > 6 {
                return None;
            }
            std::str::from_utf8(t).ok()?.parse().ok()
        };
        Some(match text {
            [] => Op::None,
            [b':', rest @ ..] => match rest.iter().position(|&c| c == b':') {
                Some(k) => Op::Slice(number(&rest[..k])?, Some(number(&rest[k + 1..])?)),
                None => Op::Slice(number(rest)?, None),
            },
            b"^^" | b"^" | b",," | b"," => Op::Case {
                upper: text[0] == b'^',
                all: text.len() == 2,
            },
            [c @ (b'#' | b'%'), rest @ ..] => {
                let (longest, pat) = match rest.strip_prefix(&[*c]) {
                    Some(p) => (true, p),
                    None => (false, rest),
                };
                Op::Remove {
                    suffix: *c == b'%',
                    longest,
                    pat: pattern(pat)?,
                }
            }
            [b'/', rest @ ..] => {
                let (all, at, rest) = match rest {
                    [b'/', r @ ..] => (true, None, r),
                    [b'#', r @ ..] => (false, Some(false), r),
                    [b'%', r @ ..] => (false, Some(true), r),
                    r => (false, None, r),
                };
                let (pat, rep) = split_replacement(rest);
                Op::Replace {
                    all,
                    at,
                    pat: pattern(pat)?,
                    rep: replacement(rep)?,
                }
            }
            _ => return None,
        })
    }

    /// `elems` (the elements `form` selected from a value) with the operator
    /// applied; `None` when the result is not known here.
    fn apply(&self, elems: Vec<&[u8]>, form: Form) -> Option<Vec<Vec<u8>>> {
        let whole = matches!(form, Form::AllQuoted | Form::AllUnquoted);
        match self {
            Op::None => Some(elems.into_iter().map(<[u8]>::to_vec).collect()),
            Op::Slice(off, len) if whole => {
                let end = len.map_or(elems.len(), |l| off.saturating_add(l));
                Some(
                    elems
                        .get(*off..end.min(elems.len()))
                        .unwrap_or(&[])
                        .iter()
                        .map(|e| e.to_vec())
                        .collect(),
                )
            }
            _ => elems.into_iter().map(|e| self.apply_one(e)).collect(),
        }
    }

    /// The operator applied to one string.
    fn apply_one(&self, v: &[u8]) -> Option<Vec<u8>> {
        if !v.is_ascii() || v.len() > OP_VALUE_LIMIT {
            // Bash counts and converts characters by the locale.
            return None;
        }
        let matches = |pat: &[Pat], s: &[u8]| glob(pat, s);
        Some(match self {
            Op::None => v.to_vec(),
            Op::Slice(off, len) => {
                let from = (*off).min(v.len());
                let to = len.map_or(v.len(), |l| from.saturating_add(l).min(v.len()));
                v[from..to].to_vec()
            }
            Op::Case { upper, all } => {
                let mut out = v.to_vec();
                let n = if *all { out.len() } else { out.len().min(1) };
                for c in &mut out[..n] {
                    *c = if *upper {
                        c.to_ascii_uppercase()
                    } else {
                        c.to_ascii_lowercase()
                    };
                }
                out
            }
            Op::Remove {
                suffix,
                longest,
                pat,
            } => {
                // Prefix lengths (or suffix starts) from the shortest match on.
                let n = v.len();
                let cut = |k: usize| if *suffix { &v[n - k..] } else { &v[..k] };
                let mut lens: Vec<usize> = (0..=n).collect();
                if *longest {
                    lens.reverse();
                }
                match lens.into_iter().find(|&k| matches(pat, cut(k))) {
                    Some(k) if *suffix => v[..n - k].to_vec(),
                    Some(k) => v[k..].to_vec(),
                    None => v.to_vec(),
                }
            }
            Op::Replace { all, at, pat, rep } => {
                let n = v.len();
                let mut out = Vec::new();
                let mut i = 0;
                while i <= n {
                    // The longest match starting at `i` (ending at `n` when
                    // anchored at the end).
                    let found = if at == &Some(false) && i > 0 {
                        None
                    } else if at == &Some(true) {
                        matches(pat, &v[i..]).then_some(n)
                    } else {
                        (i + 1..=n).rev().find(|&e| matches(pat, &v[i..e]))
                    };
                    match found {
                        Some(e) => {
                            out.extend_from_slice(rep);
                            i = e;
                            if !all {
                                out.extend_from_slice(&v[i..]);
                                return Some(out);
                            }
                        }
                        None if i < n => {
                            out.push(v[i]);
                            i += 1;
                        }
                        None => break,
                    }
                }
                out
            }
        })
    }
}

/// The bytes of a pattern's or replacement's text, each with whether it was
/// quoted or escaped (`\*`, `'a b'`); `None` when the text expands
/// (`$`, backquotes), holds a double quote, braces or parentheses (an
/// extended pattern).
fn unquoted(text: &[u8]) -> Option<Vec<(u8, bool)>> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while let Some(&c) = text.get(i) {
        match c {
            b'\\' => {
                out.push((*text.get(i + 1)?, true));
                i += 2;
            }
            b'\'' => {
                let end = text[i + 1..].iter().position(|&q| q == b'\'')? + i + 1;
                out.extend(text[i + 1..end].iter().map(|&c| (c, true)));
                i = end + 1;
            }
            b'"' | b'$' | b'`' | b'(' | b')' | b'{' | b'}' => return None,
            c if c <= super::words::S_ONE => return None,
            c => {
                out.push((c, false));
                i += 1;
            }
        }
    }
    Some(out)
}

/// `text` cut at its first `/` that is not quoted or escaped: the pattern
/// of `${x/P/R}` and its replacement (empty without a `/`).
fn split_replacement(text: &[u8]) -> (&[u8], &[u8]) {
    let mut i = 0;
    while let Some(&c) = text.get(i) {
        match c {
            b'\\' => i += 2,
            b'\'' => {
                i += text[i + 1..]
                    .iter()
                    .position(|&q| q == b'\'')
                    .map_or(text.len(), |k| k + 2)
            }
            b'/' => return (&text[..i], &text[i + 1..]),
            _ => i += 1,
        }
    }
    (text, b"")
}

/// A replacement's text as the bytes it gives; `None` for an unquoted `&`
/// (the matched text, in bash 5.2) or text [`unquoted`] does not follow.
fn replacement(text: &[u8]) -> Option<Vec<u8>> {
    unquoted(text)?
        .into_iter()
        .map(|(c, quoted)| (quoted || c != b'&').then_some(c))
        .collect()
}

/// One element of a pattern of a parameter operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Pat {
    /// This byte.
    Lit(u8),
    /// `*`: any string.
    Star,
    /// `?`: any one byte.
    One,
    /// `[...]`: one byte in (or, negated with `!` or `^`, not in) the ranges.
    Class(bool, Vec<(u8, u8)>),
}

/// A pattern's text as [`Pat`]s (unquoted `*`, `?` and bracket expressions;
/// everything quoted or escaped literal); `None` when [`unquoted`] does not
/// follow it, it holds a character class (`[[:alpha:]]`), or it may match
/// the empty string (bash's handling of empty matches is not followed).
fn pattern(text: &[u8]) -> Option<Vec<Pat>> {
    let chars = unquoted(text)?;
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&(c, quoted)) = chars.get(i) {
        i += 1;
        out.push(match c {
            _ if quoted => Pat::Lit(c),
            b'*' => Pat::Star,
            b'?' => Pat::One,
            b'[' => match bracket(&chars[i..])? {
                Some((class, used)) => {
                    i += used;
                    class
                }
                None => Pat::Lit(b'['),
            },
            c => Pat::Lit(c),
        });
    }
    (!glob(&out, b"")).then_some(out)
}

/// The bracket expression after a `[` (`chars`): the class and how many
/// characters it used, `Some(None)` when no `]` closes it (the `[` is then
/// literal), `None` for a character class (`[:alpha:]`) or an equivalence
/// class, which are not followed.
fn bracket(chars: &[(u8, bool)]) -> Option<Option<(Pat, usize)>> {
    let mut i = 0;
    let negated = matches!(chars.first(), Some((b'!' | b'^', false)));
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    while let Some(&(c, quoted)) = chars.get(i) {
        if c == b']' && !quoted && !first {
            return Some(Some((Pat::Class(negated, ranges), i + 1)));
        }
        if c == b'[' && !quoted && matches!(chars.get(i + 1), Some((b':' | b'=' | b'.', _))) {
            return None;
        }
        first = false;
        match (chars.get(i + 1), chars.get(i + 2)) {
            (Some((b'-', false)), Some(&(hi, _))) if hi != b']' => {
                ranges.push((c, hi));
                i += 3;
            }
            _ => {
                ranges.push((c, c));
                i += 1;
            }
        }
    }
    Some(None)
}

/// Whether the whole of `s` matches `pat` (linear backtracking over the
/// last `*`).
fn glob(pat: &[Pat], s: &[u8]) -> bool {
    let one = |p: &Pat, c: u8| match p {
        Pat::Lit(l) => *l == c,
        Pat::One => true,
        Pat::Class(negated, ranges) => ranges.iter().any(|&(a, b)| a <= c && c <= b) != *negated,
        Pat::Star => false,
    };
    let (mut p, mut i) = (0, 0);
    let mut back: Option<(usize, usize)> = None;
    while i < s.len() {
        if pat.get(p) == Some(&Pat::Star) {
            back = Some((p, i));
            p += 1;
        } else if pat.get(p).is_some_and(|x| one(x, s[i])) {
            p += 1;
            i += 1;
        } else if let Some((bp, bi)) = back {
            p = bp + 1;
            i = bi + 1;
            back = Some((bp, bi + 1));
        } else {
            return false;
        }
    }
    pat[p..].iter().all(|x| *x == Pat::Star)
}

/// Splits `value` into fields at the bytes of `ifs` as bash does: runs of
/// `IFS` white space separate fields and are trimmed at both ends; every
/// other `IFS` byte ends a field (so `a,,b` gives an empty field). `None`
/// when a field holds a glob character.
fn split_ifs(value: &[u8], ifs: &[u8]) -> Option<Vec<Vec<u8>>> {
    if value.iter().any(|&c| is_glob(c)) {
        return None;
    }
    if ifs.is_empty() {
        return Some(if value.is_empty() {
            Vec::new()
        } else {
            vec![value.to_vec()]
        });
    }
    let white = |c: u8| matches!(c, b' ' | b'\t' | b'\n') && ifs.contains(&c);
    let delim = |c: u8| !white(c) && ifs.contains(&c);
    let mut out = Vec::new();
    let mut cur = Vec::new();
    let mut i = 0;
    while i < value.len() && white(value[i]) {
        i += 1;
    }
    while i < value.len() {
        let c = value[i];
        if delim(c) {
            out.push(std::mem::take(&mut cur));
            i += 1;
            while i < value.len() && white(value[i]) {
                i += 1;
            }
        } else if white(c) {
            while i < value.len() && white(value[i]) {
                i += 1;
            }
            if i < value.len() && !delim(value[i]) {
                out.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
            i += 1;
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    Some(out)
}

/// The default `IFS`.
pub(super) const DEFAULT_IFS: &[u8] = b" \t\n";

/// Element `k` of a list, empty when there is none.
fn nth(l: &[Vec<u8>], k: usize) -> &[u8] {
    l.get(k).map_or(&b""[..], |e| e.as_slice())
}

/// The fields `value` gives in `form` with `op` applied, split (when
/// unquoted) at `ifs`; `None` when an unquoted part holds a glob character,
/// or the operator's result is not known.
pub(super) fn expand(value: &Value, form: Form, op: &Op, ifs: &[u8]) -> Option<Vec<Vec<u8>>> {
    let elems: Vec<&[u8]> = match value {
        Value::Scalar(s) => match form {
            Form::Nth(k) | Form::NthQuoted(k) if k > 1 => vec![&b""[..]],
            _ => vec![s.as_slice()],
        },
        Value::List(l) => match form {
            Form::Unquoted | Form::Quoted => vec![nth(l, 0)],
            Form::Nth(k) | Form::NthQuoted(k) => vec![nth(l, k - 1)],
            Form::AllQuoted | Form::AllUnquoted => l.iter().map(|e| e.as_slice()).collect(),
        },
    };
    let elems = op.apply(elems, form)?;
    match form {
        Form::Quoted | Form::AllQuoted | Form::NthQuoted(_) => Some(elems),
        Form::Unquoted | Form::AllUnquoted | Form::Nth(_) => {
            let mut out = Vec::new();
            for e in elems {
                out.extend(split_ifs(&e, ifs)?);
            }
            Some(out)
        }
    }
}

/// The elements of an array assignment's source text `NAME=( ... )` when
/// all are literal words.
pub(super) fn array_elements(raw: &[u8]) -> Option<Vec<Vec<u8>>> {
    let eq = raw.iter().position(|&c| c == b'=')?;
    let body = raw[eq + 1..].strip_prefix(b"(")?.strip_suffix(b")")?;
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        match body.get(i) {
            None => return Some(out),
            Some(b' ' | b'\t' | b'\n') => i += 1,
            Some(_) => out.push(literal_word(body, &mut i)?),
        }
    }
}

/// The fields `read -a` makes of the first line of `text` (default `IFS`).
pub(super) fn read_fields(text: &[u8]) -> Vec<Vec<u8>> {
    let line = text.split(|&c| c == b'\n').next().unwrap_or(b"");
    line.split(|&c| c == b' ' || c == b'\t')
        .filter(|f| !f.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Allowed = Allowed {
        producers: true,
        split: true,
        positional: true,
        builtin: true,
        path: true,
    };

    fn fields(raw: &str) -> Option<Vec<String>> {
        word_fields(raw.as_bytes(), ALL).map(|v| {
            v.into_iter()
                .map(|f| String::from_utf8(f).unwrap())
                .collect()
        })
    }

    fn output(text: &str) -> Option<String> {
        static_output(text.as_bytes()).map(|v| String::from_utf8(v).unwrap())
    }

    #[test]
    fn producers() {
        assert_eq!(
            output("echo herdr agent list").as_deref(),
            Some("herdr agent list\n")
        );
        assert_eq!(output("echo -n 'a  b'").as_deref(), Some("a  b"));
        assert_eq!(
            output("echo a; echo \"b c\" && :").as_deref(),
            Some("a\nb c\n")
        );
        assert_eq!(output("printf '%s\\n' a b").as_deref(), Some("a\nb\n"));
        assert_eq!(output("printf 'x%%'").as_deref(), Some("x%"));
        assert_eq!(output(":").as_deref(), Some(""));
        for refused in [
            "echo $H",
            "echo a | cat",
            "echo 'a\\nb'",
            "printf '%d' 1",
            "printf -v x y",
            "cat x",
            "echo `x`",
            "echo *",
            "echo {a,b}",
            "echo a > f",
            "echo a || echo b",
            "echo a &",
            "echo \"$(x)\"",
        ] {
            assert_eq!(output(refused), None, "{refused}");
        }
    }

    #[test]
    fn ifs_splitting() {
        let split = |v: &str, ifs: &str| {
            split_ifs(v.as_bytes(), ifs.as_bytes()).map(|f| {
                f.into_iter()
                    .map(|x| String::from_utf8(x).unwrap())
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(split("  a b\tc\n", " \t\n").unwrap(), ["a", "b", "c"]);
        assert_eq!(split("a,,b", ",").unwrap(), ["a", "", "b"]);
        assert_eq!(split(",a,", ",").unwrap(), ["", "a"]);
        assert_eq!(split("a , b", ", ").unwrap(), ["a", "b"]);
        assert_eq!(split("a b", "").unwrap(), ["a b"]);
        assert_eq!(
            split("herdr,agent,wait", ",").unwrap(),
            ["herdr", "agent", "wait"]
        );
        assert_eq!(split("h*", " "), None);
    }

    #[test]
    fn words() {
        assert_eq!(
            fields("$(echo herdr agent wait)").unwrap(),
            ["herdr", "agent", "wait"]
        );
        assert_eq!(fields("$(:)herdr").unwrap(), ["herdr"]);
        assert_eq!(fields("a$(echo ' b')c").unwrap(), ["a", "bc"]);
        assert_eq!(fields("\"$(echo 'a b')\"").unwrap(), ["a b"]);
        assert_eq!(fields("`echo x y`").unwrap(), ["x", "y"]);
        assert_eq!(fields("$(:)").unwrap(), Vec::<String>::new());
        assert_eq!(fields("\"\"").unwrap(), [""]);
        assert_eq!(fields("$(echo 'h*')"), None);
        assert_eq!(fields("$H"), None);
        assert_eq!(fields("$(echo $H)"), None);
        assert_eq!(fields("$((1+2))"), None);
        let no_split = Allowed {
            producers: true,
            split: false,
            positional: false,
            builtin: true,
            path: true,
        };
        assert_eq!(word_fields(b"$(echo a b)", no_split), None);
        assert!(word_fields(b"\"$(echo a b)\"", no_split).is_some());
        let redefined = Allowed::for_input(b"echo() { herdr agent wait x; }; $(echo)");
        assert!(!redefined.producers);
        assert!(!Allowed::for_input(b"IFS=,; $(echo a,b)").split);
    }

    /// The fields a use spelt `raw` gives of `value` (default `IFS`).
    fn used(raw: &str, value: Value) -> Option<Vec<String>> {
        let (_, form, op) = value_use(raw.as_bytes())?;
        let fields = expand(&value, form, &op, DEFAULT_IFS)?;
        Some(
            fields
                .into_iter()
                .map(|f| String::from_utf8(f).unwrap())
                .collect(),
        )
    }

    #[test]
    fn operators_apply_to_the_value() {
        let s = |v: &str| Value::Scalar(v.as_bytes().to_vec());
        let l = |v: &[&str]| Value::List(v.iter().map(|e| e.as_bytes().to_vec()).collect());
        let c = s("herdr agent list x");
        assert_eq!(
            used("${c/list/wait}", c.clone()).unwrap(),
            ["herdr", "agent", "wait", "x"]
        );
        assert_eq!(used("${c//[l]ist/wait}", c.clone()).unwrap()[2], "wait");
        assert_eq!(used("${c/l[!a]st/wait}", c.clone()).unwrap()[2], "wait");
        assert_eq!(used("${c/l[a-h]st/wait}", c.clone()).unwrap()[2], "list");
        assert_eq!(used("${c/[[:alpha:]]ist/wait}", c.clone()), None);
        assert!(glob(&pattern(b"a*b?").unwrap(), b"axxbc"));
        assert!(!glob(&pattern(b"a*b?").unwrap(), b"axxb"));
        assert!(glob(&pattern(b"[]x]").unwrap(), b"]"));
        assert!(glob(&pattern(b"a[").unwrap(), b"a["));
        assert_eq!(
            used("${c% x}", c.clone()).unwrap(),
            ["herdr", "agent", "list"]
        );
        assert_eq!(used("${c%% *}", c.clone()).unwrap(), ["herdr"]);
        assert_eq!(used("${c#* }", c.clone()).unwrap(), ["agent", "list", "x"]);
        assert_eq!(used("${c##* }", c.clone()).unwrap(), ["x"]);
        assert_eq!(used("${c:6:5}", c.clone()).unwrap(), ["agent"]);
        assert_eq!(used("${c/#herdr/echo}", c.clone()).unwrap()[0], "echo");
        assert_eq!(used("${c/%x/y}", c.clone()).unwrap()[3], "y");
        assert_eq!(used("${c/a/\\&}", c.clone()).unwrap()[1], "&gent");
        assert_eq!(used("${c/a/&}", c.clone()), None);
        assert_eq!(
            used("\"${c^^}\"", c.clone()).unwrap(),
            ["HERDR AGENT LIST X"]
        );
        assert_eq!(used("${c^}", c.clone()).unwrap()[0], "Herdr");
        assert_eq!(used("${c/h*/x}", c.clone()).unwrap(), ["x"]);
        // Patterns that may match nothing, and defaults, are not followed.
        assert_eq!(used("${c/*/x}", c.clone()), None);
        assert_eq!(used("${c/#/x}", c.clone()), None);
        assert_eq!(used("${c:-x}", c.clone()), None);
        assert_eq!(used("${c: -1}", c.clone()), None);
        assert_eq!(used("${#c}", c.clone()), None);
        // Slices of lists, with their length; `$@` from `$1`.
        let a = l(&["echo", "herdr", "agent", "wait", "x"]);
        assert_eq!(
            used("\"${a[@]:1:2}\"", a.clone()).unwrap(),
            ["herdr", "agent"]
        );
        assert_eq!(used("${a[@]:3}", a.clone()).unwrap(), ["wait", "x"]);
        assert_eq!(used("\"${@:2:1}\"", a.clone()).unwrap(), ["herdr"]);
        assert_eq!(used("\"${@:0}\"", a.clone()), None);
        assert_eq!(used("\"${a[@]^^}\"", a.clone()).unwrap()[3], "WAIT");
        assert_eq!(used("\"${a/e/E}\"", a).unwrap(), ["Echo"]);
    }
}
