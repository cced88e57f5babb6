//! Partners and their API keys: the port of operator commands and authentication.

use async_trait::async_trait;

use crate::api_key::{KeyDigest, KeyRecord};
use crate::ids::{KeyId, PartnerId};
use crate::mode::Mode;
use crate::partner::{Activity, Partner};
use crate::store::StoreResult;

/// Partners and their API keys (operator commands and authentication).
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait PartnerStore: Send + Sync {
    /// Stores a new partner.
    ///
    /// # Errors
    /// MUST return [`Conflict::IdTaken`](crate::store::Conflict::IdTaken) when the id exists.
    async fn insert_partner(&self, partner: &Partner, now: i64) -> StoreResult<()>;

    /// Reads a partner.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) for an unknown id.
    async fn partner(&self, id: &PartnerId) -> StoreResult<Partner>;

    /// Every partner, oldest first (operator listing; `serve --demo` uses
    /// it to tell an empty database).
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn partners(&self) -> StoreResult<Vec<Partner>>;

    /// Turns live mode on or off and records when.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) for an unknown partner.
    async fn set_live_enabled(&self, id: &PartnerId, enabled: bool, now: i64) -> StoreResult<()>;

    /// Records whether the commercial and operational agreements are
    /// completed (go-live step (c)).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) for an unknown partner.
    async fn set_commercial_done(&self, id: &PartnerId, done: bool, now: i64) -> StoreResult<()>;

    /// Replaces the partner's embed origins (the pages that may frame
    /// the offer iframe).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) for an unknown partner.
    async fn set_embed_origins(&self, id: &PartnerId, origins: &[String]) -> StoreResult<()>;

    /// Stores a new key. For a live key, when `rotate` is set, every active
    /// live key of the partner is revoked in the same transaction; the ids
    /// revoked are returned.
    ///
    /// # Errors
    /// MUST return [`Conflict::LiveKeyActive`](crate::store::Conflict::LiveKeyActive) for a live key when one is
    /// active and `rotate` is not set, and [`StoreError::NotFound`](crate::store::StoreError::NotFound) for an
    /// unknown partner.
    async fn insert_key(&self, key: &KeyRecord, rotate: bool, now: i64) -> StoreResult<Vec<KeyId>>;

    /// Finds an active or revoked key by digest, with its partner.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when no key has the digest.
    async fn key_by_digest(&self, digest: &KeyDigest) -> StoreResult<(KeyRecord, Partner)>;

    /// Reads one key record.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) for an unknown id.
    async fn key(&self, id: &KeyId) -> StoreResult<KeyRecord>;

    /// A partner's keys, newest first.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) for an unknown partner.
    async fn keys(&self, partner: &PartnerId) -> StoreResult<Vec<KeyRecord>>;

    /// What the partner has done in `mode` so far (the go-live readiness
    /// report of `partner readiness`).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) for an unknown partner.
    async fn activity(&self, id: &PartnerId, mode: Mode) -> StoreResult<Activity>;

    /// Revokes a key (idempotent on an already revoked key).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) for an unknown id.
    async fn revoke_key(&self, id: &KeyId, now: i64) -> StoreResult<()>;
}
