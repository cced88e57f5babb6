//! The delivery log (partner portal §3): one row per attempt, kept 30
//! days, with its outcome, failure reason, latency and the first 1 KiB of
//! the endpoint's answer.

use crate::event::{AttemptResult, EventType};
use crate::ids::EventId;
use crate::scope::Scope;

/// How long attempts stay in the delivery log (30 days).
pub const ATTEMPT_RETENTION_SECS: i64 = 30 * 86_400;

/// How much of an endpoint's answer is kept.
pub const RESPONSE_BODY_LIMIT: usize = 1024;

/// How a delivery attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = OutcomeOut))]
pub enum AttemptOutcome {
    /// The endpoint answered 2xx.
    Succeeded,
    /// No 2xx answer (see the [`FailureReason`]).
    Failed,
    /// The delivery was cancelled before this attempt: the endpoint was
    /// deleted or is disabled.
    Cancelled,
}

impl AttemptOutcome {
    /// Wire and storage value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// Parses a wire or storage value.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Succeeded, Self::Failed, Self::Cancelled]
            .into_iter()
            .find(|o| o.as_str() == text)
    }
}

/// Why a delivery attempt failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = FailureReasonOut))]
pub enum FailureReason {
    /// No answer within `webhooks.attempt_timeout_ms`.
    Timeout,
    /// The connection was refused, reset or closed before an answer.
    ConnectionRefused,
    /// The host name did not resolve.
    DnsError,
    /// The TLS handshake failed.
    TlsError,
    /// The endpoint answered, but not 2xx.
    HttpStatus,
    /// The host resolved to a refused (non-public) address at send time.
    BlockedAddress,
}

impl FailureReason {
    /// Wire and storage value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Timeout => "timeout",
            Self::ConnectionRefused => "connection_refused",
            Self::DnsError => "dns_error",
            Self::TlsError => "tls_error",
            Self::HttpStatus => "http_status",
            Self::BlockedAddress => "blocked_address",
        }
    }

    /// Parses a storage value.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Timeout,
            Self::ConnectionRefused,
            Self::DnsError,
            Self::TlsError,
            Self::HttpStatus,
            Self::BlockedAddress,
        ]
        .into_iter()
        .find(|r| r.as_str() == text)
    }
}

/// What the deliverer reports of one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptReport {
    /// Delivered or failed, with the status when there was an answer.
    pub result: AttemptResult,
    /// Why it failed (`None` when delivered).
    pub failure: Option<FailureReason>,
    /// From sending to the answer (or the failure), milliseconds.
    pub latency_ms: u32,
    /// The first [`RESPONSE_BODY_LIMIT`] bytes of the answer, as text
    /// (invalid UTF-8 replaced), when there was one.
    pub response_body: Option<String>,
}

impl AttemptReport {
    /// A failure before any answer.
    #[must_use]
    pub const fn failed(reason: FailureReason, latency_ms: u32) -> Self {
        Self {
            result: AttemptResult::Failed { status: None },
            failure: Some(reason),
            latency_ms,
            response_body: None,
        }
    }

    /// An answer with `status` and `body` (cut to [`RESPONSE_BODY_LIMIT`]
    /// bytes): delivered when 2xx, an `http_status` failure otherwise.
    #[must_use]
    pub fn answered(status: u16, body: &[u8], latency_ms: u32) -> Self {
        let kept = body.get(..RESPONSE_BODY_LIMIT).unwrap_or(body);
        let text = String::from_utf8_lossy(kept).into_owned();
        let ok = (200..300).contains(&status);
        Self {
            result: if ok {
                AttemptResult::Delivered { status }
            } else {
                AttemptResult::Failed {
                    status: Some(status),
                }
            },
            failure: (!ok).then_some(FailureReason::HttpStatus),
            latency_ms,
            response_body: Some(text),
        }
    }
}

/// One row of the delivery log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryAttempt {
    /// `whatt_` id (sortable: a ULID).
    pub id: String,
    /// Partner and mode.
    pub scope: Scope,
    /// The event delivered.
    pub event_id: EventId,
    /// Its type.
    pub event_type: EventType,
    /// 1-based attempt number within its delivery.
    pub attempt: u32,
    /// When the attempt was made, Unix milliseconds.
    pub at_ms: i64,
    /// The endpoint's status, when it answered.
    pub status_code: Option<u16>,
    /// Milliseconds to the answer or failure (0 when cancelled).
    pub latency_ms: u32,
    /// How it ended.
    pub outcome: AttemptOutcome,
    /// Why it failed.
    pub failure_reason: Option<FailureReason>,
    /// The first 1 KiB of the answer.
    pub response_body: Option<String>,
}

/// Mints delivery-log row ids (for a store that writes rows of its own,
/// as when deleting an endpoint cancels its pending deliveries).
#[derive(Clone)]
pub struct AttemptIds(pub std::sync::Arc<dyn crate::ports::Entropy>);

impl AttemptIds {
    /// A new id: `att_` + 24 lowercase hex.
    #[must_use]
    pub fn next(&self) -> String {
        crate::ports::Minter::new(self.0.as_ref()).attempt_id()
    }
}

impl std::fmt::Debug for AttemptIds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AttemptIds")
    }
}

/// Filters of the delivery log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AttemptFilter {
    /// Only this event's attempts.
    pub event_id: Option<EventId>,
    /// Only attempts with this outcome.
    pub outcome: Option<AttemptOutcome>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_values_round_trip() {
        for o in [
            AttemptOutcome::Succeeded,
            AttemptOutcome::Failed,
            AttemptOutcome::Cancelled,
        ] {
            assert_eq!(AttemptOutcome::parse(o.as_str()), Some(o));
        }
        for r in [
            FailureReason::Timeout,
            FailureReason::ConnectionRefused,
            FailureReason::DnsError,
            FailureReason::TlsError,
            FailureReason::HttpStatus,
            FailureReason::BlockedAddress,
        ] {
            assert_eq!(FailureReason::parse(r.as_str()), Some(r));
        }
        assert_eq!(FailureReason::parse("nope"), None);
    }

    #[test]
    fn answers_keep_one_kibibyte_and_classify_by_status() {
        let long = vec![b'x'; 3000];
        let r = AttemptReport::answered(500, &long, 12);
        assert_eq!(r.result, AttemptResult::Failed { status: Some(500) });
        assert_eq!(r.failure, Some(FailureReason::HttpStatus));
        assert_eq!(r.response_body.map(|b| b.len()), Some(1024));
        let ok = AttemptReport::answered(204, b"", 3);
        assert_eq!(ok.result, AttemptResult::Delivered { status: 204 });
        assert_eq!(ok.failure, None);
    }
}
