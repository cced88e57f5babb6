//! Strict JSON: a body whose object repeats a key is refused (a parser
//! that keeps the last value would let two readers of one body disagree),
//! and no string value may hold a control character
//! ([`domain::text::has_control`]).

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use domain::error::FieldError;
use domain::text::{CONTROL_MESSAGE, has_control};

/// Parses `bytes` as JSON, refusing a repeated key in any object.
///
/// # Errors
/// The field error naming where the body is malformed: `body` with the
/// parser's description, or the path of the repeated key.
pub(crate) fn parse(bytes: &[u8]) -> Result<Value, FieldError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize::<_, Strict>(&mut de).map_err(|e| {
        let text = e.inner().to_string();
        match text.strip_prefix(DUPLICATE) {
            Some(key) => {
                let key = key.split(" at line ").next().unwrap_or(key);
                let parent = super::error_path(e.path());
                let field = if parent.is_empty() {
                    key.to_owned()
                } else {
                    format!("{parent}.{key}")
                };
                FieldError::new(field, "is sent more than once")
            }
            None => syntax(&text),
        }
    })?;
    de.end().map_err(|e| syntax(&e.to_string()))?;
    Ok(value.0)
}

fn syntax(text: &str) -> FieldError {
    FieldError::new("body", format!("is not valid JSON ({text})"))
}

/// Every string value holding a control character, named by its path
/// (`prefix` first: `members[3]` for a row).
pub(crate) fn control_fields(value: &Value, prefix: &str) -> Vec<FieldError> {
    let mut out = Vec::new();
    walk(value, &mut prefix.to_owned(), &mut out);
    out
}

/// `at` is the value's path, extended for each child and restored after
/// it: a path is written out only for a field in error.
fn walk(value: &Value, at: &mut String, out: &mut Vec<FieldError>) {
    match value {
        Value::String(s) if has_control(s) => {
            let field = if at.is_empty() {
                "body".to_owned()
            } else {
                at.clone()
            };
            out.push(FieldError::new(field, CONTROL_MESSAGE));
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = crate::casing::push_index(at, i);
                walk(item, at, out);
                at.truncate(len);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                let len = crate::casing::push_key(at, key);
                walk(item, at, out);
                at.truncate(len);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

/// The start of the error a repeated key raises.
const DUPLICATE: &str = "duplicate key: ";

/// A JSON value read with repeated keys refused.
struct Strict(Value);

impl<'de> de::Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        de::Deserialize::deserialize(d).map(|Strict(v)| v)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!("{DUPLICATE}{key}")));
            }
            let Strict(value) = map.next_value_seed(StrictSeed)?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

struct StrictSeed;

impl<'de> DeserializeSeed<'de> for StrictSeed {
    type Value = Strict;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Strict, D::Error> {
        de::Deserialize::deserialize(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(body: &str, expect: Result<&str, &str>) {
        let got = parse(body.as_bytes());
        match (got, expect) {
            (Ok(v), Ok(json)) => {
                let want: Value = serde_json::from_str(json).unwrap_or(Value::Null);
                assert_eq!(v, want, "{body}");
            }
            (Err(e), Err(field)) => assert_eq!(e.field, field, "{body}: {}", e.message),
            (got, _) => panic!("{body}: unexpected {got:?}"),
        }
    }

    #[test]
    fn repeated_keys_are_named_where_they_repeat() {
        check(
            r#"{"a":1,"b":[{"c":1}],"d":1.5}"#,
            Ok(r#"{"a":1,"b":[{"c":1}],"d":1.5}"#),
        );
        check(r#"{"a":1,"a":2}"#, Err("a"));
        check(r#"{"address":{"zip":"1","zip":"2"}}"#, Err("address.zip"));
        check(
            r#"{"members":[{},{"dob":"x","dob":"y"}]}"#,
            Err("members[1].dob"),
        );
        check(r#"{"a":1"#, Err("body"));
        check(r#"{"a":1} x"#, Err("body"));
        check(
            &format!("{}1{}", "[".repeat(200), "]".repeat(200)),
            Err("body"),
        );
    }

    #[test]
    fn control_characters_are_named_by_path() {
        let v: Value = serde_json::from_str(
            r#"{"company_name":"A\u0000","address":{"zip":"6060\n1"},"tags":["ok","\u0085"],"n":1}"#,
        )
        .unwrap_or(Value::Null);
        let fields: Vec<String> = control_fields(&v, "")
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(fields, ["address.zip", "company_name", "tags[1]"]);
        let row: Value = serde_json::from_str(r#"{"email":"a@b.c\u0007"}"#).unwrap_or(Value::Null);
        let fields: Vec<String> = control_fields(&row, "members[4]")
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(fields, ["members[4].email"]);
        assert!(
            control_fields(&Value::String("\u{0}".to_owned()), "")
                .iter()
                .all(|e| e.field == "body")
        );
    }
}
