//! Employer-portal storage: a new link supersedes the account's older
//! ones, a link is used once (a second use writes nothing), using it ends
//! the account's sessions, lockouts round-trip, ended sessions are purged,
//! and another partner's scope reaches nothing.

use domain::ids::PartnerId;
use domain::mode::Mode;
use domain::portal::{LinkUse, Lockout, NewLink, NewSession, digest};
use domain::scope::Scope;
use domain::store::{Conflict, StoreError};

use crate::harness::{TestDb, partner};
use crate::on_both;
use crate::onboarding::enrolled;

fn link(e: &domain::enrollment::Enrollment, token: &str, at: i64) -> NewLink {
    NewLink {
        token_hash: digest(token),
        token_sealed: format!("sealed-{token}"),
        enrollment_id: e.id.clone(),
        group_id: e.group_id.clone(),
        email: "dana@acme-mfg.com".into(),
        created_at: at,
        expires_at: at + 7 * 86_400,
    }
}

/// The use of the link with digest `token_hash`, setting `password_hash`
/// and replacing the session `replaces`.
pub fn link_use(token_hash: &str, password_hash: &str, replaces: Option<String>) -> LinkUse {
    LinkUse {
        token_hash: token_hash.to_owned(),
        password_hash: password_hash.to_owned(),
        replaces,
    }
}

fn session(id: &str, e: Option<&domain::enrollment::Enrollment>, at: i64) -> NewSession {
    NewSession {
        id_hash: digest(id),
        enrollment_id: e.map(|e| e.id.clone()),
        csrf: format!("csrf-{id}"),
        created_at: at,
    }
}

on_both!(links_supersede_are_used_once_and_end_the_accounts_sessions);
async fn links_supersede_are_used_once_and_end_the_accounts_sessions(t: TestDb) {
    let (_, scope) = partner(&t.stores, 1).await;
    let e = enrolled(&t, &scope).await;
    let s = &t.stores.portal;
    s.insert_link(&scope, &link(&e, "one", 1000), &[])
        .await
        .unwrap();
    s.insert_link(&scope, &link(&e, "two", 1001), &[])
        .await
        .unwrap();
    let one = s.link(&digest("one")).await.unwrap().unwrap();
    let two = s.link(&digest("two")).await.unwrap().unwrap();
    assert!(!one.newest && two.newest);
    assert_eq!(two.account.email, "dana@acme-mfg.com");
    assert_eq!(two.account.scope, scope);
    let newest = s.newest_link(&scope, &e.id).await.unwrap().unwrap();
    assert_eq!(newest.token_sealed, "sealed-two");
    // The superseded link cannot be used.
    let refused = s
        .use_link(
            &link_use(&digest("one"), "$argon2id$x", None),
            &session("a", Some(&e), 1002),
            1002,
        )
        .await;
    assert!(
        matches!(refused, Err(StoreError::Conflict(Conflict::LinkUsed))),
        "{refused:?}"
    );
    // An admin session, then the newest link: the old session ends.
    s.start_session(&session("old", Some(&e), 1003), None)
        .await
        .unwrap();
    s.start_session(&session("visitor", None, 1003), None)
        .await
        .unwrap();
    s.use_link(
        &link_use(&digest("two"), "$argon2id$y", Some(digest("visitor"))),
        &session("new", Some(&e), 1004),
        1004,
    )
    .await
    .unwrap();
    assert!(s.session(&digest("old")).await.unwrap().is_none());
    assert!(s.session(&digest("visitor")).await.unwrap().is_none());
    let new = s.session(&digest("new")).await.unwrap().unwrap();
    let account = new.account.unwrap();
    assert_eq!(account.password_hash.as_deref(), Some("$argon2id$y"));
    assert_eq!(new.csrf, "csrf-new");
    // Used once.
    let again = s
        .use_link(
            &link_use(&digest("two"), "$argon2id$z", None),
            &session("b", Some(&e), 1005),
            1005,
        )
        .await;
    assert!(
        matches!(again, Err(StoreError::Conflict(Conflict::LinkUsed))),
        "{again:?}"
    );
    assert_eq!(
        s.link(&digest("two")).await.unwrap().unwrap().used_at,
        Some(1004)
    );
    // Another partner's scope reaches nothing.
    let other = Scope::new(PartnerId::parse("prt_00000000beef").unwrap(), Mode::Test);
    assert!(s.newest_link(&other, &e.id).await.unwrap().is_none());
    assert!(s.account(&other, &e.id).await.unwrap().is_none());
    assert!(matches!(
        s.insert_link(&other, &link(&e, "three", 1006), &[]).await,
        Err(StoreError::NotFound)
    ));
}

on_both!(lockouts_round_trip_and_ended_sessions_are_purged);
async fn lockouts_round_trip_and_ended_sessions_are_purged(t: TestDb) {
    let (_, scope) = partner(&t.stores, 1).await;
    let e = enrolled(&t, &scope).await;
    let s = &t.stores.portal;
    s.insert_link(&scope, &link(&e, "one", 1000), &[])
        .await
        .unwrap();
    let lock = Lockout {
        failures: vec![1001, 1002],
        locked_until: Some(2000),
    };
    s.save_lockout(&e.id, &lock, &[]).await.unwrap();
    let accounts = s.accounts_by_email("dana@acme-mfg.com").await.unwrap();
    assert_eq!(accounts.len(), 1);
    assert_eq!(accounts[0].lockout, lock);
    assert!(
        s.accounts_by_email("other@acme-mfg.com")
            .await
            .unwrap()
            .is_empty()
    );
    // Seen at 5000 (idle cut 4000: kept), seen at 3000 (idle: purged),
    // started at 100 (too old: purged).
    s.start_session(&session("fresh", None, 5000), None)
        .await
        .unwrap();
    s.start_session(&session("idle", None, 3000), None)
        .await
        .unwrap();
    s.start_session(&session("old", None, 100), None)
        .await
        .unwrap();
    s.touch_session(&digest("old"), 4500).await.unwrap();
    assert_eq!(s.purge_sessions(4000, 200).await.unwrap(), 2);
    assert!(s.session(&digest("fresh")).await.unwrap().is_some());
    s.end_session(&digest("fresh")).await.unwrap();
    assert!(s.session(&digest("fresh")).await.unwrap().is_none());
}
