//! Partner users with their first link, links that supersede and are used once, agreements.

use domain::ids::{PartnerId, UserId};
use domain::page::PageRequest;
use domain::partner_user::{AuditAction, Role};
use domain::portal::{LinkState, Lockout, digest};
use domain::store::{Conflict, StoreError};

use crate::harness::{TestDb, partner};
use crate::on_both;
use crate::partner_users::{actions, add, entry, link, new_user, session, start};
use crate::portal::link_use;

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
