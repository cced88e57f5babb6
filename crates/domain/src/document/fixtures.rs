//! Documents as the previous version stored them (bare camelCase or
//! snake_case, no envelope), for the tests of this crate and of the store
//! (feature `fixtures`).

use super::{EnrollmentDocument, Legacy, MarketQuote, QuoteDocument, from_stored};
use crate::ids::QuoteId;
use crate::services::price_on_plan::{Document, PricingPayload};

/// A market quote's body exactly as the previous version stored it.
pub const LEGACY_MARKET_QUOTE: &str = r#"{"annual":{"totalCents":2777472},"assumptions":["Preliminary market-rate figures; final pricing is confirmed in underwriting."],"benchmark":{"carrier":"Local market","metalTier":"Platinum","monthlyCents":301234,"network":"PPO","pepmCents":150617,"planName":"Platinum PPO (IL-01)"},"census":{"coveredLives":3,"employees":2,"tiers":{"employeeChildren":1,"employeeOnly":1,"employeeSpouse":0,"family":0}},"comparison":{"basis":"current_coverage","priorPepmCents":156000,"savingsAnnualCents":966528,"savingsMonthlyCents":80544,"savingsPct":26},"employeeContribution":{"employerContributionPct":80,"premiumCents":46291},"fundingBreakdown":{"adminFeesPct":7,"careNavigationPct":8,"expectedClaimsPct":70,"note":"Illustrative split.","stopLossPct":15},"monthly":{"byTier":{"employeeChildren":{"avgCents":151146,"count":1},"employeeOnly":{"avgCents":80310,"count":1},"employeeSpouse":{"avgCents":0,"count":0},"family":{"avgCents":0,"count":0}},"pepmCents":115728,"totalCents":231456},"plan":{"id":"diamond","name":"Diamond"},"planYearStartDate":"2026-12-01","pricing":{"source":"rate-card 2026.1 default","updatedAt":"2026-11-21T00:00:00Z"},"pricingBasis":"market_rates"}"#;

/// A hosted enrollment's body as the previous version stored it.
pub const LEGACY_ENROLLMENT: &str = r#"{"companyDomain":"acme-mfg.com","employerPortal":{"inviteSuppressed":true,"provisioned":true,"setPasswordUrl":"https://portal.service.example/set-password?token=5f0c","signinUrl":"https://portal.service.example/signin?company=acme-mfg.com"},"nextSteps":["The signatory sets a password and signs in to the employer portal."],"onboarding":{"blockingRemaining":4,"percentComplete":0},"startDate":"2026-12-01","status":"onboarding"}"#;

/// Event payloads as the previous version stored them, by type.
pub const LEGACY_EVENTS: [(&str, &str); 6] = [
    ("ping", "{}"),
    (
        "quote.finalized",
        r#"{"groupId":"grp_8c1e4a2f9b3d","quoteId":"qt_1a2b3c4d5e6f","status":"ready"}"#,
    ),
    (
        "enrollment.created",
        r#"{"companyDomain":"acme-mfg.com","enrollmentId":"enr_0b7d2c9e4a11","groupId":"grp_8c1e4a2f9b3d","onboardingMode":"hosted","quoteId":"qt_1a2b3c4d5e6f","startDate":"2026-12-01"}"#,
    ),
    (
        "group.state_changed",
        r#"{"companyDomain":"acme-mfg.com","groupId":"grp_8c1e4a2f9b3d","previousState":"sandbox","state":"prod"}"#,
    ),
    (
        "census.processed",
        r#"{"accepted":2,"errorCount":1,"groupId":"grp_8c1e4a2f9b3d","memberCount":2,"received":3}"#,
    ),
    (
        "deductions.changed",
        r#"{"groupId":"grp_8c1e4a2f9b3d","members":[{"effectiveDate":"2027-01-01","election":"enrolled","employeeMonthlyCents":16062,"employerMonthlyCents":64248,"externalId":"E1","memberId":"mem_0a1b2c3d4e5f","tier":"employeeOnly"},{"effectiveDate":null,"election":"waived","employeeMonthlyCents":0,"employerMonthlyCents":0,"externalId":"E2","memberId":"mem_0a1b2c3d4e60","tier":null}]}"#,
    ),
];

/// A market-comparison job payload as the previous version stored it.
pub const LEGACY_COMPARISON_JOB: &str = r#"{"received":3,"accepted":2,"errorCount":1}"#;

/// A price-on-plan document as the previous version stored it: the bare
/// serialization of its type, snake_case.
#[must_use]
pub fn legacy_price_on_plan_document() -> String {
    serde_json::to_string(&price_on_plan_document()).unwrap_or_default()
}

/// A pending price-on-plan document.
#[must_use]
pub fn price_on_plan_document() -> Document {
    Document {
        plan_year_start: "2026-12-01".to_owned(),
        preview: pricing_core::price_on_plan::Preview {
            pricing_method: pricing_core::price_on_plan::PricingMethod::CostPlus,
            base_from_market: false,
            used_plans: pricing_core::price_on_plan::UsedPlans {
                sent: 1,
                used: 1,
                base_candidates: 0,
                benchmark_candidates: 0,
            },
            ignored_plans: Vec::new(),
            census_members: 2,
            employees: 2,
            simulated_plan_years: 2_000,
            simulates: true,
        },
        estimated_ready_at: 1_800_000_001,
        generated_at: None,
        answer: None,
    }
}

/// A price-on-plan job payload as the previous version stored it.
#[must_use]
pub fn legacy_pricing_payload(quote_id: &QuoteId) -> String {
    serde_json::to_string(&PricingPayload {
        quote_id: quote_id.clone(),
        plan_year_start: "2026-12-01".to_owned(),
        require_dob: true,
        company_zip: Some("60601".to_owned()),
        census: Vec::new(),
        plan: None,
        market_plans: Vec::new(),
        assumptions: vec!["Plan year starts 2026-12-01.".to_owned()],
    })
    .unwrap_or_default()
}

/// A market quote's figures (the legacy fixture, read).
///
/// # Panics
/// Never: the fixture reads.
#[must_use]
pub fn market() -> MarketQuote {
    from_stored(LEGACY_MARKET_QUOTE, Legacy::Camel).unwrap_or_else(|e| panic!("{e}"))
}

/// A market quote's document.
#[must_use]
pub fn market_document() -> QuoteDocument {
    QuoteDocument::Market(Box::new(market()))
}

/// An enrollment's document (the legacy fixture, read).
///
/// # Panics
/// Never: the fixture reads.
#[must_use]
pub fn enrollment() -> EnrollmentDocument {
    EnrollmentDocument::from_stored(LEGACY_ENROLLMENT).unwrap_or_else(|e| panic!("{e}"))
}
