//! Unit tests of the webhook service against the port mocks: registration
//! checks and sealing, the test ping's claimed first attempt, the
//! dispatcher's signing, field style, retry schedule and missing endpoint.

use std::sync::{Arc, Mutex};

use serde_json::json;

use super::*;
use crate::document::EventData;
use crate::event::EventType;
use crate::ids::PartnerId;
use crate::mode::Mode;
use crate::partner::Partner;
use crate::partner::PartnerKind;
use crate::ports::Delivery;
use crate::ports::{MockClock, MockDeliverer, MockEntropy, MockSealer};
use crate::store::{MockOutboxStore, MockPartnerStore, MockWebhookStore};
use crate::webhook::EndpointState;
use crate::webhook::attempt::{AttemptOutcome, AttemptReport, FailureReason};

pub(super) const NOW_MS: i64 = 1_795_275_000_123;
pub(super) const NOW: i64 = 1_795_275_000;

pub(super) fn scope() -> Scope {
    Scope::new(PartnerId::from_bytes([0xaa; 6]), Mode::Test)
}

fn clock() -> Arc<MockClock> {
    let mut c = MockClock::new();
    c.expect_now_ms().return_const(NOW_MS);
    Arc::new(c)
}

fn entropy() -> Arc<MockEntropy> {
    let mut e = MockEntropy::new();
    e.expect_fill().returning(|buf| buf.fill(7));
    Arc::new(e)
}

/// A sealer that "seals" by prefixing the context.
fn sealer() -> Arc<MockSealer> {
    let mut s = MockSealer::new();
    s.expect_seal().returning(|p, ctx| [ctx, b"|", p].concat());
    s.expect_open().returning(|sealed, ctx| {
        sealed
            .strip_prefix(ctx)
            .and_then(|r| r.strip_prefix(b"|"))
            .map(<[u8]>::to_vec)
            .ok_or(crate::ports::Unseal)
    });
    Arc::new(s)
}

fn partners(kind: PartnerKind) -> Arc<MockPartnerStore> {
    let mut p = MockPartnerStore::new();
    p.expect_partner().returning(move |id| {
        Ok(Partner {
            id: id.clone(),
            name: "P".to_owned(),
            kind,
            benefits_admin: crate::partner::BenefitsAdmin::Partner,
            live_enabled: false,
            commercial_done: false,
            capabilities: Vec::new(),
            embed_origins: Vec::new(),
        })
    });
    Arc::new(p)
}

pub(super) struct Parts {
    endpoints: MockWebhookStore,
    outbox: MockOutboxStore,
    deliverer: MockDeliverer,
    kind: PartnerKind,
    settings: WebhookSettings,
    users: crate::store::MockPartnerUserStore,
}

impl Parts {
    fn new() -> Self {
        Self {
            endpoints: MockWebhookStore::new(),
            outbox: MockOutboxStore::new(),
            deliverer: MockDeliverer::new(),
            kind: PartnerKind::Broker,
            settings: WebhookSettings::default(),
            users: crate::store::MockPartnerUserStore::new(),
        }
    }

    fn build(self) -> Webhooks {
        Webhooks::new(
            WebhookPorts {
                endpoints: Arc::new(self.endpoints),
                outbox: Arc::new(self.outbox),
                partners: partners(self.kind),
                deliverer: Arc::new(self.deliverer),
                sealer: sealer(),
                clock: clock(),
                entropy: entropy(),
                users: Arc::new(self.users),
                mailbox: crate::services::mailbox::Mailbox::new(sealer()),
                base_url: "https://partners.example.com".into(),
            },
            self.settings,
        )
    }
}

pub(super) const SECRET: &str =
    "whsec_0707070707070707070707070707070707070707070707070707070707070707";

pub(super) fn endpoint() -> WebhookEndpoint {
    let mut ctx = seal_context(&scope());
    ctx.extend_from_slice(b"|");
    ctx.extend_from_slice(SECRET.as_bytes());
    WebhookEndpoint {
        scope: scope(),
        url: "https://hooks.example.com/h".to_owned(),
        sealed_secret: ctx,
        created_at: NOW - 60,
        state: crate::webhook::EndpointState::Enabled,
        // Failing for a second: a failure changes no health.
        failing_since_ms: Some(NOW_MS - 1_000),
        previous_secret: None,
    }
}

pub(super) fn event(attempts: u32) -> Event {
    Event {
        event: NewEvent {
            id: EventId::from_bytes([0xe0; 6]),
            scope: scope(),
            created_at: NOW - 5,
            data: EventData::from_stored(
                EventType::CensusProcessed,
                r#"{"groupId": "grp_424242424242", "received": 3, "accepted": 3, "memberCount": 3, "errorCount": 0}"#,
            )
            .unwrap(),
        },
        state: DeliveryState::Pending,
        attempts,
        next_attempt_at: None,
        last_status: None,
        lease_until_ms: Some(NOW_MS + DELIVERY_LEASE_MS),
    }
}

/// Checks a delivery's headers and signature independently of `sign`.
pub(super) fn verify(d: &Delivery) -> serde_json::Value {
    let header = |name: &str| {
        d.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let verifier = webhooks::Verifier::new(webhooks::Secret::parse(SECRET).unwrap());
    verifier
        .verify(
            &header("webhook-id"),
            &header("webhook-timestamp"),
            &header("webhook-signature"),
            &d.body,
            NOW,
        )
        .unwrap();
    assert_eq!(header("content-type"), "application/json");
    assert_eq!(header("webhook-timestamp"), NOW.to_string());
    serde_json::from_slice(&d.body).unwrap()
}

mod dispatch;
mod health;
mod registration;
