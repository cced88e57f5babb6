//! Unit tests of the quotes service: defaults, limits and error mapping, then `create`, `finalize` and `finalize_any` against the port mocks (rates pending, the cached market comparison, in-review threshold, id retries).

use std::sync::Mutex;

use pricing_core::Simulation;
use time::macros::date;

use super::*;
use crate::census::StoredMember;
use crate::document::JobPayload;
use crate::error::Code;
use crate::event::EventType;
use crate::group::GroupStatus;
use crate::ids::{JobId, MemberId, PartnerId};
use crate::job::{Job, JobState, NewJob};
use crate::mode::Mode;
use crate::ports::{MockClock, MockEntropy, NoWorker};
use crate::store::{
    Conflict, MockCensusStore, MockGroupStore, MockJobStore, MockQuoteStore, StoreError,
};

#[test]
fn the_default_plan_year_starts_on_the_first_of_next_month() {
    assert_eq!(
        next_month_start(date!(2026 - 11 - 21)),
        date!(2026 - 12 - 01)
    );
    assert_eq!(
        next_month_start(date!(2026 - 12 - 31)),
        date!(2027 - 01 - 01)
    );
    assert_eq!(
        next_month_start(date!(2026 - 01 - 01)),
        date!(2026 - 02 - 01)
    );
}

#[test]
fn retry_after_grows_with_the_census_and_is_capped() {
    assert_eq!(rates_retry_after(0), 1);
    assert_eq!(rates_retry_after(3_999), 1);
    assert_eq!(rates_retry_after(10_000), 3);
    assert_eq!(rates_retry_after(u32::MAX), 30);
}

#[test]
fn a_plan_year_start_is_not_in_the_past_nor_over_a_year_ahead() {
    let today = date!(2026 - 11 - 21);
    assert_eq!(check_start(today, today).ok(), Some(today));
    let last = date!(2027 - 11 - 22);
    assert_eq!(check_start(last, today).ok(), Some(last));
    for bad in [date!(2026 - 11 - 20), date!(2027 - 11 - 23)] {
        match check_start(bad, today) {
            Err(ServiceError::Invalid(d)) => assert_eq!(d[0].field, "plan_year_start_date"),
            other => panic!("{bad}: {other:?}"),
        }
    }
}

#[test]
fn pricing_errors_map_to_the_specified_answers() {
    assert!(matches!(
        pricing_error(PricingError::CensusRequired),
        ServiceError::CensusRequired
    ));
    assert!(matches!(
        pricing_error(PricingError::MarketUnavailable),
        ServiceError::MarketUnavailable
    ));
    assert!(matches!(
        pricing_error(PricingError::Overflow),
        ServiceError::AmountOutOfRange
    ));
    assert!(matches!(
        pricing_error(PricingError::RateCard("bad layer".into())),
        ServiceError::Internal(_)
    ));
    // Census paths name the stored census's rows.
    let e = pricing_error(PricingError::InvalidCensus(vec![FieldError::at(
        3,
        "census[3].dob",
        "is after the plan-year start (2026-12-01)",
    )]));
    match e {
        ServiceError::Invalid(d) => {
            assert_eq!(d[0].field, "members[3].dob");
            assert_eq!(d[0].index, Some(3));
        }
        other => panic!("{other:?}"),
    }
}

// ---------------------------------------------------------------------------
// The service against the port mocks
// ---------------------------------------------------------------------------

/// 2026-11-21T15:30:00.123Z: the default plan year starts 2026-12-01.
const NOW_MS: i64 = 1_795_275_000_123;
const NOW: i64 = 1_795_275_000;
const START: Date = date!(2026 - 12 - 01);

fn clock() -> MockClock {
    let mut c = MockClock::new();
    c.expect_now_ms().return_const(NOW_MS);
    c
}

/// Entropy that fills each buffer with a big-endian counter starting at 1.
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

fn card() -> Arc<RateCard> {
    Arc::new(RateCard::builtin_2026().unwrap())
}

fn scope() -> Scope {
    Scope::new(PartnerId::from_bytes([0xaa; 6]), Mode::Test)
}

fn group_id() -> GroupId {
    GroupId::from_bytes([0x42; 6])
}

fn quote_id() -> QuoteId {
    QuoteId::from_bytes([0x51; 6])
}

fn group(member_count: u32) -> Group {
    Group {
        id: group_id(),
        partner_id: scope().partner,
        mode: scope().mode,
        status: GroupStatus::CensusReceived,
        company_name: "Acme".to_owned(),
        domain: "acme.com".to_owned(),
        external_id: None,
        address: None,
        contact: None,
        current_coverage: None,
        census_member_count: member_count,
        rating_digest: None,
        company_state: None,
        created_at: NOW - 3_600,
        updated_at: NOW - 3_600,
    }
}

/// `n` employees in Chicago (ZIP 60601, priced by the 2026 card).
fn members(n: u32) -> Vec<CensusMember> {
    (0..n)
        .map(|i| {
            let year = 1960 + i32::try_from(i % 40).unwrap();
            let dob = Date::from_calendar_date(year, time::Month::March, 15).unwrap();
            CensusMember::new(&format!("E{i:04}"), dob, "60601")
        })
        .collect()
}

fn stored(members: &[CensusMember]) -> Vec<StoredMember> {
    members
        .iter()
        .zip(0u32..)
        .map(|(m, i)| {
            let [_, _, a, b] = i.to_be_bytes();
            StoredMember {
                id: MemberId::from_bytes([0x33, 0, 0, 0, a, b]),
                group_id: group_id(),
                member: m.clone(),
                position: i,
                created_at: NOW - 60,
                updated_at: NOW - 60,
                state: crate::member::MemberState::default(),
            }
        })
        .collect()
}

fn open_job() -> Job {
    Job {
        job: NewJob {
            id: JobId::from_bytes([0x0b; 6]),
            scope: scope(),
            group_id: Some(group_id()),
            payload: JobPayload::MarketComparison(Default::default()),
            run_after_ms: NOW_MS,
        },
        state: JobState::Queued,
        attempts: 0,
        locked_until_ms: None,
    }
}

/// The simulation the comparison job would store for `members`.
fn simulate(members: &[CensusMember], start: Date) -> Simulation {
    let card = card();
    let (sc, g) = (scope(), group(0));
    let rated = RatedCensus::build(members, context(&card, &sc, &g, start)).unwrap();
    market_comparison(&rated)
}

fn cached(digest: &str, start: Date, simulation: Simulation) -> String {
    serde_json::to_string(&Comparison {
        rating_digest: digest.to_owned(),
        plan_year_start: start,
        card_version: card().version().to_owned(),
        fallback_zip: None,
        simulation,
    })
    .unwrap()
}

/// Mocks for one `create` that reaches the insert: the group in scope, no
/// open job, the census of `members`, the cached result `cache`. Inserted
/// quotes are recorded; the insert answers `answers` in turn (then `Ok`).
struct Setup {
    groups: MockGroupStore,
    census: MockCensusStore,
    quotes: MockQuoteStore,
    jobs: MockJobStore,
    inserted: Arc<Mutex<Vec<Quote>>>,
}

fn setup(members: &[CensusMember], cache: Option<String>, answers: Vec<StoreError>) -> Setup {
    let count = u32::try_from(members.len()).unwrap();
    let mut groups = MockGroupStore::new();
    groups
        .expect_group()
        .withf(|s, id| *s == scope() && *id == group_id())
        .times(1)
        .returning(move |_, _| Ok(group(count)));
    let mut jobs = MockJobStore::new();
    jobs.expect_open_job()
        .withf(|s, id, k| *s == scope() && *id == group_id() && *k == JobKind::MarketComparison)
        .times(1)
        .returning(|_, _, _| Ok(None));
    jobs.expect_latest_result()
        .withf(|s, id, k| *s == scope() && *id == group_id() && *k == JobKind::MarketComparison)
        .times(1)
        .return_once(move |_, _, _| Ok(cache));
    let mut census = MockCensusStore::new();
    let rows = stored(members);
    census
        .expect_census()
        .withf(|s, id| *s == scope() && *id == group_id())
        .times(1)
        .return_once(move |_, _| Ok(rows));
    let inserted: Arc<Mutex<Vec<Quote>>> = Arc::default();
    let sink = Arc::clone(&inserted);
    let answers = Mutex::new(answers.into_iter());
    let mut quotes = MockQuoteStore::new();
    quotes.expect_insert_quote().returning(move |q, events| {
        assert!(events.is_empty(), "a quote announces nothing");
        sink.lock().unwrap().push(q.clone());
        answers.lock().unwrap().next().map_or(Ok(()), Err)
    });
    Setup {
        groups,
        census,
        quotes,
        jobs,
        inserted,
    }
}

fn service_of(s: Setup) -> (Quotes, Arc<Mutex<Vec<Quote>>>) {
    let svc = service(s.groups, s.census, s.quotes, s.jobs);
    (svc, s.inserted)
}

fn service(
    groups: MockGroupStore,
    census: MockCensusStore,
    quotes: MockQuoteStore,
    jobs: MockJobStore,
) -> Quotes {
    Quotes::new(
        RecordPorts {
            groups: Arc::new(groups),
            census: Arc::new(census),
            quotes: Arc::new(quotes),
            jobs: Arc::new(jobs),
            clock: Arc::new(clock()),
            entropy: Arc::new(sequential_entropy()),
            waker: Arc::new(NoWorker),
        },
        card(),
    )
}

/// Prices `members` with `cache` and returns the inserted quote.
async fn create_with(members: &[CensusMember], cache: Option<String>) -> Quote {
    let (svc, inserted) = service_of(setup(members, cache, Vec::new()));
    let quote = svc
        .create(&scope(), &group_id(), QuoteInput::default())
        .await
        .unwrap();
    let inserted = inserted.lock().unwrap();
    assert_eq!(inserted.as_slice(), std::slice::from_ref(&quote));
    quote
}

fn total_cents(q: &Quote) -> i64 {
    q.body.market().unwrap().monthly.total_cents
}

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

// ---------------------------------------------------------------------------
// finalize
// ---------------------------------------------------------------------------

fn stored_quote(sc: &Scope, status: QuoteStatus) -> Quote {
    Quote {
        acceptance: None,
        kind: QuoteKind::Quote,
        request_digest: None,
        id: quote_id(),
        scope: sc.clone(),
        group_id: group_id(),
        status,
        rating_digest: Some("d1".to_owned()),
        expires_at: NOW + 86_400,
        body: crate::document::fixtures::market_document(),
        created_at: NOW - 60,
    }
}

/// A quote store holding `quote` in its scope that expects one update to
/// `ready` with exactly one `quote.finalized` event.
fn finalizing_store(quote: Quote) -> MockQuoteStore {
    let mut store = MockQuoteStore::new();
    let (sc, q) = (quote.scope.clone(), quote.clone());
    store
        .expect_quote()
        .withf(move |s, id| *s == sc && *id == quote_id())
        .times(1)
        .return_once(move |_, _| Ok(q));
    let sc = quote.scope.clone();
    store
        .expect_update_quote()
        .withf(move |s, id, status, body, events| {
            *s == sc
                && *id == quote_id()
                && *status == QuoteStatus::Ready
                && *body == quote.body
                && events.len() == 1
                && events[0].event_type() == EventType::QuoteFinalized
                && events[0].scope == sc
                && events[0].created_at == NOW
                && events[0].data.data()
                    == serde_json::json!({
                        "quote_id": quote_id().as_str(),
                        "group_id": group_id().as_str(),
                        "status": "ready",
                    })
        })
        .times(1)
        .returning(|_, _, _, _, _| Ok(()));
    store
}

fn quotes_only(store: MockQuoteStore) -> Quotes {
    service(
        MockGroupStore::new(),
        MockCensusStore::new(),
        store,
        MockJobStore::new(),
    )
}

#[tokio::test]
async fn finalize_makes_an_in_review_quote_ready_with_one_event() {
    let store = finalizing_store(stored_quote(&scope(), QuoteStatus::InReview));
    let q = quotes_only(store)
        .finalize(&scope(), &quote_id())
        .await
        .unwrap();
    assert_eq!(q.status, QuoteStatus::Ready);
    assert_eq!(q.id, quote_id());
}

#[tokio::test]
async fn only_an_in_review_quote_can_be_finalized() {
    let mut store = MockQuoteStore::new();
    store
        .expect_quote()
        .times(1)
        .returning(|_, _| Ok(stored_quote(&scope(), QuoteStatus::Ready)));
    store.expect_update_quote().never();
    match quotes_only(store).finalize(&scope(), &quote_id()).await {
        Err(e @ ServiceError::Quote(QuoteRefusal::NotInReview { .. })) => {
            assert_eq!(e.code(), Code::Conflict);
            assert!(e.message().contains("the quote is ready"), "{e}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn finalize_any_works_in_the_scope_of_the_quote_found() {
    let live = Scope::new(PartnerId::from_bytes([0xcc; 6]), Mode::Live);
    let found = stored_quote(&live, QuoteStatus::InReview);
    let mut store = finalizing_store(found.clone());
    store
        .expect_find_quote()
        .withf(|id| *id == quote_id())
        .times(1)
        .return_once(move |_| Ok(found));
    let q = quotes_only(store).finalize_any(&quote_id()).await.unwrap();
    assert_eq!((q.scope, q.status), (live, QuoteStatus::Ready));

    let mut store = MockQuoteStore::new();
    store
        .expect_find_quote()
        .times(1)
        .returning(|_| Err(StoreError::NotFound));
    store.expect_quote().never();
    store.expect_update_quote().never();
    let err = quotes_only(store)
        .finalize_any(&quote_id())
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::NotFound), "{err:?}");
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
