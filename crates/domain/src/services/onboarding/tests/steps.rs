//! Each checklist step against the port mocks: storing, refusing, waiting, sealing, signing.

use super::*;

#[tokio::test]
async fn a_profile_change_is_stored_with_an_enrollment_updated_event() {
    let world = World::new(Mode::Test, OnboardingMode::Hosted);
    let svc = service(&world, verified());
    let s = scope(Mode::Test);
    let step = svc
        .save_profile(&s, &enrollment_id(), profile())
        .await
        .unwrap();
    assert_eq!(step.status, StepStatus::Completed);
    let events = world.events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].0, EventType::EnrollmentUpdated);
    assert_eq!(
        events[0].1,
        serde_json::json!({
            "enrollment_id": enrollment_id().as_str(), "group_id": "grp_424242424242",
            "status": "onboarding",
            "onboarding": {"percent_complete": 25, "blocking_remaining": 3},
            "step": {"id": "company_profile", "status": "completed"}
        })
    );
    // The same profile again changes no status: no event.
    svc.save_profile(&s, &enrollment_id(), profile())
        .await
        .unwrap();
    assert_eq!(world.events().len(), 1);
}

#[tokio::test]
async fn bad_input_names_every_field_and_stores_nothing() {
    let world = World::new(Mode::Test, OnboardingMode::Hosted);
    let svc = service(&world, verified());
    let mut bad = profile();
    bad.ein = Some("07-1234567".into());
    bad.phone = Some("12".into());
    let err = svc
        .save_profile(&scope(Mode::Test), &enrollment_id(), bad)
        .await
        .unwrap_err();
    let ServiceError::Invalid(details) = err else {
        panic!("{err:?}");
    };
    let fields: Vec<&str> = details.iter().map(|d| d.field.as_str()).collect();
    assert_eq!(fields, ["ein", "phone"]);
    assert!(world.writes.lock().unwrap().is_empty());
}

#[tokio::test]
async fn the_api_changes_embedded_enrollments_only() {
    let s = scope(Mode::Test);
    let hosted = World::new(Mode::Test, OnboardingMode::Hosted);
    let api = service(&hosted, verified()).embedded_only();
    let mut bad = profile();
    bad.ein = Some("07-1234567".into());
    // Refused before the input is judged, and nothing stored.
    let err = api
        .save_profile(&s, &enrollment_id(), bad)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ServiceError::Onboarding(OnboardingRefusal::HostedOnly)),
        "{err:?}"
    );
    let err = api
        .send_invitations(&s, &enrollment_id())
        .await
        .unwrap_err();
    assert!(
        matches!(err, ServiceError::Onboarding(OnboardingRefusal::HostedOnly)),
        "{err:?}"
    );
    assert!(hosted.writes.lock().unwrap().is_empty());
    // Reading is open to both modes.
    assert!(api.view(&s, &enrollment_id()).await.is_ok());

    let embedded = World::new(Mode::Test, OnboardingMode::Embedded);
    let api = service(&embedded, verified()).embedded_only();
    let step = api
        .save_profile(&s, &enrollment_id(), profile())
        .await
        .unwrap();
    assert_eq!(step.status, StepStatus::Completed);
    assert_eq!(embedded.writes.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_step_waits_for_its_prerequisite() {
    let world = World::new(Mode::Test, OnboardingMode::Hosted);
    let svc = service(&world, verified());
    let s = scope(Mode::Test);
    let err = svc
        .request_verification(&s, &enrollment_id())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Onboarding(OnboardingRefusal::Blocked {
                step: StepId::BusinessVerification,
                needs: StepId::CompanyProfile
            })
        ),
        "{err:?}"
    );
    let err = svc
        .save_plan(&s, &enrollment_id(), PlanInput::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.message(),
        "plan_setup can start once banking is completed"
    );
    assert!(world.writes.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_refusal_is_a_step_status_not_an_error() {
    let world = World::new(Mode::Test, OnboardingMode::Embedded);
    let svc = service(
        &world,
        Options {
            answer: VerifierAnswer::Refused("The EIN does not match the legal name".into()),
            wakes: 0,
        },
    );
    let s = scope(Mode::Test);
    svc.save_profile(&s, &enrollment_id(), profile())
        .await
        .unwrap();
    let step = svc
        .request_verification(&s, &enrollment_id())
        .await
        .unwrap();
    assert_eq!(step.status, StepStatus::ActionRequired);
    assert_eq!(step.errors[0].code, "verification_failed");
    assert_eq!(step.errors[0].field, "ein");
}

#[tokio::test]
async fn a_delayed_answer_queues_its_job_and_wakes_the_worker() {
    let world = World::new(Mode::Test, OnboardingMode::Hosted);
    let svc = service(
        &world,
        Options {
            answer: VerifierAnswer::Pending {
                due_at: Some(NOW + 60),
            },
            wakes: 1,
        },
    );
    let s = scope(Mode::Test);
    svc.save_profile(&s, &enrollment_id(), profile())
        .await
        .unwrap();
    let step = svc
        .request_verification(&s, &enrollment_id())
        .await
        .unwrap();
    assert_eq!(step.status, StepStatus::Pending);
    let writes = world.writes.lock().unwrap().clone();
    let job = &writes[1].jobs[0];
    assert_eq!(job.run_after_ms, (NOW + 60) * 1000);
    let JobPayload::BusinessVerification(due) = &job.payload else {
        panic!("{job:?}");
    };
    assert_eq!((due.ein.as_str(), due.requested_at), ("123456789", NOW));
    // The job's answer completes the step; a stale request's is dropped.
    let stale = VerificationDue {
        requested_at: NOW - 1,
        ..due.clone()
    };
    assert_eq!(
        svc.settle(&s, &enrollment_id(), Some(&stale), VerifierAnswer::Verified)
            .await
            .unwrap(),
        None
    );
    let settled = svc
        .settle(&s, &enrollment_id(), Some(due), VerifierAnswer::Verified)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(settled.status, StepStatus::Completed);
}

#[tokio::test]
async fn the_account_number_is_sealed_and_deposits_are_checked() {
    let world = World::new(Mode::Test, OnboardingMode::Hosted);
    let svc = service(&world, verified());
    let s = scope(Mode::Test);
    svc.save_bank(&s, &enrollment_id(), bank()).await.unwrap();
    let stored = serde_json::to_string(&world.checklist()).unwrap();
    assert!(!stored.contains("000123456789"), "{stored}");
    let account = world.checklist().banking.data.unwrap();
    assert_eq!(account.last4, "6789");
    let sealed = STANDARD.decode(account.account_number_sealed).unwrap();
    let opened: Vec<u8> = sealed.iter().map(|b| b ^ 0x5a).collect();
    assert_eq!(opened, b"000123456789");
    let wrong = svc
        .confirm_deposits(&s, &enrollment_id(), &[1, 2])
        .await
        .unwrap();
    assert_eq!(wrong.status, StepStatus::Pending);
    assert_eq!(wrong.errors[0].field, "amounts_cents");
    let err = svc
        .confirm_deposits(&s, &enrollment_id(), &[32])
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    let ok = svc
        .confirm_deposits(&s, &enrollment_id(), &[32, 45])
        .await
        .unwrap();
    assert_eq!(ok.status, StepStatus::Completed);
    let gid = world.group.lock().unwrap().id.clone();
    assert_eq!(svc.deposits(&gid).await.unwrap(), [32, 45]);
}

#[tokio::test]
async fn signing_records_the_documents_and_the_signer() {
    let world = World::new(Mode::Test, OnboardingMode::Hosted);
    let svc = service(&world, verified());
    let s = scope(Mode::Test);
    svc.save_bank(&s, &enrollment_id(), bank()).await.unwrap();
    svc.confirm_deposits(&s, &enrollment_id(), &[32, 45])
        .await
        .unwrap();
    let err = svc
        .sign_plan(&s, &enrollment_id(), sign())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Onboarding(OnboardingRefusal::NothingToSign)
        ),
        "{err:?}"
    );
    let saved = svc
        .save_plan(&s, &enrollment_id(), PlanInput::default())
        .await
        .unwrap();
    // The defaults are the quote's.
    let data = serde_json::to_value(&saved.data).unwrap();
    assert_eq!(
        (
            &data["plan_id"],
            &data["employer_contribution_pct"],
            &data["min_hours_per_week"]
        ),
        (
            &serde_json::json!("diamond"),
            &serde_json::json!(80),
            &serde_json::json!(30)
        )
    );
    let mut other = sign();
    other.signer_name = Some("Someone Else".into());
    let err = svc
        .sign_plan(&s, &enrollment_id(), other)
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    let step = svc.sign_plan(&s, &enrollment_id(), sign()).await.unwrap();
    assert_eq!(step.status, StepStatus::Completed);
    let documents = svc.documents(&s, &enrollment_id()).await.unwrap();
    let signature = world
        .checklist()
        .plan_setup
        .data
        .unwrap()
        .signature
        .unwrap();
    assert_eq!(signature.email, "dana@acme.example");
    assert_eq!(signature.ip.as_deref(), Some("127.0.0.1"));
    let hashes: Vec<(String, String)> = documents
        .iter()
        .map(|d| (d.name.to_owned(), d.sha256()))
        .collect();
    let signed: Vec<(String, String)> = signature
        .documents
        .into_iter()
        .map(|d| (d.name, d.sha256))
        .collect();
    assert_eq!(hashes, signed);
    assert_eq!(
        documents.iter().map(|d| d.name).collect::<Vec<_>>(),
        ["plan_summary", "service_agreement", "privacy_notice"]
    );
    let err = svc
        .sign_plan(&s, &enrollment_id(), sign())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Onboarding(OnboardingRefusal::AlreadySigned)
        ),
        "{err:?}"
    );
}
