//! The port of the event outbox: appending, reading back, and claiming
//! deliveries.

use async_trait::async_trait;

use crate::event::{Event, EventFilter, NewEvent};
use crate::ids::EventId;
use crate::page::{Page, PageRequest};
use crate::scope::Scope;
use crate::store::StoreResult;
use crate::webhook::WebhookEndpoint;

/// One attempt's outcome, as [`OutboxStore::record_attempts`] records it.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptRecord {
    /// The event.
    pub id: EventId,
    /// The claim's lease, its fencing token.
    pub lease_until_ms: i64,
    /// The delivery's state after the attempt.
    pub state: crate::event::DeliveryState,
    /// The endpoint's status, when it answered.
    pub status: Option<u16>,
    /// When the next attempt is due (pending only).
    pub next_attempt_at_ms: Option<i64>,
    /// The delivery-log row.
    pub log: Option<crate::webhook::attempt::DeliveryAttempt>,
}

/// How an idle dispatcher hears of new work without polling the outbox.
#[derive(Debug, Clone)]
pub struct OutboxWatch {
    /// Moves on after every commit that appends events or schedules a
    /// delivery again (in this process, and on PostgreSQL in every
    /// process sharing the database).
    pub changes: tokio::sync::watch::Receiver<u64>,
    /// The longest an idle dispatcher sleeps before looking again anyway:
    /// what `changes` cannot report (another process writing the SQLite
    /// file, a notification lost while reconnecting) waits at most this.
    pub recheck: std::time::Duration,
}

/// The event outbox: appending, reading back, and claiming deliveries.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait OutboxStore: Send + Sync {
    /// Appends events on their own (a `ping`).
    ///
    /// # Errors
    /// MUST return [`Conflict::IdTaken`](crate::store::Conflict::IdTaken) when an id exists.
    async fn append(&self, events: &[NewEvent], now_ms: i64) -> StoreResult<()>;

    /// Appends one event already claimed by the caller until
    /// `lease_until_ms` (the test `ping`, whose first attempt the request
    /// makes itself) when its scope has a webhook endpoint, reading the
    /// endpoint in the same transaction: the endpoint, or `None` (nothing
    /// appended). No dispatcher takes the event before the lease ends.
    ///
    /// # Errors
    /// MUST return [`Conflict::IdTaken`](crate::store::Conflict::IdTaken) when the id exists.
    async fn append_claimed(
        &self,
        event: &NewEvent,
        now_ms: i64,
        lease_until_ms: i64,
    ) -> StoreResult<Option<WebhookEndpoint>>;

    /// Claims up to `limit` deliveries due at `now_ms`, leasing each for
    /// `lease_ms`: no other claimant (in any process) gets them until the
    /// lease ends or the attempt is recorded.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn claim_deliveries(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: u32,
    ) -> StoreResult<Vec<Event>>;

    /// When the earliest pending delivery falls due (Unix ms): its next
    /// attempt's time, or the end of its claim's lease when that is later
    /// (an attempt in flight); `None` when nothing is pending.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn next_due_ms(&self) -> StoreResult<Option<i64>>;

    /// The outbox's change notifications, for an idle dispatcher to wait on.
    fn watch(&self) -> OutboxWatch;

    /// Records an attempt's outcome — the new state, the attempt count and,
    /// when pending, the next due time — and releases the lease, if the
    /// claim still holds: `lease_until_ms` is the claimed event's
    /// `lease_until_ms`, the fencing token of that claim. Returns `false`,
    /// changing nothing, when the lease ran out and another claimant took
    /// the delivery.
    ///
    /// `log`, the attempt's delivery-log row, is written in the same
    /// transaction (and not at all when the claim was lost).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) for an unknown event.
    async fn record_attempt(
        &self,
        id: &EventId,
        lease_until_ms: i64,
        state: crate::event::DeliveryState,
        status: Option<u16>,
        next_attempt_at_ms: Option<i64>,
        log: Option<crate::webhook::attempt::DeliveryAttempt>,
    ) -> StoreResult<bool>;

    /// Schedules a new delivery of the scope's event `id` at `now_ms`
    /// (`POST /events/{id}/resend`): pending, no attempts yet, so it gets
    /// its own retries; the same id, so the same `webhook-id`.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope has no such event, and
    /// [`Conflict::DeliveryPending`](crate::store::Conflict::DeliveryPending) when its delivery is pending.
    async fn resend(&self, scope: &Scope, id: &EventId, now_ms: i64) -> StoreResult<Event>;

    /// Schedules at `now_ms` a new delivery of each of the scope's events
    /// created in `since..until` (Unix seconds) whose type is one of
    /// `types` (all when empty), except `ping` events and events whose
    /// delivery is already pending; returns how many. The dispatcher takes
    /// them oldest first.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn replay(
        &self,
        scope: &Scope,
        since: i64,
        until: i64,
        types: Vec<crate::event::EventType>,
        now_ms: i64,
    ) -> StoreResult<u64>;

    /// Records a batch of attempts in one transaction, each as
    /// [`OutboxStore::record_attempt`] does (fenced by its lease, with its
    /// delivery-log row); answers, in order, whether each was recorded.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn record_attempts(&self, records: Vec<AttemptRecord>) -> StoreResult<Vec<bool>>;

    /// Reads an event of the scope with its delivery state.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope has no such event.
    async fn event(&self, scope: &Scope, id: &EventId) -> StoreResult<Event>;

    /// The scope's events that `filter` keeps, newest first.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn events(
        &self,
        scope: &Scope,
        filter: &EventFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<Event>>;
}
