//! Unit tests of the enrollments service: input rules and quote refusals, then `create`, `go_live` and `go_live_any` against the port mocks (the stored enrollment and its event, every refusal before the write, the hosted portal, the group going live).

use std::sync::{Arc, Mutex};

use serde_json::json;

use super::*;
use crate::error::Code;
use crate::event::EventType;
use crate::ids::PartnerId;
use crate::ports::{MockClock, MockEntropy};
use crate::quote::{Quote, QuoteKind, QuoteStatus};
use crate::store::{GroupAdvance, MockGroupStore, MockQuoteStore};

#[test]
fn a_signatory_needs_a_name_and_an_email() {
    let ok = Signatory {
        name: "Dana Lee".into(),
        email: "dana@acme-mfg.com".into(),
    };
    assert!(check_signatory(&ok).is_ok());
    let bad = Signatory {
        name: "  ".into(),
        email: "dana".into(),
    };
    match check_signatory(&bad) {
        Err(ServiceError::Invalid(d)) => {
            let fields: Vec<&str> = d.iter().map(|f| f.field.as_str()).collect();
            assert_eq!(fields, ["signatory.name", "signatory.email"]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_unusable_quote_is_410_or_409() {
    assert_eq!(quote_refusal(QuoteUse::Expired).code(), Code::QuoteExpired);
    let stale = quote_refusal(QuoteUse::Stale);
    assert_eq!(stale.code(), Code::QuoteExpired);
    assert!(stale.message().contains("census changed"), "{stale}");
    assert_eq!(quote_refusal(QuoteUse::InReview).code(), Code::Conflict);
    assert_eq!(quote_refusal(QuoteUse::NotPriced).code(), Code::Conflict);
}

// ---------------------------------------------------------------------------
// The service against the port mocks
// ---------------------------------------------------------------------------

const NOW_MS: i64 = 1_795_275_000_123;
const NOW: i64 = 1_795_275_000;

fn clock() -> MockClock {
    let mut c = MockClock::new();
    c.expect_now_ms().return_const(NOW_MS);
    c
}

/// Entropy that yields 0, 1, 2, … across successive fills.
fn counting_entropy() -> MockEntropy {
    let mut e = MockEntropy::new();
    let mut next = 0u8;
    e.expect_fill().returning(move |buf| {
        for b in buf.iter_mut() {
            *b = next;
            next = next.wrapping_add(1);
        }
    });
    e
}

fn scope() -> Scope {
    Scope::new(PartnerId::from_bytes([0xaa; 6]), Mode::Test)
}

fn live() -> Scope {
    Scope::new(PartnerId::from_bytes([0xaa; 6]), Mode::Live)
}

fn group_id() -> GroupId {
    GroupId::from_bytes([0x42; 6])
}

fn quote_id() -> QuoteId {
    QuoteId::from_bytes([0x51; 6])
}

fn group(sc: &Scope, company_state: Option<CompanyState>) -> Group {
    Group {
        id: group_id(),
        partner_id: sc.partner.clone(),
        mode: sc.mode,
        status: GroupStatus::Quoted,
        company_name: "Acme".to_owned(),
        domain: "acme.com".to_owned(),
        external_id: None,
        address: None,
        contact: None,
        current_coverage: None,
        census_member_count: 3,
        rating_digest: Some("d1".to_owned()),
        company_state,
        created_at: NOW - 3_600,
        updated_at: NOW - 3_600,
    }
}

/// A ready, current quote of the group that expires in a day.
fn quote(sc: &Scope) -> Quote {
    Quote {
        acceptance: None,
        kind: QuoteKind::Quote,
        request_digest: None,
        id: quote_id(),
        scope: sc.clone(),
        group_id: group_id(),
        status: QuoteStatus::Ready,
        // Priced on the group's census "d1", no address ZIP.
        rating_digest: Some(crate::census::pricing_digest("d1", None)),
        expires_at: NOW + 86_400,
        body: crate::document::fixtures::market_document(),
        created_at: NOW - 60,
    }
}

fn input(mode: OnboardingMode) -> EnrollmentInput {
    EnrollmentInput {
        quote_id: quote_id(),
        signatory: Signatory {
            name: "Dana Lee".to_owned(),
            email: "dana@acme.com".to_owned(),
        },
        onboarding_mode: mode,
        start_date: None,
    }
}

fn service(groups: MockGroupStore, quotes: MockQuoteStore) -> Enrollments {
    Enrollments::new(
        Arc::new(groups),
        Arc::new(quotes),
        Arc::new(clock()),
        Arc::new(counting_entropy()),
    )
}

fn groups_holding(g: Group) -> MockGroupStore {
    let mut groups = MockGroupStore::new();
    let sc = Scope::new(g.partner_id.clone(), g.mode);
    groups
        .expect_group()
        .withf(move |s, id| *s == sc && *id == group_id())
        .times(1)
        .return_once(move |_, _| Ok(g));
    groups
}

/// A quote store for `sc` without an enrollment whose quote read answers
/// `found`.
fn quotes_answering(sc: &Scope, found: Result<Quote, StoreError>) -> MockQuoteStore {
    let mut quotes = MockQuoteStore::new();
    let s1 = sc.clone();
    quotes
        .expect_group_enrollment()
        .withf(move |s, id| *s == s1 && *id == group_id())
        .times(1)
        .returning(|_, _| Ok(None));
    let s2 = sc.clone();
    quotes
        .expect_quote()
        .withf(move |s, id| *s == s2 && *id == quote_id())
        .times(1)
        .return_once(move |_, _| found);
    quotes
}

type Inserted = Arc<Mutex<Vec<(Enrollment, Vec<NewEvent>)>>>;

/// Creates an enrollment in `sc` with `input` and returns what was stored.
async fn create_ok(sc: &Scope, input: EnrollmentInput) -> (EnrollmentView, Enrollment, NewEvent) {
    let inserted: Inserted = Arc::default();
    let sink = Arc::clone(&inserted);
    let mut quotes = quotes_answering(sc, Ok(quote(sc)));
    quotes
        .expect_insert_enrollment()
        .times(1)
        .returning(move |e, events, _, _| {
            sink.lock().unwrap().push((e.clone(), events.to_vec()));
            Ok(())
        });
    let view = service(groups_holding(group(sc, None)), quotes)
        .create(sc, &group_id(), input)
        .await
        .unwrap();
    let (enrollment, events) = inserted.lock().unwrap().pop().unwrap();
    assert_eq!(events.len(), 1);
    (view, enrollment, events.into_iter().next().unwrap())
}

/// `create` with a store that answers the quote read with `found` (and the
/// insert, if reached, with `insert`); returns the error.
async fn create_err(found: Result<Quote, StoreError>, insert: Option<StoreError>) -> ServiceError {
    let mut quotes = quotes_answering(&scope(), found);
    match insert {
        Some(e) => {
            quotes
                .expect_insert_enrollment()
                .times(1)
                .return_once(move |_, _, _, _| Err(e));
        }
        None => {
            quotes.expect_insert_enrollment().never();
        }
    }
    service(groups_holding(group(&scope(), None)), quotes)
        .create(&scope(), &group_id(), input(OnboardingMode::Hosted))
        .await
        .unwrap_err()
}

// ---------------------------------------------------------------------------
// create
// ---------------------------------------------------------------------------

#[tokio::test]
async fn create_inserts_the_enrollment_with_its_event() {
    let (view, e, event) = create_ok(&scope(), input(OnboardingMode::Hosted)).await;
    assert_eq!(view.enrollment, e);
    assert_eq!(view.company_state, Some(CompanyState::Sandbox));
    assert_eq!(
        (&e.scope, &e.group_id, &e.quote_id, e.created_at),
        (&scope(), &group_id(), &quote_id(), NOW)
    );
    assert_eq!(e.onboarding_mode, OnboardingMode::Hosted);
    assert!(e.id.as_str().starts_with("enr_"));
    assert_eq!(event.event_type(), EventType::EnrollmentCreated);
    assert_eq!((&event.scope, event.created_at), (&scope(), NOW));
    assert_eq!(
        event.data.data(),
        json!({
            "enrollment_id": e.id.as_str(),
            "group_id": group_id().as_str(),
            "quote_id": quote_id().as_str(),
            "start_date": "2026-12-01",
            "company_domain": "acme.com",
            "onboarding_mode": "hosted",
        })
    );
    let b = &serde_json::to_value(&e.body).unwrap();
    assert_eq!(b["start_date"], "2026-12-01");
    assert_eq!(b["company_domain"], "acme.com");
    assert_eq!(b["signatory"]["email"], "dana@acme.com");
    assert_eq!(e.onboarding, crate::onboarding::Checklist::default());
    assert_eq!(e.onboarding_revision, 0);
}

#[tokio::test]
async fn a_second_enrollment_is_refused_before_the_quote_is_read() {
    let mut quotes = MockQuoteStore::new();
    quotes.expect_group_enrollment().times(1).returning(|_, _| {
        Ok(Some(Enrollment {
            id: EnrollmentId::from_bytes([1; 6]),
            scope: scope(),
            group_id: group_id(),
            quote_id: quote_id(),
            onboarding_mode: OnboardingMode::Hosted,
            body: crate::document::fixtures::enrollment(),
            onboarding: crate::onboarding::Checklist::default(),
            onboarding_revision: 0,
            created_at: NOW - 10,
        }))
    });
    quotes.expect_quote().never();
    quotes.expect_insert_enrollment().never();
    let err = service(groups_holding(group(&scope(), None)), quotes)
        .create(&scope(), &group_id(), input(OnboardingMode::Hosted))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Enrollment(EnrollmentRefusal::AlreadyEnrolled)
        ),
        "{err:?}"
    );
    assert_eq!(
        (err.code(), err.message()),
        (
            Code::Conflict,
            "the group already has an enrollment".to_owned()
        )
    );
}

#[tokio::test]
async fn a_quote_of_another_group_or_unknown_is_invalid() {
    let mut other = quote(&scope());
    other.group_id = GroupId::from_bytes([0x43; 6]);
    for found in [Ok(other), Err(StoreError::NotFound)] {
        match create_err(found, None).await {
            ServiceError::Invalid(d) => assert_eq!(d[0].field, "quote_id"),
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test]
async fn an_expired_or_stale_quote_is_quote_expired() {
    let mut expired = quote(&scope());
    expired.expires_at = NOW;
    let mut stale = quote(&scope());
    stale.rating_digest = Some("d0".to_owned());
    for q in [expired, stale] {
        let err = create_err(Ok(q), None).await;
        assert_eq!(err.code(), Code::QuoteExpired, "{err:?}");
    }
}

#[tokio::test]
async fn an_in_review_quote_is_a_conflict() {
    let mut q = quote(&scope());
    q.status = QuoteStatus::InReview;
    let err = create_err(Ok(q), None).await;
    assert_eq!(err.code(), Code::Conflict, "{err:?}");
    assert!(err.message().contains("in review"), "{err}");
}

#[tokio::test]
async fn a_held_domain_is_a_conflict_with_its_message() {
    let err = create_err(
        Ok(quote(&scope())),
        Some(StoreError::Conflict(Conflict::DomainTaken)),
    )
    .await;
    assert_eq!(
        (err.code(), err.message()),
        (
            Code::Conflict,
            "an enrolled group already exists for this domain".to_owned()
        )
    );
}

#[tokio::test]
async fn the_hosted_portal_suppresses_invites_in_test_mode_only() {
    for (sc, suppressed) in [(scope(), true), (live(), false)] {
        let (_, e, _) = create_ok(&sc, input(OnboardingMode::Hosted)).await;
        let portal = &serde_json::to_value(&e.body).unwrap()["employer_portal"];
        assert_eq!(portal["invite_suppressed"], suppressed, "{:?}", sc.mode);
        assert_eq!(portal["provisioned"], true);
        assert_eq!(portal["signin_url"], "http://127.0.0.1:8080/portal/sign-in");
        // The link itself lives in `portal_links`, not in the document.
        assert!(portal.get("set_password_url").is_none(), "{portal}");
    }
}

#[tokio::test]
async fn an_embedded_enrollment_has_no_employer_portal() {
    let (_, e, event) = create_ok(&scope(), input(OnboardingMode::Embedded)).await;
    assert_eq!(e.onboarding_mode, OnboardingMode::Embedded);
    assert!(e.body.employer_portal.is_none(), "{:?}", e.body);
    assert_eq!(event.data.data()["onboarding_mode"], "embedded");
    assert!(
        e.onboarding.next_steps(OnboardingMode::Embedded)[0].contains("PUT /v1/enrollments/"),
        "{:?}",
        e.onboarding
    );
}

#[tokio::test]
async fn the_start_date_defaults_to_the_quotes_plan_year_start() {
    let (_, e, event) = create_ok(&scope(), input(OnboardingMode::Hosted)).await;
    assert_eq!(
        serde_json::to_value(&e.body).unwrap()["start_date"],
        "2026-12-01"
    );
    assert_eq!(event.data.data()["start_date"], "2026-12-01");
    let mut given = input(OnboardingMode::Hosted);
    given.start_date = Some(time::macros::date!(2027 - 01 - 01));
    let (_, e, event) = create_ok(&scope(), given).await;
    assert_eq!(
        serde_json::to_value(&e.body).unwrap()["start_date"],
        "2027-01-01"
    );
    assert_eq!(event.data.data()["start_date"], "2027-01-01");
}

// ---------------------------------------------------------------------------
// go_live
// ---------------------------------------------------------------------------

/// A group store holding the group of `sc` in `sandbox` that expects it to
/// advance to `active`/`prod` with one `group.state_changed` event.
/// A quote store holding the group's enrollment with `checklist`.
fn enrolled(sc: &Scope, checklist: crate::onboarding::Checklist) -> MockQuoteStore {
    let mut quotes = MockQuoteStore::new();
    let s = sc.clone();
    quotes.expect_group_enrollment().returning(move |_, _| {
        Ok(Some(Enrollment {
            id: EnrollmentId::from_bytes([1; 6]),
            scope: s.clone(),
            group_id: group_id(),
            quote_id: quote_id(),
            onboarding_mode: OnboardingMode::Hosted,
            body: crate::document::fixtures::enrollment(),
            onboarding: checklist.clone(),
            onboarding_revision: 3,
            created_at: NOW - 10,
        }))
    });
    quotes
}

fn advancing(sc: &Scope) -> MockGroupStore {
    advancing_forced(sc, true)
}

fn advancing_forced(sc: &Scope, forced: bool) -> MockGroupStore {
    let mut groups = groups_holding(group(sc, Some(CompanyState::Sandbox)));
    let s = sc.clone();
    groups
        .expect_advance_group()
        .withf(move |scope, id, change| {
            let GroupAdvance {
                status,
                company_state,
                events,
                now,
            } = change;
            *scope == s
                && *id == group_id()
                && *status == GroupStatus::Active
                && *company_state == Some(CompanyState::Prod)
                && *now == NOW
                && events.len() == 1
                && events[0].event_type() == EventType::GroupStateChanged
                && events[0].scope == s
                && events[0].created_at == NOW
                && events[0].data.data() == {
                    let mut want = json!({
                        "group_id": group_id().as_str(),
                        "company_domain": "acme.com",
                        "previous_state": "sandbox",
                        "state": "prod",
                    });
                    if forced {
                        want["forced"] = json!(true);
                    }
                    want
                }
        })
        .times(1)
        .returning(|sc, _, change| {
            let mut g = group(sc, change.company_state);
            g.status = change.status;
            g.updated_at = change.now;
            Ok(g)
        });
    groups
}

#[tokio::test]
async fn go_live_moves_a_sandbox_company_to_prod_with_one_event() {
    // Without a completed checklist the event says it was forced.
    let incomplete = enrolled(&scope(), crate::onboarding::Checklist::default());
    let g = service(advancing(&scope()), incomplete)
        .go_live(&scope(), &group_id())
        .await
        .unwrap();
    assert_eq!(
        (g.status, g.company_state),
        (GroupStatus::Active, Some(CompanyState::Prod))
    );
    // After the checklist (live mode's review), it was not.
    let complete = enrolled(&scope(), crate::onboarding::fixtures::completed());
    service(advancing_forced(&scope(), false), complete)
        .go_live(&scope(), &group_id())
        .await
        .unwrap();
}

#[tokio::test]
async fn go_live_needs_a_sandbox_company() {
    for (state, needle) in [
        (None, "no provisioned company"),
        (Some(CompanyState::Prod), "already live"),
    ] {
        let mut groups = groups_holding(group(&scope(), state));
        groups.expect_advance_group().never();
        match service(groups, MockQuoteStore::new())
            .go_live(&scope(), &group_id())
            .await
        {
            Err(e) if e.code() == Code::Conflict => {
                assert!(e.message().contains(needle), "{e}");
            }
            other => panic!("{state:?}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn go_live_any_works_in_the_scope_of_the_group_found() {
    let mut groups = advancing(&live());
    groups
        .expect_find_group()
        .withf(|id| *id == group_id())
        .times(1)
        .returning(|_| Ok(group(&live(), Some(CompanyState::Sandbox))));
    let g = service(
        groups,
        enrolled(&live(), crate::onboarding::Checklist::default()),
    )
    .go_live_any(&group_id())
    .await
    .unwrap();
    assert_eq!((g.mode, g.status), (Mode::Live, GroupStatus::Active));

    let mut groups = MockGroupStore::new();
    groups
        .expect_find_group()
        .times(1)
        .returning(|_| Err(StoreError::NotFound));
    groups.expect_group().never();
    groups.expect_advance_group().never();
    let err = service(groups, MockQuoteStore::new())
        .go_live_any(&group_id())
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::NotFound), "{err:?}");
}
