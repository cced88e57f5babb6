//! Idempotency records (shared by both backends). `begin` inserts an
//! in-flight record naming the store's owner (`ON CONFLICT DO NOTHING`):
//! for a new key, that one statement is all. When the key is recorded, one
//! transaction drops an expired or abandoned record for it (an in-flight
//! record whose owner is dead: `owner_dead!`), tries the insert again, and
//! if another request got there first, classifies what it left. On
//! PostgreSQL the insert waits for a concurrent inserter of the same key to
//! commit, so exactly one of N concurrent duplicates executes. Completing
//! or releasing a record is fenced by the attempt that began it: a process
//! presumed dead that still runs cannot touch the record of the process
//! that took over, and an attempt whose begin failed may release what it
//! might have committed.
//! The purge deletes what the replay window no longer needs, creation
//! keys included.

use async_trait::async_trait;
use diesel::{BoolExpressionMethods, ExpressionMethods, OptionalExtension, QueryDsl};
use diesel_async::RunQueryDsl;
use domain::idempotency::{
    Begin, Completion, IN_FLIGHT_LEASE_SECS, IdempotentRequest, REPLAY_WINDOW_SECS, StoredResponse,
};
use domain::ids::ProcessId;
use domain::scope::Scope;
use domain::store::{IdempotencyStore, StoreError, StoreResult};

use super::{Conn, Store};
use crate::error::{TxError, found};
use crate::schema::{creation_keys, idempotency as idem};

type Found = (
    String,
    String,
    String,
    String,
    Option<i32>,
    Option<String>,
    Option<Vec<u8>>,
);

/// The in-flight record of `$scope`'s key that the attempt of `$request`
/// began (the fence of completing and releasing a record).
macro_rules! attempts_in_flight {
    ($scope:expr, $request:expr) => {
        idem::table
            .filter(idem::partner_id.eq($scope.partner.as_str()))
            .filter(idem::mode.eq($scope.mode.as_str()))
            .filter(idem::idem_key.eq(&$request.key))
            .filter(idem::state.eq("in_flight"))
            .filter(idem::attempt.eq(&$request.attempt))
    };
}

#[async_trait]
impl IdempotencyStore for Store {
    async fn begin(
        &self,
        scope: &Scope,
        request: &IdempotentRequest,
        now: i64,
    ) -> StoreResult<Begin> {
        let partner = scope.partner.to_string();
        let mode = scope.mode.as_str();
        let owner = self.owner.as_ref().map(ProcessId::as_str);
        let now_ms = now.saturating_mul(1000);
        let record = (
            idem::partner_id.eq(&partner),
            idem::mode.eq(mode),
            idem::idem_key.eq(&request.key),
            idem::method.eq(&request.method),
            idem::route.eq(&request.route),
            idem::digest.eq(&request.digest),
            idem::state.eq("in_flight"),
            idem::created_at.eq(now),
            idem::expires_at.eq(now.saturating_add(IN_FLIGHT_LEASE_SECS)),
            idem::owner_id.eq(owner),
            idem::attempt.eq(&request.attempt),
        );
        // A new key, the common case: the insert alone, one statement
        // (which PostgreSQL commits by itself, without waiting for the
        // flush: `unflushed_autocommit!`). A key already recorded is
        // classified below, in one transaction.
        let inserted = unflushed_autocommit!(self, async |c: &mut Conn| {
            Ok(diesel::insert_into(idem::table)
                .values(record)
                .on_conflict_do_nothing()
                .execute(c)
                .await?)
        })
        .await?;
        if inserted == 1 {
            return Ok(Begin::Execute);
        }
        Ok(write_tx!(self, async |c: &mut Conn| {
            let key_filter = idem::table
                .filter(idem::partner_id.eq(&partner))
                .filter(idem::mode.eq(mode))
                .filter(idem::idem_key.eq(&request.key));
            diesel::delete(key_filter.filter(idem::expires_at.le(now).or(
                idem::state.eq("in_flight").and(owner_dead!(
                    idem::owner_id,
                    now_ms,
                    owner.unwrap_or("")
                )),
            )))
            .execute(c)
            .await?;
            let inserted = diesel::insert_into(idem::table)
                .values(record)
                .on_conflict_do_nothing()
                .execute(c)
                .await?;
            if inserted == 1 {
                return Ok(Begin::Execute);
            }
            let found: Option<Found> = key_filter
                .select((
                    idem::method,
                    idem::route,
                    idem::digest,
                    idem::state,
                    idem::status,
                    idem::headers,
                    idem::body,
                ))
                .first(c)
                .await
                .optional()?;
            let Some((method, route, digest, state, status, headers, body)) = found else {
                // Released between our insert and read: the caller retries.
                return Ok(Begin::InFlight);
            };
            if method != request.method || route != request.route || digest != request.digest {
                return Ok(Begin::Mismatch);
            }
            if state != "done" {
                return Ok(Begin::InFlight);
            }
            let headers: Vec<(String, String)> = match headers {
                Some(h) => {
                    serde_json::from_str(&h).map_err(|e| StoreError::Internal(Box::new(e)))?
                }
                None => Vec::new(),
            };
            Ok::<_, TxError>(Begin::Replay(StoredResponse {
                status: status.and_then(|s| u16::try_from(s).ok()).unwrap_or(200),
                headers,
                body: body.unwrap_or_default(),
            }))
        })
        .await?)
    }

    async fn complete<'a>(&self, scope: &Scope, done: Completion<'a>) -> StoreResult<()> {
        let Completion {
            request,
            response,
            now,
        } = done;
        let headers = serde_json::to_string(&response.headers)
            .map_err(|e| StoreError::Internal(Box::new(e)))?;
        let n = autocommit!(self, async |c: &mut Conn| {
            Ok(diesel::update(attempts_in_flight!(scope, request))
                .set((
                    idem::state.eq("done"),
                    idem::status.eq(Some(i32::from(response.status))),
                    idem::headers.eq(Some(&headers)),
                    idem::body.eq(Some(&response.body)),
                    idem::expires_at.eq(now.saturating_add(REPLAY_WINDOW_SECS)),
                ))
                .execute(c)
                .await?)
        })
        .await?;
        found(n)
    }

    async fn release(&self, scope: &Scope, request: &IdempotentRequest) -> StoreResult<()> {
        autocommit!(self, async |c: &mut Conn| {
            Ok(diesel::delete(attempts_in_flight!(scope, request))
                .execute(c)
                .await?)
        })
        .await?;
        Ok(())
    }

    async fn purge_idempotency(&self, now: i64) -> StoreResult<u64> {
        let me = self.owner.as_ref().map_or("", ProcessId::as_str);
        let now_ms = now.saturating_mul(1000);
        let cutoff = now.saturating_sub(REPLAY_WINDOW_SECS);
                let n = write_tx!(self, async |c: &mut Conn| {
            // An in-flight record goes only when its request cannot be
            // running any more: begun before the window and owned by no
            // process, or by a dead one (never by this process).
            let records = diesel::delete(
                idem::table.filter(
                    idem::state.eq("done").and(idem::expires_at.le(now)).or(idem::state
                        .eq("in_flight")
                        .and(idem::created_at.le(cutoff))
                        .and(
                            idem::owner_id
                                .is_null()
                                .or(owner_dead!(idem::owner_id, now_ms, me)),
                        )),
                ),
            )
            .execute(c)
            .await?;
            // A creation key from before the window no longer binds (see
            // `insert_group_once`).
            let keys = diesel::delete(creation_keys::table.filter(creation_keys::created_at.lt(cutoff)))
                .execute(c)
                .await?;
            Ok::<_, TxError>(records.saturating_add(keys))
        })
        .await?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}
