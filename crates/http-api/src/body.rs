//! Request bodies: content type, JSON syntax, repeated keys, either field
//! style, unknown fields, wrong types and control characters, each a 400
//! `invalid_request` whose `details` name the field (contract section 1).

mod json;

use actix_web::HttpRequest;
use actix_web::http::header;
use serde::de::DeserializeOwned;
use serde_json::Value;

use domain::error::FieldError;

use crate::casing;
use crate::error::ApiError;

/// Largest accepted body (32 MiB); larger bodies get 413.
pub const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// Whether the request declares a JSON body.
fn is_json(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|m| m.trim().to_ascii_lowercase())
        .is_some_and(|m| m == "application/json" || m.ends_with("+json"))
}

/// Reads a JSON object body with every key in snake_case. Its strings are
/// not checked yet: [`from_value`] checks them for the whole body, and
/// [`rows`] row by row.
///
/// # Errors
/// 400 `invalid_request` naming the content type, the syntax error, a
/// repeated key, a non-object body, or a field sent in both styles.
pub fn object(req: &HttpRequest, bytes: &[u8]) -> Result<Value, ApiError> {
    if !is_json(req) {
        return Err(ApiError::invalid_field(
            "Content-Type",
            "must be application/json",
        ));
    }
    let value = json::parse(bytes).map_err(|e| ApiError::invalid(vec![e]))?;
    if !value.is_object() {
        return Err(ApiError::invalid_field("body", "must be a JSON object"));
    }
    casing::normalize(value).map_err(ApiError::invalid)
}

/// The rows of a body that is one object holding one array field, `name`
/// (`{ "members": [...] }`, `{ "elections": [...] }`): any other top-level
/// field, or a missing or non-array `name`, is a 400 naming each.
///
/// # Errors
/// 400 `invalid_request`, as [`object`] and for the fields above.
pub fn array_field(req: &HttpRequest, bytes: &[u8], name: &str) -> Result<Vec<Value>, ApiError> {
    let Value::Object(mut map) = object(req, bytes)? else {
        return Err(ApiError::invalid_field("body", "must be a JSON object"));
    };
    let mut errors: Vec<FieldError> = map
        .keys()
        .filter(|k| k.as_str() != name)
        .map(|k| FieldError::new(k.clone(), "is not a known field"))
        .collect();
    let items = match map.remove(name) {
        Some(Value::Array(items)) => items,
        Some(_) => {
            errors.push(FieldError::new(name, "must be an array"));
            Vec::new()
        }
        None => {
            errors.push(FieldError::new(name, "is required"));
            Vec::new()
        }
    };
    if errors.is_empty() {
        Ok(items)
    } else {
        Err(ApiError::invalid(errors))
    }
}

/// Parses the rows of an array payload one by one, so that a bad row is
/// that row's errors (with its `index`) and not the whole request's.
/// `known` names the fields of a row and `nested` the fields of the
/// objects in each row's array field (e.g. `dependents`); other fields are
/// errors. Field paths are `{prefix}[{i}].{field}`.
pub fn rows<T: DeserializeOwned>(
    prefix: &str,
    items: Vec<Value>,
    known: &[&str],
    nested: (&str, &[&str]),
) -> Vec<Result<T, Vec<FieldError>>> {
    items
        .into_iter()
        .enumerate()
        .map(|(index, item)| {
            let at = |field: &str| FieldError {
                field: format!("{prefix}[{index}]{field}"),
                message: String::new(),
                index: Some(index),
            };
            let Value::Object(map) = &item else {
                let mut e = at("");
                e.message = "must be an object".to_owned();
                return Err(vec![e]);
            };
            let mut errors = json::control_fields(&item, &format!("{prefix}[{index}]"));
            for e in &mut errors {
                e.index = Some(index);
            }
            for key in map.keys().filter(|k| !known.contains(&k.as_str())) {
                let mut e = at(&format!(".{key}"));
                e.message = "is not a known field".to_owned();
                errors.push(e);
            }
            if let Some(Value::Array(children)) = map.get(nested.0) {
                for (j, child) in children.iter().enumerate() {
                    let Value::Object(child) = child else {
                        continue;
                    };
                    for key in child.keys().filter(|k| !nested.1.contains(&k.as_str())) {
                        let mut e = at(&format!(".{}[{j}].{key}", nested.0));
                        e.message = "is not a known field".to_owned();
                        errors.push(e);
                    }
                }
            }
            if !errors.is_empty() {
                return Err(errors);
            }
            serde_path_to_error::deserialize::<_, T>(item).map_err(|e| {
                let f = type_error(&e);
                let field = if f.field == "body" {
                    String::new()
                } else {
                    format!(".{}", f.field)
                };
                let mut e = at(&field);
                e.message = f.message;
                vec![e]
            })
        })
        .collect()
}

/// Parses a JSON body into `T`, accepting snake_case or camelCase keys.
/// Top-level `read_only` fields are refused as such rather than as unknown.
///
/// # Errors
/// 400 `invalid_request` naming the content type, the syntax error, each
/// unknown or read-only field, and each field of a wrong type.
pub fn parse<T: DeserializeOwned>(
    req: &HttpRequest,
    bytes: &[u8],
    read_only: &[&str],
) -> Result<T, ApiError> {
    from_value(object(req, bytes)?, read_only)
}

/// [`parse`] of a body that may be left out: an empty one is `T`'s
/// default (a blank one is still refused, as by [`parse`]).
///
/// # Errors
/// As [`parse`].
pub fn parse_optional<T: DeserializeOwned + Default>(
    req: &HttpRequest,
    bytes: &[u8],
) -> Result<T, ApiError> {
    if bytes.is_empty() {
        Ok(T::default())
    } else {
        parse(req, bytes, &[])
    }
}

/// [`parse`] of a body already read by [`object`].
///
/// # Errors
/// 400 `invalid_request` naming each unknown or read-only field, each
/// field of a wrong type and each string holding a control character.
pub fn from_value<T: DeserializeOwned>(value: Value, read_only: &[&str]) -> Result<T, ApiError> {
    let mut errors: Vec<FieldError> = read_only
        .iter()
        .filter(|f| value.get(**f).is_some())
        .map(|f| FieldError::new(*f, "is read-only"))
        .collect();
    errors.extend(json::control_fields(&value, ""));
    // serde stops at the first wrong type; so that every unknown field and
    // every wrong type is reported at once, the offending value is removed
    // and the body deserialised again (a bounded number of times).
    let mut value = value;
    let mut removed: Vec<String> = Vec::new();
    for _ in 0..MAX_PASSES {
        let mut unknown = Vec::new();
        let mut on_unknown = |path: serde_ignored::Path<'_>| unknown.push(ignored_path(&path));
        let de = serde_ignored::Deserializer::new(&value, &mut on_unknown);
        let parsed: Result<T, _> = serde_path_to_error::deserialize(de);
        let failure = match parsed {
            Ok(v) => {
                errors.extend(
                    unknown
                        .into_iter()
                        .filter(|f| !read_only.contains(&f.as_str()))
                        .map(|f| FieldError::new(f, "is not a known field")),
                );
                if errors.is_empty() {
                    return Ok(v);
                }
                break;
            }
            Err(e) => e,
        };
        let error = type_error(&failure);
        // A field removed after a type error is then missing: stop there.
        let repeat = removed.contains(&error.field);
        if !repeat {
            errors.push(error);
        }
        if repeat || !remove_at(&mut value, failure.path()) {
            errors.extend(
                unknown
                    .into_iter()
                    .filter(|f| !read_only.contains(&f.as_str()))
                    .map(|f| FieldError::new(f, "is not a known field")),
            );
            break;
        }
        removed.push(error_path(failure.path()));
    }
    errors.sort_by(|a, b| a.field.cmp(&b.field));
    errors.dedup_by(|a, b| a.field == b.field);
    Err(ApiError::invalid(errors))
}

/// How often a body is deserialised again after removing a value of the
/// wrong type.
const MAX_PASSES: usize = 50;

/// Removes the value at `path` (an object member; an array element is
/// replaced by null). Whether something was removed.
fn remove_at(value: &mut Value, path: &serde_path_to_error::Path) -> bool {
    use serde_path_to_error::Segment;
    let segments: Vec<&Segment> = path.iter().collect();
    let Some((last, parents)) = segments.split_last() else {
        return false;
    };
    let mut at = value;
    for seg in parents {
        let next = match seg {
            Segment::Map { key } => at.get_mut(key.as_str()),
            Segment::Seq { index } => at.get_mut(*index),
            Segment::Enum { .. } | Segment::Unknown => None,
        };
        match next {
            Some(v) => at = v,
            None => return false,
        }
    }
    match last {
        Segment::Map { key } => at
            .as_object_mut()
            .is_some_and(|o| o.remove(key.as_str()).is_some()),
        Segment::Seq { index } => match at.get_mut(*index) {
            Some(v) if !v.is_null() => {
                *v = Value::Null;
                true
            }
            _ => false,
        },
        Segment::Enum { .. } | Segment::Unknown => false,
    }
}

/// A field path as the error details spell it: `members[3].first_name`.
fn ignored_path(path: &serde_ignored::Path<'_>) -> String {
    use serde_ignored::Path;
    match path {
        Path::Root => String::new(),
        Path::Seq { parent, index } => format!("{}[{index}]", ignored_path(parent)),
        Path::Map { parent, key } => {
            let p = ignored_path(parent);
            if p.is_empty() {
                key.clone()
            } else {
                format!("{p}.{key}")
            }
        }
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => ignored_path(parent),
    }
}

fn error_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path {
        match seg {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    out
}

/// Turns a deserialisation error into one field error: a missing field is
/// named as such; anything else keeps serde's description without the
/// position suffix.
fn type_error(e: &serde_path_to_error::Error<serde_json::Error>) -> FieldError {
    let at = error_path(e.path());
    let text = e.inner().to_string();
    if let Some(rest) = text.strip_prefix("missing field `") {
        let name = rest.split('`').next().unwrap_or_default();
        let field = if at.is_empty() {
            name.to_owned()
        } else {
            format!("{at}.{name}")
        };
        return FieldError::new(field, "is required");
    }
    let message = text.split(" at line ").next().unwrap_or(&text).to_owned();
    FieldError::new(if at.is_empty() { "body".to_owned() } else { at }, message)
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Inner {
        zip: Option<String>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Outer {
        company_name: Option<String>,
        address: Option<Inner>,
        rows: Option<Vec<Inner>>,
    }

    fn fields(r: Result<Outer, ApiError>) -> Vec<String> {
        match r {
            Ok(_) => Vec::new(),
            Err(e) => e
                .body()
                .details
                .unwrap_or_default()
                .into_iter()
                .map(|d| format!("{}: {}", d.field, d.message))
                .collect(),
        }
    }

    fn json_req() -> HttpRequest {
        TestRequest::default()
            .insert_header((header::CONTENT_TYPE, "application/json; charset=utf-8"))
            .to_http_request()
    }

    #[test]
    fn either_style_is_accepted() {
        let r: Result<Outer, _> = parse(
            &json_req(),
            br#"{"companyName":"A","address":{"zip":"94103"}}"#,
            &[],
        );
        assert_eq!(r.ok().and_then(|o| o.company_name), Some("A".to_owned()));
    }

    #[test]
    fn unknown_fields_are_each_named() {
        let r = parse(
            &json_req(),
            br#"{"companyName":"A","colour":1,"address":{"zip":"1","plus4":"2"},"rows":[{},{"x":1}]}"#,
            &[],
        );
        assert_eq!(
            fields(r),
            [
                "address.plus4: is not a known field",
                "colour: is not a known field",
                "rows[1].x: is not a known field",
            ]
        );
    }

    #[test]
    fn wrong_types_bad_json_and_content_type_are_named() {
        let r = parse(&json_req(), br#"{"address":{"zip":94103}}"#, &[]);
        assert_eq!(
            fields(r),
            ["address.zip: invalid type: integer `94103`, expected a string"]
        );
        // A wrong type does not hide other wrong types or unknown fields.
        let r = parse(
            &json_req(),
            br#"{"company_name":5,"address":{"zip":1,"plus4":"x"},"zzz":1,"rows":[{"zip":2}]}"#,
            &[],
        );
        assert_eq!(
            fields(r),
            [
                "address.plus4: is not a known field",
                "address.zip: invalid type: integer `1`, expected a string",
                "company_name: invalid type: integer `5`, expected a string",
                "rows[0].zip: invalid type: integer `2`, expected a string",
                "zzz: is not a known field",
            ]
        );
        let r = parse(&json_req(), br#"{"address":"#, &[]);
        assert!(
            fields(r)
                .first()
                .is_some_and(|f| f.starts_with("body: is not valid JSON"))
        );
        let r = parse(&json_req(), b"[]", &[]);
        assert_eq!(fields(r), ["body: must be a JSON object"]);
        let plain = TestRequest::default()
            .insert_header((header::CONTENT_TYPE, "text/plain"))
            .to_http_request();
        let r = parse(&plain, b"{}", &[]);
        assert_eq!(fields(r), ["Content-Type: must be application/json"]);
        let r = parse(
            &json_req(),
            br#"{"status":"active","companyName":"A"}"#,
            &["status"],
        );
        assert_eq!(fields(r), ["status: is read-only"]);
    }
}
