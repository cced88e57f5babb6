//! The request bodies of the served OpenAPI document, flattened into their
//! leaves: every string field and every integer field, with its path, so
//! the hostile table covers each field the API takes, including fields
//! added after the table was written.

use serde_json::Value;

/// One step of a field's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    /// An object member.
    Key(String),
    /// An array item.
    Item,
}

/// What a leaf holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LeafType {
    /// A string.
    Text,
    /// An integer, with the document's bounds.
    Integer {
        /// `maximum`, when stated.
        maximum: Option<i64>,
        /// `minimum`, when stated.
        minimum: Option<i64>,
    },
}

/// One field of a request body.
#[derive(Debug, Clone)]
pub(crate) struct Leaf {
    /// Its path from the body's root.
    pub path: Vec<Seg>,
    /// Its type.
    pub ty: LeafType,
}

impl Leaf {
    /// The last key of the path.
    pub(crate) fn name(&self) -> &str {
        self.path
            .iter()
            .rev()
            .find_map(|s| match s {
                Seg::Key(k) => Some(k.as_str()),
                Seg::Item => None,
            })
            .unwrap_or_default()
    }

    /// The field as the API names it (`members[1].first_name`), with
    /// the outermost array item at `index` and nested ones at 0.
    pub(crate) fn field(&self, index: usize) -> String {
        let mut out = String::new();
        let mut index = index;
        for seg in &self.path {
            match seg {
                Seg::Key(k) if out.is_empty() => out.push_str(k),
                Seg::Key(k) => {
                    out.push('.');
                    out.push_str(k);
                }
                Seg::Item => {
                    out.push_str(&format!("[{index}]"));
                    index = 0;
                }
            }
        }
        out
    }
}

/// An operation that takes a JSON body.
#[derive(Debug, Clone)]
pub(crate) struct Operation {
    /// `POST`, `PUT` or `PATCH`.
    pub method: String,
    /// The path template, e.g. `/v1/groups/{group_id}/census`.
    pub path: String,
    /// The body's leaves.
    pub leaves: Vec<Leaf>,
}

/// Every operation of `doc` with an `application/json` request body.
pub(crate) fn operations(doc: &Value) -> Vec<Operation> {
    let mut ops = Vec::new();
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else {
        return ops;
    };
    for (path, item) in paths {
        let Some(item) = item.as_object() else {
            continue;
        };
        for (method, op) in item {
            let Some(schema) = op.pointer("/requestBody/content/application~1json/schema") else {
                continue;
            };
            let mut leaves = Vec::new();
            walk(doc, schema, &mut Vec::new(), &mut leaves, 0);
            ops.push(Operation {
                method: method.to_ascii_uppercase(),
                path: path.clone(),
                leaves,
            });
        }
    }
    ops
}

/// How deep the walk follows nested schemas.
const MAX_DEPTH: usize = 12;

fn walk(doc: &Value, schema: &Value, prefix: &mut Vec<Seg>, out: &mut Vec<Leaf>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let schema = resolve(doc, schema);
    for combinator in ["allOf", "oneOf", "anyOf"] {
        if let Some(alternatives) = schema.get(combinator).and_then(Value::as_array) {
            let before = out.len();
            for alt in alternatives {
                walk(doc, alt, prefix, out, depth.saturating_add(1));
            }
            dedup_from(out, before);
        }
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            if prop.get("readOnly").and_then(Value::as_bool) == Some(true) {
                continue;
            }
            prefix.push(Seg::Key(name.clone()));
            walk(doc, prop, prefix, out, depth.saturating_add(1));
            prefix.pop();
        }
    }
    if let Some(items) = schema.get("items").filter(|_| types.contains(&"array")) {
        prefix.push(Seg::Item);
        walk(doc, items, prefix, out, depth.saturating_add(1));
        prefix.pop();
    }
    if types.contains(&"string") {
        out.push(Leaf {
            path: prefix.clone(),
            ty: LeafType::Text,
        });
    } else if types.contains(&"integer") {
        out.push(Leaf {
            path: prefix.clone(),
            ty: LeafType::Integer {
                maximum: schema.get("maximum").and_then(Value::as_i64),
                minimum: schema.get("minimum").and_then(Value::as_i64),
            },
        });
    }
}

/// Drops leaves after `from` whose path repeats an earlier one.
fn dedup_from(out: &mut Vec<Leaf>, from: usize) {
    let mut seen: Vec<Vec<Seg>> = out.iter().take(from).map(|l| l.path.clone()).collect();
    let tail = out.split_off(from.min(out.len()));
    for leaf in tail {
        if !seen.contains(&leaf.path) {
            seen.push(leaf.path.clone());
            out.push(leaf);
        }
    }
}

/// Follows a local `$ref` (`#/components/schemas/X`).
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    let mut current = schema;
    for _ in 0..8 {
        match current.get("$ref").and_then(Value::as_str) {
            Some(r) => match r.strip_prefix('#').and_then(|p| doc.pointer(p)) {
                Some(target) => current = target,
                None => return current,
            },
            None => return current,
        }
    }
    current
}

/// Sets the value at `path` in `body`, creating objects and arrays on the
/// way; the outermost array item is taken at `index` (copies of the last
/// item, or empty objects, fill the gap), nested ones at 0.
pub(crate) fn set(body: &mut Value, path: &[Seg], index: usize, value: Value) {
    let Some((first, rest)) = path.split_first() else {
        *body = value;
        return;
    };
    match first {
        Seg::Key(k) => {
            if !body.is_object() {
                *body = Value::Object(serde_json::Map::new());
            }
            if let Some(map) = body.as_object_mut() {
                let slot = map.entry(k.clone()).or_insert(Value::Null);
                set(slot, rest, index, value);
            }
        }
        Seg::Item => {
            if !body.is_array() {
                *body = Value::Array(Vec::new());
            }
            if let Some(items) = body.as_array_mut() {
                while items.len() <= index {
                    let filler = items
                        .last()
                        .cloned()
                        .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
                    items.push(filler);
                }
                if let Some(slot) = items.get_mut(index) {
                    set(slot, rest, 0, value);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn leaves_follow_refs_arrays_and_nullable_alternatives() {
        let doc = json!({
            "paths": {"/v1/x": {"put": {"requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/In"}}}}}}},
            "components": {"schemas": {
                "In": {"type": "object", "properties": {
                    "rows": {"type": "array", "items": {"$ref": "#/components/schemas/Row"}},
                    "cover": {"oneOf": [{"type": "null"}, {"$ref": "#/components/schemas/Cover"}]}
                }},
                "Row": {"type": "object", "properties": {"name": {"type": ["string", "null"]}}},
                "Cover": {"type": "object", "properties": {"pepm_cents": {"type": "integer", "maximum": 100}}}
            }}
        });
        let ops = operations(&doc);
        let op = ops.first().unwrap();
        let fields: Vec<String> = op.leaves.iter().map(|l| l.field(1)).collect();
        assert_eq!(fields, ["cover.pepm_cents", "rows[1].name"]);
        let mut body = json!({"rows": [{"name": "a"}]});
        set(&mut body, &op.leaves.get(1).unwrap().path, 1, json!("b"));
        assert_eq!(body, json!({"rows": [{"name": "a"}, {"name": "b"}]}));
    }
}
