//! The fake held to recorded real-Herdr transcripts (`tests/data/herdr-transcripts/`): every
//! step of each version's transcript is played again on the fake, in the same world, and its
//! normalised outcome must be the recorded one. Re-recording: `scripts/record-herdr.sh`.

mod transcript;

use serde_json::Value;
use std::path::Path;
use transcript::{Step, Target};

/// Steps where the fake knowingly differs from the recorded Herdr: (version, step note, where
/// fake-herdr/README.md documents it). Such a step must still differ (else the entry is stale
/// and the replay fails); every other step must match.
const KNOWN: &[(&str, &str, &str)] = &[
    (
        "0.8.0",
        "agent prompt --wait without --until",
        "README, Where the fake differs: agent prompt --wait never blocks",
    ),
    (
        "0.8.2",
        "agent prompt --wait without --until",
        "README, Where the fake differs: agent prompt --wait never blocks",
    ),
];

/// The versions recorded.
const RECORDED: &[&str] = &["0.8.0", "0.8.2"];

/// Replays `version`'s transcript on the fake; returns every difference.
fn replay(version: &str) -> Vec<String> {
    let lines = transcript::read(&transcript::file(version));
    assert!(!lines.is_empty(), "empty transcript for {version}");
    let t = Target::fake(Path::new(env!("CARGO_BIN_EXE_herdr")), version, "replay");
    let mut diffs = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let got = Step::from_line(l).play(&t);
        let note = l["note"].as_str().unwrap_or("");
        let known = KNOWN.iter().find(|(v, n, _)| *v == version && *n == note);
        if let Some((_, _, doc)) = known {
            if got == l["out"] {
                diffs.push(format!(
                    "{version} step {i} ({note}): listed in KNOWN but the fake now matches; remove it"
                ));
            } else {
                eprintln!("{version} step {i} ({note}): known difference ({doc})");
            }
            continue;
        }
        if got != l["out"] {
            diffs.push(format!(
                "{version} step {i} ({}): {}\n  recorded: {}\n  fake:     {}",
                l["note"].as_str().unwrap_or(""),
                l.get("argv")
                    .or(l.get("runs"))
                    .or(l.get("pane"))
                    .unwrap_or(&Value::Null),
                l["out"],
                got
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&t.root);
    diffs
}

#[test]
fn the_fake_plays_the_0_8_2_transcript() {
    let diffs = replay("0.8.2");
    assert!(
        diffs.is_empty(),
        "{} differences:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}

#[test]
fn the_fake_plays_the_0_8_0_transcript() {
    let diffs = replay("0.8.0");
    assert!(
        diffs.is_empty(),
        "{} differences:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}

/// Every step of the corpus is in the transcript, in order: a corpus change needs a new
/// recording.
#[test]
fn the_transcripts_follow_the_corpus() {
    for version in RECORDED {
        let lines = transcript::read(&transcript::file(version));
        let corpus = transcript::corpus(version);
        assert_eq!(
            lines.len(),
            corpus.len(),
            "{version}: re-record (scripts/record-herdr.sh)"
        );
        for ((note, step), l) in corpus.iter().zip(&lines) {
            let mut spec = l.as_object().unwrap().clone();
            spec.remove("out");
            let want: Value =
                serde_json::from_str(&transcript::line(step.spec(note), Value::Null)).unwrap();
            let mut want = want.as_object().unwrap().clone();
            want.remove("out");
            assert_eq!(spec, want, "{version}: re-record (scripts/record-herdr.sh)");
        }
    }
}

/// The recorder (run by scripts/record-herdr.sh against a real Herdr server): plays the corpus
/// and writes the transcript. `HERDR_TRANSCRIPT_FAKE=1` records the fake instead (to try the
/// recorder without a real Herdr; the result is not a specification).
#[test]
#[ignore = "records a transcript; run by scripts/record-herdr.sh"]
fn record() {
    let fake = std::env::var("HERDR_TRANSCRIPT_FAKE").is_ok_and(|v| v == "1");
    let t = if fake {
        let v = std::env::var("HERDR_TRANSCRIPT_VERSION").expect("HERDR_TRANSCRIPT_VERSION");
        Target::fake(Path::new(env!("CARGO_BIN_EXE_herdr")), &v, "record")
    } else {
        Target::real()
    };
    let out = std::env::var("HERDR_TRANSCRIPT_OUT")
        .map(Into::into)
        .unwrap_or_else(|_| transcript::file(&t.version));
    let mut text = String::new();
    for (note, step) in transcript::corpus(&t.version) {
        let got = step.play(&t);
        eprintln!("{note}: {got}");
        text.push_str(&transcript::line(step.spec(&note), got));
        text.push('\n');
    }
    std::fs::create_dir_all(Path::new(&out).parent().unwrap()).unwrap();
    std::fs::write(&out, text).unwrap();
    eprintln!("wrote {}", Path::new(&out).display());
}
