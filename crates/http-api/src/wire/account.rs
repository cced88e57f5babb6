//! Account data: `GET /groups/{groupId}/account` (contract section 3,
//! Account): aggregate and de-identified.

use serde::Serialize;
use utoipa::ToSchema;

use domain::services::accounts::Account;

use crate::wire::timestamp;

/// Monthly funding of the enrolled plan and its illustrative split, in
/// cents (named apart from the quote's percentage split, `FundingOut`, so
/// the document keeps both).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = AccountFundingOut)]
pub struct FundingOut {
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

/// Who pays the monthly premium.
#[derive(Debug, Serialize, ToSchema)]
pub struct PremiumOut {
    /// Employees together.
    pub employee_cents: i64,
    /// The employer.
    pub employer_cents: i64,
}

/// One spend category.
#[derive(Debug, Serialize, ToSchema)]
pub struct CategoryOut {
    /// `primary_care`, `specialist`, `pharmacy`, `outpatient`, `inpatient`,
    /// `emergency` or `mental_health`.
    pub category: String,
    /// Claims paid in the period.
    pub amount_cents: i64,
}

/// Spend of the period.
#[derive(Debug, Serialize, ToSchema)]
pub struct SpendOut {
    /// `true` when any category draws on fewer than 11 members: then no
    /// category is shown.
    pub suppressed: bool,
    /// All categories together.
    pub total_cents: i64,
    /// By category; empty when suppressed.
    pub categories: Vec<CategoryOut>,
}

/// Savings against the prior cost.
#[derive(Debug, Serialize, ToSchema)]
pub struct SavingsOut {
    /// Prior monthly cost (current coverage, else the benchmark).
    pub prior_monthly_cents: i64,
    /// Monthly savings.
    pub monthly_cents: i64,
    /// Annual savings.
    pub annual_cents: i64,
    /// Percent of the prior cost.
    pub pct: i64,
}

/// A group's account.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "group_id": "grp_8c1e4a2f9b3d", "as_of": "2026-11-21T13:14:00Z", "period": "2026-10",
    "funding": {"monthly_cents": 2314560, "expected_claims_cents": 1620192, "stop_loss_cents": 347184,
                "care_navigation_cents": 185164, "admin_fees_cents": 162019},
    "premium_breakdown": {"employee_cents": 462912, "employer_cents": 1851648},
    "spend": {"suppressed": true, "total_cents": 1587300, "categories": []},
    "savings": {"prior_monthly_cents": 3120000, "monthly_cents": 805440, "annual_cents": 9665280, "pct": 26},
    "enrolled_count": 18, "waived_count": 2
}))]
pub struct AccountOut {
    /// Group.
    pub group_id: String,
    /// When the figures were read.
    #[schema(format = DateTime)]
    pub as_of: String,
    /// The spend's month (`YYYY-MM`), null before any claims.
    #[schema(required = true)]
    pub period: Option<String>,
    /// Funding.
    pub funding: FundingOut,
    /// Premium by payer.
    pub premium_breakdown: PremiumOut,
    /// Spend by category (small cells suppressed).
    pub spend: SpendOut,
    /// Savings.
    pub savings: SavingsOut,
    /// Members who elected coverage.
    pub enrolled_count: u32,
    /// Members who waived.
    pub waived_count: u32,
}

impl From<&Account> for AccountOut {
    fn from(a: &Account) -> Self {
        let f = &a.funding;
        let s = &a.savings;
        Self {
            group_id: a.group_id.as_str().to_owned(),
            as_of: timestamp(a.as_of),
            period: a.spend.period.clone(),
            funding: FundingOut {
                monthly_cents: f.monthly_cents,
                expected_claims_cents: f.expected_claims_cents,
                stop_loss_cents: f.stop_loss_cents,
                care_navigation_cents: f.care_navigation_cents,
                admin_fees_cents: f.admin_fees_cents,
            },
            premium_breakdown: PremiumOut {
                employee_cents: a.premium_employee_cents,
                employer_cents: a.premium_employer_cents,
            },
            spend: SpendOut {
                suppressed: a.spend.suppressed,
                total_cents: a.spend.total_cents,
                categories: a
                    .spend
                    .categories
                    .iter()
                    .map(|(category, amount_cents)| CategoryOut {
                        category: category.clone(),
                        amount_cents: *amount_cents,
                    })
                    .collect(),
            },
            savings: SavingsOut {
                prior_monthly_cents: s.prior_monthly_cents,
                monthly_cents: s.monthly_cents,
                annual_cents: s.annual_cents,
                pct: s.pct,
            },
            enrolled_count: a.enrolled_count,
            waived_count: a.waived_count,
        }
    }
}
