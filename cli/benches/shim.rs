//! Benchmark of the `herdr` shim (docs/guard.md, "The exec boundary"): what it adds to one
//! `herdr` call, as a ratio to exec'ing Herdr directly. Prints figures; asserts nothing.
//!
//! `cargo bench --bench shim` (release build; needs the fake Herdr next to `herdr-link`:
//! `cargo build --release -p fake-herdr`). The bench process spawns `herdr ARGS` through PATH,
//! as a program in a pane does, and reaps it; the time is spawn → reaped. Rows, interleaved (one
//! sample of each per round, so a busy machine slows every row alike):
//!
//!   * floor: `/bin/true`;
//!   * `herdr --version` direct (PATH: the real Herdr) and through the shim (PATH: shim first):
//!     the common case, a non-wait, costs the shim a PATH scan and an exec;
//!   * `herdr agent wait x` direct and through the shim while dormant: a wait also costs the
//!     presence lookup (the socket table, the ancestors) before the exec (the fake Herdr has no
//!     server here and fails at once, the same for both);
//!   * `herdr agent wait x` through the shim while this process answers "active": refused, no
//!     exec of Herdr at all.
//!
//! `SHIM_BENCH_RUNS` sets the samples per row (default 300).

use test_support::mcp as harness;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use herdr_link::presence::{self, HostKey};

fn one(program: &str, args: &[&str], path: &str) -> (Duration, i32) {
    let started = Instant::now();
    let status = Command::new(program)
        .args(args)
        .env("PATH", path)
        .env_remove("HERDR_FAKE_STATE")
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("spawn");
    (started.elapsed(), status.code().unwrap_or(-1))
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

struct Row {
    label: &'static str,
    program: &'static str,
    args: &'static [&'static str],
    path: String,
    active: bool,
}

fn main() {
    let link = harness::link_bin();
    let fake = link.with_file_name("herdr");
    if !fake.is_file() {
        eprintln!(
            "shim bench: no fake Herdr at {} (cargo build --release -p fake-herdr)",
            fake.display()
        );
        std::process::exit(1);
    }
    let runs: usize = std::env::var("SHIM_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let root = std::env::temp_dir().join(format!("herdr-link-shim-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (shim, real) = (root.join("shim"), root.join("real"));
    std::fs::create_dir_all(&shim).unwrap();
    std::fs::create_dir_all(&real).unwrap();
    std::os::unix::fs::symlink(&link, shim.join("herdr")).unwrap();
    std::os::unix::fs::symlink(&fake, real.join("herdr")).unwrap();
    let p = |dirs: &[&Path]| {
        let mut s: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        s.push("/usr/bin:/bin".into());
        s.join(":")
    };
    let direct = p(&[&real]);
    let via = p(&[&shim, &real]);

    // This process is the shim's parent: it answers for itself, "active" only for the last row.
    let on = Arc::new(AtomicBool::new(false));
    let flag = on.clone();
    let _beacon = presence::announce(
        HostKey::of_self().expect("/proc"),
        Arc::new(move |q| presence::answer_for(flag.load(Ordering::SeqCst), None, q)),
    )
    .expect("presence socket");

    let rows = [
        Row {
            label: "floor: /bin/true",
            program: "/bin/true",
            args: &[],
            path: direct.clone(),
            active: false,
        },
        Row {
            label: "herdr --version, direct",
            program: "herdr",
            args: &["--version"],
            path: direct.clone(),
            active: false,
        },
        Row {
            label: "herdr --version, through the shim",
            program: "herdr",
            args: &["--version"],
            path: via.clone(),
            active: false,
        },
        Row {
            label: "herdr agent wait x, direct",
            program: "herdr",
            args: &["agent", "wait", "x"],
            path: direct.clone(),
            active: false,
        },
        Row {
            label: "herdr agent wait x, shim, dormant (lookup + exec)",
            program: "herdr",
            args: &["agent", "wait", "x"],
            path: via.clone(),
            active: false,
        },
        Row {
            label: "herdr agent wait x, shim, active (refused, exit 77)",
            program: "herdr",
            args: &["agent", "wait", "x"],
            path: via.clone(),
            active: true,
        },
    ];
    for r in &rows {
        on.store(r.active, Ordering::SeqCst);
        for _ in 0..5 {
            one(r.program, r.args, &r.path);
        }
    }
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(runs); rows.len()];
    let mut codes = vec![0; rows.len()];
    for _ in 0..runs {
        for (i, r) in rows.iter().enumerate() {
            on.store(r.active, Ordering::SeqCst);
            let (d, code) = one(r.program, r.args, &r.path);
            samples[i].push(d.as_secs_f64() * 1e3);
            codes[i] = code;
        }
    }
    let mut medians = Vec::new();
    let mut mins = Vec::new();
    println!("shim bench: {runs} samples per row, interleaved; spawn → reaped");
    println!("| row | exit | median | min | p90 |");
    println!("|---|---|---|---|---|");
    for (i, r) in rows.iter().enumerate() {
        let s = &mut samples[i];
        s.sort_by(f64::total_cmp);
        let (med, min, p90) = (percentile(s, 0.5), s[0], percentile(s, 0.9));
        medians.push(med);
        mins.push(min);
        println!(
            "| {} | {} | {med:.2} ms | {min:.2} ms | {p90:.2} ms |",
            r.label, codes[i]
        );
    }
    println!(
        "non-wait: shim / direct = {:.3} by medians ({:+.2} ms), {:.3} by minimums ({:+.2} ms)",
        medians[2] / medians[1],
        medians[2] - medians[1],
        mins[2] / mins[1],
        mins[2] - mins[1]
    );
    println!(
        "dormant wait: shim / direct = {:.3} by medians ({:+.2} ms), {:.3} by minimums ({:+.2} ms)",
        medians[4] / medians[3],
        medians[4] - medians[3],
        mins[4] / mins[3],
        mins[4] - mins[3]
    );
    let _ = std::fs::remove_dir_all(&root);
}
