//! The corpus labels checked against real bash: every command of
//! `tests/data/guard/*.txt` not marked `#hand` runs in the oracle's sandbox
//! (`test-support/src/guard_oracle.rs`), and what bash really ran must be the
//! verdict its file names. So a label can no longer be wrong.

use test_support::{guard_corpus as corpus, guard_oracle as oracle};

/// The cases not labelled by hand, and what bash ran for each.
fn run_in_bash(cases: Vec<corpus::Case>) -> (Vec<corpus::Case>, Vec<oracle::Outcome>) {
    let cases: Vec<corpus::Case> = cases.into_iter().filter(|c| c.hand.is_none()).collect();
    let cmds: Vec<String> = cases.iter().map(|c| c.cmd.clone()).collect();
    let outs = oracle::Oracle::new().run(&cmds, 64);
    (cases, outs)
}

#[test]
fn oracle_agrees_with_every_label() {
    let (cases, outs) = run_in_bash(corpus::all());
    let mut wrong = Vec::new();
    for (c, o) in cases.iter().zip(&outs) {
        if o.verdict != c.expected {
            wrong.push(format!(
                "{}: {}\n    labelled {}, bash ran {}{}",
                c.at,
                c.raw,
                c.expected,
                o.verdict,
                if o.timed_out { " (timed out)" } else { "" }
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} labels disagree with bash:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
    assert!(
        cases.len() >= 300,
        "only {} oracle-checked commands",
        cases.len()
    );
}

#[test]
fn conservative_cases_really_over_block() {
    let (cases, outs) = run_in_bash(corpus::conservative());
    for (c, o) in cases.iter().zip(&outs) {
        assert!(
            o.verdict < c.expected,
            "{}: {}\n    bash ran {}: label it exactly in the main corpus",
            c.at,
            c.raw,
            o.verdict
        );
    }
}

#[test]
fn hand_labels_say_why() {
    for c in corpus::all() {
        if let Some(h) = &c.hand {
            assert!(h.trim().len() >= 3, "{}: #hand without a reason", c.at);
        }
    }
}

#[test]
fn the_oracle_sees_a_wait() {
    let oracle = oracle::Oracle::new();
    let cmds: Vec<String> = [
        "herdr agent wait x",
        "echo herdr agent wait x",
        "herdr agent prompt p hi --wait",
        "herdr agent prompt p --wait",
        "(herdr agent wait x &)",
        "sh -c 'herdr agent wait x'",
        "\"$HERDR_BIN_PATH\" agent wait x",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let got: Vec<i32> = oracle.run(&cmds, 8).iter().map(|o| o.verdict).collect();
    assert_eq!(got, vec![2, 0, 1, 0, 2, 2, 2]);
}

/// A tool for adding corpus lines, not a check: with `HL_GUARD_LABEL=FILE`
/// (one command per line, corpus escapes), prints for each what bash ran and
/// what the guard says (`bash guard command`), so that every new line is
/// labelled by bash. Without the variable it does nothing.
#[test]
fn label_commands_from_a_file() {
    let Some(path) = std::env::var_os("HL_GUARD_LABEL") else {
        return;
    };
    let text = std::fs::read_to_string(&path).expect("read HL_GUARD_LABEL");
    let raws: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let cmds: Vec<String> = raws.iter().map(|l| corpus::decode(l)).collect();
    let outs = oracle::Oracle::new().run(&cmds, 64);
    for ((raw, cmd), o) in raws.iter().zip(&cmds).zip(&outs) {
        let guard = herdr_link::guard::judge(cmd).code();
        oracle::note(&format!(
            "{} {guard} {raw}{}",
            o.verdict,
            if o.timed_out { "  (timed out)" } else { "" }
        ));
    }
}
