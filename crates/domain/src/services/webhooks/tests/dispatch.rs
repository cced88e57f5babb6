//! The dispatcher: signing in the partner's style, retries, the final failure, idling.

use super::*;

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
