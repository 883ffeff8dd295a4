//! Every manifest that states a version states the crate's version (the reference once shipped
//! an MCP server that reported a stale one).

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn manifests_agree_with_the_crate_version() {
    let version = env!("CARGO_PKG_VERSION");
    let toml_line = format!("version = \"{version}\"");
    for path in ["herdr-plugin.toml", "hosts/python/pyproject.toml"] {
        assert!(
            read(path).lines().any(|l| l.trim() == toml_line),
            "{path} does not say {toml_line}"
        );
    }
    for path in ["hosts/pi/package.json", "hosts/opencode/package.json"] {
        let v: serde_json::Value = serde_json::from_str(&read(path)).unwrap();
        assert_eq!(v["version"], version, "{path}");
        let lock_path = path.replace("package.json", "package-lock.json");
        let lock: serde_json::Value = serde_json::from_str(&read(&lock_path)).unwrap();
        assert_eq!(lock["version"], version, "{lock_path}");
        assert_eq!(lock["packages"][""]["version"], version, "{lock_path}");
    }
}
