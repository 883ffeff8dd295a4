//! Robustness of the Bash-boundary guard: large and pathological inputs
//! finish quickly (no quadratic paths, no stack overflow), and no input
//! panics.

use herdr_link::guard::{judge, Verdict};

use rng::Rng;
use std::time::{Duration, Instant};
use test_support::rng;

const MB: usize = 1 << 20;

/// Repeats `unit` up to about 1 MB, then appends `tail`.
fn big(unit: &str, tail: &str) -> String {
    let mut s = unit.repeat(MB / unit.len().max(1));
    s.push_str(tail);
    s
}

fn timed(name: &str, input: &str) -> Verdict {
    let t = Instant::now();
    let v = judge(input);
    let took = t.elapsed();
    if std::env::var_os("GUARD_TIMINGS").is_some() {
        eprintln!("{name:?}: {} bytes in {took:?}", input.len());
    }
    // A hang detector against runaway (quadratic or worse) analysis, not a speed check: the
    // guard's cost per byte is measured by `cargo bench --bench guard` (BENCHMARKS.md).
    let limit = Duration::from_secs(120);
    assert!(took < limit, "{name}: {} bytes took {took:?}", input.len());
    v
}

#[test]
fn one_megabyte_of_repeated_lines() {
    let line = "ls -la x;\n";
    assert_eq!(line.len(), 10);
    let s = line.repeat(100_000);
    assert_eq!(timed("lines", &s), Verdict::Allow);
    let s = big(
        "git status && echo \"$(date)\" | tee -a log # note\n",
        "herdr agent wait x\n",
    );
    assert_eq!(timed("mixed then wait", &s), Verdict::BlockEndTurn);
    let s = big("herdr agent prompt peer \"hi --wait\"\n", "");
    assert_eq!(timed("prompts", &s), Verdict::Allow);
    let s = big(
        "echo 'herdr agent wait'; ",
        "herdr agent prompt p hi --wait",
    );
    assert_eq!(timed("mentions then prompt", &s), Verdict::Block);
}

#[test]
fn one_megabyte_pathological_inputs() {
    let units = [
        "$(",
        "\"",
        "\\",
        "'",
        "`",
        "(",
        ")",
        "${",
        "$((",
        "<<",
        "<<<",
        "{",
        "}",
        "[",
        "$'",
        "\"$(",
        "$( ",
        "$(echo ",
        "`echo ",
        "$(a) ",
        "`a` ",
        "$a$(b) ",
        "a=(",
        "\n",
        "|",
        ";",
        "&",
        "#",
        "$",
        "*",
        "?",
        "<(",
        "eval ",
        "sh -c ",
        "bash -c 'sh -c \"",
        "xargs ",
        "env ",
        "sudo ",
        "timeout 1 ",
        "find -exec ",
        "watch ",
        "$a ",
        "\"$a\" ",
        "--session ",
        "herdr ",
        "herdr agent ",
        "herdr agent prompt p t ",
        "<<EOF\n",
        "cat <<EOF\n$(",
        "bash <<E\n",
        "{a,b}",
        "case x in ",
        "a) ",
        "\\\n",
        "x=$(y) ",
        "$(($(",
        "${x:-$(",
        "'\"'\"",
        // Static producers and values (followed exactly since issue 10).
        "c=x; $c; ",
        "c='a b'; $c ",
        "set -- x; \"$@\"; ",
        "a=(x y); \"${a[@]}\"; ",
        "f() { \"$@\"; }; f x; ",
        "read -ra w <<< x; \"${w[@]}\"; ",
        "c=x; eval \"$c\"; ",
        "echo x | bash; ",
        "source <(echo x); ",
        "$(echo x) ",
        "$(:)",
        "command ",
        "f ",
        "echo a (b) ",
        "a && ",
    ];
    for unit in units {
        let s = big(unit, "");
        timed(unit, &s);
        let s = big(unit, " herdr agent wait x");
        timed(unit, &s);
    }
}

#[test]
fn deep_nesting_is_judged_conservatively() {
    // Beyond the nesting cap the word-sequence rule decides.
    let deep = format!(
        "{}herdr agent wait x{}",
        "$( ".repeat(200_000),
        ")".repeat(200_000)
    );
    assert_eq!(timed("deep wait", &deep), Verdict::BlockEndTurn);
    let deep = format!("{}ls{}", "$( ".repeat(200_000), ")".repeat(200_000));
    assert_eq!(timed("deep ls", &deep), Verdict::Allow);
    let deep = format!(
        "{}herdr agent wait x{}",
        "\"$(".repeat(100_000),
        ")\"".repeat(100_000)
    );
    assert_eq!(timed("deep quoted", &deep), Verdict::BlockEndTurn);
    let deep = format!("{}herdr agent wait x", "eval ".repeat(200_000));
    assert_eq!(timed("eval chain", &deep), Verdict::BlockEndTurn);
    let deep = format!("{}herdr agent wait x", "xargs ".repeat(150_000));
    assert_eq!(timed("xargs chain", &deep), Verdict::BlockEndTurn);
    let deep = format!("{}'herdr agent wait x'", "sh -c ".repeat(150_000));
    timed("sh -c chain", &deep);
    // Moderate nesting is analysed exactly.
    let nested = format!("{}herdr agent wait x{}", "$(".repeat(20), ")".repeat(20));
    assert_eq!(judge(&nested), Verdict::BlockEndTurn);
    let nested = format!(
        "echo '{}herdr agent wait x{}'",
        "$(".repeat(20),
        ")".repeat(20)
    );
    assert_eq!(judge(&nested), Verdict::Allow);
}

#[test]
fn deep_inputs_fit_a_small_stack() {
    // Hosts may call the guard from threads with small stacks.
    let inputs = [
        format!(
            "{}herdr agent wait x{}",
            "$(".repeat(10_000),
            ")".repeat(10_000)
        ),
        format!("{}x", "\"${x:-$(".repeat(10_000)),
        format!("{}'herdr agent wait x'", "sh -c ".repeat(10_000)),
        format!("{}herdr agent wait x", "eval ".repeat(10_000)),
        format!("{}herdr agent wait x", "xargs ".repeat(10_000)),
        format!("{}herdr agent wait x", "find -exec ".repeat(10_000)),
        format!("{}x", "`".repeat(10_000)),
        format!("{}x", "bash <<E\n$(".repeat(10_000)),
        format!("{}1{}", "$((".repeat(10_000), "))".repeat(10_000)),
        format!("{}1", "((".repeat(10_000)),
        format!("{}1", "$[".repeat(10_000)),
        format!("{}1", "a[".repeat(10_000)),
        format!("[[ x =~ {} ]]", "(".repeat(10_000)),
        format!("{}herdr agent wait x", "{a,".repeat(10_000)),
        format!(
            "{}herdr agent wait x{}",
            "{,".repeat(10_000),
            "}".repeat(10_000)
        ),
        format!("{}herdr agent wait x", "source <(".repeat(10_000)),
        format!("{}herdr agent wait x", "trap ".repeat(10_000)),
        format!("{}herdr agent wait x", "env -S ".repeat(10_000)),
        format!("{}herdr agent wait x", "su -c ".repeat(10_000)),
        format!("alias a='a a'\n{}", "a ".repeat(10_000)),
        format!("{}x", "$(echo ".repeat(10_000)),
    ];
    // 64 KiB: the smallest stack a host thread is likely to have.
    std::thread::Builder::new()
        .stack_size(64 * 1024)
        .spawn(move || {
            for input in &inputs {
                if std::env::var_os("GUARD_STACK_TRACE").is_some() {
                    eprintln!("deep input: {:?}", &input[..input.len().min(24)]);
                }
                judge(input);
            }
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn exhaustive_small_alphabet_never_panics() {
    let alphabet: &[&str] = &[
        "h", "$", "(", ")", "'", "\"", "\\", "`", "\n", ";", "{", "}", "<", "|", "#", " ", "\0",
    ];
    let n = alphabet.len();
    let mut s = String::new();
    for len in 1..=4u32 {
        for mut k in 0..n.pow(len) {
            s.clear();
            for _ in 0..len {
                s.push_str(alphabet[k % n]);
                k /= n;
            }
            judge(&s);
        }
    }
}

#[test]
fn random_token_soup_never_panics() {
    let tokens: &[&str] = &[
        "herdr",
        "agent",
        "wait",
        "prompt",
        "--wait",
        "--wait=1",
        "--until",
        "--timeout",
        "--session",
        "s",
        "peer",
        "hi",
        " ",
        " ",
        " ",
        "\n",
        ";",
        "&&",
        "||",
        "|",
        "&",
        "(",
        ")",
        "{",
        "}",
        "$(",
        "`",
        "'",
        "\"",
        "\\",
        "\\\n",
        "$'",
        "\\x68",
        "${",
        "$H",
        "$HERDR_BIN_PATH",
        "#",
        "<<",
        "<<-",
        "EOF",
        "<<<",
        ">",
        "2>&1",
        "<(",
        "=",
        "A=1",
        "env",
        "sudo",
        "-u",
        "xargs",
        "-I{}",
        "{}",
        "sh",
        "bash",
        "-c",
        "eval",
        "timeout",
        "nice",
        "-n",
        "find",
        "-exec",
        "\\;",
        "watch",
        "case",
        "in",
        "esac",
        "*",
        "?",
        "[",
        "]",
        "\t",
        "\r",
        "é",
        "\0",
        "$@",
        "{a,b}",
        "a=(",
        "$((",
        // Static producers, values, aliases, IFS (issue 10).
        "echo ",
        "printf '%s\\n' ",
        "| bash",
        "source <(echo ",
        "c=",
        "$c",
        "\"$c\"",
        "\"$@\"",
        "\"${a[@]}\"",
        "set -- ",
        "read -ra w <<< ",
        "f() { ",
        "alias w=",
        "w",
        "shopt -s expand_aliases\n",
        "IFS=,",
        ",",
        "((",
        "))",
        ";;",
        "\\c",
        "\\0141",
        "declare -n ",
        "${c:=",
        "$(:)",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut s = String::new();
    for _ in 0..60_000 {
        s.clear();
        for _ in 0..rng.below(40) + 1 {
            s.push_str(tokens[rng.below(tokens.len())]);
        }
        let v = judge(&s);
        // Nothing inside single quotes given to echo can run.
        if !s.contains('\'') {
            assert_eq!(judge(&format!("echo '{s}'")), Verdict::Allow, "{s:?}");
        }
        // A comment runs nothing.
        if !s.contains('\n') && !s.contains('\r') {
            assert_eq!(judge(&format!("# {s}")), Verdict::Allow, "{s:?}");
        }
        // Appending a harmless command never lowers the verdict.
        assert!(
            judge(&format!("{s}\nls")).code() >= v.code() || v == Verdict::Block,
            "{s:?}"
        );
    }
}

const PUNCT: &[u8] = b" $()'\"`\\\n;|&<>{}#=*?[]-ahrdegntwi";

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng(42);
    let mut bytes = Vec::new();
    for _ in 0..20_000 {
        bytes.clear();
        for _ in 0..rng.below(64) {
            // Bias towards ASCII punctuation that the lexer cares about.
            let b = if rng.below(4) == 0 {
                rng.next() as u8
            } else {
                PUNCT[rng.below(PUNCT.len())]
            };
            bytes.push(b);
        }
        judge(&String::from_utf8_lossy(&bytes));
    }
}
