//! Setup for GitHub Copilot CLI, Factory Droid, Cline and Kimi Code (docs/hosts-more.md): each
//! host's facts (its files, its server entry, its guard hook, its permission for Link's tools)
//! are in its own function. All four run shell commands in a shell that inherits the host's
//! own environment, so the herdr shim reaches them as it reaches Gemini CLI's and Qwen Code's:
//! through the startup files of the shell Herdr types the host's command into.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use toml_edit::{ArrayOfTables, DocumentMut, Item, Table};

use super::files::{read_optional, Change};
use super::hosts::{guard_command, json_change, Ctx, Plan, SERVER};
use super::{json as js, shim, Options, Places};

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
    let entry = js::object_at(servers, SERVER, what)?;
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
            js::remove_nested(root.as_object_mut().expect("object"), "mcpServers", SERVER);
            Ok(())
        } else {
            server_entry(root, fields, host, cx, what)
        }
    })
}

/// The shim block in the startup files of the shell Herdr starts the host from (its commands
/// inherit the PATH the host was started with), and the notes that go with it.
fn startup_files(o: &Options, cx: &Ctx, host: &str, plan: &mut Plan) -> Result<(), String> {
    let files = shim::interactive_startup_files(&cx.places.home, cx.places.shell.as_deref());
    for file in &files {
        plan.changes.push(shim::startup_file_change(
            file.clone(),
            cx.bin,
            &shim::dir(cx.places),
            host,
            o.uninstall,
        )?);
    }
    if files.is_empty() && !o.uninstall {
        plan.notes.push(format!(
            "{} is not a POSIX shell: put the herdr shim directory first on PATH inside Herdr \
             in its startup file yourself (the line below, in its syntax)",
            cx.places.shell.as_deref().unwrap_or("your shell")
        ));
    }
    Ok(())
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
    let command = guard_command(cx.bin, "copilot", &shim::dir(cx.places));
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
        changes: vec![server_change(mcp, &fields, "copilot", o, cx)?, hook],
        ..Plan::default()
    };
    startup_files(o, cx, "copilot", &mut plan)?;
    Ok(plan)
}

/// Whether a Copilot CLI hook entry is the guard setup writes.
fn is_copilot_guard(hook: &Value) -> bool {
    hook.get("bash")
        .and_then(Value::as_str)
        .is_some_and(|c| js::is_guard_command(c, "copilot"))
}

/// Adds (or updates in place) the guard in `hooks.preToolUse`.
fn add_copilot_hook(root: &mut Value, command: &str, what: &str) -> Result<(), String> {
    let map = root.as_object_mut().expect("parse() returns objects");
    let hooks = js::object_at(map, "hooks", what)?;
    let list = hooks
        .entry("preToolUse")
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
    let Some(Value::Array(list)) = hooks.get_mut("preToolUse") else {
        return;
    };
    let before = list.len();
    list.retain(|h| !is_copilot_guard(h));
    if list.len() != before && list.is_empty() {
        hooks.shift_remove("preToolUse");
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
    let command = guard_command(cx.bin, "droid", &shim::dir(cx.places));
    let ours = |c: &str| js::is_guard_command(c, "droid");
    let settings = json_change(dir.join("settings.json"), |root, what| {
        if o.uninstall {
            js::remove_event_hook(root, "PreToolUse", ours);
            Ok(())
        } else {
            js::add_event_hook(
                root,
                "PreToolUse",
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
            server_change(dir.join("mcp.json"), &fields, "droid", o, cx)?,
            settings,
        ],
        ..Plan::default()
    };
    startup_files(o, cx, "droid", &mut plan)?;
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
    let mcp = cx
        .places
        .cline_data
        .join("settings")
        .join("cline_mcp_settings.json");
    let hook = match cx.project {
        Some(d) => d.join(".clinerules/hooks/PreToolUse"),
        None => cx.places.cline.join("hooks/PreToolUse"),
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
            guard_command(cx.bin, "cline", &shim::dir(cx.places))
        )
    });
    let mut plan = Plan {
        changes: vec![
            server_change(mcp, &fields, "cline", o, cx)?,
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
    startup_files(o, cx, "cline", &mut plan)?;
    Ok(plan)
}

/// The Kimi Code permission rule that lets the server's tools run without a prompt in its
/// default (manual) permission mode.
const KIMI_ALLOW_PATTERN: &str = "mcp__herdr_link__*";

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
    let mut doc = super::codex_toml::parse(&shown, before.as_deref().unwrap_or(""))?;
    let command = guard_command(cx.bin, "kimi", &shim::dir(cx.places));
    kimi_config(&mut doc, (!o.uninstall).then_some(command.as_str()), &shown)?;
    let text = doc.to_string();
    let after = if before.as_deref().unwrap_or("") == text {
        before.clone()
    } else {
        Some(text)
    };
    let mut plan = Plan {
        changes: vec![
            server_change(mcp, &[], "kimi", o, cx)?,
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
    startup_files(o, cx, "kimi", &mut plan)?;
    Ok(plan)
}

/// Whether a `[[hooks]]` table is the guard setup writes.
fn is_kimi_guard(t: &Table) -> bool {
    t.get("command")
        .and_then(Item::as_str)
        .is_some_and(|c| js::is_guard_command(c, "kimi"))
}

/// Whether a `[[permission.rules]]` table is the rule setup writes.
fn is_kimi_rule(t: &Table) -> bool {
    t.get("pattern").and_then(Item::as_str) == Some(KIMI_ALLOW_PATTERN)
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
                    t.insert("event", toml_edit::value("PreToolUse"));
                    t.insert("matcher", toml_edit::value("Bash"));
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
                t.insert("pattern", toml_edit::value(KIMI_ALLOW_PATTERN));
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

/// The config locations of these hosts, from the environment: `$COPILOT_HOME` (default
/// `~/.copilot`), `~/.factory`, `$CLINE_DIR` (default `~/.cline`) with `$CLINE_DATA_DIR`
/// (default its `data/`), `$KIMI_CODE_HOME` (default `~/.kimi-code`).
pub fn places(home: &Path, var: impl Fn(&str) -> Option<PathBuf>) -> [PathBuf; 5] {
    let cline = var("CLINE_DIR").unwrap_or_else(|| home.join(".cline"));
    [
        var("COPILOT_HOME").unwrap_or_else(|| home.join(".copilot")),
        home.join(".factory"),
        var("CLINE_DATA_DIR").unwrap_or_else(|| cline.join("data")),
        cline,
        var("KIMI_CODE_HOME").unwrap_or_else(|| home.join(".kimi-code")),
    ]
}

/// What a host's config holds of setup's entries, for doctor: the files looked at (project's,
/// then the user's), each with whether it registers the server and whether it holds the guard.
pub fn registrations(
    host: super::Host,
    places: &Places,
    cwd: &Path,
) -> Option<Vec<super::Registration>> {
    let read = |p: &Path| {
        std::fs::read_to_string(p)
            .ok()
            .and_then(|t| js::parse("", &t).ok())
            .unwrap_or(Value::Null)
    };
    let server = |p: &Path| read(p)["mcpServers"][SERVER].is_object();
    let reg = |file: PathBuf, server: bool, guard: bool| super::Registration {
        file,
        server,
        guard,
    };
    let list = match host {
        super::Host::Copilot => {
            let user = places.copilot.join("mcp-config.json");
            let settings = read(&places.copilot.join("settings.json"));
            let project = cwd.join(".github/hooks/herdr-link.json");
            let guard_in = |v: &Value| {
                v["hooks"]["preToolUse"]
                    .as_array()
                    .is_some_and(|l| l.iter().any(is_copilot_guard))
            };
            vec![
                reg(
                    cwd.join(".github/mcp.json"),
                    server(&cwd.join(".github/mcp.json")),
                    guard_in(&read(&project)),
                ),
                reg(user.clone(), server(&user), guard_in(&settings)),
            ]
        }
        super::Host::Droid => [cwd.join(".factory"), places.factory.clone()]
            .into_iter()
            .map(|dir| {
                let guard = hook_commands(&read(&dir.join("settings.json")), "PreToolUse")
                    .iter()
                    .any(|c| js::is_guard_command(c, "droid"));
                reg(dir.join("mcp.json"), server(&dir.join("mcp.json")), guard)
            })
            .collect(),
        super::Host::Cline => {
            let mcp = places
                .cline_data
                .join("settings")
                .join("cline_mcp_settings.json");
            let ours = |p: PathBuf| {
                std::fs::read_to_string(p).is_ok_and(|t| t.lines().any(|l| l == CLINE_HOOK_MARK))
            };
            let guard = ours(cwd.join(".clinerules/hooks/PreToolUse"))
                || ours(places.cline.join("hooks/PreToolUse"));
            vec![reg(mcp.clone(), server(&mcp), guard)]
        }
        super::Host::Kimi => {
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
            .map(|file| {
                let s = server(&file);
                reg(file, s, guard)
            })
            .collect()
        }
        _ => return None,
    };
    Some(list)
}

/// Every `command` of the command hooks of `event` in a Claude-Code-format hooks document.
fn hook_commands(root: &Value, event: &str) -> Vec<String> {
    root["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["hooks"].as_array())
        .flatten()
        .filter_map(|h| h["command"].as_str().map(str::to_string))
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
