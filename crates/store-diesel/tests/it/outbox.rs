//! The outbox: events are written with the change they announce, read back
//! in scope, and each due delivery is claimed by one claimant at a time —
//! across processes (two independent pools) on PostgreSQL.

use std::collections::HashSet;

use domain::document::event::GroupStateChanged;
use domain::event::{DeliveryState, EventData, NewEvent};
use domain::group::{CompanyState, GroupStatus};
use domain::ids::{EventId, GroupId};
use domain::mode::Mode;
use domain::page::PageRequest;
use domain::scope::Scope;
use domain::store::{Conflict, GroupAdvance, StoreError};
use domain::webhook::attempt::{AttemptFilter, AttemptOutcome, DeliveryAttempt, FailureReason};
use domain::webhook::{EndpointState, WebhookEndpoint};

use crate::groups::group;
use crate::harness::{TestDb, partner, process};
use crate::on_both;

pub fn event(n: u32, scope: &Scope, at: i64) -> NewEvent {
    let [a, b, c, d] = n.to_be_bytes();
    NewEvent {
        id: EventId::from_bytes([0, 0, a, b, c, d]),
        scope: scope.clone(),
        created_at: at,
        data: EventData::GroupStateChanged(GroupStateChanged {
            group_id: GroupId::from_bytes([0, 0, 0, 0, 0, 1]),
            company_domain: format!("d{n}.example.com"),
            previous_state: "sandbox".to_owned(),
            state: "prod".to_owned(),
            forced: false,
        }),
    }
}

async fn events_commit_with_their_change_or_not_at_all(t: TestDb) {
    let s = &t.stores;
    let (_, sc) = partner(s, 1).await;
    let g = group(1, &sc, "acme.com", 100);
    s.groups.insert_group(&g).await.unwrap();
    let e = event(1, &sc, 200);
    s.groups
        .advance_group(
            &sc,
            &g.id,
            &GroupAdvance {
                status: GroupStatus::Enrolled,
                company_state: Some(CompanyState::Sandbox),
                events: vec![e.clone()],
                now: 200,
            },
        )
        .await
        .unwrap();
    let stored = s.outbox.event(&sc, &e.id).await.unwrap();
    assert_eq!(stored.event, e);
    assert_eq!((stored.state, stored.attempts), (DeliveryState::Pending, 0));

    // The same event id again: the event insert fails, so the group change
    // in the same transaction is rolled back too.
    let before = s.groups.group(&sc, &g.id).await.unwrap();
    let err = s
        .groups
        .advance_group(
            &sc,
            &g.id,
            &GroupAdvance {
                status: GroupStatus::Active,
                company_state: Some(CompanyState::Prod),
                events: vec![e.clone()],
                now: 300,
            },
        )
        .await;
    assert!(err.is_err());
    assert_eq!(s.groups.group(&sc, &g.id).await.unwrap(), before);

    // The company state only moves forward, checked under the lock.
    let again = s
        .groups
        .advance_group(
            &sc,
            &g.id,
            &GroupAdvance {
                status: GroupStatus::Enrolled,
                company_state: Some(CompanyState::Sandbox),
                events: Vec::new(),
                now: 301,
            },
        )
        .await;
    assert!(matches!(
        again,
        Err(StoreError::Conflict(Conflict::CompanyStateMoved))
    ));

    // Scoped reads.
    let live = Scope::new(sc.partner.clone(), Mode::Live);
    assert!(matches!(
        s.outbox.event(&live, &e.id).await,
        Err(StoreError::NotFound)
    ));
    let (_, other) = partner(s, 2).await;
    assert!(
        s.outbox
            .events(
                &other,
                &domain::event::EventFilter::since(0),
                &PageRequest::first(50)
            )
            .await
            .unwrap()
            .items
            .is_empty()
    );
}
on_both!(events_commit_with_their_change_or_not_at_all);

async fn deliveries_are_claimed_once_and_retried_when_due(t: TestDb) {
    let s = &t.stores;
    let (_, sc) = partner(s, 1).await;
    let list: Vec<NewEvent> = (0..3).map(|n| event(n, &sc, 10)).collect();
    s.outbox.append(&list, 10_000).await.unwrap();
    assert!(
        s.outbox
            .claim_deliveries(9_999, 1_000, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let claimed = s.outbox.claim_deliveries(10_000, 1_000, 10).await.unwrap();
    assert_eq!(claimed.len(), 3);
    // Leased: nobody else gets them until the lease ends.
    assert!(
        s.outbox
            .claim_deliveries(10_500, 1_000, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let first = &claimed[0].event.id;
    let lease = claimed[0].lease_until_ms.unwrap();
    assert_eq!(lease, 11_000);
    assert!(
        s.outbox
            .record_attempt(
                first,
                lease,
                DeliveryState::Pending,
                Some(500),
                Some(12_000),
                Some(logged(&sc, first, "att_000000000000000000000001")),
            )
            .await
            .unwrap()
    );
    assert!(
        s.outbox
            .record_attempt(
                &claimed[1].event.id,
                lease,
                DeliveryState::Delivered,
                Some(204),
                None,
                None,
            )
            .await
            .unwrap()
    );
    // The lease of the third ran out: it is due again; the first is due at 12 s.
    let again = s.outbox.claim_deliveries(11_000, 5_000, 10).await.unwrap();
    assert_eq!(
        again.iter().map(|e| e.event.id.clone()).collect::<Vec<_>>(),
        vec![claimed[2].event.id.clone()]
    );
    // The first claimant of the third, back after its lease, records nothing.
    assert!(
        !s.outbox
            .record_attempt(
                &claimed[2].event.id,
                lease,
                DeliveryState::Delivered,
                Some(200),
                None,
                Some(logged(
                    &sc,
                    &claimed[2].event.id,
                    "att_000000000000000000000002"
                )),
            )
            .await
            .unwrap()
    );
    // The attempt's log row went with its outcome; the lost claim's did not.
    let log = s
        .webhooks
        .attempts(&sc, &AttemptFilter::default(), &PageRequest::first(50))
        .await
        .unwrap()
        .items;
    assert_eq!(
        log.iter().map(|a| a.id.as_str()).collect::<Vec<_>>(),
        ["att_000000000000000000000001"]
    );
    assert_eq!(log[0].failure_reason, Some(FailureReason::HttpStatus));
    assert_eq!(again[0].lease_until_ms, Some(16_000));
    let retry = s.outbox.claim_deliveries(12_000, 1_000, 10).await.unwrap();
    assert_eq!(retry.len(), 1);
    assert_eq!(
        (&retry[0].event.id, retry[0].attempts, retry[0].last_status),
        (first, 1, Some(500))
    );
    let delivered = s.outbox.event(&sc, &claimed[1].event.id).await.unwrap();
    assert_eq!(
        (delivered.state, delivered.attempts),
        (DeliveryState::Delivered, 1)
    );
    assert!(matches!(
        s.outbox
            .record_attempt(
                &EventId::from_bytes([9; 6]),
                1,
                DeliveryState::Failed,
                None,
                None,
                None
            )
            .await,
        Err(StoreError::NotFound)
    ));

    // Events list newest first, 30-day window by `since`.
    let page = s
        .outbox
        .events(
            &sc,
            &domain::event::EventFilter::since(0),
            &PageRequest::first(2),
        )
        .await
        .unwrap();
    assert_eq!(page.items.len(), 2);
    assert!(page.next.is_some());
    assert!(
        s.outbox
            .events(
                &sc,
                &domain::event::EventFilter::since(11),
                &PageRequest::first(2)
            )
            .await
            .unwrap()
            .items
            .is_empty()
    );
}
on_both!(deliveries_are_claimed_once_and_retried_when_due);

async fn concurrent_claimants_never_share_a_delivery(t: TestDb) {
    let (_, sc) = partner(&t.stores, 1).await;
    let list: Vec<NewEvent> = (0..200).map(|n| event(n, &sc, 10)).collect();
    t.stores.outbox.append(&list, 0).await.unwrap();
    // Two "processes" (independent pools), four claimants each.
    let pools = [t.stores.clone(), t.second_process()];
    let mut tasks = Vec::new();
    for p in pools {
        for _ in 0..4 {
            let outbox = p.outbox.clone();
            tasks.push(tokio::spawn(async move {
                let mut mine = Vec::new();
                loop {
                    let batch = outbox.claim_deliveries(1_000, 60_000, 7).await.unwrap();
                    if batch.is_empty() {
                        break;
                    }
                    mine.extend(batch.into_iter().map(|e| e.event.id));
                }
                mine
            }));
        }
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    let distinct: HashSet<_> = all.iter().cloned().collect();
    assert_eq!(all.len(), 200, "every delivery claimed exactly once");
    assert_eq!(distinct.len(), 200);
}
on_both!(concurrent_claimants_never_share_a_delivery);

/// A failed attempt's delivery-log row.
pub fn logged(sc: &Scope, event: &EventId, id: &str) -> DeliveryAttempt {
    DeliveryAttempt {
        id: id.to_owned(),
        scope: sc.clone(),
        event_id: event.clone(),
        event_type: domain::event::EventType::GroupStateChanged,
        attempt: 1,
        at_ms: 11_000,
        status_code: Some(500),
        latency_ms: 12,
        outcome: AttemptOutcome::Failed,
        failure_reason: Some(FailureReason::HttpStatus),
        response_body: Some("down".to_owned()),
    }
}

async fn a_replay_reschedules_its_window_and_deliveries_go_oldest_first(t: TestDb) {
    let s = &t.stores;
    let (_, sc) = partner(s, 1).await;
    // Ids in the opposite order of creation: the claim must not follow them.
    let list = vec![event(1, &sc, 30), event(2, &sc, 20), event(3, &sc, 10)];
    s.outbox.append(&list, 1_000).await.unwrap();
    for e in s.outbox.claim_deliveries(1_000, 1_000, 10).await.unwrap() {
        let lease = e.lease_until_ms.unwrap();
        s.outbox
            .record_attempt(
                &e.event.id,
                lease,
                DeliveryState::Failed,
                Some(500),
                None,
                None,
            )
            .await
            .unwrap();
    }
    // [10, 30): two events; a pending one would be left alone.
    assert_eq!(
        s.outbox
            .replay(&sc, 10, 30, Vec::new(), 5_000)
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        s.outbox
            .replay(
                &sc,
                0,
                100,
                vec![domain::event::EventType::QuoteFinalized],
                5_000
            )
            .await
            .unwrap(),
        0
    );
    let mut order = Vec::new();
    while let Some(e) = s
        .outbox
        .claim_deliveries(5_000, 1_000, 1)
        .await
        .unwrap()
        .pop()
    {
        assert_eq!((e.state, e.attempts), (DeliveryState::Pending, 0));
        order.push(e.event.created_at);
    }
    assert_eq!(order, [10, 20], "oldest first");
    assert_eq!(
        s.outbox.event(&sc, &list[0].id).await.unwrap().state,
        DeliveryState::Failed,
        "outside the window"
    );
}
on_both!(a_replay_reschedules_its_window_and_deliveries_go_oldest_first);

/// Waits (at most 10 s) for the watch to move; whether it did.
async fn heard(watch: &mut domain::store::OutboxWatch) -> bool {
    tokio::time::timeout(std::time::Duration::from_secs(10), watch.changes.changed())
        .await
        .is_ok_and(|r| r.is_ok())
}

async fn an_idle_dispatcher_hears_of_new_and_rescheduled_deliveries(t: TestDb) {
    let s = &t.stores;
    let (_, sc) = partner(s, 1).await;
    let postgres = matches!(t.db, store_diesel::Database::Postgres { .. });
    let mut watch = s.outbox.watch();
    if postgres {
        // The listener says once that it is listening.
        assert!(heard(&mut watch).await, "the listener never connected");
    }
    assert_eq!(s.outbox.next_due_ms().await.unwrap(), None);

    // Events appended: by another process on PostgreSQL (its own pool,
    // heard through NOTIFY), by this one on SQLite.
    let other = process(&t, 2).0;
    let writer = if postgres { &other } else { s };
    watch.changes.borrow_and_update();
    writer
        .outbox
        .append(&[event(1, &sc, 10)], 10_000)
        .await
        .unwrap();
    assert!(heard(&mut watch).await, "an append was not heard");
    assert_eq!(s.outbox.next_due_ms().await.unwrap(), Some(10_000));

    // Claimed: due again only when the lease ends.
    let claimed = s.outbox.claim_deliveries(10_000, 1_000, 10).await.unwrap();
    let lease = claimed[0].lease_until_ms.unwrap();
    assert_eq!(s.outbox.next_due_ms().await.unwrap(), Some(lease));

    // A retry recorded outside the dispatcher is heard; the dispatcher's
    // own batches are not announced (it looks for what is due itself).
    watch.changes.borrow_and_update();
    let id = &claimed[0].event.id;
    assert!(
        writer
            .outbox
            .record_attempt(
                id,
                lease,
                DeliveryState::Pending,
                Some(500),
                Some(12_000),
                None
            )
            .await
            .unwrap()
    );
    assert!(
        heard(&mut watch).await,
        "a rescheduled attempt was not heard"
    );
    assert_eq!(s.outbox.next_due_ms().await.unwrap(), Some(12_000));
    let claimed = s.outbox.claim_deliveries(12_000, 1_000, 10).await.unwrap();
    let record = domain::store::AttemptRecord {
        id: id.clone(),
        lease_until_ms: claimed[0].lease_until_ms.unwrap(),
        state: DeliveryState::Delivered,
        status: Some(204),
        next_attempt_at_ms: None,
        log: None,
    };
    assert_eq!(
        s.outbox.record_attempts(vec![record]).await.unwrap(),
        vec![true]
    );
    assert_eq!(s.outbox.next_due_ms().await.unwrap(), None);

    // A resend is heard.
    watch.changes.borrow_and_update();
    writer.outbox.resend(&sc, id, 20_000).await.unwrap();
    assert!(heard(&mut watch).await, "a resend was not heard");
    assert_eq!(s.outbox.next_due_ms().await.unwrap(), Some(20_000));
}
on_both!(an_idle_dispatcher_hears_of_new_and_rescheduled_deliveries);

/// Registers an endpoint of `scope`.
async fn registered(s: &store_diesel::Stores, scope: &Scope) -> WebhookEndpoint {
    let endpoint = WebhookEndpoint {
        scope: scope.clone(),
        url: "https://hooks.example.com/h".to_owned(),
        sealed_secret: vec![1, 2, 3],
        created_at: 100,
        state: EndpointState::Enabled,
        failing_since_ms: None,
        previous_secret: None,
    };
    s.webhooks.put_endpoint(&endpoint).await.unwrap();
    endpoint
}

on_both!(concurrent_claimed_appends_each_get_their_own_answer);
/// Twenty claimed appends at once (on PostgreSQL they go out together):
/// the one whose id is taken gets its conflict, the others are stored, and
/// a scope without an endpoint appends nothing.
async fn concurrent_claimed_appends_each_get_their_own_answer(t: TestDb) {
    let s = &t.stores;
    let (_, sc) = partner(s, 1).await;
    let (_, bare) = partner(s, 2).await;
    let endpoint = registered(s, &sc).await;
    let taken = event(7, &sc, 200);
    s.outbox
        .append(std::slice::from_ref(&taken), 200_000)
        .await
        .unwrap();

    let events: Vec<NewEvent> = (0..20)
        .map(|n| match n {
            7 => taken.clone(),
            13 => event(100 + n, &bare, 200),
            _ => event(100 + n, &sc, 200),
        })
        .collect();
    let appends = events
        .iter()
        .map(|e| s.outbox.append_claimed(e, 200_000, 260_000));
    let answers = futures_util::future::join_all(appends).await;
    for (n, (e, answer)) in events.iter().zip(answers).enumerate() {
        match n {
            7 => assert!(
                matches!(answer, Err(StoreError::Conflict(Conflict::IdTaken))),
                "{answer:?}"
            ),
            13 => {
                assert!(matches!(answer, Ok(None)), "{answer:?}");
                assert!(s.outbox.event(&bare, &e.id).await.is_err());
            }
            _ => {
                assert!(matches!(&answer, Ok(Some(got)) if *got == endpoint), "{n}");
                let stored = s.outbox.event(&sc, &e.id).await.unwrap();
                assert_eq!(stored.event, *e);
                assert_eq!(stored.lease_until_ms, Some(260_000));
            }
        }
    }
}

on_both!(concurrent_appends_and_records_each_get_their_own_answer);
/// Claimed appends and attempt records at once (on PostgreSQL they share
/// transactions): a taken id is that append's conflict alone, an attempt
/// whose lease was lost is not recorded, and every other write is made.
async fn concurrent_appends_and_records_each_get_their_own_answer(t: TestDb) {
    let s = &t.stores;
    let (_, sc) = partner(s, 1).await;
    let endpoint = registered(s, &sc).await;
    let claimed: Vec<NewEvent> = (0..10).map(|n| event(300 + n, &sc, 200)).collect();
    for e in &claimed {
        s.outbox.append_claimed(e, 200_000, 260_000).await.unwrap();
    }
    let fresh: Vec<NewEvent> = (0..10)
        .map(|n| match n {
            4 => claimed[2].clone(),
            _ => event(400 + n, &sc, 200),
        })
        .collect();

    let records = claimed.iter().enumerate().map(|(n, e)| {
        // Event 5's lease is not the one it was claimed with.
        let lease = if n == 5 { 999_999 } else { 260_000 };
        s.outbox.record_attempt(
            &e.id,
            lease,
            DeliveryState::Delivered,
            Some(204),
            None,
            None,
        )
    });
    let appends = fresh
        .iter()
        .map(|e| s.outbox.append_claimed(e, 200_000, 260_000));
    let (recorded, appended) = futures_util::future::join(
        futures_util::future::join_all(records),
        futures_util::future::join_all(appends),
    )
    .await;

    for (n, (e, answer)) in claimed.iter().zip(recorded).enumerate() {
        let stored = s.outbox.event(&sc, &e.id).await.unwrap();
        if n == 5 {
            assert!(matches!(answer, Ok(false)), "{answer:?}");
            assert_eq!(stored.state, DeliveryState::Pending);
            assert_eq!(stored.attempts, 0);
        } else {
            assert!(matches!(answer, Ok(true)), "{n}: {answer:?}");
            assert_eq!(stored.state, DeliveryState::Delivered);
            assert_eq!((stored.attempts, stored.last_status), (1, Some(204)));
        }
    }
    for (n, (e, answer)) in fresh.iter().zip(appended).enumerate() {
        if n == 4 {
            assert!(
                matches!(answer, Err(StoreError::Conflict(Conflict::IdTaken))),
                "{answer:?}"
            );
        } else {
            assert!(matches!(&answer, Ok(Some(got)) if *got == endpoint), "{n}");
            let stored = s.outbox.event(&sc, &e.id).await.unwrap();
            assert_eq!(stored.lease_until_ms, Some(260_000));
        }
    }
}
