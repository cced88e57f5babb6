//! Reads by id alone (operator commands), the latest job result, and a partner's activity.

use domain::census::ElectionsWrite;
use domain::enrollment::{Enrollment, OnboardingMode};
use domain::event::{DeliveryState, NewEvent};
use domain::group::{CompanyState, GroupStatus};
use domain::ids::{EnrollmentId, GroupId, JobId, PartnerId, QuoteId};
use domain::job::{JobKind, NewJob};
use domain::mode::Mode;
use domain::partner::Activity;
use domain::quote::{Quote, QuoteKind, QuoteStatus};
use domain::scope::Scope;
use domain::services::quotes::group_pricing_digest;
use domain::store::{Conflict, GroupAdvance, StoreError};
use store_diesel::Stores;

use crate::census::{member, write};
use crate::groups::group;
use crate::harness::{TestDb, partner};
use crate::jobs::claim;
use crate::on_both;
use crate::outbox::event;

pub fn quote(n: u16, scope: &Scope, group: &GroupId, at: i64) -> Quote {
    let [a, b] = n.to_be_bytes();
    Quote {
        acceptance: None,
        kind: QuoteKind::Quote,
        request_digest: None,
        id: QuoteId::from_bytes([0, 0, 0, 0x51, a, b]),
        scope: scope.clone(),
        group_id: group.clone(),
        status: QuoteStatus::InReview,
        rating_digest: Some(format!("digest-{n}")),
        expires_at: at + 30 * 86_400,
        body: domain::document::fixtures::market_document(),
        created_at: at,
    }
}

pub fn enrollment(n: u16, q: &Quote, at: i64) -> Enrollment {
    let [a, b] = n.to_be_bytes();
    Enrollment {
        id: EnrollmentId::from_bytes([0, 0, 0, 0xe0, a, b]),
        scope: q.scope.clone(),
        group_id: q.group_id.clone(),
        quote_id: q.id.clone(),
        onboarding_mode: OnboardingMode::Embedded,
        body: domain::document::fixtures::enrollment(),
        onboarding: domain::onboarding::Checklist::default(),
        onboarding_revision: 0,
        created_at: at,
    }
}

fn job(n: u8, scope: &Scope, group: &GroupId, kind: JobKind, at_ms: i64) -> NewJob {
    NewJob {
        id: JobId::from_bytes([0, 2, 0, 0, 0, n]),
        scope: scope.clone(),
        group_id: Some(group.clone()),
        payload: crate::jobs::payload(kind, u32::from(n)),
        run_after_ms: at_ms,
    }
}

/// Enqueues `j`, claims it and completes it with `result`.
async fn run_to_done(s: &Stores, j: &NewJob, result: Option<&str>) {
    s.jobs.enqueue(j).await.unwrap();
    let c = s
        .jobs
        .claim_job(&[j.kind()], j.run_after_ms, 60_000)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(c.job.id, j.id);
    assert!(
        s.jobs
            .complete_job(&claim(&j.id, c.attempts), &[], result)
            .await
            .unwrap()
    );
}

async fn latest(s: &Stores, scope: &Scope, g: &GroupId, kind: JobKind) -> Option<String> {
    s.jobs.latest_result(scope, g, kind).await.unwrap()
}

async fn groups_and_quotes_are_found_by_id_in_any_scope(t: TestDb) {
    let s = &t.stores;
    let (_, a) = partner(s, 1).await;
    let (_, b) = partner(s, 2).await;
    let b_live = Scope::new(b.partner.clone(), Mode::Live);
    let g1 = group(1, &a, "acme.com", 100);
    let g2 = group(2, &b_live, "beta.com", 101);
    for g in [&g1, &g2] {
        s.groups.insert_group(g).await.unwrap();
    }
    assert_eq!(s.groups.find_group(&g1.id).await.unwrap(), g1);
    assert_eq!(s.groups.find_group(&g2.id).await.unwrap(), g2);
    // What it finds is the current row.
    let moved = s
        .groups
        .advance_group(
            &b_live,
            &g2.id,
            &GroupAdvance {
                status: GroupStatus::Enrolled,
                company_state: Some(CompanyState::Sandbox),
                events: Vec::new(),
                now: 150,
            },
        )
        .await
        .unwrap();
    assert_eq!(s.groups.find_group(&g2.id).await.unwrap(), moved);
    assert!(matches!(
        s.groups.find_group(&GroupId::from_bytes([9; 6])).await,
        Err(StoreError::NotFound)
    ));

    let q1 = quote(1, &a, &g1.id, 200);
    let q2 = quote(2, &b_live, &g2.id, 201);
    for q in [&q1, &q2] {
        s.quotes.insert_quote(q, &[]).await.unwrap();
    }
    assert_eq!(s.quotes.find_quote(&q1.id).await.unwrap(), q1);
    let found = s.quotes.find_quote(&q2.id).await.unwrap();
    assert_eq!(found, q2);
    assert_eq!(found.scope, b_live);
    // The scoped read still refuses other scopes.
    for other in [&a, &b] {
        assert!(matches!(
            s.quotes.quote(other, &q2.id).await,
            Err(StoreError::NotFound)
        ));
    }
    // A status change is what it reads back.
    s.quotes
        .update_quote(&b_live, &q2.id, QuoteStatus::Ready, &q2.body, &[])
        .await
        .unwrap();
    assert_eq!(
        s.quotes.find_quote(&q2.id).await.unwrap().status,
        QuoteStatus::Ready
    );
    assert!(matches!(
        s.quotes.find_quote(&QuoteId::from_bytes([9; 6])).await,
        Err(StoreError::NotFound)
    ));
}
on_both!(groups_and_quotes_are_found_by_id_in_any_scope);

async fn the_latest_result_is_the_newest_done_jobs_of_the_scope(t: TestDb) {
    let s = &t.stores;
    let (_, a) = partner(s, 1).await;
    let (_, b) = partner(s, 2).await;
    let a_live = Scope::new(a.partner.clone(), Mode::Live);
    let g = group(1, &a, "acme.com", 100);
    s.groups.insert_group(&g).await.unwrap();
    let mc = JobKind::MarketComparison;
    assert_eq!(latest(s, &a, &g.id, mc).await, None);

    run_to_done(s, &job(1, &a, &g.id, mc, 1_000), Some("r1")).await;
    assert_eq!(latest(s, &a, &g.id, mc).await.as_deref(), Some("r1"));
    // Only for that scope, group and kind.
    assert_eq!(latest(s, &b, &g.id, mc).await, None);
    assert_eq!(latest(s, &a_live, &g.id, mc).await, None);
    assert_eq!(latest(s, &a, &GroupId::from_bytes([9; 6]), mc).await, None);
    assert_eq!(latest(s, &a, &g.id, JobKind::PriceOnPlan).await, None);
    // Another kind's result for the group does not leak into this kind.
    run_to_done(
        s,
        &job(2, &a, &g.id, JobKind::PriceOnPlan, 1_500),
        Some("pop"),
    )
    .await;
    assert_eq!(latest(s, &a, &g.id, mc).await.as_deref(), Some("r1"));
    assert_eq!(
        latest(s, &a, &g.id, JobKind::PriceOnPlan).await.as_deref(),
        Some("pop")
    );

    // A newer done job's result wins.
    run_to_done(s, &job(3, &a, &g.id, mc, 2_000), Some("r3")).await;
    assert_eq!(latest(s, &a, &g.id, mc).await.as_deref(), Some("r3"));

    // An open job has no result yet; a failed one never gets one.
    let failing = job(4, &a, &g.id, mc, 3_000);
    s.jobs.enqueue(&failing).await.unwrap();
    assert_eq!(latest(s, &a, &g.id, mc).await.as_deref(), Some("r3"));
    let c = s
        .jobs
        .claim_job(&[mc], 3_000, 60_000)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(c.job.id, failing.id);
    assert!(
        s.jobs
            .fail_job(&claim(&failing.id, c.attempts), None, "gave up")
            .await
            .unwrap()
    );
    assert!(
        !s.jobs
            .complete_job(&claim(&failing.id, c.attempts), &[], Some("late"))
            .await
            .unwrap()
    );
    assert_eq!(latest(s, &a, &g.id, mc).await.as_deref(), Some("r3"));

    // A running job superseded by a census write cannot store its result.
    let running = job(5, &a, &g.id, mc, 4_000);
    s.jobs.enqueue(&running).await.unwrap();
    let c = s
        .jobs
        .claim_job(&[mc], 4_000, 60_000)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(c.job.id, running.id);
    let w = write(&a, &g.id, vec![member(Some("E1"), None, "60601")], 7, 5);
    s.census.replace_census(&a, &w).await.unwrap();
    assert!(
        !s.jobs
            .complete_job(&claim(&running.id, c.attempts), &[], Some("superseded"))
            .await
            .unwrap()
    );
    assert_eq!(latest(s, &a, &g.id, mc).await.as_deref(), Some("r3"));

    // The census write's job, done without a result, is now the newest.
    let c = s
        .jobs
        .claim_job(&[mc], 5_000, 60_000)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(Some(&c.job), w.job.as_ref());
    assert!(s.jobs.complete_job(&c.claim(), &[], None).await.unwrap());
    assert_eq!(latest(s, &a, &g.id, mc).await, None);
}
on_both!(the_latest_result_is_the_newest_done_jobs_of_the_scope);

fn ping(n: u32, scope: &Scope) -> NewEvent {
    NewEvent {
        data: domain::event::EventData::Ping {},
        ..event(n, scope, 10)
    }
}

async fn activity_counts_what_the_partner_did_in_each_mode(t: TestDb) {
    let s = &t.stores;
    let (p1, a) = partner(s, 1).await;
    let (p2, b) = partner(s, 2).await;
    let (p3, _) = partner(s, 3).await;
    let a_live = Scope::new(a.partner.clone(), Mode::Live);

    // Test mode: three groups, one of which keeps a census; one emptied.
    let g1 = group(1, &a, "one.com", 100);
    let g2 = group(2, &a, "two.com", 101);
    let g3 = group(3, &a, "three.com", 102);
    // Live mode: one group with a census. Partner 2: one of each.
    let g4 = group(4, &a_live, "four.com", 103);
    let g5 = group(5, &b, "five.com", 104);
    for g in [&g1, &g2, &g3, &g4, &g5] {
        s.groups.insert_group(g).await.unwrap();
    }
    let census = [
        (&a, &g1, 1u8, 2usize),
        (&a, &g3, 2, 1),
        (&a_live, &g4, 3, 3),
    ];
    for (sc, g, seed, n) in census {
        let rows = (0..n)
            .map(|i| member(Some(&format!("E{i}")), None, "60601"))
            .collect();
        s.census
            .replace_census(sc, &write(sc, &g.id, rows, seed, 200))
            .await
            .unwrap();
    }
    s.census
        .replace_census(&a, &write(&a, &g3.id, vec![], 4, 201))
        .await
        .unwrap();
    s.census
        .replace_census(
            &b,
            &write(&b, &g5.id, vec![member(Some("E1"), None, "60601")], 5, 202),
        )
        .await
        .unwrap();

    let mut quotes = [
        quote(1, &a, &g1.id, 300),
        quote(2, &a, &g1.id, 301),
        quote(3, &a_live, &g4.id, 302),
        quote(4, &b, &g5.id, 303),
    ];
    // Priced on the groups' current census, so they can be enrolled on.
    for q in &mut quotes {
        q.rating_digest =
            group_pricing_digest(&s.groups.group(&q.scope, &q.group_id).await.unwrap());
    }
    for q in &quotes {
        s.quotes.insert_quote(q, &[]).await.unwrap();
    }
    for (n, q) in [(1, &quotes[0]), (2, &quotes[3])] {
        s.quotes
            .insert_enrollment(&enrollment(n, q, 400), &[], None, &[])
            .await
            .unwrap();
    }

    // Pings: two delivered, one retrying and one failed in test mode; one
    // delivered in live mode and one for partner 2; a delivered event of
    // another type does not count.
    let list = vec![
        ping(1, &a),
        ping(2, &a),
        ping(3, &a),
        ping(4, &a),
        event(5, &a, 10),
        ping(6, &a_live),
        ping(7, &b),
    ];
    s.outbox.append(&list, 10_000).await.unwrap();
    let claimed = s.outbox.claim_deliveries(10_000, 1_000, 100).await.unwrap();
    assert_eq!(claimed.len(), list.len());
    for c in &claimed {
        let id = &c.event.id;
        let (state, status, next) = if *id == ping(3, &a).id {
            (DeliveryState::Pending, Some(500), Some(20_000))
        } else if *id == ping(4, &a).id {
            (DeliveryState::Failed, Some(410), None)
        } else {
            (DeliveryState::Delivered, Some(204), None)
        };
        let lease = c.lease_until_ms.unwrap();
        assert!(
            s.outbox
                .record_attempt(id, lease, state, status, next, None)
                .await
                .unwrap()
        );
    }

    let activity = |groups, groups_with_census, quotes, enrollments, pings_delivered| Activity {
        groups,
        groups_with_census,
        quotes,
        enrollments,
        pings_delivered,
    };
    let got = s.partners.activity(&p1.id, Mode::Test).await.unwrap();
    assert_eq!(got, activity(3, 1, 2, 1, 2));
    let got = s.partners.activity(&p1.id, Mode::Live).await.unwrap();
    assert_eq!(got, activity(1, 1, 1, 0, 1));
    let got = s.partners.activity(&p2.id, Mode::Test).await.unwrap();
    assert_eq!(got, activity(1, 1, 1, 1, 1));
    let got = s.partners.activity(&p2.id, Mode::Live).await.unwrap();
    assert_eq!(got, activity(0, 0, 0, 0, 0));
    let got = s.partners.activity(&p3.id, Mode::Test).await.unwrap();
    assert_eq!(got, activity(0, 0, 0, 0, 0));
    assert!(matches!(
        s.partners
            .activity(&PartnerId::from_bytes([9; 6]), Mode::Test)
            .await,
        Err(StoreError::NotFound)
    ));
}
on_both!(activity_counts_what_the_partner_did_in_each_mode);

/// An enrollment is checked against the group's census under the group's
/// lock: a quote priced on an earlier census is refused even when the
/// caller's own check ran before that census was written.
async fn an_enrollment_on_an_earlier_census_is_refused_under_the_lock(t: TestDb) {
    let s = &t.stores;
    let (_, a) = partner(s, 1).await;
    let g = group(1, &a, "one.com", 100);
    s.groups.insert_group(&g).await.unwrap();
    let rows = vec![member(Some("E1"), None, "60601")];
    s.census
        .replace_census(&a, &write(&a, &g.id, rows, 1, 200))
        .await
        .unwrap();
    let mut q = quote(1, &a, &g.id, 300);
    q.status = QuoteStatus::Ready;
    q.rating_digest = Some("an earlier census".to_owned());
    s.quotes.insert_quote(&q, &[]).await.unwrap();
    let refused = s
        .quotes
        .insert_enrollment(&enrollment(1, &q, 400), &[], None, &[])
        .await;
    assert!(
        matches!(refused, Err(StoreError::Conflict(Conflict::QuoteStale))),
        "{refused:?}"
    );
    let group = s.groups.group(&a, &g.id).await.unwrap();
    assert_eq!(
        (group.status, group.company_state),
        (GroupStatus::Quoted, None)
    );
    assert!(
        s.quotes
            .group_enrollment(&a, &g.id)
            .await
            .unwrap()
            .is_none()
    );
}
on_both!(an_enrollment_on_an_earlier_census_is_refused_under_the_lock);

/// Completing a job drops the group's earlier finished jobs of its kind:
/// the table keeps about one job per group and kind.
async fn a_completion_drops_the_groups_earlier_finished_jobs(t: TestDb) {
    let s = &t.stores;
    let (_, a) = partner(s, 1).await;
    let (g1, g2) = (group(1, &a, "one.com", 100), group(2, &a, "two.com", 101));
    for g in [&g1, &g2] {
        s.groups.insert_group(g).await.unwrap();
    }
    let old = job(1, &a, &g1.id, JobKind::MarketComparison, 1_000);
    let other_group = job(2, &a, &g2.id, JobKind::MarketComparison, 1_500);
    let other_kind = job(3, &a, &g1.id, JobKind::PriceOnPlan, 1_700);
    let new = job(4, &a, &g1.id, JobKind::MarketComparison, 2_000);
    for j in [&old, &other_group, &other_kind, &new] {
        run_to_done(s, j, Some("r")).await;
    }
    // A job that no longer exists is NotFound; one that does, but is not
    // running, is a refused (false) failure.
    let gone = s.jobs.fail_job(&claim(&old.id, 1), None, "late").await;
    assert!(matches!(gone, Err(StoreError::NotFound)), "{gone:?}");
    for kept in [&other_group, &other_kind, &new] {
        assert!(
            !s.jobs
                .fail_job(&claim(&kept.id, 1), None, "late")
                .await
                .unwrap()
        );
    }
    assert_eq!(
        latest(s, &a, &g1.id, JobKind::MarketComparison)
            .await
            .as_deref(),
        Some("r")
    );
}
on_both!(a_completion_drops_the_groups_earlier_finished_jobs);

/// A member update keeps the enrollment columns stored under the lock: an
/// update built from a read taken before an election never undoes it.
async fn a_member_update_keeps_the_stored_election(t: TestDb) {
    use domain::census::MemberWrite;
    use domain::ids::MemberId;
    use domain::member::{EnrollmentStatus, InvitationStatus, MemberState};
    let s = &t.stores;
    let (_, a) = partner(s, 1).await;
    let g = group(1, &a, "one.com", 100);
    s.groups.insert_group(&g).await.unwrap();
    s.census
        .replace_census(
            &a,
            &write(&a, &g.id, vec![member(Some("E1"), None, "60601")], 1, 200),
        )
        .await
        .unwrap();
    let before = s.census.census(&a, &g.id).await.unwrap().remove(0);
    let elected = MemberState {
        enrollment: EnrollmentStatus::Enrolled,
        invitation: InvitationStatus::Suppressed,
        tier: Some("family".to_owned()),
        ..MemberState::default()
    };
    s.census
        .record_elections(
            &a,
            &ElectionsWrite {
                group_id: g.id.clone(),
                states: vec![(before.id.clone(), elected.clone())],
                events: Vec::new(),
                jobs: Vec::new(),
                now: 300,
            },
        )
        .await
        .unwrap();
    // An update whose state was read before the election.
    let mut m = before.member.clone();
    m.zip = "60614".to_owned();
    let job = job(9, &a, &g.id, JobKind::MarketComparison, 400_000);
    let updated = s
        .census
        .update_member(
            &a,
            &MemberWrite {
                group_id: g.id.clone(),
                id: before.id.clone(),
                member: m,
                state: before.state.clone(),
                job,
                now: 400,
            },
        )
        .await
        .unwrap();
    assert_eq!(updated.member.zip, "60614");
    assert_eq!(updated.state, elected);
    let stored = s
        .census
        .member(&a, &g.id, &MemberId::parse(before.id.as_str()).unwrap())
        .await
        .unwrap();
    assert_eq!(stored.state, elected);
}
on_both!(a_member_update_keeps_the_stored_election);
