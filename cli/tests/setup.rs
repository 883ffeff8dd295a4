//! `herdr-link setup <host>` on temporary homes holding realistic existing configs: the merge
//! keeps every user entry in order, a second run changes nothing, every changed file is backed
//! up, `--dry-run` writes nothing, `--uninstall` gives the user's config back, a malformed
//! config is an error with nothing written, and an old Herdr gets `HERDR_BIN_PATH` pinned.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_herdr-link");

struct Home {
    root: PathBuf,
}

impl Home {
    fn new(name: &str) -> Home {
        let root =
            std::env::temp_dir().join(format!("herdr-link-setup-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(root.join("home")).unwrap();
        fs::create_dir_all(root.join("bin")).unwrap();
        Home { root }
    }

    fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, text).unwrap();
        p
    }

    fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.root.join(rel)).unwrap()
    }

    /// A `herdr` that reports `version`.
    fn herdr(&self, version: &str) -> PathBuf {
        let p = self.write(
            &format!("bin/herdr-{version}"),
            &format!("#!/bin/sh\necho 'herdr {version}'\n"),
        );
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    fn setup(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .arg("setup")
            .args(args)
            .env_clear()
            .env("HOME", self.home())
            .env("PATH", self.root.join("bin"))
            .current_dir(&self.root)
            .output()
            .unwrap()
    }

    /// Every file under the root with its contents (to prove "nothing written").
    fn snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
        fn walk(dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
            let mut entries: Vec<_> = fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            entries.sort();
            for p in entries {
                let meta = fs::symlink_metadata(&p).unwrap();
                if meta.file_type().is_symlink() {
                    let target = fs::read_link(&p).unwrap();
                    out.push((p.clone(), target.as_os_str().as_encoded_bytes().to_vec()));
                } else if meta.is_dir() {
                    walk(&p, out);
                } else {
                    out.push((p.clone(), fs::read(&p).unwrap()));
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.root, &mut out);
        out
    }

    fn backups(&self) -> Vec<PathBuf> {
        self.snapshot()
            .into_iter()
            .map(|(p, _)| p)
            .filter(|p| p.to_string_lossy().contains(".herdr-link-backup-"))
            .collect()
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

fn ok(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "setup failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

const CLAUDE_JSON: &str = r#"{
  "numStartups": 41,
  "theme": "dark",
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "gh-mcp",
      "args": []
    }
  },
  "projects": {
    "/home/me/src/app": {
      "allowedTools": []
    }
  }
}
"#;

// Written the way Claude Code writes it (JSON.stringify, here with a 4-space indent).
const CLAUDE_SETTINGS: &str = r#"{
    "permissions": {
        "allow": [
            "Bash(npm test)"
        ]
    },
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Edit",
                "hooks": [
                    {
                        "type": "command",
                        "command": "prettier --check"
                    }
                ]
            }
        ]
    },
    "model": "opus"
}
"#;

#[test]
fn claude_user_level_merges_backs_up_is_idempotent_and_uninstalls() {
    let h = Home::new("claude");
    h.write("home/.claude.json", CLAUDE_JSON);
    h.write("home/.claude/settings.json", CLAUDE_SETTINGS);
    let herdr = h.herdr("0.8.0");
    let herdr = herdr.to_str().unwrap();
    let bin = "/opt/herdr link/bin/herdr-link";

    // Dry run: a diff that keeps every existing entry, and nothing written.
    let before = h.snapshot();
    let out = ok(&h.setup(&["claude", "--dry-run", "--bin", bin, "--herdr", herdr]));
    assert_eq!(h.snapshot(), before, "--dry-run wrote something");
    assert!(out.contains(&format!("--- {}", h.home().join(".claude.json").display())));
    assert!(out.contains("+    \"herdr_link\": {"), "{out}");
    assert!(out.contains("(dry run: nothing was written)"));
    for line in out
        .lines()
        .filter(|l| l.starts_with('-') && !l.starts_with("---"))
    {
        // The only lines a merge may touch: the last entry of an object or list, which gains a
        // comma (and comes back with it).
        assert!(
            out.contains(&format!("\n+{},\n", &line[1..])),
            "dry run removes {line:?}\n{out}"
        );
    }
    // The permission rule shows in the diff, after the user's own rule.
    assert!(
        out.contains("-            \"Bash(npm test)\"\n+            \"Bash(npm test)\",\n+            \"mcp__herdr_link\"\n"),
        "{out}"
    );

    let out = ok(&h.setup(&["claude", "--bin", bin, "--herdr", herdr]));
    assert!(out.contains("does not set HERDR_BIN_PATH"), "{out}");
    let cfg: Value = serde_json::from_str(&h.read("home/.claude.json")).unwrap();
    assert_eq!(
        keys(&cfg),
        ["numStartups", "theme", "mcpServers", "projects"]
    );
    assert_eq!(keys(&cfg["mcpServers"]), ["github", "herdr_link"]);
    assert_eq!(
        cfg["mcpServers"]["herdr_link"],
        json!({"type":"stdio","command":bin,"args":["mcp"],"env":{"HERDR_BIN_PATH":herdr}})
    );
    let settings: Value = serde_json::from_str(&h.read("home/.claude/settings.json")).unwrap();
    assert_eq!(keys(&settings), ["permissions", "hooks", "model"]);
    // Link's tools run without a prompt in Claude Code's default permission mode; the user's
    // rules stay first.
    assert_eq!(
        settings["permissions"],
        json!({"allow": ["Bash(npm test)", "mcp__herdr_link"]})
    );
    assert_eq!(
        settings["hooks"]["PreToolUse"],
        json!([
            {"matcher":"Edit","hooks":[{"type":"command","command":"prettier --check"}]},
            {"matcher":"Bash","hooks":[{"type":"command",
                "command":format!("'/opt/herdr link/bin/herdr-link' guard --host claude --shim {}",
                    h.home().join(".local/share/herdr-link/shim").display())}]}
        ])
    );
    // The shim: its link, and the SessionStart hook that puts it first on PATH.
    let shim = h.home().join(".local/share/herdr-link/shim");
    assert_eq!(
        fs::read_link(shim.join("herdr")).unwrap(),
        PathBuf::from(bin)
    );
    assert_eq!(
        settings["hooks"]["SessionStart"],
        json!([{"hooks":[{"type":"command",
            "command":format!("'/opt/herdr link/bin/herdr-link' shim-env --dir {}", shim.display())}]}])
    );
    assert!(
        h.read("home/.claude/settings.json")
            .contains("\n    \"permissions\""),
        "the file's 4-space indentation is kept"
    );
    let backups = h.backups();
    assert_eq!(backups.len(), 2, "{backups:?}");
    for b in &backups {
        let text = fs::read_to_string(b).unwrap();
        assert!(text == CLAUDE_JSON || text == CLAUDE_SETTINGS);
    }

    // Second run: nothing changes, no new backup.
    let after_first = h.snapshot();
    let out = ok(&h.setup(&["claude", "--bin", bin, "--herdr", herdr]));
    assert_eq!(
        h.snapshot(),
        after_first,
        "second run changed files:\n{out}"
    );
    assert_eq!(out.matches("unchanged ").count(), 4, "{out}");
    // Login shells (`bash -lc`) get the shim's environment from the login profile.
    let profile = h.read("home/.profile");
    assert!(profile.contains("# for: claude\n"), "{profile}");
    assert!(profile.contains("shim-env --dir"), "{profile}");

    // Uninstall: the user's config as it was (same values, same key order); the shared shim
    // link stays.
    let out = ok(&h.setup(&["claude", "--uninstall", "--bin", bin]));
    assert!(out.contains("kept "), "{out}");
    let cfg: Value = serde_json::from_str(&h.read("home/.claude.json")).unwrap();
    assert_eq!(cfg, serde_json::from_str::<Value>(CLAUDE_JSON).unwrap());
    assert_eq!(
        keys(&cfg),
        ["numStartups", "theme", "mcpServers", "projects"]
    );
    let settings: Value = serde_json::from_str(&h.read("home/.claude/settings.json")).unwrap();
    assert_eq!(
        settings,
        serde_json::from_str::<Value>(CLAUDE_SETTINGS).unwrap()
    );
    assert_eq!(h.read("home/.claude/settings.json"), CLAUDE_SETTINGS);
}

#[test]
fn claude_project_level_with_a_current_herdr_pins_nothing() {
    let h = Home::new("claude-project");
    fs::create_dir_all(h.root.join("proj")).unwrap();
    let herdr = h.herdr("0.8.2");
    let out = ok(&h.setup(&[
        "claude",
        "--project",
        "proj",
        "--bin",
        "/usr/bin/herdr-link",
        "--herdr",
        herdr.to_str().unwrap(),
    ]));
    assert!(out.contains("sets HERDR_BIN_PATH itself"), "{out}");
    let mcp: Value = serde_json::from_str(&h.read("proj/.mcp.json")).unwrap();
    assert_eq!(
        mcp,
        json!({"mcpServers":{"herdr_link":{"type":"stdio","command":"/usr/bin/herdr-link","args":["mcp"]}}})
    );
    let settings: Value = serde_json::from_str(&h.read("proj/.claude/settings.json")).unwrap();
    assert_eq!(
        settings,
        json!({"hooks":{
            "PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":format!(
                "/usr/bin/herdr-link guard --host claude --shim {}",
                h.home().join(".local/share/herdr-link/shim").display()
            )}]}],
            "SessionStart":[{"hooks":[{"type":"command","command":format!(
                "/usr/bin/herdr-link shim-env --dir {}",
                h.home().join(".local/share/herdr-link/shim").display()
            )}]}]
        },
        "permissions":{"allow":["mcp__herdr_link"]}})
    );
    assert!(!h.home().join(".claude.json").exists());
    assert!(h.backups().is_empty(), "new files need no backup");
    // Uninstall removes the rule and the containers it alone filled.
    ok(&h.setup(&["claude", "--project", "proj", "--uninstall"]));
    let settings: Value = serde_json::from_str(&h.read("proj/.claude/settings.json")).unwrap();
    assert_eq!(settings, json!({}));
}

#[test]
fn malformed_config_is_an_error_and_nothing_is_written() {
    let h = Home::new("malformed");
    h.write("home/.claude/settings.json", "{\"model\": \"opus\",\n}\n");
    let herdr = h.herdr("0.8.2");
    let before = h.snapshot();
    let out = h.setup(&["claude", "--herdr", herdr.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(".claude/settings.json is not valid JSON"),
        "{err}"
    );
    assert!(err.contains("line 2"), "{err}");
    assert_eq!(h.snapshot(), before, "a failed setup wrote something");

    let h = Home::new("malformed-toml");
    h.write("home/.codex/config.toml", "model = \"o4\"\n[mcp_servers\n");
    let before = h.snapshot();
    let out = h.setup(&["codex", "--herdr", herdr.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("config.toml is not valid TOML"));
    assert_eq!(h.snapshot(), before);

    let h = Home::new("misshapen");
    h.write("home/.claude.json", "{\"mcpServers\": []}");
    let out = h.setup(&["claude", "--herdr", herdr.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`mcpServers` is not a JSON object"));
    assert!(!h.home().join(".claude/settings.json").exists());
}

const CODEX_CONFIG: &str = r#"# Codex settings
model = "gpt-5" # default model
approval_policy = "on-request"

[mcp_servers.docs]
command = "docs-mcp"
args = ["--stdio"]

[features]
web_search = true
"#;

#[test]
fn codex_keeps_comments_and_order_and_passes_the_herdr_variables() {
    let h = Home::new("codex");
    h.write("codex/config.toml", CODEX_CONFIG);
    let herdr = h.herdr("0.8.1");
    let herdr = herdr.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["codex", "--bin", "/usr/bin/herdr-link", "--herdr", herdr];
        all.extend_from_slice(args);
        Command::new(BIN)
            .arg("setup")
            .args(&all)
            .env_clear()
            .env("HOME", h.home())
            .env("CODEX_HOME", h.root.join("codex"))
            .output()
            .unwrap()
    };
    // --dry-run shows the approval mode among the entry's keys, and writes nothing.
    let before = h.snapshot();
    let out = ok(&run(&["--dry-run"]));
    assert!(
        out.contains("+args = [\"mcp\"]\n+default_tools_approval_mode = \"approve\"\n"),
        "{out}"
    );
    assert_eq!(h.snapshot(), before);
    ok(&run(&["--pass-env", "MY_VAR"]));
    let config = h.read("codex/config.toml");
    assert!(config.starts_with(
        "# Codex settings\nmodel = \"gpt-5\" # default model\napproval_policy = \"on-request\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\nargs = [\"--stdio\"]\n"
    ), "{config}");
    assert!(
        config.contains("[features]\nweb_search = true\nhooks = true\n"),
        "{config}"
    );
    // The pin replaces the forwarded HERDR_BIN_PATH; every other variable the library reads is
    // forwarded, then the user's own.
    let forwarded: Vec<String> = herdr_link::env::passed_variables()
        .into_iter()
        .filter(|v| *v != "HERDR_BIN_PATH")
        .chain(["MY_VAR"])
        .map(|v| format!("\"{v}\""))
        .collect();
    assert!(config.contains(&format!(
        "[mcp_servers.herdr_link]\ncommand = \"/usr/bin/herdr-link\"\nargs = [\"mcp\"]\ndefault_tools_approval_mode = \"approve\"\nenv_vars = [{}]\nenv = {{ HERDR_BIN_PATH = \"{herdr}\" }}\n",
        forwarded.join(", ")
    )), "{config}");
    // Independently of the library's list: every setting the configuration docs name reaches a
    // Codex user's server (HERDR_LINK_LIB is the host glue's, not the server's).
    let docs =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/configuration.md"))
            .unwrap();
    let documented: Vec<&str> = docs
        .lines()
        .filter_map(|l| l.strip_prefix("| `")?.split('`').next())
        .filter(|v| v.starts_with("HERDR_LINK_") && *v != "HERDR_LINK_LIB")
        .collect();
    assert!(documented.len() >= 9, "{documented:?}");
    for v in documented {
        assert!(
            config.contains(&format!("\"{v}\"")),
            "{v} is not forwarded to Codex's server: {config}"
        );
    }
    let hooks: Value = serde_json::from_str(&h.read("codex/hooks.json")).unwrap();
    assert_eq!(
        hooks,
        json!({"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":format!(
            "/usr/bin/herdr-link guard --host codex --shim {}",
            h.home().join(".local/share/herdr-link/shim").display()
        )}]}]}})
    );
    // The user's trust in the hook, recorded as Codex records it, so Codex's first start runs
    // it without its "Hooks need review" dialog (uninstall below takes it out again).
    assert!(
        config.contains(&format!(
            "[hooks.state.\"{}:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:",
            h.root.join("codex/hooks.json").display()
        )),
        "{config}"
    );
    assert_eq!(h.backups().len(), 1);

    let first = h.snapshot();
    let out = ok(&run(&["--pass-env", "MY_VAR"]));
    assert_eq!(h.snapshot(), first, "second run changed files:\n{out}");

    ok(&run(&["--uninstall"]));
    assert_eq!(h.read("codex/config.toml"), CODEX_CONFIG);

    assert_eq!(
        serde_json::from_str::<Value>(&h.read("codex/hooks.json")).unwrap(),
        json!({})
    );
    // An approval mode the user chose stays (here: ask for every Link call).
    let chosen = format!(
        "{CODEX_CONFIG}\n[mcp_servers.herdr_link]\ndefault_tools_approval_mode = \"prompt\"\n"
    );
    h.write("codex/config.toml", &chosen);
    ok(&run(&[]));
    let config = h.read("codex/config.toml");
    assert!(
        config.contains(
            "[mcp_servers.herdr_link]\ndefault_tools_approval_mode = \"prompt\"\ncommand"
        ),
        "{config}"
    );
    assert_eq!(config.matches("default_tools_approval_mode").count(), 1);
}

#[test]
fn opencode_adds_the_server_and_the_guard_plugin() {
    let h = Home::new("opencode");
    let existing = r#"{
  "$schema": "https://opencode.ai/config.json",
  "theme": "tokyonight",
  "mcp": {
    "search": { "type": "remote", "url": "https://example.invalid/mcp" }
  }
}
"#;
    h.write("xdg/opencode/opencode.json", existing);
    let herdr = h.herdr("0.8.0");
    let run = |args: &[&str]| opencode_setup(&h, &herdr, args);
    ok(&run(&[]));
    let cfg: Value = serde_json::from_str(&h.read("xdg/opencode/opencode.json")).unwrap();
    assert_eq!(keys(&cfg), ["$schema", "theme", "mcp"]);
    assert_eq!(keys(&cfg["mcp"]), ["search", "herdr_link"]);
    assert_eq!(
        cfg["mcp"]["herdr_link"],
        json!({"type":"local","command":["/usr/bin/herdr-link","mcp"],
               "environment":{"HERDR_BIN_PATH":herdr.to_str().unwrap()}})
    );
    let plugin = h.read("xdg/opencode/plugins/herdr-link-guard.js");
    assert!(plugin.contains("const HERDR_LINK = \"/usr/bin/herdr-link\"\n"));
    assert!(plugin.contains("[\"guard\", \"--host\", \"opencode\", \"--shim\", SHIM_DIR]"));
    let first = h.snapshot();
    ok(&run(&[]));
    assert_eq!(h.snapshot(), first);

    ok(&run(&["--uninstall"]));
    assert!(!h
        .root
        .join("xdg/opencode/plugins/herdr-link-guard.js")
        .exists());
    assert_eq!(
        serde_json::from_str::<Value>(&h.read("xdg/opencode/opencode.json")).unwrap(),
        serde_json::from_str::<Value>(existing).unwrap()
    );
}

/// OpenCode's own format: comments and trailing commas, as a user's file has them.
const OPENCODE_JSONC: &str = r#"{
  // my settings
  "$schema": "https://opencode.ai/config.json",
  "theme": "tokyonight", /* dark */
  "mcp": {
    "search": { "type": "remote", "url": "https://example.invalid/mcp", },
  },
}
"#;

/// A JSONC text as plain JSON (OpenCode's reading of it).
fn jsonc(text: &str) -> Value {
    jsonc_parser::cst::CstRootNode::parse(text, &Default::default())
        .unwrap_or_else(|e| panic!("not JSONC ({e}):\n{text}"))
        .to_serde_value()
        .unwrap()
}

/// `herdr-link setup opencode ARGS` for this home (`XDG_CONFIG_HOME` = `<root>/xdg`).
/// `herdr-link setup <host>` for a bash user with nothing but `HOME` set, run in the scratch root;
/// the caller adds the host's own variables.
fn bash_user_setup(h: &Home, host: &str, herdr: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(["setup", host, "--bin", "/usr/bin/herdr-link", "--herdr"])
        .arg(herdr)
        .args(args)
        .env_clear()
        .env("HOME", h.home())
        .env("SHELL", "/bin/bash")
        .current_dir(&h.root);
    c
}

fn opencode_setup(h: &Home, herdr: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(["setup", "opencode", "--bin", "/usr/bin/herdr-link"])
        .args(["--herdr", herdr.to_str().unwrap()])
        .args(args)
        .env_clear()
        .env("HOME", h.home())
        .env("XDG_CONFIG_HOME", h.root.join("xdg"))
        .output()
        .unwrap()
}

#[test]
fn opencode_jsonc_keeps_comments_and_trailing_commas_and_uninstalls_to_the_same_bytes() {
    let h = Home::new("opencode-jsonc");
    h.write("xdg/opencode/opencode.jsonc", OPENCODE_JSONC);
    let herdr = h.herdr("0.8.2");

    // --dry-run: the diff, nothing written.
    let before = h.snapshot();
    let out = ok(&opencode_setup(&h, &herdr, &["--dry-run"]));
    assert!(out.contains(r#"+    "herdr_link": {"#), "{out}");
    assert_eq!(h.snapshot(), before, "--dry-run wrote something");

    ok(&opencode_setup(&h, &herdr, &[]));
    let text = h.read("xdg/opencode/opencode.jsonc");
    for kept in [
        "// my settings",
        "/* dark */",
        r#""https://example.invalid/mcp", },"#,
    ] {
        assert!(text.contains(kept), "{kept:?} lost:\n{text}");
    }
    let cfg = jsonc(&text);
    assert_eq!(keys(&cfg), ["$schema", "theme", "mcp"]);
    assert_eq!(keys(&cfg["mcp"]), ["search", "herdr_link"]);
    assert_eq!(
        cfg["mcp"]["herdr_link"],
        json!({"type": "local", "command": ["/usr/bin/herdr-link", "mcp"]})
    );
    assert!(!h.root.join("xdg/opencode/opencode.json").exists());
    assert!(h
        .root
        .join("xdg/opencode/plugins/herdr-link-guard.js")
        .is_file());

    let first = h.snapshot();
    let again = ok(&opencode_setup(&h, &herdr, &[]));
    assert_eq!(h.snapshot(), first, "a second run changed something");
    assert!(again.contains("unchanged"), "{again}");

    let out = ok(&opencode_setup(&h, &herdr, &["--uninstall", "--dry-run"]));
    assert!(out.contains(r#"-    "herdr_link": {"#), "{out}");
    assert_eq!(h.snapshot(), first, "--uninstall --dry-run wrote something");
    ok(&opencode_setup(&h, &herdr, &["--uninstall"]));
    assert_eq!(h.read("xdg/opencode/opencode.jsonc"), OPENCODE_JSONC);
    assert!(!h
        .root
        .join("xdg/opencode/plugins/herdr-link-guard.js")
        .exists());
}

#[test]
fn opencode_project_mode_finds_the_jsonc_and_the_jsonc_wins_over_the_json() {
    let h = Home::new("opencode-project");
    let herdr = h.herdr("0.8.2");
    let project = h.root.join("proj");
    h.write("proj/opencode.jsonc", OPENCODE_JSONC);
    ok(&opencode_setup(
        &h,
        &herdr,
        &["--project", project.to_str().unwrap()],
    ));
    assert!(
        !project.join("opencode.json").exists(),
        "project mode wrote a second file"
    );
    let cfg = jsonc(&h.read("proj/opencode.jsonc"));
    assert_eq!(cfg["mcp"]["herdr_link"]["command"][1], "mcp");
    assert!(h.read("proj/opencode.jsonc").contains("// my settings"));
    assert!(project
        .join(".opencode/plugins/herdr-link-guard.js")
        .is_file());

    // Both files (global mode): OpenCode merges them with the .jsonc last, so the entry goes
    // there, and an older entry in opencode.json (which would merge under it) is taken out.
    let stale = r#"{
  "theme": "x",
  "mcp": { "herdr_link": { "type": "local", "command": ["/old/herdr-link", "mcp"], "environment": { "HERDR_BIN_PATH": "/old/herdr" } } }
}
"#;
    h.write("xdg/opencode/opencode.json", stale);
    h.write("xdg/opencode/opencode.jsonc", OPENCODE_JSONC);
    ok(&opencode_setup(&h, &herdr, &[]));
    let winner = jsonc(&h.read("xdg/opencode/opencode.jsonc"));
    assert_eq!(
        winner["mcp"]["herdr_link"]["command"][0],
        "/usr/bin/herdr-link"
    );
    let loser = jsonc(&h.read("xdg/opencode/opencode.json"));
    assert_eq!(
        loser,
        json!({"theme": "x"}),
        "the stale entry stays in opencode.json"
    );
    let first = h.snapshot();
    ok(&opencode_setup(&h, &herdr, &[]));
    assert_eq!(h.snapshot(), first, "a second run changed something");
    ok(&opencode_setup(&h, &herdr, &["--uninstall"]));
    assert_eq!(h.read("xdg/opencode/opencode.jsonc"), OPENCODE_JSONC);
}

#[test]
fn opencode_malformed_jsonc_is_an_error_and_nothing_is_written() {
    let h = Home::new("opencode-bad");
    let herdr = h.herdr("0.8.2");
    h.write(
        "xdg/opencode/opencode.jsonc",
        "{\n  // fine\n  \"mcp\": {\n",
    );
    let before = h.snapshot();
    let out = opencode_setup(&h, &herdr, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("opencode.jsonc is not valid JSONC"), "{err}");
    assert_eq!(h.snapshot(), before);
}

#[test]
fn pi_runs_pis_own_installer() {
    let h = Home::new("pi");
    let log = h.root.join("pi.log");
    let pi = h.write(
        "bin/pi",
        &format!("#!/bin/sh\necho \"$PWD $*\" >> '{}'\n", log.display()),
    );
    fs::set_permissions(&pi, fs::Permissions::from_mode(0o755)).unwrap();
    fs::create_dir_all(h.root.join("pkg")).unwrap();
    fs::create_dir_all(h.root.join("proj")).unwrap();
    let root = h.root.display().to_string();

    let out = ok(&h.setup(&["pi", "--package", "pkg", "--dry-run"]));
    assert!(
        out.contains(&format!("would run: {root}/bin/pi install {root}/pkg")),
        "{out}"
    );
    assert!(!log.exists());
    let out = ok(&h.setup(&["pi", "--package", "pkg"]));
    assert!(
        out.contains("HERDR_BIN_PATH"),
        "the in-process export hint: {out}"
    );
    ok(&h.setup(&["pi", "--package", "pkg", "--project", "proj"]));
    ok(&h.setup(&["pi", "--package", "pkg", "--uninstall"]));
    assert_eq!(
        fs::read_to_string(&log).unwrap(),
        format!("{root} install {root}/pkg\n{root}/proj install -l {root}/pkg\n{root} remove {root}/pkg\n")
    );
    let out = h.setup(&["pi"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--package"));
    h.write("herdr-link-pi-0.1.0.tgz", "");
    let out = h.setup(&["pi", "--package", "herdr-link-pi-0.1.0.tgz"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unpack the tarball"));
}

#[test]
fn every_subcommand_has_help_and_a_bare_call_prints_usage() {
    for cmd in ["mcp", "doctor", "setup", "guard"] {
        let out = Command::new(BIN).args([cmd, "--help"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{cmd} --help");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.starts_with(&format!("usage: herdr-link {cmd}")),
            "{cmd} --help printed {text}"
        );
    }
    let out = Command::new(BIN).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("usage:") && err.contains("herdr-link setup"),
        "{err}"
    );
}

#[test]
fn usage_and_bad_arguments() {
    let h = Home::new("usage");
    let out = ok(&h.setup(&["--help"]));
    assert!(out.starts_with(
        "usage: herdr-link setup <claude|codex|opencode|gemini|qwen|copilot|droid|cline|kimi|pi>"
    ));
    for bad in [
        &["vim"][..],
        &[][..],
        &["claude", "--project"][..],
        &["claude", "--pass-env", "X"][..],
        &["codex", "--pass-env", "A B"][..],
        &["gemini", "--pass-env", "X"][..],
        &["qwen", "--package", "p"][..],
        &["kimi", "--pass-env", "X"][..],
        &["claude", "--frobnicate"][..],
    ] {
        let out = h.setup(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(!String::from_utf8_lossy(&out.stderr).is_empty());
    }
    let out = h.setup(&["claude", "--project", "missing-dir"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a directory"));
}

/// The OpenCode guard plugin setup writes, run under Node: a `bash` call inside Herdr is piped
/// to `herdr-link guard --host opencode` and exit 2 blocks it with stderr as the reason; other
/// tools and calls outside Herdr never run the guard.
#[test]
fn opencode_guard_plugin_pipes_bash_calls_to_the_guard() {
    let h = Home::new("opencode-plugin");
    let seen = h.root.join("guard-input.jsonl");
    let guard = h.write(
        "bin/fake-herdr-link",
        &format!(
            "#!/bin/sh\n[ \"$1\" = shim-env ] && exec {bin} \"$@\"\n\
             echo \"$*\" >> '{seen}'\ncat >> '{seen}'\necho >> '{seen}'\n\
             case \"$(tail -n 2 '{seen}')\" in *wait*) echo 'use herdr_link_send' >&2; exit 2;; esac\nexit 0\n",
            seen = seen.display(),
            bin = BIN
        ),
    );
    fs::set_permissions(&guard, fs::Permissions::from_mode(0o755)).unwrap();
    let herdr = h.herdr("0.8.2");
    let out = Command::new(BIN)
        .args(["setup", "opencode", "--bin"])
        .arg(&guard)
        .arg("--herdr")
        .arg(&herdr)
        .env_clear()
        .env("HOME", h.home())
        .env("XDG_CONFIG_HOME", h.root.join("xdg"))
        .output()
        .unwrap();
    ok(&out);
    let plugin = h.read("xdg/opencode/plugins/herdr-link-guard.js");
    let module = h.write("plugin.mjs", &plugin);
    let script = format!(
        r#"
const {{ HerdrLinkGuard }} = await import({module:?});
const hooks = await HerdrLinkGuard({{}});
const before = hooks["tool.execute.before"];
const results = [];
for (const [tool, command] of [["bash", "herdr agent wait reviewer"], ["bash", "ls"], ["read", "herdr agent wait x"]]) {{
  try {{
    await before({{ tool, sessionID: "ses_1", callID: "c1" }}, {{ args: {{ command }} }});
    results.push("allow");
  }} catch (e) {{
    results.push("block: " + e.message);
  }}
}}
const env = {{ env: {{ HERDR_BIN_PATH: "/opt/herdr" }} }};
await hooks["shell.env"]({{ cwd: "/" }}, env);
results.push(env.env.PATH ?? "no PATH");
results.push(`${{env.env.HERDR_BIN_PATH}}|${{env.env.HERDR_LINK_HERDR ?? ""}}|${{env.env.HERDR_LINK_PRESENCE ?? ""}}`);
console.log(JSON.stringify(results));
"#,
        module = module.display().to_string()
    );
    let run = |herdr_env: &str| {
        let out = Command::new("node")
            .args(["--input-type=module", "-e", &script])
            .env("HERDR_ENV", herdr_env)
            .env("PATH", format!("{}:/usr/bin:/bin", node_dir().display()))
            .output()
            .expect("node is needed for this test");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let shim = h.home().join(".local/share/herdr-link/shim");
    // The presence key is node's (the plugin's process: OpenCode's), as `shim-env --json` finds it.
    let got: Vec<String> = serde_json::from_str(&run("1")).unwrap();
    let (rest, key) = got[4].rsplit_once('|').unwrap();
    assert_eq!(
        (&got[..4], rest),
        (
            &[
                "block: use herdr_link_send".to_string(),
                "allow".into(),
                "allow".into(),
                format!("{}:{}:/usr/bin:/bin", shim.display(), node_dir().display()),
            ][..],
            format!("{}/herdr|/opt/herdr", shim.display()).as_str()
        )
    );
    let (pid, start) = key.split_once('-').unwrap();
    assert!(
        pid.parse::<u32>().is_ok() && start.parse::<u64>().is_ok(),
        "{key}"
    );
    let log = fs::read_to_string(&seen).unwrap();
    assert_eq!(log.matches("guard --host opencode").count(), 2, "{log}");
    let first: Value = serde_json::from_str(log.lines().nth(1).unwrap()).unwrap();
    assert_eq!(
        first,
        json!({"tool":"bash","sessionID":"ses_1","args":{"command":"herdr agent wait reviewer"}})
    );
    fs::remove_file(&seen).unwrap();
    assert_eq!(
        run("0"),
        r#"["allow","allow","allow","no PATH","/opt/herdr||"]"#
    );
    assert!(!seen.exists(), "outside Herdr the guard never runs");
}

/// The directory of the `node` on the test's PATH.
fn node_dir() -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .find(|d| d.join("node").is_file())
        .expect("node is needed for this test")
}

/// Login shells reset PATH: setup puts a block at the end of the login profile (after the
/// user's own PATH changes), once per host, and uninstall takes it out with the last host. A
/// login shell reading it inside Herdr gets the shim first on PATH, `$HERDR_BIN_PATH` naming the
/// shim (the real Herdr kept) and its host's presence key.
#[test]
fn login_profile_gives_login_shells_the_shim_and_the_hosts_key() {
    let h = Home::new("codex-profile");
    let mine = "export PATH=\"$HOME/bin:$PATH\"\n";
    h.write("home/.bash_profile", mine);
    let herdr = h.herdr("0.8.2");
    let run = |host: &str, args: &[&str]| {
        Command::new(BIN)
            .args(["setup", host, "--bin", BIN, "--herdr"])
            .arg(&herdr)
            .args(args)
            .env_clear()
            .env("HOME", h.home())
            .env("SHELL", "/bin/bash")
            .env("CODEX_HOME", h.root.join("codex"))
            .output()
            .unwrap()
    };
    ok(&run("codex", &[]));
    ok(&run("codex", &[]));
    ok(&run("claude", &[]));
    let profile = h.read("home/.bash_profile");
    assert!(profile.starts_with(mine), "{profile}");
    assert_eq!(profile.matches("shim-env").count(), 1, "{profile}");
    assert!(profile.contains("# for: claude codex\n"), "{profile}");
    let shim = h.home().join(".local/share/herdr-link/shim");
    let login = |script: &str| {
        let out = Command::new("bash")
            .args(["-lc", script])
            .env_clear()
            .env("HOME", h.home())
            .env("PATH", "/usr/bin:/bin")
            .env("HERDR_ENV", "1")
            .env("HERDR_BIN_PATH", "/opt/herdr/herdr")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let got = login(
        r#"printf '%s|%s|%s|%s' "$PATH" "$HERDR_BIN_PATH" "$HERDR_LINK_HERDR" "$HERDR_LINK_PRESENCE""#,
    );
    let me = std::process::id();
    let start = {
        let text = fs::read_to_string(format!("/proc/{me}/stat")).unwrap();
        text[text.rfind(')').unwrap() + 1..]
            .split_whitespace()
            .nth(19)
            .unwrap()
            .to_string()
    };
    let parts: Vec<&str> = got.split('|').collect();
    // The system profile set PATH anew; the user's profile put ~/bin first; the block put the
    // shim before everything.
    assert!(
        parts[0].starts_with(&format!("{}:{}/bin:", shim.display(), h.home().display())),
        "{got}"
    );
    assert_eq!(
        parts[1..],
        [
            format!("{}/herdr", shim.display()),
            "/opt/herdr/herdr".to_string(),
            format!("{me}-{start}")
        ],
        "the login shell's host is this test process, the nearest ancestor that is no shell"
    );
    ok(&run("codex", &["--uninstall"]));
    assert!(h.read("home/.bash_profile").contains("# for: claude\n"));
    ok(&run("claude", &["--uninstall"]));
    assert_eq!(h.read("home/.bash_profile"), mine);
}

/// The one-line export for in-process hosts: the same line in every doc that gives it (and in
/// `setup pi`'s note), and it sets HERDR_BIN_PATH only inside Herdr and only when unset.
#[test]
fn herdr_bin_path_snippet_is_one_line_everywhere_and_does_what_it_says() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let line_in = |rel: &str| -> String {
        let text = fs::read_to_string(root.join(rel)).unwrap();
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| {
                l.starts_with("if [ \"${HERDR_ENV:-}\" = 1 ]") && l.contains("HERDR_BIN_PATH")
            })
            .collect();
        assert_eq!(lines.len(), 1, "{rel} gives the snippet once");
        lines[0].to_string()
    };
    let snippet = line_in("docs/setup.md");
    for doc in [
        "hosts/pi/README.md",
        "hosts/python/README.md",
        "hosts/opencode/README.md",
        "hosts/c/README.md",
    ] {
        assert_eq!(line_in(doc), snippet, "{doc}");
    }

    let h = Home::new("snippet");
    let herdr = h.herdr("0.8.0");
    fs::rename(&herdr, h.root.join("bin/herdr")).unwrap();
    let run = |env: &[(&str, &str)]| -> String {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(format!(
                "{snippet}\nprintf '%s' \"${{HERDR_BIN_PATH-<unset>}}\""
            ))
            .env_clear()
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", h.root.join("bin").display()),
            );
        for (k, v) in env {
            c.env(k, v);
        }
        String::from_utf8(c.output().unwrap().stdout).unwrap()
    };
    let ours = h.root.join("bin/herdr").display().to_string();
    assert_eq!(run(&[("HERDR_ENV", "1")]), ours, "inside Herdr, unset: set");
    assert_eq!(
        run(&[("HERDR_ENV", "1"), ("HERDR_BIN_PATH", "/opt/h")]),
        "/opt/h"
    );
    assert_eq!(run(&[]), "<unset>", "outside Herdr: untouched");
    assert_eq!(run(&[("HERDR_ENV", "0")]), "<unset>");

    // `setup pi` prints the same line.
    let pi = h.write("bin/pi", "#!/bin/sh\nexit 0\n");
    fs::set_permissions(&pi, fs::Permissions::from_mode(0o755)).unwrap();
    fs::create_dir_all(h.root.join("pkg")).unwrap();
    let out = ok(&h.setup(&["pi", "--package", "pkg"]));
    assert!(out.contains(&snippet), "{out}");
}

/// The shim's PATH line in docs/setup.md: inside Herdr it puts `~/.local/share/herdr-link/shim`
/// first, once; outside Herdr it changes nothing.
#[test]
fn shim_path_line_in_the_docs_does_what_it_says() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let text = fs::read_to_string(root.join("docs/setup.md")).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with(r#"if [ "${HERDR_ENV:-}" = 1 ]; then case"#))
        .expect("docs/setup.md gives the shim's PATH line");
    let run = |herdr_env: &str| {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("{line}\n{line}\nprintf %s \"$PATH\""))
            .env_clear()
            .env("HOME", "/home/u")
            .env("PATH", "/usr/bin:/bin")
            .env("HERDR_ENV", herdr_env)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(
        run("1"),
        "/home/u/.local/share/herdr-link/shim:/usr/bin:/bin"
    );
    assert_eq!(run("0"), "/usr/bin:/bin");
}

/// Gemini CLI and Qwen Code keep MCP servers and hooks in one `settings.json`: setup merges the
/// trusted `herdr_link` server (Qwen: its tools always loaded) and the guard as the host's
/// before-tool hook on `run_shell_command` into it, keeping the user's entries in order; puts
/// the shim block in the startup files of the shell Herdr starts them from (an interactive
/// bash inside Herdr then has the shim first); a second run changes nothing; an old Herdr gets
/// `HERDR_BIN_PATH` pinned; `--uninstall` gives the user's files back, leaving another host's
/// shim block in a shared file alone; `--project` writes the project's settings.
#[test]
fn gemini_and_qwen_merge_settings_hooks_and_the_shell_startup_block() {
    let settings = r#"{
  "theme": "Dracula",
  "mcpServers": {
    "github": { "command": "gh-mcp", "args": [] }
  },
  "hooks": {
    "BeforeTool": [
      { "matcher": "write_file", "hooks": [{ "type": "command", "command": "lint" }] }
    ],
    "PreToolUse": [
      { "matcher": "edit", "hooks": [{ "type": "command", "command": "fmt" }] }
    ]
  }
}
"#;
    for (host, dir, event, extra) in [
        (
            "gemini",
            "gem/.gemini",
            "BeforeTool",
            json!({"trust": true}),
        ),
        (
            "qwen",
            "qwenhome",
            "PreToolUse",
            json!({"trust": true, "alwaysLoadTools": true}),
        ),
    ] {
        let h = Home::new(host);
        let file = format!("{dir}/settings.json");
        h.write(&file, settings);
        let mine = "alias ll='ls -l'\n";
        h.write("home/.bashrc", mine);
        // A Codex setup's block in the login profile: removing this host's must keep it.
        let codex_block = "# >>> herdr-link shim (herdr-link setup) >>>\nPATH=/s:$PATH\n# <<< herdr-link shim <<<\n";
        h.write("home/.bash_profile", codex_block);
        let herdr = h.herdr("0.8.0");
        let run = |args: &[&str]| {
            bash_user_setup(&h, host, &herdr, args)
                .env("GEMINI_CLI_HOME", h.root.join("gem"))
                .env("QWEN_HOME", h.root.join("qwenhome"))
                .output()
                .unwrap()
        };
        let before = h.snapshot();
        let out = ok(&run(&["--dry-run"]));
        assert_eq!(h.snapshot(), before, "{host}: --dry-run wrote something");
        assert!(out.contains("+    \"herdr_link\": {"), "{out}");

        ok(&run(&[]));
        let cfg: Value = serde_json::from_str(&h.read(&file)).unwrap();
        assert_eq!(keys(&cfg), ["theme", "mcpServers", "hooks"], "{host}");
        assert_eq!(keys(&cfg["mcpServers"]), ["github", "herdr_link"]);
        let mut want = json!({"command": "/usr/bin/herdr-link", "args": ["mcp"]});
        for (k, v) in extra.as_object().unwrap() {
            want[k] = v.clone();
        }
        want["env"] = json!({"HERDR_BIN_PATH": herdr.to_str().unwrap()});
        assert_eq!(cfg["mcpServers"]["herdr_link"], want, "{host}");
        let hooks = cfg["hooks"][event].as_array().unwrap();
        assert_eq!(
            hooks.last().unwrap(),
            &json!({"matcher": "run_shell_command", "hooks": [{"type": "command",
                "command": format!("/usr/bin/herdr-link guard --host {host} --shim {}",
                    h.home().join(".local/share/herdr-link/shim").display())}]}),
            "{host}"
        );
        assert_eq!(hooks.len(), 2, "{host}: the user's own hook stays");
        assert!(h.backups().len() >= 2, "{host}: {:?}", h.backups());
        let rc = h.read("home/.bashrc");
        assert!(rc.starts_with(mine), "{rc}");
        assert!(
            rc.contains(&format!(
                "# >>> herdr-link shim (herdr-link setup) >>>\n# for: {host}\n"
            )),
            "{rc}"
        );
        // An interactive bash inside Herdr (what Herdr types the host's command into) puts the
        // shim first, and the host started from it passes that PATH to its commands. (The block
        // runs `--bin`'s `shim-env`: this test's binary stands in for /usr/bin/herdr-link.)
        h.write("home/.bashrc", &rc.replace("/usr/bin/herdr-link", BIN));
        let out = Command::new("bash")
            .args(["-ic", "printf %s \"$PATH\""])
            .env_clear()
            .env("HOME", h.home())
            .env("HERDR_ENV", "1")
            .env("PATH", "/usr/bin:/bin")
            .output()
            .unwrap();
        let path = String::from_utf8_lossy(&out.stdout).to_string();
        let shim = h.home().join(".local/share/herdr-link/shim");
        assert!(
            path.starts_with(&format!("{}:", shim.display())),
            "{host}: {path}"
        );

        h.write("home/.bashrc", &rc);
        let first = h.snapshot();
        let again = ok(&run(&[]));
        assert_eq!(h.snapshot(), first, "{host}: a second run changed files");
        assert!(again.contains(&format!("unchanged {}", h.root.join(&file).display())));

        ok(&run(&["--uninstall"]));
        assert_eq!(
            serde_json::from_str::<Value>(&h.read(&file)).unwrap(),
            serde_json::from_str::<Value>(settings).unwrap(),
            "{host}"
        );
        assert_eq!(h.read("home/.bashrc"), mine);
        // Codex's block stays, for Codex alone (in the form setup writes today).
        let profile = h.read("home/.bash_profile");
        assert!(
            profile.starts_with("# >>> herdr-link shim (herdr-link setup) >>>\n# for: codex\n")
                && profile.ends_with("# <<< herdr-link shim <<<\n")
                && profile.matches(">>>").count() == 2,
            "{host}: {profile}"
        );

        // Project level: DIR/.gemini/settings.json or DIR/.qwen/settings.json, nothing in the
        // user's settings.
        fs::create_dir_all(h.root.join("proj")).unwrap();
        ok(&run(&["--project", "proj"]));
        let project = if host == "gemini" { ".gemini" } else { ".qwen" };
        let cfg: Value =
            serde_json::from_str(&h.read(&format!("proj/{project}/settings.json"))).unwrap();
        assert_eq!(
            cfg["mcpServers"]["herdr_link"]["command"],
            "/usr/bin/herdr-link"
        );
        assert_eq!(
            serde_json::from_str::<Value>(&h.read(&file)).unwrap(),
            serde_json::from_str::<Value>(settings).unwrap()
        );
    }
}

/// A malformed settings.json of Gemini CLI or Qwen Code is an error naming it; nothing at all
/// is written (not the shell startup block either).
#[test]
fn gemini_and_qwen_malformed_settings_write_nothing() {
    for (host, file) in [
        ("gemini", "home/.gemini/settings.json"),
        ("qwen", "home/.qwen/settings.json"),
    ] {
        let h = Home::new(&format!("{host}-bad"));
        h.write(file, "{\"mcpServers\": [],}");
        let herdr = h.herdr("0.8.2");
        let before = h.snapshot();
        let out = h.setup(&[host, "--herdr", herdr.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{host}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("settings.json is not valid JSON"), "{err}");
        assert_eq!(h.snapshot(), before, "{host}");
        h.write(file, "{\"mcpServers\": []}");
        let out = h.setup(&[host, "--herdr", herdr.to_str().unwrap()]);
        assert!(String::from_utf8_lossy(&out.stderr).contains("`mcpServers` is not a JSON object"));
    }
}

/// Copilot CLI, Factory Droid, Cline and Kimi Code (docs/hosts-more.md): setup merges its
/// entries into the user's existing files (their keys, order and comments stay), backs up what
/// it changes, writes nothing with `--dry-run`, changes nothing on a second run, puts the shim
/// block in the interactive shell's startup file, and `--uninstall` gives the files back.
#[test]
fn copilot_droid_cline_and_kimi_merge_are_idempotent_and_uninstall() {
    let mine_json = "{\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"github\": {\n      \"command\": \"gh-mcp\",\n      \"args\": []\n    }\n  }\n}\n";
    let kimi_toml = "# my kimi\ndefault_model = \"k2\"\n\n[[hooks]]\nevent = \"Stop\"\ncommand = \"notify\" # ping\n";
    struct Case {
        host: &'static str,
        /// Files the user already has.
        existing: Vec<(&'static str, &'static str)>,
        /// (file, what setup must have put there).
        check: fn(&Home) -> (),
    }
    let cases = [
        Case {
            host: "copilot",
            existing: vec![
                ("cop/mcp-config.json", mine_json),
                (
                    "cop/settings.json",
                    "{\n  \"model\": \"gpt-5\",\n  \"hooks\": {\n    \"preToolUse\": [\n      {\"type\": \"command\", \"bash\": \"lint\", \"timeoutSec\": 5}\n    ]\n  }\n}\n",
                ),
            ],
            check: |h| {
                let m: Value = serde_json::from_str(&h.read("cop/mcp-config.json")).unwrap();
                assert_eq!(keys(&m["mcpServers"]), ["github", "herdr_link"]);
                assert_eq!(
                    m["mcpServers"]["herdr_link"],
                    json!({"type": "local", "tools": ["*"], "command": "/usr/bin/herdr-link",
                        "args": ["mcp", "--host", "copilot"]})
                );
                let s: Value = serde_json::from_str(&h.read("cop/settings.json")).unwrap();
                let pre = s["hooks"]["preToolUse"].as_array().unwrap();
                assert_eq!(pre.len(), 2);
                assert_eq!(pre[0]["bash"], "lint");
                assert_eq!(pre[1]["type"], "command");
                assert!(pre[1]["bash"]
                    .as_str()
                    .unwrap()
                    .contains(" guard --host copilot --shim "));
            },
        },
        Case {
            host: "droid",
            existing: vec![
                ("home/.factory/mcp.json", mine_json),
                (
                    "home/.factory/settings.json",
                    "{\n  \"model\": \"x\",\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\"matcher\": \"Edit\", \"hooks\": [{\"type\": \"command\", \"command\": \"fmt\"}]}\n    ]\n  }\n}\n",
                ),
            ],
            check: |h| {
                let m: Value =
                    serde_json::from_str(&h.read("home/.factory/mcp.json")).unwrap();
                assert_eq!(
                    m["mcpServers"]["herdr_link"],
                    json!({"type": "stdio", "command": "/usr/bin/herdr-link",
                        "args": ["mcp", "--host", "droid"]})
                );
                let s: Value =
                    serde_json::from_str(&h.read("home/.factory/settings.json")).unwrap();
                let pre = s["hooks"]["PreToolUse"].as_array().unwrap();
                assert_eq!(pre.len(), 2);
                // The shell tool, and Link's own tools, which the guard grants.
                assert_eq!(pre[1]["matcher"], "^(Execute|herdr_link___.+)$");
                assert!(pre[1]["hooks"][0]["command"]
                    .as_str()
                    .unwrap()
                    .contains(" guard --host droid --shim "));
            },
        },
        Case {
            host: "cline",
            existing: vec![("cl/data/settings/cline_mcp_settings.json", mine_json)],
            check: |h| {
                let m: Value =
                    serde_json::from_str(&h.read("cl/data/settings/cline_mcp_settings.json"))
                        .unwrap();
                assert_eq!(
                    m["mcpServers"]["herdr_link"],
                    json!({"disabled": false, "command": "/usr/bin/herdr-link",
                        "args": ["mcp", "--host", "cline"]})
                );
                let hook = h.root.join("cl/hooks/PreToolUse");
                let mode = fs::metadata(&hook).unwrap().permissions().mode();
                assert_eq!(mode & 0o777, 0o755);
                let text = fs::read_to_string(&hook).unwrap();
                assert!(text.starts_with("#!/bin/sh\n"), "{text}");
                assert!(text.contains("exec /usr/bin/herdr-link guard --host cline --shim "));
            },
        },
        Case {
            host: "kimi",
            existing: vec![("kimi/mcp.json", mine_json), ("kimi/config.toml", kimi_toml)],
            check: |h| {
                let m: Value = serde_json::from_str(&h.read("kimi/mcp.json")).unwrap();
                assert_eq!(
                    m["mcpServers"]["herdr_link"],
                    json!({"command": "/usr/bin/herdr-link", "args": ["mcp", "--host", "kimi"]})
                );
                let t = h.read("kimi/config.toml");
                assert!(t.starts_with("# my kimi\n") && t.contains("# ping"), "{t}");
                assert!(t.contains("[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Bash\"\ncommand = \"/usr/bin/herdr-link guard --host kimi --shim "), "{t}");
                assert!(t.contains("[[permission.rules]]\ndecision = \"allow\"\npattern = \"mcp__herdr_link__*\"\n"), "{t}");
            },
        },
    ];
    for case in cases {
        let host = case.host;
        let h = Home::new(&format!("more-{host}"));
        for (rel, text) in &case.existing {
            h.write(rel, text);
        }
        let rc = "alias ll='ls -l'\n";
        h.write("home/.bashrc", rc);
        let herdr = h.herdr("0.8.2");
        let run = |args: &[&str]| {
            bash_user_setup(&h, host, &herdr, args)
                .env("COPILOT_HOME", h.root.join("cop"))
                .env("CLINE_DIR", h.root.join("cl"))
                .env("KIMI_CODE_HOME", h.root.join("kimi"))
                .output()
                .unwrap()
        };
        let before = h.snapshot();
        let out = ok(&run(&["--dry-run"]));
        assert_eq!(h.snapshot(), before, "{host}: --dry-run wrote something");
        assert!(
            out.contains("herdr_link") || out.contains("guard --host"),
            "{out}"
        );
        ok(&run(&[]));
        (case.check)(&h);
        assert!(
            h.backups().len() >= case.existing.len(),
            "{host}: {:?}",
            h.backups()
        );
        let bashrc = h.read("home/.bashrc");
        assert!(
            bashrc.starts_with(rc)
                && bashrc.contains(&format!(
                    "# >>> herdr-link shim (herdr-link setup) >>>\n# for: {host}\n"
                )),
            "{host}: {bashrc}"
        );
        let first = h.snapshot();
        ok(&run(&[]));
        assert_eq!(h.snapshot(), first, "{host}: a second run changed files");
        ok(&run(&["--uninstall"]));
        for (rel, text) in &case.existing {
            let now = h.read(rel);
            if rel.ends_with(".json") {
                assert_eq!(
                    serde_json::from_str::<Value>(&now).unwrap(),
                    serde_json::from_str::<Value>(text).unwrap(),
                    "{host}: {rel}"
                );
            } else {
                assert_eq!(&now, text, "{host}: {rel}");
            }
        }
        assert_eq!(h.read("home/.bashrc"), rc, "{host}");
        assert!(!h.root.join("cl/hooks/PreToolUse").exists(), "{host}");
        // Project level.
        fs::create_dir_all(h.root.join("proj")).unwrap();
        ok(&run(&["--project", "proj"]));
        let (rel, key) = match host {
            "copilot" => ("proj/.github/mcp.json", "mcpServers"),
            "droid" => ("proj/.factory/mcp.json", "mcpServers"),
            "cline" => ("proj/.clinerules/hooks/PreToolUse", ""),
            _ => ("proj/.kimi-code/mcp.json", "mcpServers"),
        };
        let text = h.read(rel);
        if key.is_empty() {
            assert!(text.contains("guard --host cline"), "{text}");
        } else {
            let v: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(
                v[key]["herdr_link"]["command"], "/usr/bin/herdr-link",
                "{host}"
            );
        }
        if host == "copilot" {
            let v: Value =
                serde_json::from_str(&h.read("proj/.github/hooks/herdr-link.json")).unwrap();
            assert_eq!(v["version"], 1);
            assert!(v["hooks"]["preToolUse"][0]["bash"]
                .as_str()
                .unwrap()
                .contains("guard --host copilot"));
            ok(&run(&["--project", "proj", "--uninstall"]));
            assert_eq!(
                serde_json::from_str::<Value>(&h.read("proj/.github/hooks/herdr-link.json"))
                    .unwrap(),
                json!({})
            );
        }
    }
}

/// Droid asks before every MCP tool in its default mode: setup's guard entry also matches
/// Link's own tools (the guard grants them). An entry an earlier setup wrote for `Execute` alone
/// gets the matcher; an entry the user shares with a hook of their own keeps theirs.
#[test]
fn droid_guard_entry_matches_link_tools_and_upgrades_an_earlier_one() {
    const MATCHER: &str = "^(Execute|herdr_link___.+)$";
    let h = Home::new("droid-matcher");
    let guard = "/usr/bin/herdr-link guard --host droid --shim /x";
    let earlier = json!({"hooks": {"PreToolUse": [
        {"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt"}]},
        {"matcher": "Execute", "hooks": [{"type": "command", "command": guard}]}]}});
    h.write("home/.factory/settings.json", &earlier.to_string());
    let herdr = h.herdr("0.8.2");
    ok(&bash_user_setup(&h, "droid", &herdr, &[]).output().unwrap());
    let s: Value = serde_json::from_str(&h.read("home/.factory/settings.json")).unwrap();
    let pre = s["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2, "{s}");
    assert_eq!(pre[0]["matcher"], "Edit");
    assert_eq!(pre[1]["matcher"], MATCHER);
    assert!(pre[1]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .starts_with("/usr/bin/herdr-link guard --host droid --shim "));

    let shared = json!({"hooks": {"PreToolUse": [{"matcher": "Execute|Edit", "hooks": [
        {"type": "command", "command": "fmt"},
        {"type": "command", "command": guard}]}]}});
    h.write("home/.factory/settings.json", &shared.to_string());
    ok(&bash_user_setup(&h, "droid", &herdr, &[]).output().unwrap());
    let s: Value = serde_json::from_str(&h.read("home/.factory/settings.json")).unwrap();
    let pre = s["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 1, "{s}");
    assert_eq!(pre[0]["matcher"], "Execute|Edit");
}

/// Cline runs one hook file per event: a PreToolUse hook of the user's own is never replaced.
#[test]
fn cline_keeps_a_hook_file_of_the_users_own() {
    let h = Home::new("cline-own-hook");
    let own = "#!/bin/sh\necho '{}'\n";
    h.write("home/.cline/hooks/PreToolUse", own);
    let herdr = h.herdr("0.8.2");
    let before = h.snapshot();
    let out = h.setup(&["cline", "--herdr", herdr.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is a PreToolUse hook of your own"), "{err}");
    assert_eq!(h.snapshot(), before);
}
