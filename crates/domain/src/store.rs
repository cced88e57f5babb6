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
//! takes a [`Scope`](crate::scope::Scope); nothing of another partner or mode is ever returned.

mod census;
mod claims;
mod embed;
mod groups;
mod health;
mod idempotency;
mod jobs;
mod onboarding;
mod outbox;
mod partner_users;
mod partners;
mod portal;
pub mod process;
mod quotes;
mod rate_limits;
mod webhooks;

pub use census::CensusStore;
pub use claims::ClaimsStore;
pub use embed::{EmbedStore, EmbedWrite};
pub use groups::{GroupAdvance, GroupStore};
pub use health::Health;
pub use idempotency::IdempotencyStore;
pub use jobs::JobStore;
pub use onboarding::{OnboardingStore, OnboardingWrite};
pub use outbox::{AttemptRecord, OutboxStore, OutboxWatch};
pub use partner_users::PartnerUserStore;
pub use partners::PartnerStore;
pub use portal::PortalStore;
pub use quotes::{Lead, QuoteStore};
pub use rate_limits::{
    DeferredHit, FoldedHit, HitOutcome, RateLimitStore, defer_hit, take_deferred_hit,
};
pub use webhooks::{HealthChange, SecretRotation, WebhookStore};
#[cfg(any(test, feature = "mock"))]
pub use {
    census::MockCensusStore, claims::MockClaimsStore, embed::MockEmbedStore,
    groups::MockGroupStore, health::MockHealth, idempotency::MockIdempotencyStore,
    jobs::MockJobStore, onboarding::MockOnboardingStore, outbox::MockOutboxStore,
    partner_users::MockPartnerUserStore, partners::MockPartnerStore, portal::MockPortalStore,
    quotes::MockQuoteStore, rate_limits::MockRateLimitStore, webhooks::MockWebhookStore,
};

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
    /// The onboarding checklist changed since it was read (make the
    /// change again on the new one).
    #[error("the onboarding checklist changed meanwhile; retry")]
    OnboardingMoved,
    /// The set-password link was used, or replaced by a newer one,
    /// meanwhile.
    #[error("the link was already used")]
    LinkUsed,
    /// The embed session changed since it was read (make the change again
    /// on the new state).
    #[error("the offer session changed meanwhile; retry")]
    EmbedMoved,
    /// The quote's offer was accepted already.
    #[error("this offer was already accepted")]
    AlreadyAccepted,
    /// The webhook endpoint was replaced or changed meanwhile.
    #[error("the webhook endpoint changed meanwhile; retry")]
    EndpointMoved,
    /// The webhook endpoint is disabled.
    #[error("the webhook endpoint is disabled; PUT /webhook with its URL re-enables it")]
    EndpointDisabled,
    /// No webhook endpoint is registered in the mode.
    #[error("no webhook endpoint is registered in this mode")]
    NoEndpoint,
    /// The event's delivery is still pending.
    #[error("this event's delivery is still pending; it is retried on its own")]
    DeliveryPending,
    /// The partner already has a portal user with this address.
    #[error("the partner already has a user with this email")]
    UserTaken,
    /// A generated id collided (retry with a fresh one).
    #[error("id collision")]
    IdTaken,
}

/// Shorthand for port results.
pub type StoreResult<T> = Result<T, StoreError>;
