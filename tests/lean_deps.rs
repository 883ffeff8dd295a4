//! The library (what hosts load, and what `pip install ./hosts/python`, `hosts/pi/pack.sh` and
//! the C host compile) depends on libc, serde, serde_json, thiserror, rand and once_cell, and on
//! nothing the `herdr-link` binary needs: its MCP SDK, async runtime and config editors live in
//! cli/. This fails when one of them creeps back into the library's normal dependency tree.

use std::collections::BTreeSet;
use std::process::Command;

/// The library's own dependencies (project brief).
const ALLOWED_DIRECT: &[&str] = &[
    "libc",
    "serde",
    "serde_json",
    "thiserror",
    "rand",
    "once_cell",
];

/// Crates only the binary may pull in.
const BINARY_ONLY: &[&str] = &[
    "tokio",
    "rmcp",
    "schemars",
    "futures",
    "futures-util",
    "chrono",
    "uuid",
    "toml_edit",
    "toml",
    "similar",
    "mio",
];

/// `cargo tree` of the library package: normal edges only, one `name version` per line.
fn tree(depth: Option<u32>) -> Vec<(String, u32)> {
    let mut c = Command::new(env!("CARGO"));
    c.args([
        "tree",
        "--locked",
        "--package",
        "herdr-link",
        "--edges",
        "normal",
        "--prefix",
        "depth",
        "--format",
        "{p}",
    ])
    .current_dir(env!("CARGO_MANIFEST_DIR"));
    if let Some(d) = depth {
        c.args(["--depth", &d.to_string()]);
    }
    let out = c.output().expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let digits = l.chars().take_while(char::is_ascii_digit).count();
            let depth = l[..digits].parse().ok()?;
            let name = l[digits..].split_whitespace().next()?.to_string();
            Some((name, depth))
        })
        .collect()
}

#[test]
fn library_depends_only_on_its_own_crates() {
    let direct: BTreeSet<String> = tree(Some(1))
        .into_iter()
        .filter(|(_, d)| *d == 1)
        .map(|(n, _)| n)
        .collect();
    assert!(
        direct.contains("libc") && direct.contains("serde_json"),
        "{direct:?}"
    );
    let extra: Vec<&String> = direct
        .iter()
        .filter(|n| !ALLOWED_DIRECT.contains(&n.as_str()))
        .collect();
    assert!(
        extra.is_empty(),
        "the library's dependencies are {ALLOWED_DIRECT:?}; also found {extra:?} (binary-only \
         crates belong in cli/Cargo.toml)"
    );
}

#[test]
fn no_binary_crate_in_the_librarys_tree() {
    let all = tree(None);
    assert!(all.len() > 5, "cargo tree printed too little: {all:?}");
    assert_eq!(all[0].0, "herdr-link");
    let found: Vec<&str> = all
        .iter()
        .map(|(n, _)| n.as_str())
        .filter(|n| BINARY_ONLY.contains(n))
        .collect();
    assert!(
        found.is_empty(),
        "binary-only crates in the library's normal dependency tree: {found:?}"
    );
}
