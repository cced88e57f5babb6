//! The dispatcher half of the webhook service: one step claims the due
//! deliveries and makes their attempts; each attempt is signed (twice
//! during a rotation's grace period); the batch's outcomes and their
//! delivery-log rows are recorded in one transaction; each endpoint's
//! health moves on once per batch.

use std::collections::HashMap;

use super::{DELIVERY_BATCH, DELIVERY_LEASE_MS, Webhooks, seal_context};
use crate::event::{AttemptResult, Event, after_attempt};
use crate::partner::PartnerKind;
use crate::ports::{Delivery, Minter};
use crate::scope::Scope;
use crate::services::ServiceError;
use crate::store::{AttemptRecord, HealthChange, StoreError};
use crate::webhook::attempt::{AttemptOutcome, AttemptReport, DeliveryAttempt};
use crate::webhook::{EndpointState, WebhookEndpoint};

impl Webhooks {
    /// One dispatcher step: claims the due deliveries and makes one attempt
    /// of each, concurrently. Returns how many were attempted.
    ///
    /// # Errors
    /// Store failures.
    pub async fn step(&self) -> Result<usize, ServiceError> {
        let now_ms = self.ports.clock.now_ms();
        let claimed = self
            .ports
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
                slot.insert(self.ports.endpoints.endpoint(scope).await?);
            }
            if let std::collections::hash_map::Entry::Vacant(slot) =
                kinds.entry(scope.partner.as_str().to_owned())
            {
                let kind = match self.ports.partners.partner(&scope.partner).await {
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
            async move { (e, endpoint, self.attempt(e, endpoint, kind).await) }
        });
        let done = futures_util::future::join_all(attempts).await;
        // The whole batch's outcomes and log rows in one transaction: one
        // commit per batch, not one per attempt.
        let now_ms = self.ports.clock.now_ms();
        let mut records = Vec::with_capacity(done.len());
        let mut results = Vec::with_capacity(done.len());
        for (event, endpoint, report) in done {
            results.push((endpoint, report.result));
            records.extend(self.record_of(event, endpoint, report, now_ms));
        }
        let recorded = self.ports.outbox.record_attempts(records).await?;
        // Health once per endpoint: a success in the batch clears its
        // failing streak; otherwise a failure moves it on.
        let mut by_endpoint: HashMap<&Scope, (&WebhookEndpoint, AttemptResult)> = HashMap::new();
        for ((endpoint, result), kept) in results.into_iter().zip(recorded) {
            let Some(endpoint) = endpoint.filter(|_| kept) else {
                continue;
            };
            let slot = by_endpoint
                .entry(&endpoint.scope)
                .or_insert((endpoint, result));
            if matches!(result, AttemptResult::Delivered { .. }) {
                slot.1 = result;
            }
        }
        for (endpoint, result) in by_endpoint.into_values() {
            self.update_health(endpoint, result, now_ms).await?;
        }
        Ok(claimed.len())
    }

    /// How the dispatcher hears of new deliveries while idle.
    #[must_use]
    pub fn watch(&self) -> crate::store::OutboxWatch {
        self.ports.outbox.watch()
    }

    /// How long an idle dispatcher may sleep when a step found nothing
    /// due: until the earliest pending delivery falls due, at most
    /// `recheck` (what the outbox's watch cannot report waits no longer).
    ///
    /// # Errors
    /// Store failures.
    pub async fn idle_wait(
        &self,
        recheck: std::time::Duration,
    ) -> Result<std::time::Duration, ServiceError> {
        let Some(due_ms) = self.ports.outbox.next_due_ms().await? else {
            return Ok(recheck);
        };
        let wait_ms = due_ms.saturating_sub(self.ports.clock.now_ms()).max(0);
        let wait = std::time::Duration::from_millis(u64::try_from(wait_ms).unwrap_or(0));
        Ok(wait.min(recheck))
    }

    /// Makes one attempt of `event`: the envelope in the partner's field
    /// style, signed with the endpoint's secret at the current time.
    pub(super) async fn attempt(
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
        let timestamp = self.ports.clock.now_ms().div_euclid(1000);
        let mut signature = webhooks::sign(&secret, id, timestamp, &body);
        // During a rotation's grace period the old secret signs too.
        if let Some(old) = endpoint
            .previous_at(timestamp)
            .and_then(|p| self.open_sealed(&p.sealed, &endpoint.scope))
        {
            signature.push(' ');
            signature.push_str(&webhooks::sign(&old.1, id, timestamp, &body));
        }
        self.ports
            .deliverer
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
    pub(super) fn open_secret(
        &self,
        endpoint: &WebhookEndpoint,
    ) -> Option<(String, webhooks::Secret)> {
        self.open_sealed(&endpoint.sealed_secret, &endpoint.scope)
    }

    /// A sealed secret of `scope`, as text and parsed, if it opens.
    fn open_sealed(&self, sealed: &[u8], scope: &Scope) -> Option<(String, webhooks::Secret)> {
        let text = self
            .ports
            .sealer
            .open(sealed, &seal_context(scope))
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())?;
        let parsed = webhooks::Secret::parse(&text).ok()?;
        Some((text, parsed))
    }

    /// Records an attempt's outcome under the claim's lease, with its
    /// delivery-log row in the same transaction; then the endpoint's
    /// health when it changes (failing since the first failure, cleared by
    /// a success, disabled after `disable_after_hours` of failures).
    pub(super) async fn record(
        &self,
        event: &Event,
        endpoint: Option<&WebhookEndpoint>,
        report: AttemptReport,
    ) -> Result<(), ServiceError> {
        let now_ms = self.ports.clock.now_ms();
        let result = report.result;
        let Some(r) = self.record_of(event, endpoint, report, now_ms) else {
            return Ok(());
        };
        // `false`: the lease ran out and another claimant took over; its
        // attempt is the one recorded.
        let recorded = self
            .ports
            .outbox
            .record_attempt(
                &r.id,
                r.lease_until_ms,
                r.state,
                r.status,
                r.next_attempt_at_ms,
                r.log,
            )
            .await?;
        if let (true, Some(endpoint)) = (recorded, endpoint) {
            self.update_health(endpoint, result, now_ms).await?;
        }
        Ok(())
    }

    /// What recording an attempt of a claimed `event` writes; `None` for
    /// an unclaimed one.
    fn record_of(
        &self,
        event: &Event,
        endpoint: Option<&WebhookEndpoint>,
        report: AttemptReport,
        now_ms: i64,
    ) -> Option<AttemptRecord> {
        let lease = event.lease_until_ms?;
        let attempt = event.attempts.saturating_add(1);
        let result = report.result;
        let (state, next) = after_attempt(attempt, result, now_ms, self.settings.retry_time_scale);
        let status = result.status();
        let outcome = match result {
            AttemptResult::Delivered { .. } => Some(AttemptOutcome::Succeeded),
            AttemptResult::Failed { .. } => Some(AttemptOutcome::Failed),
            // A disabled endpoint's deliveries are cancelled; without an
            // endpoint nothing was to be sent, so nothing is logged.
            AttemptResult::NoEndpoint => endpoint.map(|_| AttemptOutcome::Cancelled),
        };
        let log = outcome.map(|outcome| DeliveryAttempt {
            id: Minter::new(self.ports.entropy.as_ref()).attempt_id(),
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
        Some(AttemptRecord {
            id: event.event.id.clone(),
            lease_until_ms: lease,
            state,
            status,
            next_attempt_at_ms: next,
            log,
        })
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
        let jobs = if state == EndpointState::Disabled {
            self.disabled_emails(endpoint, now_ms).await?
        } else {
            Vec::new()
        };
        let change = HealthChange {
            state,
            failing_since_ms: since,
            jobs,
        };
        self.ports
            .endpoints
            .set_health(&endpoint.scope, endpoint.created_at, &change)
            .await?;
        Ok(())
    }

    /// The emails telling the partner's portal admins that a live endpoint
    /// was disabled (none in test mode: the mailbox suppresses them).
    pub(super) async fn disabled_emails(
        &self,
        endpoint: &WebhookEndpoint,
        now_ms: i64,
    ) -> Result<Vec<crate::job::NewJob>, ServiceError> {
        if endpoint.scope.mode != crate::mode::Mode::Live {
            return Ok(Vec::new());
        }
        let users = self.ports.users.users(&endpoint.scope.partner).await?;
        let minter = Minter::new(self.ports.entropy.as_ref());
        let hours = self.settings.disable_after_hours;
        let link = format!("{}/partner/webhooks", self.ports.base_url);
        Ok(users
            .iter()
            .filter(|u| u.is_admin())
            .filter_map(|u| {
                let message =
                    crate::email::endpoint_disabled(&u.email, &endpoint.url, hours, &link);
                self.ports
                    .mailbox
                    .job(&minter, &endpoint.scope, None, &message, now_ms)
            })
            .collect())
    }
}
