//! The shell-text generator of the guard fuzzer (`tests/guard_fuzz.rs`):
//! commands built from a grammar of the constructs of issue 10 around real
//! waits and harmless mentions. Shared so that other front ends (see
//! `docs/guard.md`, the parser comparison) can be judged on the same text.

#![allow(dead_code)]

use crate::rng::Rng;

/// Single-quotes `s` for the shell.
fn sq(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Double-quotes `s` for the shell.
fn dq(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// Ways to write the Herdr command word.
const HERDR: &[&str] = &[
    "herdr",
    "herdr",
    "herdr",
    "\"herdr\"",
    "h\\erdr",
    "$'herdr'",
    "$'\\x68erdr'",
    "\"$HERDR_BIN_PATH\"",
    "${HERDR_BIN_PATH}",
    "./herdr",
    "$(:)herdr",
    "herdr$(:)",
    "{herdr,}",
    "h''erdr",
    "her\"\"dr",
];

/// Ways to write `agent` and `wait`.
const AGENT: &[&str] = &[
    "agent",
    "agent",
    "'agent'",
    "ag\"\"ent",
    "{agent,}",
    "agent$(:)",
];
const WAIT: &[&str] = &[
    "wait", "wait", "\"wait\"", "wa\\it", "{wait,}", "w''ait", "wait$(:)",
];
const WAIT_OPT: &[&str] = &[
    "--wait",
    "--wait",
    "\"--wait\"",
    "--until idle",
    "--timeout 5",
    "--wait=1",
    "--timeout=9",
];

/// Wrappers before the command word.
const WRAPPERS: &[&str] = &[
    "",
    "",
    "",
    "",
    "env ",
    "env A=1 ",
    "timeout 5 ",
    "nice ",
    "nohup ",
    "command ",
    "time ",
    "time -p ",
    "stdbuf -oL ",
    "A=1 ",
    "{fd}>/dev/null ",
    "exec 3>/dev/null; ",
];

/// Harmless commands and mentions.
const HARMLESS: &[&str] = &[
    "echo herdr agent wait x",
    "echo 'herdr agent wait x'",
    "echo \"herdr agent prompt p hi --wait\"",
    "printf '%s\\n' \"herdr agent wait\"",
    ": herdr agent wait x",
    "herdr agent list",
    "herdr agent get peer",
    "herdr agent prompt p hi",
    "herdr agent prompt p \"use --wait\"",
    "herdr agent prompt p --wait",
    "herdr agent start r --timeout 5",
    "true",
    "ls >/dev/null",
    "echo $(( 1 << 2 ))",
    "(( y = 1 << 3 ))",
    "[[ a =~ (b|c) ]]",
    "[[ 'herdr agent wait' =~ (herdr agent wait) ]]",
    "x=$((2<<1))",
    "cat <<'EOF'\nherdr agent wait x\nEOF",
    "cat <<EOF\n\\$(herdr agent wait x)\nEOF",
    "grep -q 'herdr agent wait' /dev/null",
    "# herdr agent wait x",
    // INT, not EXIT: a later `trap ... EXIT` would replace an earlier one.
    "trap 'echo herdr agent wait' INT",
    "echo {herdr,agent,wait}",
    "find . -name peers -exec herdr agent prompt p {} \\;",
    "echo \"`echo \\\"herdr agent wait\\\"`\"",
    "a[1<<2]=3",
    "echo $[1<<2]",
    "set -- a b",
];

/// A plain (word-only) real or harmless Herdr command, as argv words.
fn herdr_words(r: &mut Rng, kind: usize) -> Vec<&'static str> {
    match kind {
        0 => vec!["herdr", "agent", "wait", "x"],
        1 => vec!["herdr", "agent", "prompt", "p", "hi", "--wait"],
        2 => vec!["herdr", "agent", "list"],
        _ => vec!["echo", "herdr", "agent", r.pick(&["wait", "prompt"]), "x"],
    }
}

/// A simple Herdr command (a wait, a waiting prompt, or harmless).
fn core(r: &mut Rng) -> String {
    let w = r.pick(WRAPPERS);
    match r.below(10) {
        0..=3 => format!("{w}{} {} {} x", r.pick(HERDR), r.pick(AGENT), r.pick(WAIT)),
        4..=5 => format!(
            "{w}{} {} prompt p hi {}",
            r.pick(HERDR),
            r.pick(AGENT),
            r.pick(WAIT_OPT)
        ),
        _ => format!("{w}{}", r.pick(HARMLESS)),
    }
}

/// Commands built from words defined earlier in the same text.
fn defined(r: &mut Rng) -> String {
    let kind = r.below(4);
    let words = herdr_words(r, kind);
    let joined = words.join(" ");
    match r.below(10) {
        0 => format!("set -- {joined}; \"$@\""),
        1 => format!("a=({joined}); \"${{a[@]}}\""),
        2 => format!("c={}; $c", sq(&joined)),
        3 => format!("c={}; eval \"$c\"", sq(&joined)),
        4 => format!("f() {{ \"$@\"; }}; f {joined}"),
        5 => format!("H={}; $H {}", words[0], words[1..].join(" ")),
        6 => format!("IFS=,; c={}; $c", words.join(",")),
        7 => format!("read -ra w <<< {}; \"${{w[@]}}\"", sq(&joined)),
        8 => format!("shopt -s expand_aliases\nalias w1={}\nw1", sq(&joined)),
        _ => format!("$(echo {joined})"),
    }
}

/// Herdr's arguments from values of the same text (issue 31): variables,
/// arrays, `set --`, `for` over literal words, functions forwarding their
/// arguments, `local`, a function named `herdr`; and the places where such a
/// value does not reach the use (after it, in a subshell, on a condition, in
/// the background or a pipeline), and lines bash rejects.
fn arg_values(r: &mut Rng) -> String {
    let verb = r.pick(&["wait", "wait", "get", "list", "read", "prompt"]);
    let opt = r.pick(&[
        "--wait",
        "--json",
        "--until idle",
        "-- --wait",
        "--timeout 5",
    ]);
    let opt_elems = opt.split(' ').map(sq).collect::<Vec<_>>().join(" ");
    let q = r.pick(&["$v", "\"$v\"", "${v}", "\"${v}\""]);
    match r.below(22) {
        0 => format!("v={verb}; herdr agent {q} x"),
        1 => format!("v={}; herdr $v", sq(&format!("agent {verb} x"))),
        2 => format!("a=(agent {verb} x); herdr \"${{a[@]}}\""),
        3 => format!("set -- agent {verb} x; herdr \"$@\""),
        4 => format!("f() {{ herdr \"$@\"; }}; f agent {verb} x"),
        5 => format!("f() {{ herdr agent \"$1\" x; }}; f {verb}"),
        6 => format!("for v in get {verb}; do herdr agent {q} x; done"),
        7 => format!("o=({opt_elems}); herdr agent prompt p hi \"${{o[@]}}\""),
        8 => format!("f() {{ local v={verb}; herdr agent {q} x; }}; f"),
        9 => format!("g() {{ f \"$@\"; }}; f() {{ herdr \"$@\"; }}; g agent {verb} x"),
        10 => format!("herdr() {{ echo \"$@\"; }}; herdr agent {verb} x"),
        11 => format!("herdr() {{ command herdr \"$@\"; }}; herdr agent {verb} x"),
        12 => format!("herdr agent {q} x; v={verb}"),
        13 => format!("(v={verb}); herdr agent {q} x"),
        14 => format!("false && v={verb}; herdr agent {q} x"),
        15 => format!("v={verb} | cat; herdr agent {q} x"),
        16 => format!("declare -a a=(agent {verb} x); herdr \"${{a[@]}}\""),
        17 => format!("IFS=,; v=agent,{verb},x; herdr $v"),
        18 => format!("herdr agent {verb} x '{}", r.pick(&["oops", "a b"])),
        19 => format!("f() {{ herdr agent prompt \"$@\" {opt}; }}; f p hi"),
        20 => format!("v={verb}; unset v; herdr agent {q} x"),
        _ => format!("set -- {verb}; herdr agent \"$1\" x; set -- get"),
    }
}

/// Where a generated statement stands, for the few places where the text
/// must differ to stay what it means.
#[derive(Clone, Copy, Default)]
struct Ctx {
    /// Nesting depth.
    depth: u32,
    /// Inside an EXIT trap handler: a `trap ... EXIT` set there never runs,
    /// so the generator does not nest them (the guard judges every handler).
    in_trap: bool,
    /// The innermost statements (default: [`core`] and [`defined`]).
    leaf: Option<fn(&mut Rng) -> String>,
}

/// Wraps `inner` as the body of a command substitution. Bash 5.2.15 rejects
/// `$(time { ...; })` (any compound command after a leading `time` in a
/// substitution; other bash versions accept it, so the guard judges it as
/// run): a `:` command goes first then.
fn subst_body(inner: &str) -> String {
    if inner.starts_with("time ") {
        format!(": ; {inner}")
    } else {
        inner.to_string()
    }
}

/// A command in a context (recursive).
fn stmt(r: &mut Rng, ctx: Ctx) -> String {
    if ctx.depth >= 3 || r.chance(30) {
        return match ctx.leaf {
            Some(leaf) => leaf(r),
            None if r.chance(15) => defined(r),
            None => core(r),
        };
    }
    let k = r.below(26);
    let deeper = Ctx {
        depth: ctx.depth + 1,
        in_trap: ctx.in_trap || k == 17,
        leaf: ctx.leaf,
    };
    let inner = stmt(r, deeper);
    // A here-document must be followed by a newline before anything else,
    // and so must a comment (it would swallow the closing `)`, `}` or `;`).
    let nl = inner.contains("<<") || inner.contains('#');
    let e = if nl { "\n" } else { "; " };
    let n = if nl { "\n" } else { "" };
    // Here-document delimiters differ by depth: a body ends at the first
    // line equal to its delimiter, whatever nests inside it.
    let d = ctx.depth;
    match k {
        0 => format!("({inner}{n})"),
        1 => format!("{{ {inner}{e}}}"),
        2 => format!("echo \"$({}{n})\"", subst_body(&inner)),
        3 => format!(
            "x=`{}{n}`",
            subst_body(&inner)
                .replace('\\', "\\\\")
                .replace('`', "\\`")
                .replace('$', "\\$")
        ),
        4 => format!("sh -c {}", sq(&inner)),
        5 => format!("bash -c {}", dq(&inner)),
        6 => format!("eval {}", sq(&inner)),
        7 => format!("if true; then {inner}{e}fi"),
        8 => format!("for i in 1; do {inner}{e}done"),
        9 => format!("case a in a) {inner}{n};; esac"),
        10 => format!("f() {{ {inner}{e}}}; f"),
        11 => format!("true && {inner}"),
        12 => format!("{{ {inner}{e}}} | cat"),
        13 => format!("cat <<E{d}\n$({}{n})\nE{d}", subst_body(&inner)),
        14 => format!("bash <<'B{d}'\n{inner}\nB{d}"),
        15 => format!("bash <<< {}", sq(&inner)),
        16 => format!("source <(echo {})", sq(&inner)),
        17 if ctx.in_trap => format!("{{ {inner}{e}}}"),
        17 => format!("trap {} EXIT", sq(&inner)),
        18 => format!("echo {} | bash", sq(&inner)),
        19 => format!("bash < <(echo {})", sq(&inner)),
        20 => format!("set -- a; for x do {inner}{e}done"),
        21 => format!("{{ {inner}{e}}} &\nwait"),
        22 => format!("false || {inner}"),
        23 => format!("bash /dev/stdin <<< {}", sq(&inner)),
        24 => format!("{{ {inner}{e}}} 2>&1 >/dev/null"),
        _ => format!("time {{ {inner}{e}}}"),
    }
}

/// A harmless command that may fail (so `&&` after it runs nothing).
fn may_fail(part: &str) -> bool {
    part.starts_with("grep -q") || part.starts_with("[[ a =~")
}

/// One generated candidate: some statements with noise around them.
fn candidate(r: &mut Rng, ctx: Ctx) -> String {
    let mut parts = Vec::new();
    if r.chance(40) {
        parts.push(r.pick(HARMLESS).to_string());
    }
    parts.push(stmt(r, ctx));
    if r.chance(30) {
        parts.push(r.pick(HARMLESS).to_string());
    }
    let mut text = String::new();
    for (k, p) in parts.iter().enumerate() {
        if k > 0 {
            // Here-documents need a newline before the next command.
            let prev = &parts[k - 1];
            text.push_str(if prev.contains("<<") || prev.contains('#') {
                "\n"
            } else if may_fail(prev) {
                r.pick(&["; ", "\n"])
            } else {
                r.pick(&["; ", "\n", " && "])
            });
        }
        text.push_str(p);
    }
    text
}

/// `count` candidates from `seed` (the same seed gives the same text).
pub fn candidates(seed: u64, count: usize) -> Vec<String> {
    let mut rng = Rng(seed | 1);
    (0..count)
        .map(|_| candidate(&mut rng, Ctx::default()))
        .collect()
}

/// `count` candidates whose innermost statements give Herdr its arguments
/// through values of the same text ([`arg_values`]).
pub fn value_candidates(seed: u64, count: usize) -> Vec<String> {
    let mut rng = Rng(seed | 1);
    let ctx = Ctx {
        leaf: Some(arg_values),
        ..Ctx::default()
    };
    (0..count).map(|_| candidate(&mut rng, ctx)).collect()
}
