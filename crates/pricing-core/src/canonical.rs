//! Canonical JSON: object keys sorted (by their UTF-8 bytes) at every
//! level, no whitespace, strings and numbers as `serde_json` writes them.
//!
//! The one writer behind the anonymous household keys (pricing model
//! section 5) and the request digests of the HTTP adapter (idempotency
//! records and price-on-plan repeats). Those digests are stored, so this
//! text is a contract: the tests pin it byte for byte.

use serde_json::Value;

/// The canonical text of `value`.
///
/// ```
/// let v = serde_json::json!({"b": [1, {"d": null, "c": "x"}], "a": 1.50});
/// assert_eq!(pricing_core::canonical::to_string(&v), r#"{"a":1.5,"b":[1,{"c":"x","d":null}]}"#);
/// ```
#[must_use]
pub fn to_string(value: &Value) -> String {
    let mut out = String::new();
    write(value, &mut out);
    out
}

fn write(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::from(k.as_str()).to_string());
                out.push(':');
                write(v, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_are_sorted_at_every_level_with_no_whitespace() {
        for (value, text) in [
            (json!({}), "{}"),
            (json!([]), "[]"),
            (json!(null), "null"),
            (
                json!({"b": 1, "a": {"z": [], "y": [3, 2]}}),
                r#"{"a":{"y":[3,2],"z":[]},"b":1}"#,
            ),
            // Bytewise order: uppercase before underscore before lowercase.
            (
                json!({"a": 1, "_": 2, "B": 3, "é": 4}),
                r#"{"B":3,"_":2,"a":1,"é":4}"#,
            ),
            (
                json!({"s": "q\"b\\n\n\u{1}é\u{1f600}", "n": -3, "f": 1.50, "big": 12_345_678_901_234_567_890_u64, "t": true}),
                r#"{"big":12345678901234567890,"f":1.5,"n":-3,"s":"q\"b\\n\n\u0001é😀","t":true}"#,
            ),
        ] {
            assert_eq!(to_string(&value), text);
        }
    }
}
