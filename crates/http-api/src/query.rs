//! Query strings: every GET checks its parameter names against the ones
//! its operation documents (an unknown one is 400 naming it, before the
//! resource is looked up), and list filters read their values here, each
//! bad value named.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{HttpRequest, ResponseError as _, web};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use domain::error::FieldError;

use crate::error::ApiError;
use crate::openapi::RouteTable;

/// The decoded `name=value` pairs of a query string, in order.
#[derive(Debug, Clone, Default)]
pub struct Query(Vec<(String, String)>);

impl Query {
    /// The pairs of `req`'s query string (`+` and `%XX` decoded; a name
    /// without `=` has an empty value).
    #[must_use]
    pub fn of(req: &HttpRequest) -> Self {
        Self::parse(req.query_string())
    }

    /// The pairs of a query string.
    #[must_use]
    pub fn parse(text: &str) -> Self {
        Self(
            text.split('&')
                .filter(|p| !p.is_empty())
                .map(|pair| {
                    let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
                    (percent_decode(name), percent_decode(value))
                })
                .collect(),
        )
    }

    /// Refuses a parameter of the GET of `path` that is not in `known`.
    ///
    /// # Errors
    /// 400 `invalid_request` naming the first unknown parameter and
    /// listing what the operation takes.
    pub fn only(&self, path: &str, known: &[impl AsRef<str>]) -> Result<(), ApiError> {
        let Some((name, _)) = self
            .0
            .iter()
            .find(|(n, _)| !known.iter().any(|k| k.as_ref() == n))
        else {
            return Ok(());
        };
        let takes = if known.is_empty() {
            "it takes none".to_owned()
        } else {
            let names: Vec<&str> = known.iter().map(AsRef::as_ref).collect();
            format!("it takes {}", names.join(", "))
        };
        Err(ApiError::invalid_field(
            name,
            &format!("is not a query parameter of GET {path} ({takes})"),
        ))
    }

    /// The value of `name` (the last one when it is repeated).
    #[must_use]
    pub fn text(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rfind(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The value of `name` read by `parse`, or an error naming it that
    /// lists `expected` (the values it takes, or their form).
    ///
    /// # Errors
    /// A [`FieldError`] on `name` for a value `parse` refuses.
    pub fn value<T>(
        &self,
        name: &str,
        expected: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<Option<T>, FieldError> {
        self.text(name)
            .map(|v| parse(v).ok_or_else(|| FieldError::new(name, expected)))
            .transpose()
    }

    /// An RFC 3339 timestamp of `name` as Unix seconds. Timestamps are
    /// shown in whole seconds, so a fraction rounds up: a bound compares
    /// as the shown times do.
    ///
    /// # Errors
    /// A [`FieldError`] on `name` for anything else.
    pub fn timestamp(&self, name: &str) -> Result<Option<i64>, FieldError> {
        self.value(
            name,
            "must be an RFC 3339 timestamp such as 2026-11-21T13:14:00Z",
            |v| {
                let t = OffsetDateTime::parse(v, &Rfc3339).ok()?;
                let secs = t.unix_timestamp();
                Some(if t.nanosecond() > 0 { secs + 1 } else { secs })
            },
        )
    }
}

/// Decodes `%XX` escapes and `+` (cursors are URL-safe base64, so this only
/// matters for hand-written queries).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                if let Some(v) = hex {
                    out.push(v);
                    i += 2;
                } else {
                    out.push(b);
                }
            }
            _ => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The filters of a list, read all at once so that every bad one is named.
///
/// # Errors
/// 400 `invalid_request` with one detail per bad filter.
pub fn filters<T>(read: impl FnOnce(&mut Vec<FieldError>) -> T) -> Result<T, ApiError> {
    let mut errors = Vec::new();
    let filters = read(&mut errors);
    if errors.is_empty() {
        Ok(filters)
    } else {
        Err(ApiError::invalid(errors))
    }
}

/// `Ok`'s value, or `None` with the error kept in `errors`.
pub fn kept<T>(errors: &mut Vec<FieldError>, read: Result<Option<T>, FieldError>) -> Option<T> {
    read.unwrap_or_else(|e| {
        errors.push(e);
        None
    })
}

/// Middleware of `/v1`: a GET naming a query parameter its operation does
/// not document is 400 `invalid_request` naming it (and what it takes).
///
/// # Errors
/// Only the wrapped service's.
pub async fn known_parameters(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<actix_web::body::BoxBody>, actix_web::Error> {
    if req.method() == actix_web::http::Method::GET
        && !req.query_string().is_empty()
        && let Some(table) = req.app_data::<web::Data<RouteTable>>()
        && let Some(known) = table.query_parameters(req.path())
        && let Err(error) = Query::parse(req.query_string()).only(req.path(), known)
    {
        let res = error.error_response();
        return Ok(req.into_response(res));
    }
    Ok(next.call(req).await?.map_into_boxed_body())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_timestamps_are_read_and_named() {
        let q = Query::parse("status=active&created_gte=2026-11-21T13%3A14%3A00.5Z&x=");
        assert_eq!(q.text("status"), Some("active"));
        assert_eq!(q.text("x"), Some(""));
        assert_eq!(q.text("y"), None);
        // 13:14:00.5 rounds up: a time shown as 13:14:00 is before it.
        assert_eq!(q.timestamp("created_gte"), Ok(Some(1_795_266_841)));
        let bad = Query::parse("created_lt=yesterday").timestamp("created_lt");
        assert_eq!(bad.map_err(|e| e.field), Err("created_lt".to_owned()));
        assert_eq!(percent_decode("a%3Db+c"), "a=b c");
        let parsed = q.value("status", "must be active or terminated", |v| {
            (v == "active").then_some(1)
        });
        assert_eq!(parsed, Ok(Some(1)));
    }
}
