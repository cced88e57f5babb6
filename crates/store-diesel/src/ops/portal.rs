//! The employer portal's accounts, set-password links and sessions (shared
//! by both backends). A link is stored with its account (made on the first
//! link) and its email job in one transaction, and the account's older
//! links are superseded by it; using a link sets the password, ends every
//! session of the account and starts the new one in one transaction.

use async_trait::async_trait;
use diesel::{
    ExpressionMethods, OptionalExtension, QueryDsl, Queryable, Selectable, SelectableHelper,
};
use diesel_async::RunQueryDsl;
use domain::ids::{EnrollmentId, GroupId};
use domain::job::NewJob;
use domain::portal::{
    LinkUse, Lockout, NewLink, NewSession, PortalAccount, StoredLink, StoredSession,
};
use domain::scope::Scope;
use domain::store::{PortalStore, StoreError, StoreResult};

use super::shared::{insert_jobs, job_rows};
use super::{Conn, Store};
use crate::error::{TxError, corrupt, db};
use crate::rows::{JobRow, scope as row_scope};
use crate::schema::{enrollments, portal_accounts, portal_links, portal_sessions};

#[derive(Queryable, Selectable)]
#[diesel(table_name = portal_accounts)]
struct AccountRow {
    enrollment_id: String,
    partner_id: String,
    mode: String,
    group_id: String,
    email: String,
    password_hash: Option<String>,
    failures: String,
    locked_until: Option<i64>,
}

impl AccountRow {
    fn into_domain(self) -> StoreResult<PortalAccount> {
        Ok(PortalAccount {
            enrollment_id: EnrollmentId::parse(&self.enrollment_id)
                .map_err(|_| corrupt("enrollment id", &self.enrollment_id))?,
            group_id: GroupId::parse(&self.group_id)
                .map_err(|_| corrupt("group id", &self.group_id))?,
            scope: row_scope(&self.partner_id, &self.mode)?,
            email: self.email,
            password_hash: self.password_hash,
            lockout: Lockout::from_stored(&self.failures, self.locked_until),
        })
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = portal_links)]
struct LinkRow {
    token_hash: String,
    token_sealed: String,
    created_at: i64,
    expires_at: i64,
    used_at: Option<i64>,
    superseded_at: Option<i64>,
}

impl LinkRow {
    fn into_domain(self, account: AccountRow) -> StoreResult<StoredLink> {
        Ok(StoredLink {
            token_hash: self.token_hash,
            token_sealed: self.token_sealed,
            account: account.into_domain()?,
            created_at: self.created_at,
            expires_at: self.expires_at,
            used_at: self.used_at,
            newest: self.superseded_at.is_none(),
        })
    }
}

/// The first link of `$query` (links joined to their accounts) with its
/// account, read on `$conn`; as the whole body of a method returning
/// `StoreResult<Option<StoredLink>>`.
macro_rules! first_link {
    ($conn:expr, $query:expr) => {{
        let row: Option<(LinkRow, AccountRow)> = $query
            .select((LinkRow::as_select(), AccountRow::as_select()))
            .first($conn)
            .await
            .optional()
            .map_err(db)?;
        row.map(|(l, a)| l.into_domain(a)).transpose()
    }};
}

/// Stores `link` (and its account on the first link), superseding the
/// account's older links, with the email `jobs`. Part of the caller's
/// transaction (the enrollment's insert, or [`PortalStore::insert_link`]).
pub(super) async fn put_link(
    c: &mut Conn,
    scope: &Scope,
    link: &NewLink,
    jobs: &[JobRow],
) -> Result<(), TxError> {
    let enrollment = link.enrollment_id.as_str();
    diesel::insert_into(portal_accounts::table)
        .values((
            portal_accounts::enrollment_id.eq(enrollment),
            portal_accounts::partner_id.eq(scope.partner.as_str()),
            portal_accounts::mode.eq(scope.mode.as_str()),
            portal_accounts::group_id.eq(link.group_id.as_str()),
            portal_accounts::email.eq(&link.email),
            portal_accounts::failures.eq(""),
            portal_accounts::created_at.eq(link.created_at),
        ))
        .on_conflict_do_nothing()
        .execute(c)
        .await?;
    diesel::update(
        portal_links::table
            .filter(portal_links::enrollment_id.eq(enrollment))
            .filter(portal_links::superseded_at.is_null()),
    )
    .set(portal_links::superseded_at.eq(link.created_at))
    .execute(c)
    .await?;
    diesel::insert_into(portal_links::table)
        .values((
            portal_links::token_hash.eq(&link.token_hash),
            portal_links::enrollment_id.eq(enrollment),
            portal_links::token_sealed.eq(&link.token_sealed),
            portal_links::created_at.eq(link.created_at),
            portal_links::expires_at.eq(link.expires_at),
        ))
        .execute(c)
        .await?;
    insert_jobs(c, jobs).await?;
    Ok(())
}

async fn insert_session(c: &mut Conn, s: &NewSession) -> Result<(), TxError> {
    diesel::insert_into(portal_sessions::table)
        .values((
            portal_sessions::id_hash.eq(&s.id_hash),
            portal_sessions::enrollment_id.eq(s.enrollment_id.as_ref().map(EnrollmentId::as_str)),
            portal_sessions::csrf.eq(&s.csrf),
            portal_sessions::created_at.eq(s.created_at),
            portal_sessions::seen_at.eq(s.created_at),
        ))
        .execute(c)
        .await?;
    Ok(())
}

#[async_trait]
impl PortalStore for Store {
    async fn insert_link(&self, scope: &Scope, link: &NewLink, jobs: &[NewJob]) -> StoreResult<()> {
        let rows = job_rows(jobs)?;
                write_tx!(self, async |c: &mut Conn| {
            let mine: Option<String> = enrollments::table
                .filter(enrollments::id.eq(link.enrollment_id.as_str()))
                .filter(enrollments::partner_id.eq(scope.partner.as_str()))
                .filter(enrollments::mode.eq(scope.mode.as_str()))
                .select(enrollments::id)
                .first(c)
                .await
                .optional()?;
            if mine.is_none() {
                return Err(TxError::Store(StoreError::NotFound));
            }
            put_link(c, scope, link, &rows).await
        })
        .await?;
        Ok(())
    }

    async fn newest_link(
        &self,
        scope: &Scope,
        enrollment: &EnrollmentId,
    ) -> StoreResult<Option<StoredLink>> {
        let mut conn = self.conn().await?;
        first_link!(
            &mut *conn,
            portal_links::table
                .inner_join(portal_accounts::table)
                .filter(portal_links::enrollment_id.eq(enrollment.as_str()))
                .filter(portal_links::superseded_at.is_null())
                .filter(portal_accounts::partner_id.eq(scope.partner.as_str()))
                .filter(portal_accounts::mode.eq(scope.mode.as_str()))
        )
    }

    async fn link(&self, token_hash: &str) -> StoreResult<Option<StoredLink>> {
        let mut conn = self.conn().await?;
        first_link!(
            &mut *conn,
            portal_links::table
                .inner_join(portal_accounts::table)
                .filter(portal_links::token_hash.eq(token_hash))
        )
    }

    async fn use_link(&self, link: &LinkUse, session: &NewSession, now: i64) -> StoreResult<()> {
        write_tx!(self, async |c: &mut Conn| {
            use_link!(
                c,
                portal_links.enrollment_id,
                portal_accounts,
                portal_sessions.enrollment_id,
                link,
                now
            );
            insert_session(c, session).await
        })
        .await?;
        Ok(())
    }

    async fn accounts_by_email(&self, email: &str) -> StoreResult<Vec<PortalAccount>> {
        let mut conn = self.conn().await?;
        accounts_by_email!(&mut *conn, portal_accounts, AccountRow, email)
    }

    async fn account(
        &self,
        scope: &Scope,
        enrollment: &EnrollmentId,
    ) -> StoreResult<Option<PortalAccount>> {
        let mut conn = self.conn().await?;
        let row: Option<AccountRow> = portal_accounts::table
            .filter(portal_accounts::enrollment_id.eq(enrollment.as_str()))
            .filter(portal_accounts::partner_id.eq(scope.partner.as_str()))
            .filter(portal_accounts::mode.eq(scope.mode.as_str()))
            .select(AccountRow::as_select())
            .first(&mut *conn)
            .await
            .optional()
            .map_err(db)?;
        row.map(AccountRow::into_domain).transpose()
    }

    async fn save_lockout(
        &self,
        enrollment: &EnrollmentId,
        lockout: &Lockout,
        jobs: &[NewJob],
    ) -> StoreResult<()> {
        let rows = job_rows(jobs)?;
        let failures = lockout.failures_stored();
                write_tx!(self, async |c: &mut Conn| {
            save_lockout!(c, portal_accounts, enrollment.as_str(), lockout, &failures);
            insert_jobs(c, &rows).await?;
            Ok::<_, TxError>(())
        })
        .await?;
        Ok(())
    }

    async fn start_session(&self, session: &NewSession, replaces: Option<String>) -> StoreResult<()> {
                write_tx!(self, async |c: &mut Conn| {
            if let Some(old) = &replaces {
                end_session!(c, portal_sessions, old);
            }
            insert_session(c, session).await
        })
        .await?;
        Ok(())
    }

    async fn session(&self, id_hash: &str) -> StoreResult<Option<StoredSession>> {
        let mut conn = self.conn().await?;
        let row: Option<(String, Option<String>, String, i64, i64)> = portal_sessions::table
            .filter(portal_sessions::id_hash.eq(id_hash))
            .select((
                portal_sessions::id_hash,
                portal_sessions::enrollment_id,
                portal_sessions::csrf,
                portal_sessions::created_at,
                portal_sessions::seen_at,
            ))
            .first(&mut *conn)
            .await
            .optional()
            .map_err(db)?;
        let Some((id_hash, enrollment, csrf, created_at, seen_at)) = row else {
            return Ok(None);
        };
        let account = match enrollment {
            Some(e) => portal_accounts::table
                .filter(portal_accounts::enrollment_id.eq(&e))
                .select(AccountRow::as_select())
                .first(&mut *conn)
                .await
                .optional()
                .map_err(db)?
                .map(AccountRow::into_domain)
                .transpose()?,
            None => None,
        };
        Ok(Some(StoredSession {
            id_hash,
            account,
            csrf,
            created_at,
            seen_at,
        }))
    }

    async fn touch_session(&self, id_hash: &str, now: i64) -> StoreResult<()> {
        sessions!(touch self, portal_sessions, id_hash, now)
    }

    async fn end_session(&self, id_hash: &str) -> StoreResult<()> {
        sessions!(end self, portal_sessions, id_hash)
    }

    async fn purge_sessions(&self, idle_before: i64, started_before: i64) -> StoreResult<u64> {
        sessions!(purge self, portal_sessions, idle_before, started_before)
    }
}
