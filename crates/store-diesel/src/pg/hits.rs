//! PostgreSQL's rate-limit hits, counted together: the hits a process's
//! requests make while one statement is under way queue up and go as the
//! next statement ([`Batcher`]), `SELECT rate_limit_hits(…)` (a function of the
//! migrations that makes each hit as `rate_limit_hit` does, in bucket
//! order). The count stays exact across processes — every hit is still
//! counted in the database, atomically — while a busy process spends one
//! round trip and one transaction on many requests instead of one each.
//!
//! A group read (`GET /v1/groups/{id}`) defers its hit to its read
//! ([`domain::store::defer_hit`]) and rides in the same queue: the
//! statement of a batch holding reads selects the groups they ask for
//! beside the hits' counts ([`ReadWithHits`]), so a read costs no
//! statement or transaction of its own, alone (one statement for the
//! whole request) or under load (one for many requests). Each read's
//! answer is checked against its own scope: the statement finds rows by
//! id, the scope's partner and mode are compared here.

use std::sync::Arc;

use diesel::pg::Pg;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::sql_types::{Array, BigInt, Integer, Nullable, Text};
use diesel::{QueryResult, QueryableByName};
use diesel_async::RunQueryDsl;
use domain::group::Group;
use domain::ids::GroupId;
use domain::scope::Scope;
use domain::store::{StoreError, StoreResult, take_deferred_hit};

use super::PgStore;
use super::batch::{Batcher, Failed};
use crate::rows::GroupRow;

diesel::define_sql_function! {
    /// The hits of migration `rate_limit_hits`: each window's count after
    /// its hit, or NULL where the limit was already reached, in order.
    fn rate_limit_hits(buckets: Array<Text>, window_starts: Array<BigInt>, limits: Array<Integer>) -> Array<Nullable<Integer>>;
}

/// The statement of a batch holding group reads: the hits' counts (made
/// once, in the materialized `WITH`) beside each group with one of the
/// ids asked for, or one row of counts alone when none is found. Its SQL
/// is fixed, so each connection prepares it once (diesel's `sql_query`
/// would prepare it again at every batch: a round trip and a transaction
/// more).
struct ReadWithHits<'a> {
    buckets: Vec<&'a str>,
    windows: Vec<i64>,
    limits: Vec<i32>,
    ids: Vec<&'a str>,
}

impl QueryFragment<Pg> for ReadWithHits<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("WITH h AS MATERIALIZED (SELECT rate_limit_hits(");
        out.push_bind_param::<Array<Text>, _>(&self.buckets)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<BigInt>, _>(&self.windows)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Integer>, _>(&self.limits)?;
        out.push_sql(") AS counts) SELECT h.counts, g.* FROM h LEFT JOIN groups g ON g.id = ANY(");
        out.push_bind_param::<Array<Text>, _>(&self.ids)?;
        out.push_sql(")");
        Ok(())
    }
}

prepared_once!(ReadWithHits);

/// The most hits one statement carries.
const MAX_HITS: usize = 256;

/// One queued hit, and the group read riding with it.
pub(crate) struct Hit {
    bucket: String,
    window: i64,
    limit: i32,
    read: Option<Read>,
}

/// A group read: the id, and the scope the row must belong to.
pub(crate) struct Read {
    id: String,
    partner: String,
    mode: &'static str,
}

impl Read {
    fn finds(&self, row: &GroupRow) -> bool {
        row.id == self.id && row.partner_id == self.partner && row.mode == self.mode
    }
}

/// A hit's answer: the window's count after it (`None` at the limit), and
/// the row its read found.
pub(crate) struct Counted {
    count: Option<u32>,
    group: Option<GroupRow>,
}

/// What one statement answered: each hit's count, in order, and the
/// groups its reads found.
struct Sent {
    counts: Vec<Option<i32>>,
    groups: Vec<GroupRow>,
}

/// A row of [`ReadWithHits`].
#[derive(QueryableByName)]
struct CountedRow {
    #[diesel(sql_type = Array<Nullable<Integer>>)]
    counts: Vec<Option<i32>>,
    #[diesel(embed)]
    group: Option<GroupRow>,
}

/// The hits waiting for the next statement.
pub(crate) type Hits = Batcher<Hit, Result<Counted, Failed>>;

/// A batcher of hits.
pub(crate) fn hits() -> Arc<Hits> {
    Arc::new(Batcher::new(MAX_HITS))
}

impl PgStore {
    /// Counts a hit of `bucket` in the window starting at `window` against
    /// `limit`: the window's count after it, or `None` at the limit.
    pub(crate) async fn count_hit(
        &self,
        bucket: &str,
        window: i64,
        limit: i32,
    ) -> StoreResult<Option<u32>> {
        let counted = self
            .queue_hit(bucket.to_owned(), window, limit, None)
            .await?;
        Ok(counted.count)
    }

    /// The scope's group `id`, read in the statement that makes the hit its
    /// request deferred; `None` (no hit deferred) leaves the read to the
    /// plain query.
    pub(crate) async fn group_with_deferred_hit(
        &self,
        scope: &Scope,
        id: &GroupId,
    ) -> Option<StoreResult<Group>> {
        let folded = take_deferred_hit()?;
        let hit = folded.hit();
        let read = Read {
            id: id.as_str().to_owned(),
            partner: scope.partner.as_str().to_owned(),
            mode: scope.mode.as_str(),
        };
        let limit = i32::try_from(hit.limit).unwrap_or(i32::MAX);
        let counted = self
            .queue_hit(hit.bucket.clone(), hit.window_start, limit, Some(read))
            .await;
        Some(match counted {
            Ok(Counted { count, group }) => {
                folded.made(Ok(count));
                group
                    .ok_or(StoreError::NotFound)
                    .and_then(GroupRow::into_domain)
            }
            Err(failed) => {
                folded.made(Err(failed.store_error()));
                Err(failed.store_error())
            }
        })
    }

    /// Queues a hit (and its read) for the next statement and waits for
    /// its answer.
    async fn queue_hit(
        &self,
        bucket: String,
        window: i64,
        limit: i32,
        read: Option<Read>,
    ) -> Result<Counted, Failed> {
        let hit = Hit {
            bucket,
            window,
            limit,
            read,
        };
        let store = self.clone();
        let send = move |batch: Vec<Hit>| {
            let store = store.clone();
            async move { store.answer(batch).await }
        };
        self.hits
            .submit(hit, send)
            .await
            .unwrap_or_else(|| Err(Failed::Unavailable("the rate-limit counter stopped".into())))
    }

    /// Each hit's answer from one statement for `batch`.
    async fn answer(&self, batch: Vec<Hit>) -> Vec<Result<Counted, Failed>> {
        let sent = self.send(&batch).await;
        batch
            .into_iter()
            .enumerate()
            .map(|(i, hit)| {
                let sent = sent.as_ref().map_err(Clone::clone)?;
                Ok(Counted {
                    count: sent
                        .counts
                        .get(i)
                        .copied()
                        .flatten()
                        .and_then(|c| u32::try_from(c).ok()),
                    group: hit
                        .read
                        .as_ref()
                        .and_then(|r| sent.groups.iter().find(|g| r.finds(g)).cloned()),
                })
            })
            .collect()
    }

    /// One statement for `batch`: each hit's count, in order, and the
    /// groups its reads asked for.
    async fn send(&self, batch: &[Hit]) -> Result<Sent, Failed> {
        let buckets: Vec<&str> = batch.iter().map(|h| h.bucket.as_str()).collect();
        let windows: Vec<i64> = batch.iter().map(|h| h.window).collect();
        let limits: Vec<i32> = batch.iter().map(|h| h.limit).collect();
        let ids: Vec<&str> = batch
            .iter()
            .filter_map(|h| h.read.as_ref().map(|r| r.id.as_str()))
            .collect();
        let failed = |e| Failed::of(&crate::error::db(e));
        let mut conn = self.counter_conn().await.map_err(|e| Failed::of(&e))?;
        let sent = if ids.is_empty() {
            // Prepared once per connection, like any cached SELECT.
            let counts = diesel::select(rate_limit_hits(buckets, windows, limits))
                .get_result(&mut *conn)
                .await
                .map_err(failed)?;
            Sent {
                counts,
                groups: Vec::new(),
            }
        } else {
            let query = ReadWithHits {
                buckets,
                windows,
                limits,
                ids,
            };
            let rows: Vec<CountedRow> = query.load(&mut *conn).await.map_err(failed)?;
            let counts = rows
                .as_slice()
                .first()
                .map(|r| r.counts.clone())
                .unwrap_or_default();
            Sent {
                counts,
                groups: rows.into_iter().filter_map(|r| r.group).collect(),
            }
        };
        if sent.counts.len() == batch.len() {
            Ok(sent)
        } else {
            Err(Failed::Internal(format!(
                "{} counts for {} rate-limit hits",
                sent.counts.len(),
                batch.len()
            )))
        }
    }
}
