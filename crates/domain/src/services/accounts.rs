//! Account data (`GET /groups/{id}/account`, 404 until enrollment) and the
//! operator's import of aggregate claims into the ledger. In test mode a
//! group without imported claims gets a deterministic generated ledger, so
//! partners can integrate against realistic numbers.

use std::sync::Arc;

use time::{Date, Month};

use crate::account::{ClaimsAggregate, Spend, check_row, spend, test_ledger};
use crate::error::FieldError;
use crate::ids::GroupId;
use crate::member::EnrollmentStatus;
use crate::mode::Mode;
use crate::ports::{Clock, now_secs};
use crate::scope::Scope;
use crate::services::ServiceError;
use crate::services::enrollments::enrolled_figures;
use crate::services::quotes::date_of;
use crate::store::{CensusStore, ClaimsStore, GroupStore, QuoteStore};

/// The account of an enrolled group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// Group.
    pub group_id: GroupId,
    /// When the figures were read, Unix seconds.
    pub as_of: i64,
    /// Monthly funding of the enrolled quote: total and its illustrative
    /// split (expected claims, stop-loss, care navigation, admin).
    pub funding: Funding,
    /// Employee and employer shares of the monthly premium.
    pub premium_employee_cents: i64,
    /// The employer's share.
    pub premium_employer_cents: i64,
    /// Spend of the latest ledger month.
    pub spend: Spend,
    /// Benchmark and savings per month, from the enrolled quote.
    pub savings: Savings,
    /// Members who elected coverage.
    pub enrolled_count: u32,
    /// Members who waived.
    pub waived_count: u32,
}

/// Monthly funding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Funding {
    /// Monthly premium.
    pub monthly_cents: i64,
    /// Expected claims.
    pub expected_claims_cents: i64,
    /// Stop-loss.
    pub stop_loss_cents: i64,
    /// Care navigation.
    pub care_navigation_cents: i64,
    /// Administration.
    pub admin_fees_cents: i64,
}

/// Savings against the prior cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Savings {
    /// Prior monthly cost (current coverage or the benchmark).
    pub prior_monthly_cents: i64,
    /// Prior minus the service's monthly cost.
    pub monthly_cents: i64,
    /// 12 × the monthly savings.
    pub annual_cents: i64,
    /// Percent of the prior cost.
    pub pct: i64,
}

/// The accounts service.
#[derive(Clone)]
pub struct Accounts {
    groups: Arc<dyn GroupStore>,
    census: Arc<dyn CensusStore>,
    quotes: Arc<dyn QuoteStore>,
    claims: Arc<dyn ClaimsStore>,
    clock: Arc<dyn Clock>,
}

/// The three months before `today`'s, oldest first (`YYYY-MM`).
fn last_months(today: Date) -> Vec<String> {
    let mut out = Vec::new();
    let (mut y, mut m) = (today.year(), today.month());
    for _ in 0..3 {
        if m == Month::January {
            y -= 1;
        }
        m = m.previous();
        out.push(format!("{y:04}-{:02}", u8::from(m)));
    }
    out.reverse();
    out
}

impl Accounts {
    /// The service over its ports.
    #[must_use]
    pub fn new(
        groups: Arc<dyn GroupStore>,
        census: Arc<dyn CensusStore>,
        quotes: Arc<dyn QuoteStore>,
        claims: Arc<dyn ClaimsStore>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            groups,
            census,
            quotes,
            claims,
            clock,
        }
    }

    /// The group's account.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] outside the scope and until enrollment.
    pub async fn account(
        &self,
        scope: &Scope,
        group_id: &GroupId,
    ) -> Result<Account, ServiceError> {
        self.groups.group(scope, group_id).await?;
        let enrollment = self
            .quotes
            .group_enrollment(scope, group_id)
            .await?
            .ok_or(ServiceError::NotFound)?;
        let stored = self.quotes.quote(scope, &enrollment.quote_id).await?;
        let quote = enrolled_figures(&stored)?;
        let members = self.census.census(scope, group_id).await?;
        let count = |s: EnrollmentStatus| {
            u32::try_from(members.iter().filter(|m| m.state.enrollment == s).count())
                .unwrap_or(u32::MAX)
        };
        let now = now_secs(self.clock.as_ref());
        let monthly = quote.monthly.total_cents;
        let split = &quote.funding_breakdown;
        let part = |p: u32| monthly.saturating_mul(i64::from(p)) / 100;
        let mut ledger = self.claims.claims(scope, group_id).await?;
        if ledger.is_empty() && scope.mode == Mode::Test {
            let covered = u32::try_from(quote.census.covered_lives).unwrap_or(u32::MAX);
            ledger = test_ledger(
                group_id,
                covered,
                part(split.expected_claims_pct),
                &last_months(date_of(now)),
            );
        }
        let employee = quote.employee_contribution.premium_cents;
        let prior = quote
            .comparison
            .prior_pepm_cents
            .saturating_mul(i64::try_from(quote.census.employees).unwrap_or(i64::MAX));
        let saved = quote.comparison.savings_monthly_cents;
        Ok(Account {
            group_id: group_id.clone(),
            as_of: now,
            funding: Funding {
                monthly_cents: monthly,
                expected_claims_cents: part(split.expected_claims_pct),
                stop_loss_cents: part(split.stop_loss_pct),
                care_navigation_cents: part(split.care_navigation_pct),
                admin_fees_cents: part(split.admin_fees_pct),
            },
            premium_employee_cents: employee,
            premium_employer_cents: monthly.saturating_sub(employee),
            spend: spend(&ledger),
            savings: Savings {
                prior_monthly_cents: prior,
                monthly_cents: saved,
                annual_cents: quote.comparison.savings_annual_cents,
                pct: quote.comparison.savings_pct,
            },
            enrolled_count: count(EnrollmentStatus::Enrolled),
            waived_count: count(EnrollmentStatus::Waived),
        })
    }

    /// Imports aggregate claims for a group found by id alone (the
    /// operator's `claims import`); every row is checked first and nothing
    /// is written when one is bad.
    ///
    /// # Errors
    /// [`ServiceError::Invalid`] naming each bad row's fields;
    /// [`ServiceError::NotFound`] for an unknown group.
    pub async fn import(
        &self,
        group_id: &GroupId,
        rows: &[ClaimsAggregate],
    ) -> Result<u32, ServiceError> {
        let errors: Vec<FieldError> = rows
            .iter()
            .enumerate()
            .flat_map(|(i, r)| check_row(i, r))
            .collect();
        if !errors.is_empty() {
            return Err(ServiceError::Invalid(errors));
        }
        let group = self.groups.find_group(group_id).await?;
        let scope = Scope::new(group.partner_id.clone(), group.mode);
        Ok(self.claims.import_claims(&scope, group_id, rows).await?)
    }
}

#[cfg(test)]
mod tests {
    use time::macros::date;

    use super::*;

    #[test]
    fn the_generated_ledger_covers_the_three_months_before_today() {
        assert_eq!(
            last_months(date!(2026 - 11 - 21)),
            ["2026-08", "2026-09", "2026-10"]
        );
        assert_eq!(
            last_months(date!(2027 - 02 - 01)),
            ["2026-11", "2026-12", "2027-01"]
        );
    }
}
