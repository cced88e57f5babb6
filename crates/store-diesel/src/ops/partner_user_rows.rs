//! The rows of the partner portal's tables and the writes that several
//! of its store operations share (an audit entry, a link, a session).

use diesel::{ExpressionMethods, QueryDsl, Queryable, Selectable};
use diesel_async::RunQueryDsl;
use domain::ids::{PartnerId, UserId};
use domain::partner_user::{AuditAction, AuditEntry, NewUserSession, PartnerUser, Role, UserLink};
use domain::portal::Lockout;
use domain::store::{StoreError, StoreResult};

use super::Conn;
use crate::error::{TxError, corrupt};
use crate::schema::{
    partner_audit as audit, partner_sessions as sessions, partner_user_links as links,
    partner_users as users,
};

#[derive(Queryable, Selectable)]
#[diesel(table_name = users)]
pub(super) struct UserRow {
    id: String,
    partner_id: String,
    email: String,
    role: String,
    password_hash: Option<String>,
    failures: String,
    locked_until: Option<i64>,
    totp_sealed: Option<String>,
    totp_last_step: Option<i64>,
    created_at: i64,
}

impl UserRow {
    pub(super) fn into_domain(self) -> StoreResult<PartnerUser> {
        Ok(PartnerUser {
            id: UserId::parse(&self.id).map_err(|_| corrupt("user id", &self.id))?,
            partner: PartnerId::parse(&self.partner_id)
                .map_err(|_| corrupt("partner id", &self.partner_id))?,
            email: self.email,
            role: Role::parse(&self.role).ok_or_else(|| corrupt("role", &self.role))?,
            password_hash: self.password_hash,
            lockout: Lockout::from_stored(&self.failures, self.locked_until),
            totp_sealed: self.totp_sealed,
            totp_last_step: self.totp_last_step,
            created_at: self.created_at,
        })
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = audit)]
pub(super) struct AuditRow {
    id: String,
    partner_id: String,
    created_at: i64,
    user_email: String,
    ip: Option<String>,
    action: String,
    target: String,
}

impl AuditRow {
    pub(super) fn into_domain(self) -> StoreResult<(String, AuditEntry)> {
        Ok((
            self.id,
            AuditEntry {
                partner: PartnerId::parse(&self.partner_id)
                    .map_err(|_| corrupt("partner id", &self.partner_id))?,
                at_ms: self.created_at,
                user: self.user_email,
                ip: self.ip,
                action: AuditAction::parse(&self.action)
                    .ok_or_else(|| corrupt("audit action", &self.action))?,
                target: self.target,
            },
        ))
    }
}

/// An audit row's id: its time (so ids order as entries do) and 64
/// random bits (so two entries of one millisecond never collide).
fn audit_id(at_ms: i64) -> Result<String, TxError> {
    use ring::rand::SecureRandom as _;
    let mut nonce = [0u8; 8];
    ring::rand::SystemRandom::new()
        .fill(&mut nonce)
        .map_err(|_| TxError::Store(StoreError::Internal("no randomness".into())))?;
    Ok(format!("aud_{:013}{}", at_ms.max(0), hex::encode(nonce)))
}

pub(super) async fn write_audit(c: &mut Conn, e: &AuditEntry) -> Result<(), TxError> {
    diesel::insert_into(audit::table)
        .values((
            audit::id.eq(audit_id(e.at_ms)?),
            audit::partner_id.eq(e.partner.as_str()),
            audit::created_at.eq(e.at_ms),
            audit::user_email.eq(&e.user),
            audit::ip.eq(e.ip.as_deref()),
            audit::action.eq(e.action.as_str()),
            audit::target.eq(&e.target),
        ))
        .execute(c)
        .await?;
    Ok(())
}

pub(super) async fn put_link(c: &mut Conn, link: &UserLink) -> Result<(), TxError> {
    diesel::update(
        links::table
            .filter(links::user_id.eq(link.user.as_str()))
            .filter(links::superseded_at.is_null()),
    )
    .set(links::superseded_at.eq(link.created_at))
    .execute(c)
    .await?;
    diesel::insert_into(links::table)
        .values((
            links::token_hash.eq(&link.token_hash),
            links::user_id.eq(link.user.as_str()),
            links::created_at.eq(link.created_at),
            links::expires_at.eq(link.expires_at),
        ))
        .execute(c)
        .await?;
    Ok(())
}

pub(super) async fn insert_session(c: &mut Conn, s: &NewUserSession) -> Result<(), TxError> {
    diesel::insert_into(sessions::table)
        .values((
            sessions::id_hash.eq(&s.id_hash),
            sessions::user_id.eq(s.user.as_ref().map(UserId::as_str)),
            sessions::second_factor_pending.eq(s.second_factor_pending),
            sessions::csrf.eq(&s.csrf),
            sessions::mode.eq(s.mode.as_str()),
            sessions::created_at.eq(s.created_at),
            sessions::seen_at.eq(s.created_at),
        ))
        .execute(c)
        .await?;
    Ok(())
}

