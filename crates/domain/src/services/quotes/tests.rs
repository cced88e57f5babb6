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

// ---------------------------------------------------------------------------
// The service against the port mocks
// ---------------------------------------------------------------------------

/// 2026-11-21T15:30:00.123Z: the default plan year starts 2026-12-01.
const NOW_MS: i64 = 1_795_275_000_123;
pub(super) const NOW: i64 = 1_795_275_000;
pub(super) const START: Date = date!(2026 - 12 - 01);

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

pub(super) fn scope() -> Scope {
    Scope::new(PartnerId::from_bytes([0xaa; 6]), Mode::Test)
}

pub(super) fn group_id() -> GroupId {
    GroupId::from_bytes([0x42; 6])
}

pub(super) fn quote_id() -> QuoteId {
    QuoteId::from_bytes([0x51; 6])
}

pub(super) fn group(member_count: u32) -> Group {
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
pub(super) fn members(n: u32) -> Vec<CensusMember> {
    (0..n)
        .map(|i| {
            let year = 1960 + i32::try_from(i % 40).unwrap();
            let dob = Date::from_calendar_date(year, time::Month::March, 15).unwrap();
            CensusMember::new(&format!("E{i:04}"), dob, "60601")
        })
        .collect()
}

pub(super) fn stored(members: &[CensusMember]) -> Vec<StoredMember> {
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

pub(super) fn open_job() -> Job {
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
pub(super) fn simulate(members: &[CensusMember], start: Date) -> Simulation {
    let card = card();
    let (sc, g) = (scope(), group(0));
    let rated = RatedCensus::build(members, context(&card, &sc, &g, start)).unwrap();
    market_comparison(&rated)
}

pub(super) fn cached(digest: &str, start: Date, simulation: Simulation) -> String {
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
pub(super) struct Setup {
    groups: MockGroupStore,
    census: MockCensusStore,
    quotes: MockQuoteStore,
    jobs: MockJobStore,
    inserted: Arc<Mutex<Vec<Quote>>>,
}

pub(super) fn setup(
    members: &[CensusMember],
    cache: Option<String>,
    answers: Vec<StoreError>,
) -> Setup {
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

pub(super) fn service_of(s: Setup) -> (Quotes, Arc<Mutex<Vec<Quote>>>) {
    let svc = service(s.groups, s.census, s.quotes, s.jobs);
    (svc, s.inserted)
}

pub(super) fn service(
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
pub(super) async fn create_with(members: &[CensusMember], cache: Option<String>) -> Quote {
    let (svc, inserted) = service_of(setup(members, cache, Vec::new()));
    let quote = svc
        .create(&scope(), &group_id(), QuoteInput::default())
        .await
        .unwrap();
    let inserted = inserted.lock().unwrap();
    assert_eq!(inserted.as_slice(), std::slice::from_ref(&quote));
    quote
}

pub(super) fn total_cents(q: &Quote) -> i64 {
    q.body.market().unwrap().monthly.total_cents
}

mod create;
mod finalize;
mod rules;
