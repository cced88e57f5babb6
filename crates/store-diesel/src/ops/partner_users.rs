//! The partner portal's users, links, two-factor secrets, recovery codes,
//! sessions and audit log (shared by both backends). Every change that a
//! user makes is written with its audit entry in one transaction.

use async_trait::async_trait;
use diesel::{
    BoolExpressionMethods as _, ExpressionMethods, OptionalExtension, QueryDsl,
    SelectableHelper,
};
use diesel_async::RunQueryDsl;
use domain::ids::{PartnerId, UserId};
use domain::job::NewJob;
use domain::mode::Mode;
use domain::page::{Cursor, Page, PageRequest};
use domain::partner_user::{
    AuditEntry, NewUser, NewUserSession, PartnerUser, StoredUserLink, TotpEnrolment, UserLink,
    UserSession,
};
use domain::portal::{LinkUse, Lockout};
use domain::store::{PartnerUserStore, StoreError, StoreResult};

use super::partner_user_rows::{
    AuditRow, UserRow, insert_session, put_link, write_audit,
};
use super::shared::{insert_jobs, job_rows};
use super::{Conn, Store};
use crate::error::{TxError, db};
use crate::schema::{
    partner_audit as audit, partner_recovery_codes as codes, partner_sessions as sessions,
    partner_user_links as links, partner_users as users, partners,
};

fn not_found() -> TxError {
    TxError::Store(StoreError::NotFound)
}

#[async_trait]
impl PartnerUserStore for Store {
    async fn insert_user(
        &self,
        user: &NewUser,
        link: &UserLink,
        entry: Option<AuditEntry>,
    ) -> StoreResult<()> {
                write_tx!(self, async |c: &mut Conn| {
            let partner: Option<String> = partners::table
                .find(user.partner.as_str())
                .select(partners::id)
                .first(c)
                .await
                .optional()?;
            if partner.is_none() {
                return Err(not_found());
            }
            // A second user with the address breaks the unique index
            // `partner_users_email`: `Conflict::UserTaken` (see `db`).
            diesel::insert_into(users::table)
                .values((
                    users::id.eq(user.id.as_str()),
                    users::partner_id.eq(user.partner.as_str()),
                    users::email.eq(&user.email),
                    users::role.eq(user.role.as_str()),
                    users::failures.eq(""),
                    users::created_at.eq(user.created_at),
                ))
                .execute(c)
                .await?;
            put_link(c, link).await?;
            if let Some(e) = &entry {
                write_audit(c, e).await?;
            }
            Ok::<_, TxError>(())
        })
        .await?;
        Ok(())
    }

    async fn insert_link(&self, link: &UserLink) -> StoreResult<()> {
                write_tx!(self, async |c: &mut Conn| {
            let user: Option<String> = users::table
                .find(link.user.as_str())
                .select(users::id)
                .first(c)
                .await
                .optional()?;
            if user.is_none() {
                return Err(not_found());
            }
            put_link(c, link).await
        })
        .await?;
        Ok(())
    }

    async fn users(&self, partner: &PartnerId) -> StoreResult<Vec<PartnerUser>> {
        let mut conn = self.conn().await?;
        let rows: Vec<UserRow> = users::table
            .filter(users::partner_id.eq(partner.as_str()))
            .order((users::created_at.asc(), users::id.asc()))
            .select(UserRow::as_select())
            .load(&mut *conn)
            .await
            .map_err(db)?;
        rows.into_iter().map(UserRow::into_domain).collect()
    }

    async fn user(&self, partner: &PartnerId, id_or_email: &str) -> StoreResult<PartnerUser> {
        let mut conn = self.conn().await?;
        let row: UserRow = users::table
            .filter(users::partner_id.eq(partner.as_str()))
            .filter(users::id.eq(id_or_email).or(users::email.eq(id_or_email)))
            .select(UserRow::as_select())
            .first(&mut *conn)
            .await
            .map_err(db)?;
        row.into_domain()
    }

    async fn remove_user(
        &self,
        partner: &PartnerId,
        user: &UserId,
        entry: Option<AuditEntry>,
    ) -> StoreResult<()> {
                write_tx!(self, async |c: &mut Conn| {
            let n = diesel::delete(
                users::table
                    .filter(users::id.eq(user.as_str()))
                    .filter(users::partner_id.eq(partner.as_str())),
            )
            .execute(c)
            .await?;
            if n == 0 {
                return Err(not_found());
            }
            diesel::delete(sessions::table.filter(sessions::user_id.eq(user.as_str())))
                .execute(c)
                .await?;
            diesel::delete(links::table.filter(links::user_id.eq(user.as_str())))
                .execute(c)
                .await?;
            diesel::delete(codes::table.filter(codes::user_id.eq(user.as_str())))
                .execute(c)
                .await?;
            if let Some(e) = &entry {
                write_audit(c, e).await?;
            }
            Ok::<_, TxError>(())
        })
        .await?;
        Ok(())
    }

    async fn link(&self, token_hash: &str) -> StoreResult<Option<StoredUserLink>> {
        let mut conn = self.conn().await?;
        let row: Option<(i64, Option<i64>, Option<i64>, UserRow)> = links::table
            .inner_join(users::table)
            .filter(links::token_hash.eq(token_hash))
            .select((
                links::expires_at,
                links::used_at,
                links::superseded_at,
                UserRow::as_select(),
            ))
            .first(&mut *conn)
            .await
            .optional()
            .map_err(db)?;
        row.map(|(expires_at, used_at, superseded_at, user)| {
            Ok(StoredUserLink {
                user: user.into_domain()?,
                expires_at,
                used_at,
                newest: superseded_at.is_none(),
            })
        })
        .transpose()
    }

    async fn use_link(
        &self,
        link: &LinkUse,
        session: &NewUserSession,
        entry: AuditEntry,
    ) -> StoreResult<()> {
        let now = session.created_at;
                write_tx!(self, async |c: &mut Conn| {
            use_link!(c, links.user_id, users, sessions.user_id, link, now);
            insert_session(c, session).await?;
            write_audit(c, &entry).await
        })
        .await?;
        Ok(())
    }

    async fn users_by_email(&self, email: &str) -> StoreResult<Vec<PartnerUser>> {
        let mut conn = self.conn().await?;
        accounts_by_email!(&mut *conn, users, UserRow, email)
    }

    async fn save_lockout(
        &self,
        user: &UserId,
        lockout: &Lockout,
        jobs: &[NewJob],
        entry: Option<AuditEntry>,
    ) -> StoreResult<()> {
        let rows = job_rows(jobs)?;
        let failures = lockout.failures_stored();
                write_tx!(self, async |c: &mut Conn| {
            save_lockout!(c, users, user.as_str(), lockout, &failures);
            insert_jobs(c, &rows).await?;
            if let Some(e) = &entry {
                write_audit(c, e).await?;
            }
            Ok::<_, TxError>(())
        })
        .await?;
        Ok(())
    }

    async fn enrol_totp(
        &self,
        user: &UserId,
        enrolment: &TotpEnrolment,
        entry: AuditEntry,
    ) -> StoreResult<()> {
                write_tx!(self, async |c: &mut Conn| {
            let n = diesel::update(users::table.find(user.as_str()))
                .set((
                    users::totp_sealed.eq(&enrolment.sealed),
                    users::totp_last_step.eq(enrolment.step),
                ))
                .execute(c)
                .await?;
            if n == 0 {
                return Err(not_found());
            }
            diesel::delete(codes::table.filter(codes::user_id.eq(user.as_str())))
                .execute(c)
                .await?;
            for d in &enrolment.recovery_digests {
                diesel::insert_into(codes::table)
                    .values((codes::user_id.eq(user.as_str()), codes::code_hash.eq(d)))
                    .execute(c)
                    .await?;
            }
            write_audit(c, &entry).await
        })
        .await?;
        Ok(())
    }

    async fn accept_step(&self, user: &UserId, step: i64) -> StoreResult<bool> {
                let n = write_tx!(self, async |c: &mut Conn| {
            let n = diesel::update(
                users::table.find(user.as_str()).filter(
                    users::totp_last_step
                        .is_null()
                        .or(users::totp_last_step.lt(step)),
                ),
            )
            .set(users::totp_last_step.eq(step))
            .execute(c)
            .await?;
            Ok::<_, TxError>(n)
        })
        .await?;
        Ok(n > 0)
    }

    async fn use_recovery_code(&self, user: &UserId, digest: &str, now: i64) -> StoreResult<bool> {
                let n = write_tx!(self, async |c: &mut Conn| {
            let n = diesel::update(
                codes::table
                    .filter(codes::user_id.eq(user.as_str()))
                    .filter(codes::code_hash.eq(digest))
                    .filter(codes::used_at.is_null()),
            )
            .set(codes::used_at.eq(now))
            .execute(c)
            .await?;
            Ok::<_, TxError>(n)
        })
        .await?;
        Ok(n > 0)
    }

    async fn recovery_codes_left(&self, user: &UserId) -> StoreResult<u64> {
        let mut conn = self.conn().await?;
        let n: i64 = codes::table
            .filter(codes::user_id.eq(user.as_str()))
            .filter(codes::used_at.is_null())
            .count()
            .get_result(&mut *conn)
            .await
            .map_err(db)?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn start_session(
        &self,
        session: &NewUserSession,
        replaces: Option<String>,
        entry: Option<AuditEntry>,
    ) -> StoreResult<()> {
                write_tx!(self, async |c: &mut Conn| {
            if let Some(old) = &replaces {
                end_session!(c, sessions, old);
            }
            insert_session(c, session).await?;
            if let Some(e) = &entry {
                write_audit(c, e).await?;
            }
            Ok::<_, TxError>(())
        })
        .await?;
        Ok(())
    }

    async fn session(&self, id_hash: &str) -> StoreResult<Option<UserSession>> {
        let mut conn = self.conn().await?;
        type Row = (String, Option<String>, bool, String, String, i64, i64);
        let row: Option<Row> = sessions::table
            .filter(sessions::id_hash.eq(id_hash))
            .select((
                sessions::id_hash,
                sessions::user_id,
                sessions::second_factor_pending,
                sessions::csrf,
                sessions::mode,
                sessions::created_at,
                sessions::seen_at,
            ))
            .first(&mut *conn)
            .await
            .optional()
            .map_err(db)?;
        let Some((id_hash, user, pending, csrf, mode, created_at, seen_at)) = row else {
            return Ok(None);
        };
        let user = match user {
            Some(id) => users::table
                .find(&id)
                .select(UserRow::as_select())
                .first(&mut *conn)
                .await
                .optional()
                .map_err(db)?
                .map(UserRow::into_domain)
                .transpose()?,
            None => None,
        };
        Ok(Some(UserSession {
            id_hash,
            user,
            second_factor_pending: pending,
            csrf,
            mode: crate::rows::mode(&mode)?,
            created_at,
            seen_at,
        }))
    }

    async fn touch_session(&self, id_hash: &str, now: i64) -> StoreResult<()> {
        sessions!(touch self, sessions, id_hash, now)
    }

    async fn set_session_mode(&self, id_hash: &str, mode: Mode) -> StoreResult<()> {
                write_tx!(self, async |c: &mut Conn| {
            diesel::update(sessions::table.find(id_hash))
                .set(sessions::mode.eq(mode.as_str()))
                .execute(c)
                .await?;
            Ok::<_, TxError>(())
        })
        .await?;
        Ok(())
    }

    async fn end_session(&self, id_hash: &str) -> StoreResult<()> {
        sessions!(end self, sessions, id_hash)
    }

    async fn purge_user_sessions(&self, idle_before: i64, started_before: i64) -> StoreResult<u64> {
        sessions!(purge self, sessions, idle_before, started_before)
    }

    async fn audit(&self, entry: &AuditEntry) -> StoreResult<()> {
                write_tx!(self, async |c: &mut Conn| write_audit(c, entry).await).await?;
        Ok(())
    }

    async fn audit_log(
        &self,
        partner: &PartnerId,
        page: &PageRequest,
    ) -> StoreResult<Page<AuditEntry>> {
        let query = audit::table
            .filter(audit::partner_id.eq(partner.as_str()))
            .into_boxed();
        let mut conn = self.conn().await?;
        let rows: Vec<AuditRow> = keyset_page!(query, audit, page)
            .select(AuditRow::as_select())
            .load(&mut *conn)
            .await
            .map_err(db)?;
        let items = rows
            .into_iter()
            .map(AuditRow::into_domain)
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Page::from_rows(items, page.limit, |(id, e)| Cursor {
            created_at: e.at_ms,
            id: id.clone(),
        })
        .map(|(_, e)| e))
    }

    async fn purge_audit(&self, before_ms: i64) -> StoreResult<u64> {
                let n = write_tx!(self, async |c: &mut Conn| {
            let n = diesel::delete(audit::table.filter(audit::created_at.lt(before_ms)))
                .execute(c)
                .await?;
            Ok::<_, TxError>(n)
        })
        .await?;
        Ok(u64::try_from(n).unwrap_or(u64::MAX))
    }
}
