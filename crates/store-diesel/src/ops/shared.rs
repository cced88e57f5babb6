//! What every port of a backend uses (shared by both backends): the
//! store's pooled connection and owner, the batch inserts (`insert_all!`
//! of each backend), the jobs a write queues, and the health ping.

use async_trait::async_trait;
use diesel::QueryResult;
use diesel_async::RunQueryDsl;
use diesel_async::pooled_connection::AsyncDieselConnectionManager;
use domain::ids::ProcessId;
use domain::job::NewJob;
use domain::store::{Health, StoreResult};

use super::{Conn, Store};
use crate::Pooled;
use crate::rows::{EventRow, JobRow, MemberRow};
use crate::schema::{events, jobs};

/// Rows per INSERT statement: at most 16 columns each, under SQLite's
/// 32,766 bind parameters and well under PostgreSQL's 65,535.
pub(super) const CHUNK: usize = 1_000;

impl Store {
    /// The store owned by the serving process `owner` (see
    /// [`crate::Stores::open_owned`]).
    #[must_use]
    pub fn owned_by(self, owner: Option<ProcessId>) -> Self {
        Self { owner, ..self }
    }

    /// A connection from the pool.
    pub(crate) async fn conn(&self) -> StoreResult<Pooled<AsyncDieselConnectionManager<Conn>>> {
        Pooled::checkout(&self.pool).await
    }
}

/// The rows of the jobs a write queues, built before its transaction.
pub(super) fn job_rows(new: &[NewJob]) -> StoreResult<Vec<JobRow>> {
    new.iter().map(JobRow::new).collect()
}

/// Inserts the jobs of a write inside its transaction.
pub(super) async fn insert_jobs(c: &mut Conn, rows: &[JobRow]) -> QueryResult<()> {
    for row in rows {
        diesel::insert_into(jobs::table)
            .values(row)
            .execute(c)
            .await?;
    }
    Ok(())
}

pub(super) async fn insert_members(c: &mut Conn, rows: Vec<MemberRow>) -> QueryResult<()> {
    insert_members!(c, rows)
}

/// Inserts outbox rows (see [`insert_members`]).
pub(super) async fn insert_events(c: &mut Conn, rows: Vec<EventRow>) -> QueryResult<()> {
    insert_all!(c, events::table, rows)
}

#[async_trait]
impl Health for Store {
    async fn ping(&self) -> StoreResult<()> {
        let mut conn = self.conn().await?;
        diesel::sql_query("SELECT 1")
            .execute(&mut *conn)
            .await
            .map_err(crate::error::unavailable)?;
        Ok(())
    }
}
