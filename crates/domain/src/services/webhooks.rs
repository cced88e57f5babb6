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

use std::sync::Arc;

use crate::error::FieldError;
use crate::event::{
    AttemptResult, DeliveryState, EVENT_RETENTION_SECS, Event, EventData, NewEvent,
};
use crate::ids::EventId;
use crate::page::{Page, PageRequest};
use crate::ports::{Clock, Deliverer, Entropy, Minter, Sealer};
use crate::scope::Scope;
use crate::services::ServiceError;
use crate::services::mailbox::Mailbox;
use crate::store::{
    Conflict, HealthChange, OutboxStore, PartnerStore, PartnerUserStore, SecretRotation,
    WebhookStore,
};
use crate::webhook::attempt::{AttemptFilter, AttemptIds, DeliveryAttempt};
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

/// What a rotation answers: the new secret, shown once, and when the old
/// one stops signing.
#[derive(Clone, PartialEq, Eq)]
pub struct Rotated {
    /// `whsec_` + 64 lowercase hex.
    pub secret: String,
    /// End of the grace period, Unix seconds; `None` with no grace period.
    pub previous_expires_at: Option<i64>,
}

impl std::fmt::Debug for Rotated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rotated")
            .field("previous_expires_at", &self.previous_expires_at)
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
    ports: WebhookPorts,
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
            Self::default().disable_after_hours
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
    /// The partners' portal users (a disabled live endpoint is emailed to
    /// the admins).
    pub users: Arc<dyn PartnerUserStore>,
    /// Queues those emails.
    pub mailbox: Mailbox,
    /// `public_base_url` (the email's link to the Webhooks page).
    pub base_url: Arc<str>,
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
        Self { ports, settings }
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
            self.ports
                .deliverer
                .check_host(url)
                .await
                .map_err(|why| ServiceError::Invalid(vec![FieldError::new("url", why)]))?;
        }
        if let Some(old) = self.ports.endpoints.endpoint(scope).await?
            && old.state == EndpointState::Disabled
            && old.url == url
            && let Some((secret, _)) = self.open_secret(&old)
        {
            self.ports
                .endpoints
                .set_health(
                    scope,
                    old.created_at,
                    &HealthChange {
                        state: EndpointState::Enabled,
                        failing_since_ms: None,
                        jobs: Vec::new(),
                    },
                )
                .await?;
            return Ok(Registered {
                url: old.url,
                secret,
            });
        }
        let secret = secret_from_bytes(Minter::new(self.ports.entropy.as_ref()).secret32());
        let endpoint = WebhookEndpoint {
            scope: scope.clone(),
            url: url.to_owned(),
            sealed_secret: self
                .ports
                .sealer
                .seal(secret.as_bytes(), &seal_context(scope)),
            created_at: self.ports.clock.now_ms().div_euclid(1000),
            state: EndpointState::Enabled,
            failing_since_ms: None,
            previous_secret: None,
        };
        self.ports.endpoints.put_endpoint(&endpoint).await?;
        Ok(Registered {
            url: endpoint.url,
            secret,
        })
    }

    /// Rotates the scope's signing secret (`POST /webhook/rotate_secret`):
    /// a fresh secret signs from now on, and the current one keeps signing
    /// beside it for `grace_hours` (0..=72, default 24), so every delivery
    /// of the grace period carries both signatures.
    ///
    /// # Errors
    /// [`ServiceError::Invalid`] on `grace_period_hours` out of range;
    /// [`ServiceError::NotFound`] without an endpoint;
    /// [`Conflict::EndpointMoved`] when it was replaced meanwhile.
    pub async fn rotate_secret(
        &self,
        scope: &Scope,
        grace_hours: Option<u32>,
    ) -> Result<Rotated, ServiceError> {
        let grace = grace_hours.unwrap_or(crate::webhook::DEFAULT_GRACE_HOURS);
        if grace > crate::webhook::MAX_GRACE_HOURS {
            return Err(ServiceError::Invalid(vec![FieldError::new(
                "grace_period_hours",
                "must be a whole number of hours from 0 to 72",
            )]));
        }
        let endpoint = self.endpoint(scope).await?;
        let now = self.ports.clock.now_ms().div_euclid(1000);
        let secret = secret_from_bytes(Minter::new(self.ports.entropy.as_ref()).secret32());
        let sealed = self
            .ports
            .sealer
            .seal(secret.as_bytes(), &seal_context(scope));
        let previous = (grace > 0).then(|| crate::webhook::PreviousSecret {
            sealed: endpoint.sealed_secret.clone(),
            expires_at: now.saturating_add(i64::from(grace).saturating_mul(3600)),
        });
        let expires = previous.as_ref().map(|p| p.expires_at);
        if !self
            .ports
            .endpoints
            .rotate_secret(
                scope,
                endpoint.created_at,
                SecretRotation {
                    sealed_secret: sealed,
                    previous,
                },
            )
            .await?
        {
            return Err(ServiceError::Conflict(Conflict::EndpointMoved));
        }
        Ok(Rotated {
            secret,
            previous_expires_at: expires,
        })
    }

    /// The scope's endpoint when deliveries can be sent to it.
    async fn enabled_endpoint(&self, scope: &Scope) -> Result<WebhookEndpoint, ServiceError> {
        match self.ports.endpoints.endpoint(scope).await? {
            None => Err(ServiceError::Conflict(Conflict::NoEndpoint)),
            Some(e) if e.state == EndpointState::Disabled => {
                Err(ServiceError::Conflict(Conflict::EndpointDisabled))
            }
            Some(e) => Ok(e),
        }
    }

    /// Sends the scope's event `id` again (`POST /events/{id}/resend`): a
    /// new delivery with its own retries and the same `webhook-id`, so
    /// receivers deduplicate.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] for an unknown event or one older than
    /// 30 days; [`Conflict::NoEndpoint`] or [`Conflict::EndpointDisabled`]
    /// when nothing can be sent; [`Conflict::DeliveryPending`] while its
    /// delivery is pending.
    pub async fn resend(&self, scope: &Scope, id: &EventId) -> Result<Event, ServiceError> {
        let now_ms = self.ports.clock.now_ms();
        let event = self.ports.outbox.event(scope, id).await?;
        if event.event.created_at < now_ms.div_euclid(1000).saturating_sub(EVENT_RETENTION_SECS) {
            return Err(ServiceError::NotFound);
        }
        self.enabled_endpoint(scope).await?;
        Ok(self.ports.outbox.resend(scope, id, now_ms).await?)
    }

    /// Sends again every event of the scope created at or after `since`
    /// and before `until` (default now), at most 30 days old, of `types`
    /// (all when empty), `ping` excluded, oldest first
    /// (`POST /webhook/replay`). Returns how many were scheduled; events
    /// whose delivery is already pending are left as they are.
    ///
    /// # Errors
    /// [`ServiceError::Invalid`] on `since` (more than 30 days ago, or in
    /// the future) or `until` (not after `since`); [`Conflict::NoEndpoint`]
    /// or [`Conflict::EndpointDisabled`] when nothing can be sent.
    pub async fn replay(
        &self,
        scope: &Scope,
        since: i64,
        until: Option<i64>,
        types: Vec<crate::event::EventType>,
    ) -> Result<u64, ServiceError> {
        let now_ms = self.ports.clock.now_ms();
        let now = now_ms.div_euclid(1000);
        let mut errors = Vec::new();
        if since < now.saturating_sub(EVENT_RETENTION_SECS) {
            errors.push(FieldError::new(
                "since",
                "must be within the last 30 days (events are kept 30 days)",
            ));
        } else if since > now {
            errors.push(FieldError::new("since", "must not be in the future"));
        }
        if until.is_some_and(|u| u <= since) {
            errors.push(FieldError::new("until", "must be after since"));
        }
        // Left out: now (this second's events included).
        let until = until.unwrap_or_else(|| now.saturating_add(1));
        if !errors.is_empty() {
            return Err(ServiceError::Invalid(errors));
        }
        self.enabled_endpoint(scope).await?;
        Ok(self
            .ports
            .outbox
            .replay(scope, since, until, types, now_ms)
            .await?)
    }

    /// The scope's endpoint (`GET /webhook`), with its previous secret
    /// only while that still signs.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] without a registered endpoint.
    pub async fn endpoint(&self, scope: &Scope) -> Result<WebhookEndpoint, ServiceError> {
        let mut endpoint = self
            .ports
            .endpoints
            .endpoint(scope)
            .await?
            .ok_or(ServiceError::NotFound)?;
        let now = self.ports.clock.now_ms().div_euclid(1000);
        endpoint.previous_secret = endpoint.previous_at(now).cloned();
        Ok(endpoint)
    }

    /// Deletes the scope's endpoint (`DELETE /webhook`); its pending
    /// deliveries are cancelled (`no_endpoint`, with a `cancelled` row in
    /// the delivery log) in the same transaction.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] without a registered endpoint.
    pub async fn delete(&self, scope: &Scope) -> Result<(), ServiceError> {
        if self
            .ports
            .endpoints
            .delete_endpoint(
                scope,
                self.ports.clock.now_ms(),
                AttemptIds(Arc::clone(&self.ports.entropy)),
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
        Ok(self.ports.endpoints.attempts(scope, filter, page).await?)
    }

    /// Sends a signed `ping` to the scope's endpoint, making its first
    /// attempt before answering; failed attempts are retried as for any
    /// event. `kind` is the partner's (the caller knows it: it chooses the
    /// envelope's field style), so the request reads no partner.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] without a registered endpoint.
    pub async fn test(
        &self,
        scope: &Scope,
        kind: crate::partner::PartnerKind,
    ) -> Result<TestDelivery, ServiceError> {
        let now_ms = self.ports.clock.now_ms();
        let event = NewEvent {
            id: Minter::new(self.ports.entropy.as_ref()).event_id(),
            scope: scope.clone(),
            created_at: now_ms.div_euclid(1000),
            data: EventData::Ping {},
        };
        let lease = now_ms.saturating_add(DELIVERY_LEASE_MS);
        // The endpoint is read with the append: one transaction.
        let endpoint = self
            .ports
            .outbox
            .append_claimed(&event, now_ms, lease)
            .await?
            .ok_or(ServiceError::NotFound)?;
        let claimed = Event {
            event,
            state: DeliveryState::Pending,
            attempts: 0,
            next_attempt_at: None,
            last_status: None,
            lease_until_ms: Some(lease),
        };
        let report = self.attempt(&claimed, Some(&endpoint), kind).await;
        let result = report.result;
        self.record(&claimed, Some(&endpoint), report).await?;
        let delivered = matches!(result, AttemptResult::Delivered { .. });
        let status_code = result.status();
        Ok(TestDelivery {
            id: claimed.event.id,
            delivered,
            status_code,
        })
    }
}

mod dispatch;

#[cfg(test)]
mod tests;
