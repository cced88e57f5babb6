//! The data migration of the stored documents (shared by both backends):
//! quote and enrollment bodies, event payloads and job payloads written by
//! the previous version (bare camelCase or snake_case) are rewritten in the
//! current form (`domain::document`: `{"v": 1, "doc": …}`, snake_case).
//! Rows already current are not selected, so a second run does nothing. A
//! row that does not read stops it with an error naming the row, and
//! nothing of that row is changed.

use diesel::{ExpressionMethods, QueryDsl, TextExpressionMethods};
use diesel_async::RunQueryDsl;
use domain::document::{EnrollmentDocument, EventData, JobPayload, QuoteDocument};
use domain::event::EventType;
use domain::job::JobKind;
use domain::quote::QuoteKind;
use domain::store::{StoreError, StoreResult};

use super::{Conn, Store};
use crate::error::{TxError, db};
use crate::rows::stored;
use crate::schema::{enrollments, events, jobs, quotes};

/// Rows read per batch.
const BATCH: i64 = 500;

/// The prefix of every current document (`serde_json` writes the
/// envelope's keys in this order, without spaces).
const CURRENT: &str = "{\"v\":%";

fn unreadable(what: &str, id: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Internal(format!("the stored {what} of {id} does not read: {e}").into())
}

/// Rewrites, batch by batch, every row of `$table` whose `$text` column is
/// not current, through `$rewrite(id, key, text) -> StoreResult<String>`
/// (`$key` is the column that names the document's type); adds the rows
/// rewritten to `$count`.
macro_rules! rewrite_table {
    ($c:expr, $table:ident, $key:ident, $text:ident, $count:ident, $rewrite:expr) => {
        loop {
            let rows: Vec<(String, String, String)> = $table::table
                .filter($table::$text.not_like(CURRENT))
                .select(($table::id, $table::$key, $table::$text))
                .order($table::id)
                .limit(BATCH)
                .load($c)
                .await
                .map_err(db)?;
            let mut moved = 0u64;
            for (id, key, text) in rows {
                let current: String = $rewrite(&id, &key, &text)?;
                diesel::update($table::table.find(&id))
                    .filter($table::$text.eq(&text))
                    .set($table::$text.eq(current))
                    .execute($c)
                    .await
                    .map_err(db)?;
                moved += 1;
            }
            $count += moved;
            // Every row rewritten now starts with the envelope, so the
            // next batch holds only rows not yet seen.
            if moved == 0 {
                break;
            }
        }
    };
}

impl Store {
    /// Rewrites every stored document not yet in the current form; returns
    /// how many rows it rewrote.
    ///
    /// # Errors
    /// A row that does not read (named in the error), or the database.
    pub async fn rewrite_documents(&self) -> StoreResult<u64> {
        autocommit!(self, async |c: &mut Conn| {
        let mut rewritten = 0u64;
        rewrite_table!(
            c,
            quotes,
            kind,
            body,
            rewritten,
            |id: &str, kind: &str, body: &str| {
                let kind =
                    QuoteKind::parse(kind).ok_or_else(|| unreadable("quote kind", id, kind))?;
                let doc = QuoteDocument::from_stored(kind, body)
                    .map_err(|e| unreadable("quote body", id, e))?;
                stored(doc.to_stored())
            }
        );
        rewrite_table!(
            c,
            enrollments,
            id,
            body,
            rewritten,
            |id: &str, _: &str, body: &str| {
                let doc = EnrollmentDocument::from_stored(body)
                    .map_err(|e| unreadable("enrollment body", id, e))?;
                stored(doc.to_stored())
            }
        );
        rewrite_table!(
            c,
            events,
            event_type,
            data,
            rewritten,
            |id: &str, t: &str, data: &str| {
                let t = EventType::parse(t).ok_or_else(|| unreadable("event type", id, t))?;
                let doc =
                    EventData::from_stored(t, data).map_err(|e| unreadable("event data", id, e))?;
                stored(doc.to_stored())
            }
        );
        rewrite_table!(
            c,
            jobs,
            kind,
            payload,
            rewritten,
            |id: &str, kind: &str, payload: &str| {
                let kind = JobKind::parse(kind).ok_or_else(|| unreadable("job kind", id, kind))?;
                let doc = JobPayload::from_stored(kind, payload)
                    .map_err(|e| unreadable("job payload", id, e))?;
                stored(doc.to_stored())
            }
        );
        Ok::<_, TxError>(rewritten)
        })
        .await
    }
}
