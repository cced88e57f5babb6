//! Employer groups: create, read, patch and list, scoped to the caller.

use std::sync::Arc;

use crate::group::{Group, GroupFields, GroupFilter};
use crate::idempotency::REPLAY_WINDOW_SECS;
use crate::ids::GroupId;
use crate::page::{Page, PageRequest};
use crate::ports::{Clock, Entropy, Minter, now_secs};
use crate::scope::Scope;
use crate::services::{ServiceError, with_fresh_id};
use crate::store::GroupStore;

/// The groups service.
#[derive(Clone)]
pub struct Groups {
    store: Arc<dyn GroupStore>,
    clock: Arc<dyn Clock>,
    entropy: Arc<dyn Entropy>,
}

impl Groups {
    /// The service over its ports.
    #[must_use]
    pub fn new(
        store: Arc<dyn GroupStore>,
        clock: Arc<dyn Clock>,
        entropy: Arc<dyn Entropy>,
    ) -> Self {
        Self {
            store,
            clock,
            entropy,
        }
    }

    /// Creates a group in the caller's scope.
    ///
    /// # Errors
    /// [`ServiceError::Invalid`] for bad fields; [`ServiceError::Conflict`]
    /// when an enrolled or active group of the mode holds the domain.
    pub async fn create(&self, scope: &Scope, fields: GroupFields) -> Result<Group, ServiceError> {
        self.create_once(scope, fields, None).await
    }

    /// Creates a group in the caller's scope under an `Idempotency-Key`
    /// (when one was sent): the key is recorded with the group, so an
    /// execution of the key that finds a group it already created (its
    /// first execution committed, then its process died before the answer
    /// was stored) returns that group instead of making another.
    ///
    /// # Errors
    /// As [`Groups::create`].
    pub async fn create_once(
        &self,
        scope: &Scope,
        fields: GroupFields,
        key: Option<&str>,
    ) -> Result<Group, ServiceError> {
        // Validate before any port is touched; the group is then built once
        // and only its id changes between attempts.
        fields.validate(true)?;
        let now_ms = self.clock.now_ms();
        let now = now_ms.div_euclid(1000);
        let since = now.saturating_sub(REPLAY_WINDOW_SECS);
        let minter = Minter::new(self.entropy.as_ref());
        let template = Group::create(
            minter.group_id_at(now_ms),
            scope.partner.clone(),
            scope.mode,
            fields,
            now,
        )?;
        let mut first = true;
        with_fresh_id(|| {
            let mut group = template.clone();
            if !std::mem::take(&mut first) {
                group.id = minter.group_id_at(now_ms);
            }
            let store = Arc::clone(&self.store);
            let key = key.map(str::to_owned);
            async move {
                match key {
                    None => store.insert_group(&group).await?,
                    Some(key) => {
                        if let Some(made) = store.insert_group_once(&group, &key, since).await? {
                            return Ok(made);
                        }
                    }
                }
                Ok(group)
            }
        })
        .await
    }

    /// Reads a group.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] outside the caller's scope.
    pub async fn get(&self, scope: &Scope, id: &GroupId) -> Result<Group, ServiceError> {
        Ok(self.store.group(scope, id).await?)
    }

    /// Applies a partial update of the writable fields.
    ///
    /// # Errors
    /// [`ServiceError::Invalid`], [`ServiceError::NotFound`] or
    /// [`ServiceError::Conflict`] (the new domain is held).
    pub async fn patch(
        &self,
        scope: &Scope,
        id: &GroupId,
        fields: GroupFields,
    ) -> Result<Group, ServiceError> {
        fields.validate(false)?;
        let mut group = self.store.group(scope, id).await?;
        let now = now_secs(self.clock.as_ref());
        group.patch(fields, now)?;
        self.store.update_group(scope, &group).await?;
        Ok(group)
    }

    /// Lists the caller's groups that `filter` keeps, newest first.
    ///
    /// # Errors
    /// Only store failures.
    pub async fn list(
        &self,
        scope: &Scope,
        filter: &GroupFilter,
        page: &PageRequest,
    ) -> Result<Page<Group>, ServiceError> {
        Ok(self.store.groups(scope, filter, page).await?)
    }
}
#[cfg(test)]
mod tests;
