//! Which names bash has surely assigned at a point of the text being read:
//! the "must" half of the guard's values ([`super::resolve::Values`] holds
//! every value a name may have anywhere, the "may" half).
//!
//! A use of `$NAME` may also get a value from outside the input (the
//! environment, an earlier tool call); only where an assignment of the same
//! text surely ran before it is that value ruled out. "Surely ran before"
//! is kept simple and safe:
//!
//! * the assignment stands in a scope that encloses the use (or the same
//!   scope), before it in the text. Scopes are the text itself, each body of
//!   a compound command (`{ }`, `then`, `else`, `do`), each subshell (`( )`,
//!   `$( )`, `<( )`) and each function body; an assignment inside one is
//!   forgotten where it closes;
//! * it is the first command of its and-or list (not after `&&` or `||`)
//!   and not in a pipeline; a list that ends in `&` (a background job) or a
//!   pipeline forgets what it assigned;
//! * not in the branches of a `case` (one branch does not run before
//!   another).
//!
//! Everything else counts as not surely assigned, so the value from outside
//! stays possible. No IO; looks only at the lexer's separators.

use super::lexer::End;

/// The most names followed at once; beyond, names are simply not surely
/// assigned (the cautious answer).
const LIMIT: usize = 256;

/// A scope of the text.
#[derive(Debug, Default)]
struct Scope {
    /// `entries.len()` when it opened.
    start: usize,
    /// `entries.len()` where the current and-or list began.
    list: usize,
    /// `entries.len()` where the current pipeline began.
    pipe: usize,
    /// The body of this function (`@` and `$1`... are its arguments).
    function: Option<Vec<u8>>,
    /// A `case`: its branches do not run one after another.
    blind: bool,
}

/// The names surely assigned so far, by scope.
#[derive(Debug, Default)]
pub(super) struct Flow {
    entries: Vec<Vec<u8>>,
    /// The text's own scope (its marks; it never closes).
    root: Scope,
    /// The open scopes, innermost last.
    scopes: Vec<Scope>,
    /// A function header was read: the next scope is its body.
    header: Option<Vec<u8>>,
}

impl Flow {
    /// A scope opens: a compound command's body (`blind` for a `case`), or a
    /// subshell.
    pub(super) fn open(&mut self, blind: bool) {
        let n = self.entries.len();
        self.scopes.push(Scope {
            start: n,
            list: n,
            pipe: n,
            function: self.header.take(),
            blind,
        });
    }

    /// The innermost scope closes: what it assigned is forgotten.
    pub(super) fn close(&mut self) {
        self.header = None;
        if let Some(s) = self.scopes.pop() {
            self.entries.truncate(s.start);
        }
    }

    /// The innermost scope.
    fn current(&mut self) -> &mut Scope {
        self.scopes.last_mut().unwrap_or(&mut self.root)
    }

    /// `NAME ()` or `function NAME`: the next scope is the body of `NAME`.
    pub(super) fn header(&mut self, name: &[u8]) {
        self.header = Some(name.to_vec());
    }

    /// `name` is assigned by a command at an unconditional place of the
    /// current scope (the caller checks the command itself: first of its
    /// and-or list, not piped).
    pub(super) fn assigned(&mut self, name: &[u8]) {
        if self.scopes.last().is_some_and(|s| s.blind) || self.surely(name) {
            return;
        }
        if self.entries.len() < LIMIT {
            self.entries.push(name.to_vec());
        }
    }

    /// A separator after a command of the current scope (a function's body
    /// follows its header directly: a separator between ends the header).
    pub(super) fn end(&mut self, end: End) {
        self.header = None;
        let n = self.entries.len();
        let s = self.current();
        let keep = match end {
            End::Pipe => s.pipe,
            End::Amp => s.list,
            End::Seq | End::AndOr => n,
        }
        .max(s.start);
        let n = keep.min(n);
        match end {
            End::Seq | End::Amp => {
                s.list = n;
                s.pipe = n;
            }
            End::AndOr => s.pipe = n,
            End::Pipe => {}
        }
        self.entries.truncate(n);
    }

    /// Whether `name` is surely assigned here.
    pub(super) fn surely(&self, name: &[u8]) -> bool {
        self.entries.iter().any(|e| e == name)
    }

    /// The names surely assigned here.
    pub(super) fn names(&self) -> &[Vec<u8>] {
        &self.entries
    }

    /// The function whose body encloses this point, if any.
    pub(super) fn function(&self) -> Option<&[u8]> {
        self.scopes.iter().rev().find_map(|s| s.function.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_forget_and_lists_revoke() {
        let mut f = Flow::default();
        f.assigned(b"a");
        f.end(End::Seq);
        assert!(f.surely(b"a"));
        f.open(false);
        f.assigned(b"b");
        assert!(f.surely(b"a") && f.surely(b"b"));
        f.close();
        assert!(!f.surely(b"b"));
        // `c=1 && x &`: the list runs in the background.
        f.assigned(b"c");
        f.end(End::AndOr);
        assert!(f.surely(b"c"));
        f.end(End::Amp);
        assert!(!f.surely(b"c") && f.surely(b"a"));
        // `d=1 | x`: a pipeline's subshell.
        f.assigned(b"d");
        f.end(End::Pipe);
        assert!(!f.surely(b"d"));
        // A `case` branch assigns nothing for another.
        f.open(true);
        f.assigned(b"e");
        assert!(!f.surely(b"e"));
        f.close();
        // Function bodies.
        f.header(b"h");
        f.open(false);
        assert_eq!(f.function(), Some(&b"h"[..]));
        f.open(false);
        assert_eq!(f.function(), Some(&b"h"[..]));
        f.close();
        f.close();
        assert_eq!(f.function(), None);
    }
}
