//! Handlers, one file per resource. Each handler is annotated for the
//! OpenAPI document; `utoipa-actix-web` collects them as they are
//! registered, so a route cannot exist without its schema.

pub mod account;
pub mod census;
pub mod elections;
pub mod embed;
pub mod enrollments;
pub mod events;
pub mod groups;
pub mod health;
pub mod members;
pub mod onboarding;
pub mod params;
pub mod ping;
pub mod plans;
pub mod price_on_plan;
pub mod quotes;
pub mod test_helpers;
pub mod webhook;

use utoipa::IntoResponses;

use domain::error::Code;

use crate::error::{ApiError, ErrorBody};

/// A not-found said as `message`, the same way for an unknown resource,
/// another partner's and the other mode's; other errors pass through.
pub(crate) fn not_found_as(e: impl Into<ApiError>, message: &'static str) -> ApiError {
    let e = e.into();
    if e.code() == Code::NotFound {
        ApiError::not_found(message)
    } else {
        e
    }
}

/// The answers every authenticated operation can give (specification,
/// Endpoints).
#[derive(IntoResponses)]
pub enum CommonErrors {
    /// Missing, malformed or revoked key.
    #[response(status = 401, example = json!({"error": "unauthorized", "message": "missing, malformed or revoked API key"}))]
    Unauthorized(ErrorBody),
    /// A live key before live mode is enabled, or a missing capability.
    #[response(status = 403, example = json!({"error": "live_mode_disabled", "message": "live mode is not enabled for this partner yet"}))]
    Forbidden(ErrorBody),
    /// A rate limit is exhausted; `Retry-After` says when to retry.
    #[response(status = 429, example = json!({"error": "rate_limited", "message": "the requests rate limit is exhausted; retry after 12 s"}))]
    RateLimited(ErrorBody),
    /// The service failed; the request was not applied.
    #[response(status = 500, example = json!({"error": "server_error", "message": "the service failed; the request was not applied (request req_4be0a19c77d2)"}))]
    ServerError(ErrorBody),
    /// The backing store is unavailable (fail closed).
    #[response(status = 503, example = json!({"error": "not_configured", "message": "the backing store is unavailable"}))]
    Unavailable(ErrorBody),
}
