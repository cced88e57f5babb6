//! `PUT /webhook`, `GET /webhook`, `POST /webhook/test` and the
//! delivery log (`GET /webhook/deliveries`).

use domain::webhook::EndpointState;
use domain::webhook::attempt::{AttemptOutcome, FailureReason};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The body of `PUT /webhook`.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = json!({"url": "https://hooks.partner.example/benefits"}))]
#[serde(deny_unknown_fields)]
pub struct WebhookIn {
    /// An `https://` endpoint.
    #[schema(example = "https://hooks.partner.example/benefits")]
    pub url: String,
}

/// A registration: the URL and its signing secret, shown once.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"url": "https://hooks.partner.example/benefits",
    "secret": "whsec_5f2b8c1d9e0a4b7c6d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c"}))]
pub struct WebhookOut {
    /// The endpoint.
    pub url: String,
    /// `whsec_` + 64 lowercase hex; the HMAC key is the base64 decoding of
    /// the characters after `whsec_`.
    pub secret: String,
}

/// The test ping's first attempt.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"id": "evt_5d1c0a9b3e27", "type": "ping", "delivered": true, "status_code": 204}))]
pub struct WebhookTestOut {
    /// The ping's `evt_` id (its `webhook-id`).
    pub id: String,
    /// Always `ping`.
    #[serde(rename = "type")]
    pub event_type: String,
    /// Whether the endpoint answered 2xx.
    pub delivered: bool,
    /// The endpoint's status, null when it did not answer.
    #[schema(required = true)]
    pub status_code: Option<u16>,
}

/// The registered endpoint of the key's mode (never its secret).
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"url": "https://hooks.partner.example/benefits", "state": "enabled",
    "created_at": "2026-11-21T13:14:00Z", "failing_since": null,
    "secret_rotation": {"previous_secret_expires_at": "2026-11-22T13:14:00Z"}}))]
pub struct EndpointOut {
    /// The endpoint.
    pub url: String,
    /// `enabled`, or `disabled` after failing every attempt for
    /// `webhooks.disable_after_hours` (120 by default); `PUT /webhook`
    /// with the same URL re-enables it and keeps its secret.
    pub state: EndpointState,
    /// When it was registered.
    #[schema(format = DateTime)]
    pub created_at: String,
    /// Since when every attempt has failed; null after a success.
    #[schema(required = true, format = DateTime)]
    pub failing_since: Option<String>,
    /// A secret rotation in its grace period; null when none.
    #[schema(required = true)]
    pub secret_rotation: Option<SecretRotationOut>,
}

/// A rotation whose previous secret still signs.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"previous_secret_expires_at": "2026-11-22T13:14:00Z"}))]
pub struct SecretRotationOut {
    /// When the previous secret stops signing.
    #[schema(format = DateTime)]
    pub previous_secret_expires_at: String,
}

/// The body of `POST /webhook/rotate_secret` (optional).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[schema(example = json!({"grace_period_hours": 24}))]
#[serde(deny_unknown_fields)]
pub struct RotateIn {
    /// How long the current secret keeps signing beside the new one:
    /// 0 to 72 hours, 24 when left out; 0 stops it at once.
    #[schema(minimum = 0, maximum = 72, example = 24)]
    pub grace_period_hours: Option<u32>,
}

/// A rotation: the new secret, shown once.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"secret": "whsec_5f2b8c1d9e0a4b7c6d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c",
    "previous_secret_expires_at": "2026-11-22T13:14:00Z"}))]
pub struct RotateOut {
    /// `whsec_` + 64 lowercase hex; signs every delivery from now on.
    pub secret: String,
    /// When the previous secret stops signing; null with a grace period
    /// of 0 (it stopped at once).
    #[schema(required = true, format = DateTime)]
    pub previous_secret_expires_at: Option<String>,
}

/// One delivery attempt.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"id": "att_0a1b2c3d4e5f60718293a4b5", "event_id": "evt_5d1c0a9b3e27",
    "event_type": "quote.finalized", "attempt": 2, "at": "2026-11-21T13:14:01.204Z",
    "status_code": 500, "latency_ms": 38, "outcome": "failed", "failure_reason": "http_status",
    "response_body": "{\"error\":\"database down\"}"}))]
pub struct AttemptOut {
    /// The attempt's id.
    pub id: String,
    /// The event delivered (its `webhook-id`).
    pub event_id: String,
    /// The event's type.
    pub event_type: String,
    /// 1-based attempt number within its delivery.
    pub attempt: u32,
    /// When the attempt was made (milliseconds).
    #[schema(format = DateTime)]
    pub at: String,
    /// The endpoint's status, null when it did not answer.
    #[schema(required = true)]
    pub status_code: Option<u16>,
    /// Milliseconds from sending to the answer or failure.
    pub latency_ms: u32,
    /// How the attempt ended.
    pub outcome: AttemptOutcome,
    /// Why it failed; null unless failed.
    #[schema(required = true)]
    pub failure_reason: Option<FailureReason>,
    /// The first 1 KiB of the answer, null when there was none.
    #[schema(required = true)]
    pub response_body: Option<String>,
}

/// A page of the delivery log.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"deliveries": [{"id": "att_0a1b2c3d4e5f60718293a4b5", "event_id": "evt_5d1c0a9b3e27",
    "event_type": "quote.finalized", "attempt": 2, "at": "2026-11-21T13:14:01.204Z",
    "status_code": 500, "latency_ms": 38, "outcome": "failed", "failure_reason": "http_status",
    "response_body": "{\"error\":\"database down\"}"}], "next_cursor": null}))]
pub struct AttemptList {
    /// Attempts, newest first.
    pub deliveries: Vec<AttemptOut>,
    /// Pass as `cursor` for the next page; null on the last.
    #[schema(required = true)]
    pub next_cursor: Option<String>,
}

/// The body of `POST /webhook/replay`.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = json!({"since": "2026-11-20T00:00:00Z", "until": "2026-11-21T00:00:00Z",
    "types": ["enrollment.created", "group.state_changed"]}))]
#[serde(deny_unknown_fields)]
pub struct ReplayIn {
    /// Events created at or after this time (at most 30 days ago).
    #[schema(format = DateTime, example = "2026-11-20T00:00:00Z")]
    pub since: String,
    /// Events created before this time; now when left out.
    #[schema(format = DateTime)]
    pub until: Option<String>,
    /// Only these event types; all but `ping` when left out.
    #[schema(example = json!(["enrollment.created"]))]
    pub types: Option<Vec<String>>,
}

/// What a replay scheduled.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"count": 42}))]
pub struct ReplayOut {
    /// Events scheduled for a new delivery.
    pub count: u64,
}
