//! The wait policy: which Herdr argv makes the caller wait for another agent.
//!
//! This is the one place that knows how the Herdr CLI reads its argv. The
//! text guard (judging the words of a Bash command it parsed), its
//! conservative fallback rules (judging raw text) and the `herdr` shim
//! (judging the real argv it was started with) all ask this module.
//!
//! How Herdr 0.8 reads the words after its command word:
//!
//! 1. Global session flags are removed, up to the first literal `--`:
//!    `--session NAME` (the next word, whatever it is) and `--session=NAME`.
//! 2. On what is left, up to the first `--`, the remote flags are removed:
//!    `--remote X`, `--remote-keybindings X` (the next word, whatever it is),
//!    `--remote=X`, `--remote-keybindings=X` and `--handoff`.
//! 3. The first remaining word picks the command: `agent wait ...` waits
//!    (verdict [`Verdict::BlockEndTurn`]). `agent prompt TARGET TEXT OPTS...`
//!    takes TARGET and TEXT literally (a TEXT of `--wait` is text), and
//!    waits when an option `--wait`, `--until` or `--timeout` comes after
//!    them and before a `--` (verdict [`Verdict::Block`]).
//!
//! Where the policy is deliberately more careful than Herdr, so that a
//! future Herdr that accepts more cannot slip through:
//!
//! * `--wait=X`, `--until=X` and `--timeout=X` count as waiting options
//!   (Herdr 0.8 rejects them as unknown options and runs nothing);
//! * `--until` or `--timeout` without `--wait` count (Herdr 0.8 refuses them);
//! * a waiting option in place of TARGET counts when the word is known
//!   exactly (`agent prompt --wait p hi`, blocked by the reference guard
//!   too; Herdr 0.8 takes it as the target and fails on the unknown option
//!   `hi`), but not a word that only may be one (`"$PEER"`);
//! * usage errors are not modelled: `agent wait` without a target, an
//!   unknown option before the waiting one, `--remote` together with a
//!   subcommand, `--handoff` (which Herdr moves to the end of argv, where a
//!   subcommand rejects it) — all still count as waits;
//! * arguments that are not valid UTF-8 (Herdr refuses them) are judged by
//!   their bytes.
//!
//! Everything is done by one small automaton over word classes. A caller
//! that knows each word exactly (the shim) feeds one class per word; a
//! caller that only knows a word may be one of several things (the text
//! guard, for `"$X"` or a glob) feeds every class the word may have, or
//! "any number of words" for a word that may split; the automaton then
//! follows every possibility at once, in time linear in the argv.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// What the guard decided about one command (or one Herdr argv).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Let the command run (code 0).
    Allow,
    /// Block the command; the model keeps its turn and can use
    /// `herdr_link_send` instead (code 1). Used for `herdr agent prompt`
    /// carrying `--wait`, `--until` or `--timeout`.
    Block,
    /// Block the command and end the model's turn (code 2): the reply will
    /// arrive as an inbound Herdr Link message. Used for `herdr agent wait`.
    BlockEndTurn,
}

impl Verdict {
    /// The numeric verdict used over the C ABI: 0 allow, 1 block, 2 block
    /// and end the turn.
    pub fn code(self) -> i32 {
        match self {
            Verdict::Allow => 0,
            Verdict::Block => 1,
            Verdict::BlockEndTurn => 2,
        }
    }

    /// The stronger of two verdicts.
    pub(crate) fn max(self, other: Verdict) -> Verdict {
        if other.code() > self.code() {
            other
        } else {
            self
        }
    }
}

/// Judges the words a real Herdr would receive after its command word
/// (`argv[1..]`, program name excluded) exactly as given: no shell, no
/// quoting, no expansion. Arguments may hold any bytes (the shim passes its
/// real argv, which need not be UTF-8). Never panics, no IO, linear time.
///
/// `[agent, wait, x]` is [`Verdict::BlockEndTurn`];
/// `[--session, s, agent, prompt, p, hi, --wait]` is [`Verdict::Block`];
/// `[agent, prompt, p, hi, --, --wait]` and `[agent, prompt, p, --wait]`
/// (`--wait` is the text) are [`Verdict::Allow`].
///
/// The shim calls it as `judge_args(&std::env::args_os().skip(1).collect::<Vec<_>>())`.
pub fn judge_args<S: AsRef<OsStr>>(args: &[S]) -> Verdict {
    let mut judge = Judge::new();
    for a in args {
        judge.word(class_of(a.as_ref().as_bytes()).bit() | EXACT);
        if judge.settled() {
            break;
        }
    }
    judge.verdict()
}

/// What a word means to the policy. Every word has exactly one class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Class {
    /// Any other word.
    Other,
    /// `--`: ends the global flags, and the options of `agent prompt`.
    DashDash,
    /// `--session`: a global flag taking the next word.
    Session,
    /// `--session=NAME`: a global flag on its own.
    SessionEq,
    /// `--remote`, `--remote-keybindings`: remote flags taking the next word.
    Remote,
    /// `--remote=X`, `--remote-keybindings=X`, `--handoff`: remote flags on
    /// their own.
    RemoteAlone,
    /// `agent`.
    Agent,
    /// `wait`.
    Wait,
    /// `prompt`.
    Prompt,
    /// `--wait`, `--until`, `--timeout` (also with `=VALUE`).
    WaitOpt,
}

/// A set of [`Class`]es (one bit each).
pub(super) type Classes = u16;

/// Every class.
pub(super) const ALL: Classes = (1 << 10) - 1;

/// The global flags' classes.
pub(super) const GLOBAL: Classes =
    Class::Session.bit() | Class::SessionEq.bit() | Class::Remote.bit() | Class::RemoteAlone.bit();

/// Marks a set of one class for a word known exactly (only such a word
/// counts as a waiting option in place of TARGET).
pub(super) const EXACT: Classes = 1 << 15;

impl Class {
    /// This class as a one-element set.
    pub(super) const fn bit(self) -> Classes {
        1 << self as u16
    }
}

/// The words with a meaning, as `(word, prefix, class)`: with `prefix` a
/// word starting with `word` has the class, otherwise only `word` itself.
/// Every word not matched here is [`Class::Other`].
pub(super) const WORDS: &[(&[u8], bool, Class)] = &[
    (b"--", false, Class::DashDash),
    (b"--session", false, Class::Session),
    (b"--session=", true, Class::SessionEq),
    (b"--remote", false, Class::Remote),
    (b"--remote-keybindings", false, Class::Remote),
    (b"--remote=", true, Class::RemoteAlone),
    (b"--remote-keybindings=", true, Class::RemoteAlone),
    (b"--handoff", false, Class::RemoteAlone),
    (b"agent", false, Class::Agent),
    (b"wait", false, Class::Wait),
    (b"prompt", false, Class::Prompt),
    (b"--wait", false, Class::WaitOpt),
    (b"--wait=", true, Class::WaitOpt),
    (b"--until", false, Class::WaitOpt),
    (b"--until=", true, Class::WaitOpt),
    (b"--timeout", false, Class::WaitOpt),
    (b"--timeout=", true, Class::WaitOpt),
];

/// The class of one exactly known word.
pub(super) fn class_of(word: &[u8]) -> Class {
    WORDS
        .iter()
        .find(|&&(w, prefix, _)| {
            if prefix {
                word.starts_with(w)
            } else {
                word == w
            }
        })
        .map_or(Class::Other, |&(_, _, c)| c)
}

/// A waiting option of `herdr agent prompt`.
pub(super) fn is_wait_option(word: &[u8]) -> bool {
    class_of(word) == Class::WaitOpt
}

// The automaton. A state is (session pass, remote pass, command), packed in
// one number below 72; a set of states is one `u128`.

/// A flag pass: still reading flags.
const FLAGS: u8 = 0;
/// A flag pass: the next word is the value of a flag.
const VALUE: u8 = 1;
/// A flag pass: past `--`, every word passes through.
const THROUGH: u8 = 2;

/// Command: nothing seen yet.
const START: u8 = 0;
/// Command: `agent` seen.
const AGENT: u8 = 1;
/// Command: `agent prompt`, TARGET next.
const TARGET: u8 = 2;
/// Command: `agent prompt TARGET`, TEXT next.
const TEXT: u8 = 3;
/// Command: options of `agent prompt`.
const OPTS: u8 = 4;
/// Command: settled, no wait (another command, or past `--`).
const NONE: u8 = 5;
/// Command: settled, `agent wait`.
const WAIT: u8 = 6;
/// Command: settled, `agent prompt` with a waiting option.
const PROMPT_WAIT: u8 = 7;

const fn pack(session: u8, remote: u8, cmd: u8) -> u8 {
    if cmd >= NONE {
        // Settled: the flag passes no longer matter.
        (THROUGH * 3 + THROUGH) * 8 + cmd
    } else {
        (session * 3 + remote) * 8 + cmd
    }
}

/// One flag pass reading `class`: whether the word passes on.
fn flag_pass(state: &mut u8, class: Class, with_value: Class, alone: Class) -> bool {
    match *state {
        THROUGH => true,
        VALUE => {
            *state = FLAGS;
            false
        }
        _ if class == Class::DashDash => {
            *state = THROUGH;
            true
        }
        _ if class == with_value => {
            *state = VALUE;
            false
        }
        _ => class != alone,
    }
}

/// The command part reading one word that passed both flag passes
/// (`exact`: the word is known exactly).
fn command_step(cmd: u8, class: Class, exact: bool) -> u8 {
    match (cmd, class) {
        (START, Class::Agent) => AGENT,
        (AGENT, Class::Wait) => WAIT,
        (AGENT, Class::Prompt) => TARGET,
        (TARGET, Class::WaitOpt) if exact => PROMPT_WAIT,
        (TARGET, _) => TEXT,
        (TEXT, _) => OPTS,
        (OPTS, Class::WaitOpt) => PROMPT_WAIT,
        (OPTS, Class::DashDash) => NONE,
        (OPTS, _) => OPTS,
        (c, _) if c >= NONE => c,
        _ => NONE,
    }
}

fn step(state: u8, class: Class, exact: bool) -> u8 {
    let (mut session, mut remote, mut cmd) = (state / 24, state / 8 % 3, state % 8);
    if cmd >= NONE {
        return state;
    }
    if flag_pass(&mut session, class, Class::Session, Class::SessionEq)
        && flag_pass(&mut remote, class, Class::Remote, Class::RemoteAlone)
    {
        cmd = command_step(cmd, class, exact);
    }
    pack(session, remote, cmd)
}

const CLASSES: [Class; 10] = [
    Class::Other,
    Class::DashDash,
    Class::Session,
    Class::SessionEq,
    Class::Remote,
    Class::RemoteAlone,
    Class::Agent,
    Class::Wait,
    Class::Prompt,
    Class::WaitOpt,
];

/// The policy over a sequence of words, each known exactly or only as a set
/// of possible classes. Follows every possibility at once.
#[derive(Debug, Clone, Copy)]
pub(super) struct Judge {
    states: u128,
}

impl Judge {
    /// Before the first word after the command word.
    pub(super) fn new() -> Judge {
        Judge {
            states: 1 << pack(FLAGS, FLAGS, START),
        }
    }

    /// One word that has one of the classes in `classes` (with [`EXACT`]:
    /// the word is known, and `classes` holds its one class).
    pub(super) fn word(&mut self, classes: Classes) {
        let exact = classes & EXACT != 0;
        let mut next = 0u128;
        let mut rest = self.states;
        while rest != 0 {
            let s = rest.trailing_zeros() as u8;
            rest &= rest - 1;
            for c in CLASSES {
                if classes & c.bit() != 0 {
                    next |= 1 << step(s, c, exact);
                }
            }
        }
        self.states = next;
    }

    /// Any number of words (none too), each with one of the classes in
    /// `classes`: a word that may split into several, or vanish.
    pub(super) fn words(&mut self, classes: Classes) {
        let classes = classes & !EXACT;
        loop {
            let before = self.states;
            self.word(classes);
            self.states |= before;
            if self.states == before {
                return;
            }
        }
    }

    /// Whether every possibility is past `agent prompt` (or settled).
    pub(super) fn past_verb(&self) -> bool {
        let mut rest = self.states;
        while rest != 0 {
            let s = rest.trailing_zeros() as u8;
            rest &= rest - 1;
            if s % 8 < TARGET {
                return false;
            }
        }
        true
    }

    /// Whether no further word can change the verdict.
    pub(super) fn settled(&self) -> bool {
        let mut rest = self.states;
        while rest != 0 {
            let s = rest.trailing_zeros() as u8;
            rest &= rest - 1;
            if s % 8 < NONE {
                return false;
            }
        }
        true
    }

    /// Every possibility of both.
    pub(super) fn union(self, other: Judge) -> Judge {
        Judge {
            states: self.states | other.states,
        }
    }

    /// The weakest verdict any possibility reached: what the words surely
    /// do whatever their unknown values are.
    pub(super) fn least(&self) -> Verdict {
        let mut least = Verdict::BlockEndTurn;
        let mut rest = self.states;
        while rest != 0 {
            let s = rest.trailing_zeros() as u8;
            rest &= rest - 1;
            let v = match s % 8 {
                WAIT => Verdict::BlockEndTurn,
                PROMPT_WAIT => Verdict::Block,
                _ => Verdict::Allow,
            };
            if v.code() < least.code() {
                least = v;
            }
        }
        least
    }

    /// Whether some possibility is past `agent prompt` (the fallback's
    /// contiguous rule asks).
    pub(super) fn prompted(&self) -> bool {
        let mut rest = self.states;
        while rest != 0 {
            let s = rest.trailing_zeros() as u8;
            rest &= rest - 1;
            if matches!(s % 8, TARGET | TEXT | OPTS | PROMPT_WAIT) {
                return true;
            }
        }
        false
    }

    /// The strongest verdict any possibility reached.
    pub(super) fn verdict(&self) -> Verdict {
        let has = |cmd: u8| self.states & (1 << pack(THROUGH, THROUGH, cmd)) != 0;
        if has(WAIT) {
            Verdict::BlockEndTurn
        } else if has(PROMPT_WAIT) {
            Verdict::Block
        } else {
            Verdict::Allow
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(args: &str) -> Verdict {
        let words: Vec<&str> = args.split(' ').filter(|w| !w.is_empty()).collect();
        judge_args(&words)
    }

    #[test]
    fn waits() {
        assert_eq!(v("agent wait x"), Verdict::BlockEndTurn);
        assert_eq!(v("agent wait"), Verdict::BlockEndTurn);
        assert_eq!(v("agent prompt p hi --wait"), Verdict::Block);
        assert_eq!(v("agent prompt p hi --until idle"), Verdict::Block);
        assert_eq!(v("agent prompt p hi --timeout 5"), Verdict::Block);
        assert_eq!(v("agent prompt p hi --wait=1"), Verdict::Block);
        assert_eq!(v("agent prompt p hi --bogus --wait"), Verdict::Block);
        assert_eq!(v("agent prompt p -- --wait"), Verdict::Block, "TEXT is --");
        assert_eq!(v("agent prompt -- -- --wait"), Verdict::Block);
        assert_eq!(v("agent prompt --wait p hi"), Verdict::Block, "TARGET");
        assert_eq!(v("agent prompt --until=x p"), Verdict::Block, "TARGET");
    }

    #[test]
    fn not_waits() {
        assert_eq!(v(""), Verdict::Allow);
        assert_eq!(v("agent list"), Verdict::Allow);
        assert_eq!(v("agent prompt p hi"), Verdict::Allow);
        assert_eq!(v("agent prompt p --wait"), Verdict::Allow, "--wait is TEXT");
        assert_eq!(v("agent prompt p hi -- --wait"), Verdict::Allow);
        assert_eq!(v("agent prompt p hi -- x --until idle"), Verdict::Allow);
        assert_eq!(v("agent wait-x"), Verdict::Allow);
        assert_eq!(v("wait agent wait"), Verdict::Allow);
        assert_eq!(v("pane run p herdr agent wait x"), Verdict::Allow);
        assert_eq!(v("-- agent wait x"), Verdict::Allow);
        assert_eq!(v("agent --wait prompt p hi --wait"), Verdict::Allow);
    }

    #[test]
    fn global_flags() {
        assert_eq!(v("--session s agent wait x"), Verdict::BlockEndTurn);
        assert_eq!(v("--session=s agent wait x"), Verdict::BlockEndTurn);
        assert_eq!(v("agent --session s wait x"), Verdict::BlockEndTurn);
        assert_eq!(v("--handoff agent wait x"), Verdict::BlockEndTurn);
        assert_eq!(v("--remote h agent wait x"), Verdict::BlockEndTurn);
        assert_eq!(
            v("--remote=h --remote-keybindings server agent wait"),
            Verdict::BlockEndTurn
        );
        assert_eq!(v("agent prompt p hi --session s --wait"), Verdict::Block);
        // The value of `--session` is the next word, even `--`.
        assert_eq!(v("--session -- agent wait x"), Verdict::BlockEndTurn);
        // Session flags go first: `--remote` takes the word after them.
        assert_eq!(
            v("--remote --session s h agent wait"),
            Verdict::BlockEndTurn
        );
        // Flags after `--` are words.
        assert_eq!(v("-- --session s agent wait"), Verdict::Allow);
        assert_eq!(v("agent prompt p -- --session s --wait"), Verdict::Block);
        assert_eq!(v("--session agent wait x"), Verdict::Allow);
        // `--remote` takes `--`: the remote pass goes on past it.
        assert_eq!(v("--remote -- --handoff agent wait"), Verdict::BlockEndTurn);
    }

    #[test]
    fn any_bytes() {
        use std::ffi::OsString;
        use std::os::unix::ffi::OsStringExt;
        let args = vec![
            OsString::from("agent"),
            OsString::from("prompt"),
            OsString::from_vec(vec![0xff, b'p']),
            OsString::from_vec(vec![b'h', 0x80, b'\n', b' ']),
            OsString::from("--wait"),
        ];
        assert_eq!(judge_args(&args), Verdict::Block);
        assert_eq!(judge_args(&args[..4]), Verdict::Allow);
        let owned: Vec<String> = vec!["agent".into(), "wait".into()];
        assert_eq!(judge_args(&owned), Verdict::BlockEndTurn);
        let none: [&str; 0] = [];
        assert_eq!(judge_args(&none), Verdict::Allow);
    }

    #[test]
    fn uncertain_words() {
        // A word that may be anything: `--handoff` (dropped) or `agent`.
        let mut j = Judge::new();
        j.word(ALL);
        j.word(Class::Agent.bit());
        j.word(Class::Wait.bit());
        assert_eq!(j.verdict(), Verdict::BlockEndTurn);
        // A word that may split into any words.
        let mut j = Judge::new();
        j.words(ALL);
        assert_eq!(j.verdict(), Verdict::BlockEndTurn);
        // A TARGET that only may be a waiting option does not count.
        let mut j = Judge::new();
        for c in [Class::Agent, Class::Prompt] {
            j.word(c.bit() | EXACT);
        }
        let mut k = j;
        j.word(Class::Other.bit() | Class::WaitOpt.bit());
        assert_eq!(j.verdict(), Verdict::Allow);
        k.word(Class::WaitOpt.bit() | EXACT);
        assert_eq!(k.verdict(), Verdict::Block);
        // Strict: only other words or waiting options.
        let mut j = Judge::new();
        for c in [Class::Agent, Class::Prompt, Class::Other, Class::Other] {
            j.word(c.bit());
        }
        let mut k = j;
        k.words(Class::Other.bit() | Class::WaitOpt.bit());
        assert_eq!(k.verdict(), Verdict::Block);
        assert!(j.past_verb());
        j.word(Class::DashDash.bit());
        j.words(ALL);
        assert_eq!(j.verdict(), Verdict::Allow);
        assert!(j.settled());
    }

    #[test]
    fn classes_cover_every_word_with_a_meaning() {
        assert_eq!(class_of(b"--session=x"), Class::SessionEq);
        assert_eq!(class_of(b"--sessionx"), Class::Other);
        assert_eq!(class_of(b"--waiting"), Class::Other);
        assert_eq!(class_of(b"--until=idle"), Class::WaitOpt);
        assert_eq!(class_of(b"--remote-keybindings"), Class::Remote);
        assert_eq!(class_of(b"--handoff"), Class::RemoteAlone);
        assert_eq!(class_of(b"agent"), Class::Agent);
        assert!(is_wait_option(b"--timeout"));
        assert_eq!(ALL.count_ones() as usize, CLASSES.len());
    }
}
