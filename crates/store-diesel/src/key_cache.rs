//! Authentication from memory: a [`PartnerStore`] that keeps what
//! `key_by_digest` found (a key and its partner) for [`FRESH`], so a
//! request authenticates without a database round trip.
//!
//! One cache per opened [`crate::Stores`], shared by every service over
//! them; a process whose workers open stores of their own shares one
//! [`KeyCache`] between them ([`crate::Stores::sharing_keys`]). Every
//! write through it (a key minted, rotated
//! or revoked; live mode, agreements or embed origins changed) empties the
//! cache, so a change takes effect at once in the process that made it. A
//! change made by another process (a second `serve`, an operator command)
//! is seen once the entry is older than [`FRESH`]: within one second.
//! Only found keys are kept: an unknown key always reaches the database
//! (and the failed-authentication limit).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use domain::api_key::{KeyDigest, KeyRecord};
use domain::ids::{KeyId, PartnerId};
use domain::mode::Mode;
use domain::partner::{Activity, Partner};
use domain::store::{PartnerStore, StoreResult};

/// How long a found key is believed without asking the database.
pub const FRESH: Duration = Duration::from_secs(1);

/// Entries kept at most; past it the cache starts over (a bound, not a
/// policy: a deployment has far fewer active keys).
const MAX_ENTRIES: usize = 10_000;

/// The keys one process holds in memory (a cheap handle: clones share).
#[derive(Clone, Default)]
pub struct KeyCache(Arc<Mutex<State>>);

impl std::fmt::Debug for KeyCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeyCache")
    }
}

/// A partner store answering `key_by_digest` from a [`KeyCache`].
pub(crate) struct Cached {
    inner: Arc<dyn PartnerStore>,
    cache: KeyCache,
}

#[derive(Default)]
struct State {
    /// Bumped by every write: a read that started before it is not kept.
    generation: u64,
    entries: HashMap<[u8; 32], (Instant, (KeyRecord, Partner))>,
}

impl Cached {
    pub(crate) fn new(inner: Arc<dyn PartnerStore>, cache: KeyCache) -> Self {
        Self { inner, cache }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.cache.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Forgets every entry (after a write).
    fn invalidate(&self) {
        let mut state = self.state();
        state.generation = state.generation.wrapping_add(1);
        state.entries.clear();
    }

    /// A write's result, every entry forgotten once it is done.
    fn written<T>(&self, result: StoreResult<T>) -> StoreResult<T> {
        self.invalidate();
        result
    }
}

#[async_trait]
impl PartnerStore for Cached {
    async fn key_by_digest(&self, digest: &KeyDigest) -> StoreResult<(KeyRecord, Partner)> {
        let generation = {
            let state = self.state();
            if let Some((at, found)) = state.entries.get(digest.as_bytes())
                && at.elapsed() < FRESH
            {
                return Ok(found.clone());
            }
            state.generation
        };
        let found = self.inner.key_by_digest(digest).await?;
        let mut state = self.state();
        if state.generation == generation {
            if state.entries.len() >= MAX_ENTRIES {
                state.entries.clear();
            }
            state
                .entries
                .insert(*digest.as_bytes(), (Instant::now(), found.clone()));
        }
        Ok(found)
    }

    async fn insert_partner(&self, partner: &Partner, now: i64) -> StoreResult<()> {
        self.written(self.inner.insert_partner(partner, now).await)
    }

    async fn partner(&self, id: &PartnerId) -> StoreResult<Partner> {
        self.inner.partner(id).await
    }

    async fn partners(&self) -> StoreResult<Vec<Partner>> {
        self.inner.partners().await
    }

    async fn set_live_enabled(&self, id: &PartnerId, enabled: bool, now: i64) -> StoreResult<()> {
        self.written(self.inner.set_live_enabled(id, enabled, now).await)
    }

    async fn set_commercial_done(&self, id: &PartnerId, done: bool, now: i64) -> StoreResult<()> {
        self.written(self.inner.set_commercial_done(id, done, now).await)
    }

    async fn set_embed_origins(&self, id: &PartnerId, origins: &[String]) -> StoreResult<()> {
        self.written(self.inner.set_embed_origins(id, origins).await)
    }

    async fn insert_key(&self, key: &KeyRecord, rotate: bool, now: i64) -> StoreResult<Vec<KeyId>> {
        self.written(self.inner.insert_key(key, rotate, now).await)
    }

    async fn key(&self, id: &KeyId) -> StoreResult<KeyRecord> {
        self.inner.key(id).await
    }

    async fn keys(&self, partner: &PartnerId) -> StoreResult<Vec<KeyRecord>> {
        self.inner.keys(partner).await
    }

    async fn activity(&self, id: &PartnerId, mode: Mode) -> StoreResult<Activity> {
        self.inner.activity(id, mode).await
    }

    async fn revoke_key(&self, id: &KeyId, now: i64) -> StoreResult<()> {
        self.written(self.inner.revoke_key(id, now).await)
    }
}
