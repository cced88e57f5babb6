//! Unit tests of the census service against the port mocks: the scoped group check, per-row validation and the broker date-of-birth rule, in-write duplicates, the all-invalid and size limits, dry runs, and the single store write with its fresh ids, rating digest and market-comparison job.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use mockall::Sequence;
use pricing_core::census::{Dependent, Relationship};
use time::macros::date;

use super::*;
use crate::census::{CensusOutcome, rating_digest};
use crate::document::JobPayload;
use crate::group::{Group, GroupStatus};
use crate::ids::{JobId, MemberId, PartnerId};
use crate::mode::Mode;
use crate::ports::{JobWaker, MockClock, MockEntropy, MockJobWaker, NoWorker};
use crate::store::{MockCensusStore, MockGroupStore, MockJobStore, MockQuoteStore, StoreError};

const NOW_MS: i64 = 1_795_000_789_321;
const NOW: i64 = 1_795_000_789;

const ANY: CensusRules = CensusRules { require_dob: false };
const BROKER: CensusRules = CensusRules { require_dob: true };

fn clock() -> MockClock {
    let mut c = MockClock::new();
    c.expect_now_ms().return_const(NOW_MS);
    c
}

/// Entropy that fills each buffer with a big-endian counter starting at 1,
/// so ids are `…000000000001`, `…000000000002`, … and never repeat.
fn sequential_entropy() -> MockEntropy {
    let mut e = MockEntropy::new();
    let mut n = 0u64;
    e.expect_fill().returning(move |buf| {
        n += 1;
        buf.fill(0);
        let bytes = n.to_be_bytes();
        let len = buf.len().min(bytes.len());
        let start = buf.len() - len;
        buf[start..].copy_from_slice(&bytes[bytes.len() - len..]);
    });
    e
}

fn scope() -> Scope {
    Scope::new(PartnerId::from_bytes([0xaa; 6]), Mode::Test)
}

fn group_id() -> GroupId {
    GroupId::from_bytes([0x42; 6])
}

fn group() -> Group {
    Group {
        id: group_id(),
        partner_id: scope().partner,
        mode: scope().mode,
        status: GroupStatus::Created,
        company_name: "Acme".to_owned(),
        domain: "acme.com".to_owned(),
        external_id: None,
        address: None,
        contact: None,
        current_coverage: None,
        census_member_count: 0,
        rating_digest: None,
        company_state: None,
        created_at: NOW - 3_600,
        updated_at: NOW - 3_600,
    }
}

/// A group store where the scope holds the group, read exactly once.
fn groups_with_group() -> MockGroupStore {
    let mut g = MockGroupStore::new();
    g.expect_group()
        .withf(|s, id| *s == scope() && *id == group_id())
        .times(1)
        .returning(|_, _| Ok(group()));
    g
}

/// A valid member.
fn member(ext: &str) -> CensusMember {
    CensusMember::new(ext, date!(1980 - 01 - 01), "60601")
}

fn with_email(ext: &str, email: &str) -> CensusMember {
    let mut m = member(ext);
    m.email = Some(email.to_owned());
    m
}

fn with_zip(ext: &str, zip: &str) -> CensusMember {
    let mut m = member(ext);
    zip.clone_into(&mut m.zip);
    m
}

/// A member who sends an age instead of a date of birth.
fn age_only(ext: &str) -> CensusMember {
    let mut m = member(ext);
    m.dob = None;
    m.age = Some(44);
    m
}

fn outcome(member_count: u32) -> CensusOutcome {
    CensusOutcome { member_count }
}

fn service(
    census: MockCensusStore,
    groups: MockGroupStore,
    clock: MockClock,
    entropy: MockEntropy,
) -> Census {
    over(census, groups, clock, entropy, NoWorker)
}

/// The service over these ports (no quote or job is touched).
fn over(
    census: MockCensusStore,
    groups: MockGroupStore,
    clock: MockClock,
    entropy: MockEntropy,
    waker: impl JobWaker + 'static,
) -> Census {
    Census::new(RecordPorts {
        groups: Arc::new(groups),
        census: Arc::new(census),
        quotes: Arc::new(MockQuoteStore::new()),
        jobs: Arc::new(MockJobStore::new()),
        clock: Arc::new(clock),
        entropy: Arc::new(entropy),
        waker: Arc::new(waker),
    })
}

/// A census store expecting exactly one write in `scope()`, recording it
/// and answering `member_count`.
fn recording_census(member_count: u32) -> (MockCensusStore, Arc<Mutex<Vec<CensusWrite>>>) {
    let writes: Arc<Mutex<Vec<CensusWrite>>> = Arc::default();
    let sink = Arc::clone(&writes);
    let mut c = MockCensusStore::new();
    c.expect_replace_census()
        .withf(|s, _| *s == scope())
        .times(1)
        .returning(move |_, w| {
            sink.lock().unwrap().push(w.clone());
            Ok(outcome(member_count))
        });
    (c, writes)
}

/// A census store that must not be written.
fn untouched_census() -> MockCensusStore {
    let mut c = MockCensusStore::new();
    c.expect_replace_census().never();
    c
}

fn only_write(writes: &Arc<Mutex<Vec<CensusWrite>>>) -> CensusWrite {
    let writes = writes.lock().unwrap();
    assert_eq!(writes.len(), 1, "exactly one store write");
    writes[0].clone()
}

fn payload(write: &CensusWrite) -> serde_json::Value {
    match &write.job.as_ref().unwrap().payload {
        JobPayload::MarketComparison(counts) => serde_json::to_value(counts).unwrap(),
        other => panic!("not a market comparison: {other:?}"),
    }
}

fn fields(errors: &[FieldError]) -> Vec<&str> {
    errors.iter().map(|e| e.field.as_str()).collect()
}

fn ok_rows(members: &[CensusMember]) -> Vec<RowInput> {
    members.iter().cloned().map(Ok).collect()
}

fn down() -> StoreError {
    StoreError::Unavailable(Box::new(std::io::Error::other("connection refused")))
}

// ---------------------------------------------------------------------------
// The group in scope
// ---------------------------------------------------------------------------

#[tokio::test]
async fn a_group_outside_the_scope_is_not_found_and_nothing_is_written() {
    let all_valid = ok_rows(&[member("E1")]);
    let all_invalid = ok_rows(&[with_zip("E1", "bad")]);
    for rows in [all_valid, all_invalid, Vec::new()] {
        let mut groups = MockGroupStore::new();
        groups
            .expect_group()
            .withf(|s, id| *s == scope() && *id == group_id())
            .times(2)
            .returning(|_, _| Err(StoreError::NotFound));
        // Bare clock and entropy: nothing is minted or stamped.
        let svc = service(
            untouched_census(),
            groups,
            MockClock::new(),
            MockEntropy::new(),
        );
        // Once as a write, once as a dry run.
        for dry_run in [false, true] {
            let err = svc
                .replace(&scope(), &group_id(), rows.clone(), ANY, dry_run)
                .await;
            assert!(matches!(err, Err(ServiceError::NotFound)), "{err:?}");
        }
    }
}

#[tokio::test]
async fn a_store_failure_reading_the_group_propagates_without_a_write() {
    let mut groups = MockGroupStore::new();
    groups.expect_group().times(1).returning(|_, _| Err(down()));
    let svc = service(
        untouched_census(),
        groups,
        MockClock::new(),
        MockEntropy::new(),
    );
    let err = svc
        .replace(&scope(), &group_id(), ok_rows(&[member("E1")]), ANY, false)
        .await;
    assert!(matches!(err, Err(ServiceError::Unavailable(_))), "{err:?}");
}

// ---------------------------------------------------------------------------
// The write
// ---------------------------------------------------------------------------

/// The service with a waker expecting `wakes` calls.
fn waking(census: MockCensusStore, wakes: usize) -> Census {
    let mut waker = MockJobWaker::new();
    waker.expect_job_queued().times(wakes).return_const(());
    over(
        census,
        groups_with_group(),
        clock(),
        sequential_entropy(),
        waker,
    )
}

#[tokio::test]
async fn a_write_wakes_the_job_worker_once_after_it_commits() {
    let (census, writes) = recording_census(1);
    let svc = waking(census, 1);
    svc.replace(&scope(), &group_id(), ok_rows(&[member("E1")]), ANY, false)
        .await
        .unwrap();
    assert_eq!(writes.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_dry_run_an_invalid_write_or_a_failed_write_wakes_nobody() {
    let dry = waking(untouched_census(), 0);
    dry.replace(&scope(), &group_id(), ok_rows(&[member("E1")]), ANY, true)
        .await
        .unwrap();
    let invalid = waking(untouched_census(), 0);
    let err = invalid
        .replace(
            &scope(),
            &group_id(),
            ok_rows(&[with_zip("E1", "bad")]),
            ANY,
            false,
        )
        .await;
    assert!(matches!(err, Err(ServiceError::Invalid(_))), "{err:?}");
    let mut failing = MockCensusStore::new();
    failing
        .expect_replace_census()
        .times(1)
        .returning(|_, _| Err(down()));
    let err = waking(failing, 0)
        .replace(&scope(), &group_id(), ok_rows(&[member("E1")]), ANY, false)
        .await;
    assert!(matches!(err, Err(ServiceError::Unavailable(_))), "{err:?}");
}

#[tokio::test]
async fn valid_rows_are_written_once_with_fresh_ids_their_digest_and_a_market_comparison_job() {
    let members = vec![
        member("E1"),
        with_email("E2", "b@acme.com"),
        with_zip("E3", "94103"),
    ];
    let mut seq = Sequence::new();
    let mut groups = MockGroupStore::new();
    groups
        .expect_group()
        .withf(|s, id| *s == scope() && *id == group_id())
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _| Ok(group()));
    let writes: Arc<Mutex<Vec<CensusWrite>>> = Arc::default();
    let sink = Arc::clone(&writes);
    let mut census = MockCensusStore::new();
    census
        .expect_replace_census()
        .withf(|s, _| *s == scope())
        .times(1)
        .in_sequence(&mut seq)
        .returning(move |_, w| {
            sink.lock().unwrap().push(w.clone());
            Ok(outcome(3))
        });
    let svc = service(census, groups, clock(), sequential_entropy());

    let result = svc
        .replace(&scope(), &group_id(), ok_rows(&members), ANY, false)
        .await
        .unwrap();

    assert_eq!(
        result,
        CensusResult {
            group_id: group_id(),
            received: 3,
            accepted: 3,
            member_count: 3,
            errors: Vec::new(),
            dry_run: false,
        }
    );
    let write = only_write(&writes);
    let expected = CensusWrite {
        group_id: group_id(),
        rows: members.clone(),
        fresh_ids: vec![
            MemberId::parse("mem_000000000001").unwrap(),
            MemberId::parse("mem_000000000002").unwrap(),
            MemberId::parse("mem_000000000003").unwrap(),
        ],
        rating_digest: rating_digest(&members),
        job: Some(NewJob {
            id: JobId::parse("job_000000000004").unwrap(),
            scope: scope(),
            group_id: Some(group_id()),
            payload: write.job.as_ref().unwrap().payload.clone(),
            run_after_ms: NOW_MS,
        }),
        now: NOW,
    };
    assert_eq!(write, expected);
    assert_eq!(
        payload(&write),
        serde_json::json!({ "received": 3, "accepted": 3, "error_count": 0 })
    );
}

#[tokio::test]
async fn every_row_gets_its_own_fresh_member_id() {
    let members: Vec<CensusMember> = (0..300).map(|i| member(&format!("E{i}"))).collect();
    let (census, writes) = recording_census(300);
    let svc = service(census, groups_with_group(), clock(), sequential_entropy());

    let result = svc
        .replace(&scope(), &group_id(), ok_rows(&members), ANY, false)
        .await
        .unwrap();
    assert_eq!(result.accepted, 300);

    let write = only_write(&writes);
    assert_eq!(write.rows, members);
    assert_eq!(write.fresh_ids.len(), write.rows.len());
    let distinct: HashSet<&MemberId> = write.fresh_ids.iter().collect();
    assert_eq!(distinct.len(), 300, "no two rows share a fresh id");
    assert!(
        write
            .fresh_ids
            .iter()
            .all(|id| id.as_str().starts_with(MemberId::PREFIX))
    );
}

#[tokio::test]
async fn member_count_comes_from_the_store_outcome() {
    // Two rows accepted, but the store reports what the census holds after
    // the write; the service answers the store's count.
    let (census, _writes) = recording_census(7);
    let svc = service(census, groups_with_group(), clock(), sequential_entropy());
    let result = svc
        .replace(
            &scope(),
            &group_id(),
            ok_rows(&[member("E1"), member("E2")]),
            ANY,
            false,
        )
        .await
        .unwrap();
    assert_eq!(result.accepted, 2);
    assert_eq!(result.member_count, 7);
}

#[tokio::test]
async fn store_failures_of_the_write_propagate() {
    async fn write_failing_with(failure: StoreError) -> ServiceError {
        let mut census = MockCensusStore::new();
        census
            .expect_replace_census()
            .times(1)
            .return_once(move |_, _| Err(failure));
        let svc = service(census, groups_with_group(), clock(), sequential_entropy());
        svc.replace(&scope(), &group_id(), ok_rows(&[member("E1")]), ANY, false)
            .await
            .unwrap_err()
    }
    let err = write_failing_with(StoreError::NotFound).await;
    assert!(matches!(err, ServiceError::NotFound), "{err:?}");
    let err = write_failing_with(down()).await;
    assert!(matches!(err, ServiceError::Unavailable(_)), "{err:?}");
}

#[tokio::test]
async fn zero_rows_is_a_valid_write_that_empties_the_census() {
    let (census, writes) = recording_census(0);
    let svc = service(census, groups_with_group(), clock(), sequential_entropy());

    let result = svc
        .replace(&scope(), &group_id(), Vec::new(), BROKER, false)
        .await
        .unwrap();

    assert_eq!(
        result,
        CensusResult {
            group_id: group_id(),
            received: 0,
            accepted: 0,
            member_count: 0,
            errors: Vec::new(),
            dry_run: false,
        }
    );
    let write = only_write(&writes);
    assert!(write.rows.is_empty());
    assert!(write.fresh_ids.is_empty());
    assert_eq!(write.rating_digest, rating_digest(&[]));
    assert_eq!(write.now, NOW);
    let job = write.job.as_ref().unwrap();
    assert_eq!(job.kind(), crate::job::JobKind::MarketComparison);
    assert_eq!(job.group_id, Some(group_id()));
    assert_eq!(job.scope, scope());
    assert_eq!(
        payload(&write),
        serde_json::json!({ "received": 0, "accepted": 0, "error_count": 0 })
    );
}

// ---------------------------------------------------------------------------
// Row validation
// ---------------------------------------------------------------------------

#[tokio::test]
async fn invalid_rows_come_back_with_their_index_and_are_not_written() {
    let rows: Vec<RowInput> = vec![
        Ok(member("E0")),
        Ok(with_zip("E1", "6060")),
        Err(vec![FieldError::at(
            2,
            "members[2].nickname",
            "unknown field",
        )]),
        Ok(member("E3")),
        Ok(with_email("E4", "not an email")),
    ];
    let (census, writes) = recording_census(2);
    let svc = service(census, groups_with_group(), clock(), sequential_entropy());

    let result = svc
        .replace(&scope(), &group_id(), rows, ANY, false)
        .await
        .unwrap();

    assert_eq!(result.received, 5);
    assert_eq!(result.accepted, 2);
    assert_eq!(result.member_count, 2);
    assert_eq!(
        fields(&result.errors),
        vec!["members[1].zip", "members[2].nickname", "members[4].email"]
    );
    let indexes: Vec<Option<usize>> = result.errors.iter().map(|e| e.index).collect();
    assert_eq!(indexes, vec![Some(1), Some(2), Some(4)]);

    let write = only_write(&writes);
    assert_eq!(write.rows, vec![member("E0"), member("E3")]);
    assert_eq!(write.fresh_ids.len(), 2);
    assert_eq!(write.rating_digest, rating_digest(&write.rows));
    assert_eq!(
        payload(&write),
        serde_json::json!({ "received": 5, "accepted": 2, "error_count": 3 })
    );
}

#[tokio::test]
async fn one_row_can_fail_several_fields() {
    let mut bad = with_zip("  ", "ABCDE");
    bad.dob = None;
    bad.email = Some("x@".to_owned());
    let (census, _writes) = recording_census(1);
    let svc = service(census, groups_with_group(), clock(), sequential_entropy());
    let result = svc
        .replace(
            &scope(),
            &group_id(),
            vec![Ok(member("E0")), Ok(bad)],
            ANY,
            false,
        )
        .await
        .unwrap();
    assert_eq!(result.accepted, 1);
    assert_eq!(
        fields(&result.errors),
        vec![
            "members[1].zip",
            "members[1].dob",
            "members[1].email",
            "members[1].external_id",
        ]
    );
    assert!(result.errors.iter().all(|e| e.index == Some(1)));
}

#[tokio::test]
async fn the_broker_rule_rejects_age_only_rows() {
    let mut dependent_age_only = member("E2");
    dependent_age_only.dependents = Some(vec![Dependent {
        relationship: Relationship::Spouse,
        name: None,
        dob: None,
        age: Some(40),
        sex_at_birth: None,
    }]);
    let members = vec![age_only("E0"), member("E1"), dependent_age_only];
    let (census, writes) = recording_census(1);
    let svc = service(census, groups_with_group(), clock(), sequential_entropy());

    let result = svc
        .replace(&scope(), &group_id(), ok_rows(&members), BROKER, false)
        .await
        .unwrap();

    assert_eq!(result.received, 3);
    assert_eq!(result.accepted, 1);
    assert_eq!(
        fields(&result.errors),
        vec!["members[0].dob", "members[2].dependents[0].dob"]
    );
    assert!(
        result.errors[0].message.contains("age alone"),
        "{:?}",
        result.errors[0]
    );
    assert_eq!(only_write(&writes).rows, vec![member("E1")]);
}

#[tokio::test]
async fn without_the_broker_rule_age_only_rows_are_accepted() {
    let members = vec![age_only("E0"), member("E1")];
    let (census, writes) = recording_census(2);
    let svc = service(census, groups_with_group(), clock(), sequential_entropy());

    let result = svc
        .replace(&scope(), &group_id(), ok_rows(&members), ANY, false)
        .await
        .unwrap();

    assert_eq!(result.accepted, 2);
    assert!(result.errors.is_empty(), "{:?}", result.errors);
    assert_eq!(only_write(&writes).rows, members);
}

#[tokio::test]
async fn in_write_duplicates_are_errors_on_the_later_row() {
    let rows = ok_rows(&[
        with_email("E1", "a@acme.com"),
        member("E1"),
        with_email("E2", "A@ACME.com"),
        member("E3"),
        with_zip("E4", "1"),
    ]);
    let (census, writes) = recording_census(2);
    let svc = service(census, groups_with_group(), clock(), sequential_entropy());

    let result = svc
        .replace(&scope(), &group_id(), rows, ANY, false)
        .await
        .unwrap();

    assert_eq!(result.received, 5);
    assert_eq!(result.accepted, 2);
    // Sorted by row, although duplicates are found after field validation.
    assert_eq!(
        fields(&result.errors),
        vec![
            "members[1].external_id",
            "members[2].email",
            "members[4].zip"
        ]
    );
    let indexes: Vec<Option<usize>> = result.errors.iter().map(|e| e.index).collect();
    assert_eq!(indexes, vec![Some(1), Some(2), Some(4)]);
    let write = only_write(&writes);
    assert_eq!(
        write.rows,
        vec![with_email("E1", "a@acme.com"), member("E3")],
        "the first of each duplicate is kept"
    );
    assert_eq!(write.fresh_ids.len(), 2);
}

#[tokio::test]
async fn when_no_sent_row_is_valid_nothing_is_written_and_every_detail_is_returned() {
    let mut no_dob = member("E1");
    no_dob.dob = None;
    let rows: Vec<RowInput> = vec![
        Ok(with_zip("E0", "606")),
        Ok(no_dob),
        Err(vec![FieldError::at(
            2,
            "members[2].zip",
            "must be a string",
        )]),
        Ok(age_only("E3")),
    ];
    for dry_run in [false, true] {
        // Bare clock and entropy: no id is minted, no time is read.
        let svc = service(
            untouched_census(),
            groups_with_group(),
            MockClock::new(),
            MockEntropy::new(),
        );
        let err = svc
            .replace(&scope(), &group_id(), rows.clone(), BROKER, dry_run)
            .await
            .unwrap_err();
        let ServiceError::Invalid(details) = err else {
            panic!("expected Invalid, got {err:?}");
        };
        assert_eq!(
            fields(&details),
            vec![
                "members[0].zip",
                "members[1].dob",
                "members[2].zip",
                "members[3].dob"
            ]
        );
        let indexes: Vec<Option<usize>> = details.iter().map(|e| e.index).collect();
        assert_eq!(indexes, vec![Some(0), Some(1), Some(2), Some(3)]);
    }
}

mod limits_and_retries;
