//! The committed C header must be exactly what cbindgen generates from the source.
//! `HERDR_LINK_BLESS=1 cargo test --test header` rewrites it after an intended ABI change.

use std::path::Path;

#[test]
fn header_matches_the_source() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(root)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    let generated = String::from_utf8(generated).expect("UTF-8 header");
    let path = root.join("include/herdr_link.h");
    if std::env::var_os("HERDR_LINK_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write header");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/herdr_link.h drifted from src/ffi.rs; run HERDR_LINK_BLESS=1 cargo test --test header"
    );
    for f in [
        "hl_session_start",
        "hl_session_end",
        "hl_tool_call",
        "hl_is_active",
        "hl_bash_guard",
        "hl_presentation",
        "hl_free",
        "hl_version",
    ] {
        assert!(
            generated.contains(&format!("{f}(")),
            "{f} missing from the header"
        );
    }
}

/// The header says it needs C99: it compiles as strict C99, and not as C89/C90.
#[test]
fn header_needs_c99() {
    let header = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/herdr_link.h");
    let text = std::fs::read_to_string(&header).unwrap();
    assert!(
        text.contains("Needs C99 or later"),
        "the header states its C standard"
    );
    let compile = |std: &str| {
        let out = std::process::Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
            .args([
                &format!("-std={std}"),
                "-pedantic-errors",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-fsyntax-only",
                "-x",
                "c",
            ])
            .arg(&header)
            .output()
            .expect("a C compiler (cc) is needed for this test");
        out.status.success()
    };
    assert!(compile("c99"), "include/herdr_link.h must compile as C99");
    assert!(
        !compile("c89"),
        "the header claims C99; C89 should not accept it"
    );
}
