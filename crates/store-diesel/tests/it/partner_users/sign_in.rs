//! Lockouts, TOTP secrets and recovery codes, and sessions with their user, flag and mode.

use domain::ids::UserId;
use domain::mode::Mode;
use domain::partner_user::{AuditAction, Role, recovery_code_digest};
use domain::portal::{Lockout, digest};
use domain::store::{Conflict, StoreError};

use crate::harness::{TestDb, partner};
use crate::on_both;
use crate::partner_users::{actions, add, enrolment, entry, new_user, session, start};

on_both!(partner_user_lockouts_totp_and_recovery_codes_round_trip);
async fn partner_user_lockouts_totp_and_recovery_codes_round_trip(t: TestDb) {
    let (a, _) = partner(&t.stores, 1).await;
    let s = &t.stores.partner_users;
    let dev = new_user(&a.id, 1, "dev@broker.example", Role::Admin);
    add(&t, &dev, "one", 1000).await;
    let nobody = UserId::from_bytes([9; 6]);

    // Lockout, with its audit entry.
    let lock = Lockout {
        failures: vec![1001, 1002, 1003],
        locked_until: Some(2000),
    };
    let failed = entry(&a.id, 1_003_000, AuditAction::SignInFailed, "password");
    s.save_lockout(&dev.id, &lock, &[], Some(failed))
        .await
        .unwrap();
    assert_eq!(s.user(&a.id, dev.id.as_str()).await.unwrap().lockout, lock);
    s.save_lockout(&dev.id, &Lockout::default(), &[], None)
        .await
        .unwrap();
    assert_eq!(
        s.user(&a.id, dev.id.as_str()).await.unwrap().lockout,
        Lockout::default()
    );
    let unknown = s.save_lockout(&nobody, &lock, &[], None).await;
    assert!(matches!(unknown, Err(StoreError::NotFound)), "{unknown:?}");

    // Enrolment: the sealed secret, its step and ten codes.
    let codes: Vec<String> = (0..10).map(|i| format!("code-{i:02}-abcd")).collect();
    let digests: Vec<String> = codes.iter().map(|c| recovery_code_digest(c)).collect();
    let enrolled = entry(&a.id, 1_004_000, AuditAction::TwoFactorEnrolled, "dev");
    s.enrol_totp(
        &dev.id,
        &enrolment("c2VhbGVk", 100, &digests),
        enrolled.clone(),
    )
    .await
    .unwrap();
    let user = s.user(&a.id, dev.id.as_str()).await.unwrap();
    assert_eq!(user.totp_sealed.as_deref(), Some("c2VhbGVk"));
    assert_eq!(user.totp_last_step, Some(100));
    assert!(user.two_factor());
    assert_eq!(s.recovery_codes_left(&dev.id).await.unwrap(), 10);
    assert_eq!(
        actions(&t, &a.id).await,
        [AuditAction::TwoFactorEnrolled, AuditAction::SignInFailed]
    );

    // A recovery code works once.
    let use_code = async |user: &UserId, d: &str| s.use_recovery_code(user, d, 1006).await.unwrap();
    assert!(use_code(&dev.id, &digests[3]).await);
    assert!(!use_code(&dev.id, &digests[3]).await);
    assert!(!use_code(&dev.id, &recovery_code_digest("nope")).await);
    assert!(!use_code(&nobody, &digests[4]).await);
    assert_eq!(s.recovery_codes_left(&dev.id).await.unwrap(), 9);
    assert_eq!(s.recovery_codes_left(&nobody).await.unwrap(), 0);

    // Only a strictly later step is accepted.
    assert!(!s.accept_step(&dev.id, 100).await.unwrap());
    assert!(!s.accept_step(&dev.id, 99).await.unwrap());
    assert!(s.accept_step(&dev.id, 101).await.unwrap());
    assert!(!s.accept_step(&dev.id, 101).await.unwrap());
    assert_eq!(
        s.user(&a.id, dev.id.as_str()).await.unwrap().totp_last_step,
        Some(101)
    );
    assert!(!s.accept_step(&nobody, 500).await.unwrap());

    // A new enrolment replaces the codes.
    let fresh: Vec<String> = (0..10)
        .map(|i| recovery_code_digest(&format!("new-{i}")))
        .collect();
    s.enrol_totp(&dev.id, &enrolment("bmV3", 200, &fresh), enrolled.clone())
        .await
        .unwrap();
    assert_eq!(s.recovery_codes_left(&dev.id).await.unwrap(), 10);
    assert!(!use_code(&dev.id, &digests[0]).await);
    let user = s.user(&a.id, dev.id.as_str()).await.unwrap();
    assert_eq!(user.totp_sealed.as_deref(), Some("bmV3"));
    assert_eq!(user.totp_last_step, Some(200));
    let unknown = s
        .enrol_totp(&nobody, &enrolment("x", 1, &fresh), enrolled)
        .await;
    assert!(matches!(unknown, Err(StoreError::NotFound)), "{unknown:?}");
}

on_both!(partner_sessions_carry_user_pending_flag_and_mode_and_are_purged);
async fn partner_sessions_carry_user_pending_flag_and_mode_and_are_purged(t: TestDb) {
    let (a, _) = partner(&t.stores, 1).await;
    let s = &t.stores.partner_users;
    let dev = new_user(&a.id, 1, "dev@broker.example", Role::Admin);
    add(&t, &dev, "one", 1000).await;

    start(&t, "visitor", None, 5000).await;
    let visitor = s.session(&digest("visitor")).await.unwrap().unwrap();
    assert_eq!(visitor.id_hash, digest("visitor"));
    assert!(visitor.user.is_none() && !visitor.second_factor_pending);
    assert_eq!(visitor.mode, Mode::Test);
    assert_eq!((visitor.created_at, visitor.seen_at), (5000, 5000));
    assert!(s.session(&digest("unknown")).await.unwrap().is_none());
    let taken = s
        .start_session(&session("visitor", None, false, 5001), None, None)
        .await;
    assert!(
        matches!(taken, Err(StoreError::Conflict(Conflict::IdTaken))),
        "{taken:?}"
    );

    // A password accepted, the code still owed: the visitor's session is
    // replaced and no audit entry is written yet.
    s.start_session(
        &session("pending", Some(&dev.id), true, 5001),
        Some(digest("visitor")),
        None,
    )
    .await
    .unwrap();
    assert!(s.session(&digest("visitor")).await.unwrap().is_none());
    let pending = s.session(&digest("pending")).await.unwrap().unwrap();
    assert!(pending.second_factor_pending);
    assert_eq!(pending.user.map(|u| u.id), Some(dev.id.clone()));
    assert!(actions(&t, &a.id).await.is_empty());

    // The code accepted: the pending session is replaced, with the entry.
    let signed_in = entry(&a.id, 5_002_000, AuditAction::SignIn, "code");
    s.start_session(
        &session("full", Some(&dev.id), false, 5002),
        Some(digest("pending")),
        Some(signed_in),
    )
    .await
    .unwrap();
    assert!(s.session(&digest("pending")).await.unwrap().is_none());
    assert_eq!(actions(&t, &a.id).await, [AuditAction::SignIn]);

    s.set_session_mode(&digest("full"), Mode::Live)
        .await
        .unwrap();
    s.touch_session(&digest("full"), 5100).await.unwrap();
    let full = s.session(&digest("full")).await.unwrap().unwrap();
    assert!(!full.second_factor_pending);
    assert_eq!(full.mode, Mode::Live);
    assert_eq!((full.created_at, full.seen_at), (5002, 5100));
    s.set_session_mode(&digest("full"), Mode::Test)
        .await
        .unwrap();
    assert_eq!(
        s.session(&digest("full")).await.unwrap().unwrap().mode,
        Mode::Test
    );
    s.end_session(&digest("full")).await.unwrap();
    assert!(s.session(&digest("full")).await.unwrap().is_none());
    s.end_session(&digest("full")).await.unwrap();

    // Seen at 5000 (idle cut 4000: kept), seen at 3000 (idle: purged),
    // started at 100 (too old: purged).
    start(&t, "fresh", None, 5000).await;
    start(&t, "idle", None, 3000).await;
    start(&t, "old", Some(&dev.id), 100).await;
    s.touch_session(&digest("old"), 4500).await.unwrap();
    assert_eq!(s.purge_user_sessions(4000, 1000).await.unwrap(), 2);
    assert!(s.session(&digest("fresh")).await.unwrap().is_some());
    assert!(s.session(&digest("idle")).await.unwrap().is_none());
    assert!(s.session(&digest("old")).await.unwrap().is_none());
    assert_eq!(s.purge_user_sessions(4000, 1000).await.unwrap(), 0);
}
