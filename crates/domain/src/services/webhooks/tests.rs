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

const NOW_MS: i64 = 1_795_275_000_123;
const NOW: i64 = 1_795_275_000;

fn scope() -> Scope {
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

struct Parts {
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

const SECRET: &str = "whsec_0707070707070707070707070707070707070707070707070707070707070707";

fn endpoint() -> WebhookEndpoint {
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

fn event(attempts: u32) -> Event {
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
fn verify(d: &Delivery) -> serde_json::Value {
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

#[tokio::test]
async fn registration_checks_the_url_and_seals_a_fresh_secret() {
    // Strict: http:// is refused before anything else.
    let svc = Parts::new().build();
    let Err(ServiceError::Invalid(d)) = svc.register(&scope(), "http://x.example/h").await else {
        panic!("expected invalid");
    };
    assert_eq!(d[0].field, "url");

    // A host the deliverer refuses is a 400 on url.
    let mut p = Parts::new();
    p.deliverer
        .expect_check_host()
        .returning(|_| Err("resolves to a loopback address".to_owned()));
    let Err(ServiceError::Invalid(d)) = p.build().register(&scope(), "https://localhost/h").await
    else {
        panic!("expected invalid");
    };
    assert_eq!(d[0].message, "resolves to a loopback address");

    // Accepted: stored sealed, answered once in the clear.
    let stored = Arc::new(Mutex::new(None));
    let mut p = Parts::new();
    p.deliverer.expect_check_host().returning(|_| Ok(()));
    let keep = Arc::clone(&stored);
    p.endpoints.expect_endpoint().returning(|_| Ok(None));
    p.endpoints.expect_put_endpoint().returning(move |e| {
        *keep.lock().unwrap() = Some(e.clone());
        Ok(())
    });
    let r = p
        .build()
        .register(&scope(), "https://hooks.example.com/h")
        .await
        .unwrap();
    assert_eq!(r.secret, SECRET, "whsec_ + hex of the 32 entropy bytes");
    let e = stored.lock().unwrap().clone().unwrap();
    assert_ne!(e.sealed_secret, SECRET.as_bytes());
    assert!(
        !format!("{r:?}").contains("whsec_"),
        "Debug hides the secret"
    );

    // Insecure endpoints allowed: no host check at all.
    let mut p = Parts::new();
    p.settings.allow_insecure_endpoints = true;
    p.endpoints.expect_endpoint().returning(|_| Ok(None));
    p.endpoints.expect_put_endpoint().returning(|_| Ok(()));
    assert!(
        p.build()
            .register(&scope(), "http://127.0.0.1:9/h")
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn the_test_ping_is_claimed_then_attempted_before_answering() {
    let mut p = Parts::new();
    p.outbox
        .expect_append_claimed()
        .withf(|e, now, lease| {
            e.event_type() == EventType::Ping
                && *now == NOW_MS
                && *lease == NOW_MS + DELIVERY_LEASE_MS
        })
        .times(1)
        .returning(|_, _, _| Ok(Some(endpoint())));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&seen);
    p.deliverer.expect_deliver().returning(move |d| {
        keep.lock().unwrap().push(d);
        AttemptReport::answered(503, b"", 5)
    });
    p.outbox
        .expect_record_attempt()
        .withf(|_, lease, state, status, next, _| {
            *lease == NOW_MS + DELIVERY_LEASE_MS
                && *state == DeliveryState::Pending
                && *status == Some(503)
                && *next == Some(NOW_MS + 1_000)
        })
        .times(1)
        .returning(|_, _, _, _, _, _| Ok(true));
    let out = p.build().test(&scope(), PartnerKind::Broker).await.unwrap();
    assert!(!out.delivered);
    assert_eq!(out.status_code, Some(503));
    let body = verify(&seen.lock().unwrap()[0]);
    assert_eq!(body["type"], "ping");
    assert_eq!(body["id"], out.id.as_str());
    assert_eq!(body["data"], json!({}));

    // No endpoint: not found (the store appended nothing).
    let mut p = Parts::new();
    p.outbox
        .expect_append_claimed()
        .times(1)
        .returning(|_, _, _| Ok(None));
    assert!(matches!(
        p.build().test(&scope(), PartnerKind::Broker).await,
        Err(ServiceError::NotFound)
    ));
}

#[tokio::test]
async fn the_dispatcher_signs_in_the_partners_style_and_schedules_retries() {
    for (kind, key) in [
        (PartnerKind::Broker, "member_count"),
        (PartnerKind::HrPlatform, "memberCount"),
    ] {
        let mut p = Parts::new();
        p.kind = kind;
        p.outbox
            .expect_claim_deliveries()
            .times(1)
            .returning(|_, _, _| Ok(vec![event(2)]));
        p.endpoints
            .expect_endpoint()
            .times(1)
            .returning(|_| Ok(Some(endpoint())));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let keep = Arc::clone(&seen);
        p.deliverer.expect_deliver().returning(move |d| {
            keep.lock().unwrap().push(d);
            AttemptReport::failed(FailureReason::Timeout, 10_000)
        });
        // The third attempt failed: the last retry is due 25 s later.
        p.outbox
            .expect_record_attempts()
            .withf(|rs| match rs.as_slice() {
                [r] => {
                    let state = &r.state;
                    let status = &r.status;
                    let next = &r.next_attempt_at_ms;
                    {
                        *state == DeliveryState::Pending
                            && status.is_none()
                            && *next == Some(NOW_MS + 25_000)
                    }
                }
                _ => false,
            })
            .times(1)
            .returning(|rs| Ok(vec![true; rs.len()]));
        assert_eq!(p.build().step().await.unwrap(), 1);
        let body = verify(&seen.lock().unwrap()[0]);
        assert_eq!(body["data"][key], 3, "{kind:?}: {body}");
        assert_eq!(body["id"], "evt_e0e0e0e0e0e0");
    }
}

#[tokio::test]
async fn the_fourth_failure_is_final_and_a_missing_endpoint_is_recorded() {
    let mut p = Parts::new();
    p.settings.retry_time_scale = 0.01;
    p.outbox
        .expect_claim_deliveries()
        .returning(|_, _, _| Ok(vec![event(3)]));
    p.endpoints
        .expect_endpoint()
        .returning(|_| Ok(Some(endpoint())));
    p.deliverer
        .expect_deliver()
        .returning(|_| AttemptReport::answered(500, b"", 5));
    p.outbox
        .expect_record_attempts()
        .withf(|rs| match rs.as_slice() {
            [r] => {
                let state = &r.state;
                let next = &r.next_attempt_at_ms;
                *state == DeliveryState::Failed && next.is_none()
            }
            _ => false,
        })
        .times(1)
        .returning(|rs| Ok(vec![true; rs.len()]));
    p.build().step().await.unwrap();

    let mut p = Parts::new();
    p.outbox
        .expect_claim_deliveries()
        .returning(|_, _, _| Ok(vec![event(0)]));
    p.endpoints.expect_endpoint().returning(|_| Ok(None));
    p.deliverer.expect_deliver().never();
    p.outbox
        .expect_record_attempts()
        .withf(|rs| match rs.as_slice() {
            [r] => {
                let state = &r.state;
                let log = &r.log;
                *state == DeliveryState::NoEndpoint && log.is_none()
            }
            _ => false,
        })
        .times(1)
        .returning(|rs| Ok(vec![true; rs.len()]));
    p.build().step().await.unwrap();

    // Nothing due: nothing else is touched.
    let mut p = Parts::new();
    p.outbox
        .expect_claim_deliveries()
        .returning(|_, _, _| Ok(Vec::new()));
    assert_eq!(p.build().step().await.unwrap(), 0);
}

#[tokio::test]
async fn an_idle_dispatcher_sleeps_until_the_next_delivery_falls_due() {
    use std::time::Duration;
    let recheck = Duration::from_secs(60);
    let wait = |due: Option<i64>| async move {
        let mut p = Parts::new();
        p.outbox
            .expect_next_due_ms()
            .times(1)
            .returning(move || Ok(due));
        p.build().idle_wait(recheck).await.unwrap()
    };
    // Due in 1.5 s: sleep exactly that long.
    assert_eq!(
        wait(Some(NOW_MS + 1_500)).await,
        Duration::from_millis(1_500)
    );
    // Overdue: no sleep at all.
    assert_eq!(wait(Some(NOW_MS - 5)).await, Duration::ZERO);
    // Nothing pending, or due later than the recheck: the recheck.
    assert_eq!(wait(None).await, recheck);
    assert_eq!(wait(Some(NOW_MS + 3_600_000)).await, recheck);
}

#[tokio::test]
async fn a_retry_schedule_follows_the_time_scale() {
    let mut p = Parts::new();
    p.settings.retry_time_scale = 0.1;
    p.outbox
        .expect_claim_deliveries()
        .returning(|_, _, _| Ok(vec![event(1)]));
    p.endpoints
        .expect_endpoint()
        .returning(|_| Ok(Some(endpoint())));
    p.deliverer
        .expect_deliver()
        .returning(|_| AttemptReport::answered(502, b"", 5));
    p.outbox
        .expect_record_attempts()
        .withf(|rs| match rs.as_slice() {
            [r] => {
                let next = &r.next_attempt_at_ms;
                *next == Some(NOW_MS + 500)
            }
            _ => false,
        })
        .times(1)
        .returning(|rs| Ok(vec![true; rs.len()]));
    p.build().step().await.unwrap();
}

#[tokio::test]
async fn attempts_are_logged_with_the_outcome_and_health_moves_on() {
    // A failure of an endpoint failing for 120 hours: the log row goes
    // with the outcome, then the endpoint is disabled.
    let mut p = Parts::new();
    p.outbox
        .expect_claim_deliveries()
        .returning(|_, _, _| Ok(vec![event(0)]));
    p.endpoints.expect_endpoint().returning(|_| {
        Ok(Some(WebhookEndpoint {
            failing_since_ms: Some(NOW_MS - 120 * 3_600_000),
            ..endpoint()
        }))
    });
    p.deliverer
        .expect_deliver()
        .returning(|_| AttemptReport::answered(500, b"down", 42));
    p.outbox
        .expect_record_attempts()
        .withf(|rs| match rs.as_slice() {
            [r] => {
                let log = &r.log;
                {
                    log.as_ref().is_some_and(|l| {
                        l.outcome == AttemptOutcome::Failed
                            && l.failure_reason == Some(FailureReason::HttpStatus)
                            && l.status_code == Some(500)
                            && l.latency_ms == 42
                            && l.attempt == 1
                            && l.response_body.as_deref() == Some("down")
                            && l.id.starts_with("att_")
                    })
                }
            }
            _ => false,
        })
        .times(1)
        .returning(|rs| Ok(vec![true; rs.len()]));
    p.endpoints
        .expect_set_health()
        .withf(|_, created, change| {
            *created == NOW - 60
                && change.state == EndpointState::Disabled
                && change.failing_since_ms == Some(NOW_MS - 120 * 3_600_000)
                // Test mode: no email.
                && change.jobs.is_empty()
        })
        .times(1)
        .returning(|_, _, _| Ok(true));
    p.build().step().await.unwrap();

    // A success clears the failing streak.
    let mut p = Parts::new();
    p.outbox
        .expect_claim_deliveries()
        .returning(|_, _, _| Ok(vec![event(1)]));
    p.endpoints
        .expect_endpoint()
        .returning(|_| Ok(Some(endpoint())));
    p.deliverer
        .expect_deliver()
        .returning(|_| AttemptReport::answered(204, b"", 3));
    p.outbox
        .expect_record_attempts()
        .withf(|rs| match rs.as_slice() {
            [r] => {
                let log = &r.log;
                {
                    log.as_ref()
                        .is_some_and(|l| l.outcome == AttemptOutcome::Succeeded && l.attempt == 2)
                }
            }
            _ => false,
        })
        .returning(|rs| Ok(vec![true; rs.len()]));
    p.endpoints
        .expect_set_health()
        .withf(|_, _, change| {
            change.state == EndpointState::Enabled && change.failing_since_ms.is_none()
        })
        .times(1)
        .returning(|_, _, _| Ok(true));
    p.build().step().await.unwrap();

    // A disabled endpoint: nothing is sent, the delivery is cancelled.
    let mut p = Parts::new();
    p.outbox
        .expect_claim_deliveries()
        .returning(|_, _, _| Ok(vec![event(0)]));
    p.endpoints.expect_endpoint().returning(|_| {
        Ok(Some(WebhookEndpoint {
            state: EndpointState::Disabled,
            ..endpoint()
        }))
    });
    p.deliverer.expect_deliver().never();
    p.outbox
        .expect_record_attempts()
        .withf(|rs| match rs.as_slice() {
            [r] => {
                let state = &r.state;
                let log = &r.log;
                {
                    *state == DeliveryState::NoEndpoint
                        && log
                            .as_ref()
                            .is_some_and(|l| l.outcome == AttemptOutcome::Cancelled)
                }
            }
            _ => false,
        })
        .times(1)
        .returning(|rs| Ok(vec![true; rs.len()]));
    p.build().step().await.unwrap();
}

#[tokio::test]
async fn the_same_url_re_enables_a_disabled_endpoint_and_keeps_its_secret() {
    let mut p = Parts::new();
    p.settings.allow_insecure_endpoints = true;
    p.endpoints.expect_endpoint().returning(|_| {
        Ok(Some(WebhookEndpoint {
            state: EndpointState::Disabled,
            ..endpoint()
        }))
    });
    p.endpoints.expect_put_endpoint().never();
    p.endpoints
        .expect_set_health()
        .withf(|_, _, change| {
            change.state == EndpointState::Enabled && change.failing_since_ms.is_none()
        })
        .times(1)
        .returning(|_, _, _| Ok(true));
    let r = p
        .build()
        .register(&scope(), "https://hooks.example.com/h")
        .await
        .unwrap();
    assert_eq!(r.secret, SECRET);
}

#[tokio::test]
async fn a_disabled_live_endpoint_is_emailed_to_the_partners_admins_only() {
    use crate::partner_user::{PartnerUser, Role};
    let user = |n: u8, role: Role| PartnerUser {
        id: crate::ids::UserId::from_bytes([n; 6]),
        partner: scope().partner,
        email: format!("u{n}@broker.example"),
        role,
        password_hash: None,
        lockout: crate::portal::Lockout::default(),
        totp_sealed: None,
        totp_last_step: None,
        created_at: 0,
    };
    let mut p = Parts::new();
    p.users.expect_users().times(1).returning(move |_| {
        Ok(vec![
            user(1, Role::Admin),
            user(2, Role::Viewer),
            user(3, Role::Admin),
        ])
    });
    let w = p.build();
    let live = WebhookEndpoint {
        scope: Scope::new(scope().partner, Mode::Live),
        ..endpoint()
    };
    let jobs = w.disabled_emails(&live, NOW_MS).await.unwrap();
    assert_eq!(jobs.len(), 2);
    for job in &jobs {
        assert_eq!(job.scope.mode, Mode::Live);
        match &job.payload {
            crate::document::JobPayload::Email(e) => assert_eq!(e.kind, "endpoint_disabled"),
            other => panic!("not an email: {other:?}"),
        }
    }
    // Test mode sends no email and reads no user.
    let test = Parts::new().build();
    assert!(
        test.disabled_emails(&endpoint(), NOW_MS)
            .await
            .unwrap()
            .is_empty()
    );
}
