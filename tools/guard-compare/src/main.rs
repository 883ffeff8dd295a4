//! Compares the Bash guard's hand-written lexer (`herdr_link::guard::judge`)
//! with front ends on `brush-parser` and `tree-sitter-bash` that apply the
//! same argv rule: correctness on the labelled corpus and on the fuzzer's
//! commands (both judged by real bash through the oracle), robustness (deep
//! nesting on a 64 KiB stack, 1 MiB inputs, panics) and speed. Prints
//! Markdown tables. See README.md and docs/guard.md ("Parser comparison").

use test_support::{guard_corpus as corpus, guard_generate as generate, guard_oracle as oracle};

mod brush_fe;
mod rule;
mod ts_fe;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The front ends compared.
#[derive(Clone, Copy, PartialEq)]
enum Fe {
    Guard,
    Brush,
    TreeSitter,
}

const ALL: [Fe; 3] = [Fe::Guard, Fe::Brush, Fe::TreeSitter];

impl Fe {
    fn name(self) -> &'static str {
        match self {
            Fe::Guard => "guard (hand-written)",
            Fe::Brush => "brush-parser 0.4",
            Fe::TreeSitter => "tree-sitter-bash 0.25",
        }
    }
    fn arg(self) -> &'static str {
        match self {
            Fe::Guard => "guard",
            Fe::Brush => "brush",
            Fe::TreeSitter => "ts",
        }
    }
    fn from_arg(s: &str) -> Fe {
        match s {
            "guard" => Fe::Guard,
            "brush" => Fe::Brush,
            _ => Fe::TreeSitter,
        }
    }
    /// Verdict and whether the text failed to parse (the guard: never
    /// reported).
    fn judge(self, cmd: &str) -> (i32, bool) {
        match self {
            Fe::Guard => (herdr_link::guard::judge(cmd).code(), false),
            Fe::Brush => brush_fe::judge(cmd),
            Fe::TreeSitter => ts_fe::judge(cmd),
        }
    }
}

/// One judgement with panics caught: a panic counts as "allow" (the hook
/// allows when the guard fails).
struct Judged {
    v: i32,
    failed: bool,
    panicked: bool,
}

fn judge_caught(fe: Fe, cmd: &str) -> Judged {
    match catch_unwind(AssertUnwindSafe(|| fe.judge(cmd))) {
        Ok((v, failed)) => Judged {
            v,
            failed,
            panicked: false,
        },
        Err(_) => Judged {
            v: 0,
            failed: true,
            panicked: true,
        },
    }
}

/// Whether `cmd` runs words defined earlier in the same text (`set --`,
/// arrays, `c=...; $c`, `eval "$c"`, functions forwarding `"$@"`, `IFS`,
/// `read`, `mapfile`, aliases): the guard tracks such values, the parser
/// front ends here do not (a rule, not a grammar, feature), so their
/// bypasses are also counted without these commands.
fn uses_values(cmd: &str) -> bool {
    [
        "\"$@\"", "[@]}", "[*]}", "$c", "IFS=", "read -r", "alias ", "$H ", "$A ", "mapfile",
    ]
    .iter()
    .any(|p| cmd.contains(p))
}

#[derive(Default, Clone)]
struct Score {
    n: usize,
    exact: usize,
    bypass: usize,
    /// Bypasses on commands that use no earlier-defined values.
    bypass_plain: usize,
    false_pos: usize,
    failed: usize,
    panics: usize,
}

impl Score {
    fn add(&mut self, cmd: &str, truth: i32, j: &Judged) {
        self.n += 1;
        self.exact += usize::from(j.v == truth);
        let bypass = (truth == 2 && j.v < 2) || (truth == 1 && j.v == 0);
        self.bypass += usize::from(bypass);
        self.bypass_plain += usize::from(bypass && !uses_values(cmd));
        self.false_pos += usize::from(truth == 0 && j.v > 0);
        self.failed += usize::from(j.failed);
        self.panics += usize::from(j.panicked);
    }
}

fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The corpus (the loader of `corpus.rs` reads relative to its own crate).
fn load(name: &str, expected: i32) -> Vec<corpus::Case> {
    let path = repo_root().join("tests/data/guard").join(name);
    let text = std::fs::read_to_string(&path).expect("read corpus");
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let (raw, hand) = match l.rfind(" #hand: ") {
            Some(k) => (&l[..k], Some(l[k + 8..].to_string())),
            None => (l, None),
        };
        let (expected, raw) = if expected < 0 {
            let (v, rest) = raw.split_once(' ').expect("`V command`");
            (v.parse().expect("verdict"), rest)
        } else {
            (expected, raw)
        };
        out.push(corpus::Case {
            at: format!("{name}:{}", i + 1),
            raw: raw.to_string(),
            cmd: corpus::decode(raw),
            expected,
            hand,
        });
    }
    out
}

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| {
            v.strip_prefix("0x")
                .map(|h| u64::from_str_radix(h, 16).ok())
                .unwrap_or_else(|| v.parse().ok())
        })
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("child") {
        child(&args[2..]);
        return;
    }
    let only: Vec<String> = args[1..].to_vec();
    let want = |s: &str| only.is_empty() || only.iter().any(|o| o == s);
    // Panics are counted, not printed.
    std::panic::set_hook(Box::new(|_| {}));
    let verbose = std::env::var_os("GC_VERBOSE").is_some();
    if want("corpus") {
        corpus_run(verbose);
    }
    if want("fuzz") {
        fuzz_run(verbose);
    }
    if want("robust") {
        robust_run();
    }
    if want("speed") {
        speed_run();
    }
}

fn print_scores(title: &str, rows: &[(Fe, Score)]) {
    println!("\n### {title}\n");
    println!("| front end | commands | exact | bypasses | of which without earlier values | false positives | parse failures | panics |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (fe, s) in rows {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            fe.name(),
            s.n,
            s.exact,
            s.bypass,
            s.bypass_plain,
            s.false_pos,
            s.failed,
            s.panics
        );
    }
}

fn corpus_run(verbose: bool) {
    let mut exact: Vec<corpus::Case> = Vec::new();
    for &(f, v) in corpus::FILES {
        exact.extend(load(f, v));
    }
    let cons = load(corpus::CONSERVATIVE, -1);
    // Ground truth: bash (the oracle) for every line not labelled by hand;
    // the hand label otherwise. (Conservative lines: what bash ran.)
    let all: Vec<(&corpus::Case, bool)> = exact
        .iter()
        .map(|c| (c, false))
        .chain(cons.iter().map(|c| (c, true)))
        .collect();
    let to_run: Vec<String> = all
        .iter()
        .filter(|(c, _)| c.hand.is_none())
        .map(|(c, _)| c.cmd.clone())
        .collect();
    let t = Instant::now();
    let outs = oracle::Oracle::new().run(&to_run, 64);
    eprintln!(
        "corpus: oracle ran {} commands in {:.1} s",
        to_run.len(),
        t.elapsed().as_secs_f64()
    );
    let mut it = outs.iter();
    let truth: Vec<i32> = all
        .iter()
        .map(|(c, is_cons)| match &c.hand {
            Some(_) if *is_cons => c.expected - 1,
            Some(_) => c.expected,
            None => it.next().map(|o| o.verdict).unwrap_or(0),
        })
        .collect();
    let label_disagree = all
        .iter()
        .zip(&truth)
        .filter(|((c, is_cons), t)| !is_cons && c.hand.is_none() && c.expected != **t)
        .count();
    let mut main_rows = Vec::new();
    let mut cons_rows = Vec::new();
    for fe in ALL {
        let (mut s_main, mut s_cons) = (Score::default(), Score::default());
        for ((c, is_cons), &t) in all.iter().zip(&truth) {
            let j = judge_caught(fe, &c.cmd);
            if verbose && fe != Fe::Guard && j.v != t && !(t == 0 && *is_cons) {
                eprintln!(
                    "  {} {}: truth {t}, said {}: {}",
                    fe.arg(),
                    c.at,
                    j.v,
                    c.raw
                );
            }
            if *is_cons {
                s_cons.add(&c.cmd, t, &j);
            } else {
                s_main.add(&c.cmd, t, &j);
            }
        }
        main_rows.push((fe, s_main));
        cons_rows.push((fe, s_cons));
    }
    print_scores(
        &format!(
            "Corpus, exact labels (truth: bash for {} oracle-checked lines, hand labels for the rest; {} labels disagreed with bash)",
            to_run.len() - cons.iter().filter(|c| c.hand.is_none()).count(),
            label_disagree
        ),
        &main_rows,
    );
    print_scores(
        "Corpus, conservative.txt (truth: what bash ran)",
        &cons_rows,
    );
}

fn fuzz_run(verbose: bool) {
    let count = env_num("GC_FUZZ_COUNT", 20_000) as usize;
    let seed = env_num("GC_FUZZ_SEED", 0x4845_5244_5231_3030);
    let cases = generate::candidates(seed, count);
    let t = Instant::now();
    let half = cases.len() / 2;
    let (a, b) = cases.split_at(half);
    let (oa, ob) = std::thread::scope(|s| {
        let ta = s.spawn(|| oracle::Oracle::shared_cwd_bash_sh().run(a, 250));
        let tb = s.spawn(|| oracle::Oracle::shared_cwd_bash_sh().run(b, 250));
        (ta.join().unwrap(), tb.join().unwrap())
    });
    let outs: Vec<oracle::Outcome> = oa.into_iter().chain(ob).collect();
    eprintln!(
        "fuzz: oracle ran {} commands in {:.1} s",
        cases.len(),
        t.elapsed().as_secs_f64()
    );
    let waits = outs.iter().filter(|o| o.verdict == 2).count();
    let prompts = outs.iter().filter(|o| o.verdict == 1).count();
    let mut rows = Vec::new();
    for fe in ALL {
        let mut s = Score::default();
        let mut shown = 0;
        for (c, o) in cases.iter().zip(&outs) {
            let j = judge_caught(fe, c);
            let bypass = (o.verdict == 2 && j.v < 2) || (o.verdict == 1 && j.v == 0);
            if verbose && bypass && !uses_values(c) && shown < 25 {
                shown += 1;
                eprintln!(
                    "  {} bypass: bash ran {}, said {}: {c:?}",
                    fe.arg(),
                    o.verdict,
                    j.v
                );
            }
            s.add(c, o.verdict, &j);
        }
        rows.push((fe, s));
    }
    print_scores(
        &format!(
            "Fuzzer, seed {seed:#x}, {} commands, sh = bash (bash ran {waits} waits, {prompts} waiting prompts, {} harmless)",
            cases.len(),
            cases.len() - waits - prompts
        ),
        &rows,
    );
}

/// Deep-nesting and large inputs. Each runs in a child process (so a stack
/// overflow, an abort or a hang is observed, not suffered). `deep-X-N`: N
/// levels of X around a real wait.
fn inputs(kind: &str) -> String {
    let wait = "herdr agent wait x";
    if let Some(rest) = kind.strip_prefix("deep-") {
        let (what, n) = rest.split_once('-').unwrap_or((rest, "10000"));
        let n: usize = n.parse().unwrap_or(10_000);
        let (open, close) = match what {
            "cmdsub" => ("echo $(", ")"),
            "subshell" => ("( ", " )"),
            "brace" => ("{ ", "; }"),
            _ => ("if true; then ", "; fi"),
        };
        return format!("{}{wait}{}", open.repeat(n), close.repeat(n));
    }
    match kind {
        "mib-lines" => {
            let unit = "herdr agent list; echo 'herdr agent wait x' | grep wait\n";
            let mut s = unit.repeat((1 << 20) / unit.len());
            s.push_str(wait);
            s
        }
        "mib-word" => {
            let mut s = "a".repeat(1 << 20);
            s.push_str("; ");
            s.push_str(wait);
            s
        }
        "mib-quote" => format!("echo \"{}\"; {wait}", "x ".repeat(1 << 19)),
        _ => String::new(),
    }
}

const KINDS: &[&str] = &[
    "deep-cmdsub-1000",
    "deep-subshell-1000",
    "deep-brace-1000",
    "deep-if-1000",
    "deep-cmdsub-10000",
    "deep-subshell-10000",
    "deep-brace-10000",
    "deep-if-10000",
    "mib-lines",
    "mib-word",
    "mib-quote",
];

/// `child judge FE KIND STACK_KIB` or `child time FE BYTES ITERS`.
fn child(args: &[String]) {
    let fe = Fe::from_arg(&args[1]);
    match args[0].as_str() {
        "judge" => {
            let text = inputs(&args[2]);
            let stack: usize = args[3].parse().unwrap_or(64);
            let h = std::thread::Builder::new()
                .stack_size(stack * 1024)
                .spawn(move || {
                    let t = Instant::now();
                    let (v, failed) = fe.judge(&text);
                    (v, failed, t.elapsed())
                })
                .expect("spawn");
            match h.join() {
                Ok((v, failed, d)) => println!("ok {v} {} {}", u8::from(failed), d.as_micros()),
                Err(_) => println!("panic"),
            }
        }
        "time" => {
            let bytes: usize = args[2].parse().unwrap_or(100);
            let iters: usize = args[3].parse().unwrap_or(1);
            let text = sized(bytes);
            let ns = match args[1].as_str() {
                "brush-parse" | "ts-parse" => median(iters, || parse_only(&args[1], &text)),
                _ => median(iters, || {
                    std::hint::black_box(fe.judge(std::hint::black_box(&text)));
                }),
            };
            println!("{ns}");
        }
        "tree" => {
            let mut p = tree_sitter::Parser::new();
            p.set_language(&tree_sitter_bash::LANGUAGE.into()).ok();
            if let Some(t) = p.parse(&args[2], None) {
                println!("{}", t.root_node().to_sexp());
            }
            let opts = brush_parser::ParserOptions::default();
            let mut bp = brush_parser::Parser::new(std::io::Cursor::new(args[2].as_bytes()), &opts);
            println!("{:?}", bp.parse_program());
            println!("verdict {:?}", fe.judge(&args[2]));
        }
        _ => {}
    }
}

/// The ~100-byte command of the speed table.
const SMALL: &str = "cd /tmp/work && git status --short | grep -v '^??' ; herdr agent list --json > /dev/null 2>&1; ls";

/// `SMALL` for 100 bytes; otherwise agent-style lines repeated to at least
/// `bytes` bytes.
fn sized(bytes: usize) -> String {
    if bytes <= 100 {
        return SMALL.to_string();
    }
    let unit = "cd /tmp/work && git status --short | grep -v '^??' ; herdr agent list --json > /dev/null\n";
    unit.repeat(bytes.div_ceil(unit.len()))
}

/// The median time of `f` over `iters` runs, in ns.
fn median(iters: usize, mut f: impl FnMut()) -> u128 {
    let mut t: Vec<u128> = (0..iters.max(1))
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_nanos()
        })
        .collect();
    t.sort_unstable();
    t[t.len() / 2]
}

/// The parser alone, without a front end: brush's `parse_program`, or
/// tree-sitter's `parse` with a reused parser.
fn parse_only(which: &str, text: &str) {
    thread_local! {
        static TS: std::cell::RefCell<tree_sitter::Parser> = std::cell::RefCell::new({
            let mut p = tree_sitter::Parser::new();
            p.set_language(&tree_sitter_bash::LANGUAGE.into()).expect("language");
            p
        });
    }
    if which == "brush-parse" {
        let opts = brush_parser::ParserOptions::default();
        let mut p = brush_parser::Parser::new(std::io::Cursor::new(text.as_bytes()), &opts);
        let _ = std::hint::black_box(p.parse_program());
    } else {
        TS.with(|p| std::hint::black_box(p.borrow_mut().parse(text, None)));
    }
}

/// Runs this binary as a child with a time limit: its stdout, or why not.
fn run_child(args: &[&str], limit: Duration) -> Result<String, String> {
    use std::os::unix::process::ExitStatusExt;
    let exe = std::env::current_exe().expect("current exe");
    let mut c = Command::new(exe)
        .arg("child")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn child");
    let start = Instant::now();
    loop {
        if let Ok(Some(status)) = c.try_wait() {
            let mut out = String::new();
            if let Some(mut o) = c.stdout.take() {
                let _ = std::io::Read::read_to_string(&mut o, &mut out);
            }
            return match status.signal() {
                Some(libc::SIGSEGV) | Some(libc::SIGBUS) => Err("crash (SIGSEGV)".into()),
                Some(libc::SIGABRT) => Err("abort (stack overflow)".into()),
                Some(s) => Err(format!("signal {s}")),
                None if status.success() => Ok(out.trim().to_string()),
                None => Err(format!("exit {}", status.code().unwrap_or(-1))),
            };
        }
        if start.elapsed() > limit {
            let _ = c.kill();
            let _ = c.wait();
            return Err(format!("> {} s, killed", limit.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn robust_run() {
    println!("\n### Robustness (each input judged in a child process on a 64 KiB thread, brush-parser also on 8 MiB)\n");
    // (front end, stack KiB)
    let runs = [
        (Fe::Guard, 64),
        (Fe::Brush, 64),
        (Fe::Brush, 8192),
        (Fe::TreeSitter, 64),
    ];
    print!("| input |");
    for (fe, kib) in runs {
        print!(
            " {} ({}) |",
            fe.name(),
            if kib == 64 { "64 KiB" } else { "8 MiB" }
        );
    }
    println!("\n|---|---|---|---|---|");
    for kind in KINDS {
        print!("| `{kind}` |");
        for (fe, kib) in runs {
            let cell = match run_child(
                &["judge", fe.arg(), kind, &kib.to_string()],
                Duration::from_secs(120),
            ) {
                Ok(out) => {
                    let f: Vec<&str> = out.split(' ').collect();
                    if f.first() == Some(&"ok") && f.len() == 4 {
                        let us: f64 = f[3].parse().unwrap_or(0.0);
                        format!(
                            "{}{}, {:.1} ms",
                            f[1],
                            if f[2] == "1" { " (parse error)" } else { "" },
                            us / 1000.0
                        )
                    } else {
                        out
                    }
                }
                Err(e) => e,
            };
            print!(" {cell} |");
        }
        println!();
    }
    println!("\n(cell: verdict, time. Each input holds a real `herdr agent wait x`; the 1 MiB ones run it.)");
}

fn speed_run() {
    println!("\n### Speed (release build; median of repeated runs, each size in a fresh child process)\n");
    println!("| front end | ~100-byte command | 10 KB: ns/byte | 1 MiB: ns/byte |");
    println!("|---|---:|---:|---:|");
    let rows = [
        (Fe::Guard.name(), "guard"),
        (Fe::Brush.name(), "brush"),
        ("brush-parser: parse only", "brush-parse"),
        (Fe::TreeSitter.name(), "ts"),
        ("tree-sitter-bash: parse only", "ts-parse"),
    ];
    for (name, arg) in rows {
        let cell = |bytes: usize, iters: usize, per_byte: bool| -> String {
            match run_child(
                &["time", arg, &bytes.to_string(), &iters.to_string()],
                Duration::from_secs(300),
            ) {
                Ok(out) => match out.parse::<f64>() {
                    Ok(ns) if per_byte => format!("{:.1}", ns / sized(bytes).len() as f64),
                    Ok(ns) => format!("{:.0} ns", ns),
                    Err(_) => out,
                },
                Err(e) => e,
            }
        };
        println!(
            "| {name} | {} | {} | {} |",
            cell(100, 20_001, false),
            cell(10_000, 201, true),
            cell(1 << 20, 5, true)
        );
    }
    println!("\n(~100-byte command, {} bytes: {SMALL:?})", SMALL.len());
}
