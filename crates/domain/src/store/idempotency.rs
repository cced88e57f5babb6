//! The port of idempotency records.

use async_trait::async_trait;

use crate::idempotency::{Begin, Completion, IdempotentRequest};
use crate::scope::Scope;
use crate::store::StoreResult;

/// Idempotency records.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Atomically looks up `(scope, request.key)` and either starts an
    /// in-flight record ([`Begin::Execute`]) or reports a replay, a
    /// mismatch or an in-flight duplicate. The in-flight record names the
    /// store's owner. Records older than 24 hours, and in-flight records
    /// whose lease ran out or whose owner is dead (see [`process`](crate::store::process)), count
    /// as absent.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn begin(
        &self,
        scope: &Scope,
        request: &IdempotentRequest,
        now: i64,
    ) -> StoreResult<Begin>;

    /// Stores the response of an executed request in the in-flight record
    /// its attempt began (`done.request.key`, `done.request.attempt`).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when no in-flight record of
    /// this attempt exists (another process took over the key).
    async fn complete<'a>(&self, scope: &Scope, done: Completion<'a>) -> StoreResult<()>;

    /// Drops the in-flight record `request`'s attempt began, if there is
    /// one (the response is not stored: 5xx, 429; or `begin` failed and
    /// may have committed). Another attempt's record is left alone.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn release(&self, scope: &Scope, request: &IdempotentRequest) -> StoreResult<()>;

    /// Deletes, in one transaction, what the 24-hour replay window no
    /// longer needs, and returns how many rows went: answered records
    /// whose replay expired at `now` (Unix seconds); in-flight records
    /// begun 24 hours or more before `now` whose request cannot be running
    /// any more (no owner, or a dead one: see [`process`](crate::store::process)) — a live
    /// owner's in-flight record is never deleted; and the creation keys of
    /// [`GroupStore::insert_group_once`](crate::store::GroupStore::insert_group_once) recorded more than 24 hours
    /// before `now`.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn purge_idempotency(&self, now: i64) -> StoreResult<u64>;
}
