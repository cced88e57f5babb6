//! Rate-card validation rules (pricing model section 3).

use super::{AGE_CURVE_LEN, GroupParams, invalid};
use crate::error::RateCardError;

pub(super) fn validate_curve(key: &str, curve: &[u32]) -> Result<(), RateCardError> {
    if curve.len() != AGE_CURVE_LEN {
        return Err(invalid(format!(
            "{key}: age_curve_milli needs {AGE_CURVE_LEN} entries (ages 0..=64)"
        )));
    }
    if curve.windows(2).any(|w| matches!(w, [a, b] if b < a)) || curve.contains(&0) {
        return Err(invalid(format!(
            "{key}: age_curve_milli must be positive and never decrease with age"
        )));
    }
    Ok(())
}

pub(super) fn validate_group(p: &GroupParams) -> Result<(), RateCardError> {
    let fail = |m: &str| Err(invalid(m.to_owned()));
    if p.household_mix_bp.iter().sum::<u32>() != 10_000 {
        return fail("household_mix_bp must sum to 10000");
    }
    if p.two_children_share_bp > 10_000 {
        return fail("two_children_share_bp must be at most 10000");
    }
    if p.simulated_plan_years == 0 || p.simulated_plan_years > 100_000 {
        return fail("simulated_plan_years must be 1 to 100000");
    }
    if p.default_child_age > 25 {
        return fail("default_child_age must be at most 25");
    }
    let c = &p.claims;
    let in_unit = |x: f64| x > 0.0 && x < 1.0;
    let claims_ok = in_unit(c.zero_probability)
        && c.sigma > 0.0
        && c.sigma < 5.0
        && c.target_loss_ratio > 0.0
        && c.platinum_actuarial_value > 0.0;
    if !claims_ok {
        return fail("claims parameters out of range");
    }
    let f = &p.funding_breakdown;
    if f.expected_claims_pct + f.stop_loss_pct + f.care_navigation_pct + f.admin_fees_pct != 100 {
        return fail("funding_breakdown must sum to 100");
    }
    let base = &p.market_base_plan;
    for plan in [&p.market_base_plan, &p.benchmark_plan] {
        if plan.oop_max_family_cents < plan.oop_max_individual_cents
            || plan.deductible_family_cents < plan.deductible_individual_cents
            || plan.coinsurance_pct > 100
            || plan.oop_max_individual_cents <= 0
            || plan.deductible_individual_cents < 0
        {
            return fail(
                "plan designs need family values >= individual ones and coinsurance 0..=100",
            );
        }
    }
    for v in &p.versions {
        let (vi, vf) = (
            v.member_oop_max_individual_cents,
            v.member_oop_max_family_cents,
        );
        if vi <= 0 || vi >= base.oop_max_individual_cents || vf >= base.oop_max_family_cents {
            return fail("every version's member maxima must be below the default base plan's");
        }
        if base.oop_max_family_cents - base.oop_max_individual_cents < vf - vi {
            return fail(
                "the default base plan's family maximum is too close to its individual maximum for a version",
            );
        }
        if vf < vi || vf > 2 * vi {
            return fail(
                "a version's family maximum must be between its individual maximum and twice it",
            );
        }
        if v.care_navigation_pmpm_cents < 0 || v.admin_pmpm_cents < 0 || v.risk_margin_bp < 0 {
            return fail("version fees and margin must not be negative");
        }
    }
    let [d, val] = &p.versions;
    if d.member_oop_max_individual_cents > val.member_oop_max_individual_cents
        || d.member_oop_max_family_cents > val.member_oop_max_family_cents
    {
        return fail("diamond's member maxima must not exceed value's");
    }
    if d.care_navigation_pmpm_cents < val.care_navigation_pmpm_cents
        || d.admin_pmpm_cents < val.admin_pmpm_cents
        || d.risk_margin_bp < val.risk_margin_bp
    {
        return fail("diamond's fees and margin must be at least value's");
    }
    Ok(())
}
