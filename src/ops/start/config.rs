//! The start configuration file `<context dir>/.agents/agent_config.json`: read fresh on every
//! configured start and validated whole against a strict schema. Failures name the entry and
//! field (or the line and column of a JSON syntax error) in the internal detail only.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::LinkError;

/// Where a configured entry puts its new agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// A new focus-free tab; the label is presentation only.
    NewTab {
        /// Optional tab label.
        label: Option<String>,
    },
    /// A sibling pane split from the `with` anchor.
    With,
}

/// One way to launch the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    /// Herdr agent kind, passed verbatim.
    pub kind: String,
    /// Agent arguments (after `--`).
    pub args: Vec<String>,
}

/// A validated `agents.<name>` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Placement mode.
    pub placement: Placement,
    /// At least one variant; more than one means round-robin.
    pub variants: Vec<Variant>,
}

/// The config file for a context directory.
pub fn config_path(context_dir: &Path) -> PathBuf {
    context_dir.join(".agents").join("agent_config.json")
}

/// Reads and validates the whole file, then returns the entry `key`.
pub fn load_entry(path: &Path, key: &str) -> Result<Entry, LinkError> {
    let text = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(LinkError::StartConfigNotFound(format!(
                "{} does not exist",
                path.display()
            )))
        }
        Err(e) => {
            return Err(LinkError::StartConfigInvalid(format!(
                "{}: cannot read: {e}",
                path.display()
            )))
        }
    };
    let mut entries = parse(&text)
        .map_err(|e| LinkError::StartConfigInvalid(format!("{}: {e}", path.display())))?;
    let index = entries.iter().position(|(k, _)| k == key).ok_or_else(|| {
        LinkError::StartAgentNotFound(format!("{}: no entry agents.{key:?}", path.display()))
    })?;
    Ok(entries.swap_remove(index).1)
}

/// Parses and validates a whole config document; the error text says where it is wrong.
pub fn parse(bytes: &[u8]) -> Result<Vec<(String, Entry)>, String> {
    let root: Value = serde_json::from_slice(bytes).map_err(|e| {
        format!(
            "invalid JSON at line {} column {}: {e}",
            e.line(),
            e.column()
        )
    })?;
    let root = root.as_object().ok_or("the root must be an object")?;
    only_keys(root, &["agents"], "the root")?;
    let agents = root
        .get("agents")
        .and_then(Value::as_object)
        .ok_or("`agents` must be an object")?;
    agents
        .iter()
        .map(|(key, entry)| Ok((key.clone(), parse_entry(key, entry)?)))
        .collect()
}

fn only_keys(obj: &Map<String, Value>, allowed: &[&str], what: &str) -> Result<(), String> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!("{what} has an unknown field {k:?}")),
        None => Ok(()),
    }
}

fn non_blank(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str).filter(|s| !s.trim().is_empty())
}

fn parse_entry(key: &str, entry: &Value) -> Result<Entry, String> {
    if key.trim().is_empty() {
        return Err("an entry of `agents` has a blank name".into());
    }
    let at = format!("agents.{key}");
    let entry = entry
        .as_object()
        .ok_or_else(|| format!("{at} must be an object"))?;
    only_keys(entry, &["placement", "strategy", "variants"], &at)?;
    let placement = parse_placement(&at, entry.get("placement"))?;
    let variants = entry
        .get("variants")
        .and_then(Value::as_array)
        .filter(|v| !v.is_empty())
        .ok_or_else(|| format!("{at}.variants must be a non-empty array"))?;
    match entry.get("strategy") {
        None => {}
        Some(Value::String(s)) if s == "round-robin" => {}
        Some(_) => return Err(format!("{at}.strategy must be \"round-robin\"")),
    }
    if variants.len() > 1 && entry.get("strategy").is_none() {
        return Err(format!(
            "{at} has {} variants and needs \"strategy\": \"round-robin\"",
            variants.len()
        ));
    }
    let variants = variants
        .iter()
        .enumerate()
        .map(|(i, v)| parse_variant(&format!("{at}.variants[{i}]"), v))
        .collect::<Result<_, _>>()?;
    Ok(Entry {
        placement,
        variants,
    })
}

fn parse_placement(at: &str, placement: Option<&Value>) -> Result<Placement, String> {
    let at = format!("{at}.placement");
    let p = placement
        .and_then(Value::as_object)
        .ok_or_else(|| format!("{at} is required and must be an object"))?;
    match p.get("mode").and_then(Value::as_str) {
        Some("new_tab") => {
            only_keys(p, &["mode", "label"], &at)?;
            let label = match p.get("label") {
                None => None,
                Some(v) => Some(
                    non_blank(Some(v))
                        .ok_or_else(|| format!("{at}.label must be a non-blank string"))?
                        .to_string(),
                ),
            };
            Ok(Placement::NewTab { label })
        }
        Some("with") => {
            only_keys(p, &["mode"], &at)?;
            Ok(Placement::With)
        }
        Some(other) => Err(format!(
            "{at}.mode {other:?} is not supported (new_tab or with)"
        )),
        None => Err(format!("{at}.mode is required (new_tab or with)")),
    }
}

fn parse_variant(at: &str, v: &Value) -> Result<Variant, String> {
    let v = v
        .as_object()
        .ok_or_else(|| format!("{at} must be an object"))?;
    only_keys(v, &["kind", "args"], at)?;
    let kind = non_blank(v.get("kind"))
        .ok_or_else(|| format!("{at}.kind must be a non-blank string"))?
        .to_string();
    let args = match v.get("args") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|a| a.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(|| format!("{at}.args must contain only strings"))?,
        Some(_) => return Err(format!("{at}.args must be an array of strings")),
    };
    if let Some(why) = args_too_large(&args) {
        return Err(format!("{at}.args: {why}"));
    }
    Ok(Variant { kind, args })
}

/// Why `args` break the documented size limit (too many entries, or too many characters
/// together), if they do: such an argv could not be handed to Herdr.
pub fn args_too_large(args: &[String]) -> Option<String> {
    use crate::limits::{MAX_START_ARGS, MAX_START_ARGS_CHARS};
    if args.len() > MAX_START_ARGS {
        return Some(format!(
            "{} entries, more than the limit of {MAX_START_ARGS}",
            args.len()
        ));
    }
    let chars: usize = args.iter().map(|a| a.chars().count()).sum();
    (chars > MAX_START_ARGS_CHARS).then(|| {
        format!("{chars} characters together, more than the limit of {MAX_START_ARGS_CHARS}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(doc: &str) -> String {
        parse(doc.as_bytes()).unwrap_err()
    }

    #[test]
    fn accepts_the_three_shapes() {
        let doc = r#"{"agents":{
            "a":{"placement":{"mode":"new_tab","label":"x"},"variants":[{"kind":"pi","args":["--m","1"]}]},
            "b":{"placement":{"mode":"new_tab"},"strategy":"round-robin","variants":[{"kind":"pi"},{"kind":"codex","args":[]}]},
            "c":{"placement":{"mode":"with"},"variants":[{"kind":"pi"}]}}}"#;
        let entries = parse(doc.as_bytes()).unwrap();
        assert_eq!(entries.len(), 3);
        assert_eq!(
            entries[0].1.placement,
            Placement::NewTab {
                label: Some("x".into())
            }
        );
        assert_eq!(entries[1].1.variants[1].kind, "codex");
        assert_eq!(entries[2].1.placement, Placement::With);
    }

    #[test]
    fn rejections_name_the_place() {
        assert!(err("{").contains("line 1 column"));
        assert!(err("[]").contains("root"));
        assert!(err(r#"{"version":1,"agents":{}}"#).contains("\"version\""));
        assert!(err(r#"{"agents":[]}"#).contains("agents"));
        assert!(err(r#"{"agents":{" ":{}}}"#).contains("blank"));
        assert!(
            err(r#"{"agents":{"a":{"variants":[{"kind":"pi"}]}}}"#).contains("agents.a.placement")
        );
        assert!(err(
            r#"{"agents":{"a":{"placement":{"mode":"stacked"},"variants":[{"kind":"pi"}]}}}"#
        )
        .contains("stacked"));
        assert!(err(r#"{"agents":{"a":{"placement":{"mode":"with","label":"x"},"variants":[{"kind":"pi"}]}}}"#).contains("label"));
        assert!(err(r#"{"agents":{"a":{"placement":{"mode":"new_tab","label":" "},"variants":[{"kind":"pi"}]}}}"#).contains("label"));
        assert!(
            err(r#"{"agents":{"a":{"placement":{"mode":"new_tab"},"variants":[]}}}"#)
                .contains("non-empty")
        );
        assert!(err(r#"{"agents":{"a":{"placement":{"mode":"new_tab"},"variants":[{"kind":"pi"},{"kind":"x"}]}}}"#).contains("round-robin"));
        assert!(err(r#"{"agents":{"a":{"placement":{"mode":"new_tab"},"strategy":"random","variants":[{"kind":"pi"}]}}}"#).contains("strategy"));
        assert!(err(
            r#"{"agents":{"a":{"placement":{"mode":"new_tab"},"variants":[{"kind":" "}]}}}"#
        )
        .contains("variants[0].kind"));
        assert!(err(r#"{"agents":{"a":{"placement":{"mode":"new_tab"},"variants":[{"kind":"pi","args":[1]}]}}}"#).contains("args"));
        let big = serde_json::json!({"agents":{"a":{"placement":{"mode":"new_tab"},
            "variants":[{"kind":"pi","args":["x".repeat(crate::limits::MAX_START_ARGS_CHARS + 1)]}]}}});
        assert!(err(&big.to_string()).contains("limit of 16384"));
        assert!(err(r#"{"agents":{"a":{"placement":{"mode":"new_tab"},"variants":[{"kind":"pi","model":"x"}]}}}"#).contains("\"model\""));
        assert!(err(r#"{"agents":{"a":{"placement":{"mode":"new_tab"},"extra":1,"variants":[{"kind":"pi"}]}}}"#).contains("\"extra\""));
    }
}
