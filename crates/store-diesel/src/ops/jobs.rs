//! The job table (shared by both backends; claiming is per backend).

use async_trait::async_trait;
use diesel::{
    BoolExpressionMethods, ExpressionMethods, OptionalExtension, QueryDsl, SelectableHelper,
};
use diesel_async::RunQueryDsl;
use domain::event::NewEvent;
use domain::ids::{GroupId, JobId, ProcessId};
use domain::job::{Job, JobClaim, JobKind, JobState, NewJob};
use domain::scope::Scope;
use domain::store::{JobStore, StoreError, StoreResult};

use super::outbox::append_events;
use super::locks::claim_job_id;
use super::{Conn, Store};
use crate::error::{TxError, db};
use crate::rows::{JobRow, int};
use crate::schema::jobs;

/// `NotFound` unless the job exists.
async fn exists(c: &mut Conn, id: &JobId) -> Result<(), TxError> {
    let found: Option<String> = jobs::table
        .find(id.as_str())
        .select(jobs::id)
        .first(c)
        .await
        .optional()?;
    match found {
        Some(_) => Ok(()),
        None => Err(TxError::Store(StoreError::NotFound)),
    }
}

#[async_trait]
impl JobStore for Store {
    async fn enqueue(&self, job: &NewJob) -> StoreResult<()> {
        let row = JobRow::new(job)?;
        autocommit!(self, async |c: &mut Conn| {
            Ok(diesel::insert_into(jobs::table).values(&row).execute(c).await?)
        })
        .await?;
        Ok(())
    }

    async fn claim_job(
        &self,
        kinds: &[JobKind],
        now_ms: i64,
        lease_ms: i64,
    ) -> StoreResult<Option<Job>> {
        let kinds: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
        let owner = self.owner.as_ref().map(ProcessId::as_str);
                let row = write_tx!(self, async |c: &mut Conn| {
            let Some(id) = claim_job_id(c, &kinds, now_ms, owner.unwrap_or("")).await? else {
                return Ok(None);
            };
            diesel::update(jobs::table.find(&id))
                .set((
                    jobs::state.eq(JobState::Running.as_str()),
                    jobs::locked_until_ms.eq(Some(now_ms.saturating_add(lease_ms))),
                    jobs::attempts.eq(jobs::attempts + 1),
                    jobs::owner_id.eq(owner),
                ))
                .execute(c)
                .await?;
            let row: JobRow = jobs::table
                .find(&id)
                .select(JobRow::as_select())
                .first(c)
                .await?;
            Ok::<_, TxError>(Some(row))
        })
        .await?;
        row.map(JobRow::into_domain).transpose()
    }

    async fn complete_job<'a>(
        &self,
        claim: &JobClaim,
        list: &[NewEvent],
        result: Option<&'a str>,
    ) -> StoreResult<bool> {
        let due = list
            .iter()
            .map(|e| e.created_at)
            .max()
            .unwrap_or(0)
            .saturating_mul(1000);
                Ok(outbox_tx!(self, async |c: &mut Conn| {
            // The claim holds while the job is running under this attempt;
            // on PostgreSQL the condition is re-checked after any lock wait,
            // so a supersede or a re-claim that commits first wins.
            let n = diesel::update(
                jobs::table
                    .filter(jobs::id.eq(claim.id.as_str()))
                    .filter(jobs::state.eq(JobState::Running.as_str()))
                    .filter(jobs::attempts.eq(int(claim.attempt))),
            )
            .set((
                jobs::state.eq(JobState::Done.as_str()),
                jobs::locked_until_ms.eq(None::<i64>),
                jobs::result.eq(result),
            ))
            .execute(c)
            .await?;
            if n == 0 {
                exists(c, &claim.id).await?;
                return Ok(false);
            }
            // The newest finished job of a group and kind is the only one
            // read again (`latest_result`): drop the group's earlier
            // finished, failed and superseded jobs of that kind, so the
            // table holds about one job per group and kind.
            let done: JobRow = jobs::table
                .find(claim.id.as_str())
                .select(JobRow::as_select())
                .first(c)
                .await?;
            if let Some(group) = done.group_id.as_deref() {
                diesel::delete(
                    jobs::table
                        .filter(jobs::group_id.eq(group))
                        .filter(jobs::kind.eq(&done.kind))
                        .filter(jobs::id.ne(claim.id.as_str()))
                        .filter(jobs::state.eq_any([
                            JobState::Done.as_str(),
                            JobState::Failed.as_str(),
                            JobState::Superseded.as_str(),
                        ])),
                )
                .execute(c)
                .await?;
            }
            append_events(c, list, due).await?;
            Ok::<_, TxError>(true)
        })
        .await?)
    }

    async fn fail_job(
        &self,
        claim: &JobClaim,
        retry_at_ms: Option<i64>,
        error: &str,
    ) -> StoreResult<bool> {
                let (state, run_after) = match retry_at_ms {
            Some(at) => (JobState::Queued, Some(at)),
            None => (JobState::Failed, None),
        };
        Ok(write_tx!(self, async |c: &mut Conn| {
            let target = jobs::table
                .filter(jobs::id.eq(claim.id.as_str()))
                .filter(jobs::state.eq(JobState::Running.as_str()))
                .filter(jobs::attempts.eq(int(claim.attempt)));
            let n = diesel::update(target)
                .set((
                    jobs::state.eq(state.as_str()),
                    jobs::locked_until_ms.eq(None::<i64>),
                    jobs::last_error.eq(Some(error)),
                ))
                .execute(c)
                .await?;
            if n == 0 {
                exists(c, &claim.id).await?;
                return Ok(false);
            }
            if let Some(at) = run_after {
                diesel::update(jobs::table.find(claim.id.as_str()))
                    .set(jobs::run_after_ms.eq(at))
                    .execute(c)
                    .await?;
            }
            Ok::<_, TxError>(true)
        })
        .await?)
    }

    async fn open_job(
        &self,
        scope: &Scope,
        group: &GroupId,
        kind: JobKind,
    ) -> StoreResult<Option<Job>> {
        let mut conn = self.conn().await?;
        jobs::table
            .filter(jobs::group_id.eq(group.as_str()))
            .filter(jobs::partner_id.eq(scope.partner.as_str()))
            .filter(jobs::mode.eq(scope.mode.as_str()))
            .filter(jobs::kind.eq(kind.as_str()))
            .filter(
                jobs::state
                    .eq(JobState::Queued.as_str())
                    .or(jobs::state.eq(JobState::Running.as_str())),
            )
            .order(jobs::run_after_ms.desc())
            .select(JobRow::as_select())
            .first(&mut *conn)
            .await
            .optional()
            .map_err(db)?
            .map(JobRow::into_domain)
            .transpose()
    }

    async fn latest_result(
        &self,
        scope: &Scope,
        group: &GroupId,
        kind: JobKind,
    ) -> StoreResult<Option<String>> {
        let mut conn = self.conn().await?;
        let found: Option<Option<String>> = jobs::table
            .filter(jobs::group_id.eq(group.as_str()))
            .filter(jobs::partner_id.eq(scope.partner.as_str()))
            .filter(jobs::mode.eq(scope.mode.as_str()))
            .filter(jobs::kind.eq(kind.as_str()))
            .filter(jobs::state.eq(JobState::Done.as_str()))
            .order(jobs::run_after_ms.desc())
            .select(jobs::result)
            .first(&mut *conn)
            .await
            .optional()
            .map_err(db)?;
        Ok(found.flatten())
    }
}
