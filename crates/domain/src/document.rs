//! The stored documents: every quote, enrollment, event payload and job
//! payload the service keeps is one of the Rust types here, stored in
//! snake_case inside a versioned envelope, `{"v": 1, "doc": …}`. The
//! partner's field style (camelCase for HR platforms) is applied only at
//! the edges that answer (the HTTP adapter, the webhook body).
//!
//! Rows written before the envelope existed hold the bare document: the
//! market quote, the enrollment, event data and the market-comparison job
//! payload in camelCase, the price-on-plan document and job payload
//! already in snake_case. [`from_stored`] reads both; the store's data
//! migration rewrites old rows in the current form ([`is_current`]).

pub mod enrollment;
pub mod event;
#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
pub mod job;
pub mod quote;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

pub use enrollment::EnrollmentDocument;
pub use event::EventData;
pub use job::JobPayload;
pub use quote::{MarketQuote, QuoteDocument};

/// The version every document is written in.
pub const VERSION: u64 = 1;

/// How a document was spelled before the envelope: the key casing of its
/// unversioned rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Legacy {
    /// Bare camelCase keys (re-cased to snake_case when read).
    Camel,
    /// Bare snake_case keys (read as they are).
    Snake,
}

/// Why a stored document does not read.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    /// Not JSON, or not the shape of its type.
    #[error("the stored document does not read: {0}")]
    Shape(#[from] serde_json::Error),
    /// Written by a newer version of the service.
    #[error("the stored document has version {0}; this build reads up to {VERSION}")]
    Version(u64),
}

/// `doc` in its stored form: the versioned envelope around its snake_case
/// serialization.
///
/// # Errors
/// When `doc` does not serialize (a type whose `Serialize` fails; none
/// here do).
pub fn to_stored<T: Serialize>(doc: &T) -> Result<String, serde_json::Error> {
    serde_json::to_string(&Envelope {
        v: VERSION,
        doc: serde_json::to_value(doc)?,
    })
}

/// The document inside a stored text, in the current (snake_case) form:
/// the envelope's `doc`, or an unversioned row re-cased per `legacy`.
///
/// # Errors
/// [`DocumentError`] when the text is not JSON or names a newer version.
pub fn stored_value(text: &str, legacy: Legacy) -> Result<Value, DocumentError> {
    let value: Value = serde_json::from_str(text)?;
    match envelope_parts(&value) {
        Some((v, _)) if v > VERSION => Err(DocumentError::Version(v)),
        Some(_) => match value {
            Value::Object(mut map) => Ok(map.remove("doc").unwrap_or(Value::Null)),
            other => Ok(other),
        },
        None => Ok(match legacy {
            Legacy::Camel => recase(value, &camel_to_snake),
            Legacy::Snake => value,
        }),
    }
}

/// Reads a stored document of type `T`.
///
/// # Errors
/// [`DocumentError`] when it does not read as `T`.
pub fn from_stored<T: DeserializeOwned>(text: &str, legacy: Legacy) -> Result<T, DocumentError> {
    Ok(serde_json::from_value(stored_value(text, legacy)?)?)
}

/// Whether `text` is already in the current form (the data migration
/// leaves such rows alone).
#[must_use]
pub fn is_current(text: &str) -> bool {
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| envelope_parts(&v).map(|(v, _)| v == VERSION))
        .unwrap_or(false)
}

#[derive(Serialize)]
struct Envelope {
    v: u64,
    doc: Value,
}

/// `(v, doc)` when `value` is an envelope: an object of exactly `v` (a
/// number) and `doc`. No stored document has those two keys alone.
fn envelope_parts(value: &Value) -> Option<(u64, &Value)> {
    let map = value.as_object()?;
    if map.len() != 2 {
        return None;
    }
    Some((map.get("v")?.as_u64()?, map.get("doc")?))
}

/// Every object key of `value` through `f`, deeply; values are kept.
#[must_use]
pub fn recase(value: Value, f: &dyn Fn(&str) -> String) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (f(&k), recase(v, f)))
                .collect::<Map<String, Value>>(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(|v| recase(v, f)).collect()),
        other => other,
    }
}

/// `createdAt` → `created_at`: the one camelCase-to-snake_case rule of
/// the service (the HTTP adapter's field style uses it too).
#[must_use]
pub fn camel_to_snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            if !out.is_empty() {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `created_at` → `createdAt`: the inverse of [`camel_to_snake`] on the
/// service's names.
#[must_use]
pub fn snake_to_camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' && !out.is_empty() {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests;
