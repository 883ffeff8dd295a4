//! The documented size limits (PROTOCOL.md §8.1): what one request, one session key, one
//! message and one start's `args` may hold, so the work and memory of any single call are
//! bounded and every Herdr argv element fits the kernel's limit; how a message is counted (the
//! characters the envelope line escapes, [`is_typed_control`]); and the rules a refusal states
//! (the limits, the Agent Name rule), written once in the model's words. Nothing here does IO.

/// Linux's limit on one argv element (`MAX_ARG_STRLEN`), in bytes, the terminating NUL included.
pub const MAX_ARG_STRLEN: usize = 128 * 1024;

// The limits a refusal states, written once as the model reads them: the numbers below are read
// from these texts when the library is compiled, and the error table's refusal texts
// (`src/error.rs`) include the same texts, so what a refusal says is the limit that holds.
macro_rules! message_bytes_text {
    () => {
        "128,000"
    };
}
macro_rules! start_args_text {
    () => {
        "256"
    };
}
macro_rules! start_args_chars_text {
    () => {
        "16,384"
    };
}
pub(crate) use {message_bytes_text, start_args_chars_text, start_args_text};

/// The Agent Name rule (`protocol::is_valid_agent_name`, at most 32 characters) in the model's
/// words, written once for every text that states it (schemas, refusals).
macro_rules! agent_name_rule {
    () => {
        "a lowercase letter, then up to 31 lowercase letters, digits, _ or -"
    };
}
pub(crate) use agent_name_rule;

/// Whether `c` is a character the envelope line (`protocol::Envelope::to_json`) never holds raw,
/// because a terminal, a line discipline or a line editor may act on it instead of showing it
/// (PROTOCOL.md §2, "what the typed wrapper never holds"): the C0 controls U+0000–U+001F (JSON
/// escapes them itself), DEL U+007F, the C1 controls U+0080–U+009F, the line and paragraph
/// separators U+2028 and U+2029, and the invisible format characters ([`FORMAT_CHARACTERS`]).
/// The envelope writes each as a JSON escape (`\n`, `\u007f`, a surrogate pair above U+FFFF),
/// which decodes to the same character.
pub fn is_typed_control(c: char) -> bool {
    matches!(c, '\0'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}') || {
        let c = u32::from(c);
        FORMAT_CHARACTERS
            .iter()
            .any(|&(first, last)| (first..=last).contains(&c))
    }
}

/// Unicode 15.1's format characters (General Category Cf), as inclusive ranges: soft hyphen,
/// zero-width space and joiners, bidirectional marks, embeddings, overrides and isolates, word
/// joiner, byte order mark, interlinear annotation, tag characters and the rest. Invisible, and a
/// line editor may drop them (Claude Code 2.1 did, PROTOCOL.md §2).
const FORMAT_CHARACTERS: [(u32, u32); 21] = [
    (0xAD, 0xAD),
    (0x600, 0x605),
    (0x61C, 0x61C),
    (0x6DD, 0x6DD),
    (0x70F, 0x70F),
    (0x890, 0x891),
    (0x8E2, 0x8E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
];

/// A number written with optional thousands separators (`"128,000"`), read at compile time.
const fn grouped(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut n = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b',' {
            assert!(bytes[i].is_ascii_digit(), "a limit is written in digits");
            n = n * 10 + (bytes[i] - b'0') as usize;
        }
        i += 1;
    }
    n
}

/// The largest `send` message, in bytes **as the envelope encodes it** ([`encoded_len_upto`]):
/// a plain ASCII character counts 1; `"`, `\\`, newline, tab, carriage return, backspace and
/// form feed count 2; every other character the envelope line escapes
/// ([`is_typed_control`]: the other C0 controls, DEL, the C1 controls, U+2028, U+2029 and the
/// format characters) 6 (`\uXXXX`; 12 above U+FFFF, a surrogate pair); any other character its
/// UTF-8 length (2–4). The whole wrapper travels as
/// one argv element: 128,000 bytes of message plus the wrapper text and the other envelope fields
/// (under 1 KiB with the longest names) stays below [`MAX_ARG_STRLEN`]. So about 128,000
/// characters of plain English, 42,000 of Chinese, 21,000 control characters.
pub const MAX_MESSAGE_BYTES: usize = grouped(message_bytes_text!());

/// The most characters a `send` message can have and still pass [`MAX_MESSAGE_BYTES`] (each
/// character encodes to at least one byte): the schema's `maxLength`, counted as JSON Schema
/// counts (Unicode scalar values). A message within it can still be refused by the byte rule.
pub const MAX_MESSAGE_CHARS: usize = MAX_MESSAGE_BYTES;

/// The most entries of a start's `args`.
pub const MAX_START_ARGS: usize = grouped(start_args_text!());

/// The most characters of a start's `args` together. Arguments travel unescaped, at most 4 bytes
/// per character: 16,384 × 4 = 64 KiB, so even a single argument fits [`MAX_ARG_STRLEN`].
pub const MAX_START_ARGS_CHARS: usize = grouped(start_args_chars_text!());

/// The largest request text `hl_tool_call` and `hl_presentation` parse (and the longest line the
/// MCP server reads), in bytes: 1 MiB. A larger one is `INVALID_REQUEST` before any parsing.
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// The most JSON values the fields a request uses may hold together (a value of an unknown
/// field is skipped, not built, and does not count). 65,536 values take at most about 5 MiB.
pub const MAX_VALUES: usize = 65_536;

/// The longest session key, in bytes. A longer key is refused and never stored.
pub const MAX_SESSION_KEY_BYTES: usize = 1024;

/// The most characters of caller-supplied text an error message repeats.
pub const ECHO_CHARS: usize = 64;

/// Whether `key` is a usable session key: not empty and at most [`MAX_SESSION_KEY_BYTES`].
pub(crate) fn session_key_ok(key: &str) -> bool {
    !key.is_empty() && key.len() <= MAX_SESSION_KEY_BYTES
}

/// How many bytes `message` takes inside the envelope's JSON (without the quotes), exactly as
/// [`crate::protocol::Envelope::to_json`] writes it; counting stops once it passes `max` (then the
/// result is `max + 1` or more, never exact).
pub fn encoded_len_upto(message: &str, max: usize) -> usize {
    let mut n = 0usize;
    for c in message.chars() {
        n += match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            // One `\uXXXX` per UTF-16 unit: a surrogate pair above U+FFFF.
            c if is_typed_control(c) => 6 * c.len_utf16(),
            c => c.len_utf8(),
        };
        if n > max {
            break;
        }
    }
    n
}

/// Whether `message` is over [`MAX_MESSAGE_BYTES`] as the envelope encodes it.
pub(crate) fn message_over_limit(message: &str) -> bool {
    encoded_len_upto(message, MAX_MESSAGE_BYTES) > MAX_MESSAGE_BYTES
}

/// `s` for an error message: its first [`ECHO_CHARS`] characters, quoted, with the total length
/// when it was cut.
pub fn echo(s: &str) -> String {
    match s.char_indices().nth(ECHO_CHARS) {
        None => format!("{s:?}"),
        Some((cut, _)) => format!("{:?}… ({} bytes)", &s[..cut], s.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_is_short() {
        assert_eq!(echo("fly"), "\"fly\"");
        let long = "é".repeat(1_000_000);
        let e = echo(&long);
        assert!(e.len() < 200, "{e}");
        assert!(e.contains("2000000 bytes"));
    }

    /// The count is the envelope's: every class of character, the escaped ones included.
    #[test]
    fn encoded_length_is_the_envelopes() {
        use crate::protocol::Envelope;
        let json_of = |m: &str| {
            Envelope {
                protocol: "herdr-link/1".into(),
                id: "hl_a_b".into(),
                from: "a".into(),
                to: "b".into(),
                message: m.into(),
            }
            .to_json()
        };
        let empty = json_of("").len();
        let samples = [
            String::new(),
            "plain ascii".into(),
            "quote \" backslash \\ nl \n cr \r tab \t bs \u{8} ff \u{c} del \u{7f}".into(),
            (0u8..0x20).map(char::from).collect::<String>(),
            ('\u{7f}'..='\u{a0}').collect::<String>(),
            "é 中文 😀 \u{2028} \u{2029} \u{85} \u{9b}[31m".into(),
            "soft\u{ad}hyphen \u{200b}\u{200d}\u{202e}\u{feff} 👨\u{200d}👩 tag \u{e0067}\u{e007f}"
                .into(),
        ];
        for m in samples {
            assert_eq!(
                encoded_len_upto(&m, usize::MAX),
                json_of(&m).len() - empty,
                "{m:?}"
            );
        }
        assert_eq!(encoded_len_upto("\u{7f}\u{85}\u{2028}", usize::MAX), 18);
        assert_eq!(encoded_len_upto("\u{200b}\u{e0067}", usize::MAX), 18);
        assert!(encoded_len_upto(&"\u{1}".repeat(100), 10) > 10);
        assert!(!message_over_limit(&"a".repeat(MAX_MESSAGE_BYTES)));
        assert!(message_over_limit(&"a".repeat(MAX_MESSAGE_BYTES + 1)));
        assert!(!message_over_limit(&"中".repeat(MAX_MESSAGE_BYTES / 3)));
        assert!(message_over_limit(&"中".repeat(MAX_MESSAGE_BYTES / 3 + 1)));
        assert!(!message_over_limit(&"\u{7f}".repeat(MAX_MESSAGE_BYTES / 6)));
        assert!(message_over_limit(
            &"\u{7f}".repeat(MAX_MESSAGE_BYTES / 6 + 1)
        ));
    }

    /// PROTOCOL.md's wrapper table lists exactly these format characters.
    #[test]
    fn protocol_lists_the_format_characters() {
        let protocol = include_str!("../PROTOCOL.md");
        let row = protocol
            .lines()
            .find(|l| l.starts_with("| Format characters (Unicode 15.1 General Category Cf"))
            .expect("PROTOCOL.md's format-character row");
        let listed = row.split_once(": ").unwrap().1.split_once(')').unwrap().0;
        let written: Vec<String> = FORMAT_CHARACTERS
            .iter()
            .map(|&(a, b)| {
                if a == b {
                    format!("U+{a:04X}")
                } else {
                    format!("U+{a:04X}–U+{b:04X}")
                }
            })
            .collect();
        assert_eq!(listed, written.join(", "));
        let count: u32 = FORMAT_CHARACTERS.iter().map(|(a, b)| b - a + 1).sum();
        assert!(row.contains(&format!("{count} code points")), "{count}");
    }

    #[test]
    fn the_limits_are_read_from_their_texts() {
        assert_eq!(MAX_MESSAGE_BYTES, 128_000);
        assert_eq!(MAX_START_ARGS, 256);
        assert_eq!(MAX_START_ARGS_CHARS, 16_384);
        assert_eq!(grouped("1,024"), 1024);
    }

    #[test]
    fn session_keys() {
        assert!(session_key_ok("k"));
        assert!(session_key_ok(&"k".repeat(MAX_SESSION_KEY_BYTES)));
        assert!(!session_key_ok(&"k".repeat(MAX_SESSION_KEY_BYTES + 1)));
        assert!(!session_key_ok(""));
    }
}
