//! `PUT /webhook` and `POST /webhook/test` (specification, `PUT /webhook
//! and POST /webhook/test`; contract section 6).

use actix_web::http::header;
use actix_web::{HttpRequest, post, put, web};

use crate::auth::Caller;
use crate::body;
use crate::error::{ApiError, ErrorBody};
use crate::reply::Reply;
use crate::routes::{CommonErrors, not_found_as};
use crate::state::AppState;
use crate::wire::webhook::{WebhookIn, WebhookOut, WebhookTestOut};

/// Register the webhook endpoint of the key's mode.
///
/// One endpoint per mode: a test key registers the test endpoint, a live
/// key the live one. Every call replaces the URL and issues a fresh
/// `whsec_` secret, shown only in this answer — which is how secrets
/// rotate. The answer is never stored for idempotent replay (it carries
/// the secret): a retry registers again and the last secret answered is
/// the one in force.
#[utoipa::path(
    tag = "Webhooks",
    operation_id = "put_webhook",
    params(("Idempotency-Key" = Option<String>, Header, description = "Accepted; the answer is not replayed (it carries the secret)")),
    request_body(content = WebhookIn, description = "The HTTPS endpoint"),
    responses(
        (status = 200, description = "Registered; the secret is shown once", body = WebhookOut),
        (status = 400, description = "Not an https:// URL, or a host that is or resolves to a non-public address (loopback, private, link-local, unique-local, reserved, or an IPv6 form embedding one; see docs/webhooks.md)", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "url: must be an https:// URL",
                          "details": [{"field": "url", "message": "must be an https:// URL"}]})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[put("/webhook")]
pub async fn put_webhook(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    bytes: web::Bytes,
) -> Result<Reply, ApiError> {
    let input: WebhookIn = body::parse(&req, &bytes, &[])?;
    let registered = state
        .webhooks
        .register(&caller.principal.scope(), &input.url)
        .await?;
    Ok(Reply::ok(&WebhookOut {
        url: registered.url,
        secret: registered.secret,
    })?
    .with_header(header::CACHE_CONTROL, "no-store"))
}

/// Send a signed `ping` to the registered endpoint.
///
/// The first attempt is made before answering and its result reported;
/// failed attempts are retried after 1 s, 5 s and 25 s like any event's.
#[utoipa::path(
    tag = "Webhooks",
    operation_id = "test_webhook",
    responses(
        (status = 200, description = "The ping's first attempt", body = WebhookTestOut),
        (status = 404, description = "No endpoint is registered for this mode", body = ErrorBody,
         example = json!({"error": "not_found", "message": "no webhook endpoint is registered in this mode"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[post("/webhook/test")]
pub async fn test_webhook(state: web::Data<AppState>, caller: Caller) -> Result<Reply, ApiError> {
    let sent = state
        .webhooks
        .test(&caller.principal.scope())
        .await
        .map_err(|e| not_found_as(e, "no webhook endpoint is registered in this mode"))?;
    Reply::ok(&WebhookTestOut {
        id: sent.id.as_str().to_owned(),
        event_type: "ping".to_owned(),
        delivered: sent.delivered,
        status_code: sent.status_code,
    })
}
