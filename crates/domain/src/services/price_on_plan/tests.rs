//! Unit tests of the price-on-plan service against the port mocks: finding
//! a repeat, validation before anything is stored, the lead stored in one
//! call, the zero-budget queue, pricing within the budget, a quote another
//! worker finished, and the worker's handler.

use std::sync::{Arc, Mutex};

use pricing_core::census::EmploymentType;
use serde_json::json;
use time::macros::date;

use super::*;
use crate::document::JobPayload;
use crate::document::QuoteDocument;
use crate::group::GroupStatus;
use crate::ids::{GroupId, JobId, PartnerId, QuoteId};
use crate::job::{Job, JobState};
use crate::mode::Mode;
use crate::ports::{JobWaker, MockClock, MockEntropy, NoWorker};
use crate::services::PriceOnPlanRefusal;
use crate::services::jobs::JobHandler;
use crate::store::{MockJobStore, MockQuoteStore};
use pricing_core::{CensusRules, PartnerPlan};

/// 2026-11-21T15:30:00.123Z: the plan year starts 2026-12-01.
const NOW_MS: i64 = 1_795_275_000_123;
const NOW: i64 = 1_795_275_000;

fn clock() -> Arc<MockClock> {
    let mut c = MockClock::new();
    c.expect_now_ms().return_const(NOW_MS);
    Arc::new(c)
}

/// Entropy that fills each buffer with a big-endian counter.
fn entropy() -> Arc<MockEntropy> {
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
    Arc::new(e)
}

fn scope() -> Scope {
    Scope::new(PartnerId::from_bytes([0xaa; 6]), Mode::Test)
}

fn service(quotes: MockQuoteStore, jobs: MockJobStore, budget: Duration) -> PriceOnPlan {
    waking(quotes, jobs, budget, Arc::new(NoWorker))
}

fn waking(
    quotes: MockQuoteStore,
    jobs: MockJobStore,
    budget: Duration,
    waker: Arc<dyn JobWaker>,
) -> PriceOnPlan {
    let mut groups = crate::store::MockGroupStore::new();
    groups
        .expect_domain_held()
        .returning(|_, domain| Ok(domain == "held.example"));
    PriceOnPlan::new(
        RecordPorts {
            groups: Arc::new(groups),
            census: Arc::new(crate::store::MockCensusStore::new()),
            quotes: Arc::new(quotes),
            jobs: Arc::new(jobs),
            clock: clock(),
            entropy: entropy(),
            waker,
        },
        Arc::new(RateCard::builtin_2026().unwrap()),
        budget,
    )
}

fn plan() -> PartnerPlan {
    serde_json::from_value(json!({
        "carrier": "Acme Health", "plan_name": "Silver PPO HSA 3400", "plan_type": "PPO",
        "hsa_eligible": true, "deductible_individual_cents": 340_000,
        "oop_max_individual_cents": 750_000, "pmpm_cents": 52_000
    }))
    .unwrap()
}

fn input(n: usize) -> PricingInput {
    PricingInput {
        census: (0..n)
            .map(|i| CensusMember::new(&format!("E{i}"), date!(1985 - 04 - 02), "60601"))
            .collect(),
        plan: Some(plan()),
        market_plans: Vec::new(),
        company: None,
        rules: CensusRules { require_dob: true },
        plan_required: true,
    }
}

fn pending_quote(group: &GroupId) -> Quote {
    Quote {
        acceptance: None,
        id: QuoteId::from_bytes([0x51; 6]),
        kind: QuoteKind::PriceOnPlan,
        request_digest: Some("d".to_owned()),
        scope: scope(),
        group_id: group.clone(),
        status: QuoteStatus::Pricing,
        rating_digest: None,
        expires_at: NOW + 86_400,
        body: QuoteDocument::PriceOnPlan(Box::new(Document {
            estimated_ready_at: NOW + 1,
            ..crate::document::fixtures::price_on_plan_document()
        })),
        created_at: NOW,
    }
}

fn job_of(lead: &Lead) -> Job {
    Job {
        job: lead.job.clone(),
        state: JobState::Queued,
        attempts: 1,
        locked_until_ms: None,
    }
}

#[test]
fn the_request_digest_ignores_nothing_but_is_stable() {
    let svc = service(
        MockQuoteStore::new(),
        MockJobStore::new(),
        DEFAULT_WAIT_BUDGET,
    );
    let start = svc.plan_year_start();
    assert_eq!(start, date!(2026 - 12 - 01));
    let a = svc.request_digest(br#"{"census":[]}"#, start);
    assert_eq!(a, svc.request_digest(br#"{"census":[]}"#, start));
    assert_ne!(a, svc.request_digest(br#"{"census":[1]}"#, start));
    assert_ne!(
        a,
        svc.request_digest(br#"{"census":[]}"#, date!(2027 - 01 - 01))
    );
    assert_eq!(a.len(), 64);
}

#[tokio::test]
async fn a_repeat_finds_its_finished_or_pending_quote_but_not_one_whose_job_gave_up() {
    let group = GroupId::from_bytes([0x42; 6]);
    for (status, open, found) in [
        (QuoteStatus::Ready, false, "finished"),
        (QuoteStatus::Unavailable, false, "finished"),
        (QuoteStatus::Pricing, true, "pending"),
        (QuoteStatus::Pricing, false, "none"),
    ] {
        let mut quotes = MockQuoteStore::new();
        let mut q = pending_quote(&group);
        q.status = status;
        quotes
            .expect_lead_quote()
            .withf(|_, d, now| d == "digest" && *now == NOW)
            .returning(move |_, _, _| Ok(Some(q.clone())));
        let mut jobs = MockJobStore::new();
        let g = group.clone();
        jobs.expect_open_job()
            .withf(move |_, id, kind| *id == g && *kind == JobKind::PriceOnPlan)
            .returning(move |_, _, _| {
                Ok(open.then(|| Job {
                    job: NewJob {
                        id: JobId::from_bytes([1; 6]),
                        scope: scope(),
                        group_id: None,
                        payload: JobPayload::MarketComparison(Default::default()),
                        run_after_ms: 0,
                    },
                    state: JobState::Running,
                    attempts: 1,
                    locked_until_ms: None,
                }))
            });
        let svc = service(quotes, jobs, DEFAULT_WAIT_BUDGET);
        let got = match svc.find(&scope(), "digest").await.unwrap() {
            Some(Outcome::Finished(_)) => "finished",
            Some(Outcome::Pending(_)) => "pending",
            None => "none",
        };
        assert_eq!(got, found, "{status:?} open={open}");
    }
}

#[tokio::test]
async fn every_bad_field_is_named_before_anything_is_stored() {
    // No store expectations: any call would panic.
    let svc = service(
        MockQuoteStore::new(),
        MockJobStore::new(),
        DEFAULT_WAIT_BUDGET,
    );
    let mut bad = input(2);
    bad.plan = None;
    bad.census.push(bad.census[0].clone());
    bad.company = Some(Company {
        zip: Some("123".to_owned()),
        state: Some("California".to_owned()),
        ..Company::default()
    });
    let Err(ServiceError::Invalid(details)) = svc.prepare(&scope(), bad).await else {
        panic!("expected invalid");
    };
    let fields: Vec<&str> = details.iter().map(|d| d.field.as_str()).collect();
    for f in ["plan", "company.zip", "company.state"] {
        assert!(fields.contains(&f), "{f} in {fields:?}");
    }
    assert!(
        details.iter().any(|d| d.index == Some(2)),
        "the duplicate row is named: {details:?}"
    );

    // An HMO is the engine's 400, with its field.
    let mut hmo = input(1);
    if let Some(p) = hmo.plan.as_mut() {
        p.plan_type = Some("HMO".to_owned());
    }
    let Err(ServiceError::Invalid(details)) = svc.prepare(&scope(), hmo).await else {
        panic!("expected invalid");
    };
    assert_eq!(details[0].field, "plan.plan_type");

    // No counted employee: 422 census_required.
    let mut contractors = input(1);
    contractors.census[0].employment_type = Some(EmploymentType::Contractor);
    assert!(matches!(
        svc.prepare(&scope(), contractors).await,
        Err(ServiceError::CensusRequired)
    ));
}

#[tokio::test]
async fn an_hr_request_may_omit_the_plan_when_it_sends_market_plans() {
    let svc = service(
        MockQuoteStore::new(),
        MockJobStore::new(),
        DEFAULT_WAIT_BUDGET,
    );
    let mut hr = input(1);
    hr.plan = None;
    hr.plan_required = false;
    hr.rules = CensusRules { require_dob: false };
    hr.market_plans = vec![
        serde_json::from_value(json!({
            "carrier": "Kaiser", "planName": "Gold HMO", "planType": "HMO", "metalTier": "Gold",
            "hsaEligible": false, "pmpmCents": 60_000
        }))
        .unwrap(),
    ];
    let ready = svc.prepare(&scope(), hr).await.unwrap();
    let p = ready.preview();
    assert!(p.base_from_market);
    assert!(!p.simulates, "nothing to build on: no simulation");
    assert_eq!(p.ignored_plans.len(), 1);
}

/// A quote store that keeps the stored lead and accepts the update.
fn recording_quotes(
    lead: Arc<Mutex<Option<Lead>>>,
    updated: Arc<Mutex<Vec<QuoteStatus>>>,
) -> MockQuoteStore {
    let mut quotes = MockQuoteStore::new();
    quotes.expect_insert_lead().returning(move |l| {
        *lead.lock().unwrap() = Some(l.clone());
        Ok(())
    });
    quotes
        .expect_update_quote()
        .returning(move |_, _, status, body, events| {
            assert!(events.is_empty());
            assert!(body.price_on_plan().unwrap().answer.is_some());
            updated.lock().unwrap().push(status);
            Ok(())
        });
    quotes
}

#[tokio::test]
async fn with_a_zero_budget_the_lead_is_stored_with_a_queued_job_and_answered_pending() {
    let lead = Arc::new(Mutex::new(None));
    let updated = Arc::new(Mutex::new(Vec::new()));
    let quotes = recording_quotes(Arc::clone(&lead), Arc::clone(&updated));
    let waker = Arc::new(tokio::sync::Notify::new());
    let svc = waking(quotes, MockJobStore::new(), Duration::ZERO, waker.clone());
    let ready = svc.prepare(&scope(), input(3)).await.unwrap();
    let out = svc
        .start(&scope(), ready, "digest", Instant::now())
        .await
        .unwrap();
    let Outcome::Pending(q) = out else {
        panic!("expected pending");
    };
    assert_eq!(q.status, QuoteStatus::Pricing);
    assert_eq!(q.kind, QuoteKind::PriceOnPlan);
    assert_eq!(q.request_digest.as_deref(), Some("digest"));
    let stored = lead.lock().unwrap().clone().unwrap();
    assert_eq!(stored.claimed_until_ms, None, "queued for the worker");
    assert_eq!(stored.job.kind(), JobKind::PriceOnPlan);
    assert_eq!(stored.group.status, GroupStatus::Quoted);
    assert_eq!(stored.group.census_member_count, 3);
    assert_eq!(stored.census.rows.len(), 3);
    assert_eq!(stored.census.fresh_ids.len(), 3);
    assert!(
        stored.group.domain.ends_with(".invalid"),
        "{}",
        stored.group.domain
    );
    assert_eq!(
        stored.group.address.as_ref().and_then(|a| a.zip.as_deref()),
        Some("60601"),
        "the first census ZIP is the company ZIP"
    );
    assert!(updated.lock().unwrap().is_empty(), "nothing priced yet");
    // The worker was woken.
    tokio::time::timeout(Duration::from_secs(1), waker.notified())
        .await
        .unwrap();

    // The worker's handler prices the job and finishes the quote.
    let quotes2 = {
        let mut m = recording_quotes(Arc::new(Mutex::new(None)), Arc::clone(&updated));
        let pending = q.clone();
        m.expect_quote().returning(move |_, _| Ok(pending.clone()));
        m
    };
    let handler = PriceOnPlanHandler::new(service(quotes2, MockJobStore::new(), Duration::ZERO));
    let out = handler.run(&job_of(&stored)).await.unwrap();
    assert!(out.events.is_empty() && out.result.is_none());
    assert_eq!(*updated.lock().unwrap(), vec![QuoteStatus::Ready]);
}

#[tokio::test]
async fn within_the_budget_the_request_prices_completes_its_claimed_job_and_answers() {
    let lead = Arc::new(Mutex::new(None));
    let updated = Arc::new(Mutex::new(Vec::new()));
    let quotes = recording_quotes(Arc::clone(&lead), Arc::clone(&updated));
    let mut jobs = MockJobStore::new();
    jobs.expect_complete_job()
        .withf(|claim, events, result| claim.attempt == 1 && events.is_empty() && result.is_none())
        .times(1)
        .returning(|_, _, _| Ok(true));
    let svc = service(quotes, jobs, DEFAULT_WAIT_BUDGET);
    let mut req = input(2);
    req.company = Some(Company {
        name: Some("Acme Robotics".to_owned()),
        domain: Some("acme-robotics.example".to_owned()),
        zip: Some("60601".to_owned()),
        state: Some("IL".to_owned()),
        external_id: Some("C-1".to_owned()),
    });
    let ready = svc.prepare(&scope(), req).await.unwrap();
    let Outcome::Finished(q) = svc
        .start(&scope(), ready, "digest", Instant::now())
        .await
        .unwrap()
    else {
        panic!("expected finished");
    };
    assert_eq!(q.status, QuoteStatus::Ready);
    let doc = Document::of(&q).unwrap();
    let answer = doc.answer.unwrap();
    assert_eq!(answer.versions.len(), 2);
    assert!(
        answer
            .assumptions
            .iter()
            .any(|a| a.starts_with("Plan year starts 2026-12-01"))
    );
    assert_eq!(doc.generated_at, Some(NOW));
    let stored = lead.lock().unwrap().clone().unwrap();
    assert_eq!(stored.claimed_until_ms, Some(NOW_MS + JOB_LEASE_MS));
    assert_eq!(stored.group.company_name, "Acme Robotics");
    assert_eq!(stored.group.domain, "acme-robotics.example");
    assert_eq!(stored.group.external_id.as_deref(), Some("C-1"));
}

#[tokio::test]
async fn a_quote_another_worker_finished_is_read_back() {
    let group = GroupId::from_bytes([0x42; 6]);
    let pending = pending_quote(&group);
    let mut done = pending.clone();
    done.status = QuoteStatus::Ready;
    let mut quotes = MockQuoteStore::new();
    quotes
        .expect_update_quote()
        .returning(|_, _, _, _, _| Err(StoreError::Conflict(Conflict::QuoteStatusMoved)));
    let read = done.clone();
    quotes
        .expect_quote()
        .returning(move |_, _| Ok(read.clone()));
    let svc = service(quotes, MockJobStore::new(), DEFAULT_WAIT_BUDGET);
    let ready = service(
        MockQuoteStore::new(),
        MockJobStore::new(),
        DEFAULT_WAIT_BUDGET,
    )
    .prepare(&scope(), input(1))
    .await
    .unwrap();
    let answer = ready.prepared.finish();
    let got = svc
        .finish_quote(&pending, answer, Vec::new())
        .await
        .unwrap();
    assert_eq!(got, done);
}

#[tokio::test]
async fn a_domain_held_by_an_enrolled_group_is_a_conflict() {
    let mut quotes = MockQuoteStore::new();
    quotes
        .expect_insert_lead()
        .returning(|_| Err(StoreError::Conflict(Conflict::DomainTaken)));
    let svc = service(quotes, MockJobStore::new(), DEFAULT_WAIT_BUDGET);
    let mut req = input(1);
    req.company = Some(Company {
        domain: Some("taken.example".to_owned()),
        ..Company::default()
    });
    let ready = svc.prepare(&scope(), req).await.unwrap();
    assert!(matches!(
        svc.start(&scope(), ready, "d", Instant::now()).await,
        Err(ServiceError::PriceOnPlan(PriceOnPlanRefusal::DomainTaken))
    ));
    // Known before anything is stored or charged.
    let mut held = input(1);
    held.company = Some(Company {
        domain: Some("held.example".to_owned()),
        ..Company::default()
    });
    assert!(matches!(
        svc.prepare(&scope(), held).await,
        Err(ServiceError::PriceOnPlan(PriceOnPlanRefusal::DomainTaken))
    ));
}

#[test]
fn estimates_grow_with_the_work() {
    let mut p = Document::of(&pending_quote(&GroupId::from_bytes([1; 6])))
        .unwrap()
        .preview;
    assert_eq!(estimate_secs(&p), 1);
    p.census_members = 10_000;
    assert_eq!(estimate_secs(&p), 3);
    p.simulates = false;
    assert_eq!(estimate_secs(&p), 1);
    let doc = Document::of(&pending_quote(&GroupId::from_bytes([1; 6]))).unwrap();
    assert_eq!(doc.retry_after_secs(NOW), 1);
    assert_eq!(doc.retry_after_secs(NOW - 100), 30);
}
