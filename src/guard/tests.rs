//! Unit tests for the lexer pieces and the verdict plumbing.

use super::lexer::{stack_mark, End, Lexer, Simple, Sink, Stop, Text, R};
use super::words::render;
use super::{judge, Verdict};

/// A sink that records the simple commands the lexer hands up, as rendered
/// words (`$` marks an expansion), and analyses nothing.
#[derive(Default)]
struct Trace {
    cmds: Vec<Vec<String>>,
}

impl Sink for Trace {
    fn command(&mut self, cmd: &Simple<'_>) -> R<bool> {
        self.cmds
            .push(cmd.words.iter().map(|w| render(w.b)).collect());
        Ok(false)
    }
    fn end(&mut self, _: End) {}
    fn line(&mut self, _: u32) -> R {
        Ok(())
    }
    fn subshell(&mut self, _: bool) {}
    fn function(&mut self, _: &[u8], _: bool) {}
    fn assigns(&mut self, _: Option<&[u8]>) {}
    fn text(&mut self, _: &[u8], _: Text, _: u32) -> R {
        Ok(())
    }
    fn spend(&mut self, _: usize) -> R {
        Ok(())
    }
}

fn lex(src: &str) -> (R, Vec<Vec<String>>) {
    let mut t = Trace::default();
    let r = Lexer::new(src.as_bytes(), 0, stack_mark(), &mut t).script();
    (r, t.cmds)
}

/// The simple commands of `src`, as rendered words (`$` marks an expansion).
fn cmds(src: &str) -> Vec<Vec<String>> {
    let (r, c) = lex(src);
    r.expect("parses");
    c
}

fn one(src: &str) -> Vec<String> {
    let mut c = cmds(src);
    assert_eq!(c.len(), 1, "{src:?} gave {c:?}");
    c.remove(0)
}

fn stop(src: &str) -> Stop {
    lex(src).0.expect_err("must not parse")
}

#[test]
fn quotes_and_escapes() {
    assert_eq!(
        one("echo 'a b' \"c d\" e\\ f"),
        ["echo", "a b", "c d", "e f"]
    );
    assert_eq!(one("echo a'b'\"c\"d"), ["echo", "abcd"]);
    assert_eq!(one("echo \"a\\\"b\\$c\\x\""), ["echo", "a\"b$c\\x"]);
    assert_eq!(one("echo 'a\\'"), ["echo", "a\\"]);
    assert_eq!(one("echo ''"), ["echo", ""]);
    assert_eq!(one("echo \\'x"), ["echo", "'x"]);
}

#[test]
fn ansi_c_quotes() {
    assert_eq!(one("echo $'a\\tb\\'c'"), ["echo", "a\tb'c"]);
    assert_eq!(one("$'\\x68erdr' x"), ["herdr", "x"]);
    assert_eq!(one("echo $'\\150\\u00e9'"), ["echo", "h\u{e9}"]);
    assert_eq!(one("echo $\"loc $x\""), ["echo", "loc $"]);
}

#[test]
fn line_continuations() {
    assert_eq!(
        one("herdr agent \\\nwait x"),
        ["herdr", "agent", "wait", "x"]
    );
    assert_eq!(one("her\\\ndr x"), ["herdr", "x"]);
    assert_eq!(one("echo \"a\\\nb\""), ["echo", "ab"]);
}

#[test]
fn separators() {
    let c = cmds("a 1; b 2 && c || d | e & f\ng |& h");
    let firsts: Vec<&str> = c.iter().map(|w| w[0].as_str()).collect();
    assert_eq!(firsts, ["a", "b", "c", "d", "e", "f", "g", "h"]);
    let c = cmds("(a; b) && { c; }");
    assert_eq!(c, [vec!["a"], vec!["b"], vec!["{", "c"], vec!["}"]]);
}

#[test]
fn comments() {
    assert_eq!(cmds("ls # herdr agent wait\n"), [vec!["ls"]]);
    assert_eq!(cmds("# only a comment"), Vec::<Vec<String>>::new());
    assert_eq!(one("echo a#b"), ["echo", "a#b"]);
}

#[test]
fn redirections_are_not_arguments() {
    assert_eq!(
        one("herdr agent wait x > out 2>&1"),
        ["herdr", "agent", "wait", "x"]
    );
    assert_eq!(one("> out herdr agent wait"), ["herdr", "agent", "wait"]);
    assert_eq!(one("cmd &>log <in"), ["cmd"]);
    assert_eq!(one("echo 2x>y"), ["echo", "2x"]);
}

#[test]
fn heredoc_bodies_are_skipped() {
    let c = cmds("cat <<EOF\nherdr agent wait x\nEOF\necho done");
    assert_eq!(c, [vec!["cat"], vec!["echo", "done"]]);
    let c = cmds("cat <<-'E' > f\n\therdr agent wait\n\tE\nls");
    assert_eq!(c, [vec!["cat"], vec!["ls"]]);
    let c = cmds("cat <<A <<B\na\nA\nb\nB\nls");
    assert_eq!(c, [vec!["cat"], vec!["ls"]]);
}

#[test]
fn substitutions_are_descended() {
    assert_eq!(
        cmds("echo \"$(herdr agent wait x)\""),
        [vec!["herdr", "agent", "wait", "x"], vec!["echo", "$"]]
    );
    assert_eq!(
        cmds("echo $((1 + (2))) $(( $(a) << 2 ))"),
        [vec!["a"], vec!["echo", "$", "$"]]
    );
    assert_eq!(
        cmds("diff <(a) >(b)"),
        [vec!["a"], vec!["b"], vec!["diff", "$", "$"]]
    );
    assert_eq!(cmds("echo ${x:-$(y)}"), [vec!["y"], vec!["echo", "$"]]);
}

#[test]
fn case_patterns_do_not_close_substitutions() {
    let c = cmds("echo $(case $x in a) herdr agent wait;; esac)");
    assert_eq!(c[1], ["herdr", "agent", "wait"]);
}

#[test]
fn assignments_and_arrays() {
    assert_eq!(one("A=(herdr agent wait) ls"), ["A=", "ls"]);
    assert_eq!(one("A+=1 B=2 herdr"), ["A+=1", "B=2", "herdr"]);
}

#[test]
fn io_numbers_and_globs() {
    assert_eq!(one("ls 10>x her?r *"), ["ls", "her?r", "*"]);
    assert_eq!(one("ls wai[t] [x"), ["ls", "wai?", "[x"]);
}

#[test]
fn broken_inputs() {
    assert_eq!(stop("echo 'abc"), Stop::Broken);
    assert_eq!(stop("echo \"abc"), Stop::Broken);
    assert_eq!(stop("echo $(ls"), Stop::Unread);
    assert_eq!(stop("echo `ls"), Stop::Broken);
    assert_eq!(stop("echo ${x"), Stop::Broken);
    assert_eq!(stop("echo )"), Stop::Unread);
    assert_eq!(stop("(echo"), Stop::Unread);
    assert_eq!(stop("cat <"), Stop::Broken);
    assert_eq!(stop(&"$(".repeat(100)), Stop::TooDeep);
}

#[test]
fn verdict_codes_and_reasons() {
    assert_eq!(Verdict::Allow.code(), 0);
    assert_eq!(Verdict::Block.code(), 1);
    assert_eq!(Verdict::BlockEndTurn.code(), 2);
    assert_eq!(Verdict::Allow.reason(), None);
    let end = Verdict::BlockEndTurn.reason().unwrap();
    assert!(end.contains("End your turn") && end.contains("inbound Herdr Link message"));
    let send = Verdict::Block.reason().unwrap();
    assert!(send.contains("herdr_link_send") && send.contains("no waiting variant"));
    assert_eq!(Verdict::Block.max(Verdict::Allow), Verdict::Block);
    assert_eq!(
        Verdict::Block.max(Verdict::BlockEndTurn),
        Verdict::BlockEndTurn
    );
}

#[test]
fn text_bash_rejects_runs_nothing_of_its_line() {
    // Bash reads a whole line before running it: an unclosed quote or `$(`
    // on it means nothing of the line runs.
    assert_eq!(judge("echo 'herdr agent wait x"), Verdict::Allow);
    assert_eq!(judge("herdr agent wait x 'unbalanced"), Verdict::Allow);
    assert_eq!(judge("herdr agent prompt p \"hi --wait"), Verdict::Allow);
    // An unclosed `(` or `$(`: the lexer may have taken a `)` for something
    // else, so the word-sequence rule judges it.
    assert_eq!(judge("echo $(herdr agent wait x"), Verdict::BlockEndTurn);
    assert_eq!(judge("(herdr agent wait x"), Verdict::BlockEndTurn);
    // The complete lines before it ran.
    assert_eq!(
        judge("herdr agent wait x\necho 'unbalanced"),
        Verdict::BlockEndTurn
    );
    assert_eq!(
        judge("herdr agent prompt p hi --wait\necho \"x"),
        Verdict::Block
    );
    // A backquoted or here-document substitution is read when it runs: its
    // error does not stop the commands around it.
    assert_eq!(judge("echo `'`; herdr agent wait x"), Verdict::BlockEndTurn);
    assert_eq!(
        judge("cat <<EOF\n$(echo \"\nEOF\nherdr agent wait x"),
        Verdict::BlockEndTurn
    );
    assert_eq!(judge("echo `herdr agent wait x '`"), Verdict::BlockEndTurn);
    // A script another shell reads: the rest of the input still runs.
    assert_eq!(
        judge("sh -c 'echo \"'; herdr agent wait x"),
        Verdict::BlockEndTurn
    );
    // Process substitutions are array elements.
    assert_eq!(judge("a=(<(herdr agent wait x))"), Verdict::BlockEndTurn);
}

#[test]
fn fallback_rules_take_their_words_from_the_policy() {
    use super::fallback::{loose_sequence, word_sequence};
    let w = |t: &str| word_sequence(t.as_bytes()).code();
    let l = |t: &str| loose_sequence(t.as_bytes()).code();
    assert_eq!(w("herdr agent wait x ("), 2);
    assert_eq!(w("echo herdr agent list; wait x"), 0);
    // The policy's reading of the words after the Herdr word: global flags,
    // `--`, values of flags.
    assert_eq!(w("herdr --remote h --handoff agent wait x '"), 2);
    assert_eq!(w("herdr --session -- agent wait x '"), 2);
    assert_eq!(w("herdr -- agent wait x '"), 0);
    assert_eq!(w("herdr agent --session s prompt p x --wait '"), 1);
    assert_eq!(w("herdr agent get p --wait '"), 0);
    assert_eq!(l("$(echo herdr agent wait x)"), 2);
    assert_eq!(l("echo 'herdr agent prompt p hi --wait'"), 1);
    assert_eq!(l("echo herdr agent list; echo ok"), 0);
}

/// The guard's modules from the bottom layer up, each with the files of its
/// subtree (its own file first). A module may name (as `super::NAME`) only
/// modules listed before it: the layers only look down, so no import circle
/// can come back. A module's children belong to its layer: they name their
/// parent (`super::NAME`) freely, and the layers below only through it
/// (never `super::super::`).
const LAYERS: &[(&str, &[&str])] = &[
    ("policy", &[include_str!("policy.rs")]),
    ("words", &[include_str!("words.rs")]),
    ("fallback", &[include_str!("fallback.rs")]),
    ("resolve", &[include_str!("resolve.rs")]),
    ("expand", &[include_str!("expand.rs")]),
    ("lexer", &[include_str!("lexer.rs")]),
    ("flow", &[include_str!("flow.rs")]),
    (
        "analyze",
        &[
            include_str!("analyze/mod.rs"),
            include_str!("analyze/dispatch.rs"),
            include_str!("analyze/herdr.rs"),
            include_str!("analyze/scripts.rs"),
            include_str!("analyze/values.rs"),
            include_str!("analyze/wrappers.rs"),
        ],
    ),
];

/// Every name a module's source reaches through `super::` (its own test
/// module, whose `super` is the module itself, left out).
fn names_above(src: &str) -> Vec<String> {
    let body = src.split("#[cfg(test)]\nmod tests").next().unwrap_or(src);
    let mut out = Vec::new();
    for (at, _) in body.match_indices("super::") {
        let rest = &body[at + "super::".len()..];
        let names: Vec<&str> = match rest.strip_prefix('{') {
            Some(group) => group[..group.find('}').unwrap_or(group.len())]
                .split(',')
                .map(|n| n.trim().split("::").next().unwrap_or(""))
                .collect(),
            None => vec![rest
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("")],
        };
        out.extend(
            names
                .into_iter()
                .filter(|n| !n.is_empty())
                .map(String::from),
        );
    }
    out
}

/// The types a module's source defines (`struct`, `enum`, `trait`), its
/// test module left out.
fn types_defined(src: &str) -> Vec<String> {
    let body = src.split("#[cfg(test)]\nmod tests").next().unwrap_or(src);
    let mut out = Vec::new();
    for line in body.lines() {
        let line = line.trim_start();
        let line = line.strip_prefix("pub(super) ").unwrap_or(line);
        let line = line.strip_prefix("pub ").unwrap_or(line);
        for kw in ["struct ", "enum ", "trait "] {
            if let Some(rest) = line.strip_prefix(kw) {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                out.push(name);
            }
        }
    }
    out
}

/// The type of every `impl` block of a module's source (`impl X`, `impl<'a> X<'a>`,
/// `impl Trait for X`), its test module left out.
fn types_implemented(src: &str) -> Vec<String> {
    let body = src.split("#[cfg(test)]\nmod tests").next().unwrap_or(src);
    let mut out = Vec::new();
    for line in body.lines() {
        let Some(rest) = line.strip_prefix("impl") else {
            continue;
        };
        // Skip generics: `<...>` right after `impl`.
        let rest = match rest.strip_prefix('<') {
            Some(r) => &r[r.find('>').map_or(0, |k| k + 1)..],
            None => rest,
        };
        let target = rest.split(" for ").last().unwrap_or(rest).trim();
        let name: String = target
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        out.push(name);
    }
    out
}

/// The layers only look down in their data types too: every `impl` block
/// stands in the subtree of the module that defines its type (so no higher
/// layer adds methods to a lower layer's state, and no lower layer's type
/// holds what a higher one works out); a higher layer reaches a lower one
/// only through the lower one's own types and traits (`impl Sink for
/// Analysis`). A module may spread its own types' methods over its children
/// (`analyze/*.rs`, one concern each).
#[test]
fn implementations_stay_with_their_types() {
    for (module, files) in LAYERS {
        let own: Vec<String> = files.iter().flat_map(|src| types_defined(src)).collect();
        for t in files.iter().flat_map(|src| types_implemented(src)) {
            assert!(
                own.contains(&t),
                "guard::{module} implements `{t}`, a type its subtree does not define"
            );
        }
    }
    // The check sees what it must.
    assert_eq!(
        types_implemented("impl<'s> Parser<'s> {\nimpl Sink for Analysis {\nimpl Frame {"),
        ["Parser", "Analysis", "Frame"]
    );
    assert_eq!(
        types_defined("pub(super) struct Lexer<'s> {\nenum End {\npub(super) trait Sink {"),
        ["Lexer", "End", "Sink"]
    );
}

#[test]
fn modules_only_look_down() {
    for (k, (module, files)) in LAYERS.iter().enumerate() {
        let below: Vec<&str> = LAYERS[..k].iter().map(|(m, _)| *m).collect();
        let (src, children) = files.split_first().unwrap();
        for child in children {
            // A child reaches past its parent only through it.
            assert!(
                !child.contains("super::super::") && !child.contains("crate::guard::"),
                "a child of guard::{module} reaches past its parent"
            );
        }
        for name in names_above(src) {
            assert!(
                below.contains(&name.as_str()),
                "guard::{module} names `super::{name}`: only {below:?} lie below it \
                 (a module of a higher layer, or an item of guard/mod.rs, would close a circle)"
            );
        }
        // Nor around the layers through the crate root.
        assert!(
            !src.contains("crate::guard::"),
            "guard::{module} reaches the guard through crate::guard"
        );
    }
    // The check itself sees what it must.
    assert_eq!(
        names_above("use super::lexer::{A, B};\nuse super::{policy::Verdict, words};\n/// [`super::resolve`]"),
        ["lexer", "policy", "words", "resolve"]
    );
    assert_eq!(
        names_above("x\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n"),
        Vec::<String>::new()
    );
    // Every module of the guard but the root and its tests has a layer.
    let root = include_str!("mod.rs");
    for line in root.lines() {
        if let Some(m) = line
            .strip_prefix("mod ")
            .or_else(|| line.strip_prefix("pub mod "))
            .and_then(|m| m.strip_suffix(';'))
        {
            assert!(
                m == "tests" || LAYERS.iter().any(|(l, _)| *l == m),
                "guard::{m} has no layer in LAYERS"
            );
        }
    }
}

#[test]
fn unknown_arguments_are_the_shims_where_it_is_in_place() {
    use super::{judge_with, ExecLayer};
    let shim = |c: &str| judge_with(c, ExecLayer::Shim);
    // Not fixed by the text: the shim judges the real argv.
    for c in [
        "herdr \"$@\"",
        "herdr agent $VERB reviewer",
        "herdr agent prompt beta hi $OPTS",
        "herdr $(cat cmd.txt)",
        "\"$HERDR_BIN_PATH\" \"$@\"",
        "cd x && herdr \"$@\" && echo done",
        "xargs herdr agent < verbs",
    ] {
        assert_eq!(shim(c), Verdict::Allow, "{c}");
        assert_ne!(judge(c), Verdict::Allow, "{c}");
    }
    // What the text shows surely waits is blocked whatever the values.
    assert_eq!(shim("herdr agent wait \"$PEER\""), Verdict::BlockEndTurn);
    assert_eq!(
        shim("herdr agent prompt \"$P\" \"$M\" --wait"),
        Verdict::Block
    );
    assert_eq!(shim("v=wait; herdr agent $v x"), Verdict::BlockEndTurn);
    // Not through the shim: an absolute path, a PATH the text changes, a
    // wrapper or login shell that resets it, an unknown command word.
    for c in [
        "/usr/local/bin/herdr \"$@\"",
        "./herdr \"$@\"",
        "PATH=/opt/h:$PATH herdr \"$@\"",
        "export PATH=/opt/h; herdr \"$@\"",
        "hash -p /opt/herdr herdr; herdr \"$@\"",
        "sudo herdr \"$@\"",
        "env -i herdr \"$@\"",
        "command -p herdr \"$@\"",
        "bash -lc 'herdr \"$@\"'",
        "$H agent wait x",
    ] {
        assert_ne!(shim(c), Verdict::Allow, "{c}");
    }
    // Wrappers that keep PATH keep the shim.
    assert_eq!(shim("nohup herdr \"$@\" &"), Verdict::Allow);
    assert_eq!(shim("sh -c 'herdr \"$@\"'"), Verdict::Allow);
}

#[test]
fn layered_judging_asks_for_the_shim_only_when_the_cautious_verdict_blocks() {
    use super::judge_layered;
    use std::cell::Cell;
    let asked = Cell::new(0);
    let shim = |there: bool| {
        let asked = &asked;
        move || {
            asked.set(asked.get() + 1);
            there
        }
    };
    assert_eq!(
        judge_layered("ls -la", shim(true)),
        (Verdict::Allow, Verdict::Allow)
    );
    assert_eq!(asked.get(), 0, "an ordinary command never asks");
    let unknown = "herdr \"$@\"";
    let cautious = judge(unknown);
    assert_ne!(cautious, Verdict::Allow);
    assert_eq!(
        judge_layered(unknown, shim(true)),
        (cautious, Verdict::Allow)
    );
    assert_eq!(judge_layered(unknown, shim(false)), (cautious, cautious));
    let wait = "herdr agent wait reviewer";
    assert_eq!(
        judge_layered(wait, shim(true)),
        (Verdict::BlockEndTurn, Verdict::BlockEndTurn)
    );
    assert_eq!(asked.get(), 3);
}

#[test]
fn herdr_bin_path_is_herdr_only_as_itself_or_with_a_default() {
    use super::{judge_with, ExecLayer};
    let shim = |c: &str| judge_with(c, ExecLayer::Shim);
    for c in [
        "\"$HERDR_BIN_PATH\" \"$@\"",
        "${HERDR_BIN_PATH} \"$@\"",
        "\"${HERDR_BIN_PATH:-herdr}\" \"$@\"",
    ] {
        assert_ne!(judge(c), Verdict::Allow, "{c}");
        assert_eq!(shim(c), Verdict::Allow, "{c}");
    }
    // An operator that changes the value makes it a command word like any other.
    for c in [
        "${HERDR_BIN_PATH/herdr/echo} \"$@\"",
        "${HERDR_BIN_PATH%/*} \"$@\"",
        "${HERDR_BIN_PATH:+x} \"$@\"",
    ] {
        assert_eq!(judge(c), judge("$X \"$@\""), "{c}");
    }
    assert_eq!(
        judge("${HERDR_BIN_PATH/x/y} agent wait x"),
        Verdict::BlockEndTurn
    );
}
