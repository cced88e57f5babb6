//! Row locks and claims (shared by both backends): the reads that pick the
//! rows a write transaction is about to change. On PostgreSQL they lock
//! them (`for_update!`), and claims skip rows another claimant holds
//! (`skip_locked!`), so concurrent claimants pass each other by; on SQLite
//! both macros leave the query as it is, since the `IMMEDIATE` write
//! transaction already excludes every other writer.

use diesel::{
    BoolExpressionMethods, ExpressionMethods, OptionalExtension, QueryDsl, QueryResult,
    SelectableHelper,
};
use diesel_async::RunQueryDsl;

use super::Conn;
use crate::rows::GroupRow;
use crate::schema::{events, groups, jobs};

/// Reads a group of the scope inside a write transaction, locking its row
/// until the transaction ends (writers of one group take turns).
pub(super) async fn lock_group_row(
    c: &mut Conn,
    partner: &str,
    mode: &str,
    id: &str,
) -> QueryResult<Option<GroupRow>> {
    for_update!(
        groups::table
            .filter(groups::id.eq(id))
            .filter(groups::partner_id.eq(partner))
            .filter(groups::mode.eq(mode))
            .select(GroupRow::as_select())
    )
    .first(c)
    .await
    .optional()
}

/// Picks (and locks) up to `limit` due deliveries, oldest due first.
pub(super) async fn claim_event_ids(
    c: &mut Conn,
    now_ms: i64,
    limit: i64,
) -> QueryResult<Vec<String>> {
    skip_locked!(
        events::table
            .filter(events::state.eq("pending"))
            .filter(events::next_attempt_at_ms.le(now_ms))
            .filter(
                events::locked_until_ms
                    .is_null()
                    .or(events::locked_until_ms.le(now_ms)),
            )
            // Events due together go oldest first (a replay schedules a
            // window at once); events made together have ids ascending in
            // the order they were made.
            .order((
                events::next_attempt_at_ms.asc(),
                events::created_at.asc(),
                events::id.asc(),
            ))
            .limit(limit)
            .select(events::id)
    )
    .load(c)
    .await
}

/// Picks (and locks) the oldest due job of `kinds` — queued and due, or
/// running with an expired lease or a dead owner (`owner_dead!`; `me` is
/// the claimant's owner).
pub(super) async fn claim_job_id(
    c: &mut Conn,
    kinds: &[&str],
    now_ms: i64,
    me: &str,
) -> QueryResult<Option<String>> {
    skip_locked!(
        jobs::table
            .filter(jobs::kind.eq_any(kinds))
            .filter(
                (jobs::state.eq("queued").and(jobs::run_after_ms.le(now_ms))).or(jobs::state
                    .eq("running")
                    .and(
                        jobs::locked_until_ms
                            .le(now_ms)
                            .or(owner_dead!(jobs::owner_id, now_ms, me)),
                    )),
            )
            .order(jobs::run_after_ms.asc())
            .limit(1)
            .select(jobs::id)
    )
    .first(c)
    .await
    .optional()
}
