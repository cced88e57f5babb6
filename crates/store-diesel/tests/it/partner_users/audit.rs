//! The partner audit log paged newest first, and removing a partner user.

use domain::page::PageRequest;
use domain::partner_user::{AuditAction, AuditEntry, Role, recovery_code_digest};
use domain::portal::digest;
use domain::store::StoreError;

use crate::harness::{TestDb, partner};
use crate::on_both;
use crate::partner_users::{actions, add, enrolment, entry, new_user, start};

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
