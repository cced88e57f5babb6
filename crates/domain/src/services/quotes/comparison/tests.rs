//! Unit tests of the market-comparison job handler against the port mocks: the stored comparison read back by quotes, the `census.processed` event with the payload's counts, a census that cannot be priced, a group that is gone, and store failures.

use pricing_core::census::CensusMember;
use pricing_core::quote::market_comparison;
use pricing_core::{RateCard, RatedCensus};
use time::macros::date;

use super::*;
use crate::census::StoredMember;
use crate::document::EventData;
use crate::document::JobPayload;
use crate::event::EventType;
use crate::group::{Group, GroupStatus};
use crate::ids::{GroupId, JobId, MemberId, PartnerId};
use crate::job::{JobKind, JobState, NewJob};
use crate::mode::Mode;
use crate::ports::{MockClock, MockEntropy, NoWorker};
use crate::scope::Scope;
use crate::store::{MockCensusStore, MockGroupStore, MockJobStore, MockQuoteStore};

/// 2026-11-21T15:30:00.123Z: the default plan year starts 2026-12-01.
const NOW_MS: i64 = 1_795_275_000_123;
const NOW: i64 = 1_795_275_000;
const START: Date = date!(2026 - 12 - 01);

fn clock() -> MockClock {
    let mut c = MockClock::new();
    c.expect_now_ms().return_const(NOW_MS);
    c
}

fn entropy() -> MockEntropy {
    let mut e = MockEntropy::new();
    e.expect_fill().returning(|buf| buf.fill(0x07));
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

fn group() -> Group {
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
        census_member_count: 4,
        rating_digest: None,
        company_state: None,
        created_at: NOW - 3_600,
        updated_at: NOW - 3_600,
    }
}

fn members() -> Vec<CensusMember> {
    vec![
        CensusMember::new("E1", date!(1980 - 01 - 01), "60601"),
        CensusMember::new("E2", date!(1975 - 06 - 30), "60601"),
        CensusMember::new("E3", date!(1990 - 11 - 02), "60601"),
        CensusMember::new("E4", date!(1965 - 03 - 15), "60601"),
    ]
}

fn stored(members: &[CensusMember]) -> Vec<StoredMember> {
    members
        .iter()
        .zip(0u8..)
        .map(|(m, i)| StoredMember {
            id: MemberId::from_bytes([0x33, 0, 0, 0, 0, i]),
            group_id: group_id(),
            member: m.clone(),
            position: u32::from(i),
            created_at: NOW - 60,
            updated_at: NOW - 60,
            state: crate::member::MemberState::default(),
        })
        .collect()
}

/// A claimed job whose payload says 5 rows received, 3 accepted, 2 errors
/// (the census read back has 4 members: the counts come from the payload,
/// the member count from the census).
fn job(group: Option<GroupId>) -> Job {
    Job {
        job: NewJob {
            id: JobId::from_bytes([0x0b; 6]),
            scope: scope(),
            group_id: group,
            payload: JobPayload::from_stored(
                JobKind::MarketComparison,
                r#"{"received":5,"accepted":3,"errorCount":2}"#,
            )
            .unwrap(),
            run_after_ms: NOW_MS - 1_000,
        },
        state: JobState::Running,
        attempts: 1,
        locked_until_ms: Some(NOW_MS + 60_000),
    }
}

fn groups_answering(answer: fn() -> Result<Group, StoreError>) -> MockGroupStore {
    let mut g = MockGroupStore::new();
    g.expect_group()
        .withf(|s, id| *s == scope() && *id == group_id())
        .times(1)
        .returning(move |_, _| answer());
    g
}

fn census_holding(members: Vec<CensusMember>) -> MockCensusStore {
    let mut c = MockCensusStore::new();
    let rows = stored(&members);
    c.expect_census()
        .withf(|s, id| *s == scope() && *id == group_id())
        .times(1)
        .return_once(move |_, _| Ok(rows));
    c
}

fn handler(groups: MockGroupStore, census: MockCensusStore) -> ComparisonHandler {
    ComparisonHandler::new(Quotes::new(
        RecordPorts {
            groups: Arc::new(groups),
            census: Arc::new(census),
            quotes: Arc::new(MockQuoteStore::new()),
            jobs: Arc::new(MockJobStore::new()),
            clock: Arc::new(clock()),
            entropy: Arc::new(entropy()),
            waker: Arc::new(NoWorker),
        },
        card(),
    ))
}

fn down() -> StoreError {
    StoreError::Unavailable(Box::new(std::io::Error::other("connection refused")))
}

fn processed(member_count: u64) -> NewEvent {
    NewEvent {
        id: crate::ids::EventId::from_bytes([0x07; 6]),
        scope: scope(),
        created_at: NOW,
        data: EventData::from_stored(
            EventType::CensusProcessed,
            &(serde_json::json!({
                "groupId": group_id().as_str(),
                "received": 5,
                "accepted": 3,
                "memberCount": member_count,
                "errorCount": 2,
            }))
            .to_string(),
        )
        .unwrap(),
    }
}

#[tokio::test]
async fn a_run_stores_the_comparison_quotes_read_back_and_announces_it() {
    let out = handler(groups_answering(|| Ok(group())), census_holding(members()))
        .run(&job(Some(group_id())))
        .await
        .unwrap();
    assert_eq!(out.events, vec![processed(4)]);
    let text = out.result.unwrap();
    let c = Comparison::parse(&text).unwrap();
    let card = card();
    assert!(c.matches(&rating_digest(&members()), START, card.version(), None));
    assert_eq!(c.rating_digest, rating_digest(&members()));
    assert_eq!(c.plan_year_start, START);
    assert_eq!(c.card_version, card.version());
    // The simulation is the engine's for the census on that start.
    let rated = RatedCensus::build(&members(), context(&card, &scope(), &group(), START)).unwrap();
    assert_eq!(c.simulation, market_comparison(&rated));
    // A quote on another start or census would not use it.
    assert!(!c.matches(
        &rating_digest(&members()),
        date!(2027 - 01 - 01),
        card.version(),
        None
    ));
    assert!(!c.matches(&rating_digest(&members()[..3]), START, card.version(), None));
    // Nor a group whose address ZIP rates unpriced members elsewhere.
    assert!(!c.matches(
        &rating_digest(&members()),
        START,
        card.version(),
        Some("94103")
    ));
}

#[tokio::test]
async fn an_unpriceable_census_completes_without_a_result_but_is_announced() {
    let out = handler(groups_answering(|| Ok(group())), census_holding(Vec::new()))
        .run(&job(Some(group_id())))
        .await
        .unwrap();
    assert_eq!(out.result, None);
    assert_eq!(out.events, vec![processed(0)]);
}

#[tokio::test]
async fn a_group_that_is_gone_completes_with_nothing_to_announce() {
    let mut census = MockCensusStore::new();
    census.expect_census().never();
    let out = handler(groups_answering(|| Err(StoreError::NotFound)), census)
        .run(&job(Some(group_id())))
        .await
        .unwrap();
    assert_eq!(out, JobOutput::default());
}

#[tokio::test]
async fn store_failures_fail_the_run() {
    let mut census = MockCensusStore::new();
    census.expect_census().never();
    let err = handler(groups_answering(|| Err(down())), census)
        .run(&job(Some(group_id())))
        .await
        .unwrap_err();
    assert_eq!(err, "store: database unavailable");

    let mut census = MockCensusStore::new();
    census
        .expect_census()
        .times(1)
        .returning(|_, _| Err(down()));
    let err = handler(groups_answering(|| Ok(group())), census)
        .run(&job(Some(group_id())))
        .await
        .unwrap_err();
    assert_eq!(err, "store: database unavailable");
}

#[tokio::test]
async fn a_job_without_a_group_fails_without_reading_the_store() {
    let mut groups = MockGroupStore::new();
    groups.expect_group().never();
    let mut census = MockCensusStore::new();
    census.expect_census().never();
    let err = handler(groups, census).run(&job(None)).await.unwrap_err();
    assert!(err.contains("needs a group"), "{err}");
}

#[tokio::test]
async fn a_payload_of_another_kind_fails_the_job() {
    let mut j = job(Some(group_id()));
    j.job.payload =
        JobPayload::PriceOnPlan(Box::new(crate::services::price_on_plan::PricingPayload {
            quote_id: crate::ids::QuoteId::from_bytes([2; 6]),
            plan_year_start: "2026-12-01".to_owned(),
            require_dob: false,
            company_zip: None,
            census: Vec::new(),
            plan: None,
            market_plans: Vec::new(),
            assumptions: Vec::new(),
        }));
    let err = handler(MockGroupStore::new(), MockCensusStore::new())
        .run(&j)
        .await
        .unwrap_err();
    assert!(err.contains("census counts"), "{err}");
}
