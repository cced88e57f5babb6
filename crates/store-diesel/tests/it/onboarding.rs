//! Onboarding checklists: a change is stored at the next revision with its
//! events and jobs in one transaction, a change made on an older revision
//! changes nothing, the go-live lands with the last step, and the scope
//! holds.

use domain::document::JobPayload;
use domain::document::job::VerificationDue;
use domain::event::EventType;
use domain::group::{CompanyState, GroupStatus};
use domain::ids::JobId;
use domain::job::{JobKind, NewJob};
use domain::mode::Mode;
use domain::onboarding::{Checklist, StepStatus, fixtures};
use domain::page::PageRequest;
use domain::quote::QuoteStatus;
use domain::scope::Scope;
use domain::services::quotes::group_pricing_digest;
use domain::store::{Conflict, OnboardingWrite, StoreError};

use crate::census::{member, write};
use crate::groups::group;
use crate::harness::{TestDb, partner};
use crate::lookups::{enrollment, quote};
use crate::on_both;
use crate::outbox::event;

/// An enrolled group of `scope`: its enrollment.
pub(crate) async fn enrolled(t: &TestDb, scope: &Scope) -> domain::enrollment::Enrollment {
    let s = &t.stores;
    let g = group(1, scope, "one.com", 100);
    s.groups.insert_group(&g).await.unwrap();
    s.census
        .replace_census(
            scope,
            &write(
                scope,
                &g.id,
                vec![member(Some("E1"), None, "60601")],
                1,
                200,
            ),
        )
        .await
        .unwrap();
    let mut q = quote(1, scope, &g.id, 300);
    q.status = QuoteStatus::Ready;
    q.rating_digest = group_pricing_digest(&s.groups.group(scope, &g.id).await.unwrap());
    s.quotes.insert_quote(&q, &[]).await.unwrap();
    let e = enrollment(1, &q, 400);
    s.quotes
        .insert_enrollment(&e, &[], None, &[])
        .await
        .unwrap();
    e
}

fn change(
    e: &domain::enrollment::Enrollment,
    revision: i64,
    checklist: Checklist,
    go_live: bool,
) -> OnboardingWrite {
    OnboardingWrite {
        enrollment_id: e.id.clone(),
        group_id: e.group_id.clone(),
        revision,
        checklist,
        events: vec![event(u32::try_from(revision).unwrap() + 900, &e.scope, 500)],
        jobs: Vec::new(),
        go_live,
        now: 500,
    }
}

async fn a_change_is_stored_at_the_next_revision_and_an_older_one_changes_nothing(t: TestDb) {
    let s = &t.stores;
    let (_, a) = partner(s, 1).await;
    let e = enrolled(&t, &a).await;
    let read = s.quotes.enrollment(&a, &e.id).await.unwrap();
    assert_eq!(
        (read.onboarding.clone(), read.onboarding_revision),
        (Checklist::default(), 0)
    );

    let mut c = Checklist::default();
    c.save_profile(fixtures::profile(), 500);
    let mut first = change(&e, 0, c.clone(), false);
    first.jobs.push(NewJob {
        id: JobId::from_bytes([0, 7, 0, 0, 0, 1]),
        scope: a.clone(),
        group_id: Some(e.group_id.clone()),
        payload: JobPayload::BusinessVerification(VerificationDue {
            enrollment_id: e.id.clone(),
            ein: "222222222".to_owned(),
            requested_at: 500,
        }),
        run_after_ms: 0,
    });
    s.onboarding.save_onboarding(&a, &first).await.unwrap();
    let read = s.quotes.enrollment(&a, &e.id).await.unwrap();
    assert_eq!(read.onboarding, c);
    assert_eq!(read.onboarding_revision, 1);
    assert_eq!(
        read.onboarding.company_profile.status,
        StepStatus::Completed
    );
    // The job and the event landed with it.
    let job = s
        .jobs
        .claim_job(&[JobKind::BusinessVerification], 1_000, 1_000)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(job.job.payload, first.jobs[0].payload);
    let events = s
        .outbox
        .events(
            &a,
            &domain::event::EventFilter::since(0),
            &PageRequest::first(50),
        )
        .await
        .unwrap();
    assert_eq!(events.items.len(), 1);

    // A change made on revision 0 again is refused and changes nothing.
    let stale = change(&e, 0, Checklist::default(), false);
    let refused = s.onboarding.save_onboarding(&a, &stale).await;
    assert!(
        matches!(
            refused,
            Err(StoreError::Conflict(Conflict::OnboardingMoved))
        ),
        "{refused:?}"
    );
    assert_eq!(s.quotes.enrollment(&a, &e.id).await.unwrap(), read);
    let events = s
        .outbox
        .events(
            &a,
            &domain::event::EventFilter::since(0),
            &PageRequest::first(50),
        )
        .await
        .unwrap();
    assert_eq!(
        events.items.len(),
        1,
        "the refused change's event is not stored"
    );
    // The operator finds it by its group.
    assert_eq!(
        s.onboarding.find_enrollment(&e.group_id).await.unwrap(),
        read
    );
}
on_both!(a_change_is_stored_at_the_next_revision_and_an_older_one_changes_nothing);

async fn the_last_step_takes_the_group_live_in_the_same_transaction(t: TestDb) {
    let s = &t.stores;
    let (_, a) = partner(s, 1).await;
    let e = enrolled(&t, &a).await;
    let mut w = change(&e, 0, fixtures::completed(), true);
    w.events.push(domain::event::NewEvent {
        data: domain::document::EventData::GroupStateChanged(
            domain::document::event::GroupStateChanged {
                group_id: e.group_id.clone(),
                company_domain: "one.com".to_owned(),
                previous_state: "sandbox".to_owned(),
                state: "prod".to_owned(),
                forced: false,
            },
        ),
        ..event(901, &a, 500)
    });
    s.onboarding.save_onboarding(&a, &w).await.unwrap();
    let g = s.groups.group(&a, &e.group_id).await.unwrap();
    assert_eq!(
        (g.status, g.company_state),
        (GroupStatus::Active, Some(CompanyState::Prod))
    );
    let events = s
        .outbox
        .events(
            &a,
            &domain::event::EventFilter::since(0),
            &PageRequest::first(50),
        )
        .await
        .unwrap();
    // Both events, claimed for delivery in the order they were written.
    let claimed = s.outbox.claim_deliveries(500_000, 1_000, 10).await.unwrap();
    let domains: Vec<String> = claimed
        .iter()
        .map(|e| {
            e.event.data.data()["company_domain"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(domains, ["d900.example.com", "one.com"]);
    assert!(
        events
            .items
            .iter()
            .all(|e| e.event.event_type() == EventType::GroupStateChanged)
    );

    // A second go-live finds the company live: nothing is written.
    let again = change(&e, 1, fixtures::completed(), true);
    let refused = s.onboarding.save_onboarding(&a, &again).await;
    assert!(
        matches!(
            refused,
            Err(StoreError::Conflict(Conflict::CompanyStateMoved))
        ),
        "{refused:?}"
    );
    assert_eq!(
        s.quotes
            .enrollment(&a, &e.id)
            .await
            .unwrap()
            .onboarding_revision,
        1
    );
}
on_both!(the_last_step_takes_the_group_live_in_the_same_transaction);

async fn another_partner_or_mode_does_not_reach_the_checklist(t: TestDb) {
    let s = &t.stores;
    let (_, a) = partner(s, 1).await;
    let (_, b) = partner(s, 2).await;
    let e = enrolled(&t, &a).await;
    let a_live = Scope::new(a.partner.clone(), Mode::Live);
    for other in [&b, &a_live] {
        let w = change(&e, 0, fixtures::completed(), false);
        let refused = s.onboarding.save_onboarding(other, &w).await;
        assert!(matches!(refused, Err(StoreError::NotFound)), "{refused:?}");
    }
    let read = s.quotes.enrollment(&a, &e.id).await.unwrap();
    assert_eq!(
        (read.onboarding, read.onboarding_revision),
        (Checklist::default(), 0)
    );
    let missing = s
        .onboarding
        .find_enrollment(&group(9, &a, "x.com", 1).id)
        .await;
    assert!(matches!(missing, Err(StoreError::NotFound)), "{missing:?}");
}
on_both!(another_partner_or_mode_does_not_reach_the_checklist);
