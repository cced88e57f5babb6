//! The attempts requests record on PostgreSQL (the test ping's first
//! attempt, made by its request), recorded together: those recorded while
//! one transaction is under way go as the next one
//! ([`PgStore::record_batch`], the transaction the dispatcher records its
//! own batches in), so concurrent pings share one commit instead of one
//! each.

use std::sync::Arc;

use domain::store::{AttemptRecord, StoreResult};

use super::PgStore;
use super::batch::{Batcher, Failed};

/// The most attempts one transaction records.
const MAX_RECORDS: usize = 64;

/// An attempt, and whether its outbox's watchers must hear of it (a retry
/// it schedules).
pub(crate) type Record = (AttemptRecord, bool);

/// The attempts waiting for their transaction.
pub(crate) type Records = Batcher<Record, Result<bool, Failed>>;

/// A batcher of attempts.
pub(crate) fn records() -> Arc<Records> {
    Arc::new(Batcher::new(MAX_RECORDS))
}

impl PgStore {
    /// Records one attempt with those of this process's other requests:
    /// whether it was recorded (its lease still held).
    pub(crate) async fn record_one(
        &self,
        record: AttemptRecord,
        notify: bool,
    ) -> StoreResult<bool> {
        let store = self.clone();
        let send = move |batch: Vec<Record>| {
            let store = store.clone();
            async move {
                let notify = batch.iter().any(|(_, notify)| *notify);
                let n = batch.len();
                let records = batch.into_iter().map(|(record, _)| record).collect();
                match store.record_batch(records, notify).await {
                    Ok(recorded) => recorded.into_iter().map(Ok).collect(),
                    Err(e) => vec![Err(Failed::of(&e)); n],
                }
            }
        };
        let recorded = self
            .records
            .submit((record, notify), send)
            .await
            .unwrap_or_else(|| Err(Failed::Unavailable("the attempt recorder stopped".into())))?;
        Ok(recorded)
    }
}
