//! The guard corpus: `tests/data/guard/{block_end_turn,block,allow}.txt`,
//! one command per line, with its expected verdict (2, 1, 0).
//!
//! Format: `#` lines and blank lines are ignored. Escapes: `\n` newline, `\t`
//! tab, `\\` backslash; any other backslash is kept. A line ending in
//! ` #hand: REASON` is labelled by hand (bash cannot judge it safely in the
//! sandbox: a real interpreter, `su`/`sudo`, a pager, a path or a value from
//! outside the sandbox); the marker is removed before the command is judged.

#![allow(dead_code)]

use std::path::PathBuf;

/// One corpus command.
#[derive(Debug, Clone)]
pub struct Case {
    /// File and line, for messages.
    pub at: String,
    /// The line as written (without the hand marker).
    pub raw: String,
    /// The command after decoding the escapes.
    pub cmd: String,
    /// The expected verdict (0, 1, 2).
    pub expected: i32,
    /// The reason when labelled by hand (not checked by the oracle).
    pub hand: Option<String>,
}

/// The corpus files and their verdicts.
pub const FILES: &[(&str, i32)] = &[
    ("block_end_turn.txt", 2),
    ("block.txt", 1),
    ("allow.txt", 0),
];

/// Deliberate over-blocking: each line is `V command`, where V (1 or 2) is
/// the guard's verdict although bash, in the sandbox, ran no such wait (the
/// wait hangs on a condition, a value or a file the guard cannot see, or the
/// text does not parse). The oracle test checks that bash ran less than V.
pub const CONSERVATIVE: &str = "conservative.txt";

/// Decodes the corpus escapes: `\n` newline, `\t` tab, `\\` backslash; any
/// other backslash is kept.
pub fn decode(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('n') => {
                    chars.next();
                    out.push('\n');
                }
                Some('t') => {
                    chars.next();
                    out.push('\t');
                }
                Some('\\') => {
                    chars.next();
                    out.push('\\');
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The commands of one corpus file; `expected` -1 reads the verdict from a
/// `V ` prefix on each line.
pub fn load(name: &str, expected: i32) -> Vec<Case> {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "tests",
        "data",
        "guard",
        name,
    ]
    .iter()
    .collect();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        .map(|(i, l)| {
            let (raw, hand) = match l.rfind(" #hand: ") {
                Some(k) => (&l[..k], Some(l[k + 8..].to_string())),
                None => (l, None),
            };
            let (expected, raw) = if expected < 0 {
                let (v, rest) = raw.split_once(' ').expect("`V command`");
                (v.parse().expect("verdict 1 or 2"), rest)
            } else {
                (expected, raw)
            };
            Case {
                at: format!("{name}:{}", i + 1),
                raw: raw.to_string(),
                cmd: decode(raw),
                expected,
                hand,
            }
        })
        .collect()
}

/// The deliberately over-blocked commands.
pub fn conservative() -> Vec<Case> {
    load(CONSERVATIVE, -1)
}

/// Every exactly-labelled corpus command.
pub fn all() -> Vec<Case> {
    FILES.iter().flat_map(|&(f, v)| load(f, v)).collect()
}
