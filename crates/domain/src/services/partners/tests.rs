//! Unit tests of the partners service against the port mocks: partner creation with its kind defaults and id retries, API key minting and sealing, test-key re-display, bearer-token authentication, and the operator commands that stamp the clock's time.

use std::sync::{Arc, Mutex};

use mockall::Sequence;
use sha2::{Digest, Sha256};

use super::*;
use crate::api_key::KeyDigest;
use crate::partner::Capability;
use crate::ports::{MockClock, MockEntropy, MockSealer, Unseal};
use crate::store::{Conflict, MockPartnerStore};

/// The mocked clock's reading, in milliseconds.
const NOW_MS: i64 = 1_795_000_123_999;
/// The same instant in the whole seconds every stored timestamp uses.
const NOW: i64 = 1_795_000_123;

fn clock() -> MockClock {
    let mut c = MockClock::new();
    c.expect_now_ms().return_const(NOW_MS);
    c
}

/// Entropy that yields 0, 1, 2, … across successive fills, so every id and
/// key minted is distinct and predictable.
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

/// A sealer mock that behaves like authenticated encryption: the sealed
/// form is the plaintext XOR 0x5a followed by the context, and opening
/// refuses any other context.
fn xor_sealer() -> MockSealer {
    let mut s = MockSealer::new();
    s.expect_seal().returning(|plain, context| {
        let mut out: Vec<u8> = plain.iter().map(|b| b ^ 0x5a).collect();
        out.extend_from_slice(context);
        out
    });
    s.expect_open().returning(|sealed, context| {
        let cut = sealed.len().checked_sub(context.len()).ok_or(Unseal)?;
        let (body, tail) = sealed.split_at(cut);
        if tail != context {
            return Err(Unseal);
        }
        Ok(body.iter().map(|b| b ^ 0x5a).collect())
    });
    s
}

fn service(
    store: MockPartnerStore,
    clock: MockClock,
    entropy: MockEntropy,
    sealer: MockSealer,
) -> Partners {
    Partners::new(
        Arc::new(store),
        Arc::new(clock),
        Arc::new(entropy),
        Arc::new(sealer),
    )
}

fn partner_id() -> PartnerId {
    PartnerId::from_bytes([0xaa; 6])
}

fn partner(live_enabled: bool) -> Partner {
    let mut p = Partner::new(
        partner_id(),
        "Acme Benefits".to_owned(),
        PartnerKind::Broker,
        None,
    );
    p.live_enabled = live_enabled;
    p
}

fn record_for(key: &ApiKey, id: &KeyId, revoked_at: Option<i64>) -> KeyRecord {
    KeyRecord {
        id: id.clone(),
        partner_id: partner_id(),
        mode: key.mode(),
        digest: key.digest(),
        prefix: key.display_prefix(),
        sealed: None,
        created_at: NOW - 60,
        revoked_at,
    }
}

fn down() -> StoreError {
    StoreError::Unavailable(Box::new(std::io::Error::other("connection refused")))
}

fn broken() -> StoreError {
    StoreError::Internal(Box::new(std::io::Error::other("disk full")))
}

fn key_id() -> KeyId {
    KeyId::from_bytes([0x11; 6])
}

// ---------------------------------------------------------------------------
// create_partner
// ---------------------------------------------------------------------------

#[tokio::test]
async fn create_partner_mints_a_prt_id_from_entropy_and_applies_broker_defaults() {
    let mut store = MockPartnerStore::new();
    store
        .expect_insert_partner()
        .withf(|p, now| p.id.as_str() == "prt_000102030405" && p.name == "Acme" && *now == NOW)
        .times(1)
        .returning(|_, _| Ok(()));
    let svc = service(store, clock(), counting_entropy(), MockSealer::new());

    let p = svc
        .create_partner("  Acme  ", PartnerKind::Broker, None)
        .await
        .unwrap();

    assert_eq!(p.id.as_str(), "prt_000102030405");
    assert!(p.id.as_str().starts_with(PartnerId::PREFIX));
    assert_eq!(p.name, "Acme", "the name is stored trimmed");
    assert_eq!(p.kind, PartnerKind::Broker);
    assert_eq!(p.benefits_admin, BenefitsAdmin::Partner);
    assert_eq!(p.capabilities, vec![Capability::Elections]);
    assert!(!p.live_enabled, "live mode starts disabled");
}

#[tokio::test]
async fn create_partner_applies_hr_platform_defaults_and_an_explicit_admin_override() {
    let stored: Arc<Mutex<Vec<Partner>>> = Arc::default();
    let mut store = MockPartnerStore::new();
    let sink = Arc::clone(&stored);
    store
        .expect_insert_partner()
        .times(2)
        .returning(move |p, _| {
            sink.lock().unwrap().push(p.clone());
            Ok(())
        });
    let svc = service(store, clock(), counting_entropy(), MockSealer::new());

    let default = svc
        .create_partner("Payroll Co", PartnerKind::HrPlatform, None)
        .await
        .unwrap();
    assert_eq!(default.benefits_admin, BenefitsAdmin::Service);
    assert!(default.capabilities.is_empty());
    assert!(!default.live_enabled);

    let overridden = svc
        .create_partner(
            "Payroll Co",
            PartnerKind::HrPlatform,
            Some(BenefitsAdmin::Partner),
        )
        .await
        .unwrap();
    assert_eq!(overridden.benefits_admin, BenefitsAdmin::Partner);
    assert!(overridden.capabilities.is_empty());
    assert_ne!(default.id, overridden.id);

    assert_eq!(*stored.lock().unwrap(), vec![default, overridden]);
}

#[tokio::test]
async fn create_partner_rejects_blank_and_over_long_names_without_touching_any_port() {
    let too_long = "x".repeat(201);
    let padded_too_long = format!(" {} ", "é".repeat(201));
    for bad in [
        "",
        "   ",
        "\t\n",
        too_long.as_str(),
        padded_too_long.as_str(),
    ] {
        // Bare mocks: any call to the store, clock or entropy panics.
        let mut store = MockPartnerStore::new();
        store.expect_insert_partner().never();
        let svc = service(
            store,
            MockClock::new(),
            MockEntropy::new(),
            MockSealer::new(),
        );
        let err = svc
            .create_partner(bad, PartnerKind::Broker, None)
            .await
            .unwrap_err();
        let ServiceError::Invalid(fields) = err else {
            panic!("expected Invalid for {bad:?}, got {err:?}");
        };
        assert_eq!(
            fields,
            vec![FieldError::new("name", "must be 1 to 200 characters")],
            "{bad:?}"
        );
    }
}

#[tokio::test]
async fn create_partner_accepts_exactly_200_characters_counted_as_chars() {
    for name in [
        "x".repeat(200),
        "é".repeat(200),
        format!("  {}  ", "y".repeat(200)),
    ] {
        let mut store = MockPartnerStore::new();
        store
            .expect_insert_partner()
            .times(1)
            .returning(|_, _| Ok(()));
        let svc = service(store, clock(), counting_entropy(), MockSealer::new());
        let p = svc
            .create_partner(&name, PartnerKind::Broker, None)
            .await
            .unwrap();
        assert_eq!(p.name.chars().count(), 200);
        assert_eq!(p.name, name.trim());
    }
}

#[tokio::test]
async fn create_partner_retries_an_id_collision_with_a_fresh_id() {
    let mut seq = Sequence::new();
    let mut store = MockPartnerStore::new();
    store
        .expect_insert_partner()
        .withf(|p, _| p.id.as_str() == "prt_000102030405")
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _| Err(StoreError::Conflict(Conflict::IdTaken)));
    store
        .expect_insert_partner()
        .withf(|p, now| p.id.as_str() == "prt_060708090a0b" && *now == NOW)
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _| Ok(()));
    let svc = service(store, clock(), counting_entropy(), MockSealer::new());

    let p = svc
        .create_partner("Acme", PartnerKind::Broker, None)
        .await
        .unwrap();
    assert_eq!(p.id.as_str(), "prt_060708090a0b");
}

#[tokio::test]
async fn create_partner_gives_up_after_three_colliding_ids() {
    let tried: Arc<Mutex<Vec<PartnerId>>> = Arc::default();
    let sink = Arc::clone(&tried);
    let mut store = MockPartnerStore::new();
    store
        .expect_insert_partner()
        .times(3)
        .returning(move |p, _| {
            sink.lock().unwrap().push(p.id.clone());
            Err(StoreError::Conflict(Conflict::IdTaken))
        });
    let svc = service(store, clock(), counting_entropy(), MockSealer::new());

    let err = svc
        .create_partner("Acme", PartnerKind::Broker, None)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ServiceError::Conflict(Conflict::IdTaken)),
        "{err:?}"
    );
    let tried = tried.lock().unwrap();
    let ids: Vec<&str> = tried.iter().map(PartnerId::as_str).collect();
    assert_eq!(
        ids,
        vec!["prt_000102030405", "prt_060708090a0b", "prt_0c0d0e0f1011"],
        "every attempt uses a fresh id"
    );
}

#[tokio::test]
async fn create_partner_does_not_retry_other_store_failures() {
    let mut store = MockPartnerStore::new();
    store
        .expect_insert_partner()
        .times(1)
        .returning(|_, _| Err(down()));
    let svc = service(store, clock(), counting_entropy(), MockSealer::new());
    let err = svc
        .create_partner("Acme", PartnerKind::Broker, None)
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::Unavailable(_)), "{err:?}");
}

// ---------------------------------------------------------------------------
// create_key
// ---------------------------------------------------------------------------

/// With counting entropy, the first key's secret is bytes 0..16 and its
/// record id bytes 16..22.
const FIRST_TEST_KEY: &str = "psk_test_000102030405060708090a0b0c0d0e0f";
const FIRST_LIVE_KEY: &str = "psk_live_000102030405060708090a0b0c0d0e0f";
const FIRST_KEY_ID: &str = "key_101112131415";

#[tokio::test]
async fn create_key_seals_a_test_key_under_its_record_id_context() {
    let mut sealer = MockSealer::new();
    sealer
        .expect_seal()
        .withf(|plain, context| {
            plain == FIRST_TEST_KEY.as_bytes()
                && context == format!("api-key:{FIRST_KEY_ID}").as_bytes()
        })
        .times(1)
        .returning(|_, _| b"sealed-blob".to_vec());
    sealer.expect_open().never();
    let mut store = MockPartnerStore::new();
    store
        .expect_insert_key()
        .withf(|rec, rotate, now| {
            rec.id.as_str() == FIRST_KEY_ID
                && rec.mode == Mode::Test
                && rec.sealed.as_deref() == Some(b"sealed-blob".as_slice())
                && !*rotate
                && *now == NOW
        })
        .times(1)
        .returning(|_, _, _| Ok(Vec::new()));
    let svc = service(store, clock(), counting_entropy(), sealer);

    let minted = svc
        .create_key(&partner_id(), Mode::Test, false)
        .await
        .unwrap();

    assert_eq!(minted.key.expose(), FIRST_TEST_KEY);
    assert_eq!(minted.key.mode(), Mode::Test);
    assert_eq!(minted.record.id.as_str(), FIRST_KEY_ID);
    assert_eq!(minted.record.partner_id, partner_id());
    assert_eq!(minted.record.mode, Mode::Test);
    assert_eq!(minted.record.prefix, "psk_test_0001…");
    assert_eq!(minted.record.sealed, Some(b"sealed-blob".to_vec()));
    assert_eq!(minted.record.created_at, NOW);
    assert_eq!(minted.record.revoked_at, None);
    assert!(minted.record.is_active());
    assert!(minted.revoked.is_empty());
}

#[tokio::test]
async fn create_key_never_seals_a_live_key() {
    let mut sealer = MockSealer::new();
    sealer.expect_seal().never();
    sealer.expect_open().never();
    let mut store = MockPartnerStore::new();
    store
        .expect_insert_key()
        .withf(|rec, _, now| rec.mode == Mode::Live && rec.sealed.is_none() && *now == NOW)
        .times(1)
        .returning(|_, _, _| Ok(Vec::new()));
    let svc = service(store, clock(), counting_entropy(), sealer);

    let minted = svc
        .create_key(&partner_id(), Mode::Live, false)
        .await
        .unwrap();
    assert_eq!(minted.key.expose(), FIRST_LIVE_KEY);
    assert_eq!(minted.key.mode(), Mode::Live);
    assert_eq!(minted.record.mode, Mode::Live);
    assert_eq!(minted.record.sealed, None);
    assert_eq!(minted.record.prefix, "psk_live_0001…");
}

#[tokio::test]
async fn create_key_passes_rotate_through_and_returns_the_revoked_ids() {
    let old = [KeyId::from_bytes([0xee; 6]), KeyId::from_bytes([0xef; 6])];
    let answer = old.to_vec();
    let mut store = MockPartnerStore::new();
    store
        .expect_insert_key()
        .withf(|rec, rotate, _| *rotate && rec.mode == Mode::Live)
        .times(1)
        .returning(move |_, _, _| Ok(answer.clone()));
    let svc = service(store, clock(), counting_entropy(), MockSealer::new());

    let minted = svc
        .create_key(&partner_id(), Mode::Live, true)
        .await
        .unwrap();
    assert_eq!(minted.revoked, old.to_vec());
}

#[tokio::test]
async fn create_key_maps_an_active_live_key_to_a_conflict_without_retrying() {
    let mut store = MockPartnerStore::new();
    store
        .expect_insert_key()
        .withf(|_, rotate, _| !*rotate)
        .times(1)
        .returning(|_, _, _| Err(StoreError::Conflict(Conflict::LiveKeyActive)));
    let svc = service(store, clock(), counting_entropy(), MockSealer::new());

    let err = svc
        .create_key(&partner_id(), Mode::Live, false)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ServiceError::Conflict(Conflict::LiveKeyActive)),
        "{err:?}"
    );
}

#[tokio::test]
async fn create_key_for_an_unknown_partner_is_not_found() {
    let mut store = MockPartnerStore::new();
    store
        .expect_insert_key()
        .times(1)
        .returning(|_, _, _| Err(StoreError::NotFound));
    let svc = service(store, clock(), counting_entropy(), MockSealer::new());
    let err = svc
        .create_key(&partner_id(), Mode::Live, false)
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::NotFound), "{err:?}");
}

#[tokio::test]
async fn create_key_stores_the_digest_of_the_returned_plaintext_and_never_the_plaintext() {
    for mode in [Mode::Test, Mode::Live] {
        let stored: Arc<Mutex<Option<KeyRecord>>> = Arc::default();
        let sink = Arc::clone(&stored);
        let mut store = MockPartnerStore::new();
        store
            .expect_insert_key()
            .times(1)
            .returning(move |rec, _, _| {
                *sink.lock().unwrap() = Some(rec.clone());
                Ok(Vec::new())
            });
        let svc = service(store, clock(), counting_entropy(), xor_sealer());

        let minted = svc.create_key(&partner_id(), mode, false).await.unwrap();
        let rec = stored.lock().unwrap().clone().unwrap();
        assert_eq!(rec, minted.record, "the answer carries the stored record");

        let plain = minted.key.expose();
        let expected: [u8; 32] = Sha256::digest(plain.as_bytes()).into();
        assert_eq!(rec.digest.as_bytes(), &expected, "{mode:?}");
        assert!(rec.digest.ct_eq(&minted.key.digest()));

        let secret = plain.get(9..).unwrap();
        assert!(!rec.prefix.contains(secret), "{mode:?}");
        assert!(!format!("{rec:?}").contains(secret), "{mode:?}");
        if let Some(sealed) = &rec.sealed {
            assert!(
                !sealed.windows(plain.len()).any(|w| w == plain.as_bytes()),
                "the sealed form must not hold the plaintext"
            );
        }
        assert_eq!(rec.sealed.is_some(), mode == Mode::Test);
    }
}

#[tokio::test]
async fn create_key_retries_a_colliding_key_id_with_a_fresh_key_and_id() {
    let mut seq = Sequence::new();
    let mut sealer = MockSealer::new();
    sealer
        .expect_seal()
        .withf(|_, ctx| ctx == b"api-key:key_101112131415")
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _| vec![1]);
    let mut store = MockPartnerStore::new();
    store
        .expect_insert_key()
        .withf(|rec, _, _| rec.id.as_str() == "key_101112131415")
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _, _| Err(StoreError::Conflict(Conflict::IdTaken)));
    sealer
        .expect_seal()
        .withf(|_, ctx| ctx == b"api-key:key_262728292a2b")
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _| vec![2]);
    store
        .expect_insert_key()
        .withf(|rec, _, _| rec.id.as_str() == "key_262728292a2b")
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _, _| Ok(Vec::new()));
    let svc = service(store, clock(), counting_entropy(), sealer);

    let minted = svc
        .create_key(&partner_id(), Mode::Test, false)
        .await
        .unwrap();
    assert_eq!(minted.record.id.as_str(), "key_262728292a2b");
    assert_eq!(
        minted.key.expose(),
        "psk_test_161718191a1b1c1d1e1f202122232425"
    );
    assert_eq!(minted.record.sealed, Some(vec![2]));
    assert!(minted.record.digest.ct_eq(&minted.key.digest()));
}

mod show_and_authenticate;
