//! The registry of serving processes (shared by both backends): an owner's
//! row and heartbeat, and, on SQLite, the release at registration of
//! everything earlier processes left (`SOLE_PROCESS`).

use async_trait::async_trait;
use diesel::upsert::excluded;
use diesel::{BoolExpressionMethods, ExpressionMethods, QueryDsl};
use diesel_async::RunQueryDsl;
use domain::ids::ProcessId;
use domain::job::JobState;
use domain::store::StoreResult;
use domain::store::process::{OWNER_TIMEOUT_MS, ProcessStore};

use super::{Conn, SOLE_PROCESS, Store};
use crate::error::TxError;
use crate::schema::{idempotency as idem, jobs, processes};

/// Inserts the owner's row, or refreshes its heartbeat.
async fn beat(c: &mut Conn, owner: &str, now_ms: i64) -> Result<(), TxError> {
    diesel::insert_into(processes::table)
        .values((
            processes::id.eq(owner),
            processes::started_at_ms.eq(now_ms),
            processes::heartbeat_at_ms.eq(now_ms),
        ))
        .on_conflict(processes::id)
        .do_update()
        .set(processes::heartbeat_at_ms.eq(excluded(processes::heartbeat_at_ms)))
        .execute(c)
        .await?;
    Ok(())
}

#[async_trait]
impl ProcessStore for Store {
    async fn register_process(&self, now_ms: i64) -> StoreResult<()> {
        let Some(owner) = self.owner.as_ref().map(ProcessId::as_str) else {
            return Ok(());
        };
                Ok(write_tx!(self, async |c: &mut Conn| {
            if SOLE_PROCESS {
                // Whatever another owner (or none) holds was left by a
                // process that no longer runs.
                diesel::delete(processes::table.filter(processes::id.ne(owner)))
                    .execute(c)
                    .await?;
                diesel::delete(
                    idem::table
                        .filter(idem::state.eq("in_flight"))
                        .filter(idem::owner_id.is_null().or(idem::owner_id.ne(owner))),
                )
                .execute(c)
                .await?;
                diesel::update(
                    jobs::table
                        .filter(jobs::state.eq(JobState::Running.as_str()))
                        .filter(jobs::locked_until_ms.gt(now_ms))
                        .filter(jobs::owner_id.is_null().or(jobs::owner_id.ne(owner))),
                )
                .set(jobs::locked_until_ms.eq(now_ms))
                .execute(c)
                .await?;
            }
            beat(c, owner, now_ms).await
        })
        .await?)
    }

    async fn heartbeat(&self, now_ms: i64) -> StoreResult<()> {
        let Some(owner) = self.owner.as_ref().map(ProcessId::as_str) else {
            return Ok(());
        };
        autocommit!(self, async |c: &mut Conn| beat(c, owner, now_ms).await).await
    }

    async fn deregister_process(&self) -> StoreResult<()> {
        let Some(owner) = self.owner.as_ref().map(ProcessId::as_str) else {
            return Ok(());
        };
        autocommit!(self, async |c: &mut Conn| {
            Ok(diesel::delete(processes::table.find(owner))
                .execute(c)
                .await?)
        })
        .await?;
        Ok(())
    }

    async fn sweep_processes(&self, now_ms: i64) -> StoreResult<u64> {
        let cutoff = now_ms.saturating_sub(OWNER_TIMEOUT_MS);
        let n = autocommit!(self, async |c: &mut Conn| {
            Ok(
                diesel::delete(processes::table.filter(processes::heartbeat_at_ms.lt(cutoff)))
                    .execute(c)
                    .await?,
            )
        })
        .await?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}
