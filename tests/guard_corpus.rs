//! Table-driven corpus for the Bash-boundary guard: every command in
//! `tests/data/guard/*.txt` must get the verdict its file names.

use herdr_link::guard::{judge, Verdict};
use std::path::PathBuf;

/// Decodes the corpus escapes: `\n` newline, `\t` tab, `\\` backslash; any
/// other backslash is kept.
fn decode(line: &str) -> String {
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

/// The commands of one corpus file, with their line numbers.
fn load(name: &str) -> Vec<(usize, String, String)> {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "data", "guard", name]
        .iter()
        .collect();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        .map(|(i, l)| (i + 1, l.to_string(), decode(l)))
        .collect()
}

fn check(name: &str, expected: Verdict) -> usize {
    let cases = load(name);
    let mut failures = Vec::new();
    for (line, raw, cmd) in &cases {
        let got = judge(cmd);
        if got != expected {
            failures.push(format!(
                "{name}:{line}: {raw}\n    expected {expected:?} ({}), got {got:?} ({})",
                expected.code(),
                got.code()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} commands misjudged:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    cases.len()
}

#[test]
fn block_end_turn_corpus() {
    check("block_end_turn.txt", Verdict::BlockEndTurn);
}

#[test]
fn block_corpus() {
    check("block.txt", Verdict::Block);
}

#[test]
fn allow_corpus() {
    check("allow.txt", Verdict::Allow);
}

#[test]
fn corpus_is_large_enough() {
    let blocked = load("block_end_turn.txt").len() + load("block.txt").len();
    let allowed = load("allow.txt").len();
    assert!(blocked >= 60, "only {blocked} blocked commands");
    assert!(allowed >= 60, "only {allowed} allowed commands");
}

#[test]
fn escapes_decode() {
    assert_eq!(decode(r"a\nb\tc\\d\;e"), "a\nb\tc\\d\\;e");
    assert_eq!(decode(r"x \\\nwait"), "x \\\nwait");
}
