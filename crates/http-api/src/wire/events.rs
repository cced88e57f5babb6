//! Events: `GET /events` and `GET /events/{id}` (contract section 6,
//! added), the envelopes webhooks deliver.

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use domain::event::Event;

/// One event, exactly as a webhook delivers it.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "evt_5d1c0a9b3e27", "type": "enrollment.created", "created_at": "2026-11-21T13:14:00Z",
    "mode": "test",
    "data": {"enrollment_id": "enr_0b7d2c9e4a11", "group_id": "grp_8c1e4a2f9b3d",
             "quote_id": "qt_1a2b3c4d5e6f", "start_date": "2026-12-01",
             "company_domain": "acme-mfg.com", "onboarding_mode": "hosted"},
    "delivery": {"state": "delivered", "attempts": 1, "last_status_code": 200, "next_attempt_at": null}
}))]
pub struct EventOut {
    /// `evt_` id; also the `webhook-id` of every delivery attempt.
    #[schema(example = "evt_5d1c0a9b3e27")]
    pub id: String,
    /// `ping`, `quote.finalized`, `enrollment.created`,
    /// `group.state_changed`, `census.processed` or `deductions.changed`.
    #[serde(rename = "type")]
    #[schema(example = "quote.finalized")]
    pub event_type: String,
    /// When the change happened.
    #[schema(format = DateTime)]
    pub created_at: String,
    /// `test` or `live`.
    #[schema(value_type = crate::wire::enums::Mode)]
    pub mode: String,
    /// The event's data (per type; see Events in the specification).
    #[schema(value_type = Object)]
    pub data: Value,
    /// Where its webhook delivery stands (added; not part of a delivery's
    /// body).
    pub delivery: DeliveryOut,
}

/// The delivery state of an event.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({"state": "pending", "attempts": 1, "last_status_code": 503,
    "next_attempt_at": "2026-11-21T13:14:01Z"}))]
pub struct DeliveryOut {
    /// `pending` (an attempt is due), `delivered` (an endpoint answered
    /// 2xx), `failed` (the first attempt and 3 retries failed) or
    /// `no_endpoint` (no endpoint was registered when it was due).
    #[schema(value_type = crate::wire::enums::DeliveryState)]
    pub state: String,
    /// Attempts made.
    pub attempts: u32,
    /// The HTTP status of the last attempt, null when none answered.
    #[schema(required = true)]
    pub last_status_code: Option<u16>,
    /// When the next attempt is due (pending only).
    #[schema(required = true, format = DateTime)]
    pub next_attempt_at: Option<String>,
}

impl From<&Event> for EventOut {
    fn from(e: &Event) -> Self {
        let envelope = e.event.envelope();
        Self {
            id: envelope.id,
            event_type: envelope.event_type,
            created_at: envelope.created_at,
            mode: envelope.mode,
            data: envelope.data,
            delivery: DeliveryOut {
                state: e.state.as_str().to_owned(),
                attempts: e.attempts,
                last_status_code: e.last_status,
                next_attempt_at: e.next_attempt_at.map(crate::wire::timestamp),
            },
        }
    }
}

/// A page of events.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"events": [{
    "id": "evt_5d1c0a9b3e27", "type": "quote.finalized", "created_at": "2026-11-21T13:14:00Z",
    "mode": "test", "data": {"quote_id": "qt_1a2b3c4d5e6f", "group_id": "grp_8c1e4a2f9b3d", "status": "ready"},
    "delivery": {"state": "pending", "attempts": 1, "last_status_code": 503, "next_attempt_at": "2026-11-21T13:14:06Z"}
}], "next_cursor": null}))]
pub struct EventList {
    /// Newest first, at most 30 days old.
    pub events: Vec<EventOut>,
    /// Cursor of the next page; null on the last.
    #[schema(required = true)]
    pub next_cursor: Option<String>,
}
