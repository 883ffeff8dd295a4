//! Setup for GitHub Copilot CLI, Factory Droid, Cline and Kimi Code (docs/hosts-more.md): each
//! host's facts (its files, its server entry, its guard hook, its permission for Link's tools)
//! are in its own function. All four run shell commands in a shell that inherits the host's
//! own environment, so the herdr shim reaches them as it reaches Gemini CLI's and Qwen Code's:
//! through the startup files of the shell Herdr types the host's command into.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use toml_edit::{ArrayOfTables, DocumentMut, Item, Table};

use super::files::{read_optional, Change};
use super::places::Places;
use super::plan::{guard_command, json_change, startup_files, Ctx, Options, Plan, Registration};
use super::{codex_toml, json as js, shim};
use crate::host::Host;
use herdr_link::presentation::{McpHost, MCP_SERVER_NAME};

/// The event `host`'s guard hook is registered on.
fn hook_event(host: Host) -> &'static str {
    host.hook().expect("a host with a guard hook").input.event
}

/// The shell tool `host`'s guard hook matches.
fn shell_tool(host: Host) -> &'static str {
    host.hook().expect("a host with a guard hook").input.shell
}

/// The file name that marks the guard hook setup writes for Cline (its first comment line).
const CLINE_HOOK_MARK: &str = "# herdr-link guard hook (herdr-link setup cline)";

/// Sets the server entry's fields in `servers` (`fields` first, then `command`, `args` and the
/// pinned `HERDR_BIN_PATH`). `args` names the host (`mcp --host HOST`): the appendix then names
/// the tools as this host shows them, whatever client name it sends.
fn server_entry(
    root: &mut Value,
    fields: &[(&str, Value)],
    host: &str,
    cx: &Ctx,
    what: &str,
) -> Result<(), String> {
    let map = root.as_object_mut().expect("parse() returns objects");
    let servers = js::object_at(map, "mcpServers", what)?;
    let entry = js::object_at(servers, MCP_SERVER_NAME, what)?;
    for (key, value) in fields {
        js::set(entry, key, value.clone());
    }
    js::set(entry, "command", json!(cx.bin.display().to_string()));
    js::set(entry, "args", json!(["mcp", "--host", host]));
    if let Some(pin) = cx.pin {
        let env = js::object_at(entry, "env", what)?;
        js::set(env, "HERDR_BIN_PATH", json!(pin));
    }
    Ok(())
}

/// A JSON file's `mcpServers.herdr_link` change: `fields` are the host's own entry keys.
fn server_change(
    path: PathBuf,
    fields: &[(&str, Value)],
    host: &str,
    o: &Options,
    cx: &Ctx,
) -> Result<Change, String> {
    json_change(path, |root, what| {
        if o.uninstall {
            js::remove_nested(
                root.as_object_mut().expect("object"),
                "mcpServers",
                MCP_SERVER_NAME,
            );
            Ok(())
        } else {
            server_entry(root, fields, host, cx, what)
        }
    })
}

/// GitHub Copilot CLI: `$COPILOT_HOME/mcp-config.json` (`mcpServers.herdr_link`, `type`
/// "local", every tool enabled) and the guard as a `preToolUse` command hook in
/// `$COPILOT_HOME/settings.json` (the `.github/hooks/*.json` schema: `type`, `bash`,
/// `timeoutSec`), which also grants Link's own tools (Copilot CLI has no user setting for
/// that; `hook::link_grant`); with `--project DIR`: `DIR/.github/mcp.json` and
/// `DIR/.github/hooks/herdr-link.json`.
pub fn copilot(o: &Options, cx: &Ctx) -> Result<Plan, String> {
    let (mcp, hooks) = match cx.project {
        Some(dir) => (
            dir.join(".github/mcp.json"),
            dir.join(".github/hooks/herdr-link.json"),
        ),
        None => (
            cx.places.copilot.join("mcp-config.json"),
            cx.places.copilot.join("settings.json"),
        ),
    };
    let fields = [("type", json!("local")), ("tools", json!(["*"]))];
    let command = guard_command(cx.bin, Host::Copilot.name(), &shim::dir(cx.places));
    let project = cx.project.is_some();
    let hook = json_change(hooks, |root, what| {
        if o.uninstall {
            remove_copilot_hook(root);
            if project && root.as_object().is_some_and(|m| m.len() == 1) {
                root.as_object_mut().expect("object").remove("version");
            }
            return Ok(());
        }
        if project {
            let map = root.as_object_mut().expect("object");
            if !map.contains_key("version") {
                map.insert("version".into(), json!(1));
            }
        }
        add_copilot_hook(root, &command, what)
    })?;
    let mut plan = Plan {
        changes: vec![
            server_change(mcp, &fields, Host::Copilot.name(), o, cx)?,
            hook,
        ],
        ..Plan::default()
    };
    startup_files(o, cx, Host::Copilot.name(), &mut plan)?;
    Ok(plan)
}

/// Whether a Copilot CLI hook entry is the guard setup writes.
fn is_copilot_guard(hook: &Value) -> bool {
    hook.get("bash")
        .and_then(Value::as_str)
        .is_some_and(|c| js::is_guard_command(c, Host::Copilot.name()))
}

/// Adds (or updates in place) the guard in `hooks.preToolUse`.
fn add_copilot_hook(root: &mut Value, command: &str, what: &str) -> Result<(), String> {
    let map = root.as_object_mut().expect("parse() returns objects");
    let hooks = js::object_at(map, "hooks", what)?;
    let list = hooks
        .entry(hook_event(Host::Copilot))
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or_else(|| format!("{what}: `hooks.preToolUse` is not a JSON array"))?;
    match list.iter_mut().find(|h| is_copilot_guard(h)) {
        Some(Value::Object(h)) => {
            js::set(h, "type", json!("command"));
            js::set(h, "bash", json!(command));
        }
        _ => list.push(json!({"type": "command", "bash": command, "timeoutSec": 30})),
    }
    Ok(())
}

/// Removes the guard from `hooks.preToolUse`, and the containers that emptied.
fn remove_copilot_hook(root: &mut Value) {
    let Some(map) = root.as_object_mut() else {
        return;
    };
    let Some(Value::Object(hooks)) = map.get_mut("hooks") else {
        return;
    };
    let Some(Value::Array(list)) = hooks.get_mut(hook_event(Host::Copilot)) else {
        return;
    };
    let before = list.len();
    list.retain(|h| !is_copilot_guard(h));
    if list.len() != before && list.is_empty() {
        hooks.shift_remove(hook_event(Host::Copilot));
        if hooks.is_empty() {
            map.shift_remove("hooks");
        }
    }
}

/// The matcher of the guard's `PreToolUse` entry in Droid (a regular expression, tested
/// unanchored, unless it equals the tool name): the shell tool `Execute`, and Link's own MCP
/// tools, which the guard grants (`hook::link_grant`), as Droid's default mode "Auto (Off)"
/// asks before every MCP tool not annotated read-only.
const DROID_MATCHER: &str = "^(Execute|herdr_link___.+)$";

/// Factory Droid: `~/.factory/mcp.json` (`mcpServers.herdr_link`, `type` "stdio") and the
/// guard as a `PreToolUse` hook on `Execute` and Link's tools ([`DROID_MATCHER`]) in
/// `~/.factory/settings.json` (Claude Code's hook format); with `--project DIR`:
/// `DIR/.factory/`.
pub fn droid(o: &Options, cx: &Ctx) -> Result<Plan, String> {
    let dir = match cx.project {
        Some(d) => d.join(".factory"),
        None => cx.places.factory.clone(),
    };
    let fields = [("type", json!("stdio"))];
    let command = guard_command(cx.bin, Host::Droid.name(), &shim::dir(cx.places));
    let ours = |c: &str| js::is_guard_command(c, Host::Droid.name());
    let settings = json_change(dir.join("settings.json"), |root, what| {
        if o.uninstall {
            js::remove_event_hook(root, hook_event(Host::Droid), ours);
            Ok(())
        } else {
            js::add_event_hook(
                root,
                hook_event(Host::Droid),
                Some(DROID_MATCHER),
                &command,
                ours,
                what,
            )?;
            set_droid_matcher(root, ours);
            Ok(())
        }
    })?;
    let mut plan = Plan {
        changes: vec![
            server_change(dir.join("mcp.json"), &fields, Host::Droid.name(), o, cx)?,
            settings,
        ],
        ..Plan::default()
    };
    startup_files(o, cx, Host::Droid.name(), &mut plan)?;
    Ok(plan)
}

/// Sets [`DROID_MATCHER`] on the `PreToolUse` entries that hold only the guard (an earlier
/// setup wrote `Execute` alone); an entry the user shares with hooks of their own keeps its
/// matcher.
fn set_droid_matcher(root: &mut Value, ours: impl Fn(&str) -> bool) {
    let entries = root
        .pointer_mut("/hooks/PreToolUse")
        .and_then(Value::as_array_mut);
    for entry in entries.into_iter().flatten() {
        let only_ours = entry
            .get("hooks")
            .and_then(Value::as_array)
            .is_some_and(|list| {
                !list.is_empty()
                    && list
                        .iter()
                        .all(|h| h.get("command").and_then(Value::as_str).is_some_and(&ours))
            });
        if let (true, Some(e)) = (only_ours, entry.as_object_mut()) {
            js::set(e, "matcher", json!(DROID_MATCHER));
        }
    }
}

/// Cline: `$CLINE_DATA_DIR/settings/cline_mcp_settings.json` (`mcpServers.herdr_link`,
/// enabled; Cline's CLI auto-approves tools by default) and the guard as the executable hook
/// file `$CLINE_DIR/hooks/PreToolUse` (defaults `~/.cline/data`, `~/.cline`); with
/// `--project DIR` the hook file is `DIR/.clinerules/hooks/PreToolUse` (Cline has no project
/// MCP file: the server stays in the user's settings).
pub fn cline(o: &Options, cx: &Ctx) -> Result<Plan, String> {
    let mcp = cline_mcp_file(cx.places);
    let hook = match cx.project {
        Some(d) => cline_hook_file(&d.join(".clinerules")),
        None => cline_hook_file(&cx.places.cline),
    };
    let fields = [("disabled", json!(false))];
    let before = read_optional(&hook)?;
    if let Some(text) = &before {
        if !text.lines().any(|l| l == CLINE_HOOK_MARK) {
            return Err(format!(
                "{} is a PreToolUse hook of your own: Cline runs one hook file per event; \
                 add `{} guard --host cline --shim {}` to it yourself (its stdout answers \
                 Cline), or move it",
                hook.display(),
                cx.bin.display(),
                shim::dir(cx.places).display()
            ));
        }
    }
    let after = (!o.uninstall).then(|| {
        format!(
            "#!/bin/sh\n{CLINE_HOOK_MARK}\nexec {}\n",
            guard_command(cx.bin, Host::Cline.name(), &shim::dir(cx.places))
        )
    });
    let mut plan = Plan {
        changes: vec![
            server_change(mcp, &fields, Host::Cline.name(), o, cx)?,
            Change {
                path: hook,
                before,
                after,
                executable: true,
            },
        ],
        ..Plan::default()
    };
    if cx.project.is_some() && !o.uninstall {
        plan.notes.push(
            "Cline reads MCP servers only from its user settings: the herdr_link server was \
             registered there"
                .into(),
        );
    }
    startup_files(o, cx, Host::Cline.name(), &mut plan)?;
    Ok(plan)
}

/// Cline's MCP settings file.
fn cline_mcp_file(places: &Places) -> PathBuf {
    places
        .cline_data
        .join("settings")
        .join("cline_mcp_settings.json")
}

/// Cline's hook file for the guard's event in the hooks directory under `dir`.
fn cline_hook_file(dir: &Path) -> PathBuf {
    dir.join("hooks").join(hook_event(Host::Cline))
}

/// The Kimi Code permission rule that lets the server's tools run without a prompt in its
/// default (manual) permission mode: every name Kimi Code gives them (`mcp__herdr_link__*`).
fn kimi_allow_pattern() -> String {
    McpHost::Kimi
        .tool_name(MCP_SERVER_NAME, "*")
        .expect("Kimi Code names MCP tools")
}

/// Kimi Code: `$KIMI_CODE_HOME/mcp.json` (`mcpServers.herdr_link`; default `~/.kimi-code`) and,
/// in `$KIMI_CODE_HOME/config.toml`, the guard as a `[[hooks]]` entry (`event` "PreToolUse",
/// `matcher` "Bash") and an allow rule for the server's tools (`[[permission.rules]]`); with
/// `--project DIR` the server goes to `DIR/.kimi-code/mcp.json` (Kimi Code reads hooks and
/// permission rules only from its user config).
pub fn kimi(o: &Options, cx: &Ctx) -> Result<Plan, String> {
    let mcp = match cx.project {
        Some(d) => d.join(".kimi-code/mcp.json"),
        None => cx.places.kimi.join("mcp.json"),
    };
    let path = cx.places.kimi.join("config.toml");
    let before = read_optional(&path)?;
    let shown = path.display().to_string();
    let mut doc = codex_toml::parse(&shown, before.as_deref().unwrap_or(""))?;
    let command = guard_command(cx.bin, Host::Kimi.name(), &shim::dir(cx.places));
    kimi_config(&mut doc, (!o.uninstall).then_some(command.as_str()), &shown)?;
    let text = doc.to_string();
    let after = if before.as_deref().unwrap_or("") == text {
        before.clone()
    } else {
        Some(text)
    };
    let mut plan = Plan {
        changes: vec![
            server_change(mcp, &[], Host::Kimi.name(), o, cx)?,
            Change {
                path,
                before,
                after,
                executable: false,
            },
        ],
        ..Plan::default()
    };
    if cx.project.is_some() && !o.uninstall {
        plan.notes.push(
            "Kimi Code reads hooks and permission rules only from its user config.toml: the \
             guard hook and the rule for the herdr_link tools were written there"
                .into(),
        );
    }
    startup_files(o, cx, Host::Kimi.name(), &mut plan)?;
    Ok(plan)
}

/// Whether a `[[hooks]]` table is the guard setup writes.
fn is_kimi_guard(t: &Table) -> bool {
    t.get("command")
        .and_then(Item::as_str)
        .is_some_and(|c| js::is_guard_command(c, Host::Kimi.name()))
}

/// Whether a `[[permission.rules]]` table is the rule setup writes.
fn is_kimi_rule(t: &Table) -> bool {
    t.get("pattern").and_then(Item::as_str) == Some(kimi_allow_pattern().as_str())
        && t.get("decision").and_then(Item::as_str) == Some("allow")
}

/// The array of tables at `key` of `parent`, created when missing and `create`.
fn tables<'a>(
    parent: &'a mut Table,
    key: &str,
    create: bool,
    what: &str,
) -> Result<Option<&'a mut ArrayOfTables>, String> {
    if !parent.contains_key(key) {
        if !create {
            return Ok(None);
        }
        parent.insert(key, Item::ArrayOfTables(ArrayOfTables::new()));
    }
    parent
        .get_mut(key)
        .and_then(Item::as_array_of_tables_mut)
        .map(Some)
        .ok_or_else(|| format!("{what}: `{key}` is not an array of tables ([[{key}]])"))
}

/// Installs (`command`) or removes (`None`) the guard hook and the allow rule in a Kimi Code
/// `config.toml`, keeping everything else as it is.
fn kimi_config(doc: &mut DocumentMut, command: Option<&str>, what: &str) -> Result<(), String> {
    let root = doc.as_table_mut();
    // The guard hook.
    if let Some(hooks) = tables(root, "hooks", command.is_some(), what)? {
        let found = hooks.iter().position(is_kimi_guard);
        match command {
            Some(cmd) => match found {
                Some(i) => {
                    let t = hooks.get_mut(i).expect("found");
                    if t.get("command").and_then(Item::as_str) != Some(cmd) {
                        t.insert("command", toml_edit::value(cmd));
                    }
                }
                None => {
                    let mut t = Table::new();
                    t.insert("event", toml_edit::value(hook_event(Host::Kimi)));
                    t.insert("matcher", toml_edit::value(shell_tool(Host::Kimi)));
                    t.insert("command", toml_edit::value(cmd));
                    t.insert("timeout", toml_edit::value(30));
                    hooks.push(t);
                }
            },
            None => hooks.retain(|t| !is_kimi_guard(t)),
        }
        if hooks.is_empty() {
            root.remove("hooks");
        }
    }
    // The allow rule for the server's tools.
    if command.is_none() && !root.contains_key("permission") {
        return Ok(());
    }
    if !root.contains_key("permission") {
        let mut t = Table::new();
        t.set_implicit(true);
        root.insert("permission", Item::Table(t));
    }
    let permission = root
        .get_mut("permission")
        .and_then(Item::as_table_mut)
        .ok_or_else(|| format!("{what}: `permission` is not a TOML table"))?;
    if let Some(rules) = tables(permission, "rules", command.is_some(), what)? {
        if command.is_some() {
            if !rules.iter().any(is_kimi_rule) {
                let mut t = Table::new();
                t.insert("decision", toml_edit::value("allow"));
                t.insert("pattern", toml_edit::value(kimi_allow_pattern()));
                rules.push(t);
            }
        } else {
            rules.retain(|t| !is_kimi_rule(t));
        }
        if rules.is_empty() {
            permission.remove("rules");
        }
    }
    if permission.is_empty() {
        root.remove("permission");
    }
    Ok(())
}

/// A JSON file's value (`null` when missing or unreadable).
fn read_json(p: &Path) -> Value {
    std::fs::read_to_string(p)
        .ok()
        .and_then(|t| js::parse("", &t).ok())
        .unwrap_or(Value::Null)
}

/// Whether the JSON file `p` registers the server in `mcpServers`.
fn has_server(p: &Path) -> bool {
    read_json(p)["mcpServers"][MCP_SERVER_NAME].is_object()
}

/// What a host's config holds of setup's entries, for doctor: the file looked at, whether it
/// registers the server, and whether the guard is there.
fn reg(file: PathBuf, guard: bool) -> Registration {
    Registration {
        server: has_server(&file),
        file,
        guard,
    }
}

/// Copilot CLI's registrations, the project's then the user's.
pub(super) fn copilot_registrations(places: &Places, cwd: &Path) -> Vec<Registration> {
    let event = hook_event(Host::Copilot);
    let guard_in = |p: PathBuf| {
        read_json(&p)["hooks"][event]
            .as_array()
            .is_some_and(|l| l.iter().any(is_copilot_guard))
    };
    vec![
        reg(
            cwd.join(".github/mcp.json"),
            guard_in(cwd.join(".github/hooks/herdr-link.json")),
        ),
        reg(
            places.copilot.join("mcp-config.json"),
            guard_in(places.copilot.join("settings.json")),
        ),
    ]
}

/// Droid's registrations, the project's then the user's.
pub(super) fn droid_registrations(places: &Places, cwd: &Path) -> Vec<Registration> {
    [cwd.join(".factory"), places.factory.clone()]
        .into_iter()
        .map(|dir| {
            let guard = js::hook_commands(
                &read_json(&dir.join("settings.json")),
                hook_event(Host::Droid),
            )
            .iter()
            .any(|c| js::is_guard_command(c, Host::Droid.name()));
            reg(dir.join("mcp.json"), guard)
        })
        .collect()
}

/// Cline's registration (its user settings; the hook file of the project or the user's).
pub(super) fn cline_registrations(places: &Places, cwd: &Path) -> Vec<Registration> {
    let ours = |p: PathBuf| {
        std::fs::read_to_string(p).is_ok_and(|t| t.lines().any(|l| l == CLINE_HOOK_MARK))
    };
    let guard =
        ours(cline_hook_file(&cwd.join(".clinerules"))) || ours(cline_hook_file(&places.cline));
    vec![reg(cline_mcp_file(places), guard)]
}

/// Kimi Code's registrations, the project's then the user's (the guard is in the user's
/// config.toml).
pub(super) fn kimi_registrations(places: &Places, cwd: &Path) -> Vec<Registration> {
    let config = std::fs::read_to_string(places.kimi.join("config.toml"))
        .ok()
        .and_then(|t| t.parse::<DocumentMut>().ok());
    let guard = config.is_some_and(|d| {
        d.get("hooks")
            .and_then(Item::as_array_of_tables)
            .is_some_and(|a| a.iter().any(is_kimi_guard))
    });
    [
        cwd.join(".kimi-code/mcp.json"),
        places.kimi.join("mcp.json"),
    ]
    .into_iter()
    .map(|file| reg(file, guard))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kimi_config_keeps_the_users_file_and_comes_back_to_it() {
        let text = "# mine\ndefault_model = \"k2\"\n\n[[hooks]]\nevent = \"Stop\"\ncommand = \"notify\" # ping\n\n[permission]\n[[permission.rules]]\ndecision = \"deny\"\npattern = \"Bash(rm *)\"\n";
        let mut doc: DocumentMut = text.parse().unwrap();
        kimi_config(&mut doc, Some("/x/herdr-link guard --host kimi"), "f").unwrap();
        let once = doc.to_string();
        kimi_config(&mut doc, Some("/x/herdr-link guard --host kimi"), "f").unwrap();
        assert_eq!(doc.to_string(), once);
        let v: toml_edit::DocumentMut = once.parse().unwrap();
        let hooks = v["hooks"].as_array_of_tables().unwrap();
        assert_eq!(hooks.len(), 2);
        assert_eq!(hooks.get(1).unwrap()["matcher"].as_str(), Some("Bash"));
        let rules = v["permission"]["rules"].as_array_of_tables().unwrap();
        assert_eq!(rules.len(), 2);
        assert!(
            once.starts_with("# mine\n") && once.contains("# ping"),
            "{once}"
        );
        kimi_config(&mut doc, None, "f").unwrap();
        assert_eq!(doc.to_string(), text);
        let mut empty = DocumentMut::new();
        kimi_config(&mut empty, Some("herdr-link guard --host kimi"), "f").unwrap();
        kimi_config(&mut empty, None, "f").unwrap();
        assert_eq!(empty.to_string(), "");
        let mut bad: DocumentMut = "hooks = 1\n".parse().unwrap();
        assert!(kimi_config(&mut bad, Some("c"), "f").is_err());
    }

    #[test]
    fn copilot_hook_added_once_and_removed() {
        let mut v = json!({"hooks":{"preToolUse":[{"type":"command","bash":"lint","timeoutSec":5}]},"model":"x"});
        let before = v.clone();
        add_copilot_hook(&mut v, "/a/herdr-link guard --host copilot", "f").unwrap();
        add_copilot_hook(&mut v, "/b/herdr-link guard --host copilot", "f").unwrap();
        let list = v["hooks"]["preToolUse"].as_array().unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[1]["bash"], "/b/herdr-link guard --host copilot");
        remove_copilot_hook(&mut v);
        assert_eq!(v, before);
        let mut only = json!({});
        add_copilot_hook(&mut only, "herdr-link guard --host copilot", "f").unwrap();
        remove_copilot_hook(&mut only);
        assert_eq!(only, json!({}));
        assert!(add_copilot_hook(&mut json!({"hooks":{"preToolUse":{}}}), "c", "f").is_err());
    }
}
