//! Compact JSON output with object keys sorted at every level, independent of
//! whether serde_json's `preserve_order` feature is enabled by feature unification.

use serde_json::Value;

/// Serialize `v` as one compact line with sorted keys (no trailing newline).
pub fn to_sorted(v: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, v);
    out
}

/// Serialize `v` with sorted keys and append `\n`.
pub fn line(v: &Value) -> Vec<u8> {
    let mut s = to_sorted(v);
    s.push('\n');
    s.into_bytes()
}

fn write_str(out: &mut String, s: &str) {
    // serde_json's string escaping never fails for a &str.
    match serde_json::to_string(s) {
        Ok(q) => out.push_str(&q),
        Err(_) => out.push_str("\"\""),
    }
}

fn write_value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(out, k);
                out.push(':');
                if let Some(val) = map.get(*k) {
                    write_value(out, val);
                }
            }
            out.push('}');
        }
    }
}
