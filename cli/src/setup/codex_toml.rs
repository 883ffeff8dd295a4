//! Codex `config.toml` edits with `toml_edit`: the user's comments, order and formatting stay;
//! only the keys herdr-link owns are touched, and only when their value differs.

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
    let entry = table(servers, "herdr_link", what)?;
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
        if servers.remove("herdr_link").is_some() && servers.is_empty() {
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

#[cfg(test)]
mod tests {
    use super::*;

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
