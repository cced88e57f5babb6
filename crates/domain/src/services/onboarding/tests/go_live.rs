//! Completing the checklist: live at once in test mode, in review in live mode, races.

use super::*;

#[tokio::test]
async fn completing_the_checklist_in_test_mode_takes_the_company_live_once() {
    let world = World::new(Mode::Test, OnboardingMode::Hosted);
    let svc = service(&world, verified());
    let s = scope(Mode::Test);
    complete(&svc, &s).await;
    let last = world.writes.lock().unwrap().last().cloned().unwrap();
    assert!(last.go_live);
    let types: Vec<EventType> = last.events.iter().map(NewEvent::event_type).collect();
    assert_eq!(
        types,
        [EventType::EnrollmentUpdated, EventType::GroupStateChanged]
    );
    assert_eq!(last.events[0].data.data()["status"], "active");
    // Made together, their ids ascend in the order they were made.
    assert!(last.events[0].id < last.events[1].id);
    assert_eq!(
        last.events[0].data.data()["onboarding"]["percent_complete"],
        100
    );
    let changed = last.events[1].data.data();
    assert_eq!(
        (
            changed["previous_state"].as_str(),
            changed["state"].as_str()
        ),
        (Some("sandbox"), Some("prod"))
    );
    assert!(changed.get("forced").is_none());
    let all = world.events();
    let state_changes = all
        .iter()
        .filter(|(t, _)| *t == EventType::GroupStateChanged)
        .count();
    assert_eq!(state_changes, 1);
    let view = svc.view(&s, &enrollment_id()).await.unwrap();
    assert_eq!(view.status, EnrollmentStatus::Active);
    assert_eq!(view.progress.blocking_remaining, 0);
    // The required steps are closed; the invitations stay open.
    let err = svc
        .save_profile(&s, &enrollment_id(), profile())
        .await
        .unwrap_err();
    assert_eq!(err.message(), "the company is live");
    let invited = svc.send_invitations(&s, &enrollment_id()).await.unwrap();
    assert_eq!(invited.status, StepStatus::Completed);
}

#[tokio::test]
async fn completing_it_in_live_mode_waits_in_review() {
    let world = World::new(Mode::Live, OnboardingMode::Hosted);
    let svc = service(&world, verified());
    let s = scope(Mode::Live);
    complete(&svc, &s).await;
    assert!(world.writes.lock().unwrap().iter().all(|w| !w.go_live));
    let view = svc.view(&s, &enrollment_id()).await.unwrap();
    assert_eq!(view.status, EnrollmentStatus::InReview);
    let last = world.writes.lock().unwrap().last().cloned().unwrap();
    assert_eq!(last.events[0].data.data()["status"], "in_review");
}

#[tokio::test]
async fn a_lost_race_is_made_again_on_the_new_checklist() {
    let world = World::new(Mode::Test, OnboardingMode::Hosted);
    *world.races.lock().unwrap() = 2;
    let svc = service(&world, verified());
    svc.save_profile(&scope(Mode::Test), &enrollment_id(), profile())
        .await
        .unwrap();
    assert_eq!(world.writes.lock().unwrap().len(), 1);
    assert_eq!(world.enrollment.lock().unwrap().onboarding_revision, 1);
}

#[tokio::test]
async fn the_operator_settles_a_live_review() {
    let world = World::new(Mode::Live, OnboardingMode::Hosted);
    let svc = service(
        &world,
        Options {
            answer: VerifierAnswer::Pending { due_at: None },
            wakes: 0,
        },
    );
    let s = scope(Mode::Live);
    let gid = world.group.lock().unwrap().id.clone();
    let err = svc.review(&gid, Review::Verify).await.unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Onboarding(OnboardingRefusal::NotInReview)
        ),
        "{err:?}"
    );
    svc.save_profile(&s, &enrollment_id(), profile())
        .await
        .unwrap();
    let step = svc
        .request_verification(&s, &enrollment_id())
        .await
        .unwrap();
    assert_eq!(step.status, StepStatus::Pending);
    let step = svc
        .review(&gid, Review::Reject("The EIN is not the company's".into()))
        .await
        .unwrap();
    assert_eq!(step.status, StepStatus::ActionRequired);
    assert_eq!(step.errors[0].message, "The EIN is not the company's");
}
