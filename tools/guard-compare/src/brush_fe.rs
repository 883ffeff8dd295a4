//! Front end on `brush-parser` (the parser of the brush shell): its AST and
//! its word parser give the words; [`crate::rule`] decides.

use crate::rule::{self, Stdin, WordBuf, W};
use brush_parser::ast;
use brush_parser::word::{self, WordPiece, WordPieceWithSource};
use brush_parser::ParserOptions;

/// Nesting of re-parsed scripts (`sh -c`, `eval`) before the loose rule.
const MAX_DEPTH: usize = 16;

/// The verdict for `src`, and whether the top-level text failed to parse.
pub fn judge(src: &str) -> (i32, bool) {
    let mut fe = Front {
        opts: ParserOptions::default(),
        depth: 0,
        v: 0,
    };
    fe.script(src)
}

struct Front {
    opts: ParserOptions,
    depth: usize,
    v: i32,
}

impl Front {
    /// Parses and judges one script; on a parse error the loose rule judges
    /// the whole text (as the guard's fallback does).
    fn script(&mut self, src: &str) -> (i32, bool) {
        let saved = self.v;
        self.v = 0;
        let mut parser =
            brush_parser::Parser::new(std::io::Cursor::new(src.as_bytes()), &self.opts);
        let (v, failed) = match parser.parse_program() {
            Ok(prog) => {
                for cc in &prog.complete_commands {
                    self.list(cc);
                }
                (self.v, false)
            }
            Err(_) => (rule::word_sequence(src), true),
        };
        self.v = saved;
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

    fn list(&mut self, l: &ast::CompoundList) {
        for item in &l.0 {
            self.and_or(&item.0);
        }
    }

    fn and_or(&mut self, a: &ast::AndOrList) {
        self.pipeline(&a.first);
        for x in &a.additional {
            match x {
                ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p),
            }
        }
    }

    fn pipeline(&mut self, p: &ast::Pipeline) {
        let mut before = String::new();
        for (k, c) in p.seq.iter().enumerate() {
            let stdin_text = if k > 0 { Some(before.clone()) } else { None };
            self.command(c, stdin_text.as_deref());
            if !before.is_empty() {
                before.push_str(" | ");
            }
            before.push_str(&c.to_string());
        }
    }

    fn command(&mut self, c: &ast::Command, piped: Option<&str>) {
        match c {
            ast::Command::Simple(s) => self.simple(s, piped),
            ast::Command::Compound(cc, redirs) => {
                self.compound(cc);
                if let Some(r) = redirs {
                    for io in &r.0 {
                        self.redirect(io);
                    }
                }
            }
            ast::Command::Function(f) => {
                self.compound(&f.body.0);
                if let Some(r) = &f.body.1 {
                    for io in &r.0 {
                        self.redirect(io);
                    }
                }
            }
            ast::Command::ExtendedTest(t, redirs) => {
                self.test_expr(&t.expr);
                if let Some(r) = redirs {
                    for io in &r.0 {
                        self.redirect(io);
                    }
                }
            }
        }
    }

    fn test_expr(&mut self, e: &ast::ExtendedTestExpr) {
        match e {
            ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
                self.test_expr(a);
                self.test_expr(b);
            }
            ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => {
                self.test_expr(a)
            }
            ast::ExtendedTestExpr::UnaryTest(_, w) => {
                self.word(w, &mut Vec::new());
            }
            ast::ExtendedTestExpr::BinaryTest(_, a, b) => {
                self.word(a, &mut Vec::new());
                self.word(b, &mut Vec::new());
            }
        }
    }

    fn compound(&mut self, c: &ast::CompoundCommand) {
        match c {
            ast::CompoundCommand::Arithmetic(a) => self.arith(&a.expr.value),
            ast::CompoundCommand::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.arith(&e.value);
                }
                self.list(&f.body.list);
            }
            ast::CompoundCommand::BraceGroup(b) => self.list(&b.list),
            ast::CompoundCommand::Subshell(s) => self.list(&s.list),
            ast::CompoundCommand::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.word(w, &mut Vec::new());
                }
                self.list(&f.body.list);
            }
            ast::CompoundCommand::CaseClause(c) => {
                self.word(&c.value, &mut Vec::new());
                for item in &c.cases {
                    for p in &item.patterns {
                        self.word(p, &mut Vec::new());
                    }
                    if let Some(l) = &item.cmd {
                        self.list(l);
                    }
                }
            }
            ast::CompoundCommand::IfClause(i) => {
                self.list(&i.condition);
                self.list(&i.then);
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.list(c);
                    }
                    self.list(&e.body);
                }
            }
            ast::CompoundCommand::WhileClause(w) | ast::CompoundCommand::UntilClause(w) => {
                self.list(&w.0);
                self.list(&w.1.list);
            }
            ast::CompoundCommand::Coprocess(c) => self.command(&c.body, None),
        }
    }

    /// Substitutions inside arithmetic text run.
    fn arith(&mut self, text: &str) {
        if text.contains("$(") || text.contains('`') {
            if let Ok(pieces) = word::parse_heredoc(text, &self.opts) {
                let mut b = WordBuf::new();
                self.pieces(&pieces, text, &mut b, true);
            }
        }
    }

    /// Judges what a redirection runs; returns the text a here-document or
    /// here-string feeds (`false`) or the producer of a `< <(...)` (`true`).
    fn redirect(&mut self, io: &ast::IoRedirect) -> Option<(String, bool)> {
        match io {
            ast::IoRedirect::File(_, kind, target) => match target {
                ast::IoFileRedirectTarget::Filename(w)
                | ast::IoFileRedirectTarget::Duplicate(w) => {
                    self.word(w, &mut Vec::new());
                    None
                }
                ast::IoFileRedirectTarget::ProcessSubstitution(_, s) => {
                    self.list(&s.list);
                    matches!(kind, ast::IoFileRedirectKind::Read)
                        .then(|| (format!("<({})", s.list), true))
                }
                ast::IoFileRedirectTarget::Fd(_) => None,
            },
            ast::IoRedirect::HereDocument(_, h) => {
                if h.requires_expansion {
                    if let Ok(pieces) = word::parse_heredoc(&h.doc.value, &self.opts) {
                        let mut b = WordBuf::new();
                        self.pieces(&pieces, &h.doc.value, &mut b, true);
                    }
                }
                Some((h.doc.value.clone(), false))
            }
            ast::IoRedirect::HereString(_, w) => {
                let mut out = Vec::new();
                self.word(w, &mut out);
                Some((
                    out.first()
                        .map(|w| match w {
                            W::Lit(s) => s.clone(),
                            W::Dyn { text, .. } => text.to_string(),
                        })
                        .unwrap_or_default(),
                    false,
                ))
            }
            ast::IoRedirect::OutputAndError(w, _) => {
                self.word(w, &mut Vec::new());
                None
            }
        }
    }

    fn simple(&mut self, s: &ast::SimpleCommand, piped: Option<&str>) {
        let mut words = Vec::new();
        let mut stdin_text: Option<(String, bool)> = None;
        let mut items: Vec<&ast::CommandPrefixOrSuffixItem> = Vec::new();
        if let Some(p) = &s.prefix {
            items.extend(p.0.iter());
        }
        let name_at = items.len();
        if let Some(suf) = &s.suffix {
            items.extend(suf.0.iter());
        }
        let mut push_name = s.word_or_name.as_ref();
        for (k, item) in items.iter().enumerate() {
            if k == name_at {
                if let Some(w) = push_name.take() {
                    self.word(w, &mut words);
                }
            }
            match item {
                ast::CommandPrefixOrSuffixItem::IoRedirect(io) => {
                    if let Some(t) = self.redirect(io) {
                        stdin_text = Some(t);
                    }
                }
                ast::CommandPrefixOrSuffixItem::Word(w) => self.word(w, &mut words),
                ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
                    if k >= name_at && push_name.is_none() && !words.is_empty() {
                        // `export A=$(...)`-style argument: still a word.
                        self.word(w, &mut words);
                    } else {
                        self.assignment(a);
                        // A startup file from a process substitution runs.
                        if let ast::AssignmentName::VariableName(n) = &a.name {
                            if (n == "BASH_ENV" || n == "ENV") && w.value.contains("<(") {
                                self.v = self.v.max(rule::loose(&w.value));
                            }
                        }
                    }
                }
                ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
                    self.list(&sub.list);
                    words.push(W::Dyn {
                        text: format!("<({})", sub.list).into(),
                        quoted: false,
                    });
                }
            }
        }
        if let Some(w) = push_name.take() {
            self.word(w, &mut words);
        }
        let stdin = match (&stdin_text, piped) {
            (Some((t, false)), _) => Stdin::Text(t),
            (Some((t, true)), _) => Stdin::Loose(t),
            (None, Some(p)) => Stdin::Loose(p),
            _ => Stdin::None,
        };
        let v = rule::judge_argv(&words, &stdin, &mut |s| self.sub(s));
        self.v = self.v.max(v);
    }

    fn assignment(&mut self, a: &ast::Assignment) {
        match &a.value {
            ast::AssignmentValue::Scalar(w) => self.word(w, &mut Vec::new()),
            ast::AssignmentValue::Array(items) => {
                for (k, v) in items {
                    if let Some(k) = k {
                        self.word(k, &mut Vec::new());
                    }
                    self.word(v, &mut Vec::new());
                }
            }
        }
    }

    /// Parses a word into its value(s); substitutions inside are judged.
    fn word<'a>(&mut self, w: &'a ast::Word, out: &mut Vec<W<'a>>) {
        match word::parse(&w.value, &self.opts) {
            Ok(pieces) => {
                let mut b = WordBuf::new();
                self.pieces(&pieces, &w.value, &mut b, false);
                b.finish(&w.value, out);
            }
            Err(_) => {
                // The word parser failed: unknown value, loose judgement.
                self.v = self.v.max(rule::word_sequence(&w.value));
                out.push(W::Dyn {
                    text: w.value.as_str().into(),
                    quoted: false,
                });
            }
        }
    }

    fn pieces(&mut self, pieces: &[WordPieceWithSource], src: &str, b: &mut WordBuf, quoted: bool) {
        for p in pieces {
            let raw = src.get(p.start_index..p.end_index).unwrap_or("");
            match &p.piece {
                WordPiece::Text(t) => b.push(t, quoted),
                WordPiece::SingleQuotedText(t) => b.push(t, true),
                WordPiece::AnsiCQuotedText(t) => b.push(&rule::ansi_c(t), true),
                WordPiece::EscapeSequence(e) => {
                    let e = e.strip_prefix('\\').unwrap_or(e);
                    b.push(e, true)
                }
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    b.push("", true);
                    self.pieces(inner, src, b, true)
                }
                WordPiece::TildeExpansion(_) => b.push(raw, quoted),
                WordPiece::ParameterExpansion(_) => {
                    if raw.contains("$(") || raw.contains('`') {
                        self.v = self.v.max(rule::loose(raw));
                    }
                    b.unknown(quoted);
                }
                WordPiece::CommandSubstitution(s) | WordPiece::BackquotedCommandSubstitution(s) => {
                    let v = self.sub(s);
                    self.v = self.v.max(v);
                    b.unknown(quoted);
                }
                WordPiece::ArithmeticExpression(e) => {
                    self.arith(&e.value);
                    b.unknown(quoted);
                }
            }
        }
    }
}
