//! Events and their delivery state. An event is written to the outbox in
//! the same transaction as the change it announces; the dispatcher delivers
//! it later: a first attempt, then retries after 1 s, 5 s and 25 s.

use serde::{Deserialize, Serialize};

pub use crate::document::EventData;
use crate::ids::EventId;
use crate::scope::Scope;

/// Delays before the retries that follow the first attempt, in seconds.
pub const RETRY_DELAYS_SECS: [i64; 3] = [1, 5, 25];

/// Event types (specification, Events; `deductions.changed` per the contract).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EventType {
    /// `POST /webhook/test`.
    #[serde(rename = "ping")]
    Ping,
    /// An `in_review` quote became `ready`.
    #[serde(rename = "quote.finalized")]
    QuoteFinalized,
    /// The employer accepted a quote's offer in its iframe.
    #[serde(rename = "quote.accepted")]
    QuoteAccepted,
    /// An enrollment was created.
    #[serde(rename = "enrollment.created")]
    EnrollmentCreated,
    /// An onboarding step of an enrollment changed status.
    #[serde(rename = "enrollment.updated")]
    EnrollmentUpdated,
    /// The provisioned company changed state.
    #[serde(rename = "group.state_changed")]
    GroupStateChanged,
    /// A census write finished processing.
    #[serde(rename = "census.processed")]
    CensusProcessed,
    /// Elections changed deductions (benefits-administering partners).
    #[serde(rename = "deductions.changed")]
    DeductionsChanged,
}

impl EventType {
    /// Wire value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Ping => "ping",
            Self::QuoteFinalized => "quote.finalized",
            Self::QuoteAccepted => "quote.accepted",
            Self::EnrollmentCreated => "enrollment.created",
            Self::EnrollmentUpdated => "enrollment.updated",
            Self::GroupStateChanged => "group.state_changed",
            Self::CensusProcessed => "census.processed",
            Self::DeductionsChanged => "deductions.changed",
        }
    }

    /// Every event type.
    pub const ALL: [Self; 8] = [
        Self::Ping,
        Self::QuoteFinalized,
        Self::QuoteAccepted,
        Self::EnrollmentCreated,
        Self::EnrollmentUpdated,
        Self::GroupStateChanged,
        Self::CensusProcessed,
        Self::DeductionsChanged,
    ];

    /// Parses a wire value.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == text)
    }
}

/// An event to append to the outbox. Its payload names its type.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    /// `evt_` id, also the `webhook-id` of every attempt.
    pub id: EventId,
    /// Partner and mode.
    pub scope: Scope,
    /// Creation time, Unix seconds.
    pub created_at: i64,
    /// Payload.
    pub data: EventData,
}

/// The envelope a webhook delivers and `GET /events` answers:
/// `{ id, type, created_at, mode, data }`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Envelope {
    /// `evt_` id.
    pub id: String,
    /// Event type.
    #[serde(rename = "type")]
    pub event_type: String,
    /// RFC 3339 creation time.
    pub created_at: String,
    /// `test` or `live`.
    pub mode: String,
    /// The payload, snake_case.
    pub data: serde_json::Value,
}

impl NewEvent {
    /// The event's type.
    #[must_use]
    pub const fn event_type(&self) -> EventType {
        self.data.event_type()
    }

    /// The envelope, in the service's own snake_case.
    #[must_use]
    pub fn envelope(&self) -> Envelope {
        let created_at = crate::ports::rfc3339(self.created_at);
        Envelope {
            id: self.id.as_str().to_owned(),
            event_type: self.event_type().as_str().to_owned(),
            created_at,
            mode: self.scope.mode.as_str().to_owned(),
            data: self.data.data(),
        }
    }

    /// The webhook body in the partner's field style: snake_case keys for
    /// brokers (`created_at`, `group_id`), the specification's camelCase
    /// for HR platforms. The delivery is the webhook's edge, so its casing
    /// is applied here and nowhere else.
    #[must_use]
    pub fn delivery_body(&self, kind: crate::partner::PartnerKind) -> serde_json::Value {
        let envelope = serde_json::to_value(self.envelope()).unwrap_or_default();
        match kind {
            crate::partner::PartnerKind::Broker => envelope,
            crate::partner::PartnerKind::HrPlatform => {
                crate::document::recase(envelope, &crate::document::snake_to_camel)
            }
        }
    }
}

/// How long events stay readable through `GET /events` (30 days).
pub const EVENT_RETENTION_SECS: i64 = 30 * 86_400;

/// Where an event's delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryState {
    /// Waiting for an attempt (first or retry).
    Pending,
    /// An endpoint answered 2xx.
    Delivered,
    /// Every attempt failed.
    Failed,
    /// No endpoint was registered for the mode when the event was due.
    NoEndpoint,
}

impl DeliveryState {
    /// Wire and storage value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Delivered => "delivered",
            Self::Failed => "failed",
            Self::NoEndpoint => "no_endpoint",
        }
    }

    /// Parses a storage value.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Pending,
            Self::Delivered,
            Self::Failed,
            Self::NoEndpoint,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

/// A stored event with its delivery state.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The event as appended.
    pub event: NewEvent,
    /// Delivery state.
    pub state: DeliveryState,
    /// Attempts made so far.
    pub attempts: u32,
    /// When the next attempt is due (pending only), Unix seconds.
    pub next_attempt_at: Option<i64>,
    /// HTTP status of the last attempt, if one got an answer.
    pub last_status: Option<u16>,
    /// End of the current claim's lease, Unix milliseconds (the claim's
    /// fencing token for `record_attempt`); `None` when unclaimed.
    pub lease_until_ms: Option<i64>,
}

/// The result of one delivery attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptResult {
    /// The endpoint answered 2xx.
    Delivered {
        /// Its status.
        status: u16,
    },
    /// Non-2xx, timeout or connection failure (`status` when answered).
    Failed {
        /// Its status, if it answered.
        status: Option<u16>,
    },
    /// No endpoint is registered for the event's mode.
    NoEndpoint,
}

impl AttemptResult {
    /// The endpoint's status, when it answered.
    #[must_use]
    pub const fn status(self) -> Option<u16> {
        match self {
            Self::Delivered { status } => Some(status),
            Self::Failed { status } => status,
            Self::NoEndpoint => None,
        }
    }
}

/// The state after attempt number `attempt` (1-based) ended with `result`
/// at `now_ms` (Unix milliseconds), and when the next attempt is due. `time_scale` multiplies the
/// retry delays (1.0 in production; smaller in tests).
#[must_use]
pub fn after_attempt(
    attempt: u32,
    result: AttemptResult,
    now_ms: i64,
    time_scale: f64,
) -> (DeliveryState, Option<i64>) {
    match result {
        AttemptResult::Delivered { .. } => (DeliveryState::Delivered, None),
        AttemptResult::NoEndpoint => (DeliveryState::NoEndpoint, None),
        AttemptResult::Failed { .. } => {
            let idx = usize::try_from(attempt)
                .unwrap_or(usize::MAX)
                .saturating_sub(1);
            match RETRY_DELAYS_SECS.get(idx) {
                Some(&secs) => {
                    let delay_ms = scaled_ms(secs, time_scale);
                    (
                        DeliveryState::Pending,
                        Some(now_ms.saturating_add(delay_ms)),
                    )
                }
                None => (DeliveryState::Failed, None),
            }
        }
    }
}

fn scaled_ms(secs: i64, scale: f64) -> i64 {
    // The scale is a configuration value validated at start; anything
    // outside 0..=1000 falls back to real time rather than panicking.
    let scale = if scale.is_finite() && (0.0..=1000.0).contains(&scale) {
        scale
    } else {
        1.0
    };
    let base = std::time::Duration::from_secs(u64::try_from(secs).unwrap_or(0));
    i64::try_from(base.mul_f64(scale).as_millis()).unwrap_or(i64::MAX)
}

/// Which events a list returns: created in `[since, until)` (Unix
/// seconds; `until` open when `None`), of `types` (every type when empty).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventFilter {
    /// The first second included.
    pub since: i64,
    /// The first second excluded.
    pub until: Option<i64>,
    /// The types listed.
    pub types: Vec<EventType>,
}

impl EventFilter {
    /// Every event created at or after `since`.
    #[must_use]
    pub const fn since(since: i64) -> Self {
        Self {
            since,
            until: None,
            types: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_round_trip() {
        for t in [
            EventType::Ping,
            EventType::QuoteFinalized,
            EventType::QuoteAccepted,
            EventType::EnrollmentCreated,
            EventType::GroupStateChanged,
            EventType::CensusProcessed,
            EventType::DeductionsChanged,
        ] {
            assert_eq!(EventType::parse(t.as_str()), Some(t));
            assert_eq!(
                serde_json::to_value(t).unwrap(),
                serde_json::json!(t.as_str())
            );
        }
        assert_eq!(EventType::parse("quote.created"), None);
    }

    #[test]
    fn retries_follow_one_five_twenty_five_seconds_then_stop() {
        let failed = AttemptResult::Failed { status: Some(500) };
        assert_eq!(
            after_attempt(1, failed, 0, 1.0),
            (DeliveryState::Pending, Some(1_000))
        );
        assert_eq!(
            after_attempt(2, failed, 0, 1.0),
            (DeliveryState::Pending, Some(5_000))
        );
        assert_eq!(
            after_attempt(3, failed, 10, 1.0),
            (DeliveryState::Pending, Some(25_010))
        );
        assert_eq!(
            after_attempt(4, failed, 0, 1.0),
            (DeliveryState::Failed, None)
        );
        assert_eq!(
            after_attempt(2, failed, 0, 0.01),
            (DeliveryState::Pending, Some(50))
        );
        assert_eq!(
            after_attempt(1, AttemptResult::Delivered { status: 204 }, 0, 1.0),
            (DeliveryState::Delivered, None)
        );
        assert_eq!(
            after_attempt(1, AttemptResult::NoEndpoint, 0, 1.0),
            (DeliveryState::NoEndpoint, None)
        );
    }
}
