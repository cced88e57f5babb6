//! Per-row validation against the port mocks: indexes, several fields, the broker rule, duplicates.

use super::*;

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
