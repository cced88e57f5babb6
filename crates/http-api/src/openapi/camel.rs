//! The HR platform's document (`/v1/openapi.json?style=camel`): the
//! broker's document with every schema property, `required` entry and
//! example key in camelCase, as HR platform keys send and receive them.
//! Price-on-plan's answers are left as they are: they keep the mixed keys
//! the specification spells, for each form (its request is re-cased).

use serde_json::{Map, Value};

use crate::casing::{Style, snake_to_camel, to_style};

/// The operation whose answers are never re-cased.
const VERBATIM: &str = "/v1/price-on-plan";

/// `doc` (the broker's document as JSON) in camelCase.
#[must_use]
pub fn document(mut doc: Value) -> Value {
    if let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    {
        schemas.values_mut().for_each(schema);
    }
    for section in ["paths", "webhooks"] {
        let Some(items) = doc.get_mut(section).and_then(Value::as_object_mut) else {
            continue;
        };
        for (path, item) in items.iter_mut() {
            let Some(item) = item.as_object_mut() else {
                continue;
            };
            for op in item.values_mut() {
                if path == VERBATIM {
                    // Its request is accepted in either style; its answers
                    // keep their own keys.
                    if let Some(content) = op.pointer_mut("/requestBody/content") {
                        media(content);
                    }
                } else {
                    operation(op);
                }
            }
        }
    }
    if let Some(Value::String(text)) = doc.pointer_mut("/info/description") {
        text.insert_str(
            0,
            "**This is the camelCase document, for HR platform keys.** The snake_case one, for broker keys, is `/v1/openapi.json`.\n\n",
        );
    }
    doc
}

/// The bodies of one operation: its request and every answer.
fn operation(op: &mut Value) {
    if let Some(content) = op.pointer_mut("/requestBody/content") {
        media(content);
    }
    if let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) {
        for response in responses.values_mut() {
            if let Some(content) = response.get_mut("content") {
                media(content);
            }
        }
    }
}

/// Each media type of a `content` map: its schema and its examples.
fn media(content: &mut Value) {
    let Some(types) = content.as_object_mut() else {
        return;
    };
    for m in types.values_mut() {
        if let Some(s) = m.get_mut("schema") {
            schema(s);
        }
        if let Some(map) = m.as_object_mut() {
            recase_examples(map);
        }
    }
}

/// A schema and the schemas inside it.
fn schema(s: &mut Value) {
    let Some(map) = s.as_object_mut() else {
        return;
    };
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        let old = std::mem::take(properties);
        *properties = old
            .into_iter()
            .map(|(name, mut inner)| {
                schema(&mut inner);
                (snake_to_camel(&name), inner)
            })
            .collect::<Map<_, _>>();
    }
    if let Some(Value::Array(required)) = map.get_mut("required") {
        for name in required.iter_mut() {
            if let Value::String(text) = name {
                *text = snake_to_camel(text);
            }
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(inner) = map.get_mut(key) {
            schema(inner);
        }
    }
    for key in ["allOf", "oneOf", "anyOf", "prefixItems"] {
        if let Some(Value::Array(list)) = map.get_mut(key) {
            list.iter_mut().for_each(schema);
        }
    }
    recase_examples(map);
}

/// `example` and `examples` (a list of values, or named examples with a
/// `value`) of a schema or media object, re-cased.
fn recase_examples(map: &mut Map<String, Value>) {
    if let Some(example) = map.get_mut("example") {
        *example = to_style(example.take(), Style::Camel);
    }
    match map.get_mut("examples") {
        Some(Value::Array(list)) => {
            for e in list.iter_mut() {
                *e = to_style(e.take(), Style::Camel);
            }
        }
        Some(Value::Object(named)) => {
            for e in named.values_mut() {
                if let Some(value) = e.get_mut("value") {
                    *value = to_style(value.take(), Style::Camel);
                }
            }
        }
        _ => {}
    }
}
