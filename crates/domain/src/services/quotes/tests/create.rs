//! `create` against the port mocks: pending rates, scope, inserts, review, cache, retries.

use super::*;

// ---------------------------------------------------------------------------
// create
// ---------------------------------------------------------------------------

#[tokio::test]
async fn an_open_comparison_answers_rates_pending_without_reading_the_census() {
    let mut groups = MockGroupStore::new();
    groups
        .expect_group()
        .times(1)
        .returning(|_, _| Ok(group(8_000)));
    let mut jobs = MockJobStore::new();
    jobs.expect_open_job()
        .withf(|s, id, k| *s == scope() && *id == group_id() && *k == JobKind::MarketComparison)
        .times(1)
        .returning(|_, _, _| Ok(Some(open_job())));
    jobs.expect_latest_result().never();
    let mut census = MockCensusStore::new();
    census.expect_census().never();
    let mut quotes = MockQuoteStore::new();
    quotes.expect_insert_quote().never();
    let svc = service(groups, census, quotes, jobs);
    match svc
        .create(&scope(), &group_id(), QuoteInput::default())
        .await
    {
        Err(ServiceError::RatesPending { retry_after_secs }) => assert_eq!(retry_after_secs, 3),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_group_outside_the_scope_is_not_found() {
    let mut groups = MockGroupStore::new();
    groups
        .expect_group()
        .times(1)
        .returning(|_, _| Err(StoreError::NotFound));
    let mut jobs = MockJobStore::new();
    jobs.expect_open_job().never();
    jobs.expect_latest_result().never();
    let mut census = MockCensusStore::new();
    census.expect_census().never();
    let mut quotes = MockQuoteStore::new();
    quotes.expect_insert_quote().never();
    let svc = service(groups, census, quotes, jobs);
    let err = svc
        .create(&scope(), &group_id(), QuoteInput::default())
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::NotFound), "{err:?}");
}

#[tokio::test]
async fn a_quote_is_inserted_ready_with_its_digest_expiry_and_figures() {
    let census = members(3);
    let q = create_with(&census, None).await;
    assert_eq!(q.scope, scope());
    assert_eq!(q.group_id, group_id());
    assert_eq!(q.status, QuoteStatus::Ready);
    assert_eq!(q.created_at, NOW);
    assert_eq!(q.expires_at, NOW + 30 * 86_400);
    assert_eq!(
        q.rating_digest.as_deref(),
        Some(crate::census::pricing_digest(&rating_digest(&census), None).as_str())
    );
    assert!(q.id.as_str().starts_with("qt_"));
    let b = &serde_json::to_value(q.body.market().unwrap()).unwrap();
    assert_eq!(b["pricing_basis"], "market_rates");
    assert_eq!(b["plan"]["id"], "diamond");
    assert_eq!(b["plan_year_start_date"], "2026-12-01");
    assert_eq!(b["census"]["employees"], 3);
    assert!(total_cents(&q) > 0);
    assert_eq!(
        b["annual"]["total_cents"].as_i64(),
        Some(12 * total_cents(&q))
    );
    assert!(b["monthly"]["pepm_cents"].as_i64().unwrap() > 0);
    assert_eq!(b["employee_contribution"]["employer_contribution_pct"], 100);
    assert_eq!(b["comparison"]["basis"], "benchmark");
}

#[tokio::test]
async fn over_two_hundred_employees_a_quote_is_in_review() {
    assert_eq!(
        create_with(&members(200), None).await.status,
        QuoteStatus::Ready
    );
    let q = create_with(&members(201), None).await;
    assert_eq!(q.status, QuoteStatus::InReview);
    assert_eq!(
        serde_json::to_value(q.body.market().unwrap()).unwrap()["census"]["employees"],
        201
    );
}

/// The real simulation with the first household's layer raised.
fn altered(members: &[CensusMember]) -> Simulation {
    let mut sim = simulate(members, START);
    let bump = 50_000_000;
    for v in &mut sim.versions {
        v.household_layer[0] += bump;
        v.layer_total += i128::from(bump);
    }
    sim
}

#[tokio::test]
async fn a_matching_cached_comparison_is_priced_instead_of_simulating() {
    let census = members(4);
    let digest = rating_digest(&census);
    let uncached = create_with(&census, None).await;
    // The real simulation cached gives the same figures...
    let same = create_with(
        &census,
        Some(cached(&digest, START, simulate(&census, START))),
    )
    .await;
    assert_eq!(same.body, uncached.body);
    // ...and a different one shows it is the one used.
    let used = create_with(&census, Some(cached(&digest, START, altered(&census)))).await;
    assert_ne!(total_cents(&used), total_cents(&uncached));
    assert!(total_cents(&used) > total_cents(&uncached));
    assert_eq!(used.rating_digest, uncached.rating_digest);
}

#[tokio::test]
async fn a_cached_comparison_of_another_census_start_or_card_is_ignored() {
    let census = members(4);
    let digest = rating_digest(&census);
    let uncached = create_with(&census, None).await;
    let other_card = {
        let mut c: Comparison =
            serde_json::from_str(&cached(&digest, START, altered(&census))).unwrap();
        c.card_version = "another-card".to_owned();
        serde_json::to_string(&c).unwrap()
    };
    for cache in [
        cached(&rating_digest(&members(5)), START, altered(&census)),
        cached(&digest, date!(2027 - 01 - 01), altered(&census)),
        other_card,
        "not a comparison".to_owned(),
    ] {
        let q = create_with(&census, Some(cache.clone())).await;
        assert_eq!(q.body, uncached.body, "{cache:.60}");
    }
}

#[tokio::test]
async fn an_empty_census_is_census_required_and_nothing_is_inserted() {
    let mut s = setup(&[], None, Vec::new());
    s.quotes.checkpoint();
    s.quotes.expect_insert_quote().never();
    let (svc, _) = service_of(s);
    let err = svc
        .create(&scope(), &group_id(), QuoteInput::default())
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::CensusRequired), "{err:?}");
}

#[tokio::test]
async fn an_id_collision_is_retried_with_a_fresh_id() {
    let census = members(2);
    let s = setup(&census, None, vec![StoreError::Conflict(Conflict::IdTaken)]);
    let (svc, inserted) = service_of(s);
    let q = svc
        .create(&scope(), &group_id(), QuoteInput::default())
        .await
        .unwrap();
    let tries = inserted.lock().unwrap().clone();
    assert_eq!(tries.len(), 2);
    assert_ne!(tries[0].id, tries[1].id);
    assert_eq!(q, tries[1]);
    // Only the id changed.
    let mut first = tries[0].clone();
    first.id = q.id.clone();
    assert_eq!(first, q);
}

/// A comparison made while the group's address ZIP rated a member without
/// a priced area is not reused after the address changes.
#[tokio::test]
async fn a_cached_comparison_is_not_reused_after_the_address_zip_changes() {
    use crate::group::Address;
    use crate::services::jobs::JobHandler;
    let mut census = members(3);
    census.push(CensusMember::new("X1", date!(1970 - 01 - 01), "00001"));
    let with_zip = |z: &str| {
        let mut g = group(4);
        g.address = Some(Address {
            zip: Some(z.to_owned()),
            ..Address::default()
        });
        g
    };
    // 1. The comparison job runs while the group's address ZIP is 60601.
    let mut groups = MockGroupStore::new();
    let g_old = with_zip("60601");
    groups
        .expect_group()
        .returning(move |_, _| Ok(g_old.clone()));
    let mut cs = MockCensusStore::new();
    let rows = stored(&census);
    cs.expect_census().returning(move |_, _| Ok(rows.clone()));
    let handler = ComparisonHandler::new(service(
        groups,
        cs,
        MockQuoteStore::new(),
        MockJobStore::new(),
    ));
    let mut j = open_job();
    j.state = JobState::Running;
    let result = handler.run(&j).await.unwrap().result.unwrap();
    // 2. The partner PATCHes the address to 94103 (digest unchanged); quote.
    let quote_with = |cache: Option<String>| {
        let census = census.clone();
        async move {
            let mut groups = MockGroupStore::new();
            let g_new = with_zip("94103");
            groups
                .expect_group()
                .returning(move |_, _| Ok(g_new.clone()));
            let mut jobs = MockJobStore::new();
            jobs.expect_open_job().returning(|_, _, _| Ok(None));
            jobs.expect_latest_result()
                .return_once(move |_, _, _| Ok(cache));
            let mut cs = MockCensusStore::new();
            let rows = stored(&census);
            cs.expect_census().return_once(move |_, _| Ok(rows));
            let mut qs = MockQuoteStore::new();
            qs.expect_insert_quote().returning(|_, _| Ok(()));
            service(groups, cs, qs, jobs)
                .create(&scope(), &group_id(), QuoteInput::default())
                .await
                .unwrap()
        }
    };
    let cached_q = quote_with(Some(result)).await;
    let fresh_q = quote_with(None).await;
    assert_eq!(cached_q.body, fresh_q.body);
}
