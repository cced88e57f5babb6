//! Webhooks: registering the endpoint of a mode (`PUT /webhook`), reading
//! and deleting it, the signed test `ping` (`POST /webhook/test`), the
//! delivery log, and the dispatcher that delivers the durable outbox
//! (contract section 6; partner portal §3).
//!
//! Every attempt of an event carries the same `webhook-id` (the event id),
//! a fresh `webhook-timestamp` and a fresh signature. A failed attempt is
//! retried after 1 s, 5 s and 25 s (times `retry_time_scale`), then the
//! event is `failed`; an event due while no endpoint is registered is
//! `no_endpoint`. Deliveries are claimed with a lease in the database, so
//! a restart resumes them and several processes never make one attempt
//! twice.
//!
//! Every attempt writes a delivery-log row in the transaction that
//! records its outcome. An endpoint whose attempts have all failed for
//! `disable_after_hours` is disabled: its due deliveries are cancelled
//! (`no_endpoint`, replayable) until `PUT /webhook` re-enables it.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::FieldError;
use crate::event::{AttemptResult, DeliveryState, Event, EventData, NewEvent, after_attempt};
use crate::ids::EventId;
use crate::page::{Page, PageRequest};
use crate::partner::PartnerKind;
use crate::ports::{Clock, Deliverer, Delivery, Entropy, Minter, Sealer};
use crate::scope::Scope;
use crate::services::ServiceError;
use crate::store::{OutboxStore, PartnerStore, StoreError, WebhookStore};
use crate::webhook::attempt::{
    AttemptFilter, AttemptIds, AttemptOutcome, AttemptReport, DeliveryAttempt,
};
use crate::webhook::{EndpointState, WebhookEndpoint, check_url, secret_from_bytes};

/// How long a claimed delivery is held: longer than the 10 s an endpoint
/// has to answer, so an attempt in flight is never taken over.
pub const DELIVERY_LEASE_MS: i64 = 30_000;

/// Deliveries claimed per dispatcher step.
pub const DELIVERY_BATCH: u32 = 32;

/// What a registration answers: the URL and the secret, shown once.
#[derive(Clone, PartialEq, Eq)]
pub struct Registered {
    /// The endpoint.
    pub url: String,
    /// `whsec_` + 64 lowercase hex.
    pub secret: String,
}

impl std::fmt::Debug for Registered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registered")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

/// What the test ping's first attempt did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestDelivery {
    /// The ping's `evt_` id.
    pub id: EventId,
    /// Whether the endpoint answered 2xx.
    pub delivered: bool,
    /// The endpoint's status, when it answered.
    pub status_code: Option<u16>,
}

/// The webhook service and dispatcher.
#[derive(Clone)]
pub struct Webhooks {
    endpoints: Arc<dyn WebhookStore>,
    outbox: Arc<dyn OutboxStore>,
    partners: Arc<dyn PartnerStore>,
    deliverer: Arc<dyn Deliverer>,
    sealer: Arc<dyn Sealer>,
    clock: Arc<dyn Clock>,
    entropy: Arc<dyn Entropy>,
    settings: WebhookSettings,
}

/// Configuration (`[webhooks]`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WebhookSettings {
    /// `http://` and private or loopback hosts allowed (development, tests).
    pub allow_insecure_endpoints: bool,
    /// Multiplies the 1 s / 5 s / 25 s retry delays.
    pub retry_time_scale: f64,
    /// How long an endpoint has to answer an attempt, connection included.
    pub attempt_timeout_ms: u64,
    /// An endpoint whose attempts have all failed for this many hours is
    /// disabled (a number; 120 = 5 days).
    pub disable_after_hours: f64,
}

impl Default for WebhookSettings {
    fn default() -> Self {
        Self {
            allow_insecure_endpoints: false,
            retry_time_scale: 1.0,
            attempt_timeout_ms: 10_000,
            disable_after_hours: 120.0,
        }
    }
}

impl WebhookSettings {
    /// [`Self::disable_after_hours`] in milliseconds.
    #[must_use]
    pub fn disable_after_ms(&self) -> i64 {
        let hours = if self.disable_after_hours.is_finite() && self.disable_after_hours >= 0.0 {
            self.disable_after_hours
        } else {
            120.0
        };
        let ms = std::time::Duration::from_secs(3600)
            .mul_f64(hours)
            .as_millis();
        i64::try_from(ms).unwrap_or(i64::MAX)
    }
}

/// The ports of the webhook service.
#[derive(Clone)]
pub struct WebhookPorts {
    /// Endpoints.
    pub endpoints: Arc<dyn WebhookStore>,
    /// The outbox.
    pub outbox: Arc<dyn OutboxStore>,
    /// Partners (their field style).
    pub partners: Arc<dyn PartnerStore>,
    /// HTTP deliveries.
    pub deliverer: Arc<dyn Deliverer>,
    /// Seals the signing secrets at rest.
    pub sealer: Arc<dyn Sealer>,
    /// The clock.
    pub clock: Arc<dyn Clock>,
    /// Secrets and ids.
    pub entropy: Arc<dyn Entropy>,
}

/// The sealing context of a scope's secret.
fn seal_context(scope: &Scope) -> Vec<u8> {
    format!(
        "webhook-secret:{}:{}",
        scope.partner.as_str(),
        scope.mode.as_str()
    )
    .into_bytes()
}

impl Webhooks {
    /// The service over its ports.
    #[must_use]
    pub fn new(ports: WebhookPorts, settings: WebhookSettings) -> Self {
        Self {
            endpoints: ports.endpoints,
            outbox: ports.outbox,
            partners: ports.partners,
            deliverer: ports.deliverer,
            sealer: ports.sealer,
            clock: ports.clock,
            entropy: ports.entropy,
            settings,
        }
    }

    /// Registers the scope's endpoint with a fresh secret, replacing any
    /// earlier one (the rotation mechanism) — except that the same URL as
    /// a disabled endpoint re-enables it with its secret kept.
    ///
    /// # Errors
    /// [`ServiceError::Invalid`] on `url`: not `https://`, or a host that
    /// resolves to a private address (unless insecure endpoints are
    /// allowed).
    pub async fn register(&self, scope: &Scope, url: &str) -> Result<Registered, ServiceError> {
        let insecure = self.settings.allow_insecure_endpoints;
        check_url(url, insecure).map_err(|e| ServiceError::Invalid(vec![e]))?;
        if !insecure {
            self.deliverer
                .check_host(url)
                .await
                .map_err(|why| ServiceError::Invalid(vec![FieldError::new("url", why)]))?;
        }
        if let Some(old) = self.endpoints.endpoint(scope).await?
            && old.state == EndpointState::Disabled
            && old.url == url
            && let Some((secret, _)) = self.open_secret(&old)
        {
            self.endpoints
                .set_health(scope, old.created_at, EndpointState::Enabled, None)
                .await?;
            return Ok(Registered {
                url: old.url,
                secret,
            });
        }
        let secret = secret_from_bytes(Minter::new(self.entropy.as_ref()).secret32());
        let endpoint = WebhookEndpoint {
            scope: scope.clone(),
            url: url.to_owned(),
            sealed_secret: self.sealer.seal(secret.as_bytes(), &seal_context(scope)),
            created_at: self.clock.now_ms().div_euclid(1000),
            state: EndpointState::Enabled,
            failing_since_ms: None,
        };
        self.endpoints.put_endpoint(&endpoint).await?;
        Ok(Registered {
            url: endpoint.url,
            secret,
        })
    }

    /// The scope's endpoint (`GET /webhook`).
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] without a registered endpoint.
    pub async fn endpoint(&self, scope: &Scope) -> Result<WebhookEndpoint, ServiceError> {
        self.endpoints
            .endpoint(scope)
            .await?
            .ok_or(ServiceError::NotFound)
    }

    /// Deletes the scope's endpoint (`DELETE /webhook`); its pending
    /// deliveries are cancelled (`no_endpoint`, with a `cancelled` row in
    /// the delivery log) in the same transaction.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] without a registered endpoint.
    pub async fn delete(&self, scope: &Scope) -> Result<(), ServiceError> {
        if self
            .endpoints
            .delete_endpoint(
                scope,
                self.clock.now_ms(),
                AttemptIds(Arc::clone(&self.entropy)),
            )
            .await?
        {
            Ok(())
        } else {
            Err(ServiceError::NotFound)
        }
    }

    /// The scope's delivery log, newest first (`GET /webhook/deliveries`).
    ///
    /// # Errors
    /// Store failures.
    pub async fn deliveries(
        &self,
        scope: &Scope,
        filter: &AttemptFilter,
        page: &PageRequest,
    ) -> Result<Page<DeliveryAttempt>, ServiceError> {
        Ok(self.endpoints.attempts(scope, filter, page).await?)
    }

    /// Sends a signed `ping` to the scope's endpoint, making its first
    /// attempt before answering; failed attempts are retried as for any
    /// event.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] without a registered endpoint.
    pub async fn test(&self, scope: &Scope) -> Result<TestDelivery, ServiceError> {
        let endpoint = self
            .endpoints
            .endpoint(scope)
            .await?
            .ok_or(ServiceError::NotFound)?;
        let now_ms = self.clock.now_ms();
        let event = NewEvent {
            id: Minter::new(self.entropy.as_ref()).event_id(),
            scope: scope.clone(),
            created_at: now_ms.div_euclid(1000),
            data: EventData::Ping {},
        };
        let lease = now_ms.saturating_add(DELIVERY_LEASE_MS);
        self.outbox.append_claimed(&event, now_ms, lease).await?;
        let claimed = Event {
            event,
            state: DeliveryState::Pending,
            attempts: 0,
            next_attempt_at: None,
            last_status: None,
            lease_until_ms: Some(lease),
        };
        let kind = self.partners.partner(&scope.partner).await?.kind;
        let report = self.attempt(&claimed, Some(&endpoint), kind).await;
        let result = report.result;
        self.record(&claimed, Some(&endpoint), report).await?;
        let (delivered, status_code) = match result {
            AttemptResult::Delivered { status } => (true, Some(status)),
            AttemptResult::Failed { status } => (false, status),
            AttemptResult::NoEndpoint => (false, None),
        };
        Ok(TestDelivery {
            id: claimed.event.id,
            delivered,
            status_code,
        })
    }

    /// One dispatcher step: claims the due deliveries and makes one attempt
    /// of each, concurrently. Returns how many were attempted.
    ///
    /// # Errors
    /// Store failures.
    pub async fn step(&self) -> Result<usize, ServiceError> {
        let now_ms = self.clock.now_ms();
        let claimed = self
            .outbox
            .claim_deliveries(now_ms, DELIVERY_LEASE_MS, DELIVERY_BATCH)
            .await?;
        if claimed.is_empty() {
            return Ok(0);
        }
        // One lookup per scope and partner for the whole batch.
        let mut endpoints: HashMap<Scope, Option<WebhookEndpoint>> = HashMap::new();
        let mut kinds: HashMap<String, PartnerKind> = HashMap::new();
        for e in &claimed {
            let scope = &e.event.scope;
            if let std::collections::hash_map::Entry::Vacant(slot) = endpoints.entry(scope.clone())
            {
                slot.insert(self.endpoints.endpoint(scope).await?);
            }
            if let std::collections::hash_map::Entry::Vacant(slot) =
                kinds.entry(scope.partner.as_str().to_owned())
            {
                let kind = match self.partners.partner(&scope.partner).await {
                    Ok(p) => p.kind,
                    Err(StoreError::NotFound) => PartnerKind::Broker,
                    Err(e) => return Err(e.into()),
                };
                slot.insert(kind);
            }
        }
        let attempts = claimed.iter().map(|e| {
            let endpoint = endpoints.get(&e.event.scope).and_then(Option::as_ref);
            let kind = kinds
                .get(e.event.scope.partner.as_str())
                .copied()
                .unwrap_or(PartnerKind::Broker);
            async move {
                let report = self.attempt(e, endpoint, kind).await;
                self.record(e, endpoint, report).await
            }
        });
        let n = claimed.len();
        for outcome in futures_util::future::join_all(attempts).await {
            outcome?;
        }
        Ok(n)
    }

    /// Makes one attempt of `event`: the envelope in the partner's field
    /// style, signed with the endpoint's secret at the current time.
    async fn attempt(
        &self,
        event: &Event,
        endpoint: Option<&WebhookEndpoint>,
        kind: PartnerKind,
    ) -> AttemptReport {
        let no_endpoint = AttemptReport {
            result: AttemptResult::NoEndpoint,
            failure: None,
            latency_ms: 0,
            response_body: None,
        };
        let Some(endpoint) = endpoint else {
            return no_endpoint;
        };
        if endpoint.state == EndpointState::Disabled {
            return no_endpoint;
        }
        let Some((_, secret)) = self.open_secret(endpoint) else {
            // A secret that no longer opens (the sealing key changed):
            // nothing can be signed; the attempt fails (and shows as such
            // on the event) and is retried.
            return AttemptReport {
                result: AttemptResult::Failed { status: None },
                failure: None,
                latency_ms: 0,
                response_body: None,
            };
        };
        let body = serde_json::to_vec(&event.event.delivery_body(kind)).unwrap_or_default();
        let id = event.event.id.as_str();
        let timestamp = self.clock.now_ms().div_euclid(1000);
        let signature = webhooks::sign(&secret, id, timestamp, &body);
        self.deliverer
            .deliver(Delivery {
                url: endpoint.url.clone(),
                headers: vec![
                    ("content-type".to_owned(), "application/json".to_owned()),
                    ("webhook-id".to_owned(), id.to_owned()),
                    ("webhook-timestamp".to_owned(), timestamp.to_string()),
                    ("webhook-signature".to_owned(), signature),
                ],
                body,
            })
            .await
    }

    /// The endpoint's signing secret, as text and parsed, if it opens.
    fn open_secret(&self, endpoint: &WebhookEndpoint) -> Option<(String, webhooks::Secret)> {
        let text = self
            .sealer
            .open(&endpoint.sealed_secret, &seal_context(&endpoint.scope))
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())?;
        let parsed = webhooks::Secret::parse(&text).ok()?;
        Some((text, parsed))
    }

    /// Records an attempt's outcome under the claim's lease, with its
    /// delivery-log row in the same transaction; then the endpoint's
    /// health when it changes (failing since the first failure, cleared by
    /// a success, disabled after `disable_after_hours` of failures).
    async fn record(
        &self,
        event: &Event,
        endpoint: Option<&WebhookEndpoint>,
        report: AttemptReport,
    ) -> Result<(), ServiceError> {
        let Some(lease) = event.lease_until_ms else {
            return Ok(());
        };
        let now_ms = self.clock.now_ms();
        let attempt = event.attempts.saturating_add(1);
        let result = report.result;
        let (state, next) = after_attempt(attempt, result, now_ms, self.settings.retry_time_scale);
        let status = match result {
            AttemptResult::Delivered { status } => Some(status),
            AttemptResult::Failed { status } => status,
            AttemptResult::NoEndpoint => None,
        };
        let outcome = match result {
            AttemptResult::Delivered { .. } => Some(AttemptOutcome::Succeeded),
            AttemptResult::Failed { .. } => Some(AttemptOutcome::Failed),
            // A disabled endpoint's deliveries are cancelled; without an
            // endpoint nothing was to be sent, so nothing is logged.
            AttemptResult::NoEndpoint => endpoint.map(|_| AttemptOutcome::Cancelled),
        };
        let log = outcome.map(|outcome| DeliveryAttempt {
            id: Minter::new(self.entropy.as_ref()).attempt_id(),
            scope: event.event.scope.clone(),
            event_id: event.event.id.clone(),
            event_type: event.event.event_type(),
            attempt,
            at_ms: now_ms,
            status_code: status,
            latency_ms: report.latency_ms,
            outcome,
            failure_reason: report.failure,
            response_body: report.response_body,
        });
        // `false`: the lease ran out and another claimant took over; its
        // attempt is the one recorded.
        let recorded = self
            .outbox
            .record_attempt(&event.event.id, lease, state, status, next, log)
            .await?;
        if let (true, Some(endpoint)) = (recorded, endpoint) {
            self.update_health(endpoint, result, now_ms).await?;
        }
        Ok(())
    }

    /// Moves the endpoint's health on after an attempt, writing only when
    /// it changes.
    async fn update_health(
        &self,
        endpoint: &WebhookEndpoint,
        result: AttemptResult,
        now_ms: i64,
    ) -> Result<(), ServiceError> {
        if endpoint.state == EndpointState::Disabled {
            return Ok(());
        }
        let (state, since) = match (result, endpoint.failing_since_ms) {
            (AttemptResult::Delivered { .. }, Some(_)) => (EndpointState::Enabled, None),
            (AttemptResult::Failed { .. }, None) => (EndpointState::Enabled, Some(now_ms)),
            (AttemptResult::Failed { .. }, Some(since))
                if now_ms.saturating_sub(since) >= self.settings.disable_after_ms() =>
            {
                (EndpointState::Disabled, Some(since))
            }
            _ => return Ok(()),
        };
        self.endpoints
            .set_health(&endpoint.scope, endpoint.created_at, state, since)
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
