//! Idempotency records: execute once, replay the stored response, detect a
//! reused key with another body or endpoint, report in-flight duplicates,
//! expire after 24 hours, let exactly one of 50 concurrent duplicates
//! execute, and free a dead process's in-flight keys without waiting for
//! their lease.

use std::sync::atomic::{AtomicU64, Ordering};

use domain::idempotency::{Begin, Completion, IdempotentRequest, StoredResponse, request_digest};
use domain::mode::Mode;
use domain::scope::Scope;

use crate::harness::{TestDb, partner, process};
use crate::on_both;

/// A request of a fresh attempt (each call draws another token).
pub(crate) fn req(key: &str, route: &str, body: &[u8]) -> IdempotentRequest {
    static ATTEMPTS: AtomicU64 = AtomicU64::new(0);
    IdempotentRequest {
        key: key.to_owned(),
        method: "POST".to_owned(),
        route: route.to_owned(),
        digest: request_digest(body),
        attempt: format!("attempt-{}", ATTEMPTS.fetch_add(1, Ordering::Relaxed)),
    }
}

async fn replay_mismatch_in_flight_and_expiry(t: TestDb) {
    let s = &t.stores;
    let (_, sc) = partner(s, 1).await;
    let r = req("k1", "/v1/groups", b"{\"a\":1}");
    assert_eq!(
        s.idempotency.begin(&sc, &r, 1_000).await.unwrap(),
        Begin::Execute
    );
    assert_eq!(
        s.idempotency.begin(&sc, &r, 1_001).await.unwrap(),
        Begin::InFlight
    );
    let resp = StoredResponse {
        status: 201,
        headers: vec![(
            "Location".to_owned(),
            "/v1/groups/grp_000000000001".to_owned(),
        )],
        body: b"{\"id\":\"grp_000000000001\"}".to_vec(),
    };
    s.idempotency
        .complete(
            &sc,
            Completion {
                request: &r,
                response: &resp,
                now: 1_002,
            },
        )
        .await
        .unwrap();
    assert_eq!(
        s.idempotency.begin(&sc, &r, 1_003).await.unwrap(),
        Begin::Replay(resp.clone())
    );
    assert_eq!(
        s.idempotency
            .begin(&sc, &req("k1", "/v1/groups", b"{}"), 1_004)
            .await
            .unwrap(),
        Begin::Mismatch
    );
    assert_eq!(
        s.idempotency
            .begin(&sc, &req("k1", "/v1/price-on-plan", b"{\"a\":1}"), 1_004)
            .await
            .unwrap(),
        Begin::Mismatch
    );
    // Keys are scoped to partner and mode.
    let live = Scope::new(sc.partner.clone(), Mode::Live);
    assert_eq!(
        s.idempotency.begin(&live, &r, 1_005).await.unwrap(),
        Begin::Execute
    );
    let (_, other) = partner(s, 2).await;
    assert_eq!(
        s.idempotency.begin(&other, &r, 1_005).await.unwrap(),
        Begin::Execute
    );
    // After 24 hours the key is free again.
    let day = 24 * 3600;
    assert_eq!(
        s.idempotency.begin(&sc, &r, 1_002 + day - 1).await.unwrap(),
        Begin::Replay(resp)
    );
    assert_eq!(
        s.idempotency.begin(&sc, &r, 1_002 + day).await.unwrap(),
        Begin::Execute
    );
    // A released (5xx/429) record executes again at once.
    s.idempotency.release(&sc, &r).await.unwrap();
    assert_eq!(
        s.idempotency.begin(&sc, &r, 1_002 + day).await.unwrap(),
        Begin::Execute
    );
    // An in-flight record abandoned by a crashed process frees after its lease.
    assert_eq!(
        s.idempotency
            .begin(&sc, &r, 1_002 + day + 299)
            .await
            .unwrap(),
        Begin::InFlight
    );
    assert_eq!(
        s.idempotency
            .begin(&sc, &r, 1_002 + day + 300)
            .await
            .unwrap(),
        Begin::Execute
    );
    assert!(
        s.idempotency
            .complete(
                &sc,
                Completion {
                    request: &req("nope", "/v1/groups", b"{}"),
                    response: &StoredResponse {
                        status: 200,
                        headers: vec![],
                        body: vec![]
                    },
                    now: 1
                }
            )
            .await
            .is_err()
    );
    assert!(s.idempotency.purge_idempotency(10 * day).await.unwrap() >= 1);
}
on_both!(replay_mismatch_in_flight_and_expiry);

async fn exactly_one_of_fifty_concurrent_duplicates_executes(t: TestDb) {
    let (_, sc) = partner(&t.stores, 1).await;
    let pools = [t.stores.clone(), t.second_process()];
    let mut tasks = Vec::new();
    for i in 0..50 {
        let store = pools[i % 2].idempotency.clone();
        let sc = sc.clone();
        tasks.push(tokio::spawn(async move {
            store
                .begin(&sc, &req("dup", "/v1/groups", b"{}"), 5_000)
                .await
                .unwrap()
        }));
    }
    let mut executed = 0;
    for task in tasks {
        match task.await.unwrap() {
            Begin::Execute => executed += 1,
            Begin::InFlight => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(executed, 1);
}
on_both!(exactly_one_of_fifty_concurrent_duplicates_executes);

/// A process's in-flight key blocks duplicates while its heartbeat is
/// fresh; once the heartbeat is older than the owner timeout, or the
/// process deregistered, another process executes the key at once, and the
/// silent process can no longer complete or release it.
async fn a_dead_processs_in_flight_key_executes_elsewhere(t: TestDb) {
    let (_, sc) = partner(&t.stores, 1).await;
    let (a, _) = process(&t, 0xa);
    let (b, _) = process(&t, 0xb);
    // Unix seconds, and the same instant in milliseconds.
    let t0: i64 = 1_800_000_000;
    let ms = |s: i64| s * 1_000;
    let r = req("k1", "/v1/groups", b"{}");
    // The same request, retried by its client at the other process.
    let rb = IdempotentRequest {
        attempt: "b's attempt".to_owned(),
        ..r.clone()
    };
    a.processes.register_process(ms(t0)).await.unwrap();
    assert_eq!(
        a.idempotency.begin(&sc, &r, t0).await.unwrap(),
        Begin::Execute
    );
    // A live owner's key is in flight for everyone else.
    assert_eq!(
        b.idempotency.begin(&sc, &rb, t0 + 5).await.unwrap(),
        Begin::InFlight
    );
    a.processes.heartbeat(ms(t0 + 6)).await.unwrap();
    assert_eq!(
        b.idempotency.begin(&sc, &rb, t0 + 13).await.unwrap(),
        Begin::InFlight
    );
    // The owner stopped beating: 11 s later its key is free, long before
    // the in-flight lease, on both backends.
    assert_eq!(
        b.idempotency.begin(&sc, &rb, t0 + 17).await.unwrap(),
        Begin::Execute
    );
    b.processes.register_process(ms(t0 + 17)).await.unwrap();
    // The silent owner wakes up: the key is no longer its own.
    let resp = StoredResponse {
        status: 201,
        headers: vec![],
        body: b"{}".to_vec(),
    };
    assert!(matches!(
        a.idempotency
            .complete(
                &sc,
                Completion {
                    request: &r,
                    response: &resp,
                    now: t0 + 18
                }
            )
            .await,
        Err(domain::store::StoreError::NotFound)
    ));
    a.idempotency.release(&sc, &r).await.unwrap();
    assert_eq!(
        a.idempotency.begin(&sc, &r, t0 + 18).await.unwrap(),
        Begin::InFlight
    );
    b.idempotency
        .complete(
            &sc,
            Completion {
                request: &rb,
                response: &resp,
                now: t0 + 18,
            },
        )
        .await
        .unwrap();
    assert_eq!(
        a.idempotency.begin(&sc, &r, t0 + 19).await.unwrap(),
        Begin::Replay(resp)
    );

    // A process that deregistered (a clean stop) frees its keys at once.
    let r2 = req("k2", "/v1/groups", b"{}");
    assert_eq!(
        b.idempotency.begin(&sc, &r2, t0 + 20).await.unwrap(),
        Begin::Execute
    );
    b.processes.deregister_process().await.unwrap();
    assert_eq!(
        a.idempotency.begin(&sc, &r2, t0 + 20).await.unwrap(),
        Begin::Execute
    );

    // A record without an owner (a store no process owns) keeps its lease.
    let r3 = req("k3", "/v1/groups", b"{}");
    assert_eq!(
        t.stores.idempotency.begin(&sc, &r3, t0 + 20).await.unwrap(),
        Begin::Execute
    );
    assert_eq!(
        a.idempotency.begin(&sc, &r3, t0 + 299).await.unwrap(),
        Begin::InFlight
    );
    assert_eq!(
        a.idempotency.begin(&sc, &r3, t0 + 320).await.unwrap(),
        Begin::Execute
    );
}
on_both!(a_dead_processs_in_flight_key_executes_elsewhere);

/// The purge deletes what the 24-hour replay window no longer needs:
/// expired answers, in-flight records older than the window whose request
/// cannot be running (no owner, or a dead one), and old creation keys;
/// never an answer still replayed, a young in-flight record, or one whose
/// owner is alive.
async fn the_purge_deletes_only_what_the_window_no_longer_needs(t: TestDb) {
    let day = 86_400;
    let base = 1_000_000;
    let now = base + day + 10;
    let s = &t.stores;
    let (_, sc) = partner(s, 1).await;
    let (live, _) = process(&t, 7);
    live.processes.register_process(base * 1000).await.unwrap();
    let (dead, _) = process(&t, 8);
    let answer = StoredResponse {
        status: 201,
        headers: vec![],
        body: b"{}".to_vec(),
    };
    let begin = async |store: &store_diesel::Stores, key: &str, at: i64| {
        let r = req(key, "/v1/groups", key.as_bytes());
        assert_eq!(
            store.idempotency.begin(&sc, &r, at).await.unwrap(),
            Begin::Execute
        );
        r
    };
    let r = begin(s, "done-old", base).await;
    s.idempotency
        .complete(
            &sc,
            Completion {
                request: &r,
                response: &answer,
                now: base + 1,
            },
        )
        .await
        .unwrap();
    let r = begin(s, "done-new", base + day).await;
    s.idempotency
        .complete(
            &sc,
            Completion {
                request: &r,
                response: &answer,
                now: base + day,
            },
        )
        .await
        .unwrap();
    let live_flight = begin(&live, "live-flight", base).await;
    begin(&dead, "dead-flight", base).await;
    begin(s, "orphan-flight", base).await;
    begin(s, "young-flight", now - 100).await;
    let old = crate::groups::group(1, &sc, "old.example", base);
    let new = crate::groups::group(2, &sc, "new.example", base + day);
    for (g, key) in [(&old, "ck-old"), (&new, "ck-new")] {
        assert!(
            s.groups
                .insert_group_once(g, key, 0)
                .await
                .unwrap()
                .is_none()
        );
    }
    live.processes.heartbeat(now * 1000).await.unwrap();

    assert_eq!(s.idempotency.purge_idempotency(now).await.unwrap(), 4);
    assert_eq!(
        testkit::db::texts(
            &t.db,
            "SELECT idem_key AS value FROM idempotency ORDER BY idem_key"
        )
        .await,
        ["done-new", "live-flight", "young-flight"]
    );
    assert_eq!(
        testkit::db::texts(&t.db, "SELECT idem_key AS value FROM creation_keys").await,
        ["ck-new"]
    );
    // The live owner's request completes as if nothing happened.
    live.idempotency
        .complete(
            &sc,
            Completion {
                request: &live_flight,
                response: &answer,
                now,
            },
        )
        .await
        .unwrap();
    // A second purge finds nothing more.
    assert_eq!(s.idempotency.purge_idempotency(now).await.unwrap(), 0);
}
on_both!(the_purge_deletes_only_what_the_window_no_longer_needs);

/// A group's creation key binds within the replay window — a second
/// creation under it makes nothing and finds the first group — and one
/// from before the window is taken over by the next creation, in the
/// same statement that claims a new key. Another partner's key of the
/// same name is its own.
async fn a_creation_key_binds_within_the_window_and_is_taken_over_after_it(t: TestDb) {
    let s = &t.stores;
    let (_, sc) = partner(s, 1).await;
    let (_, other) = partner(s, 2).await;
    let day = 86_400;
    let first = crate::groups::group(1, &sc, "first.example", 1_000);
    let again = crate::groups::group(2, &sc, "again.example", 2_000);
    let later = crate::groups::group(3, &sc, "later.example", 1_000 + day + 1);
    let theirs = crate::groups::group(4, &other, "theirs.example", 2_000);
    let key_of = async || {
        testkit::db::texts(
            &t.db,
            "SELECT resource_id AS value FROM creation_keys ORDER BY partner_id",
        )
        .await
    };
    let once = async |g: &domain::group::Group, since: i64| {
        s.groups.insert_group_once(g, "k", since).await.unwrap()
    };

    assert!(once(&first, 0).await.is_none());
    let found = once(&again, 1_000).await;
    assert_eq!(found.map(|g| g.id), Some(first.id.clone()));
    assert!(
        s.groups.find_group(&again.id).await.is_err(),
        "nothing made"
    );
    assert!(once(&theirs, 0).await.is_none());
    assert_eq!(
        key_of().await,
        [first.id.to_string(), theirs.id.to_string()]
    );

    // The window now starts after the first creation: its key no longer binds.
    let since = 1_001;
    assert!(once(&later, since).await.is_none());
    assert_eq!(
        key_of().await,
        [later.id.to_string(), theirs.id.to_string()]
    );
    assert_eq!(s.groups.find_group(&later.id).await.unwrap().id, later.id);
    let found = once(&again, since).await;
    assert_eq!(found.map(|g| g.id), Some(later.id));
}
on_both!(a_creation_key_binds_within_the_window_and_is_taken_over_after_it);
