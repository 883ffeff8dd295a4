//! The conservative word-sequence rule, used for text the lexer cannot parse
//! (unbalanced quotes, unclosed substitutions), for nesting deeper than the
//! analysis allows, and when a shell reads its script from a pipe.
//!
//! Quotes, `$`, parentheses, braces, operators, backslashes and `=` all count
//! as separators, so quoting hides nothing here:
//!
//! * a Herdr word (basename `herdr`, `HERDR_BIN_PATH`, or any word right after
//!   `$`/`${`) followed by words the wait policy ([`super::policy`], which
//!   also skips Herdr's global flags) reads as `agent wait` gives
//!   [`Verdict::BlockEndTurn`];
//! * a Herdr word followed by words it reads as `agent prompt`, together with
//!   a `--wait`, `--until` or `--timeout` word anywhere in the text, gives
//!   [`Verdict::Block`];
//! * anything else is allowed.
//!
//! Both rules take every word's meaning from the policy's word classes; no
//! Herdr word is spelt here.

use super::policy::{self, Class, Judge, Verdict};

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
    // The wait policy over the words after the last Herdr word, while it
    // can still reach a verdict.
    let mut run: Option<Judge> = None;
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
        let class = policy::class_of(tok);
        if class == Class::WaitOpt {
            wait_opt = true;
        }
        if let Some(judge) = run.as_mut() {
            judge.word(class.bit() | policy::EXACT);
            if judge.verdict() == Verdict::BlockEndTurn {
                return Verdict::BlockEndTurn;
            }
            if judge.prompted() {
                // `agent prompt`: blocked with a waiting option anywhere.
                prompt = true;
                run = None;
                continue;
            }
            if !judge.settled() {
                continue;
            }
            run = None;
        }
        if is_herdr_word(tok, after_dollar) {
            run = Some(Judge::new());
        }
    }
    if prompt && wait_opt {
        Verdict::Block
    } else {
        Verdict::Allow
    }
}

/// Judges `text` by the loose rule, for commands that come from text the
/// analysis cannot follow (a substitution's output, a variable, an alias,
/// a script piped to a shell): a Herdr word, then later an `agent` word,
/// then later a `wait` word gives [`Verdict::BlockEndTurn`]; `prompt` in
/// place of `wait`, with a waiting option anywhere, gives
/// [`Verdict::Block`]. The words need not be next to each other: the text
/// may assemble the command from pieces. When the text sets `IFS`, every
/// byte that is not a letter or a digit separates words. Linear.
pub(super) fn loose_sequence(text: &[u8]) -> Verdict {
    let norm = loose_normalize(text);
    let text = norm.as_slice();
    let wide = text.windows(3).any(|w| w == b"IFS");
    let sep = |c: u8| {
        if wide {
            !c.is_ascii_alphanumeric()
        } else {
            is_sep(c)
                || matches!(
                    c,
                    b',' | b':'
                        | b'['
                        | b']'
                        | b'@'
                        | b'*'
                        | b'?'
                        | b'!'
                        | b'#'
                        | b'%'
                        | b'+'
                        | b'^'
                        | b'~'
                )
        }
    };
    let (mut herdr, mut agent, mut prompt, mut wait_opt) = (false, false, false, false);
    let mut i = 0;
    while i < text.len() {
        let mut after_dollar = false;
        while i < text.len() && sep(text[i]) {
            after_dollar = text[i] == b'$' || (text[i] == b'{' && i > 0 && text[i - 1] == b'$');
            i += 1;
        }
        let s = i;
        while i < text.len() && !sep(text[i]) {
            i += 1;
        }
        if s == i {
            break;
        }
        let tok = &text[s..i];
        // With a wide `IFS` the dashes are separators: `wait` may be `--wait`.
        let opt = if wide {
            policy::is_wait_option(&[b"--".as_slice(), tok].concat())
        } else {
            policy::is_wait_option(tok)
        };
        if opt {
            wait_opt = true;
        }
        let class = policy::class_of(tok);
        if agent && class == Class::Wait {
            return Verdict::BlockEndTurn;
        }
        if agent && class == Class::Prompt {
            prompt = true;
        }
        if herdr && class == Class::Agent {
            agent = true;
        }
        if is_herdr_word(tok, after_dollar) || (wide && tok == b"HERDR") {
            herdr = true;
        }
    }
    if prompt && wait_opt {
        Verdict::Block
    } else {
        Verdict::Allow
    }
}

/// The text with quoting undone as far as it can be without parsing: quote
/// characters and backslashes disappear (`w''ait`, `wa\it`, `ag""ent` are
/// `wait`, `agent`), `\n`/`\t`/`\r` become blanks, `\xHH` and `\NNN` (octal)
/// become their byte. Linear.
fn loose_normalize(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        i += 1;
        match c {
            b'\'' | b'"' => {}
            b'\\' => match text.get(i) {
                Some(b'n' | b't' | b'r' | b'v' | b'f') => {
                    out.push(b' ');
                    i += 1;
                }
                Some(b'x') => {
                    let hex = |k: usize| text.get(k).and_then(|&d| (d as char).to_digit(16));
                    match (hex(i + 1), hex(i + 2)) {
                        (Some(a), Some(b)) => {
                            out.push((a * 16 + b) as u8);
                            i += 3;
                        }
                        (Some(a), None) => {
                            out.push(a as u8);
                            i += 2;
                        }
                        _ => {}
                    }
                }
                Some(b'0'..=b'7') => {
                    let mut v: u32 = 0;
                    let mut n = 0;
                    while n < 3 {
                        match text.get(i) {
                            Some(&d @ b'0'..=b'7') => {
                                v = v * 8 + u32::from(d - b'0');
                                i += 1;
                                n += 1;
                            }
                            _ => break,
                        }
                    }
                    out.push(v as u8);
                }
                _ => {}
            },
            _ => out.push(c),
        }
    }
    out
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

    fn l(s: &str) -> i32 {
        loose_sequence(s.as_bytes()).code()
    }

    #[test]
    fn loose() {
        assert_eq!(l("$(echo herdr; echo agent wait x)"), 2);
        assert_eq!(l("H=herdr; A=agent; $H $A wait x"), 2);
        assert_eq!(l("IFS=_; c=herdr_agent_wait_x; $c"), 2);
        assert_eq!(l("a=(herdr,agent,wait)"), 2);
        assert_eq!(l("x=$(echo herdr agent prompt p hi --wait); $x"), 1);
        assert_eq!(l("$EDITOR notes.md"), 0);
        assert_eq!(l("$H agent get x"), 0);
        assert_eq!(l("wait; herdr agent list"), 0);
        assert_eq!(l("echo 'w'\\''ait' | herdr ag\"\"ent wa\\it"), 2);
        assert_eq!(l("$'\\x68erdr' agent wait"), 2);
        assert_eq!(l("$'\\150erdr' agent wait"), 2);
    }
}
