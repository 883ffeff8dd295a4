//! The error table (`src/error.rs`) is the one source of the codes and fixed texts; every copy
//! outside Rust is generated from it or checked against it here:
//!
//! - the Python package's `_codes.py` is generated (`HERDR_LINK_BLESS=1 cargo test --test
//!   error_table` rewrites it);
//! - the C header's list of codes (`cbindgen.toml`, copied into `include/herdr_link.h`) and
//!   PROTOCOL.md §7's table must agree with it;
//! - every error code the hosts' glue and the `herdr-link` binary name is one of the table's.

use std::path::{Path, PathBuf};

use herdr_link::error::{INTERNAL_ERROR, INVALID_REQUEST, LINK_CODES, REASONS};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A Python string literal (the texts hold no quote or backslash; checked).
fn py(s: &str) -> String {
    assert!(!s.contains(['"', '\\']) && s.is_ascii(), "{s:?}");
    format!("\"{s}\"")
}

/// The Python package's `_codes.py`, as the table makes it.
fn python_codes() -> String {
    let mut out = String::from(
        "# Generated from the library's error table (src/error.rs) by tests/error_table.rs; do not\n\
         # edit: `HERDR_LINK_BLESS=1 cargo test --test error_table` rewrites it.\n\
         \"\"\"The codes a herdr-link response can carry, from the library's one error table.\"\"\"\n\n\
         #: The ten Link codes (PROTOCOL §7). ``INTERNAL_ERROR`` is not one of them, but also raises\n\
         #: :class:`LinkError`.\n\
         LINK_CODES = frozenset(\n    {\n",
    );
    for code in LINK_CODES {
        out += &format!("        {},\n", py(code));
    }
    out += "    }\n)\n\n#: Every fixed model-facing text: ``(code, text)``, shown as ``\"CODE: text\"``.\nREASONS = (\n";
    for r in REASONS {
        out += &format!("    ({}, {}),\n", py(r.code), py(r.text));
    }
    out += &format!(
        ")\n\n#: A malformed request (a host bug, not a Link code).\nINVALID_REQUEST = {}\n\n\
         #: A failure inside the library (never expected), and its fixed text.\n\
         INTERNAL_ERROR = {}\nINTERNAL_ERROR_TEXT = {}\n",
        py(INVALID_REQUEST),
        py(INTERNAL_ERROR.code),
        py(INTERNAL_ERROR.text)
    );
    out
}

#[test]
fn python_codes_are_generated_from_the_table() {
    let rel = "hosts/python/src/herdr_link/_codes.py";
    let generated = python_codes();
    if std::env::var_os("HERDR_LINK_BLESS").is_some() {
        std::fs::write(root().join(rel), &generated).unwrap();
    }
    assert!(
        read(rel) == generated,
        "{rel} drifted from src/error.rs; run HERDR_LINK_BLESS=1 cargo test --test error_table"
    );
    // The package takes its codes from there, and writes none of its own.
    let package = read("hosts/python/src/herdr_link/__init__.py");
    assert!(package.contains("from ._codes import"), "__init__.py");
    assert_eq!(unknown_codes(&package, &[]), Vec::<String>::new());
    assert_eq!(written_codes(&package), Vec::<String>::new(), "__init__.py");
}

/// The words at the start of a string literal of `text` that are shaped like an error code
/// (`"NOT_IN_HERDR"`, `"..._FAILED: ..."`, ...).
fn code_words(text: &str) -> Vec<String> {
    const ENDS: [&str; 7] = [
        "_FAILED",
        "_NOT_FOUND",
        "_INVALID",
        "_UNNAMED",
        "_ERROR",
        "_REQUEST",
        "_USAGE",
    ];
    text.split(['"', '\'', '`'])
        .skip(1)
        .map(|rest| {
            let end = rest
                .find(|c: char| !(c.is_ascii_uppercase() || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .filter(|w| w.contains('_') && !w.starts_with('_'))
        .filter(|w| *w == "NOT_IN_HERDR" || ENDS.iter().any(|e| w.ends_with(e)))
        .map(str::to_string)
        .collect()
}

/// The code-shaped words of `text` that are not codes of the table (nor in `own`).
fn unknown_codes(text: &str, own: &[&str]) -> Vec<String> {
    code_words(text)
        .into_iter()
        .filter(|w| {
            !LINK_CODES.contains(&w.as_str())
                && *w != INVALID_REQUEST
                && *w != INTERNAL_ERROR.code
                && !own.contains(&w.as_str())
        })
        .collect()
}

/// The codes of the table that `src` writes as a string literal of its own (a copy).
fn written_codes(src: &str) -> Vec<String> {
    let mut codes: Vec<&str> = LINK_CODES.to_vec();
    codes.extend([INVALID_REQUEST, INTERNAL_ERROR.code]);
    codes
        .into_iter()
        .filter(|c| src.contains(&format!("\"{c}\"")) || src.contains(&format!("'{c}'")))
        .map(str::to_string)
        .collect()
}

/// The source files below `dir` whose name ends with one of `exts`.
fn sources(dir: &str, exts: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root().join(dir)];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = entry.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                if !["node_modules", "dist", "__pycache__"].contains(&name.as_str()) {
                    stack.push(p);
                }
            } else if exts.iter().any(|e| name.ends_with(e)) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The part of a Rust source before its unit tests.
fn without_tests(src: &str) -> &str {
    src.split("#[cfg(test)]").next().unwrap_or(src)
}

#[test]
fn the_binary_and_the_hosts_glue_take_codes_from_the_table() {
    // The C host has one code of its own, for its own command language (hosts/c/README.md).
    let own: &[(&str, &[&str])] = &[
        ("hosts/c", &["HOST_USAGE"]),
        ("hosts/pi/src", &[]),
        ("hosts/opencode/src", &[]),
        ("hosts/python/src", &[]),
        ("cli/src", &[]),
    ];
    let mut seen = 0;
    for (dir, own) in own {
        for file in sources(dir, &[".rs", ".ts", ".mjs", ".py", ".c", ".h"]) {
            let text = std::fs::read_to_string(&file).unwrap();
            let shown = file.strip_prefix(root()).unwrap().display().to_string();
            let text = if shown.ends_with(".rs") {
                without_tests(&text)
            } else {
                &text
            };
            seen += 1;
            assert_eq!(
                unknown_codes(text, own),
                Vec::<String>::new(),
                "{shown} names codes the error table (src/error.rs) does not have"
            );
            if shown.starts_with("cli/") {
                // The binary is Rust: it takes the codes from the library itself.
                assert_eq!(written_codes(text), Vec::<String>::new(), "{shown}");
            }
        }
    }
    assert!(seen > 20, "only {seen} files looked at");
    // The check sees what it must.
    assert_eq!(
        unknown_codes(
            "throw new E(\"START_CONF_INVALID\", `TARGET_NOT_FOUND: x`); // NO_SUCH_ERROR",
            &[]
        ),
        ["START_CONF_INVALID", "TARGET_NOT_FOUND"]
    );
    assert_eq!(
        written_codes("note(\"mcp\", \"NOT_IN_HERDR\", &h)"),
        ["NOT_IN_HERDR"]
    );
}

#[test]
fn the_header_lists_the_table_codes() {
    for (rel, text) in [
        ("cbindgen.toml", read("cbindgen.toml")),
        ("include/herdr_link.h", read("include/herdr_link.h")),
    ] {
        let list = text
            .split("C is one of the Link codes ")
            .nth(1)
            .and_then(|t| t.split("; or ").next())
            .unwrap_or_else(|| panic!("{rel} lists no codes"));
        let listed: Vec<&str> = list
            .split([',', ' ', '\n', '*'])
            .filter(|w| !w.is_empty())
            .collect();
        assert_eq!(listed, LINK_CODES, "{rel}");
        assert!(
            text.contains(&format!("or {INVALID_REQUEST} (")),
            "{rel}: INVALID_REQUEST"
        );
        assert!(
            text.contains(&format!("or {} (", INTERNAL_ERROR.code)),
            "{rel}: INTERNAL_ERROR"
        );
    }
}

/// PROTOCOL.md §7's table: one row per code (or per fixed text), `| `CODE` | meaning | `text` |`.
#[test]
fn protocol_section_7_gives_the_table_texts() {
    let protocol = read("PROTOCOL.md");
    let section = protocol
        .split("\n## 7. Error Model\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("PROTOCOL.md has §7");
    let rows: Vec<(String, String)> = section
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            match cells.as_slice() {
                ["", code, _, text, ""] if code.starts_with('`') && text.starts_with('`') => {
                    Some((
                        code.trim_matches('`').to_string(),
                        text.trim_matches('`').to_string(),
                    ))
                }
                _ => None,
            }
        })
        .collect();
    assert!(rows.len() >= LINK_CODES.len(), "{rows:?}");
    for (code, text) in &rows {
        assert!(
            REASONS.iter().any(|r| r.code == code && r.text == text),
            "PROTOCOL.md §7 gives {code}: {text}, which the error table does not have"
        );
    }
    for code in LINK_CODES {
        let general = REASONS.iter().find(|r| r.code == *code).unwrap();
        assert!(
            rows.iter().any(|(c, t)| c == code && t == general.text),
            "PROTOCOL.md §7 lacks {code}: {}",
            general.text
        );
    }
}

/// Every fixed text of the table is written out in PROTOCOL.md (§7 and its notes), so the
/// document never drifts from what the model sees.
#[test]
fn protocol_gives_every_fixed_text() {
    let protocol = read("PROTOCOL.md");
    for r in REASONS {
        assert!(
            protocol.contains(&format!("`{}`", r.text))
                || protocol.contains(&format!("`{}: {}`", r.code, r.text)),
            "PROTOCOL.md does not give {}: {}",
            r.code,
            r.text
        );
    }
}
