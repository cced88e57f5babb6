//! A batch of recorded attempts (the dispatcher's, and concurrent test
//! pings'): each attempt is recorded only while its claim's lease holds,
//! with its log row, and an event twice in one batch is recorded once —
//! as records taken one after the other would be.

use domain::event::DeliveryState;
use domain::ids::EventId;
use domain::scope::Scope;
use domain::store::AttemptRecord;

use crate::harness::{TestDb, partner};
use crate::on_both;
use crate::outbox::{event, logged};

/// A record of `id`'s attempt under `lease`, logged as `log`.
fn record(
    sc: &Scope,
    id: &EventId,
    lease: i64,
    state: DeliveryState,
    status: u16,
    log: &str,
) -> AttemptRecord {
    AttemptRecord {
        id: id.clone(),
        lease_until_ms: lease,
        state,
        status: Some(status),
        next_attempt_at_ms: (state == DeliveryState::Pending).then_some(12_000),
        log: Some(logged(sc, id, log)),
    }
}

/// The delivery log's rows, by id.
async fn logs(t: &TestDb) -> Vec<String> {
    testkit::db::texts(
        &t.db,
        "SELECT id AS value FROM webhook_attempts ORDER BY id",
    )
    .await
}

/// Each of `ids`' events as `state:attempts:last_status:next_attempt:leased`.
async fn events(t: &TestDb, ids: &[EventId]) -> Vec<String> {
    let mut found = Vec::new();
    for id in ids {
        let sql = format!(
            "SELECT state || ':' || CAST(attempts AS TEXT) || ':' \
             || COALESCE(CAST(last_status AS TEXT), '-') || ':' \
             || COALESCE(CAST(next_attempt_at_ms AS TEXT), '-') || ':' \
             || CASE WHEN locked_until_ms IS NULL THEN 'free' ELSE 'leased' END AS value \
             FROM events WHERE id = '{id}'"
        );
        found.extend(testkit::db::texts(&t.db, &sql).await);
    }
    found
}

async fn a_batch_records_each_attempt_whose_lease_holds(t: TestDb) {
    let s = &t.stores;
    let (_, sc) = partner(s, 1).await;
    let appended: Vec<_> = (1..=4).map(|n| event(n, &sc, 10)).collect();
    s.outbox.append(&appended, 10_000).await.unwrap();
    let claimed = s.outbox.claim_deliveries(10_000, 1_000, 10).await.unwrap();
    assert_eq!(claimed.len(), 4);
    let ids: Vec<EventId> = claimed.iter().map(|e| e.event.id.clone()).collect();
    let id = |n: usize| ids[n].clone();
    let lease = |n: usize| claimed[n].lease_until_ms.unwrap();
    // The third is recorded first, alone: its lease no longer holds.
    assert!(
        s.outbox
            .record_attempts(vec![record(
                &sc,
                &id(2),
                lease(2),
                DeliveryState::Delivered,
                204,
                "log-c0"
            )])
            .await
            .unwrap()[0]
    );

    let batch = vec![
        record(
            &sc,
            &id(0),
            lease(0),
            DeliveryState::Delivered,
            204,
            "log-a",
        ),
        // Another claim's lease: not this attempt's to record.
        record(
            &sc,
            &id(1),
            lease(1) + 1,
            DeliveryState::Delivered,
            204,
            "log-b",
        ),
        record(&sc, &id(2), lease(2), DeliveryState::Failed, 500, "log-c"),
        record(&sc, &id(3), lease(3), DeliveryState::Pending, 503, "log-d"),
    ];
    assert_eq!(
        s.outbox.record_attempts(batch).await.unwrap(),
        [true, false, false, true]
    );
    assert_eq!(
        events(&t, &ids).await,
        [
            "delivered:1:204:-:free",
            "pending:0:-:10000:leased",
            "delivered:1:204:-:free",
            "pending:1:503:12000:free",
        ]
    );
    assert_eq!(logs(&t).await, ["log-a", "log-c0", "log-d"]);

    // The same event twice in a batch: the first record takes the lease,
    // the second finds it gone.
    let again = s.outbox.claim_deliveries(12_000, 1_000, 10).await.unwrap();
    let pending: Vec<_> = again.iter().filter(|e| e.event.id == id(3)).collect();
    let lease = pending[0].lease_until_ms.unwrap();
    let twice = vec![
        record(&sc, &id(3), lease, DeliveryState::Delivered, 200, "log-e"),
        record(&sc, &id(3), lease, DeliveryState::Failed, 410, "log-f"),
    ];
    assert_eq!(
        s.outbox.record_attempts(twice).await.unwrap(),
        [true, false]
    );
    assert_eq!(events(&t, &ids[3..]).await, ["delivered:2:200:-:free"]);
    assert_eq!(logs(&t).await, ["log-a", "log-c0", "log-d", "log-e"]);
}
on_both!(a_batch_records_each_attempt_whose_lease_holds);
