//! JSON config edits that keep the user's entries, their order and the file's indentation.

use serde_json::{Map, Value};

use crate::host::Host;

/// Parses a JSON config file whose root must be an object; an empty file is `{}`.
pub fn parse(path: &str, text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        format!("{path} is not valid JSON ({e}); fix or move it, then run setup again")
    })?;
    if !value.is_object() {
        return Err(format!("{path}: the top level is not a JSON object"));
    }
    Ok(value)
}

/// Renders `value` with the indentation the original text used (two spaces by default) and a
/// trailing newline.
pub fn render(original: Option<&str>, value: &Value) -> String {
    let indent = original
        .and_then(detect_indent)
        .unwrap_or_else(|| "  ".into());
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    serde::Serialize::serialize(value, &mut ser).expect("a JSON value always serializes");
    let mut text = String::from_utf8(out).expect("serde_json writes UTF-8");
    text.push('\n');
    text
}

/// The leading whitespace of the first indented line.
fn detect_indent(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let ws: String = line
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        (!ws.is_empty() && ws.len() < line.len()).then_some(ws)
    })
}

/// The object under `key`, inserted (empty) when missing; an error names `what` when the key
/// holds something else.
pub fn object_at<'a>(
    parent: &'a mut Map<String, Value>,
    key: &str,
    what: &str,
) -> Result<&'a mut Map<String, Value>, String> {
    parent
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| format!("{what}: `{key}` is not a JSON object"))
}

/// Sets `key` to `value` unless it already holds exactly that (position kept when present).
pub fn set(map: &mut Map<String, Value>, key: &str, value: Value) {
    if map.get(key) != Some(&value) {
        map.insert(key.to_string(), value);
    }
}

/// Removes `key` from the object at `parent[outer]`, and `outer` itself when that left it empty.
pub fn remove_nested(parent: &mut Map<String, Value>, outer: &str, key: &str) {
    let Some(Value::Object(inner)) = parent.get_mut(outer) else {
        return;
    };
    if inner.shift_remove(key).is_some() && inner.is_empty() {
        parent.shift_remove(outer);
    }
}

/// Whether a hook command runs `herdr-link guard --host <host>` (any path to the binary), with
/// or without `--shim DIR` after it.
pub fn is_guard_command(command: &str, host: &str) -> bool {
    let marker = format!(" guard --host {host}");
    let Some((program, rest)) = command.rsplit_once(&marker) else {
        return false;
    };
    if !(rest.is_empty() || rest.starts_with(" --shim ")) {
        return false;
    }
    let program = program.trim().trim_matches('\'').trim_matches('"');
    std::path::Path::new(program)
        .file_name()
        .is_some_and(|n| n == "herdr-link")
}

/// The event and shell tool of `host`'s guard hook (a host with a Claude-Code-format hooks
/// document).
fn hook_of(host: Host) -> (&'static str, &'static str) {
    let input = &host.hook().expect("a host with a guard hook").input;
    (input.event, input.shell)
}

/// Installs the guard as a command hook on the host's event and shell tool in a Claude Code /
/// Codex hooks document (`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":
/// "command",...}]}]}}`). An existing herdr-link guard hook is updated in place (its path),
/// never duplicated.
pub fn add_guard_hook(
    root: &mut Value,
    command: &str,
    host: Host,
    what: &str,
) -> Result<(), String> {
    let (event, shell) = hook_of(host);
    add_event_hook(
        root,
        event,
        Some(shell),
        command,
        |c| is_guard_command(c, host.name()),
        what,
    )
}

/// Where the herdr-link guard hook for `host` is in its event's list: (matcher group, handler)
/// indexes and its command, as Codex numbers hooks for their trust records.
pub fn guard_hook_position(root: &Value, host: Host) -> Option<(usize, usize, String)> {
    let groups = root.get("hooks")?.get(hook_of(host).0)?.as_array()?;
    groups.iter().enumerate().find_map(|(g, entry)| {
        entry
            .get("hooks")?
            .as_array()?
            .iter()
            .enumerate()
            .find_map(|(h, hook)| {
                let c = hook.get("command")?.as_str()?;
                is_guard_command(c, host.name()).then(|| (g, h, c.to_string()))
            })
    })
}

/// Removes every herdr-link guard hook for `host`, and the containers that removal emptied.
pub fn remove_guard_hook(root: &mut Value, host: Host) {
    remove_event_hook(root, hook_of(host).0, |c| is_guard_command(c, host.name()));
}

/// Whether `command` is the `herdr-link shim-env` hook setup writes.
pub fn is_shim_env_command(command: &str) -> bool {
    let Some((program, _)) = command.split_once(" shim-env") else {
        return false;
    };
    let program = program.trim().trim_matches('\'').trim_matches('"');
    std::path::Path::new(program)
        .file_name()
        .is_some_and(|n| n == "herdr-link")
}

/// Installs `command` as a command hook of `event` (with `matcher`, if any); a hook for which
/// `ours` holds is updated in place, never duplicated.
pub fn add_event_hook(
    root: &mut Value,
    event: &str,
    matcher: Option<&str>,
    command: &str,
    ours: impl Fn(&str) -> bool,
    what: &str,
) -> Result<(), String> {
    let root = root.as_object_mut().expect("parse() returns objects");
    let hooks = object_at(root, "hooks", what)?;
    let pre = hooks
        .entry(event)
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or_else(|| format!("{what}: `hooks.{event}` is not a JSON array"))?;
    let mut found = false;
    for entry in pre.iter_mut() {
        let Some(list) = entry.get_mut("hooks").and_then(Value::as_array_mut) else {
            continue;
        };
        for hook in list.iter_mut() {
            let mine = hook
                .get("command")
                .and_then(Value::as_str)
                .is_some_and(&ours);
            if mine && !found {
                if let Some(h) = hook.as_object_mut() {
                    set(h, "type", Value::from("command"));
                    set(h, "command", Value::from(command));
                }
                found = true;
            }
        }
    }
    if !found {
        let mut entry = serde_json::Map::new();
        if let Some(m) = matcher {
            entry.insert("matcher".into(), Value::from(m));
        }
        entry.insert(
            "hooks".into(),
            serde_json::json!([{ "type": "command", "command": command }]),
        );
        pre.push(Value::Object(entry));
    }
    Ok(())
}

/// Removes every command hook of `event` for which `ours` holds, and the containers that
/// removal emptied.
pub fn remove_event_hook(root: &mut Value, event: &str, ours: impl Fn(&str) -> bool) {
    let Some(root) = root.as_object_mut() else {
        return;
    };
    let Some(Value::Object(hooks)) = root.get_mut("hooks") else {
        return;
    };
    let Some(Value::Array(pre)) = hooks.get_mut(event) else {
        return;
    };
    let mut removed = false;
    pre.retain_mut(|entry| {
        let Some(list) = entry.get_mut("hooks").and_then(Value::as_array_mut) else {
            return true;
        };
        let before = list.len();
        list.retain(|h| !h.get("command").and_then(Value::as_str).is_some_and(&ours));
        let emptied = before > 0 && list.is_empty();
        removed |= list.len() != before;
        !emptied
    });
    if removed && pre.is_empty() {
        hooks.shift_remove(event);
        if hooks.is_empty() {
            root.shift_remove("hooks");
        }
    }
}

/// Adds `rule` to `permissions.allow` in a Claude Code settings document, once (the list and
/// `permissions` are created when missing; the user's other rules stay, in order).
pub fn add_allow_rule(root: &mut Value, rule: &str, what: &str) -> Result<(), String> {
    let root = root.as_object_mut().expect("parse() returns objects");
    let permissions = object_at(root, "permissions", what)?;
    let allow = permissions
        .entry("allow")
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or_else(|| format!("{what}: `permissions.allow` is not a JSON array"))?;
    if !allow.iter().any(|r| r.as_str() == Some(rule)) {
        allow.push(Value::from(rule));
    }
    Ok(())
}

/// Removes `rule` from `permissions.allow`, and `allow` / `permissions` when that emptied them.
pub fn remove_allow_rule(root: &mut Value, rule: &str) {
    let Some(root) = root.as_object_mut() else {
        return;
    };
    let Some(Value::Object(permissions)) = root.get_mut("permissions") else {
        return;
    };
    let Some(Value::Array(allow)) = permissions.get_mut("allow") else {
        return;
    };
    let before = allow.len();
    allow.retain(|r| r.as_str() != Some(rule));
    if allow.len() != before && allow.is_empty() {
        permissions.shift_remove("allow");
        if permissions.is_empty() {
            root.shift_remove("permissions");
        }
    }
}

/// Whether a hooks document still holds any hook at all.
pub fn has_any_hook(root: &Value) -> bool {
    root.get("hooks")
        .and_then(Value::as_object)
        .is_some_and(|h| !h.is_empty())
}

/// Every `command` of the command hooks of `event` in a Claude-Code-format hooks document.
pub fn hook_commands(root: &Value, event: &str) -> Vec<String> {
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
    use serde_json::json;

    #[test]
    fn recognises_guard_commands() {
        assert!(is_guard_command(
            "/a b/herdr-link guard --host claude",
            "claude"
        ));
        assert!(is_guard_command(
            "'/a b/herdr-link' guard --host claude",
            "claude"
        ));
        assert!(is_guard_command("herdr-link guard --host codex", "codex"));
        assert!(is_guard_command(
            "'/a b/herdr-link' guard --host claude --shim '/h/x y/shim'",
            "claude"
        ));
        assert!(!is_guard_command(
            "herdr-link guard --host claude --other",
            "claude"
        ));
        assert!(!is_guard_command("herdr-link guard --host codex", "claude"));
        assert!(!is_guard_command("/x/other guard --host claude", "claude"));
    }

    #[test]
    fn hook_added_once_updated_in_place_and_removed() {
        let mut v = json!({"hooks":{"PreToolUse":[{"matcher":"Edit","hooks":[{"type":"command","command":"lint"}]}]},"model":"x"});
        add_guard_hook(
            &mut v,
            "/old/herdr-link guard --host claude",
            Host::Claude,
            "f",
        )
        .unwrap();
        add_guard_hook(
            &mut v,
            "/new/herdr-link guard --host claude",
            Host::Claude,
            "f",
        )
        .unwrap();
        let pre = v["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2);
        assert_eq!(pre[0]["matcher"], "Edit");
        assert_eq!(
            pre[1]["hooks"][0]["command"],
            "/new/herdr-link guard --host claude"
        );
        remove_guard_hook(&mut v, Host::Claude);
        assert_eq!(
            v,
            json!({"hooks":{"PreToolUse":[{"matcher":"Edit","hooks":[{"type":"command","command":"lint"}]}]},"model":"x"})
        );
        let mut only = json!({});
        add_guard_hook(&mut only, "herdr-link guard --host codex", Host::Codex, "f").unwrap();
        remove_guard_hook(&mut only, Host::Codex);
        assert_eq!(only, json!({}));
    }

    #[test]
    fn session_start_hook_added_once_and_removed() {
        let cmd = "/x/herdr-link shim-env --dir /d";
        let mut v = json!({"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"herdr-link guard --host claude"}]}]}});
        let before = v.clone();
        add_event_hook(&mut v, "SessionStart", None, cmd, is_shim_env_command, "f").unwrap();
        add_event_hook(&mut v, "SessionStart", None, cmd, is_shim_env_command, "f").unwrap();
        assert_eq!(
            v["hooks"]["SessionStart"],
            json!([{"hooks":[{"type":"command","command":cmd}]}])
        );
        remove_event_hook(&mut v, "SessionStart", is_shim_env_command);
        assert_eq!(v, before);
        assert!(is_shim_env_command("'/a b/herdr-link' shim-env --dir '/d'"));
        assert!(!is_shim_env_command("/x/other shim-env"));
    }

    #[test]
    fn allow_rule_added_once_and_removed() {
        let mut v = json!({"permissions":{"allow":["Bash(ls:*)"],"deny":["WebFetch"]},"model":"x"});
        let before = v.clone();
        add_allow_rule(&mut v, "mcp__herdr_link", "f").unwrap();
        add_allow_rule(&mut v, "mcp__herdr_link", "f").unwrap();
        assert_eq!(
            v["permissions"]["allow"],
            json!(["Bash(ls:*)", "mcp__herdr_link"])
        );
        remove_allow_rule(&mut v, "mcp__herdr_link");
        assert_eq!(v, before);
        let mut only = json!({});
        add_allow_rule(&mut only, "mcp__herdr_link", "f").unwrap();
        assert_eq!(only, json!({"permissions":{"allow":["mcp__herdr_link"]}}));
        remove_allow_rule(&mut only, "mcp__herdr_link");
        assert_eq!(only, json!({}));
        // A user's empty list is theirs: removing a rule that is not there changes nothing.
        let mut empty = json!({"permissions":{"allow":[]}});
        remove_allow_rule(&mut empty, "mcp__herdr_link");
        assert_eq!(empty, json!({"permissions":{"allow":[]}}));
        assert!(add_allow_rule(&mut json!({"permissions":{"allow":{}}}), "r", "f").is_err());
        assert!(add_allow_rule(&mut json!({"permissions":[]}), "r", "f").is_err());
    }

    #[test]
    fn wrong_shapes_are_errors() {
        let mut v = json!({"hooks": []});
        assert!(add_guard_hook(&mut v, "c", Host::Claude, "f").is_err());
        let mut v = json!({"hooks": {"PreToolUse": {}}});
        assert!(add_guard_hook(&mut v, "c", Host::Claude, "f").is_err());
        assert!(parse("f", "[1]").is_err());
        assert!(parse("f", "{").unwrap_err().contains("not valid JSON"));
        assert_eq!(parse("f", "  \n").unwrap(), json!({}));
    }

    #[test]
    fn keeps_indentation() {
        let text = "{\n    \"a\": 1\n}\n";
        let v = parse("f", text).unwrap();
        assert_eq!(render(Some(text), &v), text);
        let tabs = "{\n\t\"a\": [\n\t\t1\n\t]\n}\n";
        assert_eq!(render(Some(tabs), &parse("f", tabs).unwrap()), tabs);
    }
}
