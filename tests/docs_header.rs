//! The C signatures and ownership rules written in the docs (README.md, docs/*.md,
//! hosts/*/README.md) agree with `include/herdr_link.h`:
//!
//! * every prototype a doc writes (`int32_t hl_is_active(const char *session)`) is the header's,
//!   and every call form (`hl_bash_guard(session, command, reason_out)`) has the header's arity
//!   and parameter names;
//! * no doc names an `hl_` function the header does not declare;
//! * a sentence that says a string is static or must not be freed names only what the header
//!   returns as `const char *` (`hl_version`), never a `char *` result or the `char **`
//!   out-parameter (`reason_out`), which the library allocates and the host frees with `hl_free`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One declaration of the header.
#[derive(Debug)]
struct Decl {
    /// `ret name(params)`, whitespace normalised, `(void)` as `()`.
    text: String,
    /// Parameter names in order.
    params: Vec<String>,
    /// Whether the returned pointer is static (`const char *`).
    static_result: bool,
    /// `char **` out-parameters (strings the library allocates for the host to free).
    out_params: Vec<String>,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn normalise(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let s = s.replace("* ", "*").replace(" (", "(").replace("( ", "(");
    let s = s.replace(" )", ")").replace(" ,", ",");
    s.replace("(void)", "()")
}

/// The parameter name of `const char *session` / `char **reason_out` / `void`.
fn param_name(p: &str) -> Option<String> {
    let p = p.trim();
    if p.is_empty() || p == "void" {
        return None;
    }
    let name: String = p
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    Some(name)
}

fn header() -> BTreeMap<String, Decl> {
    let text = std::fs::read_to_string(root().join("include/herdr_link.h")).unwrap();
    let mut decls = BTreeMap::new();
    // cbindgen wraps a long declaration over several lines: join them first.
    let mut lines = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("//") || line.starts_with('*') || line.starts_with("/*") {
            continue;
        }
        if !pending.is_empty() {
            pending.push(' ');
            pending.push_str(line);
            if line.ends_with(");") {
                lines.push(std::mem::take(&mut pending));
            }
        } else if line.contains("hl_") && line.contains('(') && !line.ends_with(");") {
            pending = line.to_string();
        } else {
            lines.push(line.to_string());
        }
    }
    for line in &lines {
        let line = line.as_str();
        if !line.ends_with(");") {
            continue;
        }
        let Some(open) = line.find("hl_") else {
            continue;
        };
        let rest = &line[open..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let ret = line[..open].trim();
        let params_text = &rest[name.len() + 1..rest.len() - 2];
        let params: Vec<String> = params_text.split(',').filter_map(param_name).collect();
        let out_params = params_text
            .split(',')
            .filter(|p| p.contains("**"))
            .filter_map(param_name)
            .collect();
        decls.insert(
            name.clone(),
            Decl {
                text: normalise(&line[..line.len() - 1]),
                params,
                static_result: ret.starts_with("const char"),
                out_params,
            },
        );
    }
    assert!(decls.len() >= 8, "header declarations not found: {decls:?}");
    decls
}

fn docs() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    for dir in ["docs", "hosts"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if dir == "docs" && path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            } else if path.join("README.md").is_file() {
                files.push(path.join("README.md"));
            }
        }
    }
    files.sort();
    files
}

/// One `hl_name(...)` found in a doc: the text before the name on its line and the argument text.
struct Mention {
    name: String,
    before: String,
    args: String,
}

fn mentions(text: &str) -> Vec<Mention> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut from = 0;
        while let Some(i) = line[from..].find("hl_").map(|i| i + from) {
            from = i + 3;
            let boundary = line[..i]
                .chars()
                .last()
                .map_or(true, |c| !(c.is_ascii_alphanumeric() || c == '_'));
            let name: String = line[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let after = &line[i + name.len()..];
            if !boundary || !after.starts_with('(') {
                continue;
            }
            let Some(close) = after.find(')') else {
                continue;
            };
            out.push(Mention {
                name,
                before: line[..i].to_string(),
                args: after[1..close].to_string(),
            });
        }
    }
    out
}

/// The C return type written right before a mention (`int32_t `, `const char *`), if any.
fn return_type(before: &str) -> Option<String> {
    let before = before.trim_end();
    const TYPES: [&str; 11] = [
        "const char *",
        "const char*",
        "char *",
        "char*",
        "int32_t",
        "uint32_t",
        "size_t",
        "long",
        "bool",
        "int",
        "void",
    ];
    for ty in TYPES {
        if let Some(head) = before.strip_suffix(ty.trim_end()) {
            let head = head.trim_end();
            if head.is_empty() || !head.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                // `const char *` must not be read as `char *` when `const` precedes it.
                if ty.starts_with("char") && head.ends_with("const") {
                    continue;
                }
                return Some(ty.to_string());
            }
        }
    }
    None
}

#[test]
fn signatures_in_the_docs_match_the_header() {
    let decls = header();
    let mut problems = Vec::new();
    let mut prototypes = 0;
    for file in docs() {
        let text = std::fs::read_to_string(&file).unwrap();
        let rel = file.strip_prefix(root()).unwrap().display().to_string();
        for m in mentions(&text) {
            let Some(decl) = decls.get(&m.name) else {
                problems.push(format!("{rel}: {}() is not in the header", m.name));
                continue;
            };
            let plain = m.args.split(',').all(|a| {
                a.trim()
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
            let ret = return_type(&m.before);
            if ret.is_some() || !plain {
                // A prototype: the written parameter list (and return type, when written) must
                // be the header's.
                prototypes += 1;
                let call = normalise(&format!("{}({})", m.name, m.args));
                let written = match &ret {
                    Some(ret) => normalise(&format!("{ret} {call}")),
                    None => call.clone(),
                };
                let expected = match ret {
                    Some(_) => decl.text.clone(),
                    None => decl.text[decl.text.find(&m.name).unwrap()..].to_string(),
                };
                if written != expected {
                    problems.push(format!(
                        "{rel}: `{written}` but the header has `{}`",
                        decl.text
                    ));
                }
            } else {
                let args: Vec<String> = m.args.split(',').filter_map(param_name).collect();
                if args != decl.params {
                    problems.push(format!(
                        "{rel}: {}({}) but the header's parameters are ({})",
                        m.name,
                        m.args,
                        decl.params.join(", ")
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        prototypes >= 8,
        "the table of prototypes (docs/c-abi.md) was not found"
    );
}

/// The sentences of a Markdown text: table rows and list items on their own, comment-block
/// decorations (` * `) removed, split at `. `.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut joined = String::new();
        for line in block.lines() {
            let line = line.trim();
            let line = line
                .strip_prefix("/*")
                .or_else(|| line.strip_prefix("* "))
                .or_else(|| line.strip_prefix("//"))
                .unwrap_or(line);
            if line.starts_with('|') {
                out.push(line.to_string());
            } else {
                joined.push(' ');
                joined.push_str(line);
            }
        }
        out.extend(joined.split(". ").map(str::to_string));
    }
    out
}

const NO_FREE: [&str; 9] = [
    "static",
    "do not free",
    "don't free",
    "not be freed",
    "never free",
    "never released",
    "never release",
    "not be released",
    "do not release",
];

#[test]
fn ownership_rules_in_the_docs_match_the_header() {
    let decls = header();
    // What the library allocates for the host: `char *` results and `char **` out-parameters.
    let mut owned: Vec<String> = decls
        .iter()
        .filter(|(_, d)| d.text.starts_with("char *") || d.text.starts_with("char*"))
        .map(|(n, _)| n.clone())
        .collect();
    owned.extend(decls.values().flat_map(|d| d.out_params.clone()));
    assert!(owned.iter().any(|o| o == "reason_out"), "{owned:?}");
    let statics: Vec<&String> = decls
        .iter()
        .filter(|(_, d)| d.static_result)
        .map(|(n, _)| n)
        .collect();
    assert_eq!(statics, ["hl_version"]);

    // The header itself says the owned strings are released with hl_free.
    let h = std::fs::read_to_string(root().join("include/herdr_link.h")).unwrap();
    let guard_doc = h
        .split("\n\n")
        .find(|b| b.contains("int32_t hl_bash_guard("))
        .unwrap();
    assert!(guard_doc.contains("reason_out") && guard_doc.contains("hl_free"));

    let mut problems = Vec::new();
    for file in docs() {
        let text = std::fs::read_to_string(&file).unwrap();
        let rel = file.strip_prefix(root()).unwrap().display().to_string();
        for s in sentences(&text) {
            let lower = s.to_lowercase();
            if !NO_FREE.iter().any(|p| lower.contains(p)) {
                continue;
            }
            for o in &owned {
                let named = s.match_indices(o.as_str()).any(|(i, _)| {
                    let next = s[i + o.len()..].chars().next();
                    next.map_or(true, |c| !(c.is_ascii_alphanumeric() || c == '_'))
                });
                if named {
                    problems.push(format!(
                        "{rel}: says {o} is static or not to be freed, but the library allocates it (release with hl_free): {}",
                        s.trim()
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
