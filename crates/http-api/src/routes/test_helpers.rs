//! Test-mode helpers (contract section 7): what underwriting and the
//! provisioned company do in live mode, on demand for test keys. A live
//! key gets 404, as for any path that does not exist for it.

use actix_web::{post, web};

use domain::ids::{GroupId, QuoteId};
use domain::mode::Mode;

use crate::auth::Caller;
use crate::error::{ApiError, ErrorBody};
use crate::extract::PathId;
use crate::reply::Reply;
use crate::routes::CommonErrors;
use crate::routes::params::IdempotencyKey;
use crate::state::AppState;
use crate::wire::groups::GroupOut;
use crate::wire::quotes::QuoteOut;

fn test_only(caller: &Caller) -> Result<(), ApiError> {
    if caller.principal.mode == Mode::Test {
        Ok(())
    } else {
        Err(ApiError::not_found("test helpers exist for test keys only"))
    }
}

/// Finalize an `in_review` quote, as underwriting would: it becomes
/// `ready` and `quote.finalized` is sent. Test keys only.
#[utoipa::path(
    tag = "Test helpers",
    operation_id = "finalize_quote",
    params(
        ("id" = String, Path, description = "`qt_` id", example = "qt_1a2b3c4d5e6f"),
        IdempotencyKey
    ),
    responses(
        (status = 200, description = "The finalized quote", body = QuoteOut),
        (status = 400, description = "The Idempotency-Key was already used with another request", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "Idempotency-Key: was already used with another body, method or path",
                          "details": [{"field": "Idempotency-Key", "message": "was already used with another body, method or path"}]})),
        (status = 404, description = "No such quote in test mode, or a live key", body = ErrorBody,
         example = json!({"error": "not_found", "message": "no such quote in this mode"})),
        (status = 409, description = "The quote is not `in_review`", body = ErrorBody,
         example = json!({"error": "conflict", "message": "the quote is ready; only an in_review quote can be finalized"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[post("/test_helpers/quotes/{id}/finalize")]
pub async fn finalize_quote(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<Reply, ApiError> {
    test_only(&caller)?;
    let id = PathId::<QuoteId>::parse(&path)?;
    let quote = state
        .quotes
        .finalize(&caller.scope(), &id)
        .await
        .map_err(PathId::<QuoteId>::missing)?;
    // Answered as `GET /quotes/{id}` reads it.
    crate::routes::quotes::quote_reply(&state, &caller, &quote)
}

/// Take an enrolled group live, as the provisioned company would:
/// `company_state` `sandbox` → `prod`, status `active`, and
/// `group.state_changed` is sent. Test keys only.
#[utoipa::path(
    tag = "Test helpers",
    operation_id = "go_live",
    params(
        ("groupId" = String, Path, description = "`grp_` id", example = "grp_8c1e4a2f9b3d"),
        IdempotencyKey
    ),
    responses(
        (status = 200, description = "The group, now `active`", body = GroupOut),
        (status = 400, description = "The Idempotency-Key was already used with another request", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "Idempotency-Key: was already used with another body, method or path",
                          "details": [{"field": "Idempotency-Key", "message": "was already used with another body, method or path"}]})),
        (status = 404, description = "No such group in test mode, or a live key", body = ErrorBody,
         example = json!({"error": "not_found", "message": "no such group in this mode"})),
        (status = 409, description = "The group has no enrollment yet, or is already live", body = ErrorBody,
         example = json!({"error": "conflict", "message": "the group is already live"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[post("/test_helpers/groups/{groupId}/go_live")]
pub async fn go_live(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<Reply, ApiError> {
    test_only(&caller)?;
    let id = PathId::<GroupId>::parse(&path)?;
    let group = state
        .enrollments
        .go_live(&caller.scope(), &id)
        .await
        .map_err(PathId::<GroupId>::missing)?;
    Reply::ok(&GroupOut::from(&group))
}
