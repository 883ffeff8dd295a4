//! The documented size limits (PROTOCOL.md §8.1): what one request, one session key, one
//! message and one start's `args` may hold, so the work and memory of any single call are
//! bounded and every Herdr argv element fits the kernel's limit. Nothing here does IO.

/// Linux's limit on one argv element (`MAX_ARG_STRLEN`), in bytes, the terminating NUL included.
pub const MAX_ARG_STRLEN: usize = 128 * 1024;

/// The longest `send` message, in characters (Unicode scalar values, as JSON Schema's
/// `maxLength` counts). The envelope's JSON escapes a control character as `\u00XX`, so one
/// character takes at most 6 bytes on the wire: 20,000 × 6 = 120,000 bytes, plus the wrapper
/// text and the envelope's other fields (under 1 KiB), stays below [`MAX_ARG_STRLEN`].
pub const MAX_MESSAGE_CHARS: usize = 20_000;

/// The most entries of a start's `args`.
pub const MAX_START_ARGS: usize = 256;

/// The most characters of a start's `args` together. Arguments travel unescaped, at most 4 bytes
/// per character: 16,384 × 4 = 64 KiB, so even a single argument fits [`MAX_ARG_STRLEN`].
pub const MAX_START_ARGS_CHARS: usize = 16_384;

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
pub fn session_key_ok(key: &str) -> bool {
    !key.is_empty() && key.len() <= MAX_SESSION_KEY_BYTES
}

/// Whether `s` holds more than `max` characters, without counting past the point of deciding.
pub fn chars_over(s: &str, max: usize) -> bool {
    // A character is at least one byte: at most `max` bytes means at most `max` characters.
    s.len() > max && s.chars().nth(max).is_some()
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

    #[test]
    fn chars_over_counts_characters() {
        assert!(!chars_over(&"a".repeat(10), 10));
        assert!(chars_over(&"a".repeat(11), 10));
        assert!(!chars_over(&"😀".repeat(10), 10));
        assert!(chars_over(&"😀".repeat(11), 10));
    }

    #[test]
    fn session_keys() {
        assert!(session_key_ok("k"));
        assert!(session_key_ok(&"k".repeat(MAX_SESSION_KEY_BYTES)));
        assert!(!session_key_ok(&"k".repeat(MAX_SESSION_KEY_BYTES + 1)));
        assert!(!session_key_ok(""));
    }
}
