//! Census members (shared by both backends). A replace is one
//! transaction: the old rows are deleted and the new ones inserted with
//! matched members keeping their ids, so a crash leaves the old census or
//! the new one and never a mix.

use async_trait::async_trait;
use diesel::{BoolExpressionMethods, ExpressionMethods, QueryDsl, SelectableHelper};
use diesel_async::RunQueryDsl;
use domain::census::{CensusOutcome, CensusWrite, MemberKeys, StoredMember, assign_ids, email_key};
use domain::group::GroupStatus;
use domain::ids::{GroupId, MemberId};
use domain::job::{JobKind, JobState};
use domain::page::{Cursor, Page, PageRequest};
use domain::scope::Scope;
use domain::store::{CensusStore, StoreError, StoreResult};

use super::groups::{advance, load_group, lock_group};
use super::{Conn, Store, insert_members};
use crate::error::{TxError, corrupt, db};
use crate::rows::{JobRow, MemberRow, int, member_data};
use crate::schema::{groups, jobs, members};

#[async_trait]
impl CensusStore for Store {
    async fn replace_census(
        &self,
        scope: &Scope,
        write: &CensusWrite,
    ) -> StoreResult<CensusOutcome> {
        let mut conn = self.conn().await?;
        let conn: &mut Conn = &mut conn;
        let gid = write.group_id.to_string();
        Ok(write_tx!(self, conn, async |c: &mut Conn| {
            let group = lock_group(c, scope, &gid).await?;
            let existing: Vec<(String, Option<String>, Option<String>, i64)> = members::table
                .filter(members::group_id.eq(&gid))
                .select((
                    members::id,
                    members::external_id,
                    members::email_key,
                    members::created_at,
                ))
                .load(c)
                .await?;
            let keys = existing
                .into_iter()
                .map(|(id, external_id, email, created_at)| {
                    Ok(MemberKeys {
                        id: MemberId::parse(&id).map_err(|_| corrupt("member id", &id))?,
                        external_id,
                        email,
                        created_at,
                    })
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
            let mut fresh = write.fresh_ids.iter().cloned();
            let mut spare = 0u32;
            let assignments = assign_ids(&keys, &write.rows, write.now, || {
                fresh.next().unwrap_or_else(|| {
                    spare += 1;
                    MemberId::from_bytes([0xff, 0xff, 0xff, 0, 0, 0])
                })
            });
            if spare > 0 {
                return Err(TxError::Store(StoreError::Internal(
                    "census write carried fewer fresh ids than rows".into(),
                )));
            }
            let kept =
                u32::try_from(assignments.iter().filter(|a| a.kept).count()).unwrap_or(u32::MAX);
            let added = u32::try_from(assignments.len())
                .unwrap_or(u32::MAX)
                .saturating_sub(kept);
            let removed = u32::try_from(keys.len())
                .unwrap_or(u32::MAX)
                .saturating_sub(kept);
            let rows = write
                .rows
                .iter()
                .zip(&assignments)
                .enumerate()
                .map(|(pos, (m, a))| {
                    Ok(MemberRow {
                        id: a.id.to_string(),
                        group_id: gid.clone(),
                        partner_id: scope.partner.to_string(),
                        mode: scope.mode.as_str().to_owned(),
                        external_id: m.external_id.clone(),
                        email_key: m.email.as_deref().map(email_key),
                        position: i32::try_from(pos).unwrap_or(i32::MAX),
                        data: member_data(m)?,
                        created_at: a.created_at,
                        updated_at: write.now,
                    })
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
            diesel::delete(members::table.filter(members::group_id.eq(&gid)))
                .execute(c)
                .await?;
            let member_count = u32::try_from(rows.len()).unwrap_or(u32::MAX);
            insert_members(c, rows).await?;
            let rating_changed =
                group.rating_digest.as_deref() != Some(write.rating_digest.as_str());
            if member_count > 0 {
                advance(c, scope, &gid, GroupStatus::CensusReceived, None, write.now).await?;
            }
            diesel::update(groups::table.find(&gid))
                .set((
                    groups::census_member_count.eq(int(member_count)),
                    groups::rating_digest.eq(Some(&write.rating_digest)),
                    groups::updated_at.eq(write.now),
                ))
                .execute(c)
                .await?;
            diesel::update(
                jobs::table
                    .filter(jobs::group_id.eq(&gid))
                    .filter(jobs::kind.eq(JobKind::MarketComparison.as_str()))
                    .filter(
                        jobs::state
                            .eq(JobState::Queued.as_str())
                            .or(jobs::state.eq(JobState::Running.as_str())),
                    ),
            )
            .set(jobs::state.eq(JobState::Superseded.as_str()))
            .execute(c)
            .await?;
            if let Some(job) = &write.job {
                diesel::insert_into(jobs::table)
                    .values(JobRow::new(job))
                    .execute(c)
                    .await?;
            }
            Ok::<_, TxError>(CensusOutcome {
                member_count,
                kept,
                added,
                removed,
                rating_changed,
            })
        })
        .await?)
    }

    async fn census_page(
        &self,
        scope: &Scope,
        group: &GroupId,
        page: &PageRequest,
    ) -> StoreResult<Page<StoredMember>> {
        let mut conn = self.conn().await?;
        load_group(&mut conn, scope, group.as_str()).await?;
        let rows = keyset_page!(
            members::table
                .filter(members::group_id.eq(group.as_str()))
                .filter(members::partner_id.eq(scope.partner.as_str()))
                .filter(members::mode.eq(scope.mode.as_str()))
                .into_boxed(),
            members,
            page
        )
        .select(MemberRow::as_select())
        .load(&mut *conn)
        .await
        .map_err(db)?;
        let items = rows
            .into_iter()
            .map(MemberRow::into_domain)
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Page::from_rows(items, page.limit, |m| Cursor {
            created_at: m.created_at,
            id: m.id.to_string(),
        }))
    }

    async fn census(&self, scope: &Scope, group: &GroupId) -> StoreResult<Vec<StoredMember>> {
        let mut conn = self.conn().await?;
        load_group(&mut conn, scope, group.as_str()).await?;
        members::table
            .filter(members::group_id.eq(group.as_str()))
            .filter(members::partner_id.eq(scope.partner.as_str()))
            .filter(members::mode.eq(scope.mode.as_str()))
            .order(members::position.asc())
            .select(MemberRow::as_select())
            .load(&mut *conn)
            .await
            .map_err(db)?
            .into_iter()
            .map(MemberRow::into_domain)
            .collect()
    }
}
