//! Field-name style, done once for every request and response.
//!
//! Responses are built in snake_case; [`to_style`] re-cases every object
//! key for HR platform keys (camelCase), and the same function will re-case
//! webhook payloads. Requests are accepted in either style: [`normalize`]
//! turns every key into snake_case before deserialisation and refuses a
//! field sent in both styles. Error `details[].field` paths are re-cased
//! with [`path_to_style`].

use std::fmt::Write as _;

use serde_json::Value;

use domain::error::FieldError;

/// The caller's field style, from its key kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Broker keys.
    Snake,
    /// HR platform keys.
    Camel,
}

impl Style {
    /// The style of a partner kind.
    #[must_use]
    pub fn of(kind: domain::partner::PartnerKind) -> Self {
        match kind {
            domain::partner::PartnerKind::Broker => Self::Snake,
            domain::partner::PartnerKind::HrPlatform => Self::Camel,
        }
    }

    /// Re-cases one snake_case name.
    #[must_use]
    pub fn name(self, snake: &str) -> String {
        match self {
            Self::Snake => snake.to_owned(),
            Self::Camel => snake_to_camel(snake),
        }
    }
}

/// `first_name` → `firstName` (the service's one rule,
/// `domain::document::snake_to_camel`).
#[must_use]
pub fn snake_to_camel(name: &str) -> String {
    domain::document::snake_to_camel(name)
}

/// `firstName` → `first_name` (`domain::document::camel_to_snake`).
#[must_use]
pub fn camel_to_snake(name: &str) -> String {
    domain::document::camel_to_snake(name)
}

/// Re-cases every object key of a snake_case value for `style`.
#[must_use]
pub fn to_style(value: Value, style: Style) -> Value {
    match style {
        Style::Snake => value,
        Style::Camel => domain::document::recase(value, &snake_to_camel),
    }
}

/// Turns every key of a request into snake_case. A field sent in both
/// styles in one object (`first_name` and `firstName`) is an error naming
/// it.
///
/// # Errors
/// One [`FieldError`] per doubled field.
pub fn normalize(mut value: Value) -> Result<Value, Vec<FieldError>> {
    let mut errors = Vec::new();
    normalize_at(&mut value, &mut String::new(), &mut errors);
    if errors.is_empty() {
        Ok(value)
    } else {
        Err(errors)
    }
}

/// Turns the keys of `value` into snake_case in place. `at` is the
/// value's path, extended for each child and restored after it, so that
/// a path is written out only for a field in error; an object whose keys
/// are all snake_case already is left as it is.
fn normalize_at(value: &mut Value, at: &mut String, errors: &mut Vec<FieldError>) {
    match value {
        Value::Object(map) => {
            let camel = |k: &str| k.bytes().any(|b| b.is_ascii_uppercase());
            if map.keys().any(|k| camel(k)) {
                for (k, mut v) in std::mem::take(map) {
                    let key = if camel(&k) { camel_to_snake(&k) } else { k };
                    let len = push_key(at, &key);
                    normalize_at(&mut v, at, errors);
                    if map.insert(key, v).is_some() {
                        errors.push(FieldError::new(
                            at.clone(),
                            "is sent twice (in snake_case and camelCase); send it once",
                        ));
                    }
                    at.truncate(len);
                }
            } else {
                for (key, v) in map.iter_mut() {
                    let len = push_key(at, key);
                    normalize_at(v, at, errors);
                    at.truncate(len);
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter_mut().enumerate() {
                let len = push_index(at, i);
                normalize_at(v, at, errors);
                at.truncate(len);
            }
        }
        _ => {}
    }
}

/// Appends `key` to the path `at` (`a.b`, or `b` at the top) and returns
/// the length to truncate back to.
pub(crate) fn push_key(at: &mut String, key: &str) -> usize {
    let len = at.len();
    if !at.is_empty() {
        at.push('.');
    }
    at.push_str(key);
    len
}

/// Appends `[index]` to the path `at` and returns the length to truncate
/// back to.
pub(crate) fn push_index(at: &mut String, index: usize) -> usize {
    let len = at.len();
    let _ = write!(at, "[{index}]");
    len
}

/// Re-cases a snake_case field path such as `members[3].first_name` for
/// `style`. Paths that name no field (`body`, `Idempotency-Key`) are kept.
#[must_use]
pub fn path_to_style(path: &str, style: Style) -> String {
    match style {
        Style::Snake => path.to_owned(),
        Style::Camel => path
            .split('.')
            .map(|seg| match seg.split_once('[') {
                Some((name, rest)) => format!("{}[{rest}", snake_to_camel(name)),
                None => snake_to_camel(seg),
            })
            .collect::<Vec<_>>()
            .join("."),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names_round_trip() {
        for (snake, camel) in [
            ("first_name", "firstName"),
            ("pepm_cents", "pepmCents"),
            ("line1", "line1"),
            ("id", "id"),
            ("employee_only", "employeeOnly"),
            ("oop_max_individual_cents", "oopMaxIndividualCents"),
        ] {
            assert_eq!(snake_to_camel(snake), camel);
            assert_eq!(camel_to_snake(camel), snake);
            assert_eq!(camel_to_snake(snake), snake);
        }
    }

    #[test]
    fn responses_are_recased_deeply_and_values_are_kept() {
        let v = json!({"company_name": "a_b", "current_coverage": {"pepm_cents": 1},
                       "groups": [{"next_cursor": null}]});
        assert_eq!(
            to_style(v.clone(), Style::Camel),
            json!({"companyName": "a_b", "currentCoverage": {"pepmCents": 1},
                   "groups": [{"nextCursor": null}]})
        );
        assert_eq!(to_style(v.clone(), Style::Snake), v);
    }

    #[test]
    fn requests_take_either_style_but_not_both() {
        assert_eq!(
            normalize(json!({"companyName": "x", "address": {"line1": "y"}})),
            Ok(json!({"company_name": "x", "address": {"line1": "y"}}))
        );
        let errs = normalize(json!({"members": [{"first_name": "a", "firstName": "b"}]}))
            .err()
            .unwrap_or_default();
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs.first().map(|e| e.field.as_str()),
            Some("members[0].first_name")
        );
    }

    #[test]
    fn doubled_fields_are_named_at_any_depth_and_snake_bodies_pass_as_they_are() {
        let body = json!({"members": [{"firstName": "a"},
                                      {"dependents": [{"dob": 1}, {"dob": 1, "Dob": 2}]}],
                          "groupId": "g", "group_id": "h"});
        let fields: Vec<String> = normalize(body)
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(fields, ["group_id", "members[1].dependents[1].dob"]);
        let snake = json!({"members": [{"first_name": "a", "dependents": [{"dob": 1}]}],
                           "line1": "x"});
        assert_eq!(normalize(snake.clone()), Ok(snake));
        assert_eq!(
            normalize(json!({"members": [{"firstName": "a"}, {"lastName": "b"}]})),
            Ok(json!({"members": [{"first_name": "a"}, {"last_name": "b"}]}))
        );
    }

    #[test]
    fn paths_follow_the_callers_style() {
        for (path, style, expected) in [
            (
                "members[3].first_name",
                Style::Camel,
                "members[3].firstName",
            ),
            (
                "elections[0].effective_date",
                Style::Camel,
                "elections[0].effectiveDate",
            ),
            ("body", Style::Camel, "body"),
            ("Idempotency-Key", Style::Camel, "Idempotency-Key"),
            (
                "members[3].first_name",
                Style::Snake,
                "members[3].first_name",
            ),
        ] {
            assert_eq!(path_to_style(path, style), expected, "{path} in {style:?}");
        }
    }
}
