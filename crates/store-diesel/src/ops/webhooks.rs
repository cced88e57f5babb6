//! Webhook endpoints and the delivery log (shared by both backends): one
//! endpoint row per partner and mode, replaced by each registration, with
//! its health; one log row per attempt.

use async_trait::async_trait;
use diesel::prelude::{Insertable, Queryable, Selectable};
use diesel::{
    BoolExpressionMethods, ExpressionMethods, OptionalExtension, QueryDsl, SelectableHelper,
};
use diesel_async::RunQueryDsl;
use domain::event::{DeliveryState, Event, EventType};
use domain::ids::EventId;
use domain::page::{Cursor, Page, PageRequest};
use domain::scope::Scope;
use domain::store::{HealthChange, SecretRotation, StoreResult, WebhookStore};
use domain::webhook::attempt::{
    AttemptFilter, AttemptIds, AttemptOutcome, DeliveryAttempt, FailureReason,
};
use domain::webhook::{EndpointState, PreviousSecret, WebhookEndpoint};

use super::shared::CHUNK;
use super::{Conn, Store};
use crate::error::{TxError, corrupt, db};
use crate::rows::{EventRow, count, int, scope};
use crate::schema::webhook_attempts as attempts;
use crate::schema::{events, webhook_endpoints as endpoints};

/// The scope's endpoint row if it is the registration made at
/// `created_at` (the fencing token of health and rotation updates).
macro_rules! registered {
    ($scope:expr, $created_at:expr) => {
        endpoints::table
            .filter(endpoints::partner_id.eq($scope.partner.as_str()))
            .filter(endpoints::mode.eq($scope.mode.as_str()))
            .filter(endpoints::created_at.eq($created_at))
    };
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = endpoints, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite), treat_none_as_default_value = false)]
struct WebhookRow {
    partner_id: String,
    mode: String,
    url: String,
    sealed_secret: Vec<u8>,
    created_at: i64,
    state: String,
    failing_since_ms: Option<i64>,
    previous_sealed_secret: Option<Vec<u8>>,
    previous_secret_expires_at: Option<i64>,
}

/// The scope's endpoint, read on `c` (inside the caller's transaction, if
/// any).
pub(super) async fn read_endpoint(
    c: &mut Conn,
    scope: &Scope,
) -> Result<Option<WebhookEndpoint>, TxError> {
    let row: Option<WebhookRow> = endpoints::table
        .filter(endpoints::partner_id.eq(scope.partner.as_str()))
        .filter(endpoints::mode.eq(scope.mode.as_str()))
        .select(WebhookRow::as_select())
        .first(c)
        .await
        .optional()?;
    Ok(row.map(WebhookRow::into_domain).transpose()?)
}

impl WebhookRow {
    fn new(e: &WebhookEndpoint) -> Self {
        Self {
            partner_id: e.scope.partner.to_string(),
            mode: e.scope.mode.as_str().to_owned(),
            url: e.url.clone(),
            sealed_secret: e.sealed_secret.clone(),
            created_at: e.created_at,
            state: e.state.as_str().to_owned(),
            failing_since_ms: e.failing_since_ms,
            previous_sealed_secret: e.previous_secret.as_ref().map(|p| p.sealed.clone()),
            previous_secret_expires_at: e.previous_secret.as_ref().map(|p| p.expires_at),
        }
    }

    fn into_domain(self) -> StoreResult<WebhookEndpoint> {
        Ok(WebhookEndpoint {
            scope: scope(&self.partner_id, &self.mode)?,
            url: self.url,
            sealed_secret: self.sealed_secret,
            created_at: self.created_at,
            state: EndpointState::parse(&self.state)
                .ok_or_else(|| corrupt("endpoint state", &self.state))?,
            failing_since_ms: self.failing_since_ms,
            previous_secret: match (self.previous_sealed_secret, self.previous_secret_expires_at) {
                (Some(sealed), Some(expires_at)) => Some(PreviousSecret { sealed, expires_at }),
                _ => None,
            },
        })
    }
}

/// A delivery-log row (`created_at` in Unix milliseconds).
#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = attempts, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite), treat_none_as_default_value = false)]
pub(crate) struct AttemptRow {
    id: String,
    partner_id: String,
    mode: String,
    event_id: String,
    event_type: String,
    attempt: i32,
    created_at: i64,
    status_code: Option<i32>,
    latency_ms: i32,
    outcome: String,
    failure_reason: Option<String>,
    response_body: Option<String>,
}

impl AttemptRow {
    pub(crate) fn new(a: &DeliveryAttempt) -> Self {
        Self {
            id: a.id.clone(),
            partner_id: a.scope.partner.to_string(),
            mode: a.scope.mode.as_str().to_owned(),
            event_id: a.event_id.to_string(),
            event_type: a.event_type.as_str().to_owned(),
            attempt: int(a.attempt),
            created_at: a.at_ms,
            status_code: a.status_code.map(i32::from),
            latency_ms: int(a.latency_ms),
            outcome: a.outcome.as_str().to_owned(),
            failure_reason: a.failure_reason.map(|r| r.as_str().to_owned()),
            response_body: a.response_body.clone(),
        }
    }

    fn into_domain(self) -> StoreResult<DeliveryAttempt> {
        Ok(DeliveryAttempt {
            scope: scope(&self.partner_id, &self.mode)?,
            event_id: EventId::parse(&self.event_id)
                .map_err(|_| corrupt("attempt event id", &self.event_id))?,
            event_type: EventType::parse(&self.event_type)
                .ok_or_else(|| corrupt("attempt event type", &self.event_type))?,
            attempt: count(self.attempt),
            at_ms: self.created_at,
            status_code: self.status_code.and_then(|s| u16::try_from(s).ok()),
            latency_ms: count(self.latency_ms),
            outcome: AttemptOutcome::parse(&self.outcome)
                .ok_or_else(|| corrupt("attempt outcome", &self.outcome))?,
            failure_reason: match self.failure_reason {
                Some(r) => Some(
                    FailureReason::parse(&r).ok_or_else(|| corrupt("failure reason", &r))?,
                ),
                None => None,
            },
            response_body: self.response_body,
            id: self.id,
        })
    }
}

/// Writes delivery-log rows inside the caller's transaction.
pub(crate) async fn insert_attempts(conn: &mut Conn, rows: Vec<AttemptRow>) -> Result<(), TxError> {
    if !rows.is_empty() {
        let inserted: diesel::QueryResult<()> = insert_all!(conn, attempts::table, rows);
        inserted?;
    }
    Ok(())
}

#[async_trait]
impl WebhookStore for Store {
    async fn put_endpoint(&self, endpoint: &WebhookEndpoint) -> StoreResult<()> {
        let row = WebhookRow::new(endpoint);
                write_tx!(self, async |c: &mut Conn| {
            diesel::delete(
                endpoints::table
                    .filter(endpoints::partner_id.eq(&row.partner_id))
                    .filter(endpoints::mode.eq(&row.mode)),
            )
            .execute(c)
            .await?;
            diesel::insert_into(endpoints::table)
                .values(&row)
                .execute(c)
                .await?;
            Ok::<_, TxError>(())
        })
        .await?;
        Ok(())
    }

    async fn endpoint(&self, scope: &Scope) -> StoreResult<Option<WebhookEndpoint>> {
        let mut conn = self.conn().await?;
        Ok(read_endpoint(&mut conn, scope).await?)
    }

    async fn delete_endpoint(
        &self,
        scope: &Scope,
        at_ms: i64,
        ids: AttemptIds,
    ) -> StoreResult<bool> {
        let cancelled = |e: &Event| {
            AttemptRow::new(&DeliveryAttempt {
                id: ids.next(),
                scope: e.event.scope.clone(),
                event_id: e.event.id.clone(),
                event_type: e.event.event_type(),
                attempt: e.attempts.saturating_add(1),
                at_ms,
                status_code: None,
                latency_ms: 0,
                outcome: AttemptOutcome::Cancelled,
                failure_reason: None,
                response_body: None,
            })
        };
        let partner = scope.partner.as_str();
        let mode = scope.mode.as_str();
                let deleted = write_tx!(self, async |c: &mut Conn| {
            let n = diesel::delete(
                endpoints::table
                    .filter(endpoints::partner_id.eq(partner))
                    .filter(endpoints::mode.eq(mode)),
            )
            .execute(c)
            .await?;
            if n == 0 {
                return Ok(false);
            }
            let pending = events::table
                .filter(events::partner_id.eq(partner))
                .filter(events::mode.eq(mode))
                .filter(events::state.eq(DeliveryState::Pending.as_str()))
                .select(EventRow::as_select())
                .load::<EventRow>(c)
                .await?
                .into_iter()
                .map(EventRow::into_domain)
                .collect::<StoreResult<Vec<_>>>()?;
            if pending.is_empty() {
                return Ok(true);
            }
            let ids: Vec<String> = pending.iter().map(|e| e.event.id.to_string()).collect();
            diesel::update(events::table.filter(events::id.eq_any(&ids)))
                .set((
                    events::state.eq(DeliveryState::NoEndpoint.as_str()),
                    events::next_attempt_at_ms.eq(None::<i64>),
                    events::locked_until_ms.eq(None::<i64>),
                ))
                .execute(c)
                .await?;
            let rows = pending
                .iter()
                .map(cancelled)
                .collect();
            insert_attempts(c, rows).await?;
            Ok::<_, TxError>(true)
        })
        .await?;
        Ok(deleted)
    }

    async fn set_health(
        &self,
        scope: &Scope,
        created_at: i64,
        change: &HealthChange,
    ) -> StoreResult<bool> {
        let rows = super::shared::job_rows(&change.jobs)?;
                let n = write_tx!(self, async |c: &mut Conn| {
            let n = diesel::update(registered!(scope, created_at))
            .set((
                endpoints::state.eq(change.state.as_str()),
                endpoints::failing_since_ms.eq(change.failing_since_ms),
            ))
            .execute(c)
            .await?;
            if n > 0 {
                super::shared::insert_jobs(c, &rows).await?;
            }
            Ok::<_, TxError>(n)
        })
        .await?;
        Ok(n > 0)
    }

    async fn rotate_secret(
        &self,
        scope: &Scope,
        created_at: i64,
        rotation: SecretRotation,
    ) -> StoreResult<bool> {
        let SecretRotation {
            sealed_secret,
            previous,
        } = rotation;
        let (old, expires) = previous.map_or((None, None), |p| (Some(p.sealed), Some(p.expires_at)));
                let n = write_tx!(self, async |c: &mut Conn| {
            let n = diesel::update(registered!(scope, created_at))
            .set((
                endpoints::sealed_secret.eq(&sealed_secret),
                endpoints::previous_sealed_secret.eq(&old),
                endpoints::previous_secret_expires_at.eq(expires),
            ))
            .execute(c)
            .await?;
            Ok::<_, TxError>(n)
        })
        .await?;
        Ok(n > 0)
    }

    async fn attempts(
        &self,
        scope: &Scope,
        filter: &AttemptFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<DeliveryAttempt>> {
        let mut query = attempts::table
            .filter(attempts::partner_id.eq(scope.partner.as_str()))
            .filter(attempts::mode.eq(scope.mode.as_str()))
            .into_boxed();
        if let Some(event) = &filter.event_id {
            query = query.filter(attempts::event_id.eq(event.as_str().to_owned()));
        }
        if let Some(outcome) = filter.outcome {
            query = query.filter(attempts::outcome.eq(outcome.as_str()));
        }
        let mut conn = self.conn().await?;
        let rows = keyset_page!(query, attempts, page)
            .select(AttemptRow::as_select())
            .load(&mut *conn)
            .await
            .map_err(db)?;
        let items = rows
            .into_iter()
            .map(AttemptRow::into_domain)
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Page::from_rows(items, page.limit, |a| Cursor {
            created_at: a.at_ms,
            id: a.id.clone(),
        }))
    }

    async fn purge_attempts(&self, before_ms: i64) -> StoreResult<u64> {
                let n = write_tx!(self, async |c: &mut Conn| {
            let n = diesel::delete(attempts::table.filter(attempts::created_at.lt(before_ms)))
                .execute(c)
                .await?;
            Ok::<_, TxError>(n)
        })
        .await?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}
