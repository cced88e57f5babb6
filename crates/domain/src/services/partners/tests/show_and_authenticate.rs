//! Unit tests of re-displaying keys, the small operator commands (list,
//! live mode, revoke) and authentication, against the port mocks.

use super::*;
use crate::error::Code;

// ---------------------------------------------------------------------------
// show_key
// ---------------------------------------------------------------------------

#[tokio::test]
async fn show_key_refuses_a_live_key_without_opening_anything() {
    let key = ApiKey::parse(FIRST_LIVE_KEY).unwrap();
    let mut rec = record_for(&key, &key_id(), None);
    rec.sealed = Some(b"should never be read".to_vec());
    let mut store = MockPartnerStore::new();
    store
        .expect_key()
        .withf(|id| *id == key_id())
        .times(1)
        .return_once(move |_| Ok(rec));
    let mut sealer = MockSealer::new();
    sealer.expect_open().never();
    let svc = service(store, MockClock::new(), MockEntropy::new(), sealer);

    let err = svc.show_key(&key_id()).await.unwrap_err();
    assert!(
        matches!(err, ServiceError::Partner(PartnerRefusal::LiveKeyNotShown)),
        "{err:?}"
    );
}

#[tokio::test]
async fn show_key_refuses_a_revoked_test_key() {
    let key = ApiKey::parse(FIRST_TEST_KEY).unwrap();
    let mut rec = record_for(&key, &key_id(), Some(NOW - 1));
    rec.sealed = Some(b"sealed".to_vec());
    let mut store = MockPartnerStore::new();
    store.expect_key().times(1).return_once(move |_| Ok(rec));
    let mut sealer = MockSealer::new();
    sealer.expect_open().never();
    let svc = service(store, MockClock::new(), MockEntropy::new(), sealer);

    let err = svc.show_key(&key_id()).await.unwrap_err();
    assert!(
        matches!(err, ServiceError::Partner(PartnerRefusal::Revoked))
            && err.code() == Code::Conflict
            && err.message().contains("revoked"),
        "{err:?}"
    );
}

#[tokio::test]
async fn show_key_refuses_a_test_key_that_was_not_kept_sealed() {
    let key = ApiKey::parse(FIRST_TEST_KEY).unwrap();
    let rec = record_for(&key, &key_id(), None);
    let mut store = MockPartnerStore::new();
    store.expect_key().times(1).return_once(move |_| Ok(rec));
    let mut sealer = MockSealer::new();
    sealer.expect_open().never();
    let svc = service(store, MockClock::new(), MockEntropy::new(), sealer);

    let err = svc.show_key(&key_id()).await.unwrap_err();
    assert!(
        matches!(err, ServiceError::Partner(PartnerRefusal::NotKept)),
        "{err:?}"
    );
}

#[tokio::test]
async fn show_key_of_an_unknown_key_is_not_found() {
    let mut store = MockPartnerStore::new();
    store
        .expect_key()
        .times(1)
        .returning(|_| Err(StoreError::NotFound));
    let svc = service(
        store,
        MockClock::new(),
        MockEntropy::new(),
        MockSealer::new(),
    );
    let err = svc.show_key(&key_id()).await.unwrap_err();
    assert!(matches!(err, ServiceError::NotFound), "{err:?}");
}

#[tokio::test]
async fn a_minted_test_key_round_trips_through_the_sealer_on_show() {
    let stored: Arc<Mutex<Option<KeyRecord>>> = Arc::default();
    let sink = Arc::clone(&stored);
    let source = Arc::clone(&stored);
    let mut store = MockPartnerStore::new();
    store
        .expect_insert_key()
        .times(1)
        .returning(move |rec, _, _| {
            *sink.lock().unwrap() = Some(rec.clone());
            Ok(Vec::new())
        });
    store
        .expect_key()
        .withf(|id| id.as_str() == FIRST_KEY_ID)
        .times(1)
        .returning(move |_| Ok(source.lock().unwrap().clone().unwrap()));
    let svc = service(store, clock(), counting_entropy(), xor_sealer());

    let minted = svc
        .create_key(&partner_id(), Mode::Test, false)
        .await
        .unwrap();
    let shown = svc.show_key(&minted.record.id).await.unwrap();
    assert_eq!(shown, minted.key);
    assert_eq!(shown.expose(), FIRST_TEST_KEY);
    assert_eq!(shown.mode(), Mode::Test);
}

#[tokio::test]
async fn show_key_opens_with_the_record_id_as_context() {
    let key = ApiKey::parse(FIRST_TEST_KEY).unwrap();
    let mut rec = record_for(&key, &key_id(), None);
    rec.sealed = Some(b"opaque".to_vec());
    let mut store = MockPartnerStore::new();
    store.expect_key().times(1).return_once(move |_| Ok(rec));
    let mut sealer = MockSealer::new();
    sealer
        .expect_open()
        .withf(|sealed, ctx| sealed == b"opaque" && ctx == b"api-key:key_111111111111")
        .times(1)
        .returning(|_, _| Ok(FIRST_TEST_KEY.as_bytes().to_vec()));
    let svc = service(store, MockClock::new(), MockEntropy::new(), sealer);

    let shown = svc.show_key(&key_id()).await.unwrap();
    assert_eq!(shown, key);
}

#[tokio::test]
async fn show_key_reports_a_sealer_failure_as_a_conflict() {
    let key = ApiKey::parse(FIRST_TEST_KEY).unwrap();
    let mut rec = record_for(&key, &key_id(), None);
    rec.sealed = Some(b"tampered".to_vec());
    let mut store = MockPartnerStore::new();
    store.expect_key().times(1).return_once(move |_| Ok(rec));
    let mut sealer = MockSealer::new();
    sealer.expect_open().times(1).returning(|_, _| Err(Unseal));
    let svc = service(store, MockClock::new(), MockEntropy::new(), sealer);

    let err = svc.show_key(&key_id()).await.unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Partner(PartnerRefusal::Unsealable(Unseal))
        ) && err.message() == Unseal.to_string(),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_sealed_key_moved_to_another_record_does_not_open() {
    // The sealed bytes of one record, stored under another id: the context
    // binds them to their record, so the fake AEAD refuses them.
    let key = ApiKey::parse(FIRST_TEST_KEY).unwrap();
    let sealer = xor_sealer();
    let sealed = sealer.seal(key.expose().as_bytes(), b"api-key:key_999999999999");
    let mut rec = record_for(&key, &key_id(), None);
    rec.sealed = Some(sealed);
    let mut store = MockPartnerStore::new();
    store.expect_key().times(1).return_once(move |_| Ok(rec));
    let svc = service(store, MockClock::new(), MockEntropy::new(), sealer);

    let err = svc.show_key(&key_id()).await.unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Partner(PartnerRefusal::Unsealable(Unseal))
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn show_key_treats_garbage_plaintext_as_an_internal_error() {
    for plain in [vec![0xff, 0xfe, 0xfd], b"not-a-key".to_vec()] {
        let key = ApiKey::parse(FIRST_TEST_KEY).unwrap();
        let mut rec = record_for(&key, &key_id(), None);
        rec.sealed = Some(b"opaque".to_vec());
        let mut store = MockPartnerStore::new();
        store.expect_key().times(1).return_once(move |_| Ok(rec));
        let mut sealer = MockSealer::new();
        sealer
            .expect_open()
            .times(1)
            .return_once(move |_, _| Ok(plain));
        let svc = service(store, MockClock::new(), MockEntropy::new(), sealer);

        let err = svc.show_key(&key_id()).await.unwrap_err();
        assert!(matches!(err, ServiceError::Internal(_)), "{err:?}");
    }
}

// ---------------------------------------------------------------------------
// list_keys, set_live, revoke_key
// ---------------------------------------------------------------------------

#[tokio::test]
async fn list_keys_passes_the_partner_through() {
    let key = ApiKey::parse(FIRST_TEST_KEY).unwrap();
    let rec = record_for(&key, &key_id(), None);
    let answer = vec![rec.clone()];
    let mut store = MockPartnerStore::new();
    store
        .expect_keys()
        .withf(|p| *p == partner_id())
        .times(1)
        .return_once(move |_| Ok(answer));
    let svc = service(
        store,
        MockClock::new(),
        MockEntropy::new(),
        MockSealer::new(),
    );
    assert_eq!(svc.list_keys(&partner_id()).await.unwrap(), vec![rec]);
}

#[tokio::test]
async fn set_live_passes_the_clock_seconds_and_the_flag() {
    for enabled in [true, false] {
        let mut store = MockPartnerStore::new();
        store
            .expect_set_live_enabled()
            .withf(move |id, on, now| *id == partner_id() && *on == enabled && *now == NOW)
            .times(1)
            .returning(|_, _, _| Ok(()));
        let svc = service(store, clock(), MockEntropy::new(), MockSealer::new());
        svc.set_live(&partner_id(), enabled).await.unwrap();
    }
}

#[tokio::test]
async fn set_live_truncates_milliseconds_to_whole_seconds() {
    let mut c = MockClock::new();
    c.expect_now_ms().return_const(1_795_000_000_001_i64);
    let mut store = MockPartnerStore::new();
    store
        .expect_set_live_enabled()
        .withf(|_, _, now| *now == 1_795_000_000)
        .times(1)
        .returning(|_, _, _| Ok(()));
    let svc = service(store, c, MockEntropy::new(), MockSealer::new());
    assert!(svc.set_live(&partner_id(), true).await.is_ok());
}

#[tokio::test]
async fn set_live_of_an_unknown_partner_is_not_found() {
    let mut store = MockPartnerStore::new();
    store
        .expect_set_live_enabled()
        .times(1)
        .returning(|_, _, _| Err(StoreError::NotFound));
    let svc = service(store, clock(), MockEntropy::new(), MockSealer::new());
    let err = svc.set_live(&partner_id(), true).await.unwrap_err();
    assert!(matches!(err, ServiceError::NotFound), "{err:?}");
}

#[tokio::test]
async fn revoke_key_passes_the_clock_seconds() {
    let mut store = MockPartnerStore::new();
    store
        .expect_revoke_key()
        .withf(|id, now| *id == key_id() && *now == NOW)
        .times(1)
        .returning(|_, _| Ok(()));
    let svc = service(store, clock(), MockEntropy::new(), MockSealer::new());
    assert!(svc.revoke_key(&key_id()).await.is_ok());
}

#[tokio::test]
async fn revoke_key_of_an_unknown_key_is_not_found() {
    let mut store = MockPartnerStore::new();
    store
        .expect_revoke_key()
        .times(1)
        .returning(|_, _| Err(StoreError::NotFound));
    let svc = service(store, clock(), MockEntropy::new(), MockSealer::new());
    let err = svc.revoke_key(&key_id()).await.unwrap_err();
    assert!(matches!(err, ServiceError::NotFound), "{err:?}");
}

// ---------------------------------------------------------------------------
// authenticate
// ---------------------------------------------------------------------------

fn auth_service(store: MockPartnerStore) -> Partners {
    // Authentication never reads the clock, entropy or sealer.
    service(
        store,
        MockClock::new(),
        MockEntropy::new(),
        MockSealer::new(),
    )
}

/// A store whose only key is `key`, as stored in `rec`, of `partner`.
fn store_with(key: &ApiKey, rec: KeyRecord, partner: Partner) -> MockPartnerStore {
    let digest = key.digest();
    let mut store = MockPartnerStore::new();
    store
        .expect_key_by_digest()
        .withf(move |d| *d == digest)
        .times(1)
        .return_once(move |_| Ok((rec, partner)));
    store
}

#[tokio::test]
async fn authenticate_without_a_token_is_unauthorized() {
    let mut store = MockPartnerStore::new();
    store.expect_key_by_digest().never();
    let err = auth_service(store).authenticate(None).await.unwrap_err();
    assert!(matches!(err, AuthError::Unauthorized), "{err:?}");
}

#[tokio::test]
async fn authenticate_rejects_malformed_tokens_before_the_store() {
    for bad in [
        "",
        "psk_test_",
        "Bearer psk_test_000102030405060708090a0b0c0d0e0f",
        "psk_test_000102030405060708090A0B0C0D0E0F",
        "psk_prod_000102030405060708090a0b0c0d0e0f",
        "psk_test_000102030405060708090a0b0c0d0e0",
        "psk_live_000102030405060708090a0b0c0d0e0f0",
    ] {
        let mut store = MockPartnerStore::new();
        store.expect_key_by_digest().never();
        let err = auth_service(store)
            .authenticate(Some(bad))
            .await
            .unwrap_err();
        assert!(matches!(err, AuthError::Unauthorized), "{bad:?}: {err:?}");
    }
}

#[tokio::test]
async fn authenticate_with_an_unknown_digest_is_unauthorized() {
    let key = ApiKey::parse(FIRST_TEST_KEY).unwrap();
    let digest = key.digest();
    let mut store = MockPartnerStore::new();
    store
        .expect_key_by_digest()
        .withf(move |d| *d == digest)
        .times(1)
        .returning(|_| Err(StoreError::NotFound));
    let err = auth_service(store)
        .authenticate(Some(FIRST_TEST_KEY))
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::Unauthorized), "{err:?}");
}

#[tokio::test]
async fn authenticate_with_a_revoked_key_is_unauthorized() {
    for mode_key in [FIRST_TEST_KEY, FIRST_LIVE_KEY] {
        let key = ApiKey::parse(mode_key).unwrap();
        let rec = record_for(&key, &key_id(), Some(NOW - 5));
        let store = store_with(&key, rec, partner(true));
        let err = auth_service(store)
            .authenticate(Some(mode_key))
            .await
            .unwrap_err();
        assert!(
            matches!(err, AuthError::Unauthorized),
            "{mode_key}: {err:?}"
        );
    }
}

#[tokio::test]
async fn authenticate_with_a_revoked_live_key_is_unauthorized_before_the_live_gate() {
    let key = ApiKey::parse(FIRST_LIVE_KEY).unwrap();
    let rec = record_for(&key, &key_id(), Some(NOW - 5));
    let store = store_with(&key, rec, partner(false));
    let err = auth_service(store)
        .authenticate(Some(FIRST_LIVE_KEY))
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::Unauthorized), "{err:?}");
}

#[tokio::test]
async fn authenticate_refuses_a_record_whose_digest_or_mode_disagrees_with_the_token() {
    let key = ApiKey::parse(FIRST_TEST_KEY).unwrap();

    let mut wrong_digest = record_for(&key, &key_id(), None);
    wrong_digest.digest = KeyDigest::from_bytes([7; 32]);
    let store = store_with(&key, wrong_digest, partner(true));
    let err = auth_service(store)
        .authenticate(Some(FIRST_TEST_KEY))
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::Unauthorized), "{err:?}");

    let mut wrong_mode = record_for(&key, &key_id(), None);
    wrong_mode.mode = Mode::Live;
    let store = store_with(&key, wrong_mode, partner(true));
    let err = auth_service(store)
        .authenticate(Some(FIRST_TEST_KEY))
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::Unauthorized), "{err:?}");
}

#[tokio::test]
async fn authenticate_a_live_key_before_live_mode_is_live_mode_disabled() {
    let key = ApiKey::parse(FIRST_LIVE_KEY).unwrap();
    let rec = record_for(&key, &key_id(), None);
    let store = store_with(&key, rec, partner(false));
    let err = auth_service(store)
        .authenticate(Some(FIRST_LIVE_KEY))
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::LiveModeDisabled), "{err:?}");
}

#[tokio::test]
async fn authenticate_a_live_key_with_live_mode_enabled() {
    let key = ApiKey::parse(FIRST_LIVE_KEY).unwrap();
    let rec = record_for(&key, &key_id(), None);
    let store = store_with(&key, rec, partner(true));
    let principal = auth_service(store)
        .authenticate(Some(FIRST_LIVE_KEY))
        .await
        .unwrap();
    assert_eq!(principal.mode, Mode::Live);
    assert_eq!(principal.key_id, key_id());
    assert_eq!(principal.scope(), Scope::new(partner_id(), Mode::Live));
}

#[tokio::test]
async fn authenticate_a_test_key_ignores_the_live_gate_and_returns_the_principal() {
    let key = ApiKey::parse(FIRST_TEST_KEY).unwrap();
    let rec = record_for(&key, &key_id(), None);
    let store = store_with(&key, rec, partner(false));
    let principal = auth_service(store)
        .authenticate(Some(FIRST_TEST_KEY))
        .await
        .unwrap();
    assert_eq!(
        principal,
        Principal {
            key_id: key_id(),
            partner: partner(false),
            mode: Mode::Test,
        }
    );
    assert_eq!(principal.scope(), Scope::new(partner_id(), Mode::Test));
}

#[tokio::test]
async fn authenticate_reports_store_failures_as_store_errors() {
    let key = ApiKey::parse(FIRST_TEST_KEY).unwrap();
    let digest = key.digest();

    let mut store = MockPartnerStore::new();
    store
        .expect_key_by_digest()
        .withf(move |d| *d == digest)
        .times(1)
        .returning(|_| Err(down()));
    let err = auth_service(store)
        .authenticate(Some(FIRST_TEST_KEY))
        .await
        .unwrap_err();
    assert!(
        matches!(err, AuthError::Store(ServiceError::Unavailable(_))),
        "{err:?}"
    );

    let mut store = MockPartnerStore::new();
    store
        .expect_key_by_digest()
        .times(1)
        .returning(|_| Err(broken()));
    let err = auth_service(store)
        .authenticate(Some(FIRST_TEST_KEY))
        .await
        .unwrap_err();
    assert!(
        matches!(err, AuthError::Store(ServiceError::Internal(_))),
        "{err:?}"
    );
}
