//! `POST /price-on-plan`: the request as it arrives, and the two answer
//! forms of the specification, rendered from the stored document with
//! their keys exactly as the specification lists them — the snake_case
//! form (`plans`) for broker keys and the camelCase form (`versions`,
//! whose version objects mix camelCase and snake_case keys as listed) for
//! HR platform keys. Neither form is re-cased on the way out.

use domain::quote::{Quote, QuoteStatus};
use domain::services::price_on_plan::Document;
use pricing_core::plan::{IgnoredPlan, RateBasis};
use pricing_core::price_on_plan::{PlanSource, PlanStatus, PricingMethod, VersionResult};
use pricing_core::{MarketPlan, PartnerPlan, PriceOnPlan};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::casing::camel_to_snake;

mod camel;
use crate::wire::timestamp;
use camel::camel;

/// The body, with every key already in snake_case; `census` rows are
/// parsed one by one afterwards so each bad row is named. Its schema is
/// the document's `PriceOnPlanInput`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = PriceOnPlanInput)]
pub struct PriceOnPlanBody {
    /// The census: 1 to 10,000 employees with their dependents, as for
    /// `PUT /groups/{groupId}/census`. Kept as a lead group.
    #[serde(default)]
    #[schema(value_type = Vec<crate::wire::census::MemberInput>, required = true, min_items = 1, max_items = 10000)]
    pub census: Option<Vec<Value>>,
    /// The plan priced on (required for broker keys; an HR platform may
    /// leave it out and price on `market_plans`).
    #[serde(default)]
    #[schema(value_type = Option<PartnerPlan>)]
    pub plan: Option<PartnerPlan>,
    /// The company (generated from the census when left out).
    #[serde(default)]
    pub company: Option<CompanyIn>,
    /// Every plan the partner quoted, at most 500; with a platinum PPO
    /// among them the benchmark is priced by the engine.
    #[serde(default)]
    #[schema(max_items = 500)]
    pub market_plans: Option<Vec<MarketPlan>>,
    /// Keep only these answer fields (not part of the request a repeat is
    /// recognised by).
    #[serde(default)]
    pub fields: Option<Vec<String>>,
    /// Leave out these answer fields.
    #[serde(default)]
    pub exclude: Option<Vec<String>>,
}

/// `company`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = PriceOnPlanCompanyIn)]
pub struct CompanyIn {
    /// Name.
    #[serde(default)]
    pub name: Option<String>,
    /// Domain.
    #[serde(default)]
    pub domain: Option<String>,
    /// External id.
    #[serde(default)]
    pub external_id: Option<String>,
    /// ZIP.
    #[serde(default)]
    pub zip: Option<String>,
    /// State.
    #[serde(default)]
    pub state: Option<String>,
}

/// Top-level keys of the snake_case form.
pub const SNAKE_TOP: &[&str] = &[
    "quote_id",
    "group_id",
    "status",
    "reason",
    "plans",
    "assumptions",
    "ignored_plans",
];

/// Keys of a snake_case version object.
pub const SNAKE_VERSION: &[&str] = &[
    "id",
    "plan_name",
    "status",
    "reason",
    "your_plan_pmpm_cents",
    "service_pmpm_cents",
    "pmpm_cents",
    "monthly_premium_cents",
    "service_monthly_cents",
    "deductible_cents",
    "oop_max_cents",
    "max_extra_cents",
];

/// Top-level keys of the camelCase form.
pub const CAMEL_TOP: &[&str] = &[
    "ignoredPlans",
    "usedPlans",
    "status",
    "reason",
    "groupId",
    "quoteId",
    "pricingMethod",
    "versions",
    "time_machine",
    "assumptions",
];

/// Keys of a camelCase version object.
pub const CAMEL_VERSION: &[&str] = &[
    "id",
    "name",
    "description",
    "status",
    "pricing_method",
    "reason",
    "monthly",
    "annual",
    "pricedAgainst",
    "benchmarkPlan",
    "underlyingPlan",
    "benefits",
    "price_components",
    "worst_year",
    "base_plan",
    "member_oop_max",
    "benchmark_rank",
    "rate_basis",
    "monthly_rates_by_household",
    "new_member_rates_by_household",
    "all_max_year",
    "median_year",
    "time_machine",
    "hsa",
    "renewal",
    "member_experience",
    "fit_flags",
    "comparison",
    "broker_row",
    "summary",
    "joint",
    "serviceOnly",
];

/// Fields `fields` can never drop: what identifies the answer and says
/// whether it is usable.
const ALWAYS: &[&str] = &["quote_id", "group_id", "status", "reason", "id"];

/// Which answer form a caller gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Broker keys: `plans`.
    Snake,
    /// HR platform keys: `versions`.
    Camel,
}

impl Form {
    /// The container of the version objects.
    #[must_use]
    pub const fn container(self) -> &'static str {
        match self {
            Self::Snake => "plans",
            Self::Camel => "versions",
        }
    }

    fn known(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            Self::Snake => (SNAKE_TOP, SNAKE_VERSION),
            Self::Camel => (CAMEL_TOP, CAMEL_VERSION),
        }
    }
}

/// A name as compared: snake_case, whatever style it was sent in.
fn norm(name: &str) -> String {
    camel_to_snake(name)
}

/// The `fields[i]`/`exclude[i]` names that are no field of the form.
#[must_use]
pub fn unknown_names(form: Form, names: &[String]) -> Vec<usize> {
    let (top, version) = form.known();
    names
        .iter()
        .enumerate()
        .filter(|(_, n)| {
            let n = norm(n);
            !top.iter().chain(version).any(|k| norm(k) == n)
        })
        .map(|(i, _)| i)
        .collect()
}

/// Trims an answer: with `fields`, only the named keys (and those that
/// identify it) stay, at the top level and in each version object; then
/// `exclude` removes the named keys. Naming the version container keeps or
/// removes it whole.
pub fn trim(answer: &mut Value, form: Form, fields: Option<&[String]>, exclude: Option<&[String]>) {
    let keep: Option<Vec<String>> = fields.map(|f| f.iter().map(|n| norm(n)).collect());
    let drop: Vec<String> = exclude
        .unwrap_or_default()
        .iter()
        .map(|n| norm(n))
        .collect();
    let container = form.container();
    let named_container = keep
        .as_ref()
        .is_some_and(|k| k.iter().any(|n| n == container));
    let keeps = |k: &str, is_top: bool| {
        let n = norm(k);
        if drop.contains(&n) && !ALWAYS.contains(&n.as_str()) {
            return false;
        }
        match &keep {
            None => true,
            Some(list) => {
                ALWAYS.contains(&n.as_str())
                    || list.contains(&n)
                    // Version fields are named without the container.
                    || (is_top && k == container)
                    || (!is_top && named_container)
            }
        }
    };
    let Some(top) = answer.as_object_mut() else {
        return;
    };
    top.retain(|k, _| keeps(k, true));
    if let Some(Value::Array(versions)) = top.get_mut(container) {
        for v in versions.iter_mut().filter_map(Value::as_object_mut) {
            v.retain(|k, _| keeps(k, false));
        }
    }
}

/// The status a stored quote answers with: the quote's own (underwriting
/// may have finalized it since it was priced).
fn quote_status(q: &Quote) -> &'static str {
    q.status.as_str()
}

/// A version's status as answered: `in_review` follows its quote's
/// finalization.
fn version_status(q: &Quote, v: &VersionResult) -> &'static str {
    match (v.status, q.status) {
        (PlanStatus::InReview, QuoteStatus::Ready) => "ready",
        (PlanStatus::Ready, _) => "ready",
        (PlanStatus::InReview, _) => "in_review",
        (PlanStatus::Unavailable, _) => "unavailable",
    }
}

fn source(s: PlanSource) -> &'static str {
    match s {
        PlanSource::PartnerPlan => "partner_plan",
        PlanSource::MarketPlans => "market_plans",
        PlanSource::RateCard => "rate_card",
    }
}

fn method(m: PricingMethod) -> &'static str {
    match m {
        PricingMethod::Engine => "engine",
        PricingMethod::CostPlus => "cost_plus",
    }
}

fn basis(b: RateBasis) -> &'static str {
    match b {
        RateBasis::MemberRates => "member_rates",
        RateBasis::Pmpm => "pmpm",
        RateBasis::MonthlyRates => "monthly_rates",
        RateBasis::RateCard => "rate_card",
    }
}

fn ignored(plans: &[IgnoredPlan]) -> Value {
    Value::Array(
        plans
            .iter()
            .map(|p| {
                json!({
                    "index": p.index,
                    "reason": p.reason,
                    "carrier": p.carrier,
                    "planName": p.plan_name,
                })
            })
            .collect(),
    )
}

/// The answer of a finished quote in `form`.
#[must_use]
pub fn answer(form: Form, q: &Quote, doc: &Document) -> Value {
    let Some(a) = &doc.answer else {
        return Value::Null;
    };
    match form {
        Form::Snake => snake(q, a),
        Form::Camel => camel(q, doc, a),
    }
}

/// The snake_case form.
fn snake(q: &Quote, a: &PriceOnPlan) -> Value {
    let base = a.base_plan.as_ref();
    let plans: Vec<Value> = a
        .versions
        .iter()
        .map(|v| {
            let f = v.priced.as_ref().map(|p| &p.figures);
            json!({
                "id": v.id,
                "plan_name": v.name,
                "status": version_status(q, v),
                "reason": v.reason,
                "your_plan_pmpm_cents": f.map(|f| f.your_plan_pmpm_cents.get()),
                "service_pmpm_cents": f.map(|f| f.service_pmpm_cents.get()),
                "pmpm_cents": f.map(|f| f.joint_pmpm_cents.get()),
                "monthly_premium_cents": f.map(|f| f.joint_monthly_cents.get()),
                "service_monthly_cents": f.map(|f| f.service_monthly_cents.get()),
                "deductible_cents": base.map(|b| b.plan.deductible_individual_cents),
                "oop_max_cents": v.member_oop_max.individual_cents.get(),
                "max_extra_cents": f.map(|f| f.all_max_year.modeled_extra_cents.get()),
            })
        })
        .collect();
    json!({
        "quote_id": q.id.as_str(),
        "group_id": q.group_id.as_str(),
        "status": quote_status(q),
        "reason": a.reason,
        "plans": plans,
        "assumptions": a.assumptions,
        "ignored_plans": ignored(&a.ignored_plans),
    })
}

fn time_machine(doc: &Document, a: &PriceOnPlan) -> Value {
    json!({
        "simulated_plan_years": a.simulated_plan_years,
        "census_members": a.census_members,
        "generated_at": doc.generated_at.map(timestamp),
    })
}

fn used_plans(u: &pricing_core::price_on_plan::UsedPlans) -> Value {
    json!({
        "sent": u.sent,
        "used": u.used,
        "baseCandidates": u.base_candidates,
        "benchmarkCandidates": u.benchmark_candidates,
    })
}

/// The `pricing` answer (202, or a read of a quote still pricing).
#[must_use]
pub fn pending(form: Form, q: &Quote, doc: &Document, now: i64) -> Value {
    let p = &doc.preview;
    let retry = doc.retry_after_secs(now);
    let message = format!(
        "Still pricing {} census members over {} simulated plan years; send the same body again in {retry} s.",
        p.census_members, p.simulated_plan_years
    );
    match form {
        Form::Snake => json!({
            "status": "pricing",
            "quote_id": q.id.as_str(),
            "group_id": q.group_id.as_str(),
            "retry_after_seconds": retry,
            "message": message,
            "ignored_plans": ignored(&p.ignored_plans),
        }),
        Form::Camel => json!({
            "quoteId": q.id.as_str(),
            "groupId": q.group_id.as_str(),
            "status": "pricing",
            "retryAfterSeconds": retry,
            "baseFromMarket": p.base_from_market,
            "note": message,
            "ignoredPlans": ignored(&p.ignored_plans),
            "usedPlans": used_plans(&p.used_plans),
            "estimatedReadyAt": timestamp(doc.estimated_ready_at.max(now)),
            "waitingOn": "simulation",
            "waitingOnNote": format!(
                "The median year and the layer price come from {} simulated plan years of the census's claims.",
                p.simulated_plan_years
            ),
            "sweep": {
                "step": "simulation",
                "planCount": p.used_plans.sent,
            },
        }),
    }
}
