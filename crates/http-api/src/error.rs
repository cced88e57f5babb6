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

use domain::error::{Code, FieldError};
use domain::services::ServiceError;

/// The HTTP status of each code (specification, Errors): the one mapping.
/// A few framework answers keep `invalid_request` under another status
/// (405, 408, 413); their constructors say so.
#[must_use]
pub const fn status_of(code: Code) -> StatusCode {
    match code {
        Code::InvalidRequest => StatusCode::BAD_REQUEST,
        Code::Unauthorized => StatusCode::UNAUTHORIZED,
        Code::LiveModeDisabled | Code::Forbidden => StatusCode::FORBIDDEN,
        Code::NotFound => StatusCode::NOT_FOUND,
        Code::Conflict | Code::RatesPending => StatusCode::CONFLICT,
        Code::QuoteExpired | Code::SessionExpired => StatusCode::GONE,
        Code::CensusRequired
        | Code::MarketUnavailable
        | Code::AmountOutOfRange
        | Code::EmailNotAllowed
        | Code::VerificationFailed => StatusCode::UNPROCESSABLE_ENTITY,
        Code::RateLimited => StatusCode::TOO_MANY_REQUESTS,
        Code::ServerError => StatusCode::INTERNAL_SERVER_ERROR,
        Code::NotConfigured => StatusCode::SERVICE_UNAVAILABLE,
    }
}

/// An error answer.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: Code,
    message: String,
    details: Option<Vec<FieldError>>,
    /// `verification_failed` (the offer iframe): attempts left, on its
    /// one detail.
    attempts_remaining: Option<u32>,
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

impl From<FieldError> for Detail {
    fn from(e: FieldError) -> Self {
        Self {
            field: e.field,
            message: e.message,
            index: e.index,
        }
    }
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
    fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            status: status_of(code),
            code,
            message: message.into(),
            details: None,
            attempts_remaining: None,
            retry_after: None,
            source: None,
        }
    }

    /// 400 `invalid_request` with one entry per failing field.
    #[must_use]
    pub fn invalid(details: Vec<FieldError>) -> Self {
        ServiceError::Invalid(details).into()
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
            Code::InvalidRequest,
            format!("body: was not received within {secs} s; nothing was applied"),
        );
        e.status = StatusCode::REQUEST_TIMEOUT;
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
            Code::Unauthorized,
            "missing, malformed or revoked API key; send Authorization: Bearer psk_test_… or psk_live_…",
        )
    }

    /// 403 `live_mode_disabled`.
    #[must_use]
    pub fn live_mode_disabled() -> Self {
        Self::new(
            Code::LiveModeDisabled,
            "live mode is not enabled for this partner yet; use a test key until the agreements are executed",
        )
    }

    /// 403 `forbidden`.
    #[must_use]
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(Code::Forbidden, message)
    }

    /// 404 `not_found`.
    #[must_use]
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(Code::NotFound, message)
    }

    /// 405, reported as `invalid_request`.
    #[must_use]
    pub fn method_not_allowed(method: &str, path: &str) -> Self {
        let mut e = Self::new(
            Code::InvalidRequest,
            format!("{method} is not allowed on {path}"),
        );
        e.status = StatusCode::METHOD_NOT_ALLOWED;
        e.details = Some(vec![FieldError::new(
            "method",
            "is not allowed on this path; see the Allow header",
        )]);
        e
    }

    /// 409 `conflict`.
    #[must_use]
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(Code::Conflict, message)
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
            Code::InvalidRequest,
            format!("the body is larger than {} MiB", limit / (1024 * 1024)),
        );
        e.status = StatusCode::PAYLOAD_TOO_LARGE;
        e.details = Some(vec![FieldError::new("body", "is too large")]);
        e
    }

    /// 429 `rate_limited` with `Retry-After`.
    #[must_use]
    pub fn rate_limited(policy: &str, retry_after: i64) -> Self {
        let mut e = Self::new(
            Code::RateLimited,
            format!("the {policy} rate limit is exhausted; retry after {retry_after} s"),
        );
        e.retry_after = Some(retry_after.max(1));
        e
    }

    /// 500 `server_error`; the cause goes to the log, never to the caller.
    #[must_use]
    pub fn internal(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        ServiceError::Internal(source.into()).into()
    }

    /// 503 `not_configured`: the store cannot be reached (fail closed).
    #[must_use]
    pub fn unavailable(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        ServiceError::Unavailable(source.into()).into()
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
    pub const fn code(&self) -> Code {
        self.code
    }

    /// The envelope.
    #[must_use]
    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            error: self.code.as_str().to_owned(),
            message: self.message.clone(),
            details: self
                .details
                .as_ref()
                .map(|d| d.iter().cloned().map(Detail::from).collect()),
        }
    }
}

impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> Self {
        let mut out = Self::new(e.code(), e.message());
        out.retry_after = e.retry_after().map(i64::from);
        match e {
            ServiceError::Invalid(details) => out.details = Some(details),
            ServiceError::Embed(
                r @ domain::services::EmbedRefusal::VerificationFailed { attempts_remaining },
            ) => {
                out.details = Some(vec![FieldError::new("code", r.to_string())]);
                out.attempts_remaining = Some(attempts_remaining);
            }
            ServiceError::Unavailable(source) | ServiceError::Internal(source) => {
                out.source = Some(source);
            }
            _ => {}
        }
        out
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
        match self.attempts_remaining {
            None => res.json(self.body()),
            // The offer iframe's endpoints answer camelCase: the one
            // detail says how many codes may still be tried.
            Some(n) => {
                let mut body = serde_json::to_value(self.body()).unwrap_or_default();
                if let Some(serde_json::Value::Object(d)) = body.pointer_mut("/details/0") {
                    d.insert("attemptsRemaining".to_owned(), n.into());
                }
                res.json(body)
            }
        }
    }
}

/// Marks a response whose body is already the envelope.
#[derive(Debug, Clone, Copy)]
pub struct Enveloped;

#[cfg(test)]
mod tests {
    use domain::services::{ElectionRefusal, EmbedRefusal, EnrollmentRefusal, QuoteRefusal};
    use domain::store::Conflict;

    use super::*;

    #[test]
    fn every_code_has_its_specified_status() {
        let expected = |c: Code| match c {
            Code::InvalidRequest => 400,
            Code::Unauthorized => 401,
            Code::LiveModeDisabled | Code::Forbidden => 403,
            Code::NotFound => 404,
            Code::Conflict | Code::RatesPending => 409,
            Code::QuoteExpired | Code::SessionExpired => 410,
            Code::CensusRequired
            | Code::MarketUnavailable
            | Code::AmountOutOfRange
            | Code::EmailNotAllowed
            | Code::VerificationFailed => 422,
            Code::RateLimited => 429,
            Code::ServerError => 500,
            Code::NotConfigured => 503,
        };
        for code in Code::ALL {
            assert_eq!(status_of(code).as_u16(), expected(code), "{code}");
            let api = ApiError::new(code, "m");
            assert_eq!(api.status_code(), status_of(code));
            assert_eq!(api.body().error, code.as_str());
        }
    }

    #[test]
    fn service_errors_map_to_the_specified_codes() {
        let cases: [(ServiceError, u16, &str); 4] = [
            (
                ServiceError::Invalid(vec![FieldError::new("domain", "bad")]),
                400,
                "invalid_request",
            ),
            (ServiceError::NotFound, 404, "not_found"),
            (
                ServiceError::Conflict(Conflict::DomainTaken),
                409,
                "conflict",
            ),
            (
                ServiceError::Unavailable("down".into()),
                503,
                "not_configured",
            ),
        ];
        for (e, status, code) in cases {
            let api = ApiError::from(e);
            assert_eq!(
                (api.status_code().as_u16(), api.code().as_str()),
                (status, code)
            );
        }
        let one = ApiError::invalid_field("limit", "must be an integer from 1 to 200");
        assert_eq!(
            one.body().message,
            "limit: must be an integer from 1 to 200"
        );
    }

    #[test]
    fn refusals_answer_with_their_status_code_and_message() {
        let cases: [(ServiceError, u16, &str, &str); 5] = [
            (
                EnrollmentRefusal::AlreadyEnrolled.into(),
                409,
                "conflict",
                "the group already has an enrollment",
            ),
            (
                EmbedRefusal::Stale.into(),
                410,
                "quote_expired",
                "the census changed since this quote; re-quote",
            ),
            (
                ElectionRefusal::NoCapability.into(),
                403,
                "forbidden",
                "this key lacks the elections capability",
            ),
            (
                QuoteRefusal::NotInReview {
                    status: domain::quote::QuoteStatus::Ready,
                }
                .into(),
                409,
                "conflict",
                "the quote is ready; only an in_review quote can be finalized",
            ),
            (
                ServiceError::RatesPending {
                    retry_after_secs: 2,
                },
                409,
                "rates_pending",
                "the market comparison of the census is still running; retry in 2 s",
            ),
        ];
        for (e, status, code, message) in cases {
            let api = ApiError::from(e);
            let body = serde_json::to_value(api.body()).unwrap();
            assert_eq!(api.status_code().as_u16(), status, "{body}");
            assert_eq!(body["error"], code);
            assert_eq!(body["message"], message);
            assert!(body.get("details").is_none(), "{body}");
        }
        let pending = ApiError::from(ServiceError::RatesPending {
            retry_after_secs: 2,
        })
        .error_response();
        assert_eq!(pending.headers().get(header::RETRY_AFTER).unwrap(), "2");
    }

    #[test]
    fn an_engine_overflow_is_a_typed_422() {
        let api = ApiError::from(ServiceError::from(pricing_core::PricingError::Overflow));
        assert_eq!(
            (api.status_code().as_u16(), api.code()),
            (422, Code::AmountOutOfRange)
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
