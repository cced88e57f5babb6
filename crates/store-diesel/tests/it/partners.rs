//! Partners and API keys: digests only, one active live key, rotation in
//! one transaction, and sealed plaintext only for test keys.

use domain::api_key::{ApiKey, KeyRecord};
use domain::ids::{KeyId, PartnerId};
use domain::mode::Mode;
use domain::store::{Conflict, StoreError};

use crate::harness::{TestDb, partner};
use crate::on_both;

fn record(n: u8, partner: &PartnerId, mode: Mode, sealed: Option<Vec<u8>>) -> (KeyRecord, ApiKey) {
    let key = ApiKey::from_bytes(mode, [n; 16]);
    let rec = KeyRecord {
        id: KeyId::from_bytes([n; 6]),
        partner_id: partner.clone(),
        mode,
        digest: key.digest(),
        prefix: key.display_prefix(),
        sealed,
        created_at: i64::from(n),
        revoked_at: None,
    };
    (rec, key)
}

async fn keys_are_found_by_digest_and_one_live_key_is_active(t: TestDb) {
    let s = &t.stores;
    let (p, _) = partner(s, 1).await;
    assert!(matches!(
        s.partners.partner(&PartnerId::from_bytes([9; 6])).await,
        Err(StoreError::NotFound)
    ));
    let (test_key, plain) = record(1, &p.id, Mode::Test, Some(vec![1, 2, 3]));
    s.partners.insert_key(&test_key, false, 10).await.unwrap();
    let (found, owner) = s.partners.key_by_digest(&plain.digest()).await.unwrap();
    assert_eq!(found, test_key);
    assert_eq!(owner, p);
    assert!(matches!(
        s.partners
            .key_by_digest(&ApiKey::from_bytes(Mode::Test, [7; 16]).digest())
            .await,
        Err(StoreError::NotFound)
    ));

    let (live1, _) = record(2, &p.id, Mode::Live, None);
    assert!(
        s.partners
            .insert_key(&live1, false, 20)
            .await
            .unwrap()
            .is_empty()
    );
    let (live2, _) = record(3, &p.id, Mode::Live, None);
    assert!(matches!(
        s.partners.insert_key(&live2, false, 30).await,
        Err(StoreError::Conflict(Conflict::LiveKeyActive))
    ));
    let revoked = s.partners.insert_key(&live2, true, 30).await.unwrap();
    assert_eq!(revoked, vec![live1.id.clone()]);
    assert_eq!(
        s.partners.key(&live1.id).await.unwrap().revoked_at,
        Some(30)
    );
    assert!(s.partners.key(&live2.id).await.unwrap().is_active());

    let listed = s.partners.keys(&p.id).await.unwrap();
    assert_eq!(
        listed.iter().map(|k| k.id.clone()).collect::<Vec<_>>(),
        vec![live2.id.clone(), live1.id, test_key.id.clone()]
    );

    s.partners.revoke_key(&test_key.id, 40).await.unwrap();
    s.partners.revoke_key(&test_key.id, 50).await.unwrap();
    assert_eq!(
        s.partners.key(&test_key.id).await.unwrap().revoked_at,
        Some(40)
    );
    assert!(matches!(
        s.partners.revoke_key(&KeyId::from_bytes([8; 6]), 1).await,
        Err(StoreError::NotFound)
    ));

    s.partners.set_live_enabled(&p.id, true, 60).await.unwrap();
    assert!(s.partners.partner(&p.id).await.unwrap().live_enabled);
    assert!(matches!(
        s.partners
            .set_live_enabled(&PartnerId::from_bytes([9; 6]), true, 1)
            .await,
        Err(StoreError::NotFound)
    ));
}
on_both!(keys_are_found_by_digest_and_one_live_key_is_active);

async fn a_live_key_can_never_be_stored_with_its_plaintext(t: TestDb) {
    let s = &t.stores;
    let (p, _) = partner(s, 1).await;
    let (live, _) = record(2, &p.id, Mode::Live, Some(b"sealed".to_vec()));
    assert!(s.partners.insert_key(&live, false, 1).await.is_err());
    assert!(s.partners.keys(&p.id).await.unwrap().is_empty());
}
on_both!(a_live_key_can_never_be_stored_with_its_plaintext);
