//! `PUT /webhook` and `POST /webhook/test`.

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
    pub status_code: Option<u16>,
}
