//! The webhook writes requests make on PostgreSQL — the test ping's
//! claimed event (whose first attempt its request makes) and that
//! attempt's outcome — written together: those made while one transaction
//! is under way go as the next one ([`PgStore::write_webhook_batch`],
//! which reads each scope's endpoint once), so concurrent pings share one
//! commit for their appends and their attempts instead of one each. When
//! a batch fails (but for the database being out of reach), each of its
//! writes is made again on its own, so each gets its own answer (a taken id is that event's conflict, not its
//! neighbours'; an attempt is fenced by its lease, so writing it again is
//! safe).

use std::sync::Arc;

use domain::scope::Scope;
use domain::store::{AttemptRecord, StoreError, StoreResult};
use domain::webhook::WebhookEndpoint;

use super::PgStore;
use super::batch::{Batcher, Failed};
use crate::rows::EventRow;

/// The most writes one transaction makes.
const MAX_WRITES: usize = 64;

/// A webhook write.
pub(crate) enum Write {
    /// A claimed event and its scope.
    Append(EventRow, Scope),
    /// An attempt, and whether the outbox's watchers must hear of it (a
    /// retry it schedules).
    Record(AttemptRecord, bool),
}

/// A write's answer.
pub(crate) enum Written {
    /// The event's scope's endpoint, or `None` (not appended).
    Appended(Option<WebhookEndpoint>),
    /// Whether the attempt was recorded (its lease still held).
    Recorded(bool),
}

/// The writes waiting for their transaction.
pub(crate) type Writes = Batcher<Write, StoreResult<Written>>;

/// Transactions of webhook writes under way at once: while one waits for
/// its commit's flush, the next is written (a single one at a time
/// answered fewer pings a second than two batchers, of appends and of
/// records, each one at a time).
const WRITERS: usize = 2;

/// A batcher of webhook writes.
pub(crate) fn writes() -> Arc<Writes> {
    Arc::new(Batcher::with_senders(MAX_WRITES, WRITERS))
}

impl PgStore {
    /// Appends one claimed event with this process's other webhook writes:
    /// its scope's endpoint, or `None` (not appended).
    pub(crate) async fn append_claimed_row(
        &self,
        row: EventRow,
        scope: Scope,
    ) -> StoreResult<Option<WebhookEndpoint>> {
        match self.write(Write::Append(row, scope)).await? {
            Written::Appended(endpoint) => Ok(endpoint),
            Written::Recorded(_) => Err(mismatch()),
        }
    }

    /// Records one attempt with this process's other webhook writes:
    /// whether it was recorded (its lease still held).
    pub(crate) async fn record_one(
        &self,
        record: AttemptRecord,
        notify: bool,
    ) -> StoreResult<bool> {
        match self.write(Write::Record(record, notify)).await? {
            Written::Recorded(recorded) => Ok(recorded),
            Written::Appended(_) => Err(mismatch()),
        }
    }

    /// Queues `write` for the next transaction and waits for its answer.
    async fn write(&self, write: Write) -> StoreResult<Written> {
        let store = self.clone();
        let send = move |batch: Vec<Write>| {
            let store = store.clone();
            async move { store.write_each(batch).await }
        };
        self.writes
            .submit(write, send)
            .await
            .unwrap_or_else(|| Err(StoreError::Unavailable("the webhook writer stopped".into())))
    }

    /// Each write's answer: the batch's, or when the batch failed (the
    /// database in reach), its own.
    async fn write_each(&self, batch: Vec<Write>) -> Vec<StoreResult<Written>> {
        if batch.len() == 1 {
            return vec![self.write_alone(batch.into_iter().next()).await];
        }
        let mut appends = Vec::new();
        let mut records = Vec::new();
        let mut notify = false;
        for write in &batch {
            match write {
                Write::Append(row, scope) => appends.push((row.clone(), scope.clone())),
                Write::Record(record, n) => {
                    records.push(record.clone());
                    notify |= *n;
                }
            }
        }
        match self.write_webhook_batch(appends, records, notify).await {
            Ok((endpoints, recorded)) => {
                let (mut endpoints, mut recorded) = (endpoints.into_iter(), recorded.into_iter());
                return batch
                    .iter()
                    .map(|write| {
                        match write {
                            Write::Append(..) => endpoints.next().map(Written::Appended),
                            Write::Record(..) => recorded.next().map(Written::Recorded),
                        }
                        .ok_or_else(mismatch)
                    })
                    .collect();
            }
            // The database out of reach: each write alone would wait for
            // it in turn.
            Err(e @ StoreError::Unavailable(_)) => {
                let failed = Failed::of(&e);
                return batch.iter().map(|_| Err(failed.store_error())).collect();
            }
            Err(_) => {}
        }
        let mut answers = Vec::with_capacity(batch.len());
        for write in batch {
            answers.push(self.write_alone(Some(write)).await);
        }
        answers
    }

    /// One write in a transaction of its own.
    async fn write_alone(&self, write: Option<Write>) -> StoreResult<Written> {
        match write {
            Some(Write::Append(row, scope)) => {
                let mut endpoints = self.append_claimed_batch(vec![(row, scope)]).await?;
                Ok(Written::Appended(endpoints.pop().flatten()))
            }
            Some(Write::Record(record, notify)) => {
                let recorded = self.record_batch(vec![record], notify).await?;
                Ok(Written::Recorded(recorded.first() == Some(&true)))
            }
            None => Err(mismatch()),
        }
    }
}

/// A batch that answered a write with another kind's answer, or none.
fn mismatch() -> StoreError {
    StoreError::Internal("the webhook writer answered out of order".into())
}
