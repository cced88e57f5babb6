//! The port of rate-limit counters, and the hit a request can defer to
//! its first read.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;

use crate::rate_limit::Policy;
use crate::store::StoreResult;

/// Rate-limit counters.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait RateLimitStore: Send + Sync {
    /// Counts one hit of `bucket` in the window of `policy` holding `now`,
    /// unless the counter already reached the limit. Returns the count
    /// after the hit, or `None` when refused. Atomic across every process
    /// sharing the store.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn hit(&self, policy: &Policy, bucket: &str, now: i64) -> StoreResult<Option<u32>>;

    /// Whether the store's reads can make a [`DeferredHit`] in their own
    /// statement (see [`defer_hit`]): then a request that only reads
    /// costs one statement, not a hit and a read. `false` unless the
    /// store says so.
    fn folds_hits_into_reads(&self) -> bool {
        false
    }
}

/// A rate-limit hit a request leaves to its first read: the same hit as
/// [`RateLimitStore::hit`] with these arguments, made in the read's
/// statement by a store whose reads [fold hits](RateLimitStore::folds_hits_into_reads).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeferredHit {
    /// The counter ([`Policy::bucket`]).
    pub bucket: String,
    /// The start of the window holding the request's time ([`Policy::window_start`]).
    pub window_start: i64,
    /// The hits the window allows ([`Policy::limit`]).
    pub limit: u32,
}

/// What became of a deferred hit once the request ran.
#[derive(Debug)]
pub enum HitOutcome {
    /// A read made it: the count after it (`None`: refused), or the
    /// read's failure, in which case whether it counted is unknown.
    Made(StoreResult<Option<u32>>),
    /// No read made it: the caller makes it now.
    NotMade(DeferredHit),
}

/// Where a deferred hit is while its request runs.
#[derive(Debug)]
enum Slot {
    Waiting(DeferredHit),
    Taken,
    Made(StoreResult<Option<u32>>),
}

tokio::task_local! {
    static DEFERRED: Arc<Mutex<Slot>>;
}

/// Runs `request` with `hit` left to the first read of the request's
/// task that can fold it into its statement, and tells what became of
/// it. The request must be one that changes nothing before it has read:
/// its rate limit is decided after it ran.
pub async fn defer_hit<F: Future>(hit: DeferredHit, request: F) -> (F::Output, HitOutcome) {
    let slot = Arc::new(Mutex::new(Slot::Waiting(hit)));
    let output = DEFERRED.scope(Arc::clone(&slot), request).await;
    let left = std::mem::replace(&mut *lock(&slot), Slot::Taken);
    let outcome = match left {
        Slot::Waiting(hit) => HitOutcome::NotMade(hit),
        Slot::Made(count) => HitOutcome::Made(count),
        // A read took it and was dropped before it answered: only a
        // future given up mid-statement does that, and its request is
        // gone with it.
        Slot::Taken => HitOutcome::Made(Err(crate::store::StoreError::Unavailable(
            "the read carrying the rate-limit hit was abandoned".into(),
        ))),
    };
    (output, outcome)
}

/// For a store's read: takes the hit the current request deferred, if it
/// is still waiting. The read makes it in its statement and reports the
/// count with [`FoldedHit::made`]; dropping the [`FoldedHit`] unreported
/// (the read never sent its statement) leaves the hit to the request.
#[must_use]
pub fn take_deferred_hit() -> Option<FoldedHit> {
    DEFERRED
        .try_with(|slot| {
            let mut held = lock(slot);
            match std::mem::replace(&mut *held, Slot::Taken) {
                Slot::Waiting(hit) => Some(FoldedHit {
                    hit,
                    slot: Arc::clone(slot),
                    made: false,
                }),
                other => {
                    *held = other;
                    None
                }
            }
        })
        .ok()
        .flatten()
}

/// A deferred hit a read has taken.
#[derive(Debug)]
pub struct FoldedHit {
    hit: DeferredHit,
    slot: Arc<Mutex<Slot>>,
    made: bool,
}

impl FoldedHit {
    /// The hit to make.
    #[must_use]
    pub fn hit(&self) -> &DeferredHit {
        &self.hit
    }

    /// Reports the read's statement: the hit's count, or the statement's
    /// failure.
    pub fn made(mut self, count: StoreResult<Option<u32>>) {
        self.made = true;
        *lock(&self.slot) = Slot::Made(count);
    }
}

impl Drop for FoldedHit {
    fn drop(&mut self) {
        if !self.made {
            *lock(&self.slot) = Slot::Waiting(std::mem::take(&mut self.hit));
        }
    }
}

fn lock(slot: &Mutex<Slot>) -> std::sync::MutexGuard<'_, Slot> {
    slot.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit() -> DeferredHit {
        DeferredHit {
            bucket: "requests:key_1".into(),
            window_start: 60,
            limit: 120,
        }
    }

    #[tokio::test]
    async fn a_hit_no_read_takes_is_left_to_the_request() {
        let ((), outcome) = defer_hit(hit(), async {}).await;
        assert!(matches!(outcome, HitOutcome::NotMade(h) if h == hit()));
    }

    #[tokio::test]
    async fn a_read_makes_the_hit_once_and_the_request_learns_its_count() {
        let (second, outcome) = defer_hit(hit(), async {
            let folded = take_deferred_hit().unwrap();
            assert_eq!(folded.hit(), &hit());
            folded.made(Ok(Some(7)));
            take_deferred_hit().is_some()
        })
        .await;
        assert!(!second, "a second read found the hit again");
        assert!(matches!(outcome, HitOutcome::Made(Ok(Some(7)))));
    }

    #[tokio::test]
    async fn a_read_that_sent_nothing_gives_the_hit_back() {
        let (again, outcome) = defer_hit(hit(), async {
            drop(take_deferred_hit().unwrap());
            let again = take_deferred_hit();
            let found = again.is_some();
            drop(again);
            found
        })
        .await;
        assert!(again, "the hit dropped unmade was not waiting again");
        assert!(matches!(outcome, HitOutcome::NotMade(_)));
    }

    #[tokio::test]
    async fn outside_a_deferring_request_there_is_nothing_to_take() {
        assert!(take_deferred_hit().is_none());
    }
}
