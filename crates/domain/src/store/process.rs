//! Serving processes and their heartbeats: how the store tells a dead
//! process's in-flight idempotency records and job claims from a live
//! one's.
//!
//! Each `serve` process owns its stores under a random
//! [`ProcessId`](crate::ids::ProcessId): it registers that owner when it
//! starts and refreshes its heartbeat every [`HEARTBEAT_INTERVAL_MS`]; the
//! in-flight records it begins and the jobs it claims name it. A record or
//! claim of another owner that is no longer registered, or whose last
//! heartbeat is older than [`OWNER_TIMEOUT_MS`], is abandoned: the next
//! `begin` of the key executes and the next `claim_job` takes the job,
//! without waiting for the lease. So a crashed process's keys and jobs free
//! within 10 seconds on PostgreSQL. A process that stops cleanly
//! deregisters, freeing them at once; on SQLite, which one process serves,
//! registering frees everything earlier processes held.
//!
//! Stores opened without an owner (operator commands, tests) record none:
//! their keys and claims free when their leases run out, and registering,
//! beating and deregistering change nothing for them.

use async_trait::async_trait;

use crate::store::StoreResult;

/// How often a serving process refreshes its heartbeat, in milliseconds.
pub const HEARTBEAT_INTERVAL_MS: i64 = 2_000;

/// How old a heartbeat may be before its process is presumed dead, in
/// milliseconds: four missed beats. With the interval, a dead process's
/// keys and claims free at most this long after its last heartbeat, within
/// 10 seconds of its death even counting the job worker's poll.
pub const OWNER_TIMEOUT_MS: i64 = 8_000;

/// The registry of serving processes, kept by the owner of the store.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait ProcessStore: Send + Sync {
    /// Registers the store's owner as live at `now_ms`. On SQLite, which
    /// one process serves, the same transaction frees everything earlier
    /// processes left: their registrations, and every in-flight idempotency
    /// record and job claim that is not the owner's.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable)
    /// or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn register_process(&self, now_ms: i64) -> StoreResult<()>;

    /// Refreshes the owner's heartbeat to `now_ms`, registering it again if
    /// a sweep removed it.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable)
    /// or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn heartbeat(&self, now_ms: i64) -> StoreResult<()>;

    /// Removes the owner's registration (a clean shutdown): its in-flight
    /// records and job claims are abandoned at once.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable)
    /// or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn deregister_process(&self) -> StoreResult<()>;

    /// Deletes the registrations of processes presumed dead at `now_ms`
    /// (heartbeat older than [`OWNER_TIMEOUT_MS`]); returns how many.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable)
    /// or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn sweep_processes(&self, now_ms: i64) -> StoreResult<u64>;
}
