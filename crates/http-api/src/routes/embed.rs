//! Embed sessions: `POST /groups/{groupId}/embed-sessions` (in `/v1`)
//! and the offer page it links to, `GET /embed/{token}` (outside `/v1`,
//! unauthenticated: the signed token is the credential).

pub mod iframe;
pub mod page;

use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, post, web};

use domain::enrollment::QuoteUse;
use domain::ids::QuoteId;
use domain::services::embed::OpenError;

use crate::auth::Caller;
use crate::body;
use crate::error::{ApiError, Enveloped, ErrorBody};
use crate::reply::Reply;
use crate::routes::{CommonErrors, group_id, group_not_found as not_found};
use crate::state::AppState;
use crate::wire::embed::{EmbedSessionInput, EmbedSessionOut};
use crate::wire::timestamp;

/// Create an embed session: a URL of the quote's offer page to show in an
/// iframe, valid 30 minutes.
///
/// The body may be empty: the page then shows the group's newest `ready`,
/// unexpired quote. The URL is served outside `/v1` and needs no key; its
/// token is signed and carries the session, the quote and the expiry.
/// After 30 minutes the page answers 410.
#[utoipa::path(
    tag = "Embed sessions",
    operation_id = "create_embed_session",
    params(
        ("groupId" = String, Path, description = "`grp_` id", example = "grp_8c1e4a2f9b3d"),
        ("Idempotency-Key" = Option<String>, Header, description = "Makes a retry safe")
    ),
    request_body = EmbedSessionInput,
    responses(
        (status = 201, description = "The embed session", body = EmbedSessionOut),
        (status = 400, description = "A field is invalid, or `quote_id` is not a quote of this group", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "quote_id: is not a quote of this group",
                          "details": [{"field": "quote_id", "message": "is not a quote of this group"}]})),
        (status = 404, description = "No such group for this partner and mode", body = ErrorBody,
         example = json!({"error": "not_found", "message": "no such group in this mode"})),
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
    req: HttpRequest,
    path: web::Path<String>,
    bytes: web::Bytes,
) -> Result<Reply, ApiError> {
    let id = group_id(&path)?;
    let input: EmbedSessionInput = body::parse_optional(&req, &bytes)?;
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
        .create(&caller.principal.scope(), &id, quote_id.as_ref())
        .await
        .map_err(|e| not_found(e.into()))?;
    Reply::created(
        &EmbedSessionOut {
            id: created.session.id.as_str().to_owned(),
            url: created.url.clone(),
            expires_at: timestamp(created.session.expires_at),
        },
        &created.url,
    )
}

/// The offer page of an embed session (HTML, meant for an iframe).
///
/// Shows the quote's plan, monthly total, PEPM, annual total and its
/// comparison with the prior cost, with a bar chart. Framing is allowed
/// from any origin; nothing is cached. A bad token is 404; an expired
/// session is 410, and so is a session whose quote expired or went stale
/// (the census changed since): its page says so and shows no price. Each
/// is a small HTML page.
#[utoipa::path(
    tag = "Embed sessions",
    operation_id = "show_offer_page",
    params(("token" = String, Path, description = "The signed token of the session's `url`")),
    responses(
        (status = 200, description = "The offer page", content_type = "text/html", body = String,
         example = json!("<!doctype html>\n<html lang=\"en\">…<h1>Diamond</h1>…<svg role=\"img\" …>…</svg>…</html>")),
        (status = 404, description = "The token is not valid", content_type = "text/html", body = String,
         example = json!("<!doctype html>\n<html lang=\"en\">…<h1>Offer not found</h1>…</html>")),
        (status = 410, description = "The session expired (30 minutes after creation)", content_type = "text/html", body = String,
         example = json!("<!doctype html>\n<html lang=\"en\">…<h1>This offer link expired</h1>…</html>"))
    )
)]
#[get("/embed/{token}")]
pub async fn show_offer_page(
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    match state.embed_sessions.open(&path).await {
        Ok(offer) => {
            let figures = offer.quote.body.market().ok_or_else(|| {
                ApiError::internal("an embed session's quote has no market figures")
            })?;
            Ok(html(
                StatusCode::OK,
                page::offer(figures, &timestamp(offer.stored.session.expires_at)),
                &offer.frame_ancestors,
            ))
        }
        Err(OpenError::NotFound) => Ok(html(StatusCode::NOT_FOUND, page::not_found(), "*")),
        Err(OpenError::Expired { frame_ancestors }) => {
            Ok(html(StatusCode::GONE, page::expired(), &frame_ancestors))
        }
        Err(OpenError::Outdated {
            why,
            frame_ancestors,
        }) => Ok(html(
            StatusCode::GONE,
            page::outdated(why == QuoteUse::Stale),
            &frame_ancestors,
        )),
        Err(OpenError::Service(e)) => Err(e.into()),
    }
}

/// An HTML answer that pages of `frame_ancestors` may frame, never cached.
fn html(status: StatusCode, body: String, frame_ancestors: &str) -> HttpResponse {
    let mut res = HttpResponse::build(status);
    res.content_type("text/html; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            format!(
                "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'self'; \
connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors {frame_ancestors}"
            ),
        ))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"));
    // The page is the whole answer of a 404 or 410 too: the marker keeps
    // the outer middleware from replacing it with the JSON envelope.
    if !status.is_success() {
        res.extensions_mut().insert(Enveloped);
    }
    res.body(body)
}
