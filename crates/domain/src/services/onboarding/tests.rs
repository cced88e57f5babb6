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

pub(super) const NOW: i64 = 1_795_275_000;

pub(super) fn scope(mode: Mode) -> Scope {
    Scope::new(PartnerId::from_bytes([0xaa; 6]), mode)
}

pub(super) fn enrollment_id() -> EnrollmentId {
    EnrollmentId::from_bytes([0x11; 6])
}

/// What the mocks share.
#[derive(Clone)]
pub(super) struct World {
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

pub(super) struct Options {
    answer: VerifierAnswer,
    wakes: usize,
}

pub(super) fn service(world: &World, options: Options) -> Onboarding {
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

pub(super) fn verified() -> Options {
    Options {
        answer: VerifierAnswer::Verified,
        wakes: 0,
    }
}

pub(super) fn profile() -> ProfileInput {
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

pub(super) fn bank() -> BankInput {
    BankInput {
        routing_number: Some("011000015".into()),
        account_number: Some("000123456789".into()),
        account_type: Some("checking".into()),
        holder_name: Some("Acme Manufacturing LLC".into()),
    }
}

pub(super) fn sign() -> SignInput {
    SignInput {
        signer_name: Some("Dana Kim".into()),
        accepted: Some(true),
        ip: Some("127.0.0.1".into()),
        user_agent: Some("test".into()),
    }
}

/// Walks every required step.
pub(super) async fn complete(svc: &Onboarding, s: &Scope) {
    let id = enrollment_id();
    svc.save_profile(s, &id, profile()).await.unwrap();
    svc.request_verification(s, &id).await.unwrap();
    svc.save_bank(s, &id, bank()).await.unwrap();
    svc.confirm_deposits(s, &id, &[45, 32]).await.unwrap();
    svc.save_plan(s, &id, PlanInput::default()).await.unwrap();
    svc.sign_plan(s, &id, sign()).await.unwrap();
}

mod go_live;
mod steps;
