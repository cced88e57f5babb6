//! The HR platform's document (`/v1/openapi.json?style=camel`): the
//! broker's document with every schema property, `required` entry and
//! example key in camelCase, as HR platform keys send and receive them.
//! Price-on-plan's answers are left as they are: they keep the mixed keys
//! the specification spells, for each form (its request is re-cased).

use serde_json::{Map, Value};

use crate::casing::{Style, snake_to_camel, to_style};

/// The operation whose answers are never re-cased.
const VERBATIM: &str = "/v1/price-on-plan";

/// Price-on-plan's answer schemas: the broker's form and, in the same
/// place, the HR platform's (whose keys are the specification's own).
const FORMS: [(&str, &str); 2] = [
    ("PriceOnPlanPlans", "PriceOnPlanVersions"),
    ("PriceOnPlanPlansPending", "PriceOnPlanVersionsPending"),
];

/// The components only the HR platform's form refers to (never re-cased;
/// the other form's parts go with their form when [`prune`] runs).
const HR_ONLY: [&str; 1] = ["PriceOnPlanVersion"];

/// The broker's document: `doc` (the generated document as JSON, which
/// holds both answer forms) without the HR platform's.
#[must_use]
pub fn broker(mut doc: Value) -> Value {
    if let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    {
        for (_, hr) in FORMS {
            schemas.remove(hr);
        }
    }
    prune(&mut doc);
    doc
}

/// Removes the component schemas nothing refers to any more (those only
/// the other answer form used).
fn prune(doc: &mut Value) {
    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref")
                    && let Some(name) = r.strip_prefix("#/components/schemas/")
                {
                    out.push(name.to_owned());
                }
                map.values().for_each(|v| refs(v, out));
            }
            Value::Array(list) => list.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }
    let Some(Value::Object(all)) = doc.pointer("/components/schemas").cloned() else {
        return;
    };
    let mut pending = Vec::new();
    for (key, part) in doc.as_object().into_iter().flatten() {
        if key != "components" {
            refs(part, &mut pending);
        }
    }
    let mut used = std::collections::BTreeSet::new();
    while let Some(name) = pending.pop() {
        if used.insert(name.clone())
            && let Some(schema) = all.get(&name)
        {
            refs(schema, &mut pending);
        }
    }
    if let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    {
        schemas.retain(|name, _| used.contains(name));
    }
}

/// `doc` (the generated document as JSON) in camelCase, with
/// price-on-plan's answers in the HR platform's form.
#[must_use]
pub fn document(mut doc: Value) -> Value {
    swap_forms(&mut doc);
    if let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    {
        for (broker, _) in FORMS {
            schemas.remove(broker);
        }
        let verbatim: Vec<&str> = FORMS.iter().map(|(_, hr)| *hr).chain(HR_ONLY).collect();
        schemas
            .iter_mut()
            .filter(|(name, _)| !verbatim.contains(&name.as_str()))
            .for_each(|(_, s)| schema(s));
    }
    prune(&mut doc);
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

/// Every reference to a broker answer form becomes one to the HR
/// platform's; the examples of price-on-plan's answers are the broker's,
/// so they go.
fn swap_forms(doc: &mut Value) {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get_mut("$ref") {
                    for (broker, hr) in FORMS {
                        if r.strip_prefix("#/components/schemas/") == Some(broker) {
                            *r = format!("#/components/schemas/{hr}");
                        }
                    }
                }
                map.values_mut().for_each(walk);
            }
            Value::Array(list) => list.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(doc);
    if let Some(Value::Object(responses)) =
        doc.pointer_mut("/paths/~1v1~1price-on-plan/post/responses")
    {
        for response in responses.values_mut() {
            if let Some(Value::Object(types)) = response.get_mut("content") {
                for m in types.values_mut().filter_map(Value::as_object_mut) {
                    m.remove("example");
                }
            }
        }
    }
}
