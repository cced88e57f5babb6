//! What the partner portal's pages read and do, over the services the
//! API and the operator CLI use (partners and keys, webhook operations,
//! events, groups): each method takes the [`Actor`], refuses what the
//! role or a missing authenticator does not allow, acts in the actor's
//! partner and mode only, and writes the audit log.

use std::sync::Arc;

use crate::api_key::{ApiKey, KeyRecord};
use crate::event::{Event, EventFilter, EventType};
use crate::group::{Group, GroupFilter};
use crate::ids::{EventId, KeyId};
use crate::mode::Mode;
use crate::onboarding::{EnrollmentStatus, Progress, enrollment_status};
use crate::page::{Page, PageRequest};
use crate::partner::Partner;
use crate::partner::readiness::{GoLive, Readiness};
use crate::partner_user::AuditAction;
use crate::ports::Clock;
use crate::scope::Scope;
use crate::services::events::Events;
use crate::services::groups::Groups;
use crate::services::partners::{MintedKey, Partners};
use crate::services::webhooks::{Registered, Rotated, TestDelivery, Webhooks};
use crate::services::{PartnerRefusal, ServiceError};
use crate::store::{Conflict, PartnerStore, QuoteStore, StoreError};
use crate::webhook::WebhookEndpoint;
use crate::webhook::attempt::{AttemptFilter, DeliveryAttempt};

use super::{Actor, PartnerPortal};

/// The services the console acts through.
#[derive(Clone)]
pub struct ConsolePorts {
    /// Users and the audit log.
    pub users: PartnerPortal,
    /// Partners and keys.
    pub partners: Partners,
    /// The partner store (activity for the checklist).
    pub partner_store: Arc<dyn PartnerStore>,
    /// Webhook operations.
    pub webhooks: Webhooks,
    /// Events.
    pub events: Events,
    /// Groups.
    pub groups: Groups,
    /// Enrollments (each group's onboarding progress).
    pub enrollments: Arc<dyn QuoteStore>,
    /// The clock of audit entries.
    pub clock: Arc<dyn Clock>,
}

/// The partner portal's actions.
#[derive(Clone)]
pub struct Console {
    ports: ConsolePorts,
}

/// The overview page: the partner and its go-live checklist.
#[derive(Debug, Clone)]
pub struct Overview {
    /// The partner.
    pub partner: Partner,
    /// The checklist.
    pub go_live: GoLive,
}

/// A group of the Groups page.
#[derive(Debug, Clone)]
pub struct GroupRow {
    /// The group.
    pub group: Group,
    /// Its enrollment's status and onboarding progress, once enrolled.
    pub enrollment: Option<(EnrollmentStatus, Progress)>,
}

fn scope(actor: &Actor) -> Scope {
    Scope::new(actor.user.partner.clone(), actor.mode)
}

impl Console {
    /// The console over its services.
    #[must_use]
    pub fn new(ports: ConsolePorts) -> Self {
        Self { ports }
    }

    /// The user service (sign-in, team, audit log).
    #[must_use]
    pub const fn users(&self) -> &PartnerPortal {
        &self.ports.users
    }

    async fn audit(
        &self,
        actor: &Actor,
        action: AuditAction,
        target: impl Into<String>,
    ) -> Result<(), ServiceError> {
        let entry = actor.entry(self.ports.clock.now_ms(), action, target);
        self.ports.users.record(&entry).await
    }

    /// The partner and its go-live checklist, from facts: test mode's
    /// activity, the agreements, the keys and live mode's groups.
    ///
    /// # Errors
    /// Store failures.
    pub async fn overview(&self, actor: &Actor) -> Result<Overview, ServiceError> {
        let id = &actor.user.partner;
        let partner = self.ports.partners.partner(id).await?;
        let test_mode = self.ports.partner_store.activity(id, Mode::Test).await?;
        let live = self.ports.partner_store.activity(id, Mode::Live).await?;
        let keys = self.ports.partners.list_keys(id).await?;
        let live_key = keys.iter().any(|k| k.mode == Mode::Live && k.is_active());
        Ok(Overview {
            partner: partner.clone(),
            go_live: GoLive {
                readiness: Readiness { partner, test_mode },
                live_key,
                live_groups: live.groups,
            },
        })
    }

    /// The actor's partner.
    ///
    /// # Errors
    /// Store failures.
    pub async fn partner(&self, actor: &Actor) -> Result<Partner, ServiceError> {
        self.ports.partners.partner(&actor.user.partner).await
    }

    /// The partner's keys, newest first (never a plaintext).
    ///
    /// # Errors
    /// Store failures.
    pub async fn keys(&self, actor: &Actor) -> Result<Vec<KeyRecord>, ServiceError> {
        self.ports.partners.list_keys(&actor.user.partner).await
    }

    /// Shows the active sandbox key again (admins only: viewers never see
    /// a secret); audited.
    ///
    /// # Errors
    /// [`PartnerRefusal::NoSandboxKey`] without an active test key.
    pub async fn show_sandbox_key(&self, actor: &Actor) -> Result<ApiKey, ServiceError> {
        actor.admin()?;
        let keys = self.keys(actor).await?;
        let key = keys
            .iter()
            .find(|k| k.mode == Mode::Test && k.is_active() && k.sealed.is_some())
            .ok_or(PartnerRefusal::NoSandboxKey)?;
        let shown = self.ports.partners.show_key(&key.id).await?;
        self.audit(actor, AuditAction::KeyShown, key.id.as_str())
            .await?;
        Ok(shown)
    }

    /// Mints the single active live key, shown once. With one active,
    /// `replace` must be set (the page's confirmation): the old one is
    /// revoked in the same transaction.
    ///
    /// # Errors
    /// [`PartnerRefusal::LiveModeDisabled`] before `enable-live`; a
    /// conflict when a live key is active and `replace` is not set.
    pub async fn mint_live_key(
        &self,
        actor: &Actor,
        replace: bool,
    ) -> Result<MintedKey, ServiceError> {
        actor.admin_with_two_factor()?;
        let partner = self.partner(actor).await?;
        if !partner.live_enabled {
            return Err(PartnerRefusal::LiveModeDisabled.into());
        }
        let minted = self
            .ports
            .partners
            .create_key(&partner.id, Mode::Live, replace)
            .await?;
        let mut target = minted.record.id.to_string();
        if !minted.revoked.is_empty() {
            let old: Vec<&str> = minted.revoked.iter().map(KeyId::as_str).collect();
            target = format!("{target} (revoked {})", old.join(", "));
        }
        self.audit(actor, AuditAction::KeyMinted, target).await?;
        Ok(minted)
    }

    /// Revokes one of the partner's keys.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] for a key of another partner.
    pub async fn revoke_key(&self, actor: &Actor, id: &KeyId) -> Result<(), ServiceError> {
        actor.admin()?;
        let keys = self.keys(actor).await?;
        if !keys.iter().any(|k| &k.id == id) {
            return Err(StoreError::NotFound.into());
        }
        self.ports.partners.revoke_key(id).await?;
        self.audit(actor, AuditAction::KeyRevoked, id.as_str())
            .await
    }

    /// The endpoint of the actor's mode, if any.
    ///
    /// # Errors
    /// Store failures.
    pub async fn endpoint(&self, actor: &Actor) -> Result<Option<WebhookEndpoint>, ServiceError> {
        match self.ports.webhooks.endpoint(&scope(actor)).await {
            Ok(e) => Ok(Some(e)),
            Err(ServiceError::NotFound) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Registers or changes the endpoint (a disabled endpoint's own URL
    /// re-enables it); the new secret is shown once.
    ///
    /// # Errors
    /// [`ServiceError::Invalid`] on `url`.
    pub async fn register_endpoint(
        &self,
        actor: &Actor,
        url: &str,
    ) -> Result<Registered, ServiceError> {
        actor.admin()?;
        if actor.mode == Mode::Live {
            actor.admin_with_two_factor()?;
        }
        let registered = self.ports.webhooks.register(&scope(actor), url).await?;
        self.audit(actor, AuditAction::EndpointChanged, registered.url.clone())
            .await?;
        Ok(registered)
    }

    /// Removes the endpoint; pending deliveries are cancelled.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] without one.
    pub async fn remove_endpoint(&self, actor: &Actor) -> Result<(), ServiceError> {
        actor.admin()?;
        self.ports.webhooks.delete(&scope(actor)).await?;
        self.audit(actor, AuditAction::EndpointRemoved, actor.mode.as_str())
            .await
    }

    /// Sends a test ping.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] without an endpoint.
    pub async fn ping(&self, actor: &Actor) -> Result<TestDelivery, ServiceError> {
        actor.admin()?;
        let kind = self.ports.partners.partner(&actor.user.partner).await?.kind;
        let sent = self.ports.webhooks.test(&scope(actor), kind).await?;
        self.audit(actor, AuditAction::PingSent, sent.id.as_str())
            .await?;
        Ok(sent)
    }

    /// Rotates the signing secret with a grace period (a live secret needs
    /// two-factor); the new secret is shown once.
    ///
    /// # Errors
    /// As [`Webhooks::rotate_secret`].
    pub async fn rotate_secret(
        &self,
        actor: &Actor,
        grace_hours: Option<u32>,
    ) -> Result<Rotated, ServiceError> {
        actor.admin()?;
        if actor.mode == Mode::Live {
            actor.admin_with_two_factor()?;
        }
        let rotated = self
            .ports
            .webhooks
            .rotate_secret(&scope(actor), grace_hours)
            .await?;
        self.audit(actor, AuditAction::SecretRotated, actor.mode.as_str())
            .await?;
        Ok(rotated)
    }

    /// The delivery log of the actor's mode.
    ///
    /// # Errors
    /// Store failures.
    pub async fn deliveries(
        &self,
        actor: &Actor,
        filter: &AttemptFilter,
        page: &PageRequest,
    ) -> Result<Page<DeliveryAttempt>, ServiceError> {
        self.ports
            .webhooks
            .deliveries(&scope(actor), filter, page)
            .await
    }

    /// Resends an event (same `webhook-id`).
    ///
    /// # Errors
    /// As [`Webhooks::resend`].
    pub async fn resend(&self, actor: &Actor, id: &EventId) -> Result<(), ServiceError> {
        actor.admin()?;
        self.ports.webhooks.resend(&scope(actor), id).await?;
        self.audit(actor, AuditAction::EventResent, id.as_str())
            .await
    }

    /// Replays the events of a window; how many were scheduled.
    ///
    /// # Errors
    /// As [`Webhooks::replay`].
    pub async fn replay(
        &self,
        actor: &Actor,
        since: i64,
        until: Option<i64>,
        types: Vec<EventType>,
    ) -> Result<u64, ServiceError> {
        actor.admin()?;
        let count = self
            .ports
            .webhooks
            .replay(&scope(actor), since, until, types)
            .await?;
        let window = format!(
            "{} to {}: {count} events",
            crate::ports::rfc3339(since),
            until.map_or_else(|| "now".to_owned(), crate::ports::rfc3339)
        );
        self.audit(actor, AuditAction::Replay, window).await?;
        Ok(count)
    }

    /// The events of the actor's mode of `types` (every type when
    /// empty) created at or after `since`, newest first.
    ///
    /// # Errors
    /// Store failures.
    pub async fn events(
        &self,
        actor: &Actor,
        since: i64,
        types: &[EventType],
        page: &PageRequest,
    ) -> Result<Page<Event>, ServiceError> {
        let filter = EventFilter {
            since,
            until: None,
            types: types.to_vec(),
        };
        self.ports.events.list(&scope(actor), &filter, page).await
    }

    /// One event of the actor's mode.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`].
    pub async fn event(&self, actor: &Actor, id: &EventId) -> Result<Event, ServiceError> {
        self.ports.events.get(&scope(actor), id).await
    }

    /// The groups of the actor's mode, newest first, each with its
    /// enrollment's status and onboarding progress (the numbers the API
    /// shows as `onboarding.percent_complete` and `blocking_remaining`).
    ///
    /// # Errors
    /// Store failures.
    pub async fn groups(
        &self,
        actor: &Actor,
        page: &PageRequest,
    ) -> Result<Page<GroupRow>, ServiceError> {
        let scope = scope(actor);
        let groups = self
            .ports
            .groups
            .list(&scope, &GroupFilter::default(), page)
            .await?;
        let mut items = Vec::with_capacity(groups.items.len());
        for group in groups.items {
            let enrollment = self
                .ports
                .enrollments
                .group_enrollment(&scope, &group.id)
                .await?;
            items.push(GroupRow {
                enrollment: enrollment.map(|e| {
                    let status = enrollment_status(&e.onboarding, scope.mode, group.company_state);
                    (status, e.onboarding.progress())
                }),
                group,
            });
        }
        Ok(Page {
            items,
            next: groups.next,
        })
    }

    /// Replaces the embed origins.
    ///
    /// # Errors
    /// [`ServiceError::Invalid`] naming each bad origin.
    pub async fn set_embed_origins(
        &self,
        actor: &Actor,
        origins: &[String],
    ) -> Result<Vec<String>, ServiceError> {
        actor.admin()?;
        let kept = self
            .ports
            .partners
            .set_embed_origins(&actor.user.partner, origins)
            .await?;
        self.audit(actor, AuditAction::EmbedOriginsChanged, kept.join(" "))
            .await?;
        Ok(kept)
    }
}

/// Whether an error is "a live key is already active" (the page then
/// asks for confirmation).
#[must_use]
pub const fn is_live_key_active(e: &ServiceError) -> bool {
    matches!(e, ServiceError::Conflict(Conflict::LiveKeyActive))
}
