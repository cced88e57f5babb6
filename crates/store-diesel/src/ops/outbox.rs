//! The event outbox (shared by both backends; claiming is per backend).

use async_trait::async_trait;
use diesel::{
    BoolExpressionMethods, ExpressionMethods, OptionalExtension, QueryDsl, SelectableHelper,
};
use diesel_async::RunQueryDsl;
use domain::event::{DeliveryState, Event, EventFilter, NewEvent};
use domain::ids::EventId;
use domain::page::{Cursor, Page, PageRequest};
use domain::scope::Scope;
use domain::store::{AttemptRecord, OutboxStore, OutboxWatch, StoreError, StoreResult};

use domain::event::EventType;
use domain::store::Conflict;
use domain::webhook::WebhookEndpoint;
use domain::webhook::attempt::DeliveryAttempt;

use super::locks::claim_event_ids;
use super::webhooks::{AttemptRow, insert_attempts, read_endpoint};
use super::shared::insert_events;
use super::{Conn, Store};
use crate::error::{TxError, db};
use crate::rows::EventRow;
use crate::schema::events;

/// Appends events inside the caller's transaction, first attempt due at
/// `due_ms`.
pub(crate) async fn append_events(
    conn: &mut Conn,
    list: &[NewEvent],
    due_ms: i64,
) -> Result<(), TxError> {
    if list.is_empty() {
        return Ok(());
    }
    let rows = list
        .iter()
        .map(|e| EventRow::new(e, due_ms))
        .collect::<Result<Vec<_>, StoreError>>()?;
    insert_events(conn, rows).await?;
    Ok(())
}

#[async_trait]
impl OutboxStore for Store {
    async fn append(&self, list: &[NewEvent], now_ms: i64) -> StoreResult<()> {
        outbox_tx!(self, async |c: &mut Conn| append_events(c, list, now_ms).await).await?;
        Ok(())
    }

    async fn append_claimed(
        &self,
        event: &NewEvent,
        now_ms: i64,
        lease_until_ms: i64,
    ) -> StoreResult<Option<WebhookEndpoint>> {
        let mut row = EventRow::new(event, now_ms)?;
        row.locked_until_ms = Some(lease_until_ms);
        self.append_claimed_row(row, event.scope.clone()).await
    }

    async fn claim_deliveries(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: u32,
    ) -> StoreResult<Vec<Event>> {
                let rows = write_tx!(self, async |c: &mut Conn| {
            let ids = claim_event_ids(c, now_ms, i64::from(limit)).await?;
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            diesel::update(events::table.filter(events::id.eq_any(&ids)))
                .set(events::locked_until_ms.eq(Some(now_ms.saturating_add(lease_ms))))
                .execute(c)
                .await?;
            let rows: Vec<EventRow> = events::table
                .filter(events::id.eq_any(&ids))
                .order((
                    events::next_attempt_at_ms.asc(),
                    events::created_at.asc(),
                    events::id.asc(),
                ))
                .select(EventRow::as_select())
                .load(c)
                .await?;
            Ok::<_, TxError>(rows)
        })
        .await?;
        rows.into_iter().map(EventRow::into_domain).collect()
    }

    async fn record_attempt(
        &self,
        id: &EventId,
        lease_until_ms: i64,
        state: DeliveryState,
        status: Option<u16>,
        next_attempt_at_ms: Option<i64>,
        log: Option<DeliveryAttempt>,
    ) -> StoreResult<bool> {
        let record = AttemptRecord {
            id: id.clone(),
            lease_until_ms,
            state,
            status,
            next_attempt_at_ms,
            log,
        };
        // Recorded outside the dispatcher (the test ping's first attempt):
        // a retry it schedules must wake an idle dispatcher.
        let retry = record.state == DeliveryState::Pending;
        if self.record_one(record, retry).await? {
            return Ok(true);
        }
        let mut conn = self.conn().await?;
        let found: Option<String> = events::table
            .find(id.as_str())
            .select(events::id)
            .first(&mut *conn)
            .await
            .optional()
            .map_err(db)?;
        match found {
            Some(_) => Ok(false),
            None => Err(StoreError::NotFound),
        }
    }

    async fn record_attempts(&self, records: Vec<AttemptRecord>) -> StoreResult<Vec<bool>> {
        // The dispatcher's own batch: it looks for what is due next itself.
        self.record_batch(records, false).await
    }

    async fn next_due_ms(&self) -> StoreResult<Option<i64>> {
        use diesel::dsl::sql;
        use diesel::sql_types::{BigInt, Nullable};
        let mut conn = self.conn().await?;
        // An attempt in flight is due again only when its lease ends.
        events::table
            .filter(events::state.eq(DeliveryState::Pending.as_str()))
            .select(sql::<Nullable<BigInt>>(
                "MIN(CASE WHEN locked_until_ms > next_attempt_at_ms \
                 THEN locked_until_ms ELSE next_attempt_at_ms END)",
            ))
            .first(&mut *conn)
            .await
            .map_err(db)
    }

    fn watch(&self) -> OutboxWatch {
        self.outbox_watch()
    }

    async fn resend(&self, scope: &Scope, id: &EventId, now_ms: i64) -> StoreResult<Event> {
        let row = outbox_tx!(self, async |c: &mut Conn| {
            let row: Option<EventRow> = events::table
                .filter(events::id.eq(id.as_str()))
                .filter(events::partner_id.eq(scope.partner.as_str()))
                .filter(events::mode.eq(scope.mode.as_str()))
                .select(EventRow::as_select())
                .first(c)
                .await
                .optional()?;
            let Some(row) = row else {
                return Err(TxError::from(StoreError::NotFound));
            };
            if row.state == DeliveryState::Pending.as_str() {
                return Err(TxError::from(StoreError::Conflict(
                    Conflict::DeliveryPending,
                )));
            }
            diesel::update(events::table.filter(events::id.eq(id.as_str())))
                .set(rescheduled(now_ms))
                .execute(c)
                .await?;
            notify_outbox!(c);
            // The row as the update left it.
            let row: EventRow = events::table
                .filter(events::id.eq(id.as_str()))
                .select(EventRow::as_select())
                .first(c)
                .await?;
            Ok::<_, TxError>(row)
        })
        .await?;
        row.into_domain()
    }

    async fn replay(
        &self,
        scope: &Scope,
        since: i64,
        until: i64,
        types: Vec<EventType>,
        now_ms: i64,
    ) -> StoreResult<u64> {
        // All types but `ping` when none is named.
        let named = if types.is_empty() {
            EventType::ALL.to_vec()
        } else {
            types
        };
        let types: Vec<&str> = named
            .iter()
            .filter(|t| **t != EventType::Ping)
            .map(|t| t.as_str())
            .collect();
        let n = outbox_tx!(self, async |c: &mut Conn| {
            let n = diesel::update(
                events::table
                    .filter(events::partner_id.eq(scope.partner.as_str()))
                    .filter(events::mode.eq(scope.mode.as_str()))
                    .filter(events::created_at.ge(since))
                    .filter(events::created_at.lt(until))
                    .filter(events::event_type.eq_any(&types))
                    .filter(events::state.ne(DeliveryState::Pending.as_str())),
            )
            .set(rescheduled(now_ms))
            .execute(c)
            .await?;
            if n > 0 {
                notify_outbox!(c);
            }
            Ok::<_, TxError>(n)
        })
        .await?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn event(&self, scope: &Scope, id: &EventId) -> StoreResult<Event> {
        let mut conn = self.conn().await?;
        events::table
            .filter(events::id.eq(id.as_str()))
            .filter(events::partner_id.eq(scope.partner.as_str()))
            .filter(events::mode.eq(scope.mode.as_str()))
            .select(EventRow::as_select())
            .first(&mut *conn)
            .await
            .map_err(db)?
            .into_domain()
    }

    async fn events(
        &self,
        scope: &Scope,
        filter: &EventFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<Event>> {
        let mut conn = self.conn().await?;
        let mut query = events::table
            .filter(events::partner_id.eq(scope.partner.as_str()))
            .filter(events::mode.eq(scope.mode.as_str()))
            .filter(events::created_at.ge(filter.since))
            .into_boxed();
        if let Some(until) = filter.until {
            query = query.filter(events::created_at.lt(until));
        }
        if !filter.types.is_empty() {
            let names: Vec<&str> = filter.types.iter().map(|t| t.as_str()).collect();
            query = query.filter(events::event_type.eq_any(names));
        }
        let rows = keyset_page!(query, events, page)
        .select(EventRow::as_select())
        .load(&mut *conn)
        .await
        .map_err(db)?;
        let items = rows
            .into_iter()
            .map(EventRow::into_domain)
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Page::from_rows(items, page.limit, |e| Cursor {
            created_at: e.event.created_at,
            id: e.event.id.to_string(),
        }))
    }
}

/// The columns of a new delivery due at `now_ms`: pending, unclaimed, no
/// attempts yet.
#[allow(clippy::type_complexity)]
fn rescheduled(
    now_ms: i64,
) -> (
    diesel::dsl::Eq<events::state, &'static str>,
    diesel::dsl::Eq<events::attempts, i32>,
    diesel::dsl::Eq<events::next_attempt_at_ms, Option<i64>>,
    diesel::dsl::Eq<events::locked_until_ms, Option<i64>>,
    diesel::dsl::Eq<events::last_status, Option<i32>>,
) {
    (
        events::state.eq(DeliveryState::Pending.as_str()),
        events::attempts.eq(0),
        events::next_attempt_at_ms.eq(Some(now_ms)),
        events::locked_until_ms.eq(None::<i64>),
        events::last_status.eq(None::<i32>),
    )
}

impl Store {
    /// Appends claimed events in one transaction (see
    /// [`Self::write_webhook_batch`]): each one's scope's endpoint, or
    /// `None` (not appended).
    pub(crate) async fn append_claimed_batch(
        &self,
        items: Vec<(EventRow, Scope)>,
    ) -> StoreResult<Vec<Option<WebhookEndpoint>>> {
        let (endpoints, _) = self.write_webhook_batch(items, Vec::new(), false).await?;
        Ok(endpoints)
    }

    /// Records a batch of attempts in one transaction (see
    /// [`OutboxStore::record_attempts`]); with `notify`, the outbox's
    /// watchers hear of it.
    pub(crate) async fn record_batch(
        &self,
        records: Vec<AttemptRecord>,
        notify: bool,
    ) -> StoreResult<Vec<bool>> {
        let (_, recorded) = self.write_webhook_batch(Vec::new(), records, notify).await?;
        Ok(recorded)
    }

    /// Appends claimed events (each scope's endpoint read once; an event
    /// whose scope has none is not appended) and records attempts, all in
    /// one transaction: each event's endpoint, and whether each attempt
    /// was recorded (its lease still held). With `notify`, the outbox's
    /// watchers hear of it (a claimed event is nothing for a dispatcher to
    /// wake for; an attempt that schedules a retry is).
    pub(crate) async fn write_webhook_batch(
        &self,
        appends: Vec<(EventRow, Scope)>,
        records: Vec<AttemptRecord>,
        notify: bool,
    ) -> StoreResult<(Vec<Option<WebhookEndpoint>>, Vec<bool>)> {
        if appends.is_empty() && records.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let written = write_tx!(self, async |c: &mut Conn| {
            let endpoints = append_claimed_in(c, appends).await?;
            let recorded = record_in(c, &records).await?;
            if notify {
                notify_outbox!(c);
            }
            Ok::<_, TxError>((endpoints, recorded))
        })
        .await?;
        if notify {
            self.outbox_changed();
        }
        Ok(written)
    }
}

/// Appends claimed events inside the caller's transaction: each one's
/// scope's endpoint (read once a scope), or `None` (not appended).
async fn append_claimed_in(
    c: &mut Conn,
    items: Vec<(EventRow, Scope)>,
) -> Result<Vec<Option<WebhookEndpoint>>, TxError> {
    let mut read: Vec<(Scope, Option<WebhookEndpoint>)> = Vec::new();
    let mut endpoints = Vec::with_capacity(items.len());
    let mut rows = Vec::with_capacity(items.len());
    for (row, scope) in items {
        let known = read.iter().find(|(s, _)| *s == scope).map(|(_, e)| e.clone());
        let endpoint = match known {
            Some(endpoint) => endpoint,
            None => {
                let endpoint = read_endpoint(c, &scope).await?;
                read.push((scope, endpoint.clone()));
                endpoint
            }
        };
        if endpoint.is_some() {
            rows.push(row);
        }
        endpoints.push(endpoint);
    }
    if !rows.is_empty() {
        insert_events(c, rows).await?;
    }
    Ok(endpoints)
}

/// Records attempts inside the caller's transaction, each outcome with its
/// log row: whether each was recorded (its lease still held). On
/// PostgreSQL the events are marked in one statement for the batch.
async fn record_in(c: &mut Conn, records: &[AttemptRecord]) -> Result<Vec<bool>, TxError> {
    let recorded = match super::mark_in_one_statement(c, records).await? {
        Some(recorded) => recorded,
        None => mark_each(c, records).await?,
    };
    let logs: Vec<AttemptRow> = records
        .iter()
        .zip(&recorded)
        .filter(|(_, recorded)| **recorded)
        .filter_map(|(r, _)| r.log.as_ref().map(AttemptRow::new))
        .collect();
    if !logs.is_empty() {
        insert_attempts(c, logs).await?;
    }
    Ok(recorded)
}

/// Marks each record's event as its attempt left it, when pending under
/// the attempt's lease, one statement a record: whether each was marked.
async fn mark_each(c: &mut Conn, records: &[AttemptRecord]) -> diesel::QueryResult<Vec<bool>> {
    let mut recorded = Vec::with_capacity(records.len());
    for r in records {
        let n = diesel::update(
            events::table
                .filter(events::id.eq(r.id.as_str()))
                .filter(events::state.eq(DeliveryState::Pending.as_str()))
                .filter(events::locked_until_ms.eq(Some(r.lease_until_ms))),
        )
        .set((
            events::state.eq(r.state.as_str()),
            events::attempts.eq(events::attempts + 1),
            events::last_status.eq(r.status.map(i32::from)),
            events::next_attempt_at_ms.eq(r.next_attempt_at_ms),
            events::locked_until_ms.eq(None::<i64>),
        ))
        .execute(c)
        .await?;
        recorded.push(n > 0);
    }
    Ok(recorded)
}
