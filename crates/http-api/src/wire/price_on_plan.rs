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
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::casing::camel_to_snake;
use crate::wire::timestamp;

pub mod camel;
pub mod snake;
pub mod versions;

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

/// A version's status as answered: `in_review` follows its quote's
/// finalization (`quote` is the quote's status).
fn version_status(quote: QuoteStatus, v: &VersionResult) -> &'static str {
    match (v.status, quote) {
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

/// A market plan that could not be used (its keys are the same in both
/// forms).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = PriceOnPlanIgnoredPlan)]
pub struct IgnoredPlanOut {
    /// Index in `market_plans`.
    pub index: usize,
    /// Why.
    pub reason: String,
    /// Carrier as sent; null when not sent.
    #[schema(required = true)]
    pub carrier: Option<String>,
    /// Plan name as sent; null when not sent.
    #[serde(rename = "planName")]
    #[schema(required = true)]
    pub plan_name: Option<String>,
}

/// How the market plans were used.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = PriceOnPlanUsedPlans)]
pub struct UsedPlansOut {
    /// Sent.
    pub sent: usize,
    /// Used as a base or benchmark candidate.
    pub used: usize,
    /// Base candidates.
    pub base_candidates: usize,
    /// Benchmark candidates.
    pub benchmark_candidates: usize,
}

/// `time_machine`: the simulation behind the figures (inline in the HR
/// platform's form, whose keys are never re-cased).
#[derive(Debug, Serialize, ToSchema)]
pub struct TimeMachineOut {
    /// Simulated plan years.
    pub simulated_plan_years: u32,
    /// Census members simulated.
    pub census_members: usize,
    /// When the figures were computed; null before.
    #[schema(required = true, format = DateTime)]
    pub generated_at: Option<String>,
}

fn ignored(plans: &[IgnoredPlan]) -> Vec<IgnoredPlanOut> {
    plans
        .iter()
        .map(|p| IgnoredPlanOut {
            index: p.index,
            reason: p.reason.clone(),
            carrier: p.carrier.clone(),
            plan_name: p.plan_name.clone(),
        })
        .collect()
}

fn time_machine(doc: &Document, a: &PriceOnPlan) -> TimeMachineOut {
    TimeMachineOut {
        simulated_plan_years: a.simulated_plan_years,
        census_members: a.census_members,
        generated_at: doc.generated_at.map(timestamp),
    }
}

fn used_plans(u: &pricing_core::price_on_plan::UsedPlans) -> UsedPlansOut {
    UsedPlansOut {
        sent: u.sent,
        used: u.used,
        base_candidates: u.base_candidates,
        benchmark_candidates: u.benchmark_candidates,
    }
}

/// The answer of a finished quote in `form`.
#[must_use]
pub fn answer(form: Form, q: &Quote, doc: &Document) -> Value {
    let Some(a) = &doc.answer else {
        return Value::Null;
    };
    match form {
        Form::Snake => rendered(&snake::plans(
            (q.id.as_str(), q.group_id.as_str()),
            q.status,
            a,
        )),
        Form::Camel => rendered(&camel::versions(q, doc, a)),
    }
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
        Form::Snake => rendered(&snake::pending(q, doc, retry, message)),
        Form::Camel => rendered(&camel::pending(q, doc, now, retry, message)),
    }
}

/// The broker's form of an answer no quote holds (the operator CLI's
/// `price`): as `POST /price-on-plan` would answer it, without
/// `quote_id` and `group_id`.
#[must_use]
pub fn unstored(a: &PriceOnPlan) -> Value {
    let mut answer = rendered(&snake::plans(("", ""), QuoteStatus::from(a.status), a));
    if let Value::Object(map) = &mut answer {
        map.remove("quote_id");
        map.remove("group_id");
    }
    answer
}

/// An answer as the value [`trim`] works on (the types serialize to
/// objects with string keys: this cannot fail).
fn rendered(answer: &impl Serialize) -> Value {
    serde_json::to_value(answer).unwrap_or(Value::Null)
}
