//! The conservative word-sequence rule, used for text the lexer cannot parse
//! (unbalanced quotes, unclosed substitutions), for nesting deeper than the
//! analysis allows, and when a shell reads its script from a pipe.
//!
//! Quotes, `$`, parentheses, braces, operators, backslashes and `=` all count
//! as separators, so quoting hides nothing here:
//!
//! * a Herdr word (basename `herdr`, `HERDR_BIN_PATH`, or any word right after
//!   `$`/`${`) followed by `agent` and `wait` (global `--session NAME`
//!   skipped) gives [`Verdict::BlockEndTurn`];
//! * a Herdr word followed by `agent prompt`, together with a `--wait`,
//!   `--until` or `--timeout` word anywhere in the text, gives
//!   [`Verdict::Block`];
//! * anything else is allowed.

use super::Verdict;

fn is_sep(c: u8) -> bool {
    c.is_ascii_whitespace()
        || matches!(
            c,
            b'\''
                | b'"'
                | b'`'
                | b'$'
                | b'('
                | b')'
                | b'{'
                | b'}'
                | b';'
                | b'&'
                | b'|'
                | b'<'
                | b'>'
                | b'\\'
                | b'='
        )
}

fn is_herdr_word(tok: &[u8], after_dollar: bool) -> bool {
    let base = match tok.iter().rposition(|&c| c == b'/') {
        Some(i) => &tok[i + 1..],
        None => tok,
    };
    after_dollar || base == b"herdr" || tok == b"HERDR_BIN_PATH"
}

/// Judges `text` by the word-sequence rule. Linear in its length.
pub(super) fn word_sequence(text: &[u8]) -> Verdict {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Idle,
        AfterHerdr,
        AfterAgent,
    }
    let mut state = State::Idle;
    let mut skip_next = false;
    let mut prompt = false;
    let mut wait_opt = false;
    let mut i = 0;
    while i < text.len() {
        // Separators before the token; remember whether they end in `$`/`${`.
        let mut after_dollar = false;
        while i < text.len() && is_sep(text[i]) {
            after_dollar = text[i] == b'$' || (text[i] == b'{' && i > 0 && text[i - 1] == b'$');
            i += 1;
        }
        let s = i;
        while i < text.len() && !is_sep(text[i]) {
            i += 1;
        }
        if s == i {
            break;
        }
        let tok = &text[s..i];
        if matches!(tok, b"--wait" | b"--until" | b"--timeout") {
            wait_opt = true;
        }
        if state != State::Idle {
            if skip_next {
                skip_next = false;
                continue;
            }
            if tok == b"--session" {
                skip_next = true;
                continue;
            }
            match (state, tok) {
                (State::AfterHerdr, b"agent") => {
                    state = State::AfterAgent;
                    continue;
                }
                (State::AfterAgent, b"wait") => return Verdict::BlockEndTurn,
                (State::AfterAgent, b"prompt") => {
                    prompt = true;
                    state = State::Idle;
                    continue;
                }
                _ => state = State::Idle,
            }
        }
        if is_herdr_word(tok, after_dollar) {
            state = State::AfterHerdr;
        }
    }
    if prompt && wait_opt {
        Verdict::Block
    } else {
        Verdict::Allow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> i32 {
        word_sequence(s.as_bytes()).code()
    }

    #[test]
    fn sequences() {
        assert_eq!(v("echo \"herdr agent wait x"), 2);
        assert_eq!(v("'$H' agent wait"), 2);
        assert_eq!(v("\"${HERDR_BIN_PATH}\" agent wait x '"), 2);
        assert_eq!(v("herdr --session=s agent wait"), 2);
        assert_eq!(v("herdr --session s agent wait"), 2);
        assert_eq!(v("/opt/bin/herdr agent prompt p 'hi --wait"), 1);
        assert_eq!(v("herdr agent prompt p \"x"), 0);
        assert_eq!(v("myherdr agent wait '"), 0);
        assert_eq!(v("herdr-agent-wait.sh '"), 0);
        assert_eq!(v("herdr agent get x wait"), 0);
        assert_eq!(v(""), 0);
    }
}
