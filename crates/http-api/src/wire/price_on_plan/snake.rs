//! The snake_case answer form of price-on-plan (broker keys): `plans`,
//! as the specification lists it. The types render the answer and are the
//! document's schemas, so the two cannot differ.

use serde::Serialize;
use utoipa::ToSchema;

use domain::quote::{Quote, QuoteStatus};
use pricing_core::PriceOnPlan;
use pricing_core::rate_card::VersionId;

use domain::services::price_on_plan::Document;

use super::{IgnoredPlanOut, ignored, version_status};

/// The broker's answer (`plans`). `fields` and `exclude` may leave out any
/// key but `quote_id`, `group_id`, `status` and `reason` (and each plan's
/// `id` and `status`), so only those are required.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = PriceOnPlanPlans)]
pub struct PlansAnswer {
    /// The quote (`GET /quotes/{id}` reads it back).
    #[schema(example = "qt_0193a1b2c3d4")]
    pub quote_id: String,
    /// The lead group kept with the census.
    #[schema(example = "grp_0193a1b2c3d5")]
    pub group_id: String,
    /// The quote's status.
    #[schema(value_type = crate::wire::enums::PricedStatus)]
    pub status: &'static str,
    /// Why nothing could be built (`unavailable`); null otherwise.
    #[schema(required = true)]
    pub reason: Option<String>,
    /// `diamond` and `value` on the plan.
    #[schema(required = false)]
    pub plans: Vec<PlanOut>,
    /// What the figures assume.
    #[schema(required = false)]
    pub assumptions: Vec<String>,
    /// The market plans that could not be used.
    #[schema(required = false)]
    pub ignored_plans: Vec<IgnoredPlanOut>,
}

/// One version on the broker's plan; the figures are null when the
/// version is `unavailable`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = PriceOnPlanPlan)]
pub struct PlanOut {
    /// `diamond` or `value`.
    #[schema(value_type = crate::wire::enums::VersionId)]
    pub id: VersionId,
    /// Display name.
    #[schema(required = false, example = "Diamond")]
    pub plan_name: String,
    /// The version's status.
    #[schema(value_type = crate::wire::enums::PricedStatus)]
    pub status: &'static str,
    /// Why the version is unavailable; null otherwise.
    #[schema(required = true)]
    pub reason: Option<String>,
    /// The broker's plan, per member per month.
    #[schema(required = false)]
    pub your_plan_pmpm_cents: Option<i64>,
    /// The service, per member per month.
    #[schema(required = false)]
    pub service_pmpm_cents: Option<i64>,
    /// Both, per member per month.
    #[schema(required = false)]
    pub pmpm_cents: Option<i64>,
    /// The group's monthly premium, plan and service.
    #[schema(required = false)]
    pub monthly_premium_cents: Option<i64>,
    /// The service's monthly cost.
    #[schema(required = false)]
    pub service_monthly_cents: Option<i64>,
    /// The base plan's individual deductible.
    #[schema(required = false)]
    pub deductible_cents: Option<i64>,
    /// The version's individual out-of-pocket maximum.
    #[schema(required = false)]
    pub oop_max_cents: i64,
    /// The modeled extra cost of the worst year.
    #[schema(required = false)]
    pub max_extra_cents: Option<i64>,
}

/// The broker's pending answer (202, or a read while pricing).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = PriceOnPlanPlansPending)]
pub struct PlansPending {
    /// Always `pricing`.
    #[schema(value_type = crate::wire::enums::PricingStatus)]
    pub status: &'static str,
    /// The pending quote (poll `GET /quotes/{id}`).
    pub quote_id: String,
    /// The lead group.
    pub group_id: String,
    /// When to ask again (also `Retry-After`).
    pub retry_after_seconds: u32,
    /// What is being priced.
    pub message: String,
    /// The market plans that could not be used.
    pub ignored_plans: Vec<IgnoredPlanOut>,
}

/// The snake_case form of the answer `a` of the quote `(quote_id,
/// group_id)`, whose status is `status` (underwriting may have finalized it
/// since it was priced).
pub(super) fn plans(
    (quote_id, group_id): (&str, &str),
    status: QuoteStatus,
    a: &PriceOnPlan,
) -> PlansAnswer {
    let base = a.base_plan.as_ref();
    PlansAnswer {
        quote_id: quote_id.to_owned(),
        group_id: group_id.to_owned(),
        status: status.as_str(),
        reason: a.reason.clone(),
        plans: a
            .versions
            .iter()
            .map(|v| {
                let f = v.priced.as_ref().map(|p| &p.figures);
                PlanOut {
                    id: v.id,
                    plan_name: v.name.clone(),
                    status: version_status(status, v),
                    reason: v.reason.clone(),
                    your_plan_pmpm_cents: f.map(|f| f.your_plan_pmpm_cents.get()),
                    service_pmpm_cents: f.map(|f| f.service_pmpm_cents.get()),
                    pmpm_cents: f.map(|f| f.joint_pmpm_cents.get()),
                    monthly_premium_cents: f.map(|f| f.joint_monthly_cents.get()),
                    service_monthly_cents: f.map(|f| f.service_monthly_cents.get()),
                    deductible_cents: base.map(|b| b.plan.deductible_individual_cents),
                    oop_max_cents: v.member_oop_max.individual_cents.get(),
                    max_extra_cents: f.map(|f| f.all_max_year.modeled_extra_cents.get()),
                }
            })
            .collect(),
        assumptions: a.assumptions.clone(),
        ignored_plans: ignored(&a.ignored_plans),
    }
}

/// The snake_case form of a quote still pricing.
pub(super) fn pending(q: &Quote, doc: &Document, retry: u32, message: String) -> PlansPending {
    PlansPending {
        status: "pricing",
        quote_id: q.id.as_str().to_owned(),
        group_id: q.group_id.as_str().to_owned(),
        retry_after_seconds: retry,
        message,
        ignored_plans: ignored(&doc.preview.ignored_plans),
    }
}
