//! Quotes and enrollments (shared by both backends).

use async_trait::async_trait;
use diesel::{
    BoolExpressionMethods, ExpressionMethods, OptionalExtension, QueryDsl, SelectableHelper,
};
use diesel_async::RunQueryDsl;
use domain::document::QuoteDocument;
use domain::enrollment::Enrollment;
use domain::event::NewEvent;
use domain::group::{CompanyState, GroupStatus};
use domain::ids::{EnrollmentId, GroupId, QuoteId};
use domain::job::{JobState, NewJob};
use domain::portal::NewLink;
use domain::page::{Cursor, GroupQuery, Page};
use domain::quote::QuoteKind;
use domain::quote::{Quote, QuoteFilter, QuoteStatus};
use domain::scope::Scope;
use domain::services::quotes::group_pricing_digest;
use domain::store::{Conflict, Lead, QuoteStore, StoreError, StoreResult};

use super::census::member_row;
use super::groups::{advance, domain_held, load_group, lock_group};
use super::outbox::append_events;
use super::portal::put_link;
use super::shared::{insert_members, job_rows};
use super::{Conn, Store};
use crate::error::{TxError, db};
use crate::rows::{EnrollmentRow, GroupRow, JobRow, QuoteRow, stored};
use crate::schema::{enrollments, groups, jobs, quotes};

#[async_trait]
impl QuoteStore for Store {
    async fn insert_quote(&self, quote: &Quote, events: &[NewEvent]) -> StoreResult<()> {
        let row = QuoteRow::new(quote)?;
                outbox_tx!(self, async |c: &mut Conn| {
            advance(
                c,
                &quote.scope,
                quote.group_id.as_str(),
                GroupStatus::Quoted,
                None,
                quote.created_at,
            )
            .await?;
            diesel::insert_into(quotes::table)
                .values(&row)
                .execute(c)
                .await?;
            append_events(c, events, quote.created_at.saturating_mul(1000)).await?;
            Ok::<_, TxError>(())
        })
        .await?;
        Ok(())
    }

    async fn quote(&self, scope: &Scope, id: &QuoteId) -> StoreResult<Quote> {
        let mut conn = self.conn().await?;
        quotes::table
            .filter(quotes::id.eq(id.as_str()))
            .filter(quotes::partner_id.eq(scope.partner.as_str()))
            .filter(quotes::mode.eq(scope.mode.as_str()))
            .select(QuoteRow::as_select())
            .first(&mut *conn)
            .await
            .map_err(db)?
            .into_domain()
    }

    async fn find_quote(&self, id: &QuoteId) -> StoreResult<Quote> {
        let mut conn = self.conn().await?;
        quotes::table
            .find(id.as_str())
            .select(QuoteRow::as_select())
            .first(&mut *conn)
            .await
            .map_err(db)?
            .into_domain()
    }

    async fn update_quote(
        &self,
        scope: &Scope,
        id: &QuoteId,
        status: QuoteStatus,
        body: &QuoteDocument,
        events: &[NewEvent],
    ) -> StoreResult<()> {
        let body = stored(body.to_stored())?;
        let due = events
            .iter()
            .map(|e| e.created_at)
            .max()
            .unwrap_or(0)
            .saturating_mul(1000);
                // Only from a status that may move to `status`, checked by the
        // update itself: of two concurrent finalizations one applies.
        let from: Vec<&str> = status.predecessors().iter().map(|s| s.as_str()).collect();
        outbox_tx!(self, async |c: &mut Conn| {
            let target = quotes::table
                .filter(quotes::id.eq(id.as_str()))
                .filter(quotes::partner_id.eq(scope.partner.as_str()))
                .filter(quotes::mode.eq(scope.mode.as_str()));
            let n = diesel::update(target.filter(quotes::status.eq_any(&from)))
                .set((quotes::status.eq(status.as_str()), quotes::body.eq(&body)))
                .execute(c)
                .await?;
            if n == 0 {
                let exists: i64 = target.count().get_result(c).await?;
                return Err(TxError::Store(if exists == 0 {
                    StoreError::NotFound
                } else {
                    StoreError::Conflict(Conflict::QuoteStatusMoved)
                }));
            }
            append_events(c, events, due).await?;
            Ok::<_, TxError>(())
        })
        .await?;
        Ok(())
    }

    async fn insert_lead(&self, lead: &Lead) -> StoreResult<()> {
        let group = GroupRow::new(&lead.group)?;
        let quote = QuoteRow::new(&lead.quote)?;
        let scope = &lead.quote.scope;
        let now = lead.census.now;
        let mut job = JobRow::new(&lead.job)?;
        if let Some(until) = lead.claimed_until_ms {
            job.state = JobState::Running.as_str().to_owned();
            job.attempts = 1;
            job.locked_until_ms = Some(until);
            job.owner_id = self.owner.as_ref().map(ToString::to_string);
        }
                bulk_write_tx!(self, async |c: &mut Conn| {
            if domain_held(c, &group.mode, &group.domain, &group.id).await? {
                return Err(TxError::Store(StoreError::Conflict(Conflict::DomainTaken)));
            }
            diesel::insert_into(groups::table)
                .values(&group)
                .execute(c)
                .await?;
            let members = lead
                .census
                .rows
                .iter()
                .zip(&lead.census.fresh_ids)
                .enumerate()
                .map(|(i, (m, id))| member_row(scope, &group.id, id, m, i, now, now))
                .collect::<StoreResult<Vec<_>>>()?;
            insert_members(c, members).await?;
            diesel::insert_into(quotes::table)
                .values(&quote)
                .execute(c)
                .await?;
            diesel::insert_into(jobs::table)
                .values(&job)
                .execute(c)
                .await?;
            Ok::<_, TxError>(())
        })
        .await?;
        Ok(())
    }

    async fn lead_quote(
        &self,
        scope: &Scope,
        request_digest: &str,
        now: i64,
    ) -> StoreResult<Option<Quote>> {
        let mut conn = self.conn().await?;
        quotes::table
            .filter(quotes::partner_id.eq(scope.partner.as_str()))
            .filter(quotes::mode.eq(scope.mode.as_str()))
            .filter(quotes::request_digest.eq(request_digest))
            .filter(quotes::kind.eq(QuoteKind::PriceOnPlan.as_str()))
            .filter(quotes::expires_at.gt(now))
            .order((quotes::created_at.desc(), quotes::id.desc()))
            .select(QuoteRow::as_select())
            .first(&mut *conn)
            .await
            .optional()
            .map_err(db)?
            .map(QuoteRow::into_domain)
            .transpose()
    }

    async fn quotes<'a>(
        &self,
        scope: &Scope,
        list: GroupQuery<'a, QuoteFilter>,
    ) -> StoreResult<Page<Quote>> {
        let mut conn = self.conn().await?;
        load_group(&mut conn, scope, list.group.as_str()).await?;
        let mut query = quotes::table
            .filter(quotes::group_id.eq(list.group.as_str()))
            .filter(quotes::partner_id.eq(scope.partner.as_str()))
            .filter(quotes::mode.eq(scope.mode.as_str()))
            .into_boxed();
        if let Some(status) = list.filter.status {
            query = query.filter(quotes::status.eq(status.as_str()));
        }
        if let Some(kind) = list.filter.kind {
            query = query.filter(quotes::kind.eq(kind.as_str()));
        }
        let rows = keyset_page!(query, quotes, list.page)
        .select(QuoteRow::as_select())
        .load(&mut *conn)
        .await
        .map_err(db)?;
        let items = rows
            .into_iter()
            .map(QuoteRow::into_domain)
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Page::from_rows(items, list.page.limit, |q| Cursor {
            created_at: q.created_at,
            id: q.id.to_string(),
        }))
    }

    async fn insert_enrollment(
        &self,
        enrollment: &Enrollment,
        events: &[NewEvent],
        portal: Option<NewLink>,
        jobs: &[NewJob],
    ) -> StoreResult<()> {
        let row = EnrollmentRow::new(enrollment)?;
        let job_rows = job_rows(jobs)?;
                let scope = &enrollment.scope;
        outbox_tx!(self, async |c: &mut Conn| {
            let group = lock_group(c, scope, &row.group_id).await?;
            let quote_digest: Option<Option<String>> = quotes::table
                .filter(quotes::id.eq(&row.quote_id))
                .filter(quotes::group_id.eq(&row.group_id))
                .filter(quotes::partner_id.eq(scope.partner.as_str()))
                .filter(quotes::mode.eq(scope.mode.as_str()))
                .select(quotes::rating_digest)
                .first(c)
                .await
                .optional()?;
            let Some(quote_digest) = quote_digest else {
                return Err(TxError::Store(StoreError::NotFound));
            };
            let existing: Option<String> = enrollments::table
                .filter(enrollments::group_id.eq(&row.group_id))
                .select(enrollments::id)
                .first(c)
                .await
                .optional()?;
            if existing.is_some() {
                return Err(TxError::Store(StoreError::Conflict(
                    Conflict::AlreadyEnrolled,
                )));
            }
            // A census write that committed after the caller checked the
            // quote makes it stale; the lock makes this check final.
            if quote_digest != group_pricing_digest(&group) {
                return Err(TxError::Store(StoreError::Conflict(Conflict::QuoteStale)));
            }
            if domain_held(c, scope.mode.as_str(), &group.domain, &row.group_id).await? {
                return Err(TxError::Store(StoreError::Conflict(Conflict::DomainTaken)));
            }
            diesel::insert_into(enrollments::table)
                .values(&row)
                .execute(c)
                .await?;
            advance(
                c,
                scope,
                &row.group_id,
                GroupStatus::Enrolled,
                Some(CompanyState::Sandbox),
                enrollment.created_at,
            )
            .await?;
            if let Some(link) = &portal {
                put_link(c, scope, link, &job_rows).await?;
            }
            append_events(c, events, enrollment.created_at.saturating_mul(1000)).await?;
            Ok::<_, TxError>(())
        })
        .await?;
        Ok(())
    }

    async fn enrollment(&self, scope: &Scope, id: &EnrollmentId) -> StoreResult<Enrollment> {
        let mut conn = self.conn().await?;
        enrollments::table
            .filter(enrollments::id.eq(id.as_str()))
            .filter(enrollments::partner_id.eq(scope.partner.as_str()))
            .filter(enrollments::mode.eq(scope.mode.as_str()))
            .select(EnrollmentRow::as_select())
            .first(&mut *conn)
            .await
            .map_err(db)?
            .into_domain()
    }

    async fn group_enrollment(
        &self,
        scope: &Scope,
        group: &GroupId,
    ) -> StoreResult<Option<Enrollment>> {
        let mut conn = self.conn().await?;
        load_group(&mut conn, scope, group.as_str()).await?;
        enrollments::table
            .filter(enrollments::group_id.eq(group.as_str()))
            .filter(enrollments::partner_id.eq(scope.partner.as_str()))
            .filter(enrollments::mode.eq(scope.mode.as_str()))
            .select(EnrollmentRow::as_select())
            .first(&mut *conn)
            .await
            .optional()
            .map_err(db)?
            .map(EnrollmentRow::into_domain)
            .transpose()
    }
}
