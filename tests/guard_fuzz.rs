//! Differential fuzzer: shell text generated from a grammar of the
//! constructs of issue 10 (nesting, quoting, here-documents, substitutions,
//! arithmetic, brace expansion, compound commands, redirections, values
//! defined earlier in the same command, wrappers and shells) around real
//! waits and harmless mentions, judged by the guard and by real bash (the
//! oracle of `tests/guard_support/oracle.rs`).
//!
//! A bypass (bash ran `herdr agent wait`, the guard said less than 2; or
//! bash ran a waiting prompt, the guard said 0) fails the test. False
//! positives (the guard blocked, bash ran no wait) are counted and printed.
//!
//! `HL_GUARD_FUZZ_COUNT` (default 20000) and `HL_GUARD_FUZZ_SEED` (default
//! fixed) set the run; `cargo test --release --test guard_fuzz -- --nocapture`
//! prints the counts; `HL_GUARD_FUZZ_DUMP=FILE` writes every false positive
//! to FILE.

#[path = "guard_support/generate.rs"]
mod generate;
#[path = "guard_support/oracle.rs"]
mod oracle;

use herdr_link::guard::judge;

fn env_usize(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn guard_agrees_with_bash_on_generated_commands() {
    let count = env_usize("HL_GUARD_FUZZ_COUNT", 20_000) as usize;
    let seed = env_usize("HL_GUARD_FUZZ_SEED", 0x4845_5244_5231_3030);
    let cases = generate::candidates(seed, count);
    let guard: Vec<i32> = cases.iter().map(|c| judge(c).code()).collect();

    // Two sandboxes in parallel (CI has two cores).
    let half = cases.len() / 2;
    let (a, b) = cases.split_at(half);
    let (oa, ob) = std::thread::scope(|s| {
        let ta = s.spawn(|| oracle::Oracle::shared_cwd().run(a, 250));
        let tb = s.spawn(|| oracle::Oracle::shared_cwd().run(b, 250));
        (ta.join().unwrap(), tb.join().unwrap())
    });
    let outs: Vec<oracle::Outcome> = oa.into_iter().chain(ob).collect();

    let mut bypasses = Vec::new();
    let mut false_pos = Vec::new();
    let (mut waits, mut prompts, mut timeouts) = (0, 0, 0);
    for ((c, &g), o) in cases.iter().zip(&guard).zip(&outs) {
        timeouts += usize::from(o.timed_out);
        match o.verdict {
            2 => waits += 1,
            1 => prompts += 1,
            _ => {}
        }
        if (o.verdict == 2 && g < 2) || (o.verdict == 1 && g == 0) {
            bypasses.push(format!("bash ran {}, guard said {g}: {c:?}", o.verdict));
        } else if o.verdict == 0 && g > 0 {
            false_pos.push(format!("guard said {g}, bash ran nothing: {c:?}"));
        }
    }
    let harmless = cases.len() - waits - prompts;
    oracle::note(&format!(
        "guard fuzz: seed {seed:#x}: {} generated ({waits} ran a wait, {prompts} a waiting prompt, {harmless} no wait; {timeouts} timed out); {} bypasses; {} false positives ({:.2}% of the harmless ones)",
        cases.len(),
        bypasses.len(),
        false_pos.len(),
        100.0 * false_pos.len() as f64 / harmless.max(1) as f64
    ));
    if let Ok(path) = std::env::var("HL_GUARD_FUZZ_DUMP") {
        // Every false positive, one debug-quoted command per line, for study.
        std::fs::write(&path, false_pos.join("\n")).expect("write HL_GUARD_FUZZ_DUMP");
    }
    for f in false_pos.iter().take(20) {
        oracle::note(&format!("  false positive: {f}"));
    }
    assert!(
        bypasses.is_empty(),
        "{} bypasses:\n{}",
        bypasses.len(),
        bypasses
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(waits > count / 10, "too few generated waits ran: {waits}");
}
