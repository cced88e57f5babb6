//! The port of the background job table.

use async_trait::async_trait;

use crate::event::NewEvent;
use crate::ids::GroupId;
use crate::job::{Job, JobClaim, JobKind, NewJob};
use crate::scope::Scope;
use crate::store::StoreResult;

/// The background job table.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait JobStore: Send + Sync {
    /// Enqueues a job.
    ///
    /// # Errors
    /// MUST return [`Conflict::IdTaken`](crate::store::Conflict::IdTaken) when the id exists.
    async fn enqueue(&self, job: &NewJob) -> StoreResult<()>;

    /// Claims the oldest due job of `kinds` (queued, or running with an
    /// expired lease or claimed by a dead process: see [`process`](crate::store::process)),
    /// leasing it to the store's owner until `now_ms + lease_ms` and
    /// counting the attempt. Two claimants never get the same job.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn claim_job(
        &self,
        kinds: &[JobKind],
        now_ms: i64,
        lease_ms: i64,
    ) -> StoreResult<Option<Job>>;

    /// Marks a claimed job done, stores its `result` and appends `events`,
    /// in one transaction, if `claim` still holds. Returns `false`,
    /// changing nothing, when the job was superseded meanwhile or its
    /// lease ran out and another worker claimed it again.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) for an unknown job.
    async fn complete_job<'a>(
        &self,
        claim: &JobClaim,
        events: &[NewEvent],
        result: Option<&'a str>,
    ) -> StoreResult<bool>;

    /// The result of the group's most recent finished job of `kind`, if
    /// that job stored one.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn latest_result(
        &self,
        scope: &Scope,
        group: &GroupId,
        kind: JobKind,
    ) -> StoreResult<Option<String>>;

    /// Puts a claimed job back to run at `retry_at_ms`, or marks it failed
    /// when `retry_at_ms` is `None` — if `claim` still holds (otherwise
    /// nothing changes and `false` is returned).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) for an unknown job.
    async fn fail_job(
        &self,
        claim: &JobClaim,
        retry_at_ms: Option<i64>,
        error: &str,
    ) -> StoreResult<bool>;

    /// The group's open job of `kind` (queued or running), if any: while
    /// one exists, quotes answer 409 `rates_pending`.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn open_job(
        &self,
        scope: &Scope,
        group: &GroupId,
        kind: JobKind,
    ) -> StoreResult<Option<Job>>;
}
