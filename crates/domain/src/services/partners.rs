//! Partners and API keys: the operator commands of contract section 0 and
//! the authentication steps of section 2.

use std::sync::Arc;

use crate::api_key::{ApiKey, KeyRecord};
use crate::error::FieldError;
use crate::ids::{KeyId, PartnerId};
use crate::mode::Mode;
use crate::partner::{AccessError, BenefitsAdmin, Partner, PartnerKind};
use crate::ports::{Clock, Entropy, Minter, Sealer, now_secs};
use crate::scope::Scope;
use crate::services::{PartnerRefusal, ServiceError, with_fresh_id};
use crate::store::{PartnerStore, StoreError};

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The key used.
    pub key_id: KeyId,
    /// Its partner.
    pub partner: Partner,
    /// Its mode.
    pub mode: Mode,
}

impl Principal {
    /// The scope of every resource the caller may see.
    #[must_use]
    pub fn scope(&self) -> Scope {
        Scope::new(self.partner.id.clone(), self.mode)
    }
}

/// Why a bearer token does not authenticate.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// Missing, malformed, unknown or revoked (401 `unauthorized`).
    #[error("missing, malformed or revoked API key")]
    Unauthorized,
    /// A live key before live mode (403 `live_mode_disabled`).
    #[error("live mode is not enabled for this partner")]
    LiveModeDisabled,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] ServiceError),
}

/// A freshly minted key: its record and the plaintext, shown once.
#[derive(Debug)]
pub struct MintedKey {
    /// The stored record.
    pub record: KeyRecord,
    /// The plaintext.
    pub key: ApiKey,
    /// Live keys revoked by a rotation.
    pub revoked: Vec<KeyId>,
}

/// The partners service.
#[derive(Clone)]
pub struct Partners {
    store: Arc<dyn PartnerStore>,
    clock: Arc<dyn Clock>,
    entropy: Arc<dyn Entropy>,
    sealer: Arc<dyn Sealer>,
}

fn seal_context(id: &KeyId) -> Vec<u8> {
    format!("api-key:{id}").into_bytes()
}

impl Partners {
    /// The service over its ports.
    #[must_use]
    pub fn new(
        store: Arc<dyn PartnerStore>,
        clock: Arc<dyn Clock>,
        entropy: Arc<dyn Entropy>,
        sealer: Arc<dyn Sealer>,
    ) -> Self {
        Self {
            store,
            clock,
            entropy,
            sealer,
        }
    }

    /// Creates a partner with the defaults of its kind.
    ///
    /// # Errors
    /// [`ServiceError::Invalid`] for a blank or over-long name.
    pub async fn create_partner(
        &self,
        name: &str,
        kind: PartnerKind,
        benefits_admin: Option<BenefitsAdmin>,
    ) -> Result<Partner, ServiceError> {
        let name = name.trim();
        if name.is_empty() || name.chars().count() > 200 {
            return Err(ServiceError::Invalid(vec![FieldError::new(
                "name",
                "must be 1 to 200 characters",
            )]));
        }
        let now = now_secs(self.clock.as_ref());
        let minter = Minter::new(self.entropy.as_ref());
        with_fresh_id(|| {
            let partner = Partner::new(minter.partner_id(), name.to_owned(), kind, benefits_admin);
            let store = Arc::clone(&self.store);
            async move {
                store.insert_partner(&partner, now).await?;
                Ok(partner)
            }
        })
        .await
    }

    /// Reads a partner.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] for an unknown partner.
    pub async fn partner(&self, id: &PartnerId) -> Result<Partner, ServiceError> {
        Ok(self.store.partner(id).await?)
    }

    /// Every partner, oldest first.
    ///
    /// # Errors
    /// Only store failures.
    pub async fn partners(&self) -> Result<Vec<Partner>, ServiceError> {
        Ok(self.store.partners().await?)
    }

    /// Enables or disables live mode (enabling records that the business
    /// associate and data processing agreements are executed).
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] for an unknown partner.
    pub async fn set_live(&self, id: &PartnerId, enabled: bool) -> Result<(), ServiceError> {
        let now = now_secs(self.clock.as_ref());
        Ok(self.store.set_live_enabled(id, enabled, now).await?)
    }

    /// Records whether the commercial and operational agreements are
    /// completed (`partner agreements --commercial done|pending`).
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] for an unknown partner.
    pub async fn set_commercial(&self, id: &PartnerId, done: bool) -> Result<(), ServiceError> {
        let now = now_secs(self.clock.as_ref());
        Ok(self.store.set_commercial_done(id, done, now).await?)
    }

    /// Replaces the partner's embed origins (`partner embed-origins`):
    /// each an `https://host[:port]` (or `http://`) origin; none clears
    /// them. The origins stored, normalized and without repeats.
    ///
    /// # Errors
    /// `Invalid` naming each bad origin (`origins[i]`);
    /// [`ServiceError::NotFound`] for an unknown partner.
    pub async fn set_embed_origins(
        &self,
        id: &PartnerId,
        origins: &[String],
    ) -> Result<Vec<String>, ServiceError> {
        let mut kept: Vec<String> = Vec::new();
        let mut errors = Vec::new();
        for (i, text) in origins.iter().enumerate() {
            match crate::embed::parse_origin(text) {
                Ok(o) if !kept.contains(&o) => kept.push(o),
                Ok(_) => {}
                Err(why) => {
                    errors.push(crate::error::FieldError::new(format!("origins[{i}]"), why))
                }
            }
        }
        if !errors.is_empty() {
            return Err(ServiceError::Invalid(errors));
        }
        self.store.set_embed_origins(id, &kept).await?;
        Ok(kept)
    }

    /// Mints a key. A test key's plaintext is kept sealed for `key show`; a
    /// live key's never is. A live key while one is active is a conflict
    /// unless `rotate`, which revokes the old one in the same transaction.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] for an unknown partner;
    /// [`ServiceError::Conflict`] for a second active live key.
    pub async fn create_key(
        &self,
        partner: &PartnerId,
        mode: Mode,
        rotate: bool,
    ) -> Result<MintedKey, ServiceError> {
        let now = now_secs(self.clock.as_ref());
        let minter = Minter::new(self.entropy.as_ref());
        with_fresh_id(|| {
            let key = minter.api_key(mode);
            let id = minter.key_id();
            let sealed = (mode == Mode::Test).then(|| {
                self.sealer
                    .seal(key.expose().as_bytes(), &seal_context(&id))
            });
            let record = KeyRecord {
                id,
                partner_id: partner.clone(),
                mode,
                digest: key.digest(),
                prefix: key.display_prefix(),
                sealed,
                created_at: now,
                revoked_at: None,
            };
            let store = Arc::clone(&self.store);
            async move {
                let revoked = store.insert_key(&record, rotate, now).await?;
                Ok(MintedKey {
                    record,
                    key,
                    revoked,
                })
            }
        })
        .await
    }

    /// Re-displays an active test key.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] for an unknown key;
    /// [`ServiceError::Partner`] for a live or revoked key, or one whose
    /// sealed plaintext cannot be opened.
    pub async fn show_key(&self, id: &KeyId) -> Result<ApiKey, ServiceError> {
        let record = self.store.key(id).await?;
        if record.mode == Mode::Live {
            return Err(PartnerRefusal::LiveKeyNotShown.into());
        }
        if !record.is_active() {
            return Err(PartnerRefusal::Revoked.into());
        }
        let sealed = record
            .sealed
            .as_deref()
            .ok_or(ServiceError::Partner(PartnerRefusal::NotKept))?;
        let plain = self
            .sealer
            .open(sealed, &seal_context(id))
            .map_err(PartnerRefusal::Unsealable)?;
        let text = String::from_utf8(plain).map_err(|e| ServiceError::Internal(Box::new(e)))?;
        ApiKey::parse(&text).map_err(|e| ServiceError::Internal(Box::new(e)))
    }

    /// The partner's keys, newest first (never the plaintext).
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] for an unknown partner.
    pub async fn list_keys(&self, partner: &PartnerId) -> Result<Vec<KeyRecord>, ServiceError> {
        Ok(self.store.keys(partner).await?)
    }

    /// Revokes a key.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] for an unknown key.
    pub async fn revoke_key(&self, id: &KeyId) -> Result<(), ServiceError> {
        let now = now_secs(self.clock.as_ref());
        Ok(self.store.revoke_key(id, now).await?)
    }

    /// Authenticates a bearer token, in the order of contract section 2:
    /// well-formed, known and not revoked (else 401), then the live-mode
    /// gate (403). Rate limits and capabilities follow in the adapter.
    ///
    /// # Errors
    /// [`AuthError`].
    pub async fn authenticate(&self, token: Option<&str>) -> Result<Principal, AuthError> {
        let key = token
            .and_then(|t| ApiKey::parse(t).ok())
            .ok_or(AuthError::Unauthorized)?;
        let digest = key.digest();
        let (record, partner) = match self.store.key_by_digest(&digest).await {
            Ok(found) => found,
            Err(StoreError::NotFound) => return Err(AuthError::Unauthorized),
            Err(e) => return Err(AuthError::Store(e.into())),
        };
        if !record.digest.ct_eq(&digest) || !record.is_active() || record.mode != key.mode() {
            return Err(AuthError::Unauthorized);
        }
        partner.check_mode(record.mode).map_err(|e| match e {
            AccessError::LiveModeDisabled => AuthError::LiveModeDisabled,
            AccessError::Forbidden => AuthError::Unauthorized,
        })?;
        Ok(Principal {
            key_id: record.id,
            partner,
            mode: record.mode,
        })
    }
}
#[cfg(test)]
mod tests;
