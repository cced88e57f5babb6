//! Employer groups (shared by both backends).

use async_trait::async_trait;
use diesel::{
    BoolExpressionMethods, ExpressionMethods, OptionalExtension, QueryDsl, SelectableHelper,
};
use diesel::upsert::excluded;
use diesel_async::RunQueryDsl;
use domain::group::{CompanyState, Group, GroupFilter, GroupStatus};
use domain::ids::GroupId;
use domain::mode::Mode;
use domain::page::{Cursor, Page, PageRequest};
use domain::scope::Scope;
use domain::store::{Conflict, GroupAdvance, GroupStore, StoreError, StoreResult};

use super::outbox::append_events;
use super::{Conn, Store};
use crate::error::{TxError, db};
use crate::rows::GroupRow;
use crate::schema::{creation_keys, groups};

/// Inserts a new group's row, unless an enrolled or active group of its
/// mode holds its domain.
async fn insert_row(c: &mut Conn, row: &GroupRow) -> Result<(), TxError> {
    if domain_held(c, &row.mode, &row.domain, &row.id).await? {
        return Err(TxError::Store(StoreError::Conflict(Conflict::DomainTaken)));
    }
    diesel::insert_into(groups::table)
        .values(row)
        .execute(c)
        .await?;
    Ok(())
}

/// Reads a group of the scope inside a transaction.
pub(crate) async fn load_group(conn: &mut Conn, scope: &Scope, id: &str) -> Result<Group, TxError> {
    let query = groups::table
        .filter(groups::id.eq(id.to_owned()))
        .filter(groups::partner_id.eq(scope.partner.to_string()))
        .filter(groups::mode.eq(scope.mode.as_str()))
        .select(GroupRow::as_select());
    let row: GroupRow = first_row!(conn, query)
        .optional()?
        .ok_or(StoreError::NotFound)?;
    Ok(row.into_domain()?)
}

/// Reads a group of the scope and locks it for the rest of the transaction
/// (PostgreSQL `FOR UPDATE`; SQLite's IMMEDIATE transaction already holds
/// the write lock). Every write that reads a group first takes this lock,
/// so two writes to one group never interleave.
pub(crate) async fn lock_group(conn: &mut Conn, scope: &Scope, id: &str) -> Result<Group, TxError> {
    let row = super::locks::lock_group_row(conn, scope.partner.as_str(), scope.mode.as_str(), id)
        .await?
        .ok_or(StoreError::NotFound)?;
    Ok(row.into_domain()?)
}

/// Whether another group of `mode` holds `domain` (enrolled or active):
/// [`crate::DOMAIN_HELD`], one indexed probe.
pub(crate) async fn domain_held(
    conn: &mut Conn,
    mode: &str,
    domain: &str,
    except: &str,
) -> Result<bool, TxError> {
    #[derive(diesel::QueryableByName)]
    struct Held {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let held: Held = diesel::sql_query(crate::DOMAIN_HELD)
        .bind::<diesel::sql_types::Text, _>(mode)
        .bind::<diesel::sql_types::Text, _>(domain)
        .bind::<diesel::sql_types::Text, _>(except)
        .get_result(conn)
        .await?;
    Ok(held.n > 0)
}

/// Moves a group forward inside a transaction.
pub(crate) async fn advance(
    conn: &mut Conn,
    scope: &Scope,
    id: &str,
    status: GroupStatus,
    company_state: Option<CompanyState>,
    now: i64,
) -> Result<Group, TxError> {
    let mut group = lock_group(conn, scope, id).await?;
    group.status = group.status.advance_to(status);
    if let Some(next) = company_state {
        // Checked under the lock: of two concurrent go-lives one wins.
        let forward = matches!(
            (group.company_state, next),
            (None, CompanyState::Sandbox) | (Some(CompanyState::Sandbox), CompanyState::Prod)
        );
        if !forward {
            return Err(TxError::Store(StoreError::Conflict(
                Conflict::CompanyStateMoved,
            )));
        }
        group.company_state = Some(next);
    }
    group.updated_at = now;
    diesel::update(groups::table.find(id))
        .set((
            groups::status.eq(group.status.as_str()),
            groups::company_state.eq(group.company_state.map(|s| s.as_str())),
            groups::updated_at.eq(now),
        ))
        .execute(conn)
        .await?;
    Ok(group)
}

#[async_trait]
impl GroupStore for Store {
    async fn insert_group(&self, group: &Group) -> StoreResult<()> {
        let row = GroupRow::new(group)?;
                write_tx!(self, async |c: &mut Conn| insert_row(c, &row).await).await?;
        Ok(())
    }

    async fn insert_group_once(
        &self,
        group: &Group,
        key: &str,
        since: i64,
    ) -> StoreResult<Option<Group>> {
        let row = GroupRow::new(group)?;
        let scope = Scope::new(group.partner_id.clone(), group.mode);
                let found = write_tx!(self, async |c: &mut Conn| {
            let mine = creation_keys::table
                .filter(creation_keys::partner_id.eq(&row.partner_id))
                .filter(creation_keys::mode.eq(&row.mode))
                .filter(creation_keys::idem_key.eq(key));
            // One statement claims the key: a new key is inserted, and a
            // row from before the replay window, which belongs to an
            // earlier use of the key and no longer binds, is taken over.
            // A row within the window stays as it is: nothing claimed. On
            // PostgreSQL a concurrent holder of the key makes this wait for
            // its commit first.
            let upsert = diesel::insert_into(creation_keys::table)
                .values((
                    creation_keys::partner_id.eq(&row.partner_id),
                    creation_keys::mode.eq(&row.mode),
                    creation_keys::idem_key.eq(key),
                    creation_keys::resource_id.eq(&row.id),
                    creation_keys::created_at.eq(row.created_at),
                ))
                .on_conflict((
                    creation_keys::partner_id,
                    creation_keys::mode,
                    creation_keys::idem_key,
                ))
                .do_update()
                .set((
                    creation_keys::resource_id.eq(excluded(creation_keys::resource_id)),
                    creation_keys::created_at.eq(excluded(creation_keys::created_at)),
                ));
            // (`FilterDsl` by name: `QueryDsl::filter` does not reach an
            // insert's `ON CONFLICT … DO UPDATE … WHERE`.)
            let claimed = diesel::query_dsl::methods::FilterDsl::filter(
                upsert,
                creation_keys::created_at.lt(since),
            )
            .execute(c)
            .await?;
            if claimed == 0 {
                let id: String = mine.select(creation_keys::resource_id).first(c).await?;
                return Ok::<_, TxError>(Some(load_group(c, &scope, &id).await?));
            }
            insert_row(c, &row).await?;
            Ok(None)
        })
        .await?;
        Ok(found)
    }

    async fn group(&self, scope: &Scope, id: &GroupId) -> StoreResult<Group> {
        if let Some(read) = self.group_with_deferred_hit(scope, id).await {
            return read;
        }
        let mut conn = self.conn().await?;
        Ok(load_group(&mut conn, scope, id.as_str()).await?)
    }

    async fn domain_held(&self, mode: Mode, domain: &str) -> StoreResult<bool> {
        let mut conn = self.conn().await?;
        Ok(domain_held(&mut conn, mode.as_str(), domain, "").await?)
    }

    async fn find_group(&self, id: &GroupId) -> StoreResult<Group> {
        let mut conn = self.conn().await?;
        groups::table
            .find(id.as_str())
            .select(GroupRow::as_select())
            .first(&mut *conn)
            .await
            .map_err(db)?
            .into_domain()
    }

    async fn update_group(&self, scope: &Scope, group: &Group) -> StoreResult<()> {
        let row = GroupRow::new(group)?;
                write_tx!(self, async |c: &mut Conn| {
            let current = lock_group(c, scope, &row.id).await?;
            if current.domain != row.domain
                && domain_held(c, &row.mode, &row.domain, &row.id).await?
            {
                return Err(TxError::Store(StoreError::Conflict(Conflict::DomainTaken)));
            }
            diesel::update(groups::table.find(&row.id))
                .set((
                    groups::company_name.eq(&row.company_name),
                    groups::domain.eq(&row.domain),
                    groups::external_id.eq(&row.external_id),
                    groups::address.eq(&row.address),
                    groups::contact.eq(&row.contact),
                    groups::current_coverage.eq(&row.current_coverage),
                    groups::updated_at.eq(row.updated_at),
                ))
                .execute(c)
                .await?;
            Ok::<_, TxError>(())
        })
        .await?;
        Ok(())
    }

    async fn advance_group(
        &self,
        scope: &Scope,
        id: &GroupId,
        change: &GroupAdvance,
    ) -> StoreResult<Group> {
        let GroupAdvance {
            status,
            company_state,
            now,
            ..
        } = *change;
                Ok(outbox_tx!(self, async |c: &mut Conn| {
            let group = advance(c, scope, id.as_str(), status, company_state, now).await?;
            append_events(c, &change.events, now.saturating_mul(1000)).await?;
            Ok::<_, TxError>(group)
        })
        .await?)
    }

    async fn groups(
        &self,
        scope: &Scope,
        filter: &GroupFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<Group>> {
        let mut conn = self.conn().await?;
        let mut query = groups::table
            .filter(groups::partner_id.eq(scope.partner.as_str()))
            .filter(groups::mode.eq(scope.mode.as_str()))
            .into_boxed();
        if let Some(external_id) = &filter.external_id {
            query = query.filter(groups::external_id.eq(external_id));
        }
        if let Some(domain) = &filter.domain {
            query = query.filter(groups::domain.eq(domain));
        }
        if let Some(status) = filter.status {
            query = query.filter(groups::status.eq(status.as_str()));
        }
        let rows = keyset_page!(query, groups, page)
        .select(GroupRow::as_select())
        .load(&mut *conn)
        .await
        .map_err(db)?;
        let groups = rows
            .into_iter()
            .map(GroupRow::into_domain)
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Page::from_rows(groups, page.limit, |g| Cursor {
            created_at: g.created_at,
            id: g.id.to_string(),
        }))
    }
}
