//! Partner-portal storage: users with their first link (one address per
//! partner), links that supersede and are used once, lockouts, TOTP
//! secrets and single-use recovery codes, sessions with their user,
//! pending flag and mode, the audit log paged newest first, removing a
//! user, and the partner's commercial agreements.

use domain::ids::{PartnerId, UserId};
use domain::mode::Mode;
use domain::page::PageRequest;
use domain::partner_user::{
    AuditAction, AuditEntry, NewUser, NewUserSession, Role, TotpEnrolment, UserLink,
    recovery_code_digest,
};
use domain::portal::{LinkState, Lockout, digest};
use domain::store::{Conflict, StoreError};

use crate::harness::{TestDb, partner};
use crate::on_both;
use crate::portal::link_use;

fn new_user(partner: &PartnerId, n: u8, email: &str, role: Role) -> NewUser {
    NewUser {
        id: UserId::from_bytes([n; 6]),
        partner: partner.clone(),
        email: email.into(),
        role,
        created_at: 1_000 + i64::from(n),
    }
}

fn link(user: &UserId, token: &str, at: i64) -> UserLink {
    UserLink {
        token_hash: digest(token),
        user: user.clone(),
        created_at: at,
        expires_at: at + 7 * 86_400,
    }
}

fn session(id: &str, user: Option<&UserId>, pending: bool, at: i64) -> NewUserSession {
    NewUserSession {
        id_hash: digest(id),
        user: user.cloned(),
        second_factor_pending: pending,
        csrf: format!("csrf-{id}"),
        mode: Mode::Test,
        created_at: at,
    }
}

fn enrolment(sealed: &str, step: i64, recovery_digests: &[String]) -> TotpEnrolment {
    TotpEnrolment {
        sealed: sealed.to_owned(),
        step,
        recovery_digests: recovery_digests.to_vec(),
    }
}

fn entry(partner: &PartnerId, at_ms: i64, action: AuditAction, target: &str) -> AuditEntry {
    AuditEntry {
        partner: partner.clone(),
        at_ms,
        user: "ops@broker.example".into(),
        ip: Some("10.0.0.1".into()),
        action,
        target: target.into(),
    }
}

/// Stores `user` with a first link of `token` at `at`, writing no entry.
async fn add(t: &TestDb, user: &NewUser, token: &str, at: i64) {
    let first = link(&user.id, token, at);
    let s = &t.stores.partner_users;
    s.insert_user(user, &first, None).await.unwrap();
}

/// Starts session `id` of `user` (a visitor for `None`) at `at`.
async fn start(t: &TestDb, id: &str, user: Option<&UserId>, at: i64) {
    let new = session(id, user, false, at);
    let s = &t.stores.partner_users;
    s.start_session(&new, None, None).await.unwrap();
}

/// The actions of the partner's whole audit log, newest first.
async fn actions(t: &TestDb, partner: &PartnerId) -> Vec<AuditAction> {
    let page = t
        .stores
        .partner_users
        .audit_log(partner, &PageRequest::first(200))
        .await
        .unwrap();
    page.items.iter().map(|e| e.action).collect()
}

on_both!(partner_users_are_stored_with_their_first_link_one_address_per_partner);
async fn partner_users_are_stored_with_their_first_link_one_address_per_partner(t: TestDb) {
    let (a, _) = partner(&t.stores, 1).await;
    let (b, _) = partner(&t.stores, 2).await;
    let s = &t.stores.partner_users;
    let dev = new_user(&a.id, 1, "dev@broker.example", Role::Admin);
    let added = entry(
        &a.id,
        1_001_000,
        AuditAction::UserAdded,
        "dev@broker.example",
    );
    s.insert_user(&dev, &link(&dev.id, "one", 1001), Some(added.clone()))
        .await
        .unwrap();
    let viewer = new_user(&a.id, 2, "viewer@broker.example", Role::Viewer);
    add(&t, &viewer, "two", 1002).await;

    let users = s.users(&a.id).await.unwrap();
    let ids: Vec<_> = users.iter().map(|u| u.id.clone()).collect();
    assert_eq!(ids, [dev.id.clone(), viewer.id.clone()], "oldest first");
    let stored = &users[0];
    assert_eq!(stored.partner, a.id);
    assert_eq!(stored.email, "dev@broker.example");
    assert_eq!(stored.role, Role::Admin);
    assert_eq!(stored.created_at, 1001);
    assert_eq!(stored.password_hash, None);
    assert_eq!(stored.lockout, Lockout::default());
    assert!(!stored.two_factor());
    assert_eq!(stored.totp_last_step, None);
    assert_eq!(&s.user(&a.id, dev.id.as_str()).await.unwrap(), stored);
    assert_eq!(&s.user(&a.id, "dev@broker.example").await.unwrap(), stored);
    assert!(s.users(&b.id).await.unwrap().is_empty());
    assert!(matches!(
        s.user(&b.id, dev.id.as_str()).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        s.user(&a.id, "nobody@broker.example").await,
        Err(StoreError::NotFound)
    ));
    assert_eq!(actions(&t, &a.id).await, [AuditAction::UserAdded]);
    let log = s.audit_log(&a.id, &PageRequest::first(10)).await.unwrap();
    assert_eq!(log.items, [added]);

    // One address per partner; another partner may have it.
    let again = new_user(&a.id, 3, "dev@broker.example", Role::Viewer);
    let taken = s
        .insert_user(&again, &link(&again.id, "three", 1003), None)
        .await;
    assert!(
        matches!(taken, Err(StoreError::Conflict(Conflict::UserTaken))),
        "{taken:?}"
    );
    assert!(s.link(&digest("three")).await.unwrap().is_none());
    let elsewhere = new_user(&b.id, 4, "dev@broker.example", Role::Admin);
    add(&t, &elsewhere, "four", 1004).await;
    let both = s.users_by_email("dev@broker.example").await.unwrap();
    let mut partners: Vec<_> = both.iter().map(|u| u.partner.clone()).collect();
    partners.sort_by(|x, y| x.as_str().cmp(y.as_str()));
    assert_eq!(partners, [a.id.clone(), b.id.clone()]);
    assert!(
        s.users_by_email("other@broker.example")
            .await
            .unwrap()
            .is_empty()
    );

    // An unknown partner.
    let nowhere = PartnerId::from_bytes([9; 6]);
    let orphan = new_user(&nowhere, 5, "x@broker.example", Role::Admin);
    let missing = s
        .insert_user(&orphan, &link(&orphan.id, "five", 1005), None)
        .await;
    assert!(matches!(missing, Err(StoreError::NotFound)), "{missing:?}");
}

on_both!(a_newer_partner_user_link_supersedes_the_older_one);
async fn a_newer_partner_user_link_supersedes_the_older_one(t: TestDb) {
    let (a, _) = partner(&t.stores, 1).await;
    let s = &t.stores.partner_users;
    let dev = new_user(&a.id, 1, "dev@broker.example", Role::Admin);
    add(&t, &dev, "one", 1000).await;
    let one = s.link(&digest("one")).await.unwrap().unwrap();
    assert_eq!(one.user.id, dev.id);
    assert_eq!(one.expires_at, 1000 + 7 * 86_400);
    assert_eq!(one.used_at, None);
    assert!(one.newest);
    assert_eq!(one.state(1001), LinkState::Usable);
    assert_eq!(one.state(1000 + 7 * 86_400), LinkState::Expired);
    assert!(s.link(&digest("unknown")).await.unwrap().is_none());

    s.insert_link(&link(&dev.id, "two", 2000)).await.unwrap();
    let one = s.link(&digest("one")).await.unwrap().unwrap();
    let two = s.link(&digest("two")).await.unwrap().unwrap();
    assert!(!one.newest && two.newest);
    assert_eq!(one.state(2001), LinkState::Used);
    assert_eq!(two.state(2001), LinkState::Usable);
    let unknown = s
        .insert_link(&link(&UserId::from_bytes([9; 6]), "three", 3000))
        .await;
    assert!(matches!(unknown, Err(StoreError::NotFound)), "{unknown:?}");
}

on_both!(a_partner_user_link_is_used_once_and_ends_the_users_sessions);
async fn a_partner_user_link_is_used_once_and_ends_the_users_sessions(t: TestDb) {
    let (a, _) = partner(&t.stores, 1).await;
    let s = &t.stores.partner_users;
    let dev = new_user(&a.id, 1, "dev@broker.example", Role::Admin);
    let other = new_user(&a.id, 2, "other@broker.example", Role::Viewer);
    add(&t, &dev, "one", 1000).await;
    add(&t, &other, "other", 1000).await;
    s.insert_link(&link(&dev.id, "two", 1001)).await.unwrap();
    let lock = Lockout {
        failures: vec![990, 995],
        locked_until: Some(5000),
    };
    s.save_lockout(&dev.id, &lock, &[], None).await.unwrap();
    start(&t, "old", Some(&dev.id), 1002).await;
    start(&t, "visitor", None, 1002).await;
    start(&t, "theirs", Some(&other.id), 1002).await;
    let set = entry(
        &a.id,
        1_003_000,
        AuditAction::PasswordSet,
        "dev@broker.example",
    );

    // The superseded link writes nothing.
    let stale = s
        .use_link(
            &link_use(&digest("one"), "$argon2id$x", None),
            &session("a", Some(&dev.id), false, 1003),
            set.clone(),
        )
        .await;
    assert!(
        matches!(stale, Err(StoreError::Conflict(Conflict::LinkUsed))),
        "{stale:?}"
    );
    assert!(s.session(&digest("a")).await.unwrap().is_none());
    assert!(s.session(&digest("old")).await.unwrap().is_some());

    s.use_link(
        &link_use(&digest("two"), "$argon2id$y", Some(digest("visitor"))),
        &session("new", Some(&dev.id), false, 1003),
        set.clone(),
    )
    .await
    .unwrap();
    assert!(s.session(&digest("old")).await.unwrap().is_none());
    assert!(s.session(&digest("visitor")).await.unwrap().is_none());
    assert!(
        s.session(&digest("theirs")).await.unwrap().is_some(),
        "another user's session is kept"
    );
    let new = s.session(&digest("new")).await.unwrap().unwrap();
    let user = new.user.unwrap();
    assert_eq!(user.id, dev.id);
    assert_eq!(user.password_hash.as_deref(), Some("$argon2id$y"));
    assert_eq!(user.lockout, Lockout::default(), "the lockout is cleared");
    assert_eq!(new.csrf, "csrf-new");
    assert!(!new.second_factor_pending);
    let used = s.link(&digest("two")).await.unwrap().unwrap();
    assert_eq!(used.used_at, Some(1003));
    assert_eq!(used.state(1004), LinkState::Used);
    assert_eq!(actions(&t, &a.id).await, [AuditAction::PasswordSet]);

    // Used once: the second use writes nothing.
    let again = s
        .use_link(
            &link_use(&digest("two"), "$argon2id$z", None),
            &session("b", Some(&dev.id), false, 1004),
            set,
        )
        .await;
    assert!(
        matches!(again, Err(StoreError::Conflict(Conflict::LinkUsed))),
        "{again:?}"
    );
    assert!(s.session(&digest("b")).await.unwrap().is_none());
    assert!(s.session(&digest("new")).await.unwrap().is_some());
    let user = s.user(&a.id, dev.id.as_str()).await.unwrap();
    assert_eq!(user.password_hash.as_deref(), Some("$argon2id$y"));
    assert_eq!(actions(&t, &a.id).await, [AuditAction::PasswordSet]);
}

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

on_both!(the_partner_audit_log_pages_newest_first_and_is_purged);
async fn the_partner_audit_log_pages_newest_first_and_is_purged(t: TestDb) {
    let (a, _) = partner(&t.stores, 1).await;
    let (b, _) = partner(&t.stores, 2).await;
    let s = &t.stores.partner_users;
    for (i, action) in [
        AuditAction::SignIn,
        AuditAction::KeyMinted,
        AuditAction::PingSent,
        AuditAction::KeyRevoked,
        AuditAction::SignIn,
    ]
    .into_iter()
    .enumerate()
    {
        let at = 1_000 * (i64::try_from(i).unwrap() + 1);
        s.audit(&entry(&a.id, at, action, &format!("target-{i}")))
            .await
            .unwrap();
    }
    // Two entries of one millisecond are both kept and both paged.
    s.audit(&entry(&a.id, 5_000, AuditAction::Replay, "same-ms"))
        .await
        .unwrap();
    let theirs = AuditEntry {
        ip: None,
        ..entry(&b.id, 2_500, AuditAction::UserAdded, "b")
    };
    s.audit(&theirs).await.unwrap();

    let mut seen = Vec::new();
    let mut page = PageRequest::first(2);
    let mut pages = 0;
    loop {
        let got = s.audit_log(&a.id, &page).await.unwrap();
        assert!(got.items.len() <= 2);
        pages += 1;
        seen.extend(got.items);
        match got.next {
            Some(cursor) => {
                page = PageRequest {
                    limit: 2,
                    after: Some(cursor),
                };
            }
            None => break,
        }
    }
    assert_eq!(pages, 3);
    let times: Vec<i64> = seen.iter().map(|e| e.at_ms).collect();
    assert_eq!(times, [5_000, 5_000, 4_000, 3_000, 2_000, 1_000]);
    let mut last_two: Vec<&str> = seen[..2].iter().map(|e| e.target.as_str()).collect();
    last_two.sort_unstable();
    assert_eq!(last_two, ["same-ms", "target-4"]);
    assert_eq!(
        seen[2],
        entry(&a.id, 4_000, AuditAction::KeyRevoked, "target-3")
    );
    assert!(seen.iter().all(|e| e.partner == a.id));
    let first = s.audit_log(&b.id, &PageRequest::first(2)).await.unwrap();
    assert_eq!(first.items, [theirs]);
    assert_eq!(first.next, None);

    // Entries older than 3 000 ms go, of every partner.
    assert_eq!(s.purge_audit(3_000).await.unwrap(), 3);
    let left = s.audit_log(&a.id, &PageRequest::first(50)).await.unwrap();
    let times: Vec<i64> = left.items.iter().map(|e| e.at_ms).collect();
    assert_eq!(times, [5_000, 5_000, 4_000, 3_000]);
    assert!(actions(&t, &b.id).await.is_empty());
    assert_eq!(s.purge_audit(3_000).await.unwrap(), 0);
}

on_both!(removing_a_partner_user_ends_its_sessions_links_and_codes);
async fn removing_a_partner_user_ends_its_sessions_links_and_codes(t: TestDb) {
    let (a, _) = partner(&t.stores, 1).await;
    let (b, _) = partner(&t.stores, 2).await;
    let s = &t.stores.partner_users;
    let dev = new_user(&a.id, 1, "dev@broker.example", Role::Admin);
    let stays = new_user(&a.id, 2, "stays@broker.example", Role::Admin);
    add(&t, &dev, "one", 1000).await;
    add(&t, &stays, "two", 1000).await;
    let digests = vec![recovery_code_digest("aaaa-bbbb")];
    let enrolled = entry(&a.id, 1_001_000, AuditAction::TwoFactorEnrolled, "x");
    s.enrol_totp(
        &dev.id,
        &enrolment("c2VhbGVk", 1, &digests),
        enrolled.clone(),
    )
    .await
    .unwrap();
    s.enrol_totp(&stays.id, &enrolment("c2VhbGVk", 1, &digests), enrolled)
        .await
        .unwrap();
    start(&t, "dev", Some(&dev.id), 1002).await;
    start(&t, "stays", Some(&stays.id), 1002).await;

    // Another partner's id reaches nothing.
    let wrong = s.remove_user(&b.id, &dev.id, None).await;
    assert!(matches!(wrong, Err(StoreError::NotFound)), "{wrong:?}");
    assert!(s.session(&digest("dev")).await.unwrap().is_some());

    let removed = entry(
        &a.id,
        1_003_000,
        AuditAction::UserRemoved,
        "dev@broker.example",
    );
    s.remove_user(&a.id, &dev.id, Some(removed.clone()))
        .await
        .unwrap();
    let ids: Vec<_> = s
        .users(&a.id)
        .await
        .unwrap()
        .into_iter()
        .map(|u| u.id)
        .collect();
    assert_eq!(ids, std::slice::from_ref(&stays.id));
    assert!(matches!(
        s.user(&a.id, "dev@broker.example").await,
        Err(StoreError::NotFound)
    ));
    assert!(s.session(&digest("dev")).await.unwrap().is_none());
    assert!(s.link(&digest("one")).await.unwrap().is_none());
    assert_eq!(s.recovery_codes_left(&dev.id).await.unwrap(), 0);
    assert!(
        s.users_by_email("dev@broker.example")
            .await
            .unwrap()
            .is_empty()
    );
    // The other user keeps everything.
    assert!(s.session(&digest("stays")).await.unwrap().is_some());
    assert!(s.link(&digest("two")).await.unwrap().is_some());
    assert_eq!(s.recovery_codes_left(&stays.id).await.unwrap(), 1);
    let log = s.audit_log(&a.id, &PageRequest::first(1)).await.unwrap();
    assert_eq!(log.items, [removed]);

    let again = s.remove_user(&a.id, &dev.id, None).await;
    assert!(matches!(again, Err(StoreError::NotFound)), "{again:?}");
    // The address is free again.
    let back = new_user(&a.id, 3, "dev@broker.example", Role::Viewer);
    add(&t, &back, "three", 1004).await;
}

on_both!(partner_commercial_agreements_show_on_the_partner);
async fn partner_commercial_agreements_show_on_the_partner(t: TestDb) {
    let (a, _) = partner(&t.stores, 1).await;
    let p = &t.stores.partners;
    assert!(!p.partner(&a.id).await.unwrap().commercial_done);
    p.set_commercial_done(&a.id, true, 2000).await.unwrap();
    assert!(p.partner(&a.id).await.unwrap().commercial_done);
    let listed = p.partners().await.unwrap();
    assert!(listed.iter().any(|x| x.id == a.id && x.commercial_done));
    p.set_commercial_done(&a.id, false, 2001).await.unwrap();
    assert!(!p.partner(&a.id).await.unwrap().commercial_done);
    let unknown = p
        .set_commercial_done(&PartnerId::from_bytes([9; 6]), true, 2002)
        .await;
    assert!(matches!(unknown, Err(StoreError::NotFound)), "{unknown:?}");
}
