//! The one error envelope `{ error, message, details? }` and the mapping
//! of every failure onto it (specification, Errors).
//!
//! [`ApiError`] is what handlers and middleware return. Its body is built
//! in snake_case; the outer middleware re-cases `details[].field` for
//! camelCase callers, names the request id in a 500, and wraps any body
//! the framework produced on its own, so no default body ever leaks.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;

use domain::error::FieldError;
use domain::services::ServiceError;

/// An error answer.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
    details: Option<Vec<FieldError>>,
    retry_after: Option<i64>,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

/// The envelope as serialised.
#[derive(Debug, Serialize, serde::Deserialize, utoipa::ToSchema)]
#[schema(example = json!({
    "error": "invalid_request",
    "message": "the request is invalid",
    "details": [{"field": "domain", "message": "must be a lowercase domain name such as example.com"}]
}))]
pub struct ErrorBody {
    /// Stable machine-readable code: `invalid_request`, `unauthorized`,
    /// `live_mode_disabled`, `forbidden`, `not_found`, `conflict`,
    /// `rates_pending`, `quote_expired`, `census_required`,
    /// `market_unavailable`, `amount_out_of_range`, `rate_limited`,
    /// `server_error` or `not_configured`.
    #[schema(example = "invalid_request")]
    pub error: String,
    /// Human-readable message; its wording may change.
    pub message: String,
    /// One entry per failing field (`invalid_request` only; absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub details: Option<Vec<Detail>>,
}

/// One failing field.
#[derive(Debug, Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct Detail {
    /// Field path in the caller's style, e.g. `members[3].first_name`.
    pub field: String,
    /// Why it failed.
    pub message: String,
    /// Zero-based row index for array payloads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.code,
            self.message
        )
    }
}

impl std::error::Error for ApiError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        let source: &(dyn std::error::Error + 'static) = self.source.as_deref()?;
        Some(source)
    }
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            details: None,
            retry_after: None,
            source: None,
        }
    }

    /// 400 `invalid_request` with one entry per failing field.
    #[must_use]
    pub fn invalid(details: Vec<FieldError>) -> Self {
        let message = match details.as_slice() {
            [one] => format!("{}: {}", one.field, one.message),
            _ => format!("{} fields are invalid; see details", details.len()),
        };
        let mut e = Self::new(StatusCode::BAD_REQUEST, "invalid_request", message);
        e.details = Some(details);
        e
    }

    /// 400 `invalid_request` about one field.
    #[must_use]
    pub fn invalid_field(field: &str, message: &str) -> Self {
        Self::invalid(vec![FieldError::new(field, message)])
    }

    /// 408 `invalid_request`: the body did not arrive within `secs`
    /// seconds of the request's head; nothing was applied.
    #[must_use]
    pub fn body_timeout(secs: u64) -> Self {
        let mut e = Self::new(
            StatusCode::REQUEST_TIMEOUT,
            "invalid_request",
            format!("body: was not received within {secs} s; nothing was applied"),
        );
        e.details = Some(vec![FieldError::new(
            "body",
            format!("was not received within {secs} s"),
        )]);
        e
    }

    /// 401 `unauthorized`.
    #[must_use]
    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "missing, malformed or revoked API key; send Authorization: Bearer psk_test_… or psk_live_…",
        )
    }

    /// 403 `live_mode_disabled`.
    #[must_use]
    pub fn live_mode_disabled() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "live_mode_disabled",
            "live mode is not enabled for this partner yet; use a test key until the agreements are executed",
        )
    }

    /// 403 `forbidden`.
    #[must_use]
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    /// 404 `not_found`.
    #[must_use]
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 405, reported as `invalid_request`.
    #[must_use]
    pub fn method_not_allowed(method: &str, path: &str) -> Self {
        let mut e = Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "invalid_request",
            format!("{method} is not allowed on {path}"),
        );
        e.details = Some(vec![FieldError::new(
            "method",
            "is not allowed on this path; see the Allow header",
        )]);
        e
    }

    /// 409 `conflict`.
    #[must_use]
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, "conflict", message)
    }

    /// 409 `conflict` for a request whose `Idempotency-Key` is still
    /// executing (`Retry-After: 1`).
    #[must_use]
    pub fn idempotency_in_flight() -> Self {
        let mut e = Self::conflict(
            "a request with this Idempotency-Key is still executing; retry after a second",
        );
        e.retry_after = Some(1);
        e
    }

    /// 413, reported as `invalid_request`.
    #[must_use]
    pub fn too_large(limit: usize) -> Self {
        let mut e = Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_request",
            format!("the body is larger than {} MiB", limit / (1024 * 1024)),
        );
        e.details = Some(vec![FieldError::new("body", "is too large")]);
        e
    }

    /// 429 `rate_limited` with `Retry-After`.
    #[must_use]
    pub fn rate_limited(policy: &str, retry_after: i64) -> Self {
        let mut e = Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            format!("the {policy} rate limit is exhausted; retry after {retry_after} s"),
        );
        e.retry_after = Some(retry_after.max(1));
        e
    }

    /// 500 `server_error`; the cause goes to the log, never to the caller.
    #[must_use]
    pub fn internal(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        let mut e = Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "the service failed; the request was not applied",
        );
        e.source = Some(source.into());
        e
    }

    /// 503 `not_configured`: the store cannot be reached (fail closed).
    #[must_use]
    pub fn unavailable(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        let mut e = Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "not_configured",
            "the backing store is unavailable; retry with the same Idempotency-Key",
        );
        e.source = Some(source.into());
        e
    }

    /// The answer to `req`, keeping the error (and its cause chain) on the
    /// response for the log line.
    #[must_use]
    pub fn answer(
        self,
        req: actix_web::dev::ServiceRequest,
    ) -> actix_web::dev::ServiceResponse<actix_web::body::BoxBody> {
        req.error_response(self)
    }

    /// The machine-readable code.
    #[must_use]
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// The envelope.
    #[must_use]
    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            error: self.code.to_owned(),
            message: self.message.clone(),
            details: self.details.as_ref().map(|d| {
                d.iter()
                    .map(|f| Detail {
                        field: f.field.clone(),
                        message: f.message.clone(),
                        index: f.index,
                    })
                    .collect()
            }),
        }
    }
}

impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::Invalid(details) => Self::invalid(details),
            ServiceError::NotFound => Self::not_found("no such resource in this mode"),
            ServiceError::Conflict(message) => Self::conflict(message),
            ServiceError::Forbidden(message) => Self::forbidden(message),
            e @ ServiceError::RatesPending { retry_after_secs } => {
                let mut out = Self::new(StatusCode::CONFLICT, "rates_pending", e.to_string());
                out.retry_after = Some(i64::from(retry_after_secs));
                out
            }
            ServiceError::QuoteExpired(message) => {
                Self::new(StatusCode::GONE, "quote_expired", message)
            }
            e @ ServiceError::CensusRequired => Self::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "census_required",
                e.to_string(),
            ),
            e @ ServiceError::MarketUnavailable => Self::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "market_unavailable",
                e.to_string(),
            ),
            e @ ServiceError::AmountOutOfRange => Self::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "amount_out_of_range",
                e.to_string(),
            ),
            ServiceError::Unavailable(source) => Self::unavailable(source),
            ServiceError::Internal(source) => Self::internal(source),
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let mut res = HttpResponse::build(self.status);
        if let Some(secs) = self.retry_after {
            res.insert_header((header::RETRY_AFTER, HeaderValue::from(secs.max(1))));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            res.insert_header((header::WWW_AUTHENTICATE, "Bearer"));
        }
        res.extensions_mut().insert(Enveloped);
        res.json(self.body())
    }
}

/// Marks a response whose body is already the envelope.
#[derive(Debug, Clone, Copy)]
pub struct Enveloped;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_errors_map_to_the_specified_codes() {
        let cases: [(ServiceError, u16, &str); 4] = [
            (
                ServiceError::Invalid(vec![FieldError::new("domain", "bad")]),
                400,
                "invalid_request",
            ),
            (ServiceError::NotFound, 404, "not_found"),
            (ServiceError::Conflict("held".into()), 409, "conflict"),
            (
                ServiceError::Unavailable("down".into()),
                503,
                "not_configured",
            ),
        ];
        for (e, status, code) in cases {
            let api = ApiError::from(e);
            assert_eq!((api.status_code().as_u16(), api.code()), (status, code));
        }
        let one = ApiError::invalid_field("limit", "must be an integer from 1 to 200");
        assert_eq!(
            one.body().message,
            "limit: must be an integer from 1 to 200"
        );
    }

    #[test]
    fn an_engine_overflow_is_a_typed_422() {
        let api = ApiError::from(ServiceError::from(pricing_core::PricingError::Overflow));
        assert_eq!(
            (api.status_code().as_u16(), api.code()),
            (422, "amount_out_of_range")
        );
        let body = serde_json::to_value(api.body()).unwrap();
        assert_eq!(body["error"], "amount_out_of_range");
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
        assert!(body.get("details").is_none(), "{body}");
        // A rate-card failure stays a service-side 500.
        let card = ApiError::from(ServiceError::from(pricing_core::PricingError::RateCard(
            "bad layer".into(),
        )));
        assert_eq!(card.status_code().as_u16(), 500);
    }
}
