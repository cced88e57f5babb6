//! Events: `GET /events` and `GET /events/{id}` (contract section 6).

use actix_web::{HttpRequest, get, post, web};

use domain::event::{EventFilter, EventType};
use domain::ids::EventId;

use crate::auth::Caller;
use crate::error::{ApiError, ErrorBody};
use crate::extract::PathId;
use crate::page;
use crate::query::{self, Query, kept};
use crate::reply::Reply;
use crate::routes::CommonErrors;
use crate::routes::params::{EventNotFound, EventPath};
use crate::state::AppState;
use crate::wire::events::{EventList, EventOut};

/// The list name bound into this list's cursors.
const LIST: &str = "events";

/// Filters of the event list (together, all must hold).
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventFilters {
    /// Only events of this type.
    #[param(rename = "type", schema_with = crate::wire::enums::event_type)]
    pub kind: Option<String>,
    /// Only events created at or after this time (RFC 3339; whole seconds,
    /// as `created_at` shows them).
    #[param(example = "2026-11-21T00:00:00Z", format = DateTime)]
    pub created_gte: Option<String>,
    /// Only events created before this time (RFC 3339).
    #[param(example = "2026-11-22T00:00:00Z", format = DateTime)]
    pub created_lt: Option<String>,
}

/// The event filters of `req`'s query.
fn event_filters(req: &HttpRequest) -> Result<EventFilter, ApiError> {
    let q = Query::of(req);
    let expected = format!(
        "must be one of {}",
        EventType::ALL
            .iter()
            .map(|t| t.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    query::filters(|errors| EventFilter {
        types: kept(errors, q.value("type", &expected, EventType::parse))
            .into_iter()
            .collect(),
        since: kept(errors, q.timestamp("created_gte")).unwrap_or(0),
        until: kept(errors, q.timestamp("created_lt")),
    })
}

/// List the partner's events of the key's mode, newest first, for 30 days:
/// the same envelopes webhooks deliver, to reconcile missed deliveries.
/// The filters pick a type and a window of creation times.
#[utoipa::path(
    tag = "Events",
    operation_id = "list_events",
    params(EventFilters, crate::routes::groups::PageParams),
    responses(
        (status = 200, description = "A page of events", body = EventList),
        (status = 400, description = "A bad `limit`, `cursor` or filter, or a query parameter this list does not take", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "created_gte: must be an RFC 3339 timestamp such as 2026-11-21T13:14:00Z",
                          "details": [{"field": "created_gte", "message": "must be an RFC 3339 timestamp such as 2026-11-21T13:14:00Z"}]})),
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
    let filter = event_filters(&req)?;
    let request = page::request(&req, LIST)?;
    let page = state
        .events
        .list(&caller.scope(), &filter, &request)
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
    params(EventPath),
    responses(
        (status = 200, description = "The event", body = EventOut),
        EventNotFound,
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[get("/events/{id}")]
pub async fn get_event(
    state: web::Data<AppState>,
    caller: Caller,
    id: PathId<EventId>,
) -> Result<Reply, ApiError> {
    let event = state
        .events
        .get(&caller.scope(), &id)
        .await
        .map_err(PathId::<EventId>::missing)?;
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
        EventPath,
        ("Idempotency-Key" = Option<String>, Header, description = "Replays the first answer for 24 hours"),
    ),
    responses(
        (status = 202, description = "Scheduled", body = EventOut),
        (status = 400, description = "An Idempotency-Key already used with another request", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "Idempotency-Key: was already used with another body, method or path",
                          "details": [{"field": "Idempotency-Key", "message": "was already used with another body, method or path"}]})),
        EventNotFound,
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
    id: PathId<EventId>,
) -> Result<Reply, ApiError> {
    let event = state
        .webhooks
        .resend(&caller.scope(), &id)
        .await
        .map_err(PathId::<EventId>::missing)?;
    Reply::new(
        actix_web::http::StatusCode::ACCEPTED,
        &EventOut::from(&event),
    )
}
