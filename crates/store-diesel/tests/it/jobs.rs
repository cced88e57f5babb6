//! The job table: claimed by one worker at a time (across processes on
//! PostgreSQL), resumed when a lease runs out or its process is found dead
//! (a crashed worker), retried, and completed together with the events it
//! announces.

use std::collections::HashSet;

use domain::document::JobPayload;
use domain::document::job::CensusCounts;
use domain::event::DeliveryState;
use domain::idempotency::Begin;
use domain::ids::{GroupId, JobId};
use domain::job::{JobClaim, JobKind, JobState, NewJob};
use domain::scope::Scope;
use domain::store::StoreError;

use crate::harness::{TestDb, partner, process};
use crate::idempotency::req;
use crate::on_both;
use crate::outbox::event;

/// The claim of `id` under its attempt `attempt`.
pub fn claim(id: &JobId, attempt: u32) -> JobClaim {
    JobClaim {
        id: id.clone(),
        attempt,
    }
}

/// A payload of `kind`, told apart by `n`.
pub fn payload(kind: JobKind, n: u32) -> JobPayload {
    match kind {
        JobKind::MarketComparison => JobPayload::MarketComparison(CensusCounts {
            received: u64::from(n),
            accepted: u64::from(n),
            error_count: 0,
        }),
        JobKind::PriceOnPlan => {
            let [a, b, c, d] = n.to_be_bytes();
            let quote = domain::ids::QuoteId::from_bytes([0, 3, a, b, c, d]);
            JobPayload::from_stored(
                kind,
                &domain::document::fixtures::legacy_pricing_payload(&quote),
            )
            .unwrap()
        }
        JobKind::Email => JobPayload::Email(domain::document::job::EmailDue {
            kind: "portal_invite".to_owned(),
            sealed: format!("sealed-{n}"),
        }),
        JobKind::BusinessVerification => {
            JobPayload::BusinessVerification(domain::document::job::VerificationDue {
                enrollment_id: domain::ids::EnrollmentId::from_bytes([0, 4, 0, 0, 0, 1]),
                ein: format!("{n:09}"),
                requested_at: i64::from(n),
            })
        }
    }
}

fn job(n: u32, scope: &Scope, kind: JobKind, at_ms: i64) -> NewJob {
    let [a, b, c, d] = n.to_be_bytes();
    NewJob {
        id: JobId::from_bytes([0, 1, a, b, c, d]),
        scope: scope.clone(),
        group_id: Some(GroupId::from_bytes([0, 0, 0, 0, 0, 1])),
        payload: payload(kind, n),
        run_after_ms: at_ms,
    }
}

async fn jobs_are_leased_resumed_retried_and_completed(t: TestDb) {
    let s = &t.stores;
    let (_, sc) = partner(s, 1).await;
    let j = job(1, &sc, JobKind::MarketComparison, 1_000);
    s.jobs.enqueue(&j).await.unwrap();
    s.jobs
        .enqueue(&job(2, &sc, JobKind::PriceOnPlan, 1_000))
        .await
        .unwrap();
    assert!(matches!(
        s.jobs.enqueue(&j).await,
        Err(StoreError::Conflict(_))
    ));
    assert!(
        s.jobs
            .claim_job(&[JobKind::MarketComparison], 999, 100)
            .await
            .unwrap()
            .is_none()
    );
    let c = s
        .jobs
        .claim_job(&[JobKind::MarketComparison], 1_000, 100)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (c.job.clone(), c.state, c.attempts, c.locked_until_ms),
        (j.clone(), JobState::Running, 1, Some(1_100))
    );
    assert!(
        s.jobs
            .claim_job(&[JobKind::MarketComparison], 1_050, 100)
            .await
            .unwrap()
            .is_none()
    );
    // The worker died: after the lease, another claims it (attempt 2).
    let c2 = s
        .jobs
        .claim_job(&[JobKind::MarketComparison], 1_100, 100)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((c2.job.id.clone(), c2.attempts), (j.id.clone(), 2));
    // The first claim's worker wakes up late: its lease is gone, so it can
    // neither fail nor complete the job.
    assert!(
        !s.jobs
            .fail_job(&claim(&j.id, 1), Some(1_200), "late")
            .await
            .unwrap()
    );
    assert!(
        !s.jobs
            .complete_job(&claim(&j.id, 1), &[], None)
            .await
            .unwrap()
    );
    assert!(
        s.jobs
            .fail_job(&claim(&j.id, 2), Some(5_000), "boom")
            .await
            .unwrap()
    );
    assert!(
        s.jobs
            .claim_job(&[JobKind::MarketComparison], 4_999, 100)
            .await
            .unwrap()
            .is_none()
    );
    let open = s
        .jobs
        .open_job(
            &sc,
            &GroupId::from_bytes([0, 0, 0, 0, 0, 1]),
            JobKind::MarketComparison,
        )
        .await
        .unwrap();
    assert_eq!(open.map(|o| o.state), Some(JobState::Queued));
    let c3 = s
        .jobs
        .claim_job(&[JobKind::MarketComparison], 5_000, 100)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(c3.attempts, 3);
    let e = event(7, &sc, 5);
    assert!(
        s.jobs
            .complete_job(&claim(&j.id, 3), std::slice::from_ref(&e), None)
            .await
            .unwrap()
    );
    assert_eq!(
        s.outbox.event(&sc, &e.id).await.unwrap().state,
        DeliveryState::Pending
    );
    assert!(
        s.jobs
            .open_job(
                &sc,
                &GroupId::from_bytes([0, 0, 0, 0, 0, 1]),
                JobKind::MarketComparison
            )
            .await
            .unwrap()
            .is_none()
    );
    // The other kind is untouched; failing for good ends it.
    let p = s
        .jobs
        .claim_job(&[JobKind::PriceOnPlan], 9_000, 100)
        .await
        .unwrap()
        .unwrap();
    // A stale completion after the job is done changes nothing.
    assert!(
        !s.jobs
            .complete_job(&claim(&j.id, 3), &[], None)
            .await
            .unwrap()
    );
    assert!(
        !s.jobs
            .fail_job(&claim(&j.id, 3), Some(1), "late")
            .await
            .unwrap()
    );
    assert!(s.jobs.fail_job(&p.claim(), None, "gave up").await.unwrap());
    assert!(
        s.jobs
            .claim_job(&[JobKind::PriceOnPlan], 99_000, 100)
            .await
            .unwrap()
            .is_none()
    );
    assert!(matches!(
        s.jobs
            .complete_job(&claim(&JobId::from_bytes([9; 6]), 1), &[], None)
            .await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        s.jobs
            .fail_job(&claim(&JobId::from_bytes([9; 6]), 1), None, "x")
            .await,
        Err(StoreError::NotFound)
    ));
}
on_both!(jobs_are_leased_resumed_retried_and_completed);

async fn concurrent_workers_never_share_a_job(t: TestDb) {
    let (_, sc) = partner(&t.stores, 1).await;
    for n in 0..60 {
        t.stores
            .jobs
            .enqueue(&job(n, &sc, JobKind::MarketComparison, 0))
            .await
            .unwrap();
    }
    let pools = [t.stores.clone(), t.second_process()];
    let mut tasks = Vec::new();
    for p in pools {
        for _ in 0..3 {
            let jobs = p.jobs.clone();
            tasks.push(tokio::spawn(async move {
                let mut mine = Vec::new();
                while let Some(j) = jobs
                    .claim_job(&[JobKind::MarketComparison], 1_000, 60_000)
                    .await
                    .unwrap()
                {
                    mine.push(j.job.id);
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
    assert_eq!((all.len(), distinct.len()), (60, 60));
}
on_both!(concurrent_workers_never_share_a_job);

/// A job claimed by a process whose heartbeat went silent, or that
/// deregistered, is claimed by another at once, well before its lease ends;
/// a live process's claim, and a claim without an owner, hold their lease.
async fn a_dead_processs_job_is_claimed_at_once(t: TestDb) {
    let (_, sc) = partner(&t.stores, 1).await;
    let (a, _) = process(&t, 0xa);
    let (b, _) = process(&t, 0xb);
    let kinds = [JobKind::MarketComparison];
    let t0: i64 = 1_800_000_000_000;
    let j = job(1, &sc, JobKind::MarketComparison, t0);
    a.jobs.enqueue(&j).await.unwrap();
    a.processes.register_process(t0).await.unwrap();
    let c1 = a.jobs.claim_job(&kinds, t0, 60_000).await.unwrap().unwrap();
    assert_eq!(c1.attempts, 1);
    assert!(
        b.jobs
            .claim_job(&kinds, t0 + 5_000, 60_000)
            .await
            .unwrap()
            .is_none()
    );
    // 11 s without a heartbeat: the claim is abandoned, 49 s before its
    // lease ends.
    let c2 = b
        .jobs
        .claim_job(&kinds, t0 + 11_000, 60_000)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((c2.job.id.clone(), c2.attempts), (j.id.clone(), 2));
    b.processes.register_process(t0 + 11_000).await.unwrap();
    assert!(
        !a.jobs
            .fail_job(&claim(&j.id, 1), Some(t0), "late")
            .await
            .unwrap()
    );
    assert!(
        a.jobs
            .claim_job(&kinds, t0 + 12_000, 60_000)
            .await
            .unwrap()
            .is_none()
    );
    // A clean stop frees the claim at once.
    b.processes.deregister_process().await.unwrap();
    let c3 = a
        .jobs
        .claim_job(&kinds, t0 + 12_000, 60_000)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(c3.attempts, 3);
    assert!(
        a.jobs
            .complete_job(&claim(&j.id, 3), &[], None)
            .await
            .unwrap()
    );

    // A claim without an owner holds its lease.
    let j2 = job(2, &sc, JobKind::MarketComparison, t0);
    t.stores.jobs.enqueue(&j2).await.unwrap();
    let free = t
        .stores
        .jobs
        .claim_job(&kinds, t0 + 12_000, 60_000)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(free.job.id, j2.id);
    assert!(
        a.jobs
            .claim_job(&kinds, t0 + 71_999, 60_000)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        a.jobs
            .claim_job(&kinds, t0 + 72_000, 60_000)
            .await
            .unwrap()
            .is_some()
    );
}
on_both!(a_dead_processs_job_is_claimed_at_once);

/// A process that registers on SQLite, which one process serves, frees at
/// once every in-flight key and job claim earlier processes left, however
/// fresh their heartbeat; on PostgreSQL, which several share, it frees
/// nothing of a live process.
async fn a_restart_on_sqlite_frees_what_the_last_process_left(t: TestDb) {
    let (_, sc) = partner(&t.stores, 1).await;
    let (before, _) = process(&t, 0xa);
    let (after, _) = process(&t, 0xb);
    let kinds = [JobKind::MarketComparison];
    let t0: i64 = 1_800_000_000;
    let r = req("k", "/v1/groups", b"{}");
    before
        .jobs
        .enqueue(&job(1, &sc, JobKind::MarketComparison, 0))
        .await
        .unwrap();
    before.processes.register_process(t0 * 1_000).await.unwrap();
    assert_eq!(
        before.idempotency.begin(&sc, &r, t0).await.unwrap(),
        Begin::Execute
    );
    assert!(
        before
            .jobs
            .claim_job(&kinds, t0 * 1_000, 60_000)
            .await
            .unwrap()
            .is_some()
    );
    // A key and a claim without an owner (written before owners were
    // recorded) are freed on SQLite as well.
    let unowned = req("u", "/v1/groups", b"{}");
    assert_eq!(
        t.stores.idempotency.begin(&sc, &unowned, t0).await.unwrap(),
        Begin::Execute
    );

    // The next process starts a second later.
    after
        .processes
        .register_process(t0 * 1_000 + 1_000)
        .await
        .unwrap();
    let key = after.idempotency.begin(&sc, &r, t0 + 1).await.unwrap();
    let old = after
        .idempotency
        .begin(&sc, &unowned, t0 + 1)
        .await
        .unwrap();
    let claim = after
        .jobs
        .claim_job(&kinds, t0 * 1_000 + 1_000, 60_000)
        .await
        .unwrap();
    match t.db.backend() {
        "sqlite" => {
            assert_eq!((key, old), (Begin::Execute, Begin::Execute));
            assert_eq!(claim.map(|c| c.attempts), Some(2));
        }
        _ => {
            assert_eq!((key, old), (Begin::InFlight, Begin::InFlight));
            assert!(claim.is_none());
        }
    }
}
on_both!(a_restart_on_sqlite_frees_what_the_last_process_left);
