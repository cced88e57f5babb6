//! The job table: claimed by one worker at a time (across processes on
//! PostgreSQL), resumed when a lease runs out (a crashed worker), retried,
//! and completed together with the events it announces.

use std::collections::HashSet;

use domain::event::DeliveryState;
use domain::ids::{GroupId, JobId};
use domain::job::{JobKind, JobState, NewJob};
use domain::scope::Scope;
use domain::store::StoreError;

use crate::harness::{TestDb, partner};
use crate::on_both;
use crate::outbox::event;

fn job(n: u32, scope: &Scope, kind: JobKind, at_ms: i64) -> NewJob {
    let [a, b, c, d] = n.to_be_bytes();
    NewJob {
        id: JobId::from_bytes([0, 1, a, b, c, d]),
        scope: scope.clone(),
        kind,
        group_id: Some(GroupId::from_bytes([0, 0, 0, 0, 0, 1])),
        payload: format!("{{\"n\":{n}}}"),
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
            .fail_job(&j.id, 1, Some(1_200), "late")
            .await
            .unwrap()
    );
    assert!(!s.jobs.complete_job(&j.id, 1, &[], None).await.unwrap());
    assert!(
        s.jobs
            .fail_job(&j.id, 2, Some(5_000), "boom")
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
            .complete_job(&j.id, 3, std::slice::from_ref(&e), None)
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
    assert!(!s.jobs.complete_job(&j.id, 3, &[], None).await.unwrap());
    assert!(!s.jobs.fail_job(&j.id, 3, Some(1), "late").await.unwrap());
    assert!(
        s.jobs
            .fail_job(&p.job.id, p.attempts, None, "gave up")
            .await
            .unwrap()
    );
    assert!(
        s.jobs
            .claim_job(&[JobKind::PriceOnPlan], 99_000, 100)
            .await
            .unwrap()
            .is_none()
    );
    assert!(matches!(
        s.jobs
            .complete_job(&JobId::from_bytes([9; 6]), 1, &[], None)
            .await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        s.jobs
            .fail_job(&JobId::from_bytes([9; 6]), 1, None, "x")
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
