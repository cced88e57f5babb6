//! The event history (`GET /events`, `GET /events/{id}`): the partner's
//! events of the key's mode for 30 days, newest first, as the envelopes
//! webhooks deliver, so a partner can reconcile what a delivery missed.

use std::sync::Arc;

use crate::event::{EVENT_RETENTION_SECS, Event, EventFilter};
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

    /// The scope's events that `filter` keeps, of the 30 days kept,
    /// newest first.
    ///
    /// # Errors
    /// Only store failures.
    pub async fn list(
        &self,
        scope: &Scope,
        filter: &EventFilter,
        page: &PageRequest,
    ) -> Result<Page<Event>, ServiceError> {
        let kept = EventFilter {
            since: filter.since.max(self.since()),
            ..filter.clone()
        };
        Ok(self.outbox.events(scope, &kept, page).await?)
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
