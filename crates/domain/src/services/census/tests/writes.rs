//! The scoped group check, and the write: its wake-up, ids, digest, job and count.

use super::*;

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
