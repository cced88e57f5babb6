//! Events: `GET /events` and `GET /events/{id}` (contract section 6).

use actix_web::{HttpRequest, get, post, web};

use domain::ids::EventId;

use crate::auth::Caller;
use crate::error::{ApiError, ErrorBody};
use crate::page;
use crate::reply::Reply;
use crate::routes::{CommonErrors, not_found_as};
use crate::state::AppState;
use crate::wire::events::{EventList, EventOut};

/// The list name bound into this list's cursors.
const LIST: &str = "events";

/// The one not-found of an event.
const NO_EVENT: &str = "no such event in this mode (events are kept for 30 days)";

/// List the partner's events of the key's mode, newest first, for 30 days:
/// the same envelopes webhooks deliver, to reconcile missed deliveries.
#[utoipa::path(
    tag = "Events",
    operation_id = "list_events",
    params(crate::routes::groups::PageParams),
    responses(
        (status = 200, description = "A page of events", body = EventList),
        (status = 400, description = "A bad `limit` or `cursor`", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "cursor: is not a cursor of this list",
                          "details": [{"field": "cursor", "message": "is not a cursor of this list"}]})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[get("/events")]
pub async fn list_events(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
) -> Result<Reply, ApiError> {
    let request = page::request(&req, LIST)?;
    let page = state
        .events
        .list(&caller.principal.scope(), &request)
        .await?;
    Reply::ok(&EventList {
        next_cursor: page::next_cursor(LIST, &page),
        events: page.items.iter().map(EventOut::from).collect(),
    })
}

/// Read one event of the caller's partner and mode.
#[utoipa::path(
    tag = "Events",
    operation_id = "get_event",
    params(("id" = String, Path, description = "`evt_` id", example = "evt_5d1c0a9b3e27")),
    responses(
        (status = 200, description = "The event", body = EventOut),
        (status = 404, description = "No such event for this partner and mode, or older than 30 days", body = ErrorBody,
         example = json!({"error": "not_found", "message": "no such event in this mode (events are kept for 30 days)"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[get("/events/{id}")]
pub async fn get_event(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<Reply, ApiError> {
    let id = EventId::parse(&path).map_err(|_| ApiError::not_found(NO_EVENT))?;
    let event = state
        .events
        .get(&caller.principal.scope(), &id)
        .await
        .map_err(|e| not_found_as(e, NO_EVENT))?;
    Reply::ok(&EventOut::from(&event))
}

/// Send an event again.
///
/// A new delivery of the event, with its own retries, to the endpoint of
/// the key's mode; it keeps its `webhook-id`, so a receiver that already
/// processed it deduplicates. The answer shows the event with its delivery
/// pending.
#[utoipa::path(
    tag = "Events",
    operation_id = "resend_event",
    params(
        ("id" = String, Path, description = "`evt_` id", example = "evt_5d1c0a9b3e27"),
        ("Idempotency-Key" = Option<String>, Header, description = "Replays the first answer for 24 hours"),
    ),
    responses(
        (status = 202, description = "Scheduled", body = EventOut),
        (status = 400, description = "An Idempotency-Key already used with another request", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "Idempotency-Key: was already used with another body, method or path",
                          "details": [{"field": "Idempotency-Key", "message": "was already used with another body, method or path"}]})),
        (status = 404, description = "No such event for this partner and mode, or older than 30 days", body = ErrorBody,
         example = json!({"error": "not_found", "message": "no such event in this mode (events are kept for 30 days)"})),
        (status = 409, description = "No endpoint, a disabled one, or a delivery still pending", body = ErrorBody,
         example = json!({"error": "conflict", "message": "this event's delivery is still pending; it is retried on its own"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[post("/events/{id}/resend")]
pub async fn resend_event(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<Reply, ApiError> {
    let id = EventId::parse(&path).map_err(|_| ApiError::not_found(NO_EVENT))?;
    let event = state
        .webhooks
        .resend(&caller.principal.scope(), &id)
        .await
        .map_err(|e| not_found_as(e, NO_EVENT))?;
    Reply::new(
        actix_web::http::StatusCode::ACCEPTED,
        &EventOut::from(&event),
    )
}
