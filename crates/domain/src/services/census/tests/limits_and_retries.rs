//! Unit tests of the census limits, dry runs and id-collision retries,
//! against the port mocks.

use super::*;

// ---------------------------------------------------------------------------
// The size limit
// ---------------------------------------------------------------------------

#[tokio::test]
async fn over_ten_thousand_rows_is_invalid_without_any_store_call() {
    let rows: Vec<RowInput> = (0..=MAX_CENSUS_MEMBERS)
        .map(|i| Ok(member(&format!("E{i}"))))
        .collect();
    assert_eq!(rows.len(), 10_001);
    for dry_run in [false, true] {
        let mut groups = MockGroupStore::new();
        groups.expect_group().never();
        let svc = service(
            untouched_census(),
            groups,
            MockClock::new(),
            MockEntropy::new(),
        );
        let err = svc
            .replace(&scope(), &group_id(), rows.clone(), ANY, dry_run)
            .await
            .unwrap_err();
        let ServiceError::Invalid(details) = err else {
            panic!("expected Invalid, got {err:?}");
        };
        assert_eq!(details.len(), 1);
        assert_eq!(details[0].field, ROWS);
        assert_eq!(details[0].field, "members");
        assert_eq!(details[0].index, None);
    }
}

#[tokio::test]
async fn exactly_ten_thousand_rows_are_written() {
    let members: Vec<CensusMember> = (0..MAX_CENSUS_MEMBERS)
        .map(|i| member(&format!("E{i}")))
        .collect();
    let (census, writes) = recording_census(10_000);
    let svc = service(census, groups_with_group(), clock(), sequential_entropy());
    let result = svc
        .replace(&scope(), &group_id(), ok_rows(&members), ANY, false)
        .await
        .unwrap();
    assert_eq!(result.received, 10_000);
    assert_eq!(result.accepted, 10_000);
    let write = only_write(&writes);
    assert_eq!(write.rows.len(), 10_000);
    let distinct: HashSet<&MemberId> = write.fresh_ids.iter().collect();
    assert_eq!(distinct.len(), 10_000);
}

// ---------------------------------------------------------------------------
// Dry runs
// ---------------------------------------------------------------------------

fn mixed_rows() -> Vec<RowInput> {
    vec![
        Ok(member("E0")),
        Ok(with_zip("E1", "bad")),
        Ok(member("E0")),
        Ok(age_only("E3")),
        Ok(member("E4")),
    ]
}

#[tokio::test]
async fn a_dry_run_answers_the_same_counts_and_never_writes() {
    // Bare clock and entropy: a dry run mints and stamps nothing.
    let dry = service(
        untouched_census(),
        groups_with_group(),
        MockClock::new(),
        MockEntropy::new(),
    )
    .replace(&scope(), &group_id(), mixed_rows(), BROKER, true)
    .await
    .unwrap();

    let (census, _writes) = recording_census(2);
    let real = service(census, groups_with_group(), clock(), sequential_entropy())
        .replace(&scope(), &group_id(), mixed_rows(), BROKER, false)
        .await
        .unwrap();

    assert!(dry.dry_run);
    assert!(!real.dry_run);
    assert_eq!(dry.group_id, group_id());
    assert_eq!(dry.received, 5);
    assert_eq!(dry.accepted, 2);
    assert_eq!(dry.member_count, dry.accepted);
    assert_eq!(
        fields(&dry.errors),
        vec!["members[1].zip", "members[2].external_id", "members[3].dob"]
    );
    assert_eq!(dry.received, real.received);
    assert_eq!(dry.accepted, real.accepted);
    assert_eq!(dry.errors, real.errors);
    assert_eq!(dry.member_count, real.member_count);
}

#[tokio::test]
async fn a_dry_run_of_zero_rows_reports_an_empty_census_without_writing() {
    let result = service(
        untouched_census(),
        groups_with_group(),
        MockClock::new(),
        MockEntropy::new(),
    )
    .replace(&scope(), &group_id(), Vec::new(), ANY, true)
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
            dry_run: true,
        }
    );
}

#[tokio::test]
async fn a_colliding_fresh_id_is_retried_with_new_ids_then_given_up() {
    use crate::store::Conflict;

    // First write collides, the second lands: two writes, all ids fresh.
    let writes: Arc<Mutex<Vec<CensusWrite>>> = Arc::default();
    let sink = Arc::clone(&writes);
    let mut calls = 0;
    let mut c = MockCensusStore::new();
    c.expect_replace_census().times(2).returning(move |_, w| {
        sink.lock().unwrap().push(w.clone());
        calls += 1;
        if calls == 1 {
            Err(StoreError::Conflict(Conflict::IdTaken))
        } else {
            Ok(outcome(2))
        }
    });
    let svc = service(c, groups_with_group(), clock(), sequential_entropy());
    let rows = vec![Ok(member("E1")), Ok(member("E2"))];
    let res = svc
        .replace(&scope(), &group_id(), rows, ANY, false)
        .await
        .unwrap();
    assert_eq!(res.member_count, 2);
    let writes = writes.lock().unwrap().clone();
    let (first, second) = (&writes[0], &writes[1]);
    assert_eq!(first.rows, second.rows);
    let ids: HashSet<&MemberId> = first.fresh_ids.iter().chain(&second.fresh_ids).collect();
    assert_eq!(ids.len(), 4, "the retry mints new member ids");
    assert_ne!(
        first.job.as_ref().map(|j| &j.id),
        second.job.as_ref().map(|j| &j.id)
    );

    // Three collisions in a row: the conflict is reported.
    let mut c = MockCensusStore::new();
    c.expect_replace_census()
        .times(3)
        .returning(|_, _| Err(StoreError::Conflict(Conflict::IdTaken)));
    let svc = service(c, groups_with_group(), clock(), sequential_entropy());
    let err = svc
        .replace(&scope(), &group_id(), vec![Ok(member("E1"))], ANY, false)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ServiceError::Conflict(Conflict::IdTaken)),
        "{err:?}"
    );
}
