//! Parsing a host's JSON request text with bounded work and memory.
//!
//! The text is at most [`MAX_REQUEST_BYTES`] (checked before any parsing). Only the fields a
//! request can use are built as values, and together they may hold at most [`MAX_VALUES`] JSON
//! values; any other field is skipped without building its value (serde's `IgnoredAny`), and
//! where unknown fields matter (the tool input, whose unknown keys `start` rejects by name) its
//! name is kept with a `null` value. Nothing here does IO.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::limits::{MAX_REQUEST_BYTES, MAX_VALUES};

/// Which fields of an object are built, and what becomes of the others.
pub struct Shape {
    /// Fields built as (bounded) JSON values.
    pub values: &'static [&'static str],
    /// Fields that are objects of another shape.
    pub objects: &'static [(&'static str, &'static Shape)],
    /// Whether other fields are kept by name (value `null`, never built) or dropped.
    pub keep_other_names: bool,
}

/// Stands in for a field of an object shape whose value was not an object (nor `null`); the
/// value itself was not built. Callers treat any non-object value alike.
pub(crate) const NOT_AN_OBJECT: Value = Value::Bool(false);

/// Why a request text was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Longer than [`MAX_REQUEST_BYTES`].
    TooLarge(usize),
    /// Not JSON (the parser's short message).
    NotJson(String),
    /// JSON, but not an object.
    NotAnObject,
    /// The fields a request uses hold more than [`MAX_VALUES`] values.
    TooManyValues,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::TooLarge(n) => write!(
                f,
                "request is {n} bytes, more than the limit of {MAX_REQUEST_BYTES}"
            ),
            Refusal::NotJson(e) => write!(f, "request is not JSON: {e}"),
            Refusal::NotAnObject => f.write_str("request must be a JSON object"),
            Refusal::TooManyValues => write!(
                f,
                "request holds more than {MAX_VALUES} JSON values in the fields it uses"
            ),
        }
    }
}

/// Parses `text` as a JSON object of `shape`.
pub fn parse(text: &str, shape: &'static Shape) -> Result<Map<String, Value>, Refusal> {
    if text.len() > MAX_REQUEST_BYTES {
        return Err(Refusal::TooLarge(text.len()));
    }
    let budget = Budget::new(MAX_VALUES);
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = de::Deserializer::deserialize_any(
        &mut de,
        Object {
            shape,
            budget: &budget,
        },
    )
    .and_then(|v| de.end().map(|()| v));
    match parsed {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(Refusal::NotAnObject),
        Err(_) if budget.exceeded() => Err(Refusal::TooManyValues),
        Err(e) => Err(Refusal::NotJson(e.to_string())),
    }
}

/// Whether the JSON text holds more than `max` values (counted without building any; `false`
/// for text that is not JSON, which the caller's own parse reports). For paths that must build
/// the whole document (the MCP server's JSON-RPC lines), to refuse one that would be too large.
pub fn holds_more_values_than(text: &[u8], max: usize) -> bool {
    let budget = Budget::new(max);
    let mut de = serde_json::Deserializer::from_slice(text);
    let counted = de::Deserializer::deserialize_any(&mut de, Count(&budget));
    counted.is_err() && budget.exceeded()
}

/// Counts values against the budget, building nothing.
#[derive(Clone, Copy)]
struct Count<'b>(&'b Budget);

impl<'de> DeserializeSeed<'de> for Count<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Count<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.0.take()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.0.take()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.0.take()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.0.take()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.0.take()
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.0.take()
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.0.take()
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.0.take()?;
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.0.take()?;
        while map.next_key::<IgnoredAny>()?.is_some() {
            map.next_value_seed(self)?;
        }
        Ok(())
    }
}

/// How many more values may be built, and whether a value was refused for want of budget.
struct Budget(Cell<usize>, Cell<bool>);

impl Budget {
    fn new(n: usize) -> Budget {
        Budget(Cell::new(n), Cell::new(false))
    }

    fn exceeded(&self) -> bool {
        self.1.get()
    }

    fn take<E: de::Error>(&self) -> Result<(), E> {
        match self.0.get() {
            0 => {
                self.1.set(true);
                Err(E::custom("too many values"))
            }
            n => {
                self.0.set(n - 1);
                Ok(())
            }
        }
    }
}

/// Builds any JSON value, counting every node against the budget.
#[derive(Clone, Copy)]
struct Bounded<'b>(&'b Budget);

impl<'de> DeserializeSeed<'de> for Bounded<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Bounded<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        self.0.take()?;
        Ok(Value::Bool(b))
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Value, E> {
        self.0.take()?;
        Ok(Value::Number(n.into()))
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Value, E> {
        self.0.take()?;
        Ok(Value::Number(n.into()))
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Value, E> {
        self.0.take()?;
        Ok(Number::from_f64(n).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        self.0.take()?;
        Ok(Value::String(s.to_string()))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        self.0.take()?;
        Ok(Value::String(s))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.0.take()?;
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.0.take()?;
        let mut items = Vec::new();
        while let Some(v) = seq.next_element_seed(self)? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.0.take()?;
        let mut m = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            let v = map.next_value_seed(self)?;
            m.insert(k, v);
        }
        Ok(Value::Object(m))
    }
}

/// Builds an object of a [`Shape`]; `null` stays `null` and any other value becomes
/// [`NOT_AN_OBJECT`] without being built.
struct Object<'b> {
    shape: &'static Shape,
    budget: &'b Budget,
}

impl<'de> DeserializeSeed<'de> for Object<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Object<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.budget.take()?;
        let mut m = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            if self.shape.values.contains(&k.as_str()) {
                let v = map.next_value_seed(Bounded(self.budget))?;
                m.insert(k, v);
            } else if let Some((_, inner)) = self.shape.objects.iter().find(|(n, _)| *n == k) {
                let v = map.next_value_seed(Object {
                    shape: inner,
                    budget: self.budget,
                })?;
                m.insert(k, v);
            } else {
                map.next_value::<IgnoredAny>()?;
                if self.shape.keep_other_names {
                    self.budget.take()?;
                    m.insert(k, Value::Null);
                }
            }
        }
        Ok(Value::Object(m))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(NOT_AN_OBJECT)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Value, E> {
        Ok(NOT_AN_OBJECT)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Value, E> {
        Ok(NOT_AN_OBJECT)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Value, E> {
        Ok(NOT_AN_OBJECT)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Value, E> {
        Ok(NOT_AN_OBJECT)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Value, E> {
        Ok(NOT_AN_OBJECT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    static INNER: Shape = Shape {
        values: &["a"],
        objects: &[],
        keep_other_names: true,
    };
    static TOP: Shape = Shape {
        values: &["s"],
        objects: &[("o", &INNER)],
        keep_other_names: false,
    };

    #[test]
    fn builds_known_fields_and_skips_the_rest() {
        let m = parse(
            r#"{"s":"x","junk":[1,2,{"q":3}],"o":{"a":[1,2],"b":{"deep":[1]}}}"#,
            &TOP,
        )
        .unwrap();
        assert_eq!(
            Value::Object(m),
            json!({"s": "x", "o": {"a": [1, 2], "b": null}})
        );
        let m = parse(r#"{"o":null}"#, &TOP).unwrap();
        assert_eq!(m["o"], Value::Null);
        for other in ["[1,[2]]", "1", "\"x\"", "true", "1.5"] {
            let m = parse(&format!(r#"{{"o":{other}}}"#), &TOP).unwrap();
            assert_eq!(m["o"], NOT_AN_OBJECT, "{other}");
        }
    }

    #[test]
    fn refusals() {
        assert_eq!(parse("[1]", &TOP), Err(Refusal::NotAnObject));
        assert_eq!(parse("7", &TOP), Err(Refusal::NotAnObject));
        assert!(matches!(parse("{", &TOP), Err(Refusal::NotJson(_))));
        assert!(matches!(parse("{} x", &TOP), Err(Refusal::NotJson(_))));
        let big = format!(r#"{{"s":"{}"}}"#, "x".repeat(MAX_REQUEST_BYTES));
        assert_eq!(parse(&big, &TOP), Err(Refusal::TooLarge(big.len())));
        let many = format!(r#"{{"s":[{}0]}}"#, "0,".repeat(MAX_VALUES));
        assert_eq!(parse(&many, &TOP), Err(Refusal::TooManyValues));
        // The same values in a skipped field cost nothing.
        let skipped = format!(r#"{{"junk":[{}0]}}"#, "0,".repeat(MAX_VALUES));
        assert!(parse(&skipped, &TOP).is_ok());
        assert!(holds_more_values_than(many.as_bytes(), MAX_VALUES));
        assert!(!holds_more_values_than(skipped.as_bytes(), MAX_VALUES + 3));
        assert!(!holds_more_values_than(b"{not json", 1));
        // Deep nesting: skipped without recursion, and capped by the parser where it is built.
        let deep = |k: &str| {
            format!(
                r#"{{"{k}":{}{}}}"#,
                "[".repeat(100_000),
                "]".repeat(100_000)
            )
        };
        assert!(parse(&deep("junk"), &TOP).is_ok());
        assert!(matches!(parse(&deep("s"), &TOP), Err(Refusal::NotJson(_))));
    }
}
