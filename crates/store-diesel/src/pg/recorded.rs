//! PostgreSQL's record of a batch of delivery attempts in one statement:
//! the attempts go as arrays that `unnest` turns into rows, and the events
//! whose lease the batch still holds are updated by one `UPDATE … FROM`,
//! which returns their ids: one round trip for a batch of 32 attempts,
//! where an `UPDATE` an attempt costs 32, each a wakeup of the
//! connection's backend. The statement's text is fixed, so each
//! connection prepares it once.

use std::collections::HashSet;

use diesel::pg::Pg;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::sql_types::{Array, BigInt, Integer, Nullable, Text};
use diesel::{QueryResult, QueryableByName};
use diesel_async::RunQueryDsl;
use domain::event::DeliveryState;
use domain::store::AttemptRecord;

use super::Conn;

/// Marks each attempt's event as the attempt left it, when its lease is
/// still the attempt's: one statement for the batch. `None` when the
/// batch cannot go as one statement — one record, or the same event twice
/// (one `UPDATE` changes a row once, where records in turn would see the
/// first one's change) — and each record goes alone.
pub(crate) async fn mark_in_one_statement(
    c: &mut Conn,
    records: &[AttemptRecord],
) -> QueryResult<Option<Vec<bool>>> {
    // A test ping's attempt is often recorded alone: nothing to gather.
    if records.len() < 2 {
        return Ok(None);
    }
    let ids: Vec<&str> = records.iter().map(|r| r.id.as_str()).collect();
    let distinct: HashSet<&str> = ids.iter().copied().collect();
    if distinct.len() < ids.len() {
        return Ok(None);
    }
    let marked: Vec<Marked> = MarkRecorded {
        ids,
        leases: records.iter().map(|r| r.lease_until_ms).collect(),
        states: records.iter().map(|r| r.state.as_str()).collect(),
        statuses: records.iter().map(|r| r.status.map(i32::from)).collect(),
        next: records.iter().map(|r| r.next_attempt_at_ms).collect(),
    }
    .load(c)
    .await?;
    let marked: HashSet<&str> = marked.iter().map(|m| m.id.as_str()).collect();
    Ok(Some(
        records
            .iter()
            .map(|r| marked.contains(r.id.as_str()))
            .collect(),
    ))
}

/// The statement: each record's event, when pending under the record's
/// lease, takes the record's state, status and next attempt, counts the
/// attempt and loses its lease.
struct MarkRecorded<'a> {
    ids: Vec<&'a str>,
    leases: Vec<i64>,
    states: Vec<&'static str>,
    statuses: Vec<Option<i32>>,
    next: Vec<Option<i64>>,
}

impl QueryFragment<Pg> for MarkRecorded<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql(
            "UPDATE events AS e SET state = r.state, attempts = e.attempts + 1, \
             last_status = r.status, next_attempt_at_ms = r.next_at, locked_until_ms = NULL \
             FROM unnest(",
        );
        out.push_bind_param::<Array<Text>, _>(&self.ids)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<BigInt>, _>(&self.leases)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.states)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Integer>>, _>(&self.statuses)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<BigInt>>, _>(&self.next)?;
        out.push_sql(
            ") AS r(id, lease, state, status, next_at) \
             WHERE e.id = r.id AND e.locked_until_ms = r.lease AND e.state = '",
        );
        out.push_sql(DeliveryState::Pending.as_str());
        out.push_sql("' RETURNING e.id");
        Ok(())
    }
}

prepared_once!(MarkRecorded);

/// A row of [`MarkRecorded`]: an event the batch recorded.
#[derive(QueryableByName)]
struct Marked {
    #[diesel(sql_type = Text)]
    id: String,
}
