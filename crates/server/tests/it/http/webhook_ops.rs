//! Webhook operations over real HTTP (partner portal §3): `GET` and
//! `DELETE /webhook`, the delivery log with outcome, failure reason,
//! latency and the first 1 KiB of the answer, automatic disabling after
//! `webhooks.disable_after_hours` of failures and re-enabling by
//! `PUT /webhook` with the same URL, and secret rotation with two
//! signatures during its grace period (checked here and by the Python
//! `standardwebhooks` package). Deliveries go to a real local
//! [`Receiver`]; a 500, a slow receiver, a closed port, and (through a
//! test resolver) a name that moves to a loopback address or stops
//! resolving after registration give their four failure reasons.

mod endpoints;
mod log;
mod resend;

use domain::services::webhooks::WebhookSettings;

pub(super) fn settings() -> WebhookSettings {
    WebhookSettings {
        allow_insecure_endpoints: true,
        attempt_timeout_ms: 1_000,
        disable_after_hours: 1.0,
        ..Default::default()
    }
}

/// RFC 3339 of Unix seconds, as the API writes it.
pub(super) fn at_secs(secs: i64) -> String {
    domain::ports::rfc3339(secs)
}
