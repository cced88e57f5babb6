//! Unit tests of the portal service over mocked ports: what a sign-in
//! writes and answers, and what setting a password refuses.

use std::sync::Arc;

use super::*;
use crate::document::JobPayload;
use crate::ids::{GroupId, PartnerId};
use crate::mode::Mode;
use crate::portal::{LINK_TTL_SECS, Lockout, StoredLink};
use crate::ports::{MockClock, MockEntropy, MockPasswordHasher, MockSealer};
use crate::rate_limit::Policy;
use crate::services::mailbox::Mailbox;
use crate::store::{MockPortalStore, MockQuoteStore, MockRateLimitStore};

const NOW: i64 = 1_790_000_000;

fn account(mode: Mode, lockout: Lockout) -> PortalAccount {
    PortalAccount {
        enrollment_id: EnrollmentId::parse("enr_0123456789ab").unwrap(),
        group_id: GroupId::parse("grp_0123456789ab").unwrap(),
        scope: Scope::new(PartnerId::parse("prt_0123456789ab").unwrap(), mode),
        email: "dana@acme-mfg.com".into(),
        password_hash: Some("$argon2id$stored".into()),
        lockout,
    }
}

fn service(store: MockPortalStore, hasher: MockPasswordHasher) -> Portal {
    let mut clock = MockClock::new();
    clock.expect_now_ms().returning(|| NOW * 1000);
    let mut entropy = MockEntropy::new();
    entropy.expect_fill().returning(|b| b.fill(9));
    let mut sealer = MockSealer::new();
    sealer.expect_seal().returning(|p, _| p.to_vec());
    let mut limits = MockRateLimitStore::new();
    limits.expect_hit().returning(|_, _, _| Ok(Some(1)));
    let store: Arc<dyn PortalStore> = Arc::new(store);
    let sealer: Arc<dyn crate::ports::Sealer> = Arc::new(sealer);
    Portal::new(PortalPorts {
        links: PortalLinks::new(
            Arc::clone(&store),
            Arc::clone(&sealer),
            Mailbox::new(sealer),
            "https://benefits.example",
        ),
        store,
        enrollments: Arc::new(MockQuoteStore::new()),
        credentials: Credentials {
            hasher: Arc::new(hasher),
            rate_limits: Arc::new(limits),
            failed_auth: Policy::failed_auth(30),
        },
        clock: Arc::new(clock),
        entropy: Arc::new(entropy),
    })
}

#[tokio::test]
async fn the_fifth_failure_locks_the_account_and_queues_the_notice_in_live_mode() {
    let four = Lockout {
        failures: vec![NOW - 60; 4],
        locked_until: None,
    };
    let mut store = MockPortalStore::new();
    store
        .expect_accounts_by_email()
        .withf(|e| e == "dana@acme-mfg.com")
        .returning(move |_| Ok(vec![account(Mode::Live, four.clone())]));
    store
        .expect_save_lockout()
        .withf(|_, lock, jobs| {
            lock.locked_until == Some(NOW + 15 * 60)
                && matches!(jobs, [j] if matches!(&j.payload, JobPayload::Email(e) if e.kind == "lockout"))
        })
        .times(1)
        .returning(|_, _, _| Ok(()));
    let mut hasher = MockPasswordHasher::new();
    hasher.expect_verify().returning(|_, _| false);
    let err = service(store, hasher)
        .sign_in(
            None,
            " Dana@Acme-Mfg.com ",
            "wrong password!",
            Some("10.0.0.1"),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, ServiceError::Portal(PortalRefusal::SignInFailed)),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_locked_account_answers_as_a_wrong_password_without_checking_it() {
    let locked = Lockout {
        failures: Vec::new(),
        locked_until: Some(NOW + 60),
    };
    let mut store = MockPortalStore::new();
    store
        .expect_accounts_by_email()
        .returning(move |_| Ok(vec![account(Mode::Test, locked.clone())]));
    store.expect_save_lockout().never();
    store.expect_start_session().never();
    let mut hasher = MockPasswordHasher::new();
    // Only the dummy check, so the answer takes as long as any other.
    hasher
        .expect_verify()
        .withf(|_, hash| hash.is_empty())
        .times(1)
        .returning(|_, _| false);
    let err = service(store, hasher)
        .sign_in(None, "dana@acme-mfg.com", "the right password", None)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ServiceError::Portal(PortalRefusal::SignInFailed)),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_good_password_starts_a_new_session_replacing_the_visitors() {
    let mut store = MockPortalStore::new();
    store
        .expect_accounts_by_email()
        .returning(|_| Ok(vec![account(Mode::Test, Lockout::default())]));
    store
        .expect_start_session()
        .withf(|s, replaces| {
            s.enrollment_id.is_some()
                && s.id_hash != digest("visitor")
                && replaces.as_deref() == Some(digest("visitor").as_str())
        })
        .times(1)
        .returning(|_, _| Ok(()));
    let mut hasher = MockPasswordHasher::new();
    hasher.expect_verify().returning(|_, _| true);
    let signed = service(store, hasher)
        .sign_in(
            Some("visitor"),
            "dana@acme-mfg.com",
            "the right password",
            None,
        )
        .await
        .unwrap();
    assert_eq!(signed.cookie.len(), 64);
}

#[tokio::test]
async fn set_password_refuses_expired_links_and_weak_or_mismatched_passwords() {
    let link = |expires_at| StoredLink {
        token_hash: digest("t"),
        token_sealed: String::new(),
        account: account(Mode::Test, Lockout::default()),
        created_at: expires_at - LINK_TTL_SECS,
        expires_at,
        used_at: None,
        newest: true,
    };
    let mut store = MockPortalStore::new();
    let mut answers = vec![link(NOW + 10), link(NOW - 1)];
    store.expect_link().returning(move |_| Ok(answers.pop()));
    store.expect_use_link().never();
    let portal = service(store, MockPasswordHasher::new());
    let expired = portal
        .set_password(
            None,
            NewPassword {
                token: "t",
                password: "a long enough passphrase",
                confirmation: "a long enough passphrase",
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(
        expired,
        ServiceError::Portal(PortalRefusal::LinkExpired)
    ));
    let weak = portal
        .set_password(
            None,
            NewPassword {
                token: "t",
                password: "password1234",
                confirmation: "password12345",
            },
        )
        .await
        .unwrap_err();
    let fields: Vec<_> = weak
        .details()
        .unwrap()
        .iter()
        .map(|d| d.field.clone())
        .collect();
    assert_eq!(fields, ["password", "password_confirmation"]);
}
