//! Onboarding checklists (shared by both backends): a change is one
//! transaction under the group's lock — the checklist at its next
//! revision, the go-live, the jobs and the events.

use async_trait::async_trait;
use diesel::{ExpressionMethods, OptionalExtension, QueryDsl, SelectableHelper};
use diesel_async::RunQueryDsl;
use domain::enrollment::Enrollment;
use domain::group::{CompanyState, GroupStatus};
use domain::ids::GroupId;
use domain::scope::Scope;
use domain::store::{Conflict, OnboardingStore, OnboardingWrite, StoreError, StoreResult};

use super::groups::{advance, lock_group};
use super::outbox::append_events;
use super::shared::{insert_jobs, job_rows};
use super::{Conn, Store};
use crate::error::{TxError, db};
use crate::rows::{EnrollmentRow, stored};
use crate::schema::enrollments;

#[async_trait]
impl OnboardingStore for Store {
    async fn save_onboarding(&self, scope: &Scope, write: &OnboardingWrite) -> StoreResult<()> {
        let text = stored(write.checklist.to_stored())?;
        let job_rows = job_rows(&write.jobs)?;
                outbox_tx!(self, async |c: &mut Conn| {
            lock_group(c, scope, write.group_id.as_str()).await?;
            let mine = enrollments::table
                .filter(enrollments::id.eq(write.enrollment_id.as_str()))
                .filter(enrollments::group_id.eq(write.group_id.as_str()))
                .filter(enrollments::partner_id.eq(scope.partner.as_str()))
                .filter(enrollments::mode.eq(scope.mode.as_str()));
            let updated = diesel::update(
                mine.filter(enrollments::onboarding_revision.eq(write.revision)),
            )
            .set((
                enrollments::onboarding.eq(&text),
                enrollments::onboarding_revision.eq(write.revision.saturating_add(1)),
            ))
            .execute(c)
            .await?;
            if updated == 0 {
                let exists: Option<String> = mine
                    .select(enrollments::id)
                    .first(c)
                    .await
                    .optional()?;
                return Err(TxError::Store(match exists {
                    Some(_) => StoreError::Conflict(Conflict::OnboardingMoved),
                    None => StoreError::NotFound,
                }));
            }
            if write.go_live {
                advance(
                    c,
                    scope,
                    write.group_id.as_str(),
                    GroupStatus::Active,
                    Some(CompanyState::Prod),
                    write.now,
                )
                .await?;
            }
            insert_jobs(c, &job_rows).await?;
            append_events(c, &write.events, write.now.saturating_mul(1000)).await?;
            Ok::<_, TxError>(())
        })
        .await?;
        Ok(())
    }

    async fn find_enrollment(&self, group: &GroupId) -> StoreResult<Enrollment> {
        let mut conn = self.conn().await?;
        enrollments::table
            .filter(enrollments::group_id.eq(group.as_str()))
            .select(EnrollmentRow::as_select())
            .first(&mut *conn)
            .await
            .map_err(db)?
            .into_domain()
    }
}
