//! The attempt log, endpoint health, and the email when a live endpoint is disabled.

use super::*;

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
