//! The event history (`GET /events`, `GET /events/{id}`): the partner's
//! events of the key's mode for 30 days, newest first, as the envelopes
//! webhooks deliver, so a partner can reconcile what a delivery missed.

use std::sync::Arc;

use crate::event::{EVENT_RETENTION_SECS, Event};
use crate::ids::EventId;
use crate::page::{Page, PageRequest};
use crate::ports::{Clock, now_secs};
use crate::scope::Scope;
use crate::services::ServiceError;
use crate::store::OutboxStore;

/// The events service.
#[derive(Clone)]
pub struct Events {
    outbox: Arc<dyn OutboxStore>,
    clock: Arc<dyn Clock>,
}

impl Events {
    /// The service over its ports.
    #[must_use]
    pub fn new(outbox: Arc<dyn OutboxStore>, clock: Arc<dyn Clock>) -> Self {
        Self { outbox, clock }
    }

    /// The oldest creation time still readable.
    fn since(&self) -> i64 {
        now_secs(self.clock.as_ref()).saturating_sub(EVENT_RETENTION_SECS)
    }

    /// The scope's events of the last 30 days, newest first.
    ///
    /// # Errors
    /// Only store failures.
    pub async fn list(
        &self,
        scope: &Scope,
        page: &PageRequest,
    ) -> Result<Page<Event>, ServiceError> {
        Ok(self.outbox.events(scope, self.since(), &[], page).await?)
    }

    /// The scope's events of `types` (every type when empty) created at
    /// or after `since` (and within the 30 days kept), newest first.
    ///
    /// # Errors
    /// Only store failures.
    pub async fn filtered(
        &self,
        scope: &Scope,
        since: i64,
        types: &[crate::event::EventType],
        page: &PageRequest,
    ) -> Result<Page<Event>, ServiceError> {
        let since = since.max(self.since());
        Ok(self.outbox.events(scope, since, types, page).await?)
    }

    /// One event of the scope, while it is 30 days old or younger.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] outside the scope or past 30 days.
    pub async fn get(&self, scope: &Scope, id: &EventId) -> Result<Event, ServiceError> {
        let event = self.outbox.event(scope, id).await?;
        if event.event.created_at < self.since() {
            return Err(ServiceError::NotFound);
        }
        Ok(event)
    }
}

#[cfg(test)]
mod tests;
