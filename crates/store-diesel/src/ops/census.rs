//! Census members (shared by both backends). A replace is one
//! transaction: the old rows are deleted and the new ones inserted with
//! matched members keeping their ids, so a crash leaves the old census or
//! the new one and never a mix.

use async_trait::async_trait;
use diesel::{
    BoolExpressionMethods, ExpressionMethods, OptionalExtension, QueryDsl, SelectableHelper,
};
use diesel_async::RunQueryDsl;
use std::collections::HashMap;

use domain::census::{
    CensusOutcome, CensusWrite, ElectionsWrite, MemberKeys, MemberWrite, StoredMember, assign_ids,
    email_key, rating_digest,
};
use domain::group::GroupStatus;
use domain::ids::{GroupId, MemberId};
use domain::job::NewJob;
use domain::job::{JobKind, JobState};
use domain::member::{MemberFilter, MemberState};
use domain::page::{Cursor, GroupQuery, Page};
use domain::scope::Scope;
use domain::store::{CensusStore, Conflict, StoreError, StoreResult};
use pricing_core::census::CensusMember;

use super::groups::{advance, load_group, lock_group};
use super::outbox::append_events;
use super::shared::{insert_jobs, insert_members, job_rows};
use super::{Conn, Store};
use crate::error::{TxError, corrupt, db};
use crate::rows::{JobRow, MemberRow, RosterState, int, member_data, member_status};
use crate::schema::{groups, jobs, members};

/// A member row of `scope`'s group `gid` with the default roster state.
pub(crate) fn member_row(
    scope: &Scope,
    gid: &str,
    id: &MemberId,
    m: &CensusMember,
    position: usize,
    created_at: i64,
    now: i64,
) -> Result<MemberRow, StoreError> {
    let mut row = MemberRow {
        id: id.to_string(),
        group_id: gid.to_owned(),
        partner_id: scope.partner.to_string(),
        mode: scope.mode.as_str().to_owned(),
        external_id: m.external_id.clone(),
        email_key: m.email.as_deref().map(email_key),
        position: i32::try_from(position).unwrap_or(i32::MAX),
        data: member_data(m)?,
        created_at,
        updated_at: now,
        status: member_status(m.status).to_owned(),
        ..MemberRow::blank()
    };
    row.set_state(&MemberState::default());
    Ok(row)
}

/// After the group's members changed: the count, the rating digest, the
/// status (`census_received` with a member), and the market comparison —
/// the open one superseded, `job` enqueued.
async fn settle(
    c: &mut Conn,
    scope: &Scope,
    gid: &str,
    member_count: u32,
    digest: &str,
    job: Option<&NewJob>,
    now: i64,
) -> Result<(), TxError> {
    if member_count > 0 {
        advance(c, scope, gid, GroupStatus::CensusReceived, None, now).await?;
    }
    diesel::update(groups::table.find(gid))
        .set((
            groups::census_member_count.eq(int(member_count)),
            groups::rating_digest.eq(Some(digest)),
            groups::updated_at.eq(now),
        ))
        .execute(c)
        .await?;
    diesel::update(
        jobs::table
            .filter(jobs::group_id.eq(gid))
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
    if let Some(job) = job {
        diesel::insert_into(jobs::table)
            .values(JobRow::new(job)?)
            .execute(c)
            .await?;
    }
    Ok(())
}

/// The row of a member `write` adds or updates at `position`, first
/// stored at `created_at`, in the write's roster state.
fn written_row(
    scope: &Scope,
    gid: &str,
    write: &MemberWrite,
    position: usize,
    created_at: i64,
) -> Result<MemberRow, StoreError> {
    let mut row = member_row(
        scope,
        gid,
        &write.id,
        &write.member,
        position,
        created_at,
        write.now,
    )?;
    row.set_state(&write.state);
    Ok(row)
}

/// After `write` stored its member `row`: the group settled from its
/// stored members (see [`settle`]) with the write's job; the member.
async fn settle_member(
    c: &mut Conn,
    scope: &Scope,
    gid: &str,
    write: &MemberWrite,
    row: MemberRow,
) -> Result<StoredMember, TxError> {
    let (count, digest) = digest_of(c, gid).await?;
    settle(c, scope, gid, count, &digest, Some(&write.job), write.now).await?;
    Ok(row.into_domain()?)
}

/// Whether another member of the group than `except` has `m`'s external
/// id or email.
async fn key_taken(
    c: &mut Conn,
    gid: &str,
    m: &CensusMember,
    except: &str,
) -> Result<bool, TxError> {
    let ext = m.external_id.as_deref().filter(|e| !e.is_empty());
    let email = m.email.as_deref().map(email_key);
    let others = || {
        members::table
            .filter(members::group_id.eq(gid))
            .filter(members::id.ne(except))
            .into_boxed()
    };
    let mut taken = 0i64;
    if let Some(ext) = ext {
        taken += others()
            .filter(members::external_id.eq(ext))
            .count()
            .get_result::<i64>(c)
            .await?;
    }
    if let Some(email) = email {
        taken += others()
            .filter(members::email_key.eq(email))
            .count()
            .get_result::<i64>(c)
            .await?;
    }
    Ok(taken > 0)
}

/// Recomputes the group's rating digest from its stored members.
async fn digest_of(c: &mut Conn, gid: &str) -> Result<(u32, String), TxError> {
    let data: Vec<String> = members::table
        .filter(members::group_id.eq(gid))
        .order(members::position.asc())
        .select(members::data)
        .load(c)
        .await?;
    let members: Vec<CensusMember> = data
        .iter()
        .map(|d| serde_json::from_str(d).map_err(|_| corrupt("member", gid)))
        .collect::<Result<_, StoreError>>()?;
    Ok((
        u32::try_from(members.len()).unwrap_or(u32::MAX),
        rating_digest(&members),
    ))
}

#[async_trait]
impl CensusStore for Store {
    async fn replace_census(
        &self,
        scope: &Scope,
        write: &CensusWrite,
    ) -> StoreResult<CensusOutcome> {
                let gid = write.group_id.to_string();
        Ok(bulk_write_tx!(self, async |c: &mut Conn| {
            lock_group(c, scope, &gid).await?;
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
            // Kept members keep their roster state (enrollment, elections,
            // termination); it lives beside the fields the write replaces.
            let mut states: HashMap<String, RosterState> = members::table
                .filter(members::group_id.eq(&gid))
                .select(RosterState::as_select())
                .load(c)
                .await?
                .into_iter()
                .map(|r| (r.id.clone(), r))
                .collect();
            let rows = write
                .rows
                .iter()
                .zip(&assignments)
                .enumerate()
                .map(|(pos, (m, a))| {
                    let mut row = member_row(scope, &gid, &a.id, m, pos, a.created_at, write.now)?;
                    if let Some(old) = states.remove(&row.id) {
                        row.copy_state(old);
                    }
                    Ok(row)
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
            diesel::delete(members::table.filter(members::group_id.eq(&gid)))
                .execute(c)
                .await?;
            let member_count = u32::try_from(rows.len()).unwrap_or(u32::MAX);
            insert_members(c, rows).await?;
            settle(
                c,
                scope,
                &gid,
                member_count,
                &write.rating_digest,
                write.job.as_ref(),
                write.now,
            )
            .await?;
            Ok::<_, TxError>(CensusOutcome { member_count })
        })
        .await?)
    }

    async fn census_page<'a>(
        &self,
        scope: &Scope,
        list: GroupQuery<'a, MemberFilter>,
    ) -> StoreResult<Page<StoredMember>> {
        let mut conn = self.conn().await?;
        load_group(&mut conn, scope, list.group.as_str()).await?;
        let mut query = members::table
            .filter(members::group_id.eq(list.group.as_str()))
            .filter(members::partner_id.eq(scope.partner.as_str()))
            .filter(members::mode.eq(scope.mode.as_str()))
            .into_boxed();
        if let Some(status) = list.filter.status {
            query = query.filter(members::status.eq(member_status(Some(status))));
        }
        if let Some(enrollment) = list.filter.enrollment_status {
            query = query.filter(members::enrollment_status.eq(enrollment.as_str()));
        }
        let rows = keyset_page!(query, members, list.page)
        .select(MemberRow::as_select())
        .load(&mut *conn)
        .await
        .map_err(db)?;
        let items = rows
            .into_iter()
            .map(MemberRow::into_domain)
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Page::from_rows(items, list.page.limit, |m| Cursor {
            created_at: m.created_at,
            id: m.id.to_string(),
        }))
    }

    async fn census(&self, scope: &Scope, group: &GroupId) -> StoreResult<Vec<StoredMember>> {
        // Up to tens of thousands of rows: read off the caller's thread.
        let rows = offload!(async {
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
                .map_err(db)
        })
        .await?;
        rows.into_iter().map(MemberRow::into_domain).collect()
    }

    async fn add_member(&self, scope: &Scope, write: &MemberWrite) -> StoreResult<StoredMember> {
                let gid = write.group_id.to_string();
        Ok(write_tx!(self, async |c: &mut Conn| {
            lock_group(c, scope, &gid).await?;
            if key_taken(c, &gid, &write.member, "").await? {
                return Err(TxError::Store(StoreError::Conflict(Conflict::MemberTaken)));
            }
            let last: Option<i32> = members::table
                .filter(members::group_id.eq(&gid))
                .select(diesel::dsl::max(members::position))
                .first(c)
                .await?;
            let position = last.map_or(0, |p| usize::try_from(p).unwrap_or(0) + 1);
            let row = written_row(scope, &gid, write, position, write.now)?;
            diesel::insert_into(members::table)
                .values(&row)
                .execute(c)
                .await?;
            settle_member(c, scope, &gid, write, row).await
        })
        .await?)
    }

    async fn update_member(&self, scope: &Scope, write: &MemberWrite) -> StoreResult<StoredMember> {
                let gid = write.group_id.to_string();
        let id = write.id.to_string();
        Ok(write_tx!(self, async |c: &mut Conn| {
            lock_group(c, scope, &gid).await?;
            let old: MemberRow = members::table
                .filter(members::id.eq(&id))
                .filter(members::group_id.eq(&gid))
                .select(MemberRow::as_select())
                .first(c)
                .await
                .optional()?
                .ok_or(StoreError::NotFound)?;
            if key_taken(c, &gid, &write.member, &id).await? {
                return Err(TxError::Store(StoreError::Conflict(Conflict::MemberTaken)));
            }
            let position = usize::try_from(old.position).unwrap_or(0);
            let mut row = written_row(scope, &gid, write, position, old.created_at)?;
            // Elections own the enrollment columns: keep what is stored
            // under the lock, so an update read before a concurrent
            // election never undoes it.
            row.enrollment_status = old.enrollment_status;
            row.invitation_status = old.invitation_status;
            row.tier = old.tier;
            row.effective_date = old.effective_date;
            diesel::update(members::table.find(&id))
                .set((
                    members::external_id.eq(&row.external_id),
                    members::email_key.eq(&row.email_key),
                    members::data.eq(&row.data),
                    members::updated_at.eq(row.updated_at),
                    members::enrollment_status.eq(&row.enrollment_status),
                    members::invitation_status.eq(&row.invitation_status),
                    members::tier.eq(&row.tier),
                    members::effective_date.eq(&row.effective_date),
                    members::termination_date.eq(&row.termination_date),
                    members::cobra_deadline.eq(&row.cobra_deadline),
                    members::status.eq(&row.status),
                ))
                .execute(c)
                .await?;
            settle_member(c, scope, &gid, write, row).await
        })
        .await?)
    }

    async fn member(
        &self,
        scope: &Scope,
        group: &GroupId,
        id: &MemberId,
    ) -> StoreResult<StoredMember> {
        let mut conn = self.conn().await?;
        members::table
            .filter(members::id.eq(id.as_str()))
            .filter(members::group_id.eq(group.as_str()))
            .filter(members::partner_id.eq(scope.partner.as_str()))
            .filter(members::mode.eq(scope.mode.as_str()))
            .select(MemberRow::as_select())
            .first(&mut *conn)
            .await
            .map_err(db)?
            .into_domain()
    }

    async fn record_elections(&self, scope: &Scope, write: &ElectionsWrite) -> StoreResult<()> {
        let ElectionsWrite {
            group_id,
            states,
            events,
            jobs,
            now,
        } = write;
        let now = *now;
        let job_rows = job_rows(jobs)?;
                let gid = group_id.to_string();
        outbox_tx!(self, async |c: &mut Conn| {
            lock_group(c, scope, &gid).await?;
            for (id, state) in states {
                let mut row = MemberRow::blank();
                row.set_state(state);
                let n = diesel::update(
                    members::table
                        .filter(members::id.eq(id.as_str()))
                        .filter(members::group_id.eq(&gid)),
                )
                .set((
                    members::enrollment_status.eq(&row.enrollment_status),
                    members::invitation_status.eq(&row.invitation_status),
                    members::tier.eq(&row.tier),
                    members::effective_date.eq(&row.effective_date),
                    members::updated_at.eq(now),
                ))
                .execute(c)
                .await?;
                if n == 0 {
                    return Err(TxError::Store(StoreError::NotFound));
                }
            }
            insert_jobs(c, &job_rows).await?;
            append_events(c, events, now.saturating_mul(1000)).await?;
            Ok::<_, TxError>(())
        })
        .await?;
        Ok(())
    }
}
