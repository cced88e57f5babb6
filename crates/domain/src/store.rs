//! Storage ports. The persistence adapter (`store-diesel`) implements them
//! on SQLite and PostgreSQL; services and unit tests use them through
//! `Arc<dyn …>` and their `mockall` mocks.
//!
//! **Transactions.** Each method is one unit of work: it commits entirely
//! or not at all. A method that makes a change an event announces takes
//! that event (or the job that will announce it) and writes it to the
//! outbox in the same transaction, so a crash can never leave a change
//! without its event, or an event without its change.
//!
//! **Scoping.** Every method that reads or writes a partner's resources
//! takes a [`Scope`]; nothing of another partner or mode is ever returned.

pub mod process;

use async_trait::async_trait;

use crate::account::ClaimsAggregate;
use crate::api_key::{KeyDigest, KeyRecord};
use crate::census::{CensusOutcome, CensusWrite, MemberWrite, StoredMember};
use crate::enrollment::Enrollment;
use crate::event::{Event, NewEvent};
use crate::group::{CompanyState, Group, GroupStatus};
use crate::idempotency::{Begin, IdempotentRequest, StoredResponse};
use crate::ids::{EnrollmentId, EventId, GroupId, JobId, KeyId, MemberId, PartnerId, QuoteId};
use crate::job::{Job, JobKind, NewJob};
use crate::member::MemberState;
use crate::mode::Mode;
use crate::page::{Page, PageRequest};
use crate::partner::{Activity, Partner};
use crate::quote::{Quote, QuoteStatus};
use crate::rate_limit::Policy;
use crate::scope::Scope;
use crate::webhook::WebhookEndpoint;

/// Why a storage operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The addressed row does not exist in the caller's scope.
    #[error("not found")]
    NotFound,
    /// A uniqueness or state rule refused the write.
    #[error("conflict: {0}")]
    Conflict(Conflict),
    /// The database cannot be reached (503 `not_configured`).
    #[error("database unavailable")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// Any other database failure (500).
    #[error("database error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Which rule a conflicting write broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Conflict {
    /// Another group of the mode holds the domain (enrolled or active).
    #[error("an enrolled group already exists for this domain")]
    DomainTaken,
    /// A live key is active and no rotation was asked for.
    #[error("a live key is already active")]
    LiveKeyActive,
    /// The group already has an enrollment.
    #[error("the group already has an enrollment")]
    AlreadyEnrolled,
    /// Another member of the group has the external id or email.
    #[error("another member of the group has this external_id or email")]
    MemberTaken,
    /// The group's company state moved on meanwhile (a concurrent go-live).
    #[error("the group is already live")]
    CompanyStateMoved,
    /// The quote's status changed meanwhile (a concurrent finalization).
    #[error("the quote is no longer in_review; only an in_review quote can be finalized")]
    QuoteStatusMoved,
    /// The census changed the group's rating inputs since the quote.
    #[error("the census changed since this quote; re-quote")]
    QuoteStale,
    /// A generated id collided (retry with a fresh one).
    #[error("id collision")]
    IdTaken,
}

/// Shorthand for port results.
pub type StoreResult<T> = Result<T, StoreError>;

/// Partners and their API keys (operator commands and authentication).
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait PartnerStore: Send + Sync {
    /// Stores a new partner.
    ///
    /// # Errors
    /// MUST return [`Conflict::IdTaken`] when the id exists.
    async fn insert_partner(&self, partner: &Partner, now: i64) -> StoreResult<()>;

    /// Reads a partner.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] for an unknown id.
    async fn partner(&self, id: &PartnerId) -> StoreResult<Partner>;

    /// Every partner, oldest first (operator listing; `serve --demo` uses
    /// it to tell an empty database).
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`] or [`StoreError::Internal`].
    async fn partners(&self) -> StoreResult<Vec<Partner>>;

    /// Turns live mode on or off and records when.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] for an unknown partner.
    async fn set_live_enabled(&self, id: &PartnerId, enabled: bool, now: i64) -> StoreResult<()>;

    /// Stores a new key. For a live key, when `rotate` is set, every active
    /// live key of the partner is revoked in the same transaction; the ids
    /// revoked are returned.
    ///
    /// # Errors
    /// MUST return [`Conflict::LiveKeyActive`] for a live key when one is
    /// active and `rotate` is not set, and [`StoreError::NotFound`] for an
    /// unknown partner.
    async fn insert_key(&self, key: &KeyRecord, rotate: bool, now: i64) -> StoreResult<Vec<KeyId>>;

    /// Finds an active or revoked key by digest, with its partner.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] when no key has the digest.
    async fn key_by_digest(&self, digest: &KeyDigest) -> StoreResult<(KeyRecord, Partner)>;

    /// Reads one key record.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] for an unknown id.
    async fn key(&self, id: &KeyId) -> StoreResult<KeyRecord>;

    /// A partner's keys, newest first.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] for an unknown partner.
    async fn keys(&self, partner: &PartnerId) -> StoreResult<Vec<KeyRecord>>;

    /// What the partner has done in `mode` so far (the go-live readiness
    /// report of `partner readiness`).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] for an unknown partner.
    async fn activity(&self, id: &PartnerId, mode: Mode) -> StoreResult<Activity>;

    /// Revokes a key (idempotent on an already revoked key).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] for an unknown id.
    async fn revoke_key(&self, id: &KeyId, now: i64) -> StoreResult<()>;
}

/// Employer groups.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait GroupStore: Send + Sync {
    /// Stores a new group.
    ///
    /// # Errors
    /// MUST return [`Conflict::DomainTaken`] when a group of the same mode
    /// (any partner) with the same domain is enrolled or active, and
    /// [`Conflict::IdTaken`] when the id exists.
    async fn insert_group(&self, group: &Group) -> StoreResult<()>;

    /// Stores a new group created under an `Idempotency-Key`, recording
    /// the key in the same transaction; when the key already created a
    /// group at or after `since` (Unix seconds: the replay window), stores
    /// nothing and returns that group instead. A retry whose first
    /// execution committed but died before its answer was stored thus
    /// answers with the group it made rather than making a second one.
    ///
    /// # Errors
    /// As [`GroupStore::insert_group`].
    async fn insert_group_once(
        &self,
        group: &Group,
        key: &str,
        since: i64,
    ) -> StoreResult<Option<Group>>;

    /// Reads a group of the scope.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] when the scope has no such group.
    async fn group(&self, scope: &Scope, id: &GroupId) -> StoreResult<Group>;

    /// Saves the writable fields of a group (name, domain, external id,
    /// address, contact, current coverage, `updated_at`).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] when the scope has no such
    /// group, and [`Conflict::DomainTaken`] when an enrolled or active
    /// group holds the new domain.
    async fn update_group(&self, scope: &Scope, group: &Group) -> StoreResult<()>;

    /// Moves status and company state forward (status never moves back)
    /// and appends `events` in the same transaction. The company state
    /// only moves none → `sandbox` → `prod`, checked under the group's lock.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] when the scope has no such
    /// group, and [`Conflict::CompanyStateMoved`] when `company_state` is
    /// not the next state of the stored one.
    async fn advance_group(
        &self,
        scope: &Scope,
        id: &GroupId,
        status: GroupStatus,
        company_state: Option<CompanyState>,
        events: &[NewEvent],
        now: i64,
    ) -> StoreResult<Group>;

    /// Whether an enrolled or active group of `mode` (any partner) holds
    /// `domain`.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`] or [`StoreError::Internal`].
    async fn domain_held(&self, mode: Mode, domain: &str) -> StoreResult<bool>;

    /// Reads a group by id alone, whatever its partner and mode (operator
    /// commands).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] for an unknown id.
    async fn find_group(&self, id: &GroupId) -> StoreResult<Group>;

    /// The scope's groups, newest first.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`] or [`StoreError::Internal`].
    async fn groups(&self, scope: &Scope, page: &PageRequest) -> StoreResult<Page<Group>>;
}

/// Census members.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait CensusStore: Send + Sync {
    /// Replaces a group's census in one transaction: matches rows to
    /// existing members (by `external_id`, else email), keeps their ids,
    /// removes absent members, updates the group's member count, rating
    /// digest and status (`census_received` when ≥ 1 member), supersedes
    /// the group's open market-comparison job and enqueues `write.job`.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] when the scope has no such group.
    async fn replace_census(
        &self,
        scope: &Scope,
        write: &CensusWrite,
    ) -> StoreResult<CensusOutcome>;

    /// A page of a group's census, newest first over `(created_at, id)`.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] when the scope has no such group.
    async fn census_page(
        &self,
        scope: &Scope,
        group: &GroupId,
        page: &PageRequest,
    ) -> StoreResult<Page<StoredMember>>;

    /// Adds one member (a new hire) with its state, then, in the same
    /// transaction, recomputes the group's count and rating digest,
    /// supersedes the open market comparison and enqueues `write.job`.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] when the scope has no such
    /// group, and [`Conflict::MemberTaken`] when another member of the
    /// group has the external id or email.
    async fn add_member(&self, scope: &Scope, write: &MemberWrite) -> StoreResult<StoredMember>;

    /// Replaces one member's fields and state, as [`CensusStore::add_member`]
    /// does for a new one (position and first appearance kept).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] when the scope's group has no
    /// such member, and [`Conflict::MemberTaken`] as `add_member`.
    async fn update_member(&self, scope: &Scope, write: &MemberWrite) -> StoreResult<StoredMember>;

    /// Reads one member of a group of the scope.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] when the scope's group has no
    /// such member.
    async fn member(
        &self,
        scope: &Scope,
        group: &GroupId,
        id: &MemberId,
    ) -> StoreResult<StoredMember>;

    /// Records elections: each member's new roster state, and `events`
    /// (`deductions.changed`), in one transaction under the group's lock.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] when the scope has no such
    /// group or a member is not the group's.
    async fn record_elections(
        &self,
        scope: &Scope,
        group: &GroupId,
        states: &[(MemberId, MemberState)],
        events: &[NewEvent],
        now: i64,
    ) -> StoreResult<()>;

    /// The whole census of a group, in the order of its last write.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] when the scope has no such group.
    async fn census(&self, scope: &Scope, group: &GroupId) -> StoreResult<Vec<StoredMember>>;
}

/// A price-on-plan lead: a new group with its census, the quote that
/// prices it and the job that finishes the pricing.
#[derive(Debug, Clone, PartialEq)]
pub struct Lead {
    /// The new group.
    pub group: Group,
    /// Its census (`job` is ignored: a lead starts no market comparison).
    pub census: CensusWrite,
    /// The quote, status `pricing`.
    pub quote: Quote,
    /// The pricing job.
    pub job: NewJob,
    /// When set, the caller prices the job itself and holds its claim
    /// until then (Unix milliseconds); otherwise the job is queued.
    pub claimed_until_ms: Option<i64>,
}

/// Quotes and enrollments.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait QuoteStore: Send + Sync {
    /// Stores a quote and moves its group to at least `quoted`, appending
    /// `events` in the same transaction.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] when the scope has no such group.
    async fn insert_quote(&self, quote: &Quote, events: &[NewEvent]) -> StoreResult<()>;

    /// Reads a quote of the scope.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] when the scope has no such quote.
    async fn quote(&self, scope: &Scope, id: &QuoteId) -> StoreResult<Quote>;

    /// Reads a quote by id alone, whatever its partner and mode (operator
    /// commands).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] for an unknown id.
    async fn find_quote(&self, id: &QuoteId) -> StoreResult<Quote>;

    /// Changes a quote's status and document, appending `events` in the
    /// same transaction (`quote.finalized`), when the stored status may move
    /// to `status` (see `QuoteStatus::predecessors`).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] when the scope has no such
    /// quote, and [`Conflict::QuoteStatusMoved`] when its stored status
    /// cannot move to `status`.
    async fn update_quote(
        &self,
        scope: &Scope,
        id: &QuoteId,
        status: QuoteStatus,
        body: &serde_json::Value,
        events: &[NewEvent],
    ) -> StoreResult<()>;

    /// Stores a price-on-plan lead in one transaction: the new group, its
    /// census (status `census_received`, count and rating digest set, no
    /// market comparison), the quote (group → `quoted`) and the pricing
    /// job — queued, or already claimed by the caller (running, attempt 1,
    /// leased until `claimed_until_ms`) when that is set.
    ///
    /// # Errors
    /// MUST return [`Conflict::IdTaken`] when the group, a member, the
    /// quote or the job id exists, and [`Conflict::DomainTaken`] when an
    /// enrolled or active group of the mode holds the group's domain.
    async fn insert_lead(&self, lead: &Lead) -> StoreResult<()>;

    /// The scope's newest price-on-plan quote for `request_digest` that
    /// has not expired at `now` (Unix seconds), if any.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`] or [`StoreError::Internal`].
    async fn lead_quote(
        &self,
        scope: &Scope,
        request_digest: &str,
        now: i64,
    ) -> StoreResult<Option<Quote>>;

    /// A group's quotes, newest first.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] when the scope has no such group.
    async fn quotes(
        &self,
        scope: &Scope,
        group: &GroupId,
        page: &PageRequest,
    ) -> StoreResult<Page<Quote>>;

    /// Stores the group's enrollment, moves the group to `enrolled` with
    /// company state `sandbox`, and appends `events`, in one transaction.
    ///
    /// # Errors
    /// MUST return [`Conflict::AlreadyEnrolled`] when the group has one,
    /// [`Conflict::QuoteStale`] when the quote's rating digest is no longer
    /// the group's (checked under the group's lock),
    /// [`Conflict::DomainTaken`] when another group of the mode holds the
    /// domain, and [`StoreError::NotFound`] when the scope has no such group.
    async fn insert_enrollment(
        &self,
        enrollment: &Enrollment,
        events: &[NewEvent],
    ) -> StoreResult<()>;

    /// Reads an enrollment of the scope.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] when the scope has no such enrollment.
    async fn enrollment(&self, scope: &Scope, id: &EnrollmentId) -> StoreResult<Enrollment>;

    /// The group's enrollment, if any.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] when the scope has no such group.
    async fn group_enrollment(
        &self,
        scope: &Scope,
        group: &GroupId,
    ) -> StoreResult<Option<Enrollment>>;
}

/// The claims-aggregate ledger behind account spend.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait ClaimsStore: Send + Sync {
    /// Stores `rows` for the group, replacing rows of the same month and
    /// category, in one transaction; returns how many were written.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] when the scope has no such group.
    async fn import_claims(
        &self,
        scope: &Scope,
        group: &GroupId,
        rows: &[ClaimsAggregate],
    ) -> StoreResult<u32>;

    /// The group's ledger, oldest month first.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] when the scope has no such group.
    async fn claims(&self, scope: &Scope, group: &GroupId) -> StoreResult<Vec<ClaimsAggregate>>;
}

/// The event outbox: appending, reading back, and claiming deliveries.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait OutboxStore: Send + Sync {
    /// Appends events on their own (a `ping`).
    ///
    /// # Errors
    /// MUST return [`Conflict::IdTaken`] when an id exists.
    async fn append(&self, events: &[NewEvent], now_ms: i64) -> StoreResult<()>;

    /// Appends one event already claimed by the caller until
    /// `lease_until_ms` (the test `ping`, whose first attempt the request
    /// makes itself): no dispatcher takes it before the lease ends.
    ///
    /// # Errors
    /// MUST return [`Conflict::IdTaken`] when the id exists.
    async fn append_claimed(
        &self,
        event: &NewEvent,
        now_ms: i64,
        lease_until_ms: i64,
    ) -> StoreResult<()>;

    /// Claims up to `limit` deliveries due at `now_ms`, leasing each for
    /// `lease_ms`: no other claimant (in any process) gets them until the
    /// lease ends or the attempt is recorded.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`] or [`StoreError::Internal`].
    async fn claim_deliveries(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: u32,
    ) -> StoreResult<Vec<Event>>;

    /// Records an attempt's outcome — the new state, the attempt count and,
    /// when pending, the next due time — and releases the lease, if the
    /// claim still holds: `lease_until_ms` is the claimed event's
    /// `lease_until_ms`, the fencing token of that claim. Returns `false`,
    /// changing nothing, when the lease ran out and another claimant took
    /// the delivery.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] for an unknown event.
    async fn record_attempt(
        &self,
        id: &EventId,
        lease_until_ms: i64,
        state: crate::event::DeliveryState,
        status: Option<u16>,
        next_attempt_at_ms: Option<i64>,
    ) -> StoreResult<bool>;

    /// Reads an event of the scope with its delivery state.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] when the scope has no such event.
    async fn event(&self, scope: &Scope, id: &EventId) -> StoreResult<Event>;

    /// The scope's events created at or after `since`, newest first.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`] or [`StoreError::Internal`].
    async fn events(
        &self,
        scope: &Scope,
        since: i64,
        page: &PageRequest,
    ) -> StoreResult<Page<Event>>;
}

/// Webhook endpoints, one per partner and mode.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait WebhookStore: Send + Sync {
    /// Stores the scope's endpoint, replacing the one registered before
    /// (its URL and secret).
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`] or [`StoreError::Internal`].
    async fn put_endpoint(&self, endpoint: &WebhookEndpoint) -> StoreResult<()>;

    /// The scope's endpoint, if one is registered.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`] or [`StoreError::Internal`].
    async fn endpoint(&self, scope: &Scope) -> StoreResult<Option<WebhookEndpoint>>;
}

/// The background job table.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait JobStore: Send + Sync {
    /// Enqueues a job.
    ///
    /// # Errors
    /// MUST return [`Conflict::IdTaken`] when the id exists.
    async fn enqueue(&self, job: &NewJob) -> StoreResult<()>;

    /// Claims the oldest due job of `kinds` (queued, or running with an
    /// expired lease or claimed by a dead process: see [`process`]),
    /// leasing it to the store's owner until `now_ms + lease_ms` and
    /// counting the attempt. Two claimants never get the same job.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`] or [`StoreError::Internal`].
    async fn claim_job(
        &self,
        kinds: &[JobKind],
        now_ms: i64,
        lease_ms: i64,
    ) -> StoreResult<Option<Job>>;

    /// Marks a claimed job done, stores its `result` and appends `events`,
    /// in one transaction, if the claim still holds: `attempt` is the
    /// claimed job's `attempts`, the fencing token of that claim. Returns
    /// `false`, changing nothing, when the job was superseded meanwhile or
    /// its lease ran out and another worker claimed it again.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] for an unknown job.
    async fn complete_job<'a>(
        &self,
        id: &JobId,
        attempt: u32,
        events: &[NewEvent],
        result: Option<&'a str>,
    ) -> StoreResult<bool>;

    /// The result of the group's most recent finished job of `kind`, if
    /// that job stored one.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`] or [`StoreError::Internal`].
    async fn latest_result(
        &self,
        scope: &Scope,
        group: &GroupId,
        kind: JobKind,
    ) -> StoreResult<Option<String>>;

    /// Puts a claimed job back to run at `retry_at_ms`, or marks it failed
    /// when `retry_at_ms` is `None` — if the claim `attempt` still holds
    /// (otherwise nothing changes and `false` is returned).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] for an unknown job.
    async fn fail_job(
        &self,
        id: &JobId,
        attempt: u32,
        retry_at_ms: Option<i64>,
        error: &str,
    ) -> StoreResult<bool>;

    /// The group's open job of `kind` (queued or running), if any: while
    /// one exists, quotes answer 409 `rates_pending`.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`] or [`StoreError::Internal`].
    async fn open_job(
        &self,
        scope: &Scope,
        group: &GroupId,
        kind: JobKind,
    ) -> StoreResult<Option<Job>>;
}

/// Idempotency records.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Atomically looks up `(scope, request.key)` and either starts an
    /// in-flight record ([`Begin::Execute`]) or reports a replay, a
    /// mismatch or an in-flight duplicate. The in-flight record names the
    /// store's owner. Records older than 24 hours, and in-flight records
    /// whose lease ran out or whose owner is dead (see [`process`]), count
    /// as absent.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`] or [`StoreError::Internal`].
    async fn begin(
        &self,
        scope: &Scope,
        request: &IdempotentRequest,
        now: i64,
    ) -> StoreResult<Begin>;

    /// Stores the response of an executed request.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`] when no in-flight record of the
    /// store's owner exists (another process took over the key).
    async fn complete(
        &self,
        scope: &Scope,
        key: &str,
        response: &StoredResponse,
        now: i64,
    ) -> StoreResult<()>;

    /// Drops the owner's in-flight record (the response is not stored:
    /// 5xx, 429).
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`] or [`StoreError::Internal`].
    async fn release(&self, scope: &Scope, key: &str) -> StoreResult<()>;

    /// Deletes, in one transaction, what the 24-hour replay window no
    /// longer needs, and returns how many rows went: answered records
    /// whose replay expired at `now` (Unix seconds); in-flight records
    /// begun 24 hours or more before `now` whose request cannot be running
    /// any more (no owner, or a dead one: see [`process`]) — a live
    /// owner's in-flight record is never deleted; and the creation keys of
    /// [`GroupStore::insert_group_once`] recorded more than 24 hours
    /// before `now`.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`] or [`StoreError::Internal`].
    async fn purge_idempotency(&self, now: i64) -> StoreResult<u64>;
}

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
    /// Only [`StoreError::Unavailable`] or [`StoreError::Internal`].
    async fn hit(&self, policy: &Policy, bucket: &str, now: i64) -> StoreResult<Option<u32>>;
}

/// Whether the store answers (for `/readyz` and failing closed).
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait Health: Send + Sync {
    /// Runs a trivial query.
    ///
    /// # Errors
    /// [`StoreError::Unavailable`] when the database cannot be reached.
    async fn ping(&self) -> StoreResult<()>;
}
