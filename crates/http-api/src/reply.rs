//! Successful answers: a status, a snake_case JSON body re-cased for the
//! caller in one place, and optional headers.

use actix_web::body::BoxBody;
use actix_web::http::StatusCode;
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::{HttpMessage as _, HttpRequest, HttpResponse, Responder};
use serde::Serialize;
use serde_json::Value;

use crate::auth::Caller;
use crate::casing::{self, Style};
use crate::error::ApiError;

/// A JSON answer.
#[derive(Debug)]
pub struct Reply {
    status: StatusCode,
    body: Value,
    headers: Vec<(HeaderName, HeaderValue)>,
    /// The body's keys are already exactly as the caller gets them.
    verbatim: bool,
}

impl Reply {
    /// An answer with `status` and the serialisation of `body`.
    ///
    /// # Errors
    /// 500 when `body` does not serialise (a bug).
    pub fn new<T: Serialize>(status: StatusCode, body: &T) -> Result<Self, ApiError> {
        Ok(Self {
            status,
            body: serde_json::to_value(body).map_err(ApiError::internal)?,
            headers: Vec::new(),
            verbatim: false,
        })
    }

    /// An answer whose keys are sent exactly as given, never re-cased (the
    /// price-on-plan forms, which the specification spells key by key).
    #[must_use]
    pub fn verbatim(status: StatusCode, body: Value) -> Self {
        Self {
            status,
            body,
            headers: Vec::new(),
            verbatim: true,
        }
    }

    /// Adds a header.
    #[must_use]
    pub fn with_header(mut self, name: HeaderName, value: &str) -> Self {
        if let Ok(v) = HeaderValue::from_str(value) {
            self.headers.push((name, v));
        }
        self
    }

    /// 200 with `body`.
    ///
    /// # Errors
    /// As [`Reply::new`].
    pub fn ok<T: Serialize>(body: &T) -> Result<Self, ApiError> {
        Self::new(StatusCode::OK, body)
    }

    /// 204 without a body.
    #[must_use]
    pub fn no_content() -> Self {
        Self {
            status: StatusCode::NO_CONTENT,
            body: Value::Null,
            headers: Vec::new(),
            verbatim: true,
        }
    }

    /// 201 with `body` and `Location: location`.
    ///
    /// # Errors
    /// As [`Reply::new`].
    pub fn created<T: Serialize>(body: &T, location: &str) -> Result<Self, ApiError> {
        let mut r = Self::new(StatusCode::CREATED, body)?;
        if let Ok(v) = HeaderValue::from_str(location) {
            r.headers.push((actix_web::http::header::LOCATION, v));
        }
        Ok(r)
    }
}

/// The caller's style (snake_case before authentication).
#[must_use]
pub fn style_of(req: &HttpRequest) -> Style {
    req.extensions()
        .get::<Caller>()
        .map_or(Style::Snake, |c| c.style)
}

impl Responder for Reply {
    type Body = BoxBody;

    fn respond_to(self, req: &HttpRequest) -> HttpResponse {
        let style = style_of(req);
        let mut body = if self.verbatim {
            self.body
        } else {
            casing::to_style(self.body, style)
        };
        // Row errors of a partly applied write (census, elections) name
        // their fields in the caller's style, as error details do.
        if let Some(errors) = body.get_mut("errors").and_then(Value::as_array_mut) {
            for field in errors.iter_mut().filter_map(|e| e.get_mut("field")) {
                if let Some(path) = field.as_str() {
                    *field = Value::String(casing::path_to_style(path, style));
                }
            }
        }
        let mut res = HttpResponse::build(self.status);
        for (name, value) in self.headers {
            res.insert_header((name, value));
        }
        if self.status == StatusCode::NO_CONTENT {
            return res.finish();
        }
        res.json(body)
    }
}
