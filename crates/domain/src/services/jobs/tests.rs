//! Unit tests of the job worker's single step against the port mocks: the claim with its lease, completion with the handler's events, retries with exponential backoff, the final failure, and store failures.

use std::sync::Arc;

use mockall::Sequence;

use super::*;
use crate::document::EventData;
use crate::document::JobPayload;
use crate::event::EventType;
use crate::ids::{EventId, GroupId, PartnerId};
use crate::job::{JobState, NewJob};
use crate::mode::Mode;
use crate::ports::MockClock;
use crate::scope::Scope;
use crate::store::{MockJobStore, StoreError};

const NOW_MS: i64 = 1_795_000_000_500;

const KINDS: [JobKind; 1] = [JobKind::MarketComparison];

fn clock() -> MockClock {
    let mut c = MockClock::new();
    c.expect_now_ms().return_const(NOW_MS);
    c
}

fn scope() -> Scope {
    Scope::new(PartnerId::from_bytes([0xaa; 6]), Mode::Test)
}

fn job_id() -> JobId {
    JobId::from_bytes([0x0b; 6])
}

fn claimed(attempts: u32) -> Job {
    Job {
        job: NewJob {
            id: job_id(),
            scope: scope(),
            group_id: Some(GroupId::from_bytes([0x42; 6])),
            payload: JobPayload::from_stored(
                JobKind::MarketComparison,
                r#"{"received":1,"accepted":1,"errorCount":0}"#,
            )
            .unwrap(),
            run_after_ms: NOW_MS - 10_000,
        },
        state: JobState::Running,
        attempts,
        locked_until_ms: Some(NOW_MS + JOB_LEASE_MS),
    }
}

fn events() -> Vec<NewEvent> {
    vec![NewEvent {
        id: EventId::from_bytes([0xe1; 6]),
        scope: scope(),
        created_at: NOW_MS / 1000,
        data: EventData::from_stored(
            EventType::CensusProcessed,
            r#"{"groupId": "grp_424242424242", "received": 1, "accepted": 1, "memberCount": 1, "errorCount": 0}"#,
        )
        .unwrap(),
    }]
}

/// A store that hands out `job` once, for `KINDS` at `NOW_MS` with the
/// worker's lease.
fn store_claiming(job: Option<Job>) -> MockJobStore {
    let mut s = MockJobStore::new();
    s.expect_claim_job()
        .withf(|kinds, now, lease| kinds == KINDS && *now == NOW_MS && *lease == JOB_LEASE_MS)
        .times(1)
        .return_once(move |_, _, _| Ok(job));
    s
}

fn failing_handler(message: &'static str) -> MockJobHandler {
    let mut h = MockJobHandler::new();
    h.expect_run()
        .times(1)
        .returning(move |_| Err(message.to_owned()));
    h
}

fn worker(store: MockJobStore, clock: MockClock) -> Worker {
    Worker::new(Arc::new(store), Arc::new(clock))
}

#[tokio::test]
async fn nothing_claimed_is_idle_and_runs_nothing() {
    let mut store = store_claiming(None);
    store.expect_complete_job().never();
    store.expect_fail_job().never();
    let mut handler = MockJobHandler::new();
    handler.expect_run().never();

    let step = worker(store, clock()).step(&KINDS, &handler).await.unwrap();
    assert_eq!(step, Step::Idle);
}

#[tokio::test]
async fn the_claim_asks_for_the_given_kinds_at_the_clock_time_with_the_lease() {
    let kinds = [JobKind::PriceOnPlan, JobKind::MarketComparison];
    let mut store = MockJobStore::new();
    store
        .expect_claim_job()
        .withf(move |k, now, lease| k == kinds && *now == NOW_MS && *lease == 60_000)
        .times(1)
        .returning(|_, _, _| Ok(None));
    let handler = MockJobHandler::new();
    let step = worker(store, clock()).step(&kinds, &handler).await.unwrap();
    assert_eq!(step, Step::Idle);
    assert_eq!(JOB_LEASE_MS, 60_000);
}

#[tokio::test]
async fn a_successful_run_completes_the_job_with_the_handlers_events() {
    let mut seq = Sequence::new();
    let mut store = MockJobStore::new();
    store
        .expect_claim_job()
        .withf(|kinds, now, lease| kinds == KINDS && *now == NOW_MS && *lease == JOB_LEASE_MS)
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _, _| Ok(Some(claimed(1))));
    let mut handler = MockJobHandler::new();
    handler
        .expect_run()
        .withf(|job| *job == claimed(1))
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_| Ok(events().into()));
    store
        .expect_complete_job()
        .withf(|claim, evs, result| {
            claim.id == job_id()
                && claim.attempt == 1
                && evs == events().as_slice()
                && result.is_none()
        })
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _, _| Ok(true));
    store.expect_fail_job().never();

    let step = worker(store, clock()).step(&KINDS, &handler).await.unwrap();
    assert_eq!(step, Step::Completed(job_id()));
}

#[tokio::test]
async fn a_job_superseded_meanwhile_still_counts_as_completed() {
    let mut store = store_claiming(Some(claimed(2)));
    store
        .expect_complete_job()
        .withf(|claim, evs, _| claim.id == job_id() && evs.is_empty())
        .times(1)
        .returning(|_, _, _| Ok(false));
    store.expect_fail_job().never();
    let mut handler = MockJobHandler::new();
    handler
        .expect_run()
        .times(1)
        .returning(|_| Ok(Vec::new().into()));

    let step = worker(store, clock()).step(&KINDS, &handler).await.unwrap();
    assert_eq!(step, Step::Completed(job_id()));
}

#[tokio::test]
async fn a_failure_before_the_last_attempt_retries_after_1_2_4_and_8_seconds() {
    for (attempts, backoff_ms) in [(1_u32, 1_000_i64), (2, 2_000), (3, 4_000), (4, 8_000)] {
        let mut seq = Sequence::new();
        let mut store = MockJobStore::new();
        store
            .expect_claim_job()
            .times(1)
            .in_sequence(&mut seq)
            .return_once(move |_, _, _| Ok(Some(claimed(attempts))));
        let mut handler = MockJobHandler::new();
        handler
            .expect_run()
            .times(1)
            .in_sequence(&mut seq)
            .returning(|_| Err("rate card unavailable".to_owned()));
        store
            .expect_fail_job()
            .withf(move |claim, retry, msg| {
                claim.id == job_id()
                    && claim.attempt == attempts
                    && *retry == Some(NOW_MS + backoff_ms)
                    && msg == "rate card unavailable"
            })
            .times(1)
            .in_sequence(&mut seq)
            .returning(|_, _, _| Ok(true));
        store.expect_complete_job().never();

        let step = worker(store, clock()).step(&KINDS, &handler).await.unwrap();
        assert_eq!(step, Step::Retrying(job_id()), "attempt {attempts}");
    }
}

#[tokio::test]
async fn the_retry_time_is_counted_from_the_clock_after_the_run() {
    // The handler may run for a while: the backoff starts when it fails.
    let mut seq = Sequence::new();
    let mut c = MockClock::new();
    c.expect_now_ms()
        .times(1)
        .in_sequence(&mut seq)
        .return_const(NOW_MS);
    c.expect_now_ms()
        .times(1)
        .in_sequence(&mut seq)
        .return_const(NOW_MS + 30_000);
    let mut store = store_claiming(Some(claimed(3)));
    store
        .expect_fail_job()
        .withf(|_, retry, _| *retry == Some(NOW_MS + 30_000 + 4_000))
        .times(1)
        .returning(|_, _, _| Ok(true));
    let step = worker(store, c)
        .step(&KINDS, &failing_handler("slow failure"))
        .await
        .unwrap();
    assert_eq!(step, Step::Retrying(job_id()));
}

#[tokio::test]
async fn a_failure_on_the_last_attempt_marks_the_job_failed() {
    assert_eq!(MAX_JOB_ATTEMPTS, 5);
    let mut store = store_claiming(Some(claimed(MAX_JOB_ATTEMPTS)));
    store
        .expect_fail_job()
        .withf(|claim, retry, msg| claim.id == job_id() && retry.is_none() && msg == "gave up")
        .times(1)
        .returning(|_, _, _| Ok(true));
    store.expect_complete_job().never();

    let step = worker(store, clock())
        .step(&KINDS, &failing_handler("gave up"))
        .await
        .unwrap();
    assert_eq!(step, Step::Failed(job_id()));
}

#[tokio::test]
async fn a_job_claimed_past_its_attempts_fails_for_good() {
    // A lease that ran out can hand a job over once more than planned.
    let mut store = store_claiming(Some(claimed(MAX_JOB_ATTEMPTS + 1)));
    store
        .expect_fail_job()
        .withf(|_, retry, _| retry.is_none())
        .times(1)
        .returning(|_, _, _| Ok(true));
    let step = worker(store, clock())
        .step(&KINDS, &failing_handler("still broken"))
        .await
        .unwrap();
    assert_eq!(step, Step::Failed(job_id()));
}

#[tokio::test]
async fn a_claim_failure_propagates_and_runs_nothing() {
    let mut store = MockJobStore::new();
    store.expect_claim_job().times(1).returning(|_, _, _| {
        Err(StoreError::Unavailable(Box::new(std::io::Error::other(
            "connection refused",
        ))))
    });
    let mut handler = MockJobHandler::new();
    handler.expect_run().never();
    let err = worker(store, clock())
        .step(&KINDS, &handler)
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::Unavailable(_)), "{err:?}");
}

#[tokio::test]
async fn a_completion_failure_propagates() {
    let mut store = store_claiming(Some(claimed(1)));
    store
        .expect_complete_job()
        .times(1)
        .returning(|_, _, _| Err(StoreError::NotFound));
    store.expect_fail_job().never();
    let mut handler = MockJobHandler::new();
    handler
        .expect_run()
        .times(1)
        .returning(|_| Ok(events().into()));
    let err = worker(store, clock())
        .step(&KINDS, &handler)
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::NotFound), "{err:?}");
}

#[tokio::test]
async fn a_failure_to_record_a_failure_propagates() {
    for attempts in [1, MAX_JOB_ATTEMPTS] {
        let mut store = store_claiming(Some(claimed(attempts)));
        store
            .expect_fail_job()
            .times(1)
            .returning(|_, _, _| Err(StoreError::Internal(Box::new(std::io::Error::other("x")))));
        let err = worker(store, clock())
            .step(&KINDS, &failing_handler("boom"))
            .await
            .unwrap_err();
        assert!(
            matches!(err, ServiceError::Internal(_)),
            "{attempts}: {err:?}"
        );
    }
}
