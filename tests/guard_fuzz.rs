//! Differential fuzzer: shell text generated from a grammar of the
//! constructs of issue 10 (nesting, quoting, here-documents, substitutions,
//! arithmetic, brace expansion, compound commands, redirections, values
//! defined earlier in the same command, wrappers and shells) around real
//! waits and harmless mentions, judged by the guard and by real bash (the
//! oracle of `test-support/src/guard_oracle.rs`).
//!
//! A bypass (bash ran `herdr agent wait`, the guard said less than 2; or
//! bash ran a waiting prompt, the guard said 0) fails the test. False
//! positives (the guard blocked, bash ran no wait) are counted and printed.
//!
//! `HL_GUARD_FUZZ_COUNT` (default 20000) and `HL_GUARD_FUZZ_SEED` (default
//! fixed) set the run; `cargo test --release --test guard_fuzz -- --nocapture`
//! prints the counts; `HL_GUARD_FUZZ_DUMP=FILE` writes every false positive
//! to FILE.

use test_support::{guard_generate as generate, guard_oracle as oracle};

use herdr_link::guard::judge;

fn env_usize(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// What one oracle run found.
struct Report {
    label: String,
    generated: usize,
    waits: usize,
    prompts: usize,
    timeouts: usize,
    bypasses: Vec<String>,
    false_pos: Vec<String>,
}

impl Report {
    fn harmless(&self) -> usize {
        self.generated - self.waits - self.prompts
    }

    fn print(&self) {
        oracle::note(&format!(
            "guard fuzz ({}): {} generated ({} ran a wait, {} a waiting prompt, {} no wait; {} timed out); {} bypasses; {} false positives ({:.2}% of the harmless ones)",
            self.label,
            self.generated,
            self.waits,
            self.prompts,
            self.harmless(),
            self.timeouts,
            self.bypasses.len(),
            self.false_pos.len(),
            100.0 * self.false_pos.len() as f64 / self.harmless().max(1) as f64
        ));
        for f in self.false_pos.iter().take(20) {
            oracle::note(&format!("  false positive: {f}"));
        }
    }
}

/// Runs `cases` through the guard and through an oracle (two sandboxes in
/// parallel: CI has two cores) and compares.
fn compare(label: &str, cases: &[String], make: fn() -> oracle::Oracle) -> Report {
    let guard: Vec<i32> = cases.iter().map(|c| judge(c).code()).collect();
    let half = cases.len() / 2;
    let (a, b) = cases.split_at(half);
    let (oa, ob) = std::thread::scope(|s| {
        let ta = s.spawn(|| make().run(a, 250));
        let tb = s.spawn(|| make().run(b, 250));
        (ta.join().unwrap(), tb.join().unwrap())
    });
    let mut report = Report {
        label: label.to_string(),
        generated: cases.len(),
        waits: 0,
        prompts: 0,
        timeouts: 0,
        bypasses: Vec::new(),
        false_pos: Vec::new(),
    };
    for ((c, &g), o) in cases.iter().zip(&guard).zip(oa.iter().chain(&ob)) {
        report.timeouts += usize::from(o.timed_out);
        match o.verdict {
            2 => report.waits += 1,
            1 => report.prompts += 1,
            _ => {}
        }
        if (o.verdict == 2 && g < 2) || (o.verdict == 1 && g == 0) {
            report
                .bypasses
                .push(format!("bash ran {}, guard said {g}: {c:?}", o.verdict));
        } else if o.verdict == 0 && g > 0 {
            report
                .false_pos
                .push(format!("guard said {g}, bash ran nothing: {c:?}"));
        }
    }
    report.print();
    report
}

fn assert_no_bypass(r: &Report) {
    assert!(
        r.bypasses.is_empty(),
        "{}: {} bypasses:\n{}",
        r.label,
        r.bypasses.len(),
        r.bypasses
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn guard_agrees_with_bash_on_generated_commands() {
    let count = env_usize("HL_GUARD_FUZZ_COUNT", 20_000) as usize;
    let seed = env_usize("HL_GUARD_FUZZ_SEED", 0x4845_5244_5231_3030);
    let cases = generate::candidates(seed, count);

    // The guard reads `sh` scripts as bash: false positives are measured
    // with `sh` being bash.
    let main = compare(
        &format!("seed {seed:#x}, sh = bash"),
        &cases,
        oracle::Oracle::shared_cwd_bash_sh,
    );
    if let Ok(path) = std::env::var("HL_GUARD_FUZZ_DUMP") {
        // Every false positive, one debug-quoted command per line, for study.
        std::fs::write(&path, main.false_pos.join("\n")).expect("write HL_GUARD_FUZZ_DUMP");
    }
    // Where `sh` is dash (Debian, Ubuntu), no bypass either: the candidates
    // that run `sh` again, with dash.
    let with_sh: Vec<String> = cases
        .iter()
        .filter(|c| c.contains("sh -c"))
        .cloned()
        .collect();
    let dash = compare(
        &format!(
            "seed {seed:#x}, the {} candidates with `sh -c`, sh = dash",
            with_sh.len()
        ),
        &with_sh,
        oracle::Oracle::shared_cwd,
    );
    // Herdr's arguments from values of the same text (issue 31), in the same
    // contexts: no bypass, and the false positives counted.
    let values = generate::value_candidates(seed, count / 4);
    let values = compare(
        &format!(
            "seed {seed:#x}, {} candidates with values as arguments, sh = bash",
            values.len()
        ),
        &values,
        oracle::Oracle::shared_cwd_bash_sh,
    );
    assert_no_bypass(&main);
    assert_no_bypass(&dash);
    assert_no_bypass(&values);
    assert!(
        main.waits > count / 10,
        "too few generated waits ran: {}",
        main.waits
    );
}
