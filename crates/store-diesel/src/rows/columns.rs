//! Reading columns back (a value the row cannot hold is a corrupt-row
//! error naming the column) and writing them.

use domain::ids::PartnerId;
use domain::mode::Mode;
use domain::scope::Scope;
use domain::store::StoreError;

use crate::error::corrupt;

pub(super) type R<T> = Result<T, StoreError>;

pub(crate) fn mode(text: &str) -> R<Mode> {
    match text {
        "test" => Ok(Mode::Test),
        "live" => Ok(Mode::Live),
        other => Err(corrupt("mode", other)),
    }
}

/// The scope stored in a row's `partner_id` and `mode` columns.
pub(crate) fn scope(partner_id: &str, mode_text: &str) -> R<Scope> {
    Ok(Scope::new(
        parsed("partner id", partner_id, PartnerId::parse)?,
        mode(mode_text)?,
    ))
}

/// A column read back by `parse`, or a corrupt-row error naming `what`.
pub(super) fn parsed<T, E>(
    what: &str,
    text: &str,
    parse: impl FnOnce(&str) -> Result<T, E>,
) -> R<T> {
    parse(text).map_err(|_| corrupt(what, text))
}

/// A column holding one of a fixed set of values, read back by `parse`, or
/// a corrupt-row error naming `what`.
pub(super) fn known<T>(what: &str, text: &str, parse: impl FnOnce(&str) -> Option<T>) -> R<T> {
    parse(text).ok_or_else(|| corrupt(what, text))
}

pub(super) fn json_enum<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> R<T> {
    serde_json::from_value(serde_json::Value::String(text.to_owned()))
        .map_err(|_| corrupt(what, text))
}

pub(super) fn enum_text<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

pub(super) fn json_doc<T: serde::de::DeserializeOwned>(
    what: &str,
    text: Option<&str>,
) -> R<Option<T>> {
    text.map(|t| serde_json::from_str(t).map_err(|_| corrupt(what, t)))
        .transpose()
}

pub(super) fn to_json<T: serde::Serialize>(value: &T) -> R<String> {
    serde_json::to_string(value).map_err(|e| StoreError::Internal(Box::new(e)))
}

/// A document's stored form (`domain::document`: versioned, snake_case).
pub(crate) fn stored(text: Result<String, serde_json::Error>) -> R<String> {
    text.map_err(|e| StoreError::Internal(Box::new(e)))
}

pub(crate) fn count(n: i32) -> u32 {
    u32::try_from(n).unwrap_or(0)
}

pub(crate) fn int(n: u32) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// A stored `YYYY-MM-DD` date.
pub(super) fn stored_date(text: Option<&str>, what: &str) -> R<Option<time::Date>> {
    text.map(|t| pricing_core::census::date_opt::parse(t).map_err(|_| corrupt(what, t)))
        .transpose()
}

pub(super) fn date_text(d: Option<time::Date>) -> Option<String> {
    d.map(pricing_core::census::date_opt::format)
}
