//! The camelCase answer form of price-on-plan (HR platform keys): the
//! version objects with every object the specification lists.

use domain::quote::Quote;
use domain::services::price_on_plan::Document;
use pricing_core::PriceOnPlan;
use pricing_core::price_on_plan::{Benchmark, PlanSource, UnderlyingPlan, VersionResult};
use serde_json::{Map, Value, json};

use super::{
    basis, ignored, method, quote_status, source, time_machine, used_plans, version_status,
};

/// The camelCase form.
pub(super) fn camel(q: &Quote, doc: &Document, a: &PriceOnPlan) -> Value {
    let versions: Vec<Value> = a
        .versions
        .iter()
        .map(|v| camel_version(q, doc, a, v))
        .collect();
    json!({
        "ignoredPlans": ignored(&a.ignored_plans),
        "usedPlans": used_plans(&a.used_plans),
        "status": quote_status(q),
        "reason": a.reason,
        "groupId": q.group_id.as_str(),
        "quoteId": q.id.as_str(),
        "pricingMethod": method(a.pricing_method),
        "versions": versions,
        "time_machine": time_machine(doc, a),
        "assumptions": a.assumptions,
    })
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
fn underlying(u: &UnderlyingPlan) -> Value {
    let p = &u.plan;
    let mut out = Map::new();
    // The market plan's fields as sent (camelCase), without its member
    // rates, which `brokerPlan` carries.
    if let Some(Value::Object(sent)) = u
        .market_plan
        .as_ref()
        .and_then(|m| serde_json::to_value(m).ok())
    {
        for (k, v) in sent {
            if k != "member_rates_cents" {
                out.insert(
                    crate::casing::snake_to_camel(&k),
                    crate::casing::to_style(v, crate::casing::Style::Camel),
                );
            }
        }
    }
    let design = json!({
        "carrier": p.carrier,
        "planName": p.plan_name,
        "planType": p.plan_type,
        "network": p.network,
        "hsaEligible": true,
        "deductibleIndividualCents": p.deductible_individual_cents,
        "deductibleFamilyCents": p.deductible_family_cents,
        "oopMaxIndividualCents": p.oop_max_individual_cents,
        "oopMaxFamilyCents": p.oop_max_family_cents,
        "coinsurancePct": p.coinsurance_pct,
        "source": source(u.source),
        "fundingType": p.funding_type,
        "brokerPlan": u.market_plan.as_ref().and_then(|m| serde_json::to_value(m).ok())
            .map(|v| crate::casing::to_style(v, crate::casing::Style::Camel)),
        "note": match u.source {
            PlanSource::MarketPlans => "Chosen among the market plans: the lowest-cost HSA-eligible plan the versions can be built on. Its premium is paid to its carrier.",
            _ => "The partner's plan, priced at the partner's own rates. Its premium is paid to its carrier; the service layer sits on top.",
        },
    });
    if let Value::Object(d) = design {
        out.extend(d);
    }
    Value::Object(out)
}

fn camel_version(q: &Quote, doc: &Document, a: &PriceOnPlan, v: &VersionResult) -> Value {
    let b = &a.benchmark;
    let base = a.base_plan.as_ref();
    let priced = v.priced.as_ref();
    let f = priced.map(|p| &p.figures);
    let m = &v.member_oop_max;
    let coinsurance = base.map(|u| u.plan.coinsurance_pct);
    json!({
        "id": v.id,
        "name": v.name,
        "description": v.description,
        "status": version_status(q, v),
        "pricing_method": method(a.pricing_method),
        "reason": v.reason,
        "monthly": f.map(|f| json!({
            "totalCents": f.joint_monthly_cents.get(),
            "pepmCents": f.joint_pepm_cents.get(),
            "pmpmCents": f.joint_pmpm_cents.get(),
        })),
        "annual": f.map(|f| json!({"totalCents": f.joint_annual_cents.get()})),
        "pricedAgainst": {
            "carrier": b.carrier,
            "planName": b.plan_name,
            "metalTier": b.metal_tier,
            "source": source(b.source),
            "label": benchmark_label(b),
        },
        "benchmarkPlan": {
            "carrier": b.carrier,
            "planName": b.plan_name,
            "metalTier": b.metal_tier,
            "network": b.network,
        },
        "underlyingPlan": base.map(underlying),
        "benefits": {
            "oopMaxIndividualCents": m.individual_cents.get(),
            "oopMaxEmployeePlusOneCents": m.employee_plus_one_cents.get(),
            "oopMaxFamilyCents": m.family_cents.get(),
            "memberCoinsurancePct": coinsurance,
            "hsaEligible": v.hsa.eligible,
            "network": base.map(|u| u.plan.network.clone()),
            "features": v.features,
        },
        "price_components": f.map(|f| json!({
            "underlying_premium_monthly_cents": f.base_monthly_cents.get(),
            "service_monthly_cents": f.service_monthly_cents.get(),
            "total_monthly_cents": f.joint_monthly_cents.get(),
            "underlying_pmpm_cents": f.your_plan_pmpm_cents.get(),
            "service_pmpm_cents": f.service_pmpm_cents.get(),
            "total_pmpm_cents": f.joint_pmpm_cents.get(),
        })),
        "worst_year": f.map(|f| json!({
            "modeled_extra_cents": f.all_max_year.modeled_extra_cents.get(),
            "modeled_total_cents": f.all_max_year.employer_total_cents.get(),
            "benchmark_premium_cents": f.all_max_year.benchmark_premium_cents.get(),
            "headroom_cents": f.all_max_year.headroom_cents.get(),
            "basis": "all_max_year: every covered household reaches the base plan's out-of-pocket maximum in the same plan year; members pay the version's maximum and the layer pays the rest",
            "contractual": false,
            "note": "A modeled scenario, not a contractual cap or guarantee.",
            "recompute": {
                "underlying_annual_premium_cents": f.base_annual_cents.get(),
                "theoretical_exposure_cents": f.all_max_year.theoretical_exposure_cents.get(),
                "member_oop_allowance_cents": f.all_max_year.member_oop_allowance_cents.get(),
            },
        })),
        "base_plan": base.map(|u| json!({
            "carrier": u.plan.carrier,
            "plan_name": u.plan.plan_name,
            "deductible_individual_cents": u.plan.deductible_individual_cents,
            "deductible_family_cents": u.plan.deductible_family_cents,
            "label": format!("{} {} ({} / {} deductible)", u.plan.carrier, u.plan.plan_name,
                pricing_core::Cents::new(u.plan.deductible_individual_cents),
                pricing_core::Cents::new(u.plan.deductible_family_cents)).trim().to_owned(),
        })),
        "member_oop_max": {
            "individual_cents": m.individual_cents.get(),
            "family_cents": m.family_cents.get(),
        },
        "benchmark_rank": priced.map(|p| p.benchmark_rank),
        "rate_basis": {
            "base_plan": base.map(|u| basis(u.rate_basis)),
            "benchmark": basis(b.rate_basis),
        },
        "monthly_rates_by_household": priced.map(|p| p.monthly_rates_by_household.iter().map(|r| json!({
            "label": r.label, "people": r.people, "households": r.households, "monthly_cents": r.monthly_cents.get(),
        })).collect::<Vec<_>>()),
        "new_member_rates_by_household": priced.map(|p| p.new_member_rates_by_household.iter().map(|r| json!({
            "label": r.label, "people": r.people, "monthly_cents": r.monthly_cents.get(),
        })).collect::<Vec<_>>()),
        "all_max_year": f.map(|f| json!({
            "base_premium_cents": f.all_max_year.base_premium_cents.get(),
            "service_cents": f.all_max_year.service_cents.get(),
            "modeled_extra_cents": f.all_max_year.modeled_extra_cents.get(),
            "employer_total_cents": f.all_max_year.employer_total_cents.get(),
            "members_pay_cents": f.all_max_year.member_oop_allowance_cents.get(),
        })),
        "median_year": f.map(|f| json!({
            "employer_total_cents": f.median_year.employer_total_cents.get(),
            "pool_pays_cents": f.median_year.pool_pays_cents.get(),
            "members_pay_cents": f.median_year.members_pay_cents.get(),
        })),
        "time_machine": time_machine(doc, a),
        "hsa": {"eligible": v.hsa.eligible, "basis": v.hsa.basis},
        "renewal": {"method": v.renewal.method, "note": v.renewal.note},
        "member_experience": priced.map(|p| p.member_experience.clone()),
        "fit_flags": priced.map_or_else(Vec::new, |p| p.fit_flags.clone()),
        "comparison": priced.map(|p| {
            let c = &p.comparison;
            json!({
                "benchmark": {
                    "carrier": b.carrier,
                    "planName": b.plan_name,
                    "metalTier": b.metal_tier,
                    "annualCents": b.annual_cents.get(),
                    "deductibleIndividualCents": b.deductible_individual_cents,
                    "oopMaxIndividualCents": b.oop_max_individual_cents,
                    "oopMaxFamilyCents": b.oop_max_family_cents,
                    "hsaEligible": b.hsa_eligible,
                },
                "annualSavingsCents": c.annual_savings_cents.get(),
                "savingsPct": c.savings_pct,
                "worstYearUnderBenchmarkCents": c.worst_year_under_benchmark_cents.get(),
                "oopMaxIndividualLowerByCents": c.oop_max_individual_lower_by_cents.map(pricing_core::Cents::get),
                "oopMaxFamilyLowerByCents": c.oop_max_family_lower_by_cents.map(pricing_core::Cents::get),
                "hsaEligibleWhereBenchmarkIsNot": c.hsa_eligible_where_benchmark_is_not,
            })
        }),
        "broker_row": priced.map(|p| p.broker_row.clone()),
        "summary": priced.map(|p| p.summary.clone()),
        "joint": priced.map(|p| {
            let f = &p.figures;
            json!({
                "name": format!("{} on {}", v.name, base.map(|u| u.plan.plan_name.as_str()).unwrap_or_default()),
                "option": v.id,
                "basePmpmCents": f.your_plan_pmpm_cents.get(),
                "serviceLayerPmpmCents": f.service_pmpm_cents.get(),
                "totalPmpmCents": f.joint_pmpm_cents.get(),
                "totalPepmCents": f.joint_pepm_cents.get(),
                "monthlyCents": f.joint_monthly_cents.get(),
                "annualCents": f.joint_annual_cents.get(),
                "baseDeductibleIndividualCents": base.map(|u| u.plan.deductible_individual_cents),
                "memberOopMaxIndividualCents": m.individual_cents.get(),
                "memberOopMaxFamilyCents": m.family_cents.get(),
                "modeledWorstYearCents": f.all_max_year.employer_total_cents.get(),
                "summary": p.summary,
            })
        }),
        "serviceOnly": f.map(|f| json!({
            "pmpmCents": f.service_pmpm_cents.get(),
            "pepmCents": f.service_pepm_cents.get(),
            "monthlyCents": f.service_monthly_cents.get(),
            "annualCents": f.service_annual_cents.get(),
            "note": "What the service alone costs; the partner plan's own premium is paid to its carrier.",
        })),
    })
}
