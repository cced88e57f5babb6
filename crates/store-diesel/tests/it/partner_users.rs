//! Partner-portal storage: users with their first link (one address per
//! partner), links that supersede and are used once, lockouts, TOTP
//! secrets and single-use recovery codes, sessions with their user,
//! pending flag and mode, the audit log paged newest first, removing a
//! user, and the partner's commercial agreements.

mod audit;
mod sign_in;
mod users;

use domain::ids::{PartnerId, UserId};
use domain::mode::Mode;
use domain::page::PageRequest;
use domain::partner_user::{
    AuditAction, AuditEntry, NewUser, NewUserSession, Role, TotpEnrolment, UserLink,
};
use domain::portal::digest;

use crate::harness::TestDb;

pub(super) fn new_user(partner: &PartnerId, n: u8, email: &str, role: Role) -> NewUser {
    NewUser {
        id: UserId::from_bytes([n; 6]),
        partner: partner.clone(),
        email: email.into(),
        role,
        created_at: 1_000 + i64::from(n),
    }
}

pub(super) fn link(user: &UserId, token: &str, at: i64) -> UserLink {
    UserLink {
        token_hash: digest(token),
        user: user.clone(),
        created_at: at,
        expires_at: at + 7 * 86_400,
    }
}

pub(super) fn session(id: &str, user: Option<&UserId>, pending: bool, at: i64) -> NewUserSession {
    NewUserSession {
        id_hash: digest(id),
        user: user.cloned(),
        second_factor_pending: pending,
        csrf: format!("csrf-{id}"),
        mode: Mode::Test,
        created_at: at,
    }
}

pub(super) fn enrolment(sealed: &str, step: i64, recovery_digests: &[String]) -> TotpEnrolment {
    TotpEnrolment {
        sealed: sealed.to_owned(),
        step,
        recovery_digests: recovery_digests.to_vec(),
    }
}

pub(super) fn entry(
    partner: &PartnerId,
    at_ms: i64,
    action: AuditAction,
    target: &str,
) -> AuditEntry {
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
pub(super) async fn add(t: &TestDb, user: &NewUser, token: &str, at: i64) {
    let first = link(&user.id, token, at);
    let s = &t.stores.partner_users;
    s.insert_user(user, &first, None).await.unwrap();
}

/// Starts session `id` of `user` (a visitor for `None`) at `at`.
pub(super) async fn start(t: &TestDb, id: &str, user: Option<&UserId>, at: i64) {
    let new = session(id, user, false, at);
    let s = &t.stores.partner_users;
    s.start_session(&new, None, None).await.unwrap();
}

/// The actions of the partner's whole audit log, newest first.
pub(super) async fn actions(t: &TestDb, partner: &PartnerId) -> Vec<AuditAction> {
    let page = t
        .stores
        .partner_users
        .audit_log(partner, &PageRequest::first(200))
        .await
        .unwrap();
    page.items.iter().map(|e| e.action).collect()
}
