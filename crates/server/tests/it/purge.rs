//! The idempotency purge of `serve`: its real periodic loop, run against a
//! real database while requests keep storing keys, holds the table at the
//! keys of the last 24 hours instead of letting it grow.

use std::sync::Arc;
use std::time::{Duration, Instant};

use domain::idempotency::{Begin, Completion, IdempotentRequest, StoredResponse, request_digest};
use domain::ids::PartnerId;
use domain::mode::Mode;
use domain::partner::{Partner, PartnerKind};
use domain::scope::Scope;
use domain::services::housekeeping::Housekeeping;
use testkit::db::TestDb;

use crate::http::ManualClock;

/// Keys stored per round.
const PER_ROUND: usize = 10;

/// Clock time between rounds: a stored answer outlives four of them.
const ROUND_SECS: i64 = 6 * 60 * 60;

/// Rows of the idempotency table.
async fn rows(t: &TestDb) -> usize {
    testkit::db::texts(&t.db, "SELECT idem_key AS value FROM idempotency")
        .await
        .len()
}

crate::http_on_both!(the_periodic_purge_keeps_the_idempotency_table_from_growing);
async fn the_periodic_purge_keeps_the_idempotency_table_from_growing(t: TestDb) {
    let s = &t.stores;
    let partner = Partner::new(
        PartnerId::from_bytes([1; 6]),
        "Purge partner".to_owned(),
        PartnerKind::Broker,
        None,
    );
    s.partners.insert_partner(&partner, 1_000).await.unwrap();
    let scope = Scope::new(partner.id, Mode::Test);
    let clock = Arc::new(ManualClock::new());
    let purge = tokio::spawn(server::purge::run(
        Housekeeping::new(Arc::clone(&s.idempotency), clock.clone()),
        Duration::from_millis(20),
    ));
    let answer = StoredResponse {
        status: 201,
        headers: vec![],
        body: b"{}".to_vec(),
    };
    let rounds = 12;
    for round in 0..rounds {
        if round > 0 {
            clock.advance(ROUND_SECS);
        }
        for i in 0..PER_ROUND {
            let key = format!("key-{round}-{i}");
            let r = IdempotentRequest {
                key: key.clone(),
                method: "POST".to_owned(),
                route: "/v1/groups".to_owned(),
                digest: request_digest(key.as_bytes()),
                attempt: key.clone(),
            };
            assert_eq!(
                s.idempotency.begin(&scope, &r, clock.secs()).await.unwrap(),
                Begin::Execute
            );
            s.idempotency
                .complete(
                    &scope,
                    Completion {
                        request: &r,
                        response: &answer,
                        now: clock.secs(),
                    },
                )
                .await
                .unwrap();
        }
        // Only the answers of the last 24 hours (this round and the three
        // before) survive the loop's next pass.
        let expected = PER_ROUND * (round + 1).min(4);
        let deadline = Instant::now() + Duration::from_secs(20);
        while rows(&t).await != expected {
            assert!(
                Instant::now() < deadline,
                "round {round}: {} rows, expected {expected}",
                rows(&t).await
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    assert_eq!(rows(&t).await, 4 * PER_ROUND);
    assert!(PER_ROUND * rounds > 4 * PER_ROUND);
    purge.abort();
}
