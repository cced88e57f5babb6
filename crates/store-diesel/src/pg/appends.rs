//! The claimed events requests append on PostgreSQL (the test ping, whose
//! first attempt its request makes), appended together: those appended
//! while one transaction is under way go as the next one
//! ([`PgStore::append_claimed_batch`], which reads each scope's endpoint
//! once), so concurrent pings share one commit instead of one each. When
//! a batch fails, each of its events is appended again on its own, so
//! each gets its own answer (a taken id is that event's conflict, not its
//! neighbours').

use std::sync::Arc;

use domain::scope::Scope;
use domain::store::{StoreError, StoreResult};
use domain::webhook::WebhookEndpoint;

use super::PgStore;
use super::batch::Batcher;
use crate::rows::EventRow;

/// The most events one transaction appends.
const MAX_APPENDS: usize = 64;

/// A claimed event and its scope.
pub(crate) type Append = (EventRow, Scope);

/// The claimed events waiting for their transaction.
pub(crate) type Appends = Batcher<Append, StoreResult<Option<WebhookEndpoint>>>;

/// A batcher of claimed events.
pub(crate) fn appends() -> Arc<Appends> {
    Arc::new(Batcher::new(MAX_APPENDS))
}

impl PgStore {
    /// Appends one claimed event with those of this process's other
    /// requests: its scope's endpoint, or `None` (not appended).
    pub(crate) async fn append_claimed_row(
        &self,
        row: EventRow,
        scope: Scope,
    ) -> StoreResult<Option<WebhookEndpoint>> {
        let store = self.clone();
        let send = move |batch: Vec<Append>| {
            let store = store.clone();
            async move { store.append_each(batch).await }
        };
        self.appends
            .submit((row, scope), send)
            .await
            .unwrap_or_else(|| Err(StoreError::Unavailable("the event appender stopped".into())))
    }

    /// Each event's answer: the batch's, or when the batch failed, its own.
    async fn append_each(&self, batch: Vec<Append>) -> Vec<StoreResult<Option<WebhookEndpoint>>> {
        if batch.len() > 1
            && let Ok(endpoints) = self.append_claimed_batch(batch.clone()).await
        {
            return endpoints.into_iter().map(Ok).collect();
        }
        let mut answers = Vec::with_capacity(batch.len());
        for item in batch {
            let answer = self.append_claimed_batch(vec![item]).await;
            answers.push(answer.map(|mut endpoints| endpoints.pop().flatten()));
        }
        answers
    }
}
