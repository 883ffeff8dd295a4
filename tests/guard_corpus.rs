//! Table-driven corpus for the Bash-boundary guard: every command in
//! `tests/data/guard/*.txt` must get the verdict its file names. The labels
//! themselves are checked against real bash by `tests/guard_oracle.rs`.

use test_support::guard_corpus as corpus;

use herdr_link::guard::judge;

fn check(name: &str, expected: i32) -> usize {
    let cases = corpus::load(name, expected);
    let mut failures = Vec::new();
    for c in &cases {
        let got = judge(&c.cmd).code();
        if got != expected {
            failures.push(format!(
                "{}: {}\n    expected {expected}, got {got}",
                c.at, c.raw
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
    check("block_end_turn.txt", 2);
}

#[test]
fn block_corpus() {
    check("block.txt", 1);
}

#[test]
fn allow_corpus() {
    check("allow.txt", 0);
}

#[test]
fn conservative_corpus() {
    let cases = corpus::conservative();
    for c in &cases {
        assert!(c.expected == 1 || c.expected == 2, "{}", c.at);
        assert_eq!(judge(&c.cmd).code(), c.expected, "{}: {}", c.at, c.raw);
    }
}

#[test]
fn corpus_is_large_enough() {
    let blocked = corpus::load("block_end_turn.txt", 2).len() + corpus::load("block.txt", 1).len();
    let allowed = corpus::load("allow.txt", 0).len();
    assert!(blocked >= 60, "only {blocked} blocked commands");
    assert!(allowed >= 60, "only {allowed} allowed commands");
}

#[test]
fn escapes_decode() {
    assert_eq!(corpus::decode(r"a\nb\tc\\d\;e"), "a\nb\tc\\d\\;e");
    assert_eq!(corpus::decode(r"x \\\nwait"), "x \\\nwait");
}
