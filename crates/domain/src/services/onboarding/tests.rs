//! Unit tests of the onboarding service against the port mocks: the mocks
//! share one enrollment and group, so a test can walk the checklist, and
//! every stored write is recorded with its events.

use std::sync::{Arc, Mutex};

use pricing_core::RateCard;

use super::*;
use crate::document::enrollment::SignatoryDoc;
use crate::enrollment::OnboardingMode;
use crate::event::{EventType, NewEvent};
use crate::group::CompanyState;
use crate::group::GroupStatus;
use crate::ids::{PartnerId, QuoteId};
use crate::onboarding::Checklist;
use crate::onboarding::fields::AddressInput;
use crate::ports::{
    MockBusinessVerifier, MockClock, MockEntropy, MockJobWaker, MockMicroDeposits, MockSealer,
};
use crate::store::{Conflict, OnboardingWrite, StoreError};
use crate::store::{MockGroupStore, MockOnboardingStore, MockQuoteStore};

const NOW: i64 = 1_795_275_000;

fn scope(mode: Mode) -> Scope {
    Scope::new(PartnerId::from_bytes([0xaa; 6]), mode)
}

fn enrollment_id() -> EnrollmentId {
    EnrollmentId::from_bytes([0x11; 6])
}

/// What the mocks share.
#[derive(Clone)]
struct World {
    enrollment: Arc<Mutex<Enrollment>>,
    group: Arc<Mutex<Group>>,
    writes: Arc<Mutex<Vec<OnboardingWrite>>>,
    /// Revision conflicts to answer before accepting writes.
    races: Arc<Mutex<u32>>,
}

impl World {
    fn new(mode: Mode, onboarding_mode: OnboardingMode) -> Self {
        let scope = scope(mode);
        let group = Group {
            id: GroupId::from_bytes([0x42; 6]),
            partner_id: scope.partner.clone(),
            mode,
            status: GroupStatus::Enrolled,
            company_name: "Acme".into(),
            domain: "acme.example".into(),
            external_id: None,
            address: None,
            contact: None,
            current_coverage: None,
            census_member_count: 12,
            rating_digest: None,
            company_state: Some(CompanyState::Sandbox),
            created_at: NOW,
            updated_at: NOW,
        };
        let mut body = crate::document::fixtures::enrollment();
        body.signatory = Some(SignatoryDoc {
            name: "Dana Kim".into(),
            email: "dana@acme.example".into(),
        });
        let enrollment = Enrollment {
            id: enrollment_id(),
            scope,
            group_id: group.id.clone(),
            quote_id: QuoteId::from_bytes([0x33; 6]),
            onboarding_mode,
            body,
            onboarding: Checklist::default(),
            onboarding_revision: 0,
            created_at: NOW,
        };
        Self {
            enrollment: Arc::new(Mutex::new(enrollment)),
            group: Arc::new(Mutex::new(group)),
            writes: Arc::default(),
            races: Arc::default(),
        }
    }

    fn events(&self) -> Vec<(EventType, serde_json::Value)> {
        self.writes
            .lock()
            .unwrap()
            .iter()
            .flat_map(|w| w.events.iter().map(|e| (e.event_type(), e.data.data())))
            .collect()
    }

    fn checklist(&self) -> Checklist {
        self.enrollment.lock().unwrap().onboarding.clone()
    }
}

struct Options {
    answer: VerifierAnswer,
    wakes: usize,
}

fn service(world: &World, options: Options) -> Onboarding {
    let mut quotes = MockQuoteStore::new();
    let e = Arc::clone(&world.enrollment);
    quotes
        .expect_enrollment()
        .returning(move |_, _| Ok(e.lock().unwrap().clone()));
    let e = Arc::clone(&world.enrollment);
    quotes.expect_quote().returning(move |_, id| {
        let e = e.lock().unwrap();
        assert_eq!(*id, e.quote_id);
        Ok(crate::quote::Quote {
            acceptance: None,
            id: e.quote_id.clone(),
            kind: crate::quote::QuoteKind::Quote,
            request_digest: None,
            scope: e.scope.clone(),
            group_id: e.group_id.clone(),
            status: crate::quote::QuoteStatus::Ready,
            rating_digest: None,
            expires_at: NOW + 86_400,
            // Diamond, 80 % employer contribution.
            body: crate::document::fixtures::market_document(),
            created_at: NOW,
        })
    });
    let mut groups = MockGroupStore::new();
    let g = Arc::clone(&world.group);
    groups
        .expect_group()
        .returning(move |_, _| Ok(g.lock().unwrap().clone()));
    let mut store = MockOnboardingStore::new();
    let (e, g, writes, races) = (
        Arc::clone(&world.enrollment),
        Arc::clone(&world.group),
        Arc::clone(&world.writes),
        Arc::clone(&world.races),
    );
    store.expect_save_onboarding().returning(move |_, w| {
        let mut races = races.lock().unwrap();
        if *races > 0 {
            *races -= 1;
            return Err(StoreError::Conflict(Conflict::OnboardingMoved));
        }
        let mut e = e.lock().unwrap();
        assert_eq!(w.revision, e.onboarding_revision);
        e.onboarding = w.checklist.clone();
        e.onboarding_revision += 1;
        if w.go_live {
            let mut g = g.lock().unwrap();
            g.company_state = Some(CompanyState::Prod);
            g.status = GroupStatus::Active;
        }
        writes.lock().unwrap().push(w.clone());
        Ok(())
    });
    let e = Arc::clone(&world.enrollment);
    store
        .expect_find_enrollment()
        .returning(move |_| Ok(e.lock().unwrap().clone()));
    let mut clock = MockClock::new();
    clock.expect_now_ms().return_const(NOW * 1000);
    let mut entropy = MockEntropy::new();
    let mut next = 0u8;
    entropy.expect_fill().returning(move |buf| {
        for b in buf.iter_mut() {
            next = next.wrapping_add(1);
            *b = next;
        }
    });
    let mut sealer = MockSealer::new();
    sealer
        .expect_seal()
        .returning(|plain, _| plain.iter().map(|b| b ^ 0x5a).collect());
    let mut verifier = MockBusinessVerifier::new();
    let answer = options.answer;
    verifier.expect_verify().returning(move |_| answer.clone());
    let mut deposits = MockMicroDeposits::new();
    deposits.expect_amounts().return_const([32, 45]);
    let mut waker = MockJobWaker::new();
    waker
        .expect_job_queued()
        .times(options.wakes)
        .return_const(());
    let card = RateCard::builtin_2026().unwrap();
    let plans = crate::plans::catalogue(&card, crate::plans::BUILTIN_CATALOGUE).unwrap();
    Onboarding::new(OnboardingPorts {
        quotes: Arc::new(quotes),
        groups: Arc::new(groups),
        store: Arc::new(store),
        clock: Arc::new(clock),
        entropy: Arc::new(entropy),
        sealer: Arc::new(sealer),
        verifier: Arc::new(verifier),
        deposits: Arc::new(deposits),
        waker: Arc::new(waker),
        plans: Arc::new(plans),
        census: Arc::new(crate::store::MockCensusStore::new()),
        mailbox: crate::services::mailbox::Mailbox::new(Arc::new(crate::ports::MockSealer::new())),
    })
}

fn verified() -> Options {
    Options {
        answer: VerifierAnswer::Verified,
        wakes: 0,
    }
}

fn profile() -> ProfileInput {
    ProfileInput {
        legal_name: Some("Acme Manufacturing LLC".into()),
        ein: Some("12-3456789".into()),
        entity_type: Some("llc".into()),
        address: Some(AddressInput {
            line1: Some("1 Main St".into()),
            line2: None,
            city: Some("Chicago".into()),
            state: Some("IL".into()),
            zip: Some("60601".into()),
        }),
        phone: Some("(312) 555-0142".into()),
        signatory_title: Some("CFO".into()),
    }
}

fn bank() -> BankInput {
    BankInput {
        routing_number: Some("011000015".into()),
        account_number: Some("000123456789".into()),
        account_type: Some("checking".into()),
        holder_name: Some("Acme Manufacturing LLC".into()),
    }
}

fn sign() -> SignInput {
    SignInput {
        signer_name: Some("Dana Kim".into()),
        accepted: Some(true),
        ip: Some("127.0.0.1".into()),
        user_agent: Some("test".into()),
    }
}

/// Walks every required step.
async fn complete(svc: &Onboarding, s: &Scope) {
    let id = enrollment_id();
    svc.save_profile(s, &id, profile()).await.unwrap();
    svc.request_verification(s, &id).await.unwrap();
    svc.save_bank(s, &id, bank()).await.unwrap();
    svc.confirm_deposits(s, &id, &[45, 32]).await.unwrap();
    svc.save_plan(s, &id, PlanInput::default()).await.unwrap();
    svc.sign_plan(s, &id, sign()).await.unwrap();
}

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
