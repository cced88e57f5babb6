//! Embed sessions: `POST /groups/{groupId}/embed-sessions` (in `/v1`),
//! and the JSON endpoints of the offer page it links to ([`iframe`]).
//! The page itself, `GET /embed/{token}`, is the HTML adapter's
//! (`web::offer`).

pub mod iframe;

use actix_web::{post, web};

use domain::ids::{GroupId, QuoteId};

use crate::auth::Caller;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{Body, Optional, PathId};
use crate::reply::Reply;
use crate::routes::CommonErrors;
use crate::routes::params::{GroupNotFound, GroupPath, IdempotencyKey};
use crate::state::AppState;
use crate::wire::embed::{EmbedSessionInput, EmbedSessionOut};
use crate::wire::timestamp;

/// Create an embed session: a URL of the quote's offer page to show in an
/// iframe, valid 30 minutes.
///
/// The body may be empty: the page then shows the group's newest `ready`,
/// unexpired quote. The URL is served outside `/v1` and needs no key; it
/// carries an opaque random token (stored hashed, naming no id). The page
/// may be framed only from the partner's embed origins; there the
/// employer verifies a work email at the group's domain and accepts the
/// offer (`quote.accepted`).
/// After 30 minutes the page answers 410.
#[utoipa::path(
    tag = "Embed sessions",
    operation_id = "create_embed_session",
    params(GroupPath, IdempotencyKey),
    request_body = EmbedSessionInput,
    responses(
        (status = 201, description = "The embed session", body = EmbedSessionOut),
        (status = 400, description = "A field is invalid, or `quote_id` is not a quote of this group", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "quote_id: is not a quote of this group",
                          "details": [{"field": "quote_id", "message": "is not a quote of this group"}]})),
        GroupNotFound,
        (status = 409, description = "The group has no ready, unexpired quote, or the named quote is not `ready`", body = ErrorBody,
         example = json!({"error": "conflict", "message": "the group has no ready, unexpired quote; create a quote first"})),
        (status = 410, description = "The quote passed its `expires_at`, or the census changed its rating inputs since it was priced (stale): re-quote", body = ErrorBody,
         example = json!({"error": "quote_expired", "message": "the quote passed its expires_at; create a new quote"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[post("/groups/{groupId}/embed-sessions")]
pub async fn create_embed_session(
    state: web::Data<AppState>,
    caller: Caller,
    id: PathId<GroupId>,
    Body(input, ..): Body<EmbedSessionInput, Optional>,
) -> Result<Reply, ApiError> {
    let quote_id = match input.quote_id.as_deref().map(QuoteId::parse) {
        None => None,
        Some(Ok(q)) => Some(q),
        Some(Err(_)) => {
            return Err(ApiError::invalid_field(
                "quote_id",
                "must be a quote id (qt_ and 12 hex characters)",
            ));
        }
    };
    let created = state
        .embed_sessions
        .create(&caller.scope(), &id, quote_id.as_ref())
        .await
        .map_err(PathId::<GroupId>::missing)?;
    Reply::created(
        &EmbedSessionOut {
            id: created.session.id.as_str().to_owned(),
            url: created.url.clone(),
            expires_at: timestamp(created.session.expires_at),
        },
        &created.url,
    )
}
