//! The port of the offer iframe's sessions (onboarding §5): stored by the
//! digest of their token; each change of a session's state is one
//! transaction with what it causes (the code's email job; the quote's
//! acceptance and its `quote.accepted` event).

use async_trait::async_trait;

use crate::embed::{Acceptance, EmbedState, StoredEmbed};
use crate::event::NewEvent;
use crate::ids::{EmbedSessionId, QuoteId};
use crate::job::NewJob;
use crate::store::StoreResult;

/// One change of a session.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbedWrite {
    /// The session.
    pub id: EmbedSessionId,
    /// The version read; the change applies only to it.
    pub version: i64,
    /// The new state.
    pub state: EmbedState,
    /// Jobs queued with it (the code's email).
    pub jobs: Vec<NewJob>,
    /// The acceptance recorded on the quote, with its event.
    pub acceptance: Option<(QuoteId, Acceptance, NewEvent)>,
    /// When, Unix seconds.
    pub now: i64,
}

/// Embed sessions.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait EmbedStore: Send + Sync {
    /// Stores a new session.
    ///
    /// # Errors
    /// MUST return [`Conflict::IdTaken`](crate::store::Conflict::IdTaken)
    /// when the id or the token digest exists.
    async fn insert_embed(&self, session: &StoredEmbed) -> StoreResult<()>;

    /// The session whose token has the digest `token_hash`.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable)
    /// or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn embed(&self, token_hash: &str) -> StoreResult<Option<StoredEmbed>>;

    /// Applies `write`: the state at the next version, the jobs, and the
    /// acceptance on its quote with the event — all or nothing.
    ///
    /// # Errors
    /// MUST return [`Conflict::EmbedMoved`](crate::store::Conflict::EmbedMoved)
    /// when the session is no longer at `write.version`, and
    /// [`Conflict::AlreadyAccepted`](crate::store::Conflict::AlreadyAccepted)
    /// when the quote has an acceptance (nothing written either way).
    async fn save_embed(&self, write: &EmbedWrite) -> StoreResult<()>;

    /// Deletes the sessions that expired before `before` (Unix seconds);
    /// how many.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable)
    /// or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn purge_embeds(&self, before: i64) -> StoreResult<u64>;
}
