//! Front end on `tree-sitter-bash`: the syntax tree gives the commands and
//! their words; [`crate::rule`] decides. The tree is walked with an explicit
//! stack (no recursion here).

use crate::rule::{self, Stdin, WordBuf, W};
use tree_sitter::{Node, Parser};

/// Nesting of re-parsed scripts (`sh -c`, `eval`) before the loose rule.
const MAX_DEPTH: usize = 16;

/// The verdict for `src`, and whether the top-level text had a syntax error
/// (an ERROR or MISSING node; the loose rule then also judges the text).
pub fn judge(src: &str) -> (i32, bool) {
    // One parser per thread, reused (as a host would keep it).
    thread_local! {
        static PARSER: std::cell::RefCell<Option<Parser>> = const { std::cell::RefCell::new(None) };
    }
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let parser = match slot.take() {
            Some(p) => p,
            None => {
                let mut p = Parser::new();
                p.set_language(&tree_sitter_bash::LANGUAGE.into())
                    .expect("tree-sitter-bash language");
                p
            }
        };
        let mut fe = Front { parser, depth: 0 };
        let out = fe.script(src);
        *slot = Some(fe.parser);
        out
    })
}

struct Front {
    parser: Parser,
    depth: usize,
}

impl Front {
    fn script(&mut self, src: &str) -> (i32, bool) {
        let Some(tree) = self.parser.parse(src, None) else {
            return (rule::word_sequence(src), true);
        };
        let root = tree.root_node();
        let failed = root.has_error();
        let mut v = self.walk(root, src);
        if failed {
            v = v.max(rule::word_sequence(src));
        }
        (v, failed)
    }

    fn sub(&mut self, src: &str) -> i32 {
        if self.depth >= MAX_DEPTH {
            return rule::word_sequence(src);
        }
        self.depth += 1;
        let (v, _) = self.script(src);
        self.depth -= 1;
        v
    }

    /// Visits every node; each `command` is judged with its words. Each
    /// stack entry carries its parent (for the redirections of a
    /// `redirected_statement`) and the text piped into it (tree-sitter's
    /// `Node::parent` walks down from the root, so it is not used).
    fn walk(&mut self, root: Node, src: &str) -> i32 {
        let mut v = 0;
        let mut stack: Vec<(Node, Option<Node>, Option<String>)> = vec![(root, None, None)];
        while let Some((n, parent, piped)) = stack.pop() {
            if n.kind() == "command" {
                v = v.max(self.command(n, parent, piped.as_deref(), src));
            }
            let first = n.named_child(0).map(|f| f.id());
            let mut cur = n.walk();
            for c in n.children(&mut cur) {
                let child_piped = match n.kind() {
                    "pipeline" if Some(c.id()) != first => {
                        let text = &src[n.start_byte()..c.start_byte()];
                        // A here-document body follows the pipeline's line.
                        Some(if text.contains("<<") {
                            src[n.start_byte()..].to_string()
                        } else {
                            text.to_string()
                        })
                    }
                    "redirected_statement" => piped.clone(),
                    _ => None,
                };
                stack.push((c, Some(n), child_piped));
            }
        }
        v
    }

    fn command(&mut self, n: Node, parent: Option<Node>, piped: Option<&str>, src: &str) -> i32 {
        let mut words = Vec::new();
        let mut herestring: Option<String> = None;
        let mut procsub: Option<String> = None;
        let mut v = 0;
        let mut cur = n.walk();
        for c in n.children(&mut cur) {
            match c.kind() {
                "command_name" => {
                    if let Some(w) = c.named_child(0) {
                        self.word(w, src, &mut words);
                    }
                }
                "variable_assignment" => {
                    // A startup file from a process substitution runs.
                    let t = &src[c.byte_range()];
                    if (t.starts_with("BASH_ENV=") || t.starts_with("ENV=")) && t.contains("<(") {
                        v = v.max(rule::loose(t));
                    }
                }
                "file_redirect" => {
                    if let Some(p) = procsub_input(c, src) {
                        procsub = Some(p);
                    }
                }
                "comment" => {}
                "herestring_redirect" => {
                    if let Some(w) = c.named_children(&mut c.walk()).last() {
                        let mut out = Vec::new();
                        self.word(w, src, &mut out);
                        herestring = out.first().map(|w| match w {
                            W::Lit(s) => s.clone(),
                            W::Dyn { text, .. } => text.to_string(),
                        });
                    }
                }
                _ if c.is_named() => self.word(c, src, &mut words),
                // `==`, `=~`, `$` as arguments.
                k if k == "==" || k == "=~" => words.push(W::Lit(k.to_string())),
                _ => {}
            }
        }
        // Here-documents and here-strings on the enclosing statement.
        let mut heredoc: Option<String> = None;
        if let Some(p) = parent.filter(|p| p.kind() == "redirected_statement") {
            let mut pc = p.walk();
            for r in p.children_by_field_name("redirect", &mut pc) {
                match r.kind() {
                    "heredoc_redirect" => heredoc = heredoc_body(r, src),
                    "file_redirect" => {
                        if let Some(p) = procsub_input(r, src) {
                            procsub = Some(p);
                        }
                    }
                    "herestring_redirect" => {
                        if let Some(w) = r.named_children(&mut r.walk()).last() {
                            let mut out = Vec::new();
                            self.word(w, src, &mut out);
                            herestring = out.first().map(|w| match w {
                                W::Lit(s) => s.clone(),
                                W::Dyn { text, .. } => text.to_string(),
                            });
                        }
                    }
                    _ => {}
                }
            }
        }
        let stdin = if let Some(t) = heredoc.as_deref().or(herestring.as_deref()) {
            Stdin::Text(t)
        } else if let Some(p) = procsub.as_deref().or(piped) {
            Stdin::Loose(p)
        } else {
            Stdin::None
        };
        v.max(rule::judge_argv(&words, &stdin, &mut |s| self.sub(s)))
    }

    /// The value(s) of one word node. Substitutions inside are visited by
    /// the tree walk already.
    fn word<'a>(&mut self, n: Node, src: &'a str, out: &mut Vec<W<'a>>) {
        let text = &src[n.byte_range()];
        let mut b = WordBuf::new();
        piece(n, src, &mut b, false);
        b.finish(text, out);
    }
}

fn piece(n: Node, src: &str, b: &mut WordBuf, quoted: bool) {
    let text = &src[n.byte_range()];
    match n.kind() {
        "word" | "number" | "regex" | "extglob_pattern" | "test_operator" | "brace_expression"
            if n.named_child_count() == 0 =>
        {
            if quoted {
                b.push(text, true);
            } else {
                unescape(text, b);
            }
        }
        "raw_string" => {
            b.push(
                text.get(1..text.len().saturating_sub(1)).unwrap_or(""),
                true,
            );
        }
        "ansi_c_string" => {
            let body = text.get(2..text.len().saturating_sub(1)).unwrap_or("");
            b.push(&rule::ansi_c(body), true);
        }
        "string" | "translated_string" => {
            b.push("", true);
            let mut cur = n.walk();
            for c in n.named_children(&mut cur) {
                match c.kind() {
                    "string_content" => dq_unescape(&src[c.byte_range()], b),
                    "string" => piece(c, src, b, true),
                    _ => b.unknown(true),
                }
            }
        }
        "concatenation" => {
            // Children, and the text between them (tree-sitter leaves some
            // literal characters outside named children).
            let mut at = n.start_byte();
            let mut cur = n.walk();
            for c in n.children(&mut cur) {
                if c.start_byte() > at {
                    unescape(&src[at..c.start_byte()], b);
                }
                piece(c, src, b, quoted);
                at = c.end_byte();
            }
            if n.end_byte() > at {
                unescape(&src[at..n.end_byte()], b);
            }
        }
        _ if !n.is_named() => {
            if quoted {
                b.push(text, true)
            } else {
                unescape(text, b)
            }
        }
        _ => b.unknown(quoted),
    }
}

/// Unquoted text: a backslash quotes the next character; `\`+newline
/// vanishes.
fn unescape(text: &str, b: &mut WordBuf) {
    let mut it = text.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some('\n') | None => {}
                Some(n) => b.push(&n.to_string(), true),
            }
        } else {
            b.push(&c.to_string(), false);
        }
    }
}

/// Text inside double quotes: a backslash quotes only `$`, `` ` ``, `"`, `\`
/// and newline.
fn dq_unescape(text: &str, b: &mut WordBuf) {
    let mut out = String::new();
    let mut it = text.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.peek() {
                Some('$' | '`' | '"' | '\\') => out.push(it.next().unwrap_or('\\')),
                Some('\n') => {
                    it.next();
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    b.push(&out, true);
}

/// The body of a here-document redirect as the shell reads it.
fn heredoc_body(r: Node, src: &str) -> Option<String> {
    let mut cur = r.walk();
    let body = r.children(&mut cur).find(|c| c.kind() == "heredoc_body")?;
    Some(src[body.byte_range()].to_string())
}

/// `< <(...)`: the process substitution feeding standard input.
fn procsub_input(r: Node, src: &str) -> Option<String> {
    let t = &src[r.byte_range()];
    let d = r.child_by_field_name("destination")?;
    (d.kind() == "process_substitution" && !t.starts_with('>') && !t.contains(">("))
        .then(|| src[d.byte_range()].to_string())
}
