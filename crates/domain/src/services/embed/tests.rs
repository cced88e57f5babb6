//! Unit tests of the embed service against the port mocks: one session
//! kept by a mock store that honours versions and records its writes.

use std::sync::{Arc, Mutex};

use super::*;
use crate::embed::EmbedSession;
use crate::group::GroupStatus;
use crate::ids::{GroupId, PartnerId, QuoteId};
use crate::partner::{Partner, PartnerKind};
use crate::ports::{MockClock, MockEntropy, MockJobWaker, MockSealer};
use crate::scope::Scope;
use crate::services::EmbedRefusal;
use crate::store::{MockEmbedStore, MockGroupStore, MockPartnerStore, MockQuoteStore};

const NOW: i64 = 1_795_266_840;
const TOKEN: &str = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

struct World {
    stored: Arc<Mutex<StoredEmbed>>,
    writes: Arc<Mutex<Vec<EmbedWrite>>>,
}

fn scope(mode: Mode) -> Scope {
    Scope::new(PartnerId::from_bytes([2; 6]), mode)
}

fn group(mode: Mode) -> Group {
    Group {
        id: GroupId::from_bytes([3; 6]),
        partner_id: scope(mode).partner,
        mode,
        status: GroupStatus::Quoted,
        company_name: "Acme".into(),
        domain: "acme.com".into(),
        external_id: None,
        address: None,
        contact: None,
        current_coverage: None,
        census_member_count: 2,
        rating_digest: None,
        company_state: None,
        created_at: NOW,
        updated_at: NOW,
    }
}

fn quote(mode: Mode) -> Quote {
    Quote {
        acceptance: None,
        id: QuoteId::from_bytes([4; 6]),
        kind: crate::quote::QuoteKind::Quote,
        request_digest: None,
        scope: scope(mode),
        group_id: GroupId::from_bytes([3; 6]),
        status: crate::quote::QuoteStatus::Ready,
        rating_digest: group_pricing_digest(&group(mode)),
        expires_at: NOW + 86_400,
        body: crate::document::fixtures::market_document(),
        created_at: NOW,
    }
}

fn service(mode: Mode, wakes: usize) -> (EmbedSessions, World) {
    let stored = StoredEmbed {
        session: EmbedSession {
            id: EmbedSessionId::from_bytes([1; 6]),
            scope: scope(mode),
            group_id: GroupId::from_bytes([3; 6]),
            quote_id: QuoteId::from_bytes([4; 6]),
            created_at: NOW,
            expires_at: NOW + 1_800,
        },
        token_hash: crate::portal::digest(TOKEN),
        state: EmbedState::default(),
        version: 0,
    };
    let world = World {
        stored: Arc::new(Mutex::new(stored)),
        writes: Arc::new(Mutex::new(Vec::new())),
    };
    let mut store = MockEmbedStore::new();
    let s = Arc::clone(&world.stored);
    store.expect_embed().returning(move |hash| {
        let s = s.lock().unwrap().clone();
        Ok((s.token_hash == hash).then_some(s))
    });
    let (s, w) = (Arc::clone(&world.stored), Arc::clone(&world.writes));
    store.expect_save_embed().returning(move |write| {
        let mut s = s.lock().unwrap();
        if s.version != write.version {
            return Err(StoreError::Conflict(Conflict::EmbedMoved));
        }
        s.version += 1;
        s.state = write.state.clone();
        w.lock().unwrap().push(write.clone());
        Ok(())
    });
    let mut quotes = MockQuoteStore::new();
    quotes.expect_quote().returning(move |_, _| Ok(quote(mode)));
    let mut groups = MockGroupStore::new();
    groups.expect_group().returning(move |_, _| Ok(group(mode)));
    let mut partners = MockPartnerStore::new();
    partners.expect_partner().returning(|id| {
        Ok(Partner::new(
            id.clone(),
            "P".into(),
            PartnerKind::HrPlatform,
            None,
        ))
    });
    let mut clock = MockClock::new();
    clock.expect_now_ms().return_const(NOW * 1000 + 5_000);
    let mut entropy = MockEntropy::new();
    entropy.expect_fill().returning(|b| b.fill(7));
    let sealer = || {
        let mut sealer = MockSealer::new();
        sealer.expect_sign().returning(|p, m| [p, m].concat());
        sealer.expect_seal().returning(|m, _| m.to_vec());
        sealer
    };
    let mut waker = MockJobWaker::new();
    waker.expect_job_queued().times(wakes).return_const(());
    let card = pricing_core::RateCard::builtin_2026().unwrap();
    let plans = crate::plans::catalogue(&card, crate::plans::BUILTIN_CATALOGUE).unwrap();
    let ports = EmbedPorts {
        groups: Arc::new(groups),
        quotes: Arc::new(quotes),
        partners: Arc::new(partners),
        store: Arc::new(store),
        sealer: Arc::new(sealer()),
        clock: Arc::new(clock),
        entropy: Arc::new(entropy),
        waker: Arc::new(waker),
        mailbox: Mailbox::new(Arc::new(sealer())),
        plans: Arc::new(plans),
        public_base_url: "http://127.0.0.1:8080".into(),
    };
    (EmbedSessions::new(ports, 30.0), world)
}

fn refusal(e: ServiceError) -> EmbedRefusal {
    match e {
        ServiceError::Embed(r) => r,
        e => panic!("{e:?}"),
    }
}

#[tokio::test]
async fn an_address_outside_the_domain_is_refused_and_changes_nothing() {
    let (svc, world) = service(Mode::Test, 0);
    for other in ["jane@other.com", "jane@acme.com.evil.io"] {
        let err = svc.send_code(TOKEN, other).await.unwrap_err();
        assert_eq!(refusal(err), EmbedRefusal::EmailNotAllowed);
    }
    let err = svc.send_code(TOKEN, "not an address").await.unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    assert!(world.writes.lock().unwrap().is_empty());
}

#[tokio::test]
async fn test_mode_codes_are_424242_and_five_wrong_ones_void_it() {
    let (svc, world) = service(Mode::Test, 0);
    let masked = svc.send_code(TOKEN, " Jane@HR.Acme.com ").await.unwrap();
    assert_eq!(masked, "j\u{2022}\u{2022}\u{2022}@hr.acme.com");
    // No email in test mode: no job.
    assert!(world.writes.lock().unwrap()[0].jobs.is_empty());
    for remaining in [4, 3] {
        let err = svc.verify(TOKEN, "111111").await.unwrap_err();
        assert_eq!(
            refusal(err),
            EmbedRefusal::VerificationFailed {
                attempts_remaining: remaining
            }
        );
    }
    svc.verify(TOKEN, "424242").await.unwrap();
    let state = world.stored.lock().unwrap().state.clone();
    assert_eq!(state.verified_email.as_deref(), Some("jane@hr.acme.com"));
    assert!(state.code.is_none());
}

#[tokio::test]
async fn live_mode_emails_a_random_code_through_the_queue() {
    let (svc, world) = service(Mode::Live, 1);
    svc.send_code(TOKEN, "jane@acme.com").await.unwrap();
    let writes = world.writes.lock().unwrap();
    assert_eq!(writes[0].jobs.len(), 1);
    let digest = writes[0].state.code.as_ref().unwrap().digest.clone();
    // The entropy mock fills 7s: the code is 0x07070707 % 10^6.
    let code = format!("{:06}", 0x0707_0707_u32 % 1_000_000);
    assert_eq!(
        digest,
        svc.code_digest(&EmbedSessionId::from_bytes([1; 6]), &code)
    );
    assert_ne!(code, TEST_CODE);
}

#[tokio::test]
async fn accepting_needs_a_verified_address_and_records_the_event() {
    let (svc, world) = service(Mode::Test, 0);
    let err = svc.accept(TOKEN, "Jane Roe").await.unwrap_err();
    assert_eq!(refusal(err), EmbedRefusal::NotVerified);
    let err = svc.documents(TOKEN).await.unwrap_err();
    assert_eq!(refusal(err), EmbedRefusal::NotVerified);
    svc.send_code(TOKEN, "jane@acme.com").await.unwrap();
    svc.verify(TOKEN, "424242").await.unwrap();
    let docs = svc.documents(TOKEN).await.unwrap();
    assert_eq!(docs.len(), 3);
    assert!(docs[0].text.contains("Acme"), "{}", docs[0].text);
    let err = svc.accept(TOKEN, "  ").await.unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    let a = svc.accept(TOKEN, " Jane Roe ").await.unwrap();
    assert_eq!(
        (a.name.as_str(), a.email.as_str()),
        ("Jane Roe", "jane@acme.com")
    );
    let again = svc.accept(TOKEN, "Jane Roe").await.unwrap();
    assert_eq!(again, a);
    let writes = world.writes.lock().unwrap();
    let recorded: Vec<_> = writes
        .iter()
        .filter_map(|w| w.acceptance.as_ref())
        .collect();
    assert_eq!(recorded.len(), 1, "accepted once");
    let (quote, acceptance, event) = recorded[0];
    assert_eq!((quote, acceptance), (&QuoteId::from_bytes([4; 6]), &a));
    assert_eq!(
        event.data.event_type(),
        crate::event::EventType::QuoteAccepted
    );
}

#[tokio::test]
async fn an_unknown_or_expired_session_is_refused() {
    let (svc, world) = service(Mode::Test, 0);
    let err = svc.send_code("nope", "jane@acme.com").await.unwrap_err();
    assert!(matches!(err, ServiceError::NotFound), "{err:?}");
    world.stored.lock().unwrap().session.expires_at = NOW;
    let err = svc.verify(TOKEN, "424242").await.unwrap_err();
    assert_eq!(refusal(err), EmbedRefusal::SessionExpired);
    assert!(matches!(
        svc.open(TOKEN).await,
        Err(OpenError::Expired { frame_ancestors }) if frame_ancestors == "*"
    ));
}
