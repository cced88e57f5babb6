//! Housekeeping of `serve`: the periodic purge of idempotency keys and of
//! ended employer-portal sessions. A stored answer is replayed for 24
//! hours, so its record (and the creation key of the group it made) is of
//! no use afterwards; a portal session ends 30 minutes idle or 12 hours
//! after it began; an offer iframe's session is kept a day past its
//! expiry; the webhook delivery log keeps 30 days. Without the purge these
//! tables grow forever.

use std::sync::Arc;
use std::time::Duration;

use crate::portal::{SESSION_IDLE_SECS, SESSION_MAX_SECS};
use crate::ports::{Clock, now_secs};
use crate::services::ServiceError;
use crate::store::{EmbedStore, IdempotencyStore, PartnerUserStore, PortalStore, WebhookStore};
use crate::webhook::attempt::ATTEMPT_RETENTION_SECS;

/// How long an expired embed session is kept, seconds.
const EMBED_KEPT_SECS: i64 = 86_400;

/// How often a serving process purges.
pub const PURGE_INTERVAL: Duration = Duration::from_secs(5 * 60);

/// The housekeeping service.
#[derive(Clone)]
pub struct Housekeeping {
    idempotency: Arc<dyn IdempotencyStore>,
    clock: Arc<dyn Clock>,
    sessions: Option<Arc<dyn PortalStore>>,
    embeds: Option<Arc<dyn EmbedStore>>,
    attempts: Option<Arc<dyn WebhookStore>>,
    partner_users: Option<Arc<dyn PartnerUserStore>>,
}

impl Housekeeping {
    /// The service over its ports.
    #[must_use]
    pub fn new(idempotency: Arc<dyn IdempotencyStore>, clock: Arc<dyn Clock>) -> Self {
        Self {
            idempotency,
            clock,
            sessions: None,
            embeds: None,
            attempts: None,
            partner_users: None,
        }
    }

    /// Also purges the partner portal's ended sessions and its audit
    /// entries older than a year.
    #[must_use]
    pub fn with_partner_users(mut self, store: Arc<dyn PartnerUserStore>) -> Self {
        self.partner_users = Some(store);
        self
    }

    /// Deletes the partner portal's ended sessions and the audit entries
    /// older than one year; returns how many rows went.
    ///
    /// # Errors
    /// Only store failures.
    pub async fn purge_partner_portal(&self) -> Result<u64, ServiceError> {
        let Some(store) = &self.partner_users else {
            return Ok(0);
        };
        let now = now_secs(self.clock.as_ref());
        let sessions = store
            .purge_user_sessions(
                now.saturating_sub(SESSION_IDLE_SECS),
                now.saturating_sub(SESSION_MAX_SECS),
            )
            .await?;
        let cutoff = self
            .clock
            .now_ms()
            .saturating_sub(crate::partner_user::AUDIT_KEPT_SECS.saturating_mul(1000));
        let audit = store.purge_audit(cutoff).await?;
        Ok(sessions.saturating_add(audit))
    }

    /// Also purges the embed sessions of `embeds` a day after they expired.
    #[must_use]
    pub fn with_embeds(mut self, embeds: Arc<dyn EmbedStore>) -> Self {
        self.embeds = Some(embeds);
        self
    }

    /// Deletes the embed sessions that expired more than a day ago;
    /// returns how many.
    ///
    /// # Errors
    /// Only store failures.
    pub async fn purge_embeds(&self) -> Result<u64, ServiceError> {
        let Some(embeds) = &self.embeds else {
            return Ok(0);
        };
        let now = now_secs(self.clock.as_ref());
        Ok(embeds
            .purge_embeds(now.saturating_sub(EMBED_KEPT_SECS))
            .await?)
    }

    /// Also purges the webhook delivery log of `webhooks` after 30 days.
    #[must_use]
    pub fn with_attempts(mut self, webhooks: Arc<dyn WebhookStore>) -> Self {
        self.attempts = Some(webhooks);
        self
    }

    /// Deletes the delivery-log rows older than 30 days; returns how many.
    ///
    /// # Errors
    /// Only store failures.
    pub async fn purge_attempts(&self) -> Result<u64, ServiceError> {
        let Some(attempts) = &self.attempts else {
            return Ok(0);
        };
        let cutoff = self
            .clock
            .now_ms()
            .saturating_sub(ATTEMPT_RETENTION_SECS.saturating_mul(1000));
        Ok(attempts.purge_attempts(cutoff).await?)
    }

    /// Also purges the ended sessions of `sessions`.
    #[must_use]
    pub fn with_sessions(mut self, sessions: Arc<dyn PortalStore>) -> Self {
        self.sessions = Some(sessions);
        self
    }

    /// Deletes the portal sessions that ended (30 minutes idle, or 12
    /// hours after they began); returns how many.
    ///
    /// # Errors
    /// Only store failures.
    pub async fn purge_sessions(&self) -> Result<u64, ServiceError> {
        let Some(sessions) = &self.sessions else {
            return Ok(0);
        };
        let now = now_secs(self.clock.as_ref());
        Ok(sessions
            .purge_sessions(
                now.saturating_sub(SESSION_IDLE_SECS),
                now.saturating_sub(SESSION_MAX_SECS),
            )
            .await?)
    }

    /// Deletes the idempotency keys older than the 24-hour replay window
    /// (never one whose request a live process still runs) and the group
    /// creation keys of the same age; returns how many rows went.
    ///
    /// # Errors
    /// Only store failures.
    pub async fn purge_idempotency(&self) -> Result<u64, ServiceError> {
        let now = now_secs(self.clock.as_ref());
        Ok(self.idempotency.purge_idempotency(now).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::MockClock;
    use crate::store::{MockIdempotencyStore, StoreError};

    const NOW: i64 = 1_795_266_840;

    fn service(store: MockIdempotencyStore) -> Housekeeping {
        let mut clock = MockClock::new();
        clock.expect_now_ms().returning(|| NOW * 1000 + 999);
        Housekeeping::new(Arc::new(store), Arc::new(clock))
    }

    #[tokio::test]
    async fn ended_portal_sessions_are_purged() {
        let mut sessions = crate::store::MockPortalStore::new();
        sessions
            .expect_purge_sessions()
            .withf(|idle, started| *idle == NOW - 30 * 60 && *started == NOW - 12 * 3600)
            .times(1)
            .returning(|_, _| Ok(3));
        let h = service(MockIdempotencyStore::new()).with_sessions(Arc::new(sessions));
        assert_eq!(h.purge_sessions().await.unwrap(), 3);
        assert_eq!(
            service(MockIdempotencyStore::new())
                .purge_sessions()
                .await
                .unwrap(),
            0
        );
    }

    #[tokio::test]
    async fn partner_sessions_end_and_audit_entries_go_after_a_year() {
        let mut partner = crate::store::MockPartnerUserStore::new();
        partner
            .expect_purge_user_sessions()
            .withf(|idle, started| {
                *idle == NOW - SESSION_IDLE_SECS && *started == NOW - SESSION_MAX_SECS
            })
            .times(1)
            .returning(|_, _| Ok(2));
        partner
            .expect_purge_audit()
            .withf(|before| *before == (NOW - 365 * 24 * 3600) * 1000 + 999)
            .times(1)
            .returning(|_| Ok(1));
        let h = service(MockIdempotencyStore::new()).with_partner_users(Arc::new(partner));
        assert_eq!(h.purge_partner_portal().await.unwrap(), 3);
    }

    #[tokio::test]
    async fn the_purge_asks_the_store_at_the_current_second() {
        let mut store = MockIdempotencyStore::new();
        store
            .expect_purge_idempotency()
            .withf(|now| *now == NOW)
            .times(1)
            .returning(|_| Ok(7));
        assert_eq!(service(store).purge_idempotency().await.unwrap(), 7);
    }

    #[tokio::test]
    async fn a_store_failure_is_reported() {
        let mut store = MockIdempotencyStore::new();
        store
            .expect_purge_idempotency()
            .returning(|_| Err(StoreError::Unavailable("down".into())));
        assert!(matches!(
            service(store).purge_idempotency().await,
            Err(ServiceError::Unavailable(_))
        ));
    }
}
