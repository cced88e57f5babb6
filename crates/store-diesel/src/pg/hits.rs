//! PostgreSQL's rate-limit hits, counted together: the hits a process's
//! requests make while one statement is under way queue up and go as the
//! next statement, `SELECT rate_limit_hits(…)` (a function of the
//! migrations that makes each hit as `rate_limit_hit` does, in bucket
//! order). The count stays exact across processes — every hit is still
//! counted in the database, atomically — while a busy process spends one
//! round trip and one transaction on many requests instead of one each.
//!
//! The statement runs on a task of its own, so a request dropped while it
//! waits (a client gone) never leaves the others waiting.
//!
//! A group read (`GET /v1/groups/{id}`) defers its hit to its statement
//! ([`domain::store::defer_hit`]): when no batch is under way, the read
//! selects `rate_limit_hits(…)` beside the group's row, one statement and
//! one transaction for the whole request. While a batch is under way the
//! read leaves the hit to the batches, which keep one process's requests
//! from queueing on the counter's row lock one by one.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use diesel::sql_types::{Array, BigInt, Integer, Text};
use diesel::{ExpressionMethods, OptionalExtension, QueryDsl, SelectableHelper};
use diesel_async::RunQueryDsl;
use domain::group::Group;
use domain::ids::GroupId;
use domain::scope::Scope;
use domain::store::{StoreError, StoreResult, take_deferred_hit};
use tokio::sync::oneshot;

use super::PgStore;
use crate::rows::GroupRow;
use crate::schema::groups;

diesel::define_sql_function! {
    /// The hits of migration `rate_limit_hits`: each window's count after
    /// its hit, or NULL where the limit was already reached, in order.
    fn rate_limit_hits(buckets: Array<Text>, window_starts: Array<BigInt>, limits: Array<Integer>) -> Array<Nullable<Integer>>;
}

/// The most hits one statement carries.
const MAX_HITS: usize = 256;

/// One queued hit and where its answer goes.
struct Hit {
    bucket: String,
    window: i64,
    limit: i32,
    answer: oneshot::Sender<StoreResult<Option<u32>>>,
}

/// The hits waiting for the next statement, and whether a task is sending
/// them.
#[derive(Default)]
pub(crate) struct Hits {
    queue: Mutex<Vec<Hit>>,
    sending: AtomicBool,
}

impl PgStore {
    /// Counts a hit of `bucket` in the window starting at `window` against
    /// `limit`: the window's count after it, or `None` at the limit.
    pub(crate) async fn count_hit(
        &self,
        bucket: &str,
        window: i64,
        limit: i32,
    ) -> StoreResult<Option<u32>> {
        let (answer, answered) = oneshot::channel();
        self.hits
            .queue
            .lock()
            .map_err(|_| StoreError::Internal("rate-limit queue poisoned".into()))?
            .push(Hit {
                bucket: bucket.to_owned(),
                window,
                limit,
                answer,
            });
        if !self.hits.sending.swap(true, Ordering::SeqCst) {
            tokio::spawn(self.clone().send_hits());
        }
        answered
            .await
            .map_err(|_| StoreError::Unavailable("the rate-limit counter stopped".into()))?
    }

    /// Sends the queued hits, statement after statement, until none is
    /// left.
    async fn send_hits(self) {
        loop {
            let batch = self.take_hits();
            if batch.is_empty() {
                self.hits.sending.store(false, Ordering::SeqCst);
                // A hit queued after the take saw a sender at work and
                // started none: send it, unless another sender took over.
                if self.no_hits_queued() || self.hits.sending.swap(true, Ordering::SeqCst) {
                    return;
                }
                continue;
            }
            let counted = self.send(&batch).await;
            for (i, hit) in batch.into_iter().enumerate() {
                let answer = match &counted {
                    Ok(counts) => Ok(counts.get(i..).and_then(first_count)),
                    Err(e) => Err(e.store_error()),
                };
                let _ = hit.answer.send(answer);
            }
        }
    }

    /// The scope's group `id`, read in one statement with the hit its
    /// request deferred, when that hit is waiting and no batch is under
    /// way; `None` leaves the read to the plain query (and the hit to the
    /// request). A read that finds no group makes no hit: the request
    /// makes it.
    pub(crate) async fn group_with_deferred_hit(
        &self,
        scope: &Scope,
        id: &GroupId,
    ) -> Option<StoreResult<Group>> {
        if AtomicBool::load(&self.hits.sending, Ordering::SeqCst) {
            return None;
        }
        let folded = take_deferred_hit()?;
        let mut conn = match self.conn().await {
            Ok(conn) => conn,
            Err(e) => return Some(Err(e)),
        };
        let hit = folded.hit();
        let limit = i32::try_from(hit.limit).unwrap_or(i32::MAX);
        let found: Result<Option<CountedRow>, _> = groups::table
            .filter(groups::id.eq(id.as_str()))
            .filter(groups::partner_id.eq(scope.partner.as_str()))
            .filter(groups::mode.eq(scope.mode.as_str()))
            .select((
                rate_limit_hits(
                    vec![hit.bucket.as_str()],
                    vec![hit.window_start],
                    vec![limit],
                ),
                GroupRow::as_select(),
            ))
            .first(&mut *conn)
            .await
            .optional();
        Some(match found {
            Ok(Some((counts, row))) => {
                folded.made(Ok(first_count(&counts)));
                row.into_domain()
            }
            Ok(None) => Err(StoreError::NotFound),
            Err(e) => {
                let e = crate::error::db(e);
                folded.made(Err(Failed::of_ref(&e).store_error()));
                Err(e)
            }
        })
    }

    /// Up to [`MAX_HITS`] queued hits, oldest first.
    fn take_hits(&self) -> Vec<Hit> {
        let Ok(mut queue) = self.hits.queue.lock() else {
            return Vec::new();
        };
        let n = queue.len().min(MAX_HITS);
        queue.drain(..n).collect()
    }

    /// Whether no hit is queued.
    fn no_hits_queued(&self) -> bool {
        self.hits.queue.lock().map_or(true, |q| q.is_empty())
    }

    /// One statement for `batch`: each hit's count, in order.
    async fn send(&self, batch: &[Hit]) -> Result<Vec<Option<i32>>, Failed> {
        let buckets: Vec<&str> = batch.iter().map(|h| h.bucket.as_str()).collect();
        let windows: Vec<i64> = batch.iter().map(|h| h.window).collect();
        let limits: Vec<i32> = batch.iter().map(|h| h.limit).collect();
        let mut conn = self.conn().await.map_err(Failed::of)?;
        // Prepared once per connection, like any cached SELECT.
        diesel::select(rate_limit_hits(buckets, windows, limits))
            .get_result(&mut *conn)
            .await
            .map_err(|e| Failed::of(crate::error::db(e)))
    }
}

/// A group's row with the counts of the hit its read made.
type CountedRow = (Vec<Option<i32>>, GroupRow);

/// The first count of a statement's answer, as the port tells it.
fn first_count(counts: &[Option<i32>]) -> Option<u32> {
    counts
        .first()
        .copied()
        .flatten()
        .and_then(|c| u32::try_from(c).ok())
}

/// A batch's failure, told to each of its hits as the store's error it
/// was: unavailable (the database cannot be reached) or internal.
#[derive(Debug, Clone)]
enum Failed {
    Unavailable(String),
    Internal(String),
}

impl Failed {
    fn of(e: StoreError) -> Self {
        Self::of_ref(&e)
    }

    fn of_ref(e: &StoreError) -> Self {
        match e {
            StoreError::Unavailable(e) => Self::Unavailable(e.to_string()),
            other => Self::Internal(other.to_string()),
        }
    }

    fn store_error(&self) -> StoreError {
        match self {
            Self::Unavailable(m) => StoreError::Unavailable(m.clone().into()),
            Self::Internal(m) => StoreError::Internal(m.clone().into()),
        }
    }
}
