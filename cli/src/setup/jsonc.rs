//! OpenCode's config as OpenCode reads it: JSONC (comments, trailing commas), edited in place
//! through a concrete syntax tree (`jsonc-parser`), so the user's comments, order, indentation
//! and commas stay as they were and only herdr-link's own entries change.
//!
//! Which file: OpenCode reads both `opencode.json` and `opencode.jsonc` of a config directory
//! (the global `$XDG_CONFIG_HOME/opencode/` and a project's root alike) and merges them, the
//! `.jsonc` last, so it wins. Setup therefore writes to `opencode.jsonc` when it exists, else to
//! `opencode.json` (created when neither exists), and takes its entry out of the other file.

use std::path::{Path, PathBuf};

use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use jsonc_parser::ParseOptions;
use serde_json::Value;

/// The config file OpenCode lets win in `dir`, and the other one when it exists too.
pub fn config_files(dir: &Path) -> (PathBuf, Option<PathBuf>) {
    let json = dir.join("opencode.json");
    let jsonc = dir.join("opencode.jsonc");
    if jsonc.exists() {
        let other = json.exists().then_some(json);
        (jsonc, other)
    } else {
        (json, None)
    }
}

/// A parsed JSONC document whose root is an object.
pub struct Doc {
    root: CstRootNode,
    what: String,
}

impl Doc {
    /// Parses `text` (empty: `{}`); `what` names the file in errors.
    pub fn parse(what: &str, text: &str) -> Result<Doc, String> {
        let source = if text.trim().is_empty() { "{}\n" } else { text };
        let root = CstRootNode::parse(source, &ParseOptions::default()).map_err(|e| {
            format!("{what} is not valid JSONC ({e}); fix or move it, then run setup again")
        })?;
        if root.value().is_some_and(|v| v.as_object().is_none()) {
            return Err(format!("{what}: the top level is not a JSON object"));
        }
        Ok(Doc {
            root,
            what: what.to_string(),
        })
    }

    /// The text, with every untouched byte as it was.
    pub fn text(&self) -> String {
        self.root.to_string()
    }

    /// The whole document as plain JSON.
    #[cfg(test)]
    pub fn value(&self) -> Value {
        self.root.to_serde_value().unwrap_or(Value::Null)
    }

    /// The root object.
    fn top(&self) -> CstObject {
        self.root.object_value_or_set()
    }

    /// The object at `path` (each key under the previous), created where missing; an error
    /// names the first key that holds something else.
    pub fn object_at(&self, path: &[&str]) -> Result<CstObject, String> {
        let mut obj = self.top();
        for (i, key) in path.iter().enumerate() {
            obj = obj.object_value_or_create(key).ok_or_else(|| {
                format!(
                    "{}: `{}` is not a JSON object",
                    self.what,
                    path[..=i].join(".")
                )
            })?;
        }
        Ok(obj)
    }

    /// Sets `key` of `obj` to `value` unless it already holds exactly that (position kept when
    /// present, appended when not).
    pub fn set(obj: &CstObject, key: &str, value: &Value) {
        match obj.get(key) {
            Some(prop) if prop.value().and_then(|v| v.to_serde_value()).as_ref() == Some(value) => {
            }
            Some(prop) => prop.set_value(input(value)),
            None => {
                obj.append(key, input(value));
            }
        }
    }

    /// Removes `key` from the object at `outer` (a key of the root), and `outer` itself when
    /// that left it empty. Nothing else changes; a missing or non-object `outer` is left alone.
    pub fn remove_nested(&self, outer: &str, key: &str) {
        let top = self.top();
        let Some(inner) = top.object_value(outer) else {
            return;
        };
        let Some(prop) = inner.get(key) else {
            return;
        };
        prop.remove();
        if inner.properties().is_empty() {
            if let Some(p) = top.get(outer) {
                p.remove();
            }
        }
    }
}

/// A JSON value as the CST takes it.
fn input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(input).collect()),
        Value::Object(o) => {
            CstInputValue::Object(o.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const COMMENTED: &str = r#"// my settings
{
  /* the theme */
  "theme": "opencode", // trailing comment
  "mcp": {
    "other": { "type": "local", "command": ["x"], },
  },
}
"#;

    fn install(text: &str) -> String {
        let doc = Doc::parse("opencode.jsonc", text).unwrap();
        let entry = doc.object_at(&["mcp", "herdr_link"]).unwrap();
        Doc::set(&entry, "type", &json!("local"));
        Doc::set(&entry, "command", &json!(["/bin/herdr-link", "mcp"]));
        doc.text()
    }

    #[test]
    fn comments_and_trailing_commas_survive_and_a_second_run_changes_nothing() {
        let once = install(COMMENTED);
        for kept in [
            "// my settings",
            "/* the theme */",
            "// trailing comment",
            r#""other": { "type": "local", "command": ["x"], },"#,
        ] {
            assert!(once.contains(kept), "{kept:?} lost:\n{once}");
        }
        let value = Doc::parse("f", &once).unwrap().value();
        assert_eq!(
            value["mcp"]["herdr_link"],
            json!({"type": "local", "command": ["/bin/herdr-link", "mcp"]})
        );
        assert_eq!(value["theme"], "opencode");
        assert_eq!(install(&once), once, "second run");
    }

    #[test]
    fn a_changed_value_is_replaced_in_place() {
        let once = install(COMMENTED);
        let moved = once.replace("/bin/herdr-link", "/old/herdr-link");
        assert_eq!(install(&moved), once);
    }

    #[test]
    fn removal_leaves_the_rest_as_it_was() {
        let once = install(COMMENTED);
        let doc = Doc::parse("f", &once).unwrap();
        doc.remove_nested("mcp", "herdr_link");
        let value = Doc::parse("f", &doc.text()).unwrap().value();
        assert!(value["mcp"].get("herdr_link").is_none());
        assert!(value["mcp"].get("other").is_some());
        assert!(doc.text().contains("// my settings"));
        // Removing the only server removes `mcp` as well.
        let only = install("{}");
        let doc = Doc::parse("f", &only).unwrap();
        doc.remove_nested("mcp", "herdr_link");
        let value = Doc::parse("f", &doc.text()).unwrap().value();
        assert_eq!(value, json!({}));
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        let e = Doc::parse("f.jsonc", "{ \"a\": ").err().unwrap();
        assert!(e.starts_with("f.jsonc is not valid JSONC"), "{e}");
        let e = Doc::parse("f.jsonc", "[1, 2]").err().unwrap();
        assert!(e.contains("top level is not a JSON object"), "{e}");
        let doc = Doc::parse("f.jsonc", r#"{"mcp": [1]}"#).unwrap();
        let e = doc.object_at(&["mcp", "herdr_link"]).err().unwrap();
        assert!(e.contains("`mcp` is not a JSON object"), "{e}");
    }

    #[test]
    fn the_jsonc_file_wins_when_both_exist() {
        let dir = std::env::temp_dir().join(format!("herdr-link-jsonc-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(config_files(&dir), (dir.join("opencode.json"), None));
        std::fs::write(dir.join("opencode.json"), "{}").unwrap();
        assert_eq!(config_files(&dir), (dir.join("opencode.json"), None));
        std::fs::write(dir.join("opencode.jsonc"), "{}").unwrap();
        assert_eq!(
            config_files(&dir),
            (dir.join("opencode.jsonc"), Some(dir.join("opencode.json")))
        );
        std::fs::remove_file(dir.join("opencode.json")).unwrap();
        assert_eq!(config_files(&dir), (dir.join("opencode.jsonc"), None));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
