//! The employer portal's reads of an enrollment's onboarding: the
//! dashboard's overview (with the quote), the roster, and the addresses
//! the employee invitations go to.

use super::{Onboarding, OnboardingView};
use crate::census::StoredMember;
use crate::ids::{EnrollmentId, GroupId};
use crate::page::{GroupQuery, PageRequest};
use crate::quote::Quote;
use crate::scope::Scope;
use crate::services::ServiceError;

impl Onboarding {
    /// An enrollment's onboarding with the quote it was made from (the
    /// employer portal's dashboard).
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] outside the scope.
    pub async fn overview(
        &self,
        scope: &Scope,
        id: &EnrollmentId,
    ) -> Result<(OnboardingView, Quote), ServiceError> {
        let view = self.view(scope, id).await?;
        let quote = self
            .ports
            .quotes
            .quote(scope, &view.enrollment.quote_id)
            .await?;
        Ok((view, quote))
    }

    /// The enrollment's roster: the group's census members, in census
    /// order (at most [`crate::page::MAX_LIMIT`]), with the
    /// onboarding view (whether invitations were sent).
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] outside the scope.
    pub async fn roster(
        &self,
        scope: &Scope,
        id: &EnrollmentId,
    ) -> Result<(OnboardingView, Vec<StoredMember>), ServiceError> {
        let view = self.view(scope, id).await?;
        let page = self
            .ports
            .census
            .census_page(
                scope,
                GroupQuery::all(
                    &view.enrollment.group_id,
                    &PageRequest::first(crate::page::MAX_LIMIT),
                ),
            )
            .await?;
        Ok((view, page.items))
    }

    /// The email addresses of the group's census members, in census
    /// order, each once.
    pub(super) async fn member_addresses(
        &self,
        scope: &Scope,
        group: &GroupId,
    ) -> Result<Vec<String>, ServiceError> {
        let mut addresses: Vec<String> = Vec::new();
        let mut page = PageRequest::first(crate::page::MAX_LIMIT);
        loop {
            let members = self
                .ports
                .census
                .census_page(scope, GroupQuery::all(group, &page))
                .await?;
            for m in &members.items {
                if let Some(email) = m.member.email.as_deref().map(str::trim)
                    && !email.is_empty()
                    && !addresses.iter().any(|a| a == email)
                {
                    addresses.push(email.to_owned());
                }
            }
            match members.next {
                Some(next) => page.after = Some(next),
                None => return Ok(addresses),
            }
        }
    }
}
