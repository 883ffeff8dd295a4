//! POSIX shell lexer for the guard, the bottom of its reading: splits text
//! into words and simple commands, and descends into command substitutions,
//! heredoc bodies and parameter expansions. It knows nothing of Herdr or of
//! verdicts: each simple command, separator, subshell, function definition
//! and script text it finds is handed up as plain data ([`Simple`], [`End`],
//! [`Text`]) through the [`Sink`] trait, which the analysis above implements.
//! The lexer looks only down, at the words ([`super::words`]).
//!
//! Every byte of the input is consumed once per nesting level, and nesting is
//! capped at [`MAX_DEPTH`], so the cost is linear in the input length.
//!
//! Word values are kept as bytes after quote removal. Parts whose value is not
//! known here are replaced by sentinel bytes: [`S_ANY`] for an expansion,
//! [`S_STAR`] / [`S_ONE`] for unquoted glob characters.

use super::words::{
    hex_escape, ASSIGN, BRACE, DYN, GLOB, HERESTR, IO_NUMBER, QUOTED, REDIR, SPLIT, S_ANY, S_ONE,
    S_STAR, W,
};

/// Deepest nesting of substitutions, `${...}` and re-parsed scripts
/// (`sh -c`, `eval`, ...) analysed before giving up and falling back to the
/// word-sequence rule.
pub(super) const MAX_DEPTH: u32 = 32;

/// Stack the analysis may use below the frame of the first parser, so that
/// a host thread with a 64 KiB stack never overflows whatever the build's
/// frame sizes: deeper nesting is "too deep" (the fallback decides).
const STACK_BUDGET: usize = 40 * 1024;

/// The address of a local of the calling frame: the stack grows down, so
/// the difference between two of these is the stack used in between.
#[inline(never)]
pub(super) fn stack_mark() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// More than [`STACK_BUDGET`] of stack is in use below `base` (a
/// [`stack_mark`] of the first frame).
pub(super) fn stack_low(base: usize) -> bool {
    base.saturating_sub(stack_mark()) > STACK_BUDGET
}

/// Why the reading (or the analysis above it) stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    /// The text does not parse (an unclosed quote, backquote, `${` or
    /// `[[`, a redirection without a target): bash rejects it as a syntax
    /// error.
    Broken,
    /// Text the lexer cannot read, though bash may; also an unbalanced `(`
    /// or `)`, which the lexer cannot tell from a `)` it read as something
    /// else (it is judged by the conservative word-sequence rule).
    Unread,
    /// Nesting deeper than [`MAX_DEPTH`], or the work budget is spent.
    TooDeep,
    /// The sink asked to stop: it needs no more of the text (why is the
    /// sink's own business).
    Halt,
    /// A reserved word out of place (`then` with no `if`, `fi` after a
    /// quoted `"if"`), or a list ending in `&&`: bash runs nothing of this
    /// complete command and stops.
    Syntax,
}

/// Result type of the lexer and analysis steps.
pub(super) type R<T = ()> = Result<T, Stop>;

/// What ends a command list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Term {
    /// The end of the text.
    Eof,
    /// An unmatched `)` (the end of `$(...)`, `<(...)`, `>(...)`).
    Paren,
}

/// What ended a simple command (or an empty one): handed up after every
/// separator, so that the analysis knows which commands run in the shell
/// itself and which in a pipeline's or a background job's subshell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum End {
    /// `;`, `;;`, a newline, `(`, `)`, the end of the text.
    Seq,
    /// `&&` or `||`: the next command runs only on a condition.
    AndOr,
    /// `|` or `|&`.
    Pipe,
    /// `&`: the whole list before it runs in the background.
    Amp,
}

/// A text that bash may run as commands of its own, handed up for the
/// analysis to read (with a new [`Lexer`]) where it knows the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Text {
    /// A here-document fed to a shell (the command was a shell reading its
    /// standard input).
    HeredocScript,
    /// A here-document with an unquoted delimiter: its substitutions run.
    HeredocBody,
    /// The content of a backquoted command substitution, unescaped.
    Backquoted,
    /// `((...))` in a script handed to another shell, read as dash does:
    /// `( (...) )`.
    DashArith,
}

/// A heredoc whose body has not been read yet.
struct Heredoc {
    delim: Vec<u8>,
    strip_tabs: bool,
    /// Unquoted delimiter: the body undergoes expansions.
    expand: bool,
    /// Id of the simple command the heredoc belongs to.
    cmd: u32,
    /// That command is a shell reading its script from standard input.
    script: bool,
}

/// One word of a simple command: a byte range of [`Cmd::buf`] and flags.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    f: u16,
    /// The word's source text: `src[rs..re]`.
    rs: usize,
    re: usize,
}

/// The simple command being collected.
struct Cmd {
    buf: Vec<u8>,
    words: Vec<Span>,
    id: u32,
    /// Standard input comes from a pipe.
    piped_in: bool,
    /// The command before it ended with `&&` or `||`.
    after_and_or: bool,
    /// Every word so far is an assignment (or a redirection).
    assigns_only: bool,
    /// Where the next word stands: 0 command position (only reserved words
    /// before it, or `for NAME do`), 1 after `for`/`select`, 2 after its
    /// NAME, 3 an argument.
    lead: u8,
    /// Where the pipeline this command belongs to starts in the source.
    pipe_start: usize,
    /// Where the last `|` before this command is in the source.
    pipe_bar: usize,
    /// The index of a `case` word at command position (after reserved
    /// words such as `{` or `time`).
    case_at: Option<usize>,
}

impl Cmd {
    /// Forgets the words (after the command was handed up, or when they
    /// turned out to be no command).
    fn clear(&mut self) {
        self.buf.clear();
        self.words.clear();
        self.assigns_only = true;
        self.lead = 0;
        self.case_at = None;
    }
}

/// One simple command as the lexer hands it up: plain data, borrowed from
/// the lexer for the time of the call.
pub(super) struct Simple<'a> {
    /// The words, redirections left out.
    pub(super) words: &'a [W<'a>],
    /// The redirection targets ([`REDIR`]; here-strings also [`HERESTR`]).
    pub(super) redirs: &'a [W<'a>],
    /// Standard input comes from a pipe.
    pub(super) piped_in: bool,
    /// The command before it ended with `&&` or `||`.
    pub(super) after_and_or: bool,
    /// Inside a command or process substitution (whose text bash reads
    /// again, line by line, when it runs).
    pub(super) in_subst: bool,
    /// Nesting depth of the text the command stands in.
    pub(super) depth: u32,
    /// The source text of the pipeline up to the end of this command.
    pub(super) pipeline: &'a [u8],
    /// The source text before the last `|` of the pipeline (what feeds this
    /// command's standard input when [`Simple::piped_in`]).
    pub(super) producer: &'a [u8],
}

/// What the lexer hands up to the analysis. The lexer only splits text; the
/// layer above implements this, so that the lexer never names it.
pub(super) trait Sink {
    /// Judges one simple command; returns whether it is a shell that reads
    /// its script from standard input (its here-documents are then scripts).
    fn command(&mut self, cmd: &Simple<'_>) -> R<bool>;

    /// A separator (or the end of a list) after a command, empty or not.
    fn end(&mut self, end: End);

    /// A newline ending a complete line of the text being read at `depth`,
    /// outside parentheses (the analysis knows whether compound commands are
    /// still open).
    fn line(&mut self, depth: u32) -> R;

    /// `( ... )`, `$( ... )`, `<( ... )` or `>( ... )` opens (`true`) or
    /// closes: the commands between run in a subshell.
    fn subshell(&mut self, open: bool);

    /// `NAME ()` (or `function NAME ()`): a function definition, whose body
    /// follows; `after` when it stands after `&&`, `||` or `|` (it is then
    /// defined only on a condition, or in a pipeline's subshell).
    fn function(&mut self, name: &[u8], after: bool);

    /// `${NAME=...}`, `${NAME:=...}`: assigns `NAME` a value not known here;
    /// `None` for a name not known either (`${!x}`).
    fn assigns(&mut self, name: Option<&[u8]>);

    /// A text bash may run (see [`Text`]), read one level deeper than `depth`.
    fn text(&mut self, text: &[u8], kind: Text, depth: u32) -> R;

    /// Takes `cost` from the work budget for texts read again.
    fn spend(&mut self, cost: usize) -> R;
}

/// Lexer state over one text (the whole command, or a script re-read from a
/// word such as the argument of `sh -c`).
pub(super) struct Lexer<'s, 'k, S: Sink> {
    src: &'s [u8],
    pos: usize,
    depth: u32,
    sink: &'k mut S,
    heredocs: Vec<Heredoc>,
    next_id: u32,
    /// Reused allocations for the words handed up.
    w_scratch: Vec<W<'static>>,
    r_scratch: Vec<W<'static>>,
    /// [`stack_mark`] of the first frame.
    stack_base: usize,
    /// Inside command or process substitutions.
    in_subst: u32,
    /// The word being read is in assignment position (only assignments
    /// before it), where `NAME[...]=` is a subscript.
    assign_pos: bool,
}

/// Whether a pipeline's text (from the start of its last simple command)
/// closes a compound command or a subshell: `}`, `)`, `fi`, `done`, `esac`.
pub(super) fn closes_compound(text: &[u8]) -> bool {
    text.iter().any(|&c| c == b')' || c == b'}')
        || text
            .split(|c| !c.is_ascii_alphanumeric() && *c != b'_')
            .any(|w| matches!(w, b"fi" | b"done" | b"esac"))
}

pub(super) fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

pub(super) fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// `NAME` or `NAME+` (the part before `=` of an assignment).
fn valid_assign_name(name: &[u8]) -> bool {
    let name = name.strip_suffix(b"+").unwrap_or(name);
    match name.split_first() {
        Some((&first, rest)) => is_name_start(first) && rest.iter().all(|&c| is_name_char(c)),
        None => false,
    }
}

/// Bytes that need no attention inside an unquoted word (class 1), inside
/// double quotes (class 2), or both (class 3).
static CLASS: [u8; 256] = {
    let mut t = [3u8; 256];
    let word_special = b" \t\r\n;&|()<>'\"`\\$*?[{}=\0";
    let mut i = 0;
    while i < word_special.len() {
        t[word_special[i] as usize] &= !1;
        i += 1;
    }
    let dquote_special = b"\"\\$`\0";
    let mut i = 0;
    while i < dquote_special.len() {
        t[dquote_special[i] as usize] &= !2;
        i += 1;
    }
    t
};

/// Empties a word list and returns its allocation for words of another
/// lifetime (the in-place `collect` reuses the buffer).
fn recycle<'b>(mut v: Vec<W<'_>>) -> Vec<W<'b>> {
    v.clear();
    v.into_iter().map(|_| -> W<'b> { unreachable!() }).collect()
}

/// Length of the run of bytes of class `class` at the start of `s`.
fn run_len(s: &[u8], class: u8) -> usize {
    s.iter()
        .position(|&c| CLASS[c as usize] & class == 0)
        .unwrap_or(s.len())
}

impl<'s, 'k, S: Sink> Lexer<'s, 'k, S> {
    /// A lexer over `src` at nesting depth `depth`, handing what it reads to
    /// `sink`; `stack_base` is the [`stack_mark`] of the first frame.
    pub(super) fn new(src: &'s [u8], depth: u32, stack_base: usize, sink: &'k mut S) -> Self {
        Lexer {
            src,
            pos: 0,
            depth,
            sink,
            heredocs: Vec::new(),
            next_id: 0,
            w_scratch: Vec::new(),
            r_scratch: Vec::new(),
            stack_base,
            in_subst: 0,
            assign_pos: false,
        }
    }

    /// Reads the whole text as a script.
    pub(super) fn script(mut self) -> R {
        self.parse_list(Term::Eof)
    }

    /// Reads the whole text as the body of a here-document with an unquoted
    /// delimiter: only its expansions and substitutions count.
    pub(super) fn expanding_body(mut self) -> R {
        let mut scratch = Vec::new();
        let mut f = 0;
        self.dquote(&mut scratch, &mut f, false)
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn peek_at(&self, off: usize) -> Option<u8> {
        self.src.get(self.pos + off).copied()
    }

    fn enter(&mut self) -> R {
        self.depth += 1;
        if self.depth > MAX_DEPTH || stack_low(self.stack_base) {
            Err(Stop::TooDeep)
        } else {
            Ok(())
        }
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn new_cmd(&mut self, top: bool) -> Cmd {
        self.next_id = self.next_id.wrapping_add(1);
        let (bytes, words) = if top {
            (self.src.len().min(512), 16)
        } else {
            (0, 0)
        };
        Cmd {
            buf: Vec::with_capacity(bytes),
            words: Vec::with_capacity(words),
            id: self.next_id,
            piped_in: false,
            after_and_or: false,
            assigns_only: true,
            lead: 0,
            pipe_start: self.pos,
            pipe_bar: 0,
            case_at: None,
        }
    }

    /// Takes `cost` from the work budget.
    fn spend(&mut self, cost: usize) -> R {
        self.sink.spend(cost)
    }

    /// Skips spaces, tabs, carriage returns and line continuations.
    fn skip_blanks(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\r') => self.pos += 1,
                Some(b'\\') if self.peek_at(1) == Some(b'\n') => self.pos += 2,
                _ => return,
            }
        }
    }

    /// Skips a comment up to (not including) the newline.
    fn skip_comment(&mut self) {
        match self.src[self.pos..].iter().position(|&c| c == b'\n') {
            Some(i) => self.pos += i,
            None => self.pos = self.src.len(),
        }
    }

    /// Parses a list of commands up to `term`.
    fn parse_list(&mut self, term: Term) -> R {
        let mut cmd = self.new_cmd(term == Term::Eof);
        let mut paren: u32 = 0;
        let mut case_depth: u32 = 0;
        // After `&&`, `||`, `|` or `|&`, before the next command's first
        // word: the list goes on across newlines, and ends nowhere else.
        let mut pending = false;
        // Reading the patterns of a `case` item (after `in`, `;;`, `;&`,
        // `;;&`), where `(`, `|` and `)` belong to the pattern.
        let mut case_pat = false;
        loop {
            self.skip_blanks();
            let at = self.pos;
            let Some(c) = self.peek() else {
                if pending {
                    // `a && # ...` then the end: bash rejects the line.
                    return Err(Stop::Syntax);
                }
                self.finish(&mut cmd)?;
                self.sink.end(End::Seq);
                if term == Term::Paren || paren > 0 {
                    // An unclosed `(` or `$(`: bash rejects it too, unless
                    // the lexer took a `)` for something else.
                    return Err(Stop::Unread);
                }
                return Ok(());
            };
            match c {
                b'\n' => {
                    self.pos += 1;
                    self.finish(&mut cmd)?;
                    if !pending {
                        self.sink.end(End::Seq);
                    }
                    self.heredoc_bodies()?;
                    cmd.pipe_start = self.pos;
                    if term == Term::Eof && paren == 0 && !pending {
                        self.sink.line(self.depth)?;
                    }
                }
                b'#' => self.skip_comment(),
                b';' | b')' if pending => return Err(Stop::Syntax),
                b';' => {
                    // `;`, `;;`, `;&`, `;;&`
                    let start = self.pos;
                    self.pos += 1;
                    while matches!(self.peek(), Some(b';' | b'&')) {
                        self.pos += 1;
                    }
                    if case_depth > 0 && self.pos - start > 1 {
                        case_pat = true;
                    }
                    self.finish(&mut cmd)?;
                    self.sink.end(End::Seq);
                    cmd.pipe_start = self.pos;
                }
                b'&' if self.peek_at(1) == Some(b'>') => {
                    pending = false;
                    self.redirect(&mut cmd)?;
                }
                b'&' => {
                    if pending {
                        return Err(Stop::Syntax);
                    }
                    self.pos += 1;
                    let and = self.peek() == Some(b'&');
                    if and {
                        self.pos += 1;
                        pending = true;
                    }
                    self.finish(&mut cmd)?;
                    self.sink.end(if and { End::AndOr } else { End::Amp });
                    cmd.after_and_or = and;
                    cmd.pipe_start = self.pos;
                }
                b'|' if case_pat => self.pos += 1,
                b'(' if case_pat
                    && (cmd.words.is_empty()
                        || cmd
                            .words
                            .last()
                            .is_some_and(|w| w.f == 0 && &cmd.buf[w.start..w.end] == b"in")) =>
                {
                    // The optional `(` before a pattern.
                    self.pos += 1;
                }
                b')' if case_pat => {
                    self.pos += 1;
                    case_pat = false;
                    if cmd.case_at.is_some() {
                        self.finish(&mut cmd)?;
                    } else {
                        // A pattern is not a command.
                        cmd.clear();
                    }
                    cmd.pipe_start = self.pos;
                }
                b'|' => {
                    if pending {
                        return Err(Stop::Syntax);
                    }
                    pending = true;
                    let bar = self.pos;
                    self.pos += 1;
                    let piped = match self.peek() {
                        Some(b'|') => {
                            self.pos += 1;
                            false
                        }
                        Some(b'&') => {
                            self.pos += 1;
                            true
                        }
                        _ => true,
                    };
                    self.finish(&mut cmd)?;
                    self.sink.end(if piped { End::Pipe } else { End::AndOr });
                    if piped {
                        cmd.piped_in = true;
                        cmd.pipe_bar = bar;
                    } else {
                        cmd.after_and_or = true;
                        cmd.pipe_start = self.pos;
                    }
                }
                b'(' if self.peek_at(1) == Some(b'(')
                    && (cmd.words.is_empty()
                        || (cmd.words.len() == 1
                            && cmd.words[0].f == 0
                            && &cmd.buf[cmd.words[0].start..cmd.words[0].end] == b"for"))
                    && self.try_arith(2, b')')? =>
                {
                    pending = false;
                    if self.depth > 0 && cmd.words.is_empty() && self.pos >= at + 4 {
                        // A script handed to another shell may run in dash,
                        // where `((...))` is two nested subshells: judge that
                        // reading too (what it cannot parse adds nothing).
                        let inner = &self.src[at + 2..self.pos - 2];
                        let mut text = Vec::with_capacity(inner.len() + 6);
                        text.extend_from_slice(b"( (");
                        text.extend_from_slice(inner);
                        text.extend_from_slice(b") )");
                        if let Err(Stop::TooDeep) =
                            self.sink.text(&text, Text::DashArith, self.depth)
                        {
                            return Err(Stop::TooDeep);
                        }
                    }
                }
                b'(' => {
                    pending = false;
                    let empty_parens = self.src[self.pos + 1..]
                        .iter()
                        .find(|c| !matches!(c, b' ' | b'\t'))
                        == Some(&b')');
                    if case_depth == 0 && self.paren_is_syntax_error(&cmd) {
                        // `echo a (b)`, `A=1 (x)`, `>f (x)`: bash rejects
                        // the line.
                        return Err(Stop::Syntax);
                    }
                    if !cmd.words.is_empty() && empty_parens {
                        // `NAME ()`: a function definition, no command. The
                        // reserved words before it (`{`, `then`, `function`)
                        // are handed up on their own.
                        let name = cmd.words.pop().expect("a word");
                        let name_bytes = cmd.buf[name.start..name.end].to_vec();
                        cmd.buf.truncate(name.start);
                        let after = cmd.after_and_or || cmd.piped_in;
                        self.finish(&mut cmd)?;
                        if name.f & !QUOTED == 0 {
                            self.sink.function(&name_bytes, after);
                        }
                        cmd.clear();
                        self.pos += 1;
                        while matches!(self.peek(), Some(b' ' | b'\t')) {
                            self.pos += 1;
                        }
                        self.pos += 1;
                        cmd.pipe_start = self.pos;
                        continue;
                    }
                    self.pos += 1;
                    self.finish(&mut cmd)?;
                    cmd.pipe_start = self.pos;
                    paren += 1;
                    self.sink.subshell(true);
                }
                b')' => {
                    self.pos += 1;
                    self.finish(&mut cmd)?;
                    self.sink.end(End::Seq);
                    if paren > 0 {
                        paren -= 1;
                        self.sink.subshell(false);
                    } else if case_depth > 0 {
                        // end of a `case` pattern
                    } else if term == Term::Paren {
                        return Ok(());
                    } else {
                        // A stray `)`: as above.
                        return Err(Stop::Unread);
                    }
                }
                b'<' | b'>' => {
                    pending = false;
                    self.redirect(&mut cmd)?;
                }
                _ => {
                    pending = false;
                    let start = cmd.buf.len();
                    let before = self.pos;
                    self.assign_pos = cmd.assigns_only;
                    let f = self.read_word(&mut cmd.buf, true);
                    self.assign_pos = false;
                    let f = f?;
                    if self.pos == before {
                        return Err(Stop::Unread);
                    }
                    if f & IO_NUMBER != 0 {
                        continue;
                    }
                    let word = &cmd.buf[start..];
                    let lead = cmd.lead == 0 && f == 0;
                    let cond = lead && word == b"[[";
                    cmd.assigns_only &= f & ASSIGN != 0;
                    cmd.lead = match (cmd.lead, f == 0, word) {
                        (
                            0,
                            true,
                            b"{" | b"!" | b"then" | b"do" | b"else" | b"elif" | b"if" | b"while"
                            | b"until" | b"time",
                        ) => 0,
                        (0, true, b"for" | b"select") => 1,
                        (1, _, _) => 2,
                        (2, true, b"do") => 0,
                        _ => 3,
                    };
                    if lead {
                        match &cmd.buf[start..] {
                            b"case" => {
                                case_depth += 1;
                                cmd.case_at = Some(cmd.words.len());
                            }
                            b"esac" => {
                                case_depth = case_depth.saturating_sub(1);
                                case_pat = false;
                            }
                            _ => {}
                        }
                    }
                    if f == 0
                        && &cmd.buf[start..] == b"in"
                        && cmd.case_at.is_some_and(|k| cmd.words.len() == k + 2)
                    {
                        case_pat = true;
                    }
                    cmd.words.push(Span {
                        start,
                        end: cmd.buf.len(),
                        f,
                        rs: before,
                        re: self.pos,
                    });
                    if cond {
                        self.cond_expr()?;
                    }
                }
            }
        }
    }

    /// Whether a `(` at the current position, after a blank, is a syntax
    /// error: the simple command already has words that are not only
    /// reserved words (`if (x)`), `time -p`, `coproc [NAME]`, or a function
    /// name (`f ()`, `function f ()`). A `(` glued to a word (`@(x)`, an
    /// extglob when enabled) is left to the usual reading.
    fn paren_is_syntax_error(&self, cmd: &Cmd) -> bool {
        if cmd.words.is_empty()
            || cmd.lead == 0
            || !self
                .pos
                .checked_sub(1)
                .is_some_and(|k| matches!(self.src[k], b' ' | b'\t'))
        {
            return false;
        }
        let word = |k: usize| {
            cmd.words
                .get(k)
                .filter(|s| s.f == 0)
                .map(|s| &cmd.buf[s.start..s.end])
        };
        // Reserved words before a function name (`{ f ()`, `then f ()`,
        // `! f ()`) leave it a definition.
        let lead = (0..cmd.words.len())
            .take_while(|&k| {
                matches!(
                    word(k),
                    Some(
                        b"{" | b"!"
                            | b"then"
                            | b"do"
                            | b"else"
                            | b"elif"
                            | b"if"
                            | b"while"
                            | b"until"
                    )
                )
            })
            .count();
        let n = cmd.words.len() - lead;
        let first = word(lead);
        let empty_parens = self.src[self.pos + 1..]
            .iter()
            .find(|c| !matches!(c, b' ' | b'\t'))
            == Some(&b')');
        let fn_def = empty_parens
            && ((n == 1 && first.is_some())
                || (n == 2 && first == Some(b"function".as_slice()) && word(lead + 1).is_some()));
        let first = word(0);
        let n = cmd.words.len();
        !(fn_def
            || first == Some(b"coproc".as_slice())
            || (n == 2 && first == Some(b"time".as_slice()) && word(1) == Some(b"-p".as_slice())))
    }

    /// Ends the current simple command: hands it up and starts a new one.
    fn finish(&mut self, cmd: &mut Cmd) -> R {
        if cmd.words.is_empty() {
            return Ok(());
        }
        let src = self.src;
        let mut words = recycle(std::mem::take(&mut self.w_scratch));
        let mut redirs = recycle(std::mem::take(&mut self.r_scratch));
        for s in &cmd.words {
            let w = W {
                b: &cmd.buf[s.start..s.end],
                f: s.f,
                raw: &src[s.rs..s.re],
            };
            if s.f & REDIR == 0 {
                words.push(w);
            } else {
                redirs.push(w);
            }
        }
        let end = self.pos.min(src.len());
        let simple = Simple {
            words: &words,
            redirs: &redirs,
            piped_in: cmd.piped_in,
            after_and_or: cmd.after_and_or,
            in_subst: self.in_subst > 0,
            depth: self.depth,
            pipeline: &src[cmd.pipe_start.min(end)..end],
            producer: &src[cmd.pipe_start.min(cmd.pipe_bar)..cmd.pipe_bar.min(end)],
        };
        let bare_shell = self.sink.command(&simple);
        self.w_scratch = recycle(words);
        self.r_scratch = recycle(redirs);
        if bare_shell? {
            for hd in self.heredocs.iter_mut().filter(|h| h.cmd == cmd.id) {
                hd.script = true;
            }
        }
        self.next_id = self.next_id.wrapping_add(1);
        cmd.id = self.next_id;
        cmd.piped_in = false;
        cmd.after_and_or = false;
        cmd.clear();
        Ok(())
    }

    /// Reads a redirection operator and its target (or registers a heredoc).
    fn redirect(&mut self, cmd: &mut Cmd) -> R {
        let s = &self.src[self.pos..];
        if s.len() >= 2 && (s[0] == b'<' || s[0] == b'>') && s[1] == b'(' {
            // Process substitution used as an argument.
            self.process_subst(cmd, 0)?;
            return Ok(());
        }
        enum Kind {
            Plain,
            HereStr,
            HereDoc(bool),
        }
        let (len, kind) = match s {
            [b'<', b'<', b'<', ..] => (3, Kind::HereStr),
            [b'<', b'<', b'-', ..] => (3, Kind::HereDoc(true)),
            [b'<', b'<', ..] => (2, Kind::HereDoc(false)),
            [b'&', b'>', b'>', ..] => (3, Kind::Plain),
            [b'<', b'>' | b'&', ..] | [b'>', b'>' | b'&' | b'|', ..] | [b'&', b'>', ..] => {
                (2, Kind::Plain)
            }
            _ => (1, Kind::Plain),
        };
        self.pos += len;
        self.skip_blanks();
        match kind {
            Kind::HereDoc(strip_tabs) => {
                let (delim, quoted) = self.read_delim()?;
                self.heredocs.push(Heredoc {
                    delim,
                    strip_tabs,
                    expand: !quoted,
                    cmd: cmd.id,
                    script: false,
                });
                Ok(())
            }
            Kind::HereStr | Kind::Plain => {
                let extra = if matches!(kind, Kind::HereStr) {
                    REDIR | HERESTR
                } else {
                    REDIR
                };
                let s = &self.src[self.pos..];
                if s.len() >= 2 && (s[0] == b'<' || s[0] == b'>') && s[1] == b'(' {
                    return self.process_subst(cmd, extra);
                }
                match self.peek() {
                    None | Some(b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>' | b'#') => {
                        return Err(Stop::Broken)
                    }
                    _ => {}
                }
                let start = cmd.buf.len();
                let before = self.pos;
                let f = self.read_word(&mut cmd.buf, false)?;
                if self.pos == before || f & IO_NUMBER != 0 {
                    return Err(Stop::Unread);
                }
                cmd.words.push(Span {
                    start,
                    end: cmd.buf.len(),
                    f: f | extra,
                    rs: before,
                    re: self.pos,
                });
                Ok(())
            }
        }
    }

    /// `<(...)` or `>(...)`: analyses the list and adds an unknown word.
    fn process_subst(&mut self, cmd: &mut Cmd, extra: u16) -> R {
        let rs = self.pos;
        self.pos += 2;
        self.subst()?;
        let start = cmd.buf.len();
        cmd.buf.push(S_ANY);
        cmd.words.push(Span {
            start,
            end: start + 1,
            f: DYN | extra,
            rs,
            re: self.pos,
        });
        Ok(())
    }

    /// The list of `$(...)`, `<(...)` or `>(...)` (after the opening bytes),
    /// up to its `)`: a subshell, read again when it runs (aliases defined on
    /// an earlier line of its text are in effect there).
    fn subst(&mut self) -> R {
        self.enter()?;
        self.in_subst += 1;
        self.sink.subshell(true);
        let listed = self.parse_list(Term::Paren);
        self.sink.subshell(false);
        self.in_subst -= 1;
        listed?;
        self.leave();
        Ok(())
    }

    /// Reads a heredoc delimiter word: quote removal, no expansion.
    fn read_delim(&mut self) -> R<(Vec<u8>, bool)> {
        let mut d = Vec::new();
        let mut quoted = false;
        let begin = self.pos;
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' | b'\r' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>' => {
                    break
                }
                b'\'' => {
                    self.pos += 1;
                    quoted = true;
                    let rest = &self.src[self.pos..];
                    let end = rest.iter().position(|&c| c == b'\'').ok_or(Stop::Broken)?;
                    d.extend_from_slice(&rest[..end]);
                    self.pos += end + 1;
                }
                b'"' => {
                    self.pos += 1;
                    quoted = true;
                    loop {
                        let c = self.peek().ok_or(Stop::Broken)?;
                        self.pos += 1;
                        match c {
                            b'"' => break,
                            b'\\' => match self.peek() {
                                Some(n @ (b'$' | b'`' | b'"' | b'\\')) => {
                                    d.push(n);
                                    self.pos += 1;
                                }
                                Some(b'\n') => self.pos += 1,
                                _ => d.push(b'\\'),
                            },
                            _ => d.push(c),
                        }
                    }
                }
                b'\\' if self.peek_at(1) == Some(b'\n') => self.pos += 2,
                b'\\' => {
                    quoted = true;
                    self.pos += 1;
                    if let Some(n) = self.peek() {
                        d.push(n);
                        self.pos += 1;
                    }
                }
                _ => {
                    d.push(c);
                    self.pos += 1;
                }
            }
        }
        if self.pos == begin {
            return Err(Stop::Broken);
        }
        Ok((d, quoted))
    }

    /// Reads the bodies of the pending heredocs, starting after a newline.
    /// Bodies fed to a shell are analysed as scripts; bodies with an unquoted
    /// delimiter are scanned for substitutions; others are skipped.
    fn heredoc_bodies(&mut self) -> R {
        if self.heredocs.is_empty() {
            return Ok(());
        }
        let docs = std::mem::take(&mut self.heredocs);
        let src = self.src;
        for hd in &docs {
            let body_start = self.pos;
            let mut body_end = src.len();
            // With an unquoted delimiter, `\`+newline joins lines before the
            // delimiter is looked for.
            let mut logical: Vec<u8> = Vec::new();
            let mut joining = false;
            while self.pos < src.len() {
                let ls = self.pos;
                let le = src[ls..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(src.len(), |i| ls + i);
                self.pos = (le + 1).min(src.len());
                let mut line = &src[ls..le];
                if hd.strip_tabs {
                    while let [b'\t', rest @ ..] = line {
                        line = rest;
                    }
                }
                if hd.expand {
                    let trailing = line.iter().rev().take_while(|&&c| c == b'\\').count();
                    if trailing % 2 == 1 && le < src.len() {
                        if !joining {
                            logical.clear();
                        }
                        logical.extend_from_slice(&line[..line.len() - 1]);
                        joining = true;
                        continue;
                    }
                    if joining {
                        logical.extend_from_slice(line);
                        joining = false;
                        let l = logical.strip_suffix(b"\r").unwrap_or(&logical);
                        if l == hd.delim.as_slice() {
                            body_end = ls;
                            break;
                        }
                        continue;
                    }
                }
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if line == hd.delim.as_slice() {
                    body_end = ls;
                    break;
                }
            }
            let body = &src[body_start..body_end];
            if hd.script {
                self.sink.text(body, Text::HeredocScript, self.depth)?;
            } else if hd.expand {
                self.sink.text(body, Text::HeredocBody, self.depth)?;
            }
        }
        Ok(())
    }

    /// Reads one word into `out` and returns its flags. The caller ensures
    /// the current byte starts a word.
    fn read_word(&mut self, out: &mut Vec<u8>, allow_array: bool) -> R<u16> {
        let start = out.len();
        let mut f: u16 = 0;
        // Assignment detection: 0 scanning the name, 1 assignment, 2 not.
        let mut asg: u8 = 0;
        let mut asg_end = usize::MAX;
        // Brace expansion: 0 none, 1 after `{`, 2 after `{` and `,` or `..`.
        let mut brace: u8 = 0;
        while let Some(c) = self.peek() {
            // Fast path: a run of ordinary bytes.
            let run = run_len(&self.src[self.pos..], 1);
            if run > 0 {
                let bytes = &self.src[self.pos..self.pos + run];
                if asg == 0 && !bytes.iter().all(|&c| is_name_char(c) || c == b'+') {
                    asg = 2;
                }
                if brace == 1
                    && bytes
                        .iter()
                        .enumerate()
                        .any(|(k, &c)| c == b',' || (c == b'.' && bytes.get(k + 1) == Some(&b'.')))
                {
                    brace = 2;
                }
                out.extend_from_slice(bytes);
                self.pos += run;
                continue;
            }
            match c {
                b' ' | b'\t' | b'\r' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>' => {
                    if c == b'(' && allow_array && asg == 1 && out.len() == asg_end {
                        self.pos += 1;
                        self.array_value()?;
                        continue;
                    }
                    if (c == b'<' || c == b'>')
                        && f & !BRACE == 0
                        && out.len() > start
                        && (out[start..].iter().all(u8::is_ascii_digit)
                            || (out.len() > start + 2
                                && out[start] == b'{'
                                && out[out.len() - 1] == b'}'
                                && valid_assign_name(&out[start + 1..out.len() - 1])))
                    {
                        out.truncate(start);
                        return Ok(IO_NUMBER);
                    }
                    break;
                }
                b'\\' => {
                    match self.peek_at(1) {
                        Some(b'\n') => self.pos += 2,
                        Some(d) => {
                            out.push(d);
                            self.pos += 2;
                            f |= QUOTED;
                        }
                        None => {
                            out.push(b'\\');
                            self.pos += 1;
                        }
                    }
                    if asg == 0 {
                        asg = 2;
                    }
                }
                b'\'' => {
                    self.pos += 1;
                    self.single(out, &mut f)?;
                    f |= QUOTED;
                    if asg == 0 {
                        asg = 2;
                    }
                }
                b'"' => {
                    self.pos += 1;
                    self.dquote(out, &mut f, true)?;
                    f |= QUOTED;
                    if asg == 0 {
                        asg = 2;
                    }
                }
                b'$' => {
                    self.dollar(out, &mut f, true)?;
                    if asg == 0 {
                        asg = 2;
                    }
                }
                b'`' => {
                    self.backtick(out, &mut f, true)?;
                    if asg == 0 {
                        asg = 2;
                    }
                }
                b'*' | b'?' => {
                    self.pos += 1;
                    out.push(if c == b'*' { S_STAR } else { S_ONE });
                    f |= GLOB;
                    if asg == 0 {
                        asg = 2;
                    }
                }
                b'[' if allow_array
                    && self.assign_pos
                    && asg == 0
                    && out.len() > start
                    && valid_assign_name(&out[start..])
                    && !out[start..].ends_with(b"+")
                    && self.subscript()? => {}
                b'[' => {
                    match self.bracket_len() {
                        Some(len) => {
                            self.pos += len;
                            out.push(S_ONE);
                            f |= GLOB;
                        }
                        None => {
                            self.pos += 1;
                            out.push(b'[');
                        }
                    }
                    if asg == 0 {
                        asg = 2;
                    }
                }
                S_ANY => {
                    // Sentinel carried into a re-parsed script: unknown value.
                    self.pos += 1;
                    out.push(S_ANY);
                    f |= DYN | SPLIT;
                    if asg == 0 {
                        asg = 2;
                    }
                }
                _ => {
                    self.pos += 1;
                    if asg == 0 {
                        if c == b'=' {
                            if valid_assign_name(&out[start..]) {
                                asg = 1;
                                asg_end = out.len() + 1;
                            } else {
                                asg = 2;
                            }
                        } else if !(is_name_char(c) || c == b'+') {
                            asg = 2;
                        }
                    }
                    match c {
                        b'{' if brace == 0 => brace = 1,
                        b'}' if brace == 2 => f |= BRACE,
                        _ => {}
                    }
                    out.push(c);
                }
            }
        }
        if asg == 1 {
            f |= ASSIGN;
        }
        Ok(f)
    }

    /// Tries to read an arithmetic text that starts `skip` bytes ahead
    /// (after `((`, `$((` or `$[`) and ends with `close` (`))` when `close`
    /// is `)`, else `]`). Substitutions inside are analysed; `<<` is a shift.
    /// On success the position is after the closing bytes; otherwise it is
    /// restored, the scan is charged to the budget and `false` returned so
    /// that the caller reads the text as commands instead (`$( (a) )`).
    fn try_arith(&mut self, skip: usize, close: u8) -> R<bool> {
        self.enter()?;
        let result = self.arith_body(skip, close);
        self.leave();
        result
    }

    fn arith_body(&mut self, skip: usize, close: u8) -> R<bool> {
        let begin = self.pos;
        self.pos += skip;
        let open = if close == b')' { b'(' } else { b'[' };
        let mut depth: u32 = 0;
        let mut scratch = Vec::new();
        let mut f = 0u16;
        let ok = loop {
            let Some(c) = self.peek() else { break false };
            match c {
                _ if c == open => {
                    depth += 1;
                    self.pos += 1;
                }
                _ if c == close && depth > 0 => {
                    depth -= 1;
                    self.pos += 1;
                }
                _ if c == close => {
                    if close == b']' {
                        self.pos += 1;
                        break true;
                    }
                    if self.peek_at(1) == Some(b')') {
                        self.pos += 2;
                        break true;
                    }
                    break false;
                }
                b'$' => self.dollar(&mut scratch, &mut f, false)?,
                b'`' => self.backtick(&mut scratch, &mut f, false)?,
                b'\'' => {
                    self.pos += 1;
                    if self.single(&mut scratch, &mut f).is_err() {
                        break false;
                    }
                }
                b'"' => {
                    self.pos += 1;
                    self.dquote(&mut scratch, &mut f, true)?;
                }
                b'\\' => self.pos += 2,
                _ => self.pos += 1,
            }
            scratch.clear();
        };
        if !ok {
            let scanned = self.pos.min(self.src.len()) - begin;
            self.pos = begin;
            self.spend(scanned)?;
        }
        self.pos = self.pos.min(self.src.len());
        Ok(ok)
    }

    /// After `NAME` in an assignment position: reads a subscript `[...]`
    /// (arithmetic: substitutions analysed, `<<` a shift) when `=` or `+=`
    /// follows it; otherwise restores the position and returns `false`.
    fn subscript(&mut self) -> R<bool> {
        let begin = self.pos;
        if !self.try_arith(1, b']')? {
            return Ok(false);
        }
        match (self.peek(), self.peek_at(1)) {
            (Some(b'='), _) | (Some(b'+'), Some(b'=')) => Ok(true),
            _ => {
                self.pos = begin;
                Ok(false)
            }
        }
    }

    /// The rest of `[[ ... ]]` (after `[[`): runs nothing but the
    /// substitutions of its words. `(`, `)`, `<`, `>`, `&&`, `||` are its own
    /// operators, and the word after `=~` is a regular expression whose
    /// parentheses and `|` belong to the word.
    fn cond_expr(&mut self) -> R {
        let mut scratch = Vec::new();
        let mut regex = false;
        loop {
            loop {
                self.skip_blanks();
                if self.peek() == Some(b'\n') {
                    self.pos += 1;
                } else {
                    break;
                }
            }
            let Some(c) = self.peek() else {
                return Err(Stop::Broken);
            };
            let rest = &self.src[self.pos..];
            if rest.starts_with(b"]]")
                && matches!(
                    rest.get(2),
                    None | Some(b' ' | b'\t' | b'\r' | b'\n' | b';' | b'&' | b'|' | b')')
                )
            {
                self.pos += 2;
                return Ok(());
            }
            if regex {
                regex = false;
                self.regex_word()?;
                continue;
            }
            match c {
                b'(' | b')' | b'<' | b'>' | b'!' | b';' => self.pos += 1,
                b'&' | b'|' => {
                    self.pos += 1;
                    if self.peek() == Some(c) {
                        self.pos += 1;
                    }
                }
                _ => {
                    scratch.clear();
                    let before = self.pos;
                    let f = self.read_word(&mut scratch, false)?;
                    if self.pos == before {
                        return Err(Stop::Unread);
                    }
                    regex = f == 0 && scratch == b"=~";
                }
            }
        }
    }

    /// The regular expression after `=~`: parentheses nest, and blanks, `|`,
    /// `<`, `>` inside them belong to the word.
    fn regex_word(&mut self) -> R {
        let mut depth: u32 = 0;
        let mut scratch = Vec::new();
        let mut f = 0u16;
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' | b'\r' | b'\n' if depth == 0 => break,
                b'(' => {
                    depth += 1;
                    self.pos += 1;
                }
                b')' if depth == 0 => break,
                b')' => {
                    depth -= 1;
                    self.pos += 1;
                }
                b'\\' => self.pos = (self.pos + 2).min(self.src.len()),
                b'\'' => {
                    self.pos += 1;
                    self.single(&mut scratch, &mut f)?;
                }
                b'"' => {
                    self.pos += 1;
                    self.dquote(&mut scratch, &mut f, true)?;
                }
                b'$' => self.dollar(&mut scratch, &mut f, false)?,
                b'`' => self.backtick(&mut scratch, &mut f, false)?,
                _ => self.pos += 1,
            }
            scratch.clear();
        }
        Ok(())
    }

    /// Length of a bracket expression `[...]` at the current position, if
    /// one closes within 16 bytes on the same plain word.
    fn bracket_len(&self) -> Option<usize> {
        let s = &self.src[self.pos + 1..];
        let s = &s[..s.len().min(16)];
        let mut i = 0;
        if matches!(s.first(), Some(b'!' | b'^')) {
            i = 1;
        }
        if s.get(i) == Some(&b']') {
            i += 1;
        }
        while i < s.len() {
            match s[i] {
                b']' => return Some(i + 2),
                b' ' | b'\t' | b'\r' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
                | b'\'' | b'"' | b'\\' | b'$' | b'`' => return None,
                _ => i += 1,
            }
        }
        None
    }

    /// The `( ... )` of an array assignment `NAME=( ... )`; the elements are
    /// values, but their substitutions are still analysed.
    fn array_value(&mut self) -> R {
        let mut scratch = Vec::new();
        loop {
            loop {
                self.skip_blanks();
                match self.peek() {
                    Some(b'\n') => self.pos += 1,
                    Some(b'#') => self.skip_comment(),
                    _ => break,
                }
            }
            let s = &self.src[self.pos..];
            if s.len() >= 2 && (s[0] == b'<' || s[0] == b'>') && s[1] == b'(' {
                // A process substitution is an element.
                self.pos += 2;
                self.subst()?;
                continue;
            }
            match self.peek() {
                None | Some(b';' | b'&' | b'|' | b'(' | b'<' | b'>') => return Err(Stop::Broken),
                Some(b')') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => {
                    let before = self.pos;
                    self.read_word(&mut scratch, false)?;
                    if self.pos == before {
                        return Err(Stop::Unread);
                    }
                    scratch.clear();
                }
            }
        }
    }

    /// The inside of `'...'` (after the opening quote).
    fn single(&mut self, out: &mut Vec<u8>, f: &mut u16) -> R {
        let rest = &self.src[self.pos..];
        let end = rest.iter().position(|&c| c == b'\'').ok_or(Stop::Broken)?;
        let content = &rest[..end];
        if content.contains(&S_ANY) {
            *f |= DYN;
        }
        out.extend_from_slice(content);
        self.pos += end + 1;
        Ok(())
    }

    /// The inside of `"..."` (after the opening quote) when `terminated`;
    /// otherwise an expanding heredoc body up to the end of the text.
    fn dquote(&mut self, out: &mut Vec<u8>, f: &mut u16, terminated: bool) -> R {
        loop {
            let run = run_len(&self.src[self.pos..], 2);
            if run > 0 {
                out.extend_from_slice(&self.src[self.pos..self.pos + run]);
                self.pos += run;
            }
            let Some(c) = self.peek() else {
                return if terminated {
                    Err(Stop::Broken)
                } else {
                    Ok(())
                };
            };
            match c {
                b'"' if terminated => {
                    self.pos += 1;
                    return Ok(());
                }
                b'\\' => match self.peek_at(1) {
                    Some(b'\n') => self.pos += 2,
                    Some(d @ (b'$' | b'`' | b'"' | b'\\')) => {
                        out.push(d);
                        self.pos += 2;
                    }
                    _ => {
                        out.push(b'\\');
                        self.pos += 1;
                    }
                },
                b'$' => self.dollar(out, f, false)?,
                b'`' => self.backtick(out, f, false)?,
                S_ANY => {
                    self.pos += 1;
                    out.push(S_ANY);
                    *f |= DYN;
                }
                _ => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// Records an expansion in the current word.
    fn expansion(&mut self, out: &mut Vec<u8>, f: &mut u16, split: bool) {
        out.push(S_ANY);
        *f |= DYN;
        if split {
            *f |= SPLIT;
        }
    }

    /// Something starting with `$` (the current byte).
    fn dollar(&mut self, out: &mut Vec<u8>, f: &mut u16, unquoted: bool) -> R {
        match self.peek_at(1) {
            Some(b'(') if self.peek_at(2) == Some(b'(') && self.try_arith(3, b')')? => {
                // `$((...))`: arithmetic; its substitutions were analysed.
                self.expansion(out, f, unquoted);
            }
            Some(b'[') if self.try_arith(2, b']')? => {
                // `$[...]`: old-style arithmetic.
                self.expansion(out, f, unquoted);
            }
            Some(b'(') => {
                // `$(...)` (or `$((...))` that is not arithmetic).
                self.pos += 2;
                self.subst()?;
                self.expansion(out, f, unquoted);
            }
            Some(b'{') => {
                self.pos += 2;
                self.enter()?;
                let at = self.param_body(!unquoted)?;
                self.leave();
                self.expansion(out, f, unquoted || at);
            }
            Some(b'\'') if unquoted => {
                self.pos += 2;
                self.ansi_c(out, f)?;
                *f |= QUOTED;
            }
            Some(b'"') if unquoted => {
                self.pos += 2;
                self.dquote(out, f, true)?;
                *f |= QUOTED;
            }
            Some(c) if is_name_start(c) => {
                let s = self.pos + 1;
                let mut e = s;
                while e < self.src.len() && is_name_char(self.src[e]) {
                    e += 1;
                }
                self.pos = e;
                self.expansion(out, f, unquoted);
            }
            Some(c)
                if c.is_ascii_digit()
                    || matches!(c, b'@' | b'*' | b'#' | b'?' | b'-' | b'$' | b'!') =>
            {
                self.pos += 2;
                self.expansion(out, f, unquoted || c == b'@');
            }
            _ => {
                out.push(b'$');
                self.pos += 1;
            }
        }
        Ok(())
    }

    /// The inside of `${...}` (after `${`). Returns whether it may expand to
    /// several words (`@`).
    fn param_body(&mut self, in_dquote: bool) -> R<bool> {
        let s = self.pos;
        while self.peek().is_some_and(is_name_char) {
            self.pos += 1;
        }
        let name_end = self.pos;
        let rest = &self.src[name_end..];
        let assigns = |r: &[u8]| r.starts_with(b"=") || r.starts_with(b":=");
        let subscript_assigns = rest.starts_with(b"[")
            && rest
                .iter()
                .position(|&c| c == b']')
                .is_some_and(|k| assigns(&rest[k + 1..]));
        if assigns(rest) || subscript_assigns {
            // `${NAME=value}`, `${NAME:=value}`, `${NAME[k]:=value}`.
            let name = &self.src[s..name_end];
            self.sink.assigns(Some(name).filter(|n| !n.is_empty()));
        } else if s == name_end {
            // `${!NAME}` and other special forms.
            if rest.starts_with(b"!") {
                self.sink.assigns(None);
            }
        }
        let mut at = false;
        let mut scratch = Vec::new();
        let mut sf = 0u16;
        loop {
            let c = self.peek().ok_or(Stop::Broken)?;
            match c {
                b'}' => {
                    self.pos += 1;
                    return Ok(at);
                }
                b'\\' => {
                    if self.pos + 1 >= self.src.len() {
                        return Err(Stop::Broken);
                    }
                    self.pos += 2;
                }
                b'\'' if !in_dquote => {
                    self.pos += 1;
                    self.single(&mut scratch, &mut sf)?;
                }
                b'"' => {
                    self.pos += 1;
                    self.dquote(&mut scratch, &mut sf, true)?;
                }
                b'$' => self.dollar(&mut scratch, &mut sf, false)?,
                b'`' => self.backtick(&mut scratch, &mut sf, false)?,
                b'@' => {
                    at = true;
                    self.pos += 1;
                }
                _ => self.pos += 1,
            }
            scratch.clear();
        }
    }

    /// A backquoted command substitution (the current byte is the opening
    /// backquote): its content is unescaped and analysed as a script.
    fn backtick(&mut self, out: &mut Vec<u8>, f: &mut u16, unquoted: bool) -> R {
        self.pos += 1;
        let mut content = Vec::new();
        loop {
            let c = self.peek().ok_or(Stop::Broken)?;
            self.pos += 1;
            match c {
                b'`' => break,
                b'\\' => match self.peek() {
                    Some(d @ (b'`' | b'\\' | b'$')) => {
                        content.push(d);
                        self.pos += 1;
                    }
                    Some(b'"') if !unquoted => {
                        content.push(b'"');
                        self.pos += 1;
                    }
                    _ => content.push(b'\\'),
                },
                _ => content.push(c),
            }
        }
        self.sink.text(&content, Text::Backquoted, self.depth)?;
        self.expansion(out, f, unquoted);
        Ok(())
    }

    /// The inside of `$'...'` (after `$'`), with its escapes decoded.
    fn ansi_c(&mut self, out: &mut Vec<u8>, f: &mut u16) -> R {
        loop {
            let c = self.peek().ok_or(Stop::Broken)?;
            self.pos += 1;
            match c {
                b'\'' => return Ok(()),
                b'\\' => {
                    let e = self.peek().ok_or(Stop::Broken)?;
                    self.pos += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'a' => out.push(7),
                        b'b' => out.push(8),
                        b'e' | b'E' => out.push(27),
                        b'f' => out.push(12),
                        b'v' => out.push(11),
                        b'x' | b'u' | b'U' => {
                            self.pos += hex_escape(e, &self.src[self.pos..], out);
                        }
                        b'0'..=b'7' => {
                            let mut v = u32::from(e - b'0');
                            let mut n = 1;
                            while n < 3 {
                                match self.peek() {
                                    Some(d @ b'0'..=b'7') => {
                                        v = v * 8 + u32::from(d - b'0');
                                        self.pos += 1;
                                        n += 1;
                                    }
                                    _ => break,
                                }
                            }
                            out.push(v as u8);
                        }
                        b'c' => {
                            let x = self.peek().ok_or(Stop::Broken)?;
                            self.pos += 1;
                            out.push(x & 0x1f);
                        }
                        b'\\' | b'\'' | b'"' | b'?' => out.push(e),
                        _ => {
                            out.push(b'\\');
                            out.push(e);
                        }
                    }
                    if out.last() == Some(&S_ANY) {
                        *f |= DYN;
                    }
                }
                S_ANY => {
                    out.push(S_ANY);
                    *f |= DYN;
                }
                _ => out.push(c),
            }
        }
    }
}
