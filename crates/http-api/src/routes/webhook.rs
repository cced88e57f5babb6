//! `PUT /webhook` and `POST /webhook/test` (specification, `PUT /webhook
//! and POST /webhook/test`; contract section 6), `GET` and `DELETE
//! /webhook` and the delivery log (partner portal §3).

use actix_web::http::header;
use actix_web::{HttpRequest, delete, get, post, put, web};
use domain::ids::EventId;
use domain::ports::{rfc3339, rfc3339_ms};
use domain::webhook::attempt::{AttemptFilter, AttemptOutcome};

use crate::auth::Caller;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{Body, Optional};
use crate::page;
use crate::reply::Reply;
use crate::routes::params::IdempotencyKey;
use crate::routes::{CommonErrors, not_found_as};
use crate::state::AppState;
use crate::wire::webhook::{
    AttemptList, AttemptOut, EndpointOut, ReplayIn, ReplayOut, RotateIn, RotateOut,
    SecretRotationOut, WebhookIn, WebhookOut, WebhookTestOut,
};

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
    Body(input, ..): Body<WebhookIn>,
) -> Result<Reply, ApiError> {
    let registered = state.webhooks.register(&caller.scope(), &input.url).await?;
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
    params(IdempotencyKey),
    responses(
        (status = 200, description = "The ping's first attempt", body = WebhookTestOut),
        (status = 400, description = "The Idempotency-Key was already used with another request", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "Idempotency-Key: was already used with another body, method or path",
                          "details": [{"field": "Idempotency-Key", "message": "was already used with another body, method or path"}]})),
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
        .test(&caller.scope(), caller.principal.partner.kind)
        .await
        .map_err(|e| not_found_as(e, NO_ENDPOINT))?;
    Reply::ok(&WebhookTestOut {
        id: sent.id.as_str().to_owned(),
        event_type: "ping".to_owned(),
        delivered: sent.delivered,
        status_code: sent.status_code,
    })
}

/// The not-found of the webhook operations.
const NO_ENDPOINT: &str = "no webhook endpoint is registered in this mode";

/// Read the registered endpoint of the key's mode: its URL, state and
/// health, never its secret.
#[utoipa::path(
    tag = "Webhooks",
    operation_id = "get_webhook",
    responses(
        (status = 200, description = "The endpoint", body = EndpointOut),
        (status = 404, description = "No endpoint is registered for this mode", body = ErrorBody,
         example = json!({"error": "not_found", "message": "no webhook endpoint is registered in this mode"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[get("/webhook")]
pub async fn get_webhook(state: web::Data<AppState>, caller: Caller) -> Result<Reply, ApiError> {
    let endpoint = state
        .webhooks
        .endpoint(&caller.scope())
        .await
        .map_err(|e| not_found_as(e, NO_ENDPOINT))?;
    let secret_rotation = endpoint
        .previous_secret
        .as_ref()
        .map(|p| SecretRotationOut {
            previous_secret_expires_at: rfc3339(p.expires_at),
        });
    Reply::ok(&EndpointOut {
        url: endpoint.url,
        state: endpoint.state,
        created_at: rfc3339(endpoint.created_at),
        failing_since: endpoint.failing_since_ms.map(rfc3339_ms),
        secret_rotation,
    })
}

/// Delete the endpoint of the key's mode.
///
/// Its pending deliveries are cancelled (a `cancelled` attempt in the
/// delivery log; the event's delivery becomes `no_endpoint`). Events
/// created while no endpoint is registered stay readable through
/// `GET /events` for 30 days and are not delivered.
#[utoipa::path(
    tag = "Webhooks",
    operation_id = "delete_webhook",
    responses(
        (status = 204, description = "Deleted; pending deliveries cancelled"),
        (status = 404, description = "No endpoint is registered for this mode", body = ErrorBody,
         example = json!({"error": "not_found", "message": "no webhook endpoint is registered in this mode"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[delete("/webhook")]
pub async fn delete_webhook(state: web::Data<AppState>, caller: Caller) -> Result<Reply, ApiError> {
    state
        .webhooks
        .delete(&caller.scope())
        .await
        .map_err(|e| not_found_as(e, NO_ENDPOINT))?;
    Ok(Reply::no_content())
}

/// Filters of the delivery log.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeliveryParams {
    /// Only this event's attempts.
    #[param(example = "evt_5d1c0a9b3e27")]
    pub event_id: Option<String>,
    /// Only attempts with this outcome: `succeeded`, `failed` or
    /// `cancelled`.
    #[param(example = "failed")]
    pub status: Option<String>,
}

/// The delivery log of the key's mode: every attempt for 30 days, newest
/// first, with its outcome, failure reason, latency and the first 1 KiB
/// of the answer.
#[utoipa::path(
    tag = "Webhooks",
    operation_id = "list_webhook_deliveries",
    params(DeliveryParams, crate::routes::groups::PageParams),
    responses(
        (status = 200, description = "A page of attempts", body = AttemptList),
        (status = 400, description = "A bad filter, `limit` or `cursor`", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "status: must be succeeded, failed or cancelled",
                          "details": [{"field": "status", "message": "must be succeeded, failed or cancelled"}]})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[get("/webhook/deliveries")]
pub async fn list_deliveries(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
) -> Result<Reply, ApiError> {
    let params = web::Query::<DeliveryParams>::from_query(req.query_string())
        .map_err(|_| ApiError::invalid_field("query", "is not a valid query string"))?
        .into_inner();
    let filter = AttemptFilter {
        event_id: params
            .event_id
            .map(|id| {
                EventId::parse(&id)
                    .map_err(|_| ApiError::invalid_field("event_id", "is not an evt_ id"))
            })
            .transpose()?,
        outcome: params
            .status
            .map(|s| {
                AttemptOutcome::parse(&s).ok_or_else(|| {
                    ApiError::invalid_field("status", "must be succeeded, failed or cancelled")
                })
            })
            .transpose()?,
    };
    let request = page::request(&req, DELIVERIES)?;
    let page = state
        .webhooks
        .deliveries(&caller.scope(), &filter, &request)
        .await?;
    Reply::ok(&AttemptList {
        next_cursor: page::next_cursor(DELIVERIES, &page),
        deliveries: page
            .items
            .into_iter()
            .map(|a| AttemptOut {
                id: a.id,
                event_id: a.event_id.to_string(),
                event_type: a.event_type.as_str().to_owned(),
                attempt: a.attempt,
                at: rfc3339_ms(a.at_ms),
                status_code: a.status_code,
                latency_ms: a.latency_ms,
                outcome: a.outcome,
                failure_reason: a.failure_reason,
                response_body: a.response_body,
            })
            .collect(),
    })
}

/// The list name bound into the delivery log's cursors.
const DELIVERIES: &str = "webhook_deliveries";

/// Rotate the signing secret of the key's mode.
///
/// A fresh secret signs every delivery from now on; the current one keeps
/// signing beside it for the grace period, so each delivery carries both
/// signatures (`webhook-signature: v1,<new> v1,<old>`) and a receiver can
/// switch without losing a message. The answer carries the new secret once
/// and is never stored for idempotent replay.
#[utoipa::path(
    tag = "Webhooks",
    operation_id = "rotate_webhook_secret",
    params(("Idempotency-Key" = Option<String>, Header, description = "Accepted; the answer is not replayed (it carries the secret)")),
    request_body(content = Option<RotateIn>, description = "The grace period (optional)", example = json!({"grace_period_hours": 24})),
    responses(
        (status = 200, description = "Rotated; the new secret is shown once", body = RotateOut),
        (status = 400, description = "A grace period out of 0..72 hours", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "grace_period_hours: must be a whole number of hours from 0 to 72",
                          "details": [{"field": "grace_period_hours", "message": "must be a whole number of hours from 0 to 72"}]})),
        (status = 404, description = "No endpoint is registered for this mode", body = ErrorBody,
         example = json!({"error": "not_found", "message": "no webhook endpoint is registered in this mode"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[post("/webhook/rotate_secret")]
pub async fn rotate_secret(
    state: web::Data<AppState>,
    caller: Caller,
    Body(input, ..): Body<RotateIn, Optional>,
) -> Result<Reply, ApiError> {
    let rotated = state
        .webhooks
        .rotate_secret(&caller.scope(), input.grace_period_hours)
        .await
        .map_err(|e| not_found_as(e, NO_ENDPOINT))?;
    Ok(Reply::ok(&RotateOut {
        secret: rotated.secret,
        previous_secret_expires_at: rotated.previous_expires_at.map(rfc3339),
    })?
    .with_header(header::CACHE_CONTROL, "no-store"))
}

/// Unix seconds of an RFC 3339 time in `field`.
fn unix_of(field: &str, text: &str) -> Result<i64, ApiError> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .map(time::OffsetDateTime::unix_timestamp)
        .map_err(|_| ApiError::invalid_field(field, "must be an RFC 3339 date-time"))
}

/// Send again the events of a time window.
///
/// Every event of the key's mode created at or after `since` and before
/// `until` (now when left out), at most 30 days old, of `types` (all when
/// left out), `ping` excluded, gets a new delivery with its own retries
/// and its own `webhook-id` unchanged; they are taken oldest first.
/// Events whose delivery is already pending are left as they are and not
/// counted.
#[utoipa::path(
    tag = "Webhooks",
    operation_id = "replay_webhook_events",
    params(("Idempotency-Key" = Option<String>, Header, description = "Replays the first answer for 24 hours")),
    request_body(content = ReplayIn, description = "The window"),
    responses(
        (status = 202, description = "Scheduled", body = ReplayOut),
        (status = 400, description = "A bad or out-of-range time, or an unknown event type", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "since: must be within the last 30 days (events are kept 30 days)",
                          "details": [{"field": "since", "message": "must be within the last 30 days (events are kept 30 days)"}]})),
        (status = 409, description = "No endpoint is registered, or it is disabled", body = ErrorBody,
         example = json!({"error": "conflict", "message": "the webhook endpoint is disabled; PUT /webhook with its URL re-enables it"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[post("/webhook/replay")]
pub async fn replay(
    state: web::Data<AppState>,
    caller: Caller,
    Body(input, ..): Body<ReplayIn>,
) -> Result<Reply, ApiError> {
    let since = unix_of("since", &input.since)?;
    let until = input
        .until
        .as_deref()
        .map(|u| unix_of("until", u))
        .transpose()?;
    let types = input
        .types
        .unwrap_or_default()
        .iter()
        .map(|t| {
            domain::event::EventType::parse(t)
                .filter(|t| *t != domain::event::EventType::Ping)
                .ok_or_else(|| {
                    ApiError::invalid_field("types", "lists an unknown event type (or ping)")
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let count = state
        .webhooks
        .replay(&caller.scope(), since, until, types)
        .await?;
    Reply::new(actix_web::http::StatusCode::ACCEPTED, &ReplayOut { count })
}
