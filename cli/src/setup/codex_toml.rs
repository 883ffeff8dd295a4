//! Codex `config.toml` edits with `toml_edit`: the user's comments, order and formatting stay;
//! only the keys herdr-link owns are touched, and only when their value differs.

use herdr_link::presentation::MCP_SERVER_NAME;
use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, Value};

/// Parses a Codex config; a malformed file is an error naming it.
pub fn parse(path: &str, text: &str) -> Result<DocumentMut, String> {
    text.parse::<DocumentMut>().map_err(|e| {
        format!(
            "{path} is not valid TOML ({}); fix or move it, then run setup again",
            e.to_string().trim()
        )
    })
}

/// The MCP server entry herdr-link writes.
pub struct Server<'a> {
    /// The `herdr-link` binary.
    pub command: &'a str,
    /// Variables Codex passes through from its own environment (`env_vars`).
    pub env_vars: &'a [String],
    /// `HERDR_BIN_PATH` pinned in `env` (Herdr older than 0.8.2 does not set it).
    pub herdr_bin_path: Option<&'a str>,
}

fn table<'a>(parent: &'a mut Table, key: &str, what: &str) -> Result<&'a mut Table, String> {
    if !parent.contains_key(key) {
        let mut t = Table::new();
        t.set_implicit(true);
        parent.insert(key, Item::Table(t));
    }
    parent
        .get_mut(key)
        .and_then(Item::as_table_mut)
        .ok_or_else(|| format!("{what}: `{key}` is not a TOML table"))
}

/// Sets `key` unless it already holds an equal value (so a second run rewrites nothing).
fn set(t: &mut Table, key: &str, value: Value) {
    let same = t
        .get(key)
        .and_then(Item::as_value)
        .is_some_and(|v| same_value(v, &value));
    if !same {
        t.insert(key, Item::Value(value));
    }
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => x.value() == y.value(),
        (Value::Boolean(x), Value::Boolean(y)) => x.value() == y.value(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| same_value(p, q))
        }
        (Value::InlineTable(x), Value::InlineTable(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => false,
    }
}

fn strings(items: &[&str]) -> Value {
    let mut a = Array::new();
    for s in items {
        a.push(*s);
    }
    Value::Array(a)
}

/// Codex's approval mode for the server's tools: `approve` runs them without asking. In Codex's
/// default sandbox (`workspace-write`) every MCP tool call otherwise needs an approval, which
/// headless `codex exec` (`approval_policy = "never"`) refuses outright and an interactive
/// worker waits on (docs/setup.md, "Permissions"). Set on the server, not per tool: Codex shows
/// only the gateway, whose actions carry every capability, start included.
pub const APPROVAL_MODE: &str = "approve";

/// Writes `[mcp_servers.herdr_link]` (keeping any other key the user put there and every
/// variable already listed in `env_vars`), its `default_tools_approval_mode`, and
/// `[features] hooks = true`.
pub fn install(doc: &mut DocumentMut, server: &Server, what: &str) -> Result<(), String> {
    let root = doc.as_table_mut();
    let servers = table(root, "mcp_servers", what)?;
    let entry = table(servers, MCP_SERVER_NAME, what)?;
    entry.set_implicit(false);
    set(entry, "command", Value::from(server.command));
    set(entry, "args", strings(&["mcp"]));
    if !entry.contains_key("default_tools_approval_mode") {
        // A mode the user chose (`prompt`: ask for every Link call) stays.
        entry.insert(
            "default_tools_approval_mode",
            Item::Value(APPROVAL_MODE.into()),
        );
    }

    let mut vars: Vec<String> = entry
        .get("env_vars")
        .and_then(Item::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    for v in server.env_vars {
        if !vars.contains(v) {
            vars.push(v.clone());
        }
    }
    if server.herdr_bin_path.is_some() {
        // Pinned in `env` instead: one source for the variable.
        vars.retain(|v| v != "HERDR_BIN_PATH");
    }
    let refs: Vec<&str> = vars.iter().map(String::as_str).collect();
    set(entry, "env_vars", strings(&refs));

    if let Some(path) = server.herdr_bin_path {
        let mut env = entry
            .get("env")
            .and_then(Item::as_inline_table)
            .cloned()
            .unwrap_or_else(InlineTable::new);
        let current = env.get("HERDR_BIN_PATH").and_then(Value::as_str);
        if current != Some(path) {
            env.insert("HERDR_BIN_PATH", Value::from(path));
            set(entry, "env", Value::InlineTable(env));
        }
    }

    let features = table(root, "features", what)?;
    features.set_implicit(false);
    set(features, "hooks", Value::from(true));
    Ok(())
}

/// Removes `[mcp_servers.herdr_link]` (and `mcp_servers` when that emptied it); with
/// `drop_hooks_feature`, also `[features] hooks` (and `features` when that emptied it).
pub fn uninstall(doc: &mut DocumentMut, drop_hooks_feature: bool) {
    let root = doc.as_table_mut();
    if let Some(servers) = root.get_mut("mcp_servers").and_then(Item::as_table_mut) {
        if servers.remove(MCP_SERVER_NAME).is_some() && servers.is_empty() {
            root.remove("mcp_servers");
        }
    }
    if drop_hooks_feature {
        if let Some(features) = root.get_mut("features").and_then(Item::as_table_mut) {
            if features.remove("hooks").is_some() && features.is_empty() {
                root.remove("features");
            }
        }
    }
}

/// Codex's record of a hook the user trusted, as Codex 0.171 keeps it in the user's
/// `config.toml`: `[hooks.state."<hooks.json path>:<event>:<group>:<handler>"]` with
/// `trusted_hash`, the SHA-256 of the hook's normalized identity (Codex's
/// `hooks/src/engine/discovery.rs`: `command_hook_hash`, and `config/src/fingerprint.rs`:
/// `version_for_toml`). Without it Codex's TUI opens "Hooks need review" at its next start and
/// runs the hook only once someone trusts it there.
pub struct HookTrust {
    /// The `hooks.json` file the hook is in (absolute, as Codex names it).
    pub hooks_json: String,
    /// Index of the hook's matcher group in `hooks.PreToolUse`.
    pub group: usize,
    /// Index of the hook within that group.
    pub handler: usize,
    /// The hook's command.
    pub command: String,
}

/// Codex's event label of the guard hook (`PreToolUse`).
const PRE_TOOL_USE: &str = "pre_tool_use";
/// Codex's default hook timeout in seconds, part of the hashed identity.
const DEFAULT_HOOK_TIMEOUT: u64 = 600;

impl HookTrust {
    /// The state key.
    pub fn key(&self) -> String {
        format!(
            "{}:{PRE_TOOL_USE}:{}:{}",
            self.hooks_json, self.group, self.handler
        )
    }

    /// The `trusted_hash` Codex computes for the guard hook (a `Bash` matcher, a command hook
    /// without timeout, status message or `async`): `sha256:` and the hex digest of the
    /// compact JSON of its identity with every object's keys sorted.
    pub fn hash(&self) -> String {
        use sha2::Digest;
        // serde_json's map is ordered as written here: keys already in sorted order.
        let identity = serde_json::json!({
            "event_name": PRE_TOOL_USE,
            "hooks": [{
                "async": false,
                "command": self.command,
                "timeout": DEFAULT_HOOK_TIMEOUT,
                "type": "command",
            }],
            "matcher": "Bash",
        });
        let digest = sha2::Sha256::digest(identity.to_string().as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        format!("sha256:{hex}")
    }
}

/// Records that the user trusts the guard hook (running `setup codex` is that decision):
/// `[hooks.state."<key>"] trusted_hash`. A record of the same hook under another position in
/// the same file (the file changed since) is dropped first.
pub fn trust_hook(doc: &mut DocumentMut, trust: &HookTrust, what: &str) -> Result<(), String> {
    forget_hook(doc, trust);
    let hooks = table(doc.as_table_mut(), "hooks", what)?;
    let state = table(hooks, "state", what)?;
    let entry = table(state, &trust.key(), what)?;
    entry.set_implicit(false);
    set(entry, "trusted_hash", Value::from(trust.hash()));
    Ok(())
}

/// Drops every trust record setup wrote for this hook in this `hooks.json` (whatever its
/// position), and the tables that emptied.
pub fn forget_hook(doc: &mut DocumentMut, trust: &HookTrust) {
    let prefix = format!("{}:{PRE_TOOL_USE}:", trust.hooks_json);
    let hash = trust.hash();
    let root = doc.as_table_mut();
    let Some(hooks) = root.get_mut("hooks").and_then(Item::as_table_mut) else {
        return;
    };
    let Some(state) = hooks.get_mut("state").and_then(Item::as_table_mut) else {
        return;
    };
    let ours: Vec<String> = state
        .iter()
        .filter(|(k, v)| {
            k.starts_with(&prefix)
                && v.get("trusted_hash").and_then(Item::as_str) == Some(hash.as_str())
        })
        .map(|(k, _)| k.to_string())
        .collect();
    for k in &ours {
        state.remove(k);
    }
    if !ours.is_empty() && state.is_empty() {
        hooks.remove("state");
        if hooks.is_empty() {
            root.remove("hooks");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash Codex 0.171 itself wrote for this command when its "Hooks need review" dialog
    /// was answered "Trust all and continue" (real Codex TUI, notes of issue 39); with setup's
    /// record the TUI starts without the dialog.
    #[test]
    fn the_trust_hash_is_codexs() {
        let t = HookTrust {
            hooks_json: "/home/u/.codex/hooks.json".into(),
            group: 0,
            handler: 0,
            command:
                "/usr/bin/herdr-link guard --host codex --shim /home/u/.local/share/herdr-link/shim"
                    .into(),
        };
        assert_eq!(t.key(), "/home/u/.codex/hooks.json:pre_tool_use:0:0");
        assert_eq!(
            t.hash(),
            "sha256:83bc02f8258d9ab31c64e4fe856e1b0b46fe349fba2c87481d35b5c54be46ed5"
        );
        let mut doc = parse("x", "model = \"o4\"\n").unwrap();
        trust_hook(&mut doc, &t, "x").unwrap();
        let moved = HookTrust { group: 2, ..t };
        trust_hook(&mut doc, &moved, "x").unwrap();
        let text = doc.to_string();
        assert!(
            text.contains("[hooks.state.\"/home/u/.codex/hooks.json:pre_tool_use:2:0\"]"),
            "{text}"
        );
        assert!(!text.contains(":0:0"), "{text}");
        forget_hook(&mut doc, &moved);
        assert_eq!(doc.to_string(), "model = \"o4\"\n");
    }

    const EXISTING: &str = r#"# my settings
model = "o4" # the one I like

[mcp_servers.other]
command = "other-server"

[features]
plugins = false
"#;

    fn server<'a>(vars: &'a [String], pin: Option<&'a str>) -> Server<'a> {
        Server {
            command: "/bin/herdr-link",
            env_vars: vars,
            herdr_bin_path: pin,
        }
    }

    #[test]
    fn install_keeps_everything_and_is_idempotent() {
        let vars = vec!["HERDR_ENV".to_string(), "HERDR_BIN_PATH".to_string()];
        let mut doc = parse("c", EXISTING).unwrap();
        install(&mut doc, &server(&vars, None), "c").unwrap();
        let once = doc.to_string();
        assert!(once.starts_with("# my settings\nmodel = \"o4\" # the one I like\n"));
        assert!(once.contains("[mcp_servers.other]\ncommand = \"other-server\"\n"));
        assert!(once.contains("plugins = false\nhooks = true\n"));
        assert!(once.contains(
            "[mcp_servers.herdr_link]\ncommand = \"/bin/herdr-link\"\nargs = [\"mcp\"]\ndefault_tools_approval_mode = \"approve\"\nenv_vars = [\"HERDR_ENV\", \"HERDR_BIN_PATH\"]\n"
        ));
        let mut again = parse("c", &once).unwrap();
        install(&mut again, &server(&vars, None), "c").unwrap();
        assert_eq!(again.to_string(), once);

        uninstall(&mut again, true);
        assert_eq!(again.to_string(), EXISTING);
    }

    #[test]
    fn old_herdr_pins_the_path_in_env() {
        let vars = vec!["HERDR_ENV".to_string(), "HERDR_BIN_PATH".to_string()];
        let mut doc = parse("c", "").unwrap();
        install(&mut doc, &server(&vars, Some("/opt/herdr")), "c").unwrap();
        let text = doc.to_string();
        assert!(text.contains("env_vars = [\"HERDR_ENV\"]\n"), "{text}");
        assert!(
            text.contains("env = { HERDR_BIN_PATH = \"/opt/herdr\" }\n"),
            "{text}"
        );
        let mut again = parse("c", &text).unwrap();
        install(&mut again, &server(&vars, Some("/opt/herdr")), "c").unwrap();
        assert_eq!(again.to_string(), text);
    }

    #[test]
    fn malformed_and_misshapen_are_errors() {
        assert!(parse("c", "[mcp_servers\n")
            .unwrap_err()
            .contains("not valid TOML"));
        let mut doc = parse("c", "mcp_servers = 3\n").unwrap();
        assert!(install(&mut doc, &server(&[], None), "c").is_err());
    }
}
