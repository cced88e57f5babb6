//! The camelCase answer form of price-on-plan (HR platform keys): the
//! version objects with every object the specification lists, built as
//! the types of [`super::versions`]; and the pending answer's type.

use domain::quote::Quote;
use domain::services::price_on_plan::Document;
use pricing_core::price_on_plan::{Benchmark, PlanSource, UnderlyingPlan, VersionResult};
use pricing_core::{Cents, PriceOnPlan};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::versions::{
    AllMaxYear, Annual, BasePlanOut, BenchmarkPlan, Benefits, ComparedBenchmark, ComparisonOut,
    FeatureOut, HouseholdRate, HsaOut, Joint, MedianYear, MemberOopMaxOut, Monthly, NewMemberRate,
    PriceComponents, PricedAgainst, RateBasisOut, Recompute, RenewalOut, ServiceOnly,
    UnderlyingPlanOut, VersionOut, VersionsAnswer, WorstYear,
};
use super::{IgnoredPlanOut, UsedPlansOut};
use super::{basis, ignored, method, source, time_machine, used_plans, version_status};
use crate::casing::{Style, snake_to_camel, to_style};
use crate::wire::enums;
use crate::wire::timestamp;

/// The HR platform's pending answer (202, or a read while pricing).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = PriceOnPlanVersionsPending, example = json!({
    "quoteId": "qt_0193a1b2c3d4", "groupId": "grp_0193a1b2c3d5", "status": "pricing", "retryAfterSeconds": 2,
    "baseFromMarket": false,
    "note": "Still pricing 10000 census members over 2000 simulated plan years; send the same body again in 2 s.",
    "ignoredPlans": [], "usedPlans": {"sent": 0, "used": 0, "baseCandidates": 0, "benchmarkCandidates": 0},
    "estimatedReadyAt": "2026-11-21T13:14:02Z", "waitingOn": "simulation",
    "waitingOnNote": "The median year and the layer price come from 2000 simulated plan years of the census's claims.",
    "sweep": {"step": "simulation", "planCount": 0}
}))]
pub struct VersionsPending {
    /// The pending quote (poll `GET /quotes/{id}`).
    pub quote_id: String,
    /// The lead group.
    pub group_id: String,
    /// Always `pricing`.
    #[schema(value_type = enums::PricingStatus)]
    pub status: &'static str,
    /// When to ask again (also `Retry-After`).
    pub retry_after_seconds: u32,
    /// Whether the base plan is chosen among `market_plans`.
    pub base_from_market: bool,
    /// What is being priced.
    pub note: String,
    /// The market plans that could not be used.
    pub ignored_plans: Vec<IgnoredPlanOut>,
    /// How the market plans are used.
    pub used_plans: UsedPlansOut,
    /// When the answer is expected.
    #[schema(format = DateTime)]
    pub estimated_ready_at: String,
    /// What it waits on.
    #[schema(value_type = enums::WaitingOn)]
    pub waiting_on: &'static str,
    /// In words.
    pub waiting_on_note: String,
    /// The step under way.
    #[schema(inline)]
    pub sweep: Sweep,
}

/// `sweep`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Sweep {
    /// The step.
    #[schema(value_type = enums::WaitingOn)]
    pub step: &'static str,
    /// Market plans sent.
    pub plan_count: usize,
}

/// The camelCase form of a finished quote.
pub(super) fn versions(q: &Quote, doc: &Document, a: &PriceOnPlan) -> VersionsAnswer {
    VersionsAnswer {
        ignored_plans: ignored(&a.ignored_plans),
        used_plans: used_plans(&a.used_plans),
        status: q.status.as_str(),
        reason: a.reason.clone(),
        group_id: q.group_id.as_str().to_owned(),
        quote_id: q.id.as_str().to_owned(),
        pricing_method: method(a.pricing_method),
        versions: a.versions.iter().map(|v| version(q, doc, a, v)).collect(),
        time_machine: time_machine(doc, a),
        assumptions: a.assumptions.clone(),
    }
}

/// The camelCase form of a quote still pricing.
pub(super) fn pending(
    q: &Quote,
    doc: &Document,
    now: i64,
    retry: u32,
    message: String,
) -> VersionsPending {
    let p = &doc.preview;
    VersionsPending {
        quote_id: q.id.as_str().to_owned(),
        group_id: q.group_id.as_str().to_owned(),
        status: "pricing",
        retry_after_seconds: retry,
        base_from_market: p.base_from_market,
        note: message,
        ignored_plans: ignored(&p.ignored_plans),
        used_plans: used_plans(&p.used_plans),
        estimated_ready_at: timestamp(doc.estimated_ready_at.max(now)),
        waiting_on: "simulation",
        waiting_on_note: format!(
            "The median year and the layer price come from {} simulated plan years of the census's claims.",
            p.simulated_plan_years
        ),
        sweep: Sweep {
            step: "simulation",
            plan_count: p.used_plans.sent,
        },
    }
}

fn benchmark_label(b: &Benchmark) -> String {
    match b.source {
        PlanSource::MarketPlans => format!(
            "Lowest-cost platinum PPO for this census among the market plans (index {})",
            b.market_index.unwrap_or_default()
        ),
        _ => "The rate card's local platinum PPO benchmark".to_owned(),
    }
}

/// The underlying (base) plan: its design, the market plan's fields as
/// sent when it was chosen among them, and where it came from.
fn underlying(u: &UnderlyingPlan) -> UnderlyingPlanOut {
    const DESIGN: &[&str] = &[
        "carrier",
        "planName",
        "planType",
        "network",
        "hsaEligible",
        "deductibleIndividualCents",
        "deductibleFamilyCents",
        "oopMaxIndividualCents",
        "oopMaxFamilyCents",
        "coinsurancePct",
        "source",
        "fundingType",
        "brokerPlan",
        "note",
    ];
    let p = &u.plan;
    let broker_plan = u
        .market_plan
        .as_ref()
        .and_then(|m| serde_json::to_value(m).ok());
    // The market plan's fields as sent (camelCase), without its member
    // rates, which `brokerPlan` carries, and without the design's keys.
    let sent = match &broker_plan {
        Some(Value::Object(sent)) => sent
            .iter()
            .filter(|(k, _)| *k != "member_rates_cents")
            .map(|(k, v)| (snake_to_camel(k), to_style(v.clone(), Style::Camel)))
            .filter(|(k, _)| !DESIGN.contains(&k.as_str()))
            .collect(),
        _ => serde_json::Map::new(),
    };
    UnderlyingPlanOut {
        sent,
        carrier: p.carrier.clone(),
        plan_name: p.plan_name.clone(),
        plan_type: p.plan_type.clone(),
        network: p.network.clone(),
        hsa_eligible: true,
        deductible_individual_cents: p.deductible_individual_cents,
        deductible_family_cents: p.deductible_family_cents,
        oop_max_individual_cents: p.oop_max_individual_cents,
        oop_max_family_cents: p.oop_max_family_cents,
        coinsurance_pct: p.coinsurance_pct,
        source: source(u.source),
        funding_type: p.funding_type.clone(),
        broker_plan: broker_plan.map(|v| to_style(v, Style::Camel)),
        note: match u.source {
            PlanSource::MarketPlans => {
                "Chosen among the market plans: the lowest-cost HSA-eligible plan the versions can be built on. Its premium is paid to its carrier."
            }
            _ => {
                "The partner's plan, priced at the partner's own rates. Its premium is paid to its carrier; the service layer sits on top."
            }
        },
    }
}

#[allow(clippy::too_many_lines)]
fn version(q: &Quote, doc: &Document, a: &PriceOnPlan, v: &VersionResult) -> VersionOut {
    let b = &a.benchmark;
    let base = a.base_plan.as_ref();
    let priced = v.priced.as_ref();
    let f = priced.map(|p| &p.figures);
    let m = &v.member_oop_max;
    VersionOut {
        id: v.id,
        name: v.name.clone(),
        description: v.description.clone(),
        status: version_status(q.status, v),
        pricing_method: method(a.pricing_method),
        reason: v.reason.clone(),
        monthly: f.map(|f| Monthly {
            total_cents: f.joint_monthly_cents.get(),
            pepm_cents: f.joint_pepm_cents.get(),
            pmpm_cents: f.joint_pmpm_cents.get(),
        }),
        annual: f.map(|f| Annual {
            total_cents: f.joint_annual_cents.get(),
        }),
        priced_against: PricedAgainst {
            carrier: b.carrier.clone(),
            plan_name: b.plan_name.clone(),
            metal_tier: b.metal_tier.clone(),
            source: source(b.source),
            label: benchmark_label(b),
        },
        benchmark_plan: BenchmarkPlan {
            carrier: b.carrier.clone(),
            plan_name: b.plan_name.clone(),
            metal_tier: b.metal_tier.clone(),
            network: b.network.clone(),
        },
        underlying_plan: base.map(underlying),
        benefits: Benefits {
            oop_max_individual_cents: m.individual_cents.get(),
            oop_max_employee_plus_one_cents: m.employee_plus_one_cents.get(),
            oop_max_family_cents: m.family_cents.get(),
            member_coinsurance_pct: base.map(|u| u.plan.coinsurance_pct),
            hsa_eligible: v.hsa.eligible,
            network: base.map(|u| u.plan.network.clone()),
            features: v
                .features
                .iter()
                .map(|x| FeatureOut {
                    title: x.title.clone(),
                    description: x.description.clone(),
                })
                .collect(),
        },
        price_components: f.map(|f| PriceComponents {
            underlying_premium_monthly_cents: f.base_monthly_cents.get(),
            service_monthly_cents: f.service_monthly_cents.get(),
            total_monthly_cents: f.joint_monthly_cents.get(),
            underlying_pmpm_cents: f.your_plan_pmpm_cents.get(),
            service_pmpm_cents: f.service_pmpm_cents.get(),
            total_pmpm_cents: f.joint_pmpm_cents.get(),
        }),
        worst_year: f.map(|f| WorstYear {
            modeled_extra_cents: f.all_max_year.modeled_extra_cents.get(),
            modeled_total_cents: f.all_max_year.employer_total_cents.get(),
            benchmark_premium_cents: f.all_max_year.benchmark_premium_cents.get(),
            headroom_cents: f.all_max_year.headroom_cents.get(),
            basis: "all_max_year: every covered household reaches the base plan's out-of-pocket maximum in the same plan year; members pay the version's maximum and the layer pays the rest",
            contractual: false,
            note: "A modeled scenario, not a contractual cap or guarantee.",
            recompute: Recompute {
                underlying_annual_premium_cents: f.base_annual_cents.get(),
                theoretical_exposure_cents: f.all_max_year.theoretical_exposure_cents.get(),
                member_oop_allowance_cents: f.all_max_year.member_oop_allowance_cents.get(),
            },
        }),
        base_plan: base.map(|u| BasePlanOut {
            carrier: u.plan.carrier.clone(),
            plan_name: u.plan.plan_name.clone(),
            deductible_individual_cents: u.plan.deductible_individual_cents,
            deductible_family_cents: u.plan.deductible_family_cents,
            label: format!(
                "{} {} ({} / {} deductible)",
                u.plan.carrier,
                u.plan.plan_name,
                Cents::new(u.plan.deductible_individual_cents),
                Cents::new(u.plan.deductible_family_cents)
            )
            .trim()
            .to_owned(),
        }),
        member_oop_max: MemberOopMaxOut {
            individual_cents: m.individual_cents.get(),
            family_cents: m.family_cents.get(),
        },
        benchmark_rank: priced.map(|p| p.benchmark_rank),
        rate_basis: RateBasisOut {
            base_plan: base.map(|u| basis(u.rate_basis)),
            benchmark: basis(b.rate_basis),
        },
        monthly_rates_by_household: priced.map(|p| {
            p.monthly_rates_by_household
                .iter()
                .map(HouseholdRate::from)
                .collect()
        }),
        new_member_rates_by_household: priced.map(|p| {
            p.new_member_rates_by_household
                .iter()
                .map(NewMemberRate::from)
                .collect()
        }),
        all_max_year: f.map(|f| AllMaxYear {
            base_premium_cents: f.all_max_year.base_premium_cents.get(),
            service_cents: f.all_max_year.service_cents.get(),
            modeled_extra_cents: f.all_max_year.modeled_extra_cents.get(),
            employer_total_cents: f.all_max_year.employer_total_cents.get(),
            members_pay_cents: f.all_max_year.member_oop_allowance_cents.get(),
        }),
        median_year: f.map(|f| MedianYear {
            employer_total_cents: f.median_year.employer_total_cents.get(),
            pool_pays_cents: f.median_year.pool_pays_cents.get(),
            members_pay_cents: f.median_year.members_pay_cents.get(),
        }),
        time_machine: time_machine(doc, a),
        hsa: HsaOut {
            eligible: v.hsa.eligible,
            basis: v.hsa.basis.clone(),
        },
        renewal: RenewalOut {
            method: v.renewal.method.clone(),
            note: v.renewal.note.clone(),
        },
        member_experience: priced.map(|p| p.member_experience.clone()),
        fit_flags: priced.map_or_else(Vec::new, |p| p.fit_flags.clone()),
        comparison: priced.map(|p| {
            let c = &p.comparison;
            ComparisonOut {
                benchmark: ComparedBenchmark {
                    carrier: b.carrier.clone(),
                    plan_name: b.plan_name.clone(),
                    metal_tier: b.metal_tier.clone(),
                    annual_cents: b.annual_cents.get(),
                    deductible_individual_cents: b.deductible_individual_cents,
                    oop_max_individual_cents: b.oop_max_individual_cents,
                    oop_max_family_cents: b.oop_max_family_cents,
                    hsa_eligible: b.hsa_eligible,
                },
                annual_savings_cents: c.annual_savings_cents.get(),
                savings_pct: c.savings_pct,
                worst_year_under_benchmark_cents: c.worst_year_under_benchmark_cents.get(),
                oop_max_individual_lower_by_cents: c.oop_max_individual_lower_by_cents.map(Cents::get),
                oop_max_family_lower_by_cents: c.oop_max_family_lower_by_cents.map(Cents::get),
                hsa_eligible_where_benchmark_is_not: c.hsa_eligible_where_benchmark_is_not,
            }
        }),
        broker_row: priced.map(|p| p.broker_row.clone()),
        summary: priced.map(|p| p.summary.clone()),
        joint: priced.map(|p| {
            let f = &p.figures;
            Joint {
                name: format!(
                    "{} on {}",
                    v.name,
                    base.map(|u| u.plan.plan_name.as_str()).unwrap_or_default()
                ),
                option: v.id,
                base_pmpm_cents: f.your_plan_pmpm_cents.get(),
                service_layer_pmpm_cents: f.service_pmpm_cents.get(),
                total_pmpm_cents: f.joint_pmpm_cents.get(),
                total_pepm_cents: f.joint_pepm_cents.get(),
                monthly_cents: f.joint_monthly_cents.get(),
                annual_cents: f.joint_annual_cents.get(),
                base_deductible_individual_cents: base.map(|u| u.plan.deductible_individual_cents),
                member_oop_max_individual_cents: m.individual_cents.get(),
                member_oop_max_family_cents: m.family_cents.get(),
                modeled_worst_year_cents: f.all_max_year.employer_total_cents.get(),
                summary: p.summary.clone(),
            }
        }),
        service_only: f.map(|f| ServiceOnly {
            pmpm_cents: f.service_pmpm_cents.get(),
            pepm_cents: f.service_pepm_cents.get(),
            monthly_cents: f.service_monthly_cents.get(),
            annual_cents: f.service_annual_cents.get(),
            note: "What the service alone costs; the partner plan's own premium is paid to its carrier.",
        }),
    }
}
