//! The README a newcomer reads, and the links of every document, checked against the tree:
//!
//! * README.md stays short (at most 8 KiB) and holds no placeholder (`<owner>/<repo>`);
//! * every command it gives — each line of its `sh` blocks and each inline `herdr …`,
//!   `herdr-link …`, `cargo …` or `scripts/…` — names what exists: a script of the repository, a
//!   `herdr-link` subcommand and flag the binary parses, a host and a plugin action of
//!   `herdr-plugin.toml`, a `cargo` package path;
//! * every host the plugin manifest sets up is in the README, by name, with its setup and undo
//!   actions;
//! * every relative link of README.md, ARCHITECTURE.md, CONTRIBUTING.md and docs/*.md reaches a
//!   file, and its `#anchor` a heading there; docs/README.md lists every document of docs/.
//!
//! Reads files only (no build, no process): milliseconds.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The action ids of `herdr-plugin.toml`, each with its title.
fn actions() -> Vec<(String, String)> {
    let manifest = read("herdr-plugin.toml");
    let mut out = Vec::new();
    let mut id = None;
    for line in manifest.lines() {
        let value = |key: &str| {
            line.strip_prefix(key)
                .map(|v| v.trim().trim_matches('"').to_string())
        };
        if let Some(v) = value("id = ") {
            id = Some(v);
        } else if let (Some(t), Some(i)) = (value("title = "), id.take()) {
            out.push((i, t));
        }
    }
    assert!(out.len() >= 3, "no actions found in herdr-plugin.toml");
    out
}

/// The hosts `herdr-link setup` takes: those with a `setup-<host>` action.
fn hosts() -> Vec<String> {
    actions()
        .into_iter()
        .filter_map(|(id, _)| id.strip_prefix("setup-").map(String::from))
        .collect()
}

/// The words of one shell command line (no quoting beyond `"…"` around one word), its comment
/// cut off, split at `&&`.
fn commands(line: &str) -> Vec<Vec<String>> {
    let code = match line.find(" #") {
        Some(k) => &line[..k],
        None => line,
    };
    code.split("&&")
        .map(|c| {
            c.split_whitespace()
                .map(|w| w.trim_matches('"').to_string())
                .collect::<Vec<_>>()
        })
        .filter(|c| !c.is_empty())
        .collect()
}

/// Why `words` does not name what exists; `None` when it does.
fn check_command(words: &[String]) -> Option<String> {
    let w: Vec<&str> = words.iter().map(String::as_str).collect();
    let actions = actions();
    let action = |id: &str| actions.iter().any(|(a, _)| a == id);
    match w.as_slice() {
        [s, ..] if s.starts_with("scripts/") => {
            let path = root().join(s);
            (!path.is_file()).then(|| format!("{s} does not exist"))
        }
        ["cargo", sub, rest @ ..] => {
            if !["build", "install", "test", "run", "bench", "fmt", "clippy"].contains(sub) {
                return Some(format!("cargo {sub}: not a cargo command the docs use"));
            }
            if let Some(k) = rest.iter().position(|a| *a == "--path") {
                let dir = rest.get(k + 1)?;
                if !root().join(dir).join("Cargo.toml").is_file() {
                    return Some(format!("cargo --path {dir}: no package there"));
                }
            }
            None
        }
        ["herdr", "plugin", "link", dir] => (*dir != "$PWD").then(|| format!("link {dir}")),
        ["herdr", "plugin", "action", "invoke", id] => {
            let id = id.strip_prefix("herdr-link.")?;
            (!action(id)).then(|| format!("no plugin action {id} in herdr-plugin.toml"))
        }
        ["herdr", "plugin", "log", "list", "--plugin", "herdr-link"]
        | ["herdr", "plugin", "uninstall", "herdr-link"] => None,
        [bin, sub, rest @ ..] if bin.ends_with("herdr-link") => {
            let main = read("cli/src/main.rs");
            if !main.contains(&format!("\"{sub}\" =>")) {
                return Some(format!("herdr-link has no subcommand {sub}"));
            }
            if *sub == "setup" {
                let usage = read("cli/src/setup/mod.rs");
                let host = rest.first()?;
                if !hosts().iter().any(|h| h == host) {
                    return Some(format!("herdr-link setup {host}: no such host"));
                }
                for flag in rest.iter().filter(|a| a.starts_with("--")) {
                    if !usage.contains(&format!("  {flag} ")) {
                        return Some(format!("herdr-link setup {flag}: no such flag"));
                    }
                }
            }
            None
        }
        _ => Some("a command this test does not know".into()),
    }
}

/// The lines of the fenced blocks of `text` whose language is `lang`.
fn fenced(text: &str, lang: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if let Some(l) = line.strip_prefix("```") {
            inside = !inside && l == lang;
            continue;
        }
        if inside {
            out.push(line.to_string());
        }
    }
    out
}

/// The lines of a Markdown text outside its fenced blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut inside = false;
    text.lines()
        .filter(|line| {
            if line.starts_with("```") {
                inside = !inside;
                return false;
            }
            !inside
        })
        .collect()
}

/// The inline code spans of `text` (outside fenced blocks).
fn inline_code(text: &str) -> Vec<String> {
    prose(text)
        .join("\n")
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|s| s.replace('\n', " "))
        .collect()
}

#[test]
fn the_readme_is_short_and_its_commands_name_what_exists() {
    let readme = read("README.md");
    assert!(
        readme.len() <= 8 * 1024,
        "README.md is {} bytes: keep it under 8 KiB, move reference material to docs/",
        readme.len()
    );
    for rel in docs() {
        let text = read(&rel);
        for placeholder in ["<owner>", "<repo>", "OWNER/REPO"] {
            assert!(!text.contains(placeholder), "{rel} holds {placeholder}");
        }
    }
    let mut lines = fenced(&readme, "sh");
    assert!(lines.len() >= 6, "the README's sh blocks were not found");
    lines.extend(inline_code(&readme).into_iter().filter(|c| {
        ["herdr plugin ", "herdr-link ", "cargo ", "scripts/"]
            .iter()
            .any(|p| c.starts_with(p))
    }));
    let mut problems = Vec::new();
    let mut seen = 0;
    for line in &lines {
        for words in commands(line) {
            seen += 1;
            if let Some(why) = check_command(&words) {
                problems.push(format!("`{}`: {why}", words.join(" ")));
            }
        }
    }
    assert!(problems.is_empty(), "README.md:\n{}", problems.join("\n"));
    assert!(seen >= 15, "only {seen} commands found in the README");
    // The two commands: the main job on the simulated Herdr, and every test (what CI runs).
    assert!(readme.contains("scripts/demo.sh") && readme.contains("scripts/test.sh"));
    assert!(read(".ci/run").contains("scripts/test.sh"));
}

#[test]
fn the_check_refuses_what_does_not_exist() {
    let bad = |line: &str| commands(line).iter().any(|c| check_command(c).is_some());
    assert!(bad("scripts/nothing.sh"));
    assert!(bad("herdr-link setup vim"));
    assert!(bad("herdr-link setup claude --dry"));
    assert!(bad("herdr-link frobnicate"));
    assert!(bad("herdr plugin action invoke herdr-link.setup-vim"));
    assert!(bad("cargo install --path nowhere"));
    assert!(bad("herdr plugin install <owner>/<repo>"));
    assert!(!bad(
        "cargo build --release && herdr plugin link \"$PWD\"   # comment"
    ));
    assert!(!bad("herdr-link setup qwen --uninstall"));
}

#[test]
fn every_host_is_in_the_readme_with_its_setup_and_undo() {
    let readme = read("README.md");
    for (id, title) in actions() {
        let Some(host) = id.strip_prefix("setup-") else {
            continue;
        };
        let name = title
            .rsplit("set up ")
            .next()
            .expect("a setup action's title names its host");
        assert!(readme.contains(name), "README.md does not name {name}");
        for action in [
            format!("herdr-link.setup-{host}"),
            format!("herdr-link.uninstall-{host}"),
        ] {
            assert!(readme.contains(&action), "README.md lacks {action}");
        }
    }
    assert!(hosts().len() >= 6, "{:?}", hosts());
}

/// README.md, ARCHITECTURE.md, CONTRIBUTING.md and docs/*.md, relative to the root.
fn docs() -> Vec<String> {
    let mut out: Vec<String> = ["README.md", "ARCHITECTURE.md", "CONTRIBUTING.md"]
        .map(String::from)
        .to_vec();
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        if name.ends_with(".md") {
            out.push(format!("docs/{name}"));
        }
    }
    out.sort();
    out
}

/// GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file's headings (outside fenced blocks).
fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .into_iter()
        .filter(|line| line.starts_with('#'))
        .map(|line| slug(line.trim_start_matches('#')))
        .collect()
}

/// The link targets `[text](target)` of a Markdown text, outside fenced blocks and code spans.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose(text) {
        let outside_code: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        for (k, _) in outside_code.match_indices("](") {
            let rest = &outside_code[k + 2..];
            if let Some(end) = rest.find(')') {
                out.push(rest[..end].to_string());
            }
        }
    }
    out
}

#[test]
fn every_link_of_the_docs_resolves() {
    let mut problems = Vec::new();
    for rel in docs() {
        let text = read(&rel);
        let dir = Path::new(&rel).parent().unwrap_or(Path::new(""));
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let file: PathBuf = if path.is_empty() {
                PathBuf::from(&rel)
            } else {
                dir.join(path)
            };
            let full = root().join(&file);
            if !full.exists() {
                problems.push(format!("{rel}: {target}: no such file"));
                continue;
            }
            if let Some(a) = anchor {
                let target_text = std::fs::read_to_string(&full).unwrap_or_default();
                if !anchors(&target_text).contains(a) {
                    problems.push(format!("{rel}: {target}: no such heading"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The index names every document.
    let index = read("docs/README.md");
    for rel in docs().iter().filter_map(|d| d.strip_prefix("docs/")) {
        if rel != "README.md" {
            assert!(
                index.contains(&format!("]({rel})")),
                "docs/README.md does not list {rel}"
            );
        }
    }
    assert_eq!(
        slug("`herdr_link_start` configuration"),
        "herdr_link_start-configuration"
    );
    assert_eq!(
        slug("Delivery: one submission per message"),
        "delivery-one-submission-per-message"
    );
}

#[test]
fn the_map_names_only_paths_that_exist() {
    let map = read("ARCHITECTURE.md");
    let roots = [
        "src/",
        "cli/",
        "tests/",
        "hosts/",
        "fake-herdr/",
        "test-support/",
        "docs/",
        "scripts/",
        "include/",
        "herdr-plugin.toml",
    ];
    let mut words: Vec<String> = inline_code(&map);
    // The layout block: the first column of each line.
    words.extend(
        fenced(&map, "")
            .iter()
            .filter_map(|l| l.split_whitespace().next().map(String::from)),
    );
    let mut problems = Vec::new();
    let mut seen = 0;
    for word in words {
        for path in word.split_whitespace() {
            let path = path.trim_end_matches([',', ':', ')']);
            if path.contains('*') || !roots.iter().any(|r| path.starts_with(r)) {
                continue;
            }
            seen += 1;
            if !root().join(path).exists() {
                problems.push(path.to_string());
            }
        }
    }
    assert!(
        problems.is_empty(),
        "ARCHITECTURE.md names missing paths: {problems:?}"
    );
    assert!(seen >= 30, "only {seen} paths found in ARCHITECTURE.md");
}
