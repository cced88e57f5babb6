//! Unit tests of the partner portal's user service over mocked ports:
//! who may act, what adding a user and signing in write and answer, and
//! how TOTP enrolment and the second factor accept or refuse a code.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::*;
use crate::ids::UserId;
use crate::partner_user::{Totp, recovery_code_digest};
use crate::ports::{MockClock, MockEntropy, MockPasswordHasher, MockSealer, Unseal};
use crate::rate_limit::Policy;
use crate::store::{MockPartnerUserStore, MockRateLimitStore};

const NOW: i64 = 1_790_000_000;

fn partner_id() -> PartnerId {
    PartnerId::parse("prt_0123456789ab").unwrap()
}

fn user_id() -> UserId {
    UserId::parse("usr_0123456789ab").unwrap()
}

/// What the mocked sealer makes of `plain` for `context`: readable, and
/// bound to the context (another context does not open it).
fn sealed(plain: &[u8], context: &[u8]) -> Vec<u8> {
    [context, b"|", plain].concat()
}

/// The user's stored TOTP secret, as `confirm_enrolment` seals it.
fn stored_secret(secret: &[u8]) -> String {
    STANDARD.encode(sealed(secret, format!("totp:{}", user_id()).as_bytes()))
}

fn user(role: Role, totp_sealed: Option<String>) -> PartnerUser {
    PartnerUser {
        id: user_id(),
        partner: partner_id(),
        email: "dev@broker.example".into(),
        role,
        password_hash: Some("$argon2id$stored".into()),
        lockout: Lockout::default(),
        totp_sealed,
        totp_last_step: None,
        created_at: NOW - 86_400,
    }
}

fn actor(role: Role, two_factor: bool) -> Actor {
    Actor {
        user: user(
            role,
            two_factor.then(|| stored_secret(b"01234567890123456789")),
        ),
        ip: Some("10.0.0.1".into()),
        mode: Mode::Test,
    }
}

fn service(store: MockPartnerUserStore, hasher: MockPasswordHasher) -> PartnerPortal {
    let mut clock = MockClock::new();
    clock.expect_now_ms().returning(|| NOW * 1000);
    // Distinct, repeatable bytes (SplitMix64 over a counter).
    let counter = AtomicU64::new(1);
    let mut entropy = MockEntropy::new();
    entropy.expect_fill().returning(move |buf| {
        for b in buf {
            let mut z = counter.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            *b = (z ^ (z >> 31)).to_le_bytes()[0];
        }
    });
    let mut sealer = MockSealer::new();
    sealer.expect_seal().returning(sealed);
    sealer.expect_open().returning(|s, context| {
        s.strip_prefix(context)
            .and_then(|rest| rest.strip_prefix(b"|"))
            .map(<[u8]>::to_vec)
            .ok_or(Unseal)
    });
    let mut limits = MockRateLimitStore::new();
    limits.expect_hit().returning(|_, _, _| Ok(Some(1)));
    let sealer = Arc::new(sealer);
    PartnerPortal::new(PartnerPortalPorts {
        store: Arc::new(store),
        credentials: Credentials {
            hasher: Arc::new(hasher),
            rate_limits: Arc::new(limits),
            failed_auth: Policy::failed_auth(30),
        },
        clock: Arc::new(clock),
        entropy: Arc::new(entropy),
        sealer: sealer.clone(),
        base_url: "https://partners.example.com".into(),
        mailbox: crate::services::mailbox::Mailbox::new(sealer),
    })
}

fn refusal(err: &ServiceError) -> Option<PortalRefusal> {
    match err {
        ServiceError::Portal(r) => Some(*r),
        _ => None,
    }
}

/// A TOTP code of `totp` at `NOW`.
fn code_now(totp: &Totp) -> String {
    totp.code_at(u64::try_from(NOW).unwrap())
}

#[tokio::test]
async fn a_viewer_may_not_act_and_an_admin_needs_two_factor_for_sensitive_acts() {
    let viewer = actor(Role::Viewer, false);
    let refused = viewer.admin().unwrap_err();
    assert_eq!(refusal(&refused), Some(PortalRefusal::AdminOnly));
    let refused = viewer.admin_with_two_factor().unwrap_err();
    assert_eq!(refusal(&refused), Some(PortalRefusal::AdminOnly));
    let viewer_with_totp = actor(Role::Viewer, true);
    let refused = viewer_with_totp.admin_with_two_factor().unwrap_err();
    assert_eq!(refusal(&refused), Some(PortalRefusal::AdminOnly));

    let admin = actor(Role::Admin, false);
    assert!(admin.admin().is_ok());
    let refused = admin.admin_with_two_factor().unwrap_err();
    assert_eq!(refusal(&refused), Some(PortalRefusal::TwoFactorRequired));
    assert!(actor(Role::Admin, true).admin_with_two_factor().is_ok());

    // A viewer removing a user reaches no store call.
    let err = service(MockPartnerUserStore::new(), MockPasswordHasher::new())
        .remove_user(&partner_id(), "other@broker.example", Some(&viewer))
        .await
        .unwrap_err();
    assert_eq!(refusal(&err), Some(PortalRefusal::AdminOnly));
}

#[tokio::test]
async fn add_user_by_an_actor_without_two_factor_is_refused_and_writes_nothing() {
    let mut store = MockPartnerUserStore::new();
    store.expect_insert_user().never();
    let portal = service(store, MockPasswordHasher::new());
    for (by, expected) in [
        (actor(Role::Admin, false), PortalRefusal::TwoFactorRequired),
        (actor(Role::Viewer, false), PortalRefusal::AdminOnly),
        (actor(Role::Viewer, true), PortalRefusal::AdminOnly),
    ] {
        let err = portal
            .add_user(&partner_id(), "new@broker.example", Role::Viewer, Some(&by))
            .await
            .unwrap_err();
        assert_eq!(refusal(&err), Some(expected), "{err:?}");
    }
}

#[tokio::test]
async fn add_user_refuses_a_malformed_email() {
    let mut store = MockPartnerUserStore::new();
    store.expect_insert_user().never();
    let portal = service(store, MockPasswordHasher::new());
    for email in [
        "",
        "dev",
        "dev@broker",
        "@broker.example",
        "dev@.broker.example",
        "dev@broker.example.",
        "dev@one@broker.example",
        "d ev@broker.example",
    ] {
        let err = portal
            .add_user(&partner_id(), email, Role::Admin, None)
            .await
            .unwrap_err();
        let fields: Vec<_> = err
            .details()
            .unwrap_or_else(|| panic!("{email:?}: {err:?}"))
            .iter()
            .map(|d| d.field.as_str())
            .collect();
        assert_eq!(fields, ["email"], "{email:?}");
    }
}

#[tokio::test]
async fn add_user_stores_the_user_with_a_link_and_answers_its_url() {
    let mut store = MockPartnerUserStore::new();
    let links = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&links);
    store
        .expect_insert_user()
        .withf(|u, link, audit| {
            u.email == "new@broker.example"
                && u.role == Role::Viewer
                && u.partner == partner_id()
                && u.created_at == NOW
                && link.user == u.id
                && link.created_at == NOW
                && link.expires_at == NOW + LINK_TTL_SECS
                && audit.as_ref().is_some_and(|a| {
                    a.action == AuditAction::UserAdded
                        && a.target == "new@broker.example"
                        && a.user == "dev@broker.example"
                        && a.ip.as_deref() == Some("10.0.0.1")
                        && a.at_ms == NOW * 1000
                })
        })
        .times(1)
        .returning(move |_, link, _| {
            seen.lock().unwrap().push(link.token_hash.clone());
            Ok(())
        });
    let added = service(store, MockPasswordHasher::new())
        .add_user(
            &partner_id(),
            " New@Broker.Example ",
            Role::Viewer,
            Some(&actor(Role::Admin, true)),
        )
        .await
        .unwrap();
    let token = added
        .set_password_url
        .strip_prefix("https://partners.example.com/partner/set-password?token=")
        .unwrap();
    assert_eq!(token.len(), 64);
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
    // Only the token's digest is stored.
    assert_eq!(*links.lock().unwrap(), [digest(token)]);
    assert_eq!(added.expires_at, NOW + LINK_TTL_SECS);
    assert_eq!(added.user.email, "new@broker.example");
    assert!(added.user.password_hash.is_none() && !added.user.two_factor());
}

#[tokio::test]
async fn a_password_with_two_factor_owes_a_code_and_writes_no_sign_in_yet() {
    let mut store = MockPartnerUserStore::new();
    store
        .expect_users_by_email()
        .withf(|e| e == "dev@broker.example")
        .returning(|_| Ok(vec![user(Role::Admin, Some(stored_secret(b"s")))]));
    store.expect_save_lockout().never();
    store
        .expect_start_session()
        .withf(|s, replaces, audit| {
            s.second_factor_pending
                && s.user == Some(user_id())
                && replaces.as_deref() == Some(digest("visitor").as_str())
                && audit.is_none()
        })
        .times(1)
        .returning(|_, _, _| Ok(()));
    let mut hasher = MockPasswordHasher::new();
    hasher
        .expect_verify()
        .withf(|p, h| p == "the right password" && h == "$argon2id$stored")
        .returning(|_, _| true);
    let signed = service(store, hasher)
        .sign_in(
            Some("visitor"),
            " Dev@Broker.example",
            "the right password",
            None,
        )
        .await
        .unwrap();
    assert!(signed.second_factor_pending);
    assert_eq!(signed.cookie.len(), 64);
}

#[tokio::test]
async fn a_password_without_two_factor_signs_in_with_its_audit_entry() {
    let mut store = MockPartnerUserStore::new();
    store
        .expect_users_by_email()
        .returning(|_| Ok(vec![user(Role::Viewer, None)]));
    store
        .expect_start_session()
        .withf(|s, replaces, audit| {
            !s.second_factor_pending
                && s.user == Some(user_id())
                && replaces.is_none()
                && audit.as_ref().is_some_and(|a| {
                    a.action == AuditAction::SignIn
                        && a.user == "dev@broker.example"
                        && a.ip.as_deref() == Some("10.0.0.2")
                })
        })
        .times(1)
        .returning(|_, _, _| Ok(()));
    let mut hasher = MockPasswordHasher::new();
    hasher.expect_verify().returning(|_, _| true);
    let signed = service(store, hasher)
        .sign_in(
            None,
            "dev@broker.example",
            "the right password",
            Some("10.0.0.2"),
        )
        .await
        .unwrap();
    assert!(!signed.second_factor_pending);
}

#[tokio::test]
async fn a_wrong_password_counts_one_failure_with_its_audit_entry() {
    let mut store = MockPartnerUserStore::new();
    store
        .expect_users_by_email()
        .returning(|_| Ok(vec![user(Role::Admin, None)]));
    store
        .expect_save_lockout()
        .withf(|id, lock, jobs, audit| {
            *id == user_id()
                && lock.failures == [NOW]
                && lock.locked_until.is_none()
                && jobs.is_empty()
                && audit.as_ref().is_some_and(|a| {
                    a.action == AuditAction::SignInFailed
                        && a.partner == partner_id()
                        && a.user == "dev@broker.example"
                        && a.ip.as_deref() == Some("10.0.0.1")
                        && a.target == "password"
                })
        })
        .times(1)
        .returning(|_, _, _, _| Ok(()));
    store.expect_start_session().never();
    let mut hasher = MockPasswordHasher::new();
    hasher.expect_verify().returning(|_, _| false);
    let err = service(store, hasher)
        .sign_in(
            None,
            "dev@broker.example",
            "a wrong password",
            Some("10.0.0.1"),
        )
        .await
        .unwrap_err();
    assert_eq!(refusal(&err), Some(PortalRefusal::SignInFailed));
}

#[tokio::test]
async fn the_fifth_failure_locks_the_account_and_emails_its_address() {
    let mut store = MockPartnerUserStore::new();
    store.expect_users_by_email().returning(|_| {
        let mut u = user(Role::Viewer, None);
        u.lockout.failures = vec![NOW - 40, NOW - 30, NOW - 20, NOW - 10];
        Ok(vec![u])
    });
    store
        .expect_save_lockout()
        .withf(|_, lock, jobs, _| {
            lock.locked_until == Some(NOW + 15 * 60)
                && jobs.len() == 1
                && jobs[0].scope.partner == partner_id()
                && matches!(&jobs[0].payload, crate::document::JobPayload::Email(e) if e.kind == "lockout")
        })
        .times(1)
        .returning(|_, _, _, _| Ok(()));
    let mut hasher = MockPasswordHasher::new();
    hasher.expect_verify().returning(|_, _| false);
    let err = service(store, hasher)
        .sign_in(None, "dev@broker.example", "wrong again", Some("10.0.0.1"))
        .await
        .unwrap_err();
    // A locked account answers as a wrong password does.
    assert_eq!(refusal(&err), Some(PortalRefusal::SignInFailed));
}

#[tokio::test]
async fn confirming_enrolment_with_a_correct_code_stores_the_secret_and_ten_codes() {
    let stored = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&stored);
    let mut store = MockPartnerUserStore::new();
    store
        .expect_enrol_totp()
        .withf(|id, enrolment, audit| {
            *id == user_id()
                && enrolment.step == NOW.div_euclid(30)
                && enrolment.recovery_digests.len() == 10
                && audit.action == AuditAction::TwoFactorEnrolled
                && audit.user == "dev@broker.example"
        })
        .times(1)
        .returning(move |_, enrolment, _| {
            seen.lock()
                .unwrap()
                .push((enrolment.sealed.clone(), enrolment.recovery_digests.clone()));
            Ok(())
        });
    let portal = service(store, MockPasswordHasher::new());
    let admin = actor(Role::Admin, false);
    let enrolment = portal.start_enrolment(&admin).unwrap();
    assert!(
        enrolment.uri.starts_with("otpauth://totp/"),
        "{enrolment:?}"
    );
    assert!(enrolment.uri.contains(&enrolment.secret));
    let totp = Totp::from_base32(&enrolment.secret).unwrap();
    let codes = portal
        .confirm_enrolment(&admin, &enrolment.sealed, &code_now(&totp))
        .await
        .unwrap();
    assert_eq!(codes.len(), 10);
    let mut unique = codes.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 10);

    let stored = stored.lock().unwrap();
    let [(sealed_secret, digests)] = stored.as_slice() else {
        panic!("enrol_totp called {} times", stored.len());
    };
    let expected: Vec<String> = codes.iter().map(|c| recovery_code_digest(c)).collect();
    assert_eq!(digests, &expected, "digests only, of the codes shown");
    // Sealed to the user for storage, not with the enrolment's context.
    assert_eq!(sealed_secret, &stored_secret(totp.secret()));
}

#[tokio::test]
async fn a_wrong_enrolment_code_or_a_tampered_form_is_refused() {
    let mut store = MockPartnerUserStore::new();
    store.expect_enrol_totp().never();
    let portal = service(store, MockPasswordHasher::new());
    let admin = actor(Role::Admin, false);
    let enrolment = portal.start_enrolment(&admin).unwrap();
    let totp = Totp::from_base32(&enrolment.secret).unwrap();
    let stale = totp.code_at(u64::try_from(NOW - 3600).unwrap());
    let right = code_now(&totp);
    // A sealed secret of another user does not open for this one.
    let other = STANDARD.encode(sealed(totp.secret(), b"totp-enrol:usr_ffffffffffff"));
    for (sealed_form, code) in [
        (enrolment.sealed.as_str(), stale.as_str()),
        (enrolment.sealed.as_str(), "12345"),
        ("not base64!", right.as_str()),
        (other.as_str(), right.as_str()),
    ] {
        let err = portal
            .confirm_enrolment(&admin, sealed_form, code)
            .await
            .unwrap_err();
        assert_eq!(
            refusal(&err),
            Some(PortalRefusal::CodeRefused),
            "{sealed_form} {code}"
        );
    }
}

/// The pending session of a user whose authenticator has `secret`.
fn pending_session(secret: &[u8], last_step: Option<i64>) -> UserSession {
    let mut u = user(Role::Admin, Some(stored_secret(secret)));
    u.totp_last_step = last_step;
    UserSession {
        id_hash: digest("pending"),
        user: Some(u),
        second_factor_pending: true,
        csrf: "csrf".into(),
        mode: Mode::Test,
        created_at: NOW - 10,
        seen_at: NOW - 10,
    }
}

const SECRET: &[u8] = b"12345678901234567890";

#[tokio::test]
async fn a_correct_second_factor_replaces_the_pending_session_and_audits_the_sign_in() {
    let step = NOW.div_euclid(30);
    let mut store = MockPartnerUserStore::new();
    store
        .expect_session()
        .withf(|h| h == digest("pending"))
        .returning(move |_| Ok(Some(pending_session(SECRET, Some(step - 5)))));
    store
        .expect_accept_step()
        .withf(move |id, s| *id == user_id() && *s == step)
        .times(1)
        .returning(|_, _| Ok(true));
    store.expect_use_recovery_code().never();
    store
        .expect_start_session()
        .withf(|s, replaces, audit| {
            !s.second_factor_pending
                && s.user == Some(user_id())
                && s.id_hash != digest("pending")
                && replaces.as_deref() == Some(digest("pending").as_str())
                && audit.as_ref().is_some_and(|a| {
                    a.action == AuditAction::SignIn && a.ip.as_deref() == Some("10.0.0.1")
                })
        })
        .times(1)
        .returning(|_, _, _| Ok(()));
    let code = code_now(&Totp::new(SECRET.to_vec()));
    let signed = service(store, MockPasswordHasher::new())
        .second_factor(Some("pending"), &code, Some("10.0.0.1"))
        .await
        .unwrap();
    assert!(!signed.second_factor_pending);
    assert_eq!(signed.cookie.len(), 64);
}

#[tokio::test]
async fn a_code_of_a_step_already_used_is_refused_counted_and_audited() {
    let step = NOW.div_euclid(30);
    let mut store = MockPartnerUserStore::new();
    store
        .expect_session()
        .returning(move |_| Ok(Some(pending_session(SECRET, Some(step)))));
    store.expect_accept_step().never();
    store.expect_use_recovery_code().never();
    store.expect_start_session().never();
    // A wrong code counts against the account's lockout, with its entry.
    store
        .expect_save_lockout()
        .withf(|_, lock, jobs, a| {
            lock.failures.len() == 1
                && jobs.is_empty()
                && a.as_ref().is_some_and(|a| {
                    a.action == AuditAction::SignInFailed && a.user == "dev@broker.example"
                })
        })
        .times(1)
        .returning(|_, _, _, _| Ok(()));
    let code = code_now(&Totp::new(SECRET.to_vec()));
    let err = service(store, MockPasswordHasher::new())
        .second_factor(Some("pending"), &code, Some("10.0.0.1"))
        .await
        .unwrap_err();
    assert_eq!(refusal(&err), Some(PortalRefusal::CodeRefused));
}

#[tokio::test]
async fn a_recovery_code_signs_in_once_with_its_own_audit_entry() {
    let mut store = MockPartnerUserStore::new();
    store
        .expect_session()
        .returning(|_| Ok(Some(pending_session(SECRET, None))));
    store.expect_accept_step().never();
    store
        .expect_use_recovery_code()
        .withf(|id, d, now| {
            *id == user_id() && d == recovery_code_digest("abcdefghjkmn") && *now == NOW
        })
        .times(1)
        .returning(|_, _, _| Ok(true));
    store
        .expect_start_session()
        .withf(|_, _, audit| {
            audit
                .as_ref()
                .is_some_and(|a| a.action == AuditAction::RecoveryCodeUsed)
        })
        .times(1)
        .returning(|_, _, _| Ok(()));
    let signed = service(store, MockPasswordHasher::new())
        .second_factor(Some("pending"), "ABCD-EFGH-JKMN", None)
        .await
        .unwrap();
    assert!(!signed.second_factor_pending);
}
