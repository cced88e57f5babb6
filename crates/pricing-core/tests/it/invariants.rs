//! One property test per invariant of `pricing-model.md` section 9, on
//! generated censuses (1–40 records, dob 1960–2008, priced ZIPs in CA, NY,
//! IL and TX, known and unknown households with up to six dependents,
//! contractors and terminated members) and generated partner HSA plans.

use pricing_core::price_on_plan::{PriceOnPlan, PricedVersion};
use pricing_core::{CensusMember, Quote};
use proptest::prelude::*;
use proptest::sample::Index;
use time::Duration;

use crate::support::{
    CensusGen, PlanRates, PlanSpec, arb_census, arb_member_spec, arb_plan_any, arb_plan_both,
    cents_fields, json_bytes, market_base_monthly, plan_monthly, price_on, quotes,
    quotes_with_simulation, signed_money,
};

/// Most records in a generated census. Runs stay cheap because quotes
/// simulate [`crate::support::QUOTE_YEARS`] and price-on-plan
/// [`crate::support::PLAN_YEARS`] plan years.
const MAX: usize = 40;

/// `cases` per property, or `PROPTEST_CASES` when set (for a deeper run).
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(cases),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// The priced versions of a price-on-plan answer, diamond then value.
fn priced(answer: &PriceOnPlan) -> Vec<(&str, &PricedVersion)> {
    answer
        .versions
        .iter()
        .filter_map(|v| v.priced.as_ref().map(|p| (v.name.as_str(), p)))
        .collect()
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<serde_json::Value, TestCaseError> {
    serde_json::to_value(value).map_err(|e| TestCaseError::fail(format!("serialize: {e}")))
}

fn check_money_signs(json: &serde_json::Value) -> Result<(), TestCaseError> {
    for (path, v) in cents_fields(json) {
        let n = v.as_i64();
        prop_assert!(n.is_some(), "{path} is not an integer: {v}");
        if !signed_money(&path) {
            prop_assert!(n.unwrap_or(-1) >= 0, "{path} = {v} is negative");
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(128))]

    /// Invariant 1: `pmpm = your_plan_pmpm + service_pmpm` for every priced
    /// version, in quotes and on a partner plan.
    #[test]
    fn invariant_1_joint_pmpm_is_base_plus_service(
        census in arb_census(CensusGen::mixed(MAX)),
        plan in arb_plan_any(),
    ) {
        for q in quotes(&census) {
            let f = &q.components;
            prop_assert_eq!(
                f.joint_pmpm_cents.get(),
                f.your_plan_pmpm_cents.get() + f.service_pmpm_cents.get()
            );
        }
        let answer = price_on(&census, &plan.plan());
        for (name, p) in priced(&answer) {
            let f = &p.figures;
            prop_assert_eq!(
                f.joint_pmpm_cents.get(),
                f.your_plan_pmpm_cents.get() + f.service_pmpm_cents.get(),
                "{}", name
            );
        }
    }

    /// Invariant 2: with every household known, the tier lines reproduce the
    /// monthly total within half a cent per household; annual = 12 × monthly;
    /// joint − service = the base plan's exact monthly cost.
    #[test]
    fn invariant_2_totals_are_exact_sums(
        census in arb_census(CensusGen::known(MAX)),
        plan in arb_plan_any(),
    ) {
        let base = market_base_monthly(&census);
        for q in quotes(&census) {
            let total = q.monthly.total_cents.get();
            let t = &q.monthly.by_tier;
            let lines = [t.employee_only, t.employee_spouse, t.employee_children, t.family];
            let households: u64 = lines.iter().map(|l| l.count).sum();
            prop_assert_eq!(households, q.census.employees);
            let from_tiers: i128 = lines
                .iter()
                .map(|l| i128::from(l.count) * i128::from(l.avg_cents.get()))
                .sum();
            prop_assert!(
                2 * (i128::from(total) - from_tiers).abs() <= i128::from(households),
                "total {} vs Σ count × avg {} over {} households", total, from_tiers, households
            );
            prop_assert_eq!(q.annual_total_cents.get(), 12 * total);
            let f = &q.components;
            prop_assert_eq!(f.joint_annual_cents.get(), 12 * f.joint_monthly_cents.get());
            prop_assert_eq!(f.service_annual_cents.get(), 12 * f.service_monthly_cents.get());
            prop_assert_eq!(f.base_annual_cents.get(), 12 * f.base_monthly_cents.get());
            prop_assert_eq!(f.joint_monthly_cents, q.monthly.total_cents);
            prop_assert_eq!(
                f.joint_monthly_cents.get() - f.service_monthly_cents.get(),
                base
            );
        }
        let answer = price_on(&census, &plan.plan());
        let exact = plan_monthly(&census, plan.rates);
        let underlying = answer.base_plan.as_ref();
        prop_assert_eq!(underlying.map(|b| b.monthly_cents.get()), Some(exact));
        prop_assert_eq!(underlying.map(|b| b.annual_cents.get()), Some(12 * exact));
        for (name, p) in priced(&answer) {
            let f = &p.figures;
            prop_assert_eq!(
                f.joint_monthly_cents.get() - f.service_monthly_cents.get(),
                exact,
                "{}", name
            );
            prop_assert_eq!(f.joint_annual_cents.get(), 12 * f.joint_monthly_cents.get());
            prop_assert_eq!(f.service_annual_cents.get(), 12 * f.service_monthly_cents.get());
        }
    }

    /// Invariant 3: `headroom = benchmark − modeled_total` and
    /// `modeled_total = base + service + extra` in the all-max year.
    #[test]
    fn invariant_3_headroom_and_modeled_total(
        census in arb_census(CensusGen::mixed(MAX)),
        plan in arb_plan_any(),
    ) {
        let mut years = Vec::new();
        for q in quotes(&census) {
            let bench = 12 * q.comparison.benchmark.monthly_cents.get();
            prop_assert_eq!(q.components.all_max_year.benchmark_premium_cents.get(), bench);
            years.push(q.components);
        }
        let answer = price_on(&census, &plan.plan());
        for (_, p) in priced(&answer) {
            prop_assert_eq!(
                p.figures.all_max_year.benchmark_premium_cents,
                answer.benchmark.annual_cents
            );
            prop_assert_eq!(
                p.comparison.worst_year_under_benchmark_cents,
                p.figures.all_max_year.headroom_cents
            );
            years.push(p.figures);
        }
        for f in years {
            let y = &f.all_max_year;
            prop_assert_eq!(y.base_premium_cents, f.base_annual_cents);
            prop_assert_eq!(y.service_cents, f.service_annual_cents);
            prop_assert_eq!(
                y.modeled_extra_cents.get(),
                (y.theoretical_exposure_cents.get() - f.layer_annual_cents.get()).max(0)
            );
            prop_assert_eq!(
                y.employer_total_cents.get(),
                y.base_premium_cents.get() + y.service_cents.get() + y.modeled_extra_cents.get()
            );
            prop_assert_eq!(
                y.headroom_cents.get(),
                y.benchmark_premium_cents.get() - y.employer_total_cents.get()
            );
        }
    }

    /// Invariant 4: diamond's member maxima ≤ value's and diamond's service
    /// PMPM ≥ value's, on a partner plan where both are available and on the
    /// market base plan of a quote.
    #[test]
    fn invariant_4_diamond_caps_lower_and_service_higher(
        census in arb_census(CensusGen::mixed(MAX)),
        plan in arb_plan_both(),
    ) {
        prop_assert!(plan.both_available(), "generator: {:?}", plan);
        let answer = price_on(&census, &plan.plan());
        let [diamond, value] = answer.versions.as_slice() else {
            return Err(TestCaseError::fail("two versions expected"));
        };
        let (dm, vm) = (&diamond.member_oop_max, &value.member_oop_max);
        prop_assert!(dm.individual_cents <= vm.individual_cents);
        prop_assert!(dm.family_cents <= vm.family_cents);
        prop_assert!(dm.embedded_individual_cents <= vm.embedded_individual_cents);
        prop_assert!(dm.employee_plus_one_cents <= vm.employee_plus_one_cents);
        let (Some(d), Some(v)) = (&diamond.priced, &value.priced) else {
            return Err(TestCaseError::fail(format!(
                "both versions should be priced on {plan:?}: {:?} / {:?}",
                diamond.reason, value.reason
            )));
        };
        prop_assert!(d.figures.service_pmpm_cents >= v.figures.service_pmpm_cents);
        prop_assert!(d.figures.service_monthly_cents >= v.figures.service_monthly_cents);
        prop_assert!(d.figures.layer_monthly_cents >= v.figures.layer_monthly_cents);
        let [qd, qv] = quotes(&census);
        prop_assert!(qd.components.service_pmpm_cents >= qv.components.service_pmpm_cents);
        prop_assert!(qd.monthly.total_cents >= qv.monthly.total_cents);
    }

    /// Invariant 5: raising the partner plan's out-of-pocket maxima (within
    /// the IRS limits, family ≥ individual) never lowers a version's service
    /// monthly total.
    #[test]
    fn invariant_5_raising_the_base_oop_max_never_lowers_service(
        census in arb_census(CensusGen::mixed(MAX)),
        (plan, raised) in arb_plan_any().prop_flat_map(|p| {
            let oi = p.oop_individual..=850_000i64;
            (Just(p), oi).prop_flat_map(|(p, oi)| {
                let of = p.oop_family.max(oi)..=1_700_000i64;
                (Just(p), Just(oi), of)
            })
        }).prop_map(|(p, oi, of)| {
            let mut r = p;
            r.oop_individual = oi;
            r.oop_family = of;
            (p, r)
        }),
    ) {
        let low = price_on(&census, &plan.plan());
        let high = price_on(&census, &raised.plan());
        for (l, h) in low.versions.iter().zip(&high.versions) {
            if let (Some(lp), Some(hp)) = (&l.priced, &h.priced) {
                prop_assert!(
                    hp.figures.service_monthly_cents >= lp.figures.service_monthly_cents,
                    "{}: {} → {} when the maxima go from {}/{} to {}/{}",
                    l.name,
                    lp.figures.service_monthly_cents,
                    hp.figures.service_monthly_cents,
                    plan.oop_individual,
                    plan.oop_family,
                    raised.oop_individual,
                    raised.oop_family
                );
                prop_assert!(hp.figures.layer_monthly_cents >= lp.figures.layer_monthly_cents);
                prop_assert_eq!(hp.figures.fees_monthly_cents, lp.figures.fees_monthly_cents);
            }
        }
    }

    /// Invariant 6 (a): adding a member never lowers the monthly total.
    #[test]
    fn invariant_6_adding_a_member_never_lowers_the_total(
        specs in crate::support::arb_specs(CensusGen::mixed(MAX)),
        extra in arb_member_spec(true, true, true),
        at in any::<Index>(),
    ) {
        let census = crate::support::build_census(&specs);
        // The new record gets a fresh identity and may land anywhere.
        let mut bigger = census.clone();
        bigger.insert(at.index(bigger.len() + 1), extra.build(900));
        let before = quotes(&census);
        let after = quotes(&bigger);
        for (b, a) in before.iter().zip(&after) {
            prop_assert!(
                a.monthly.total_cents >= b.monthly.total_cents,
                "{:?}: {} → {}", b.plan.id, b.monthly.total_cents, a.monthly.total_cents
            );
        }
    }

    /// Invariant 6 (b): making anyone (employee or dependent) older never
    /// lowers the monthly total.
    #[test]
    fn invariant_6_making_anyone_older_never_lowers_the_total(
        census in arb_census(CensusGen::mixed(MAX)),
        who in any::<Index>(),
        days in 1i64..=(30 * 365),
    ) {
        let older = make_older(&census, who, days);
        let before = quotes(&census);
        let after = quotes(&older);
        for (b, a) in before.iter().zip(&after) {
            prop_assert!(
                a.monthly.total_cents >= b.monthly.total_cents,
                "{:?}: {} → {}", b.plan.id, b.monthly.total_cents, a.monthly.total_cents
            );
        }
    }

    /// Invariant 7: the median-year employer total ≤ the all-max one; and,
    /// the reason it holds, no simulated year's pool exceeds the theoretical
    /// exposure (up to the half cent each unknown household's mix-weighted
    /// layer is rounded by, and the half cent of the exposure's own rounding).
    #[test]
    fn invariant_7_median_year_at_most_all_max_year(
        census in arb_census(CensusGen::mixed(MAX)),
        plan in arb_plan_any(),
    ) {
        let (r, sim, quotes) = quotes_with_simulation(&census);
        let slack = i64::try_from(r.unknown_households).unwrap_or(0) / 2 + 1;
        for (q, v) in quotes.iter().zip(&sim.versions) {
            let exposure = q.components.all_max_year.theoretical_exposure_cents.get();
            let worst = v.pool_by_year.iter().copied().max().unwrap_or(0);
            prop_assert!(
                worst <= exposure + slack,
                "{:?}: a simulated year's pool {} exceeds the exposure {}", q.plan.id, worst, exposure
            );
            prop_assert!(v.pool_by_year.iter().all(|&y| y >= 0));
        }
        let mut figures: Vec<_> = quotes.map(|q| q.components).to_vec();
        let answer = price_on(&census, &plan.plan());
        figures.extend(priced(&answer).into_iter().map(|(_, p)| p.figures));
        for f in figures {
            prop_assert!(
                f.median_year.employer_total_cents <= f.all_max_year.employer_total_cents,
                "median {} > all-max {}",
                f.median_year.employer_total_cents,
                f.all_max_year.employer_total_cents
            );
            prop_assert!(f.median_year.pool_pays_cents <= f.all_max_year.theoretical_exposure_cents);
        }
    }

    /// Invariant 8: the same inputs give the same bytes, and permuting the
    /// census rows changes nothing.
    #[test]
    fn invariant_8_same_inputs_same_bytes_and_row_order_is_irrelevant(
        (census, permuted) in arb_census(CensusGen::mixed(MAX))
            .prop_flat_map(|c| (Just(c.clone()), Just(c).prop_shuffle())),
        plan in arb_plan_any(),
    ) {
        let a = quotes(&census).map(|q| json_bytes(&q));
        let b = quotes(&census).map(|q| json_bytes(&q));
        let p = quotes(&permuted).map(|q| json_bytes(&q));
        prop_assert!(a == b, "two runs differ");
        prop_assert!(a == p, "row order changed a quote");
        let plan = plan.plan();
        let a = json_bytes(&price_on(&census, &plan));
        let b = json_bytes(&price_on(&census, &plan));
        let p = json_bytes(&price_on(&permuted, &plan));
        prop_assert!(a == b, "two price-on-plan runs differ");
        prop_assert!(a == p, "row order changed price-on-plan");
    }

    /// Invariant 9: every money field is an integer ≥ 0, except savings,
    /// headroom and the benchmark comparisons (signed), on every plan —
    /// including bases whose individual maximum lies between diamond's
    /// self-only maximum and its HSA-raised per-member maximum.
    #[test]
    fn invariant_9_money_fields_are_non_negative_integers(
        census in arb_census(CensusGen::mixed(MAX)),
        plan in arb_plan_any(),
        current_pepm in proptest::option::of(0i64..=300_000),
    ) {
        check_invariant_9(&census, &plan, current_pepm)?;
    }
}

/// Invariant 9 on the two quotes, a quote against a current coverage PEPM
/// at a 75% employer contribution, and price-on-plan.
fn check_invariant_9(
    census: &[CensusMember],
    plan: &PlanSpec,
    current_pepm: Option<i64>,
) -> Result<(), TestCaseError> {
    let (r, sim, [d, v]) = quotes_with_simulation(census);
    for q in [d, v] {
        check_money_signs(&to_json(&q)?)?;
    }
    let req = pricing_core::QuoteRequest {
        current_pepm_cents: current_pepm,
        employer_contribution_pct: 75,
        ..pricing_core::QuoteRequest::default()
    };
    let q: Quote = pricing_core::price_quote(&r, &sim, req)
        .map_err(|e| TestCaseError::fail(format!("quote: {e:?}")))?;
    check_money_signs(&to_json(&q)?)?;
    let answer = price_on(census, &plan.plan());
    check_money_signs(&to_json(&answer)?)
}

/// Regression: one employee and spouse on a valid HDHP (deductible $1,700,
/// OOP max $2,000 / $10,000). Diamond's per-member maximum in family
/// coverage ($3,400, raised for HSA eligibility) is above the base plan's
/// $2,000; the layer once went negative here. A member never pays more than
/// the base plan alone, so the layer is ≥ 0 and the cap is disclosed.
#[test]
fn diamond_layer_is_not_negative_on_a_base_below_the_raised_embedded_max() {
    use crate::support::{START, card, dependent, member};
    use pricing_core::{CensusRules, PriceOnPlanRequest, PricingContext, Relationship};
    use time::macros::date;
    let mut m = member("E-1", date!(1960 - 01 - 01), "94103");
    m.dependents = Some(vec![dependent(Relationship::Spouse, date!(1960 - 01 - 01))]);
    let plan: pricing_core::PartnerPlan = serde_json::from_str(
        r#"{"plan_type":"PPO","hsa_eligible":true,"deductible_individual_cents":170000,
            "oop_max_individual_cents":200000,"oop_max_family_cents":1000000,"pmpm_cents":50000}"#,
    )
    .unwrap();
    let req = PriceOnPlanRequest {
        census: vec![m],
        plan: Some(plan),
        ..PriceOnPlanRequest::default()
    };
    let ctx = PricingContext {
        card: card(),
        plan_year_start: START,
        partner: None,
        rules: CensusRules { require_dob: true },
    };
    let answer = pricing_core::price_on_plan(&req, ctx).unwrap();
    let diamond = &answer.versions[0];
    let p = diamond
        .priced
        .as_ref()
        .expect("diamond is available on this base");
    assert!(
        p.figures.layer_monthly_cents.get() >= 0,
        "diamond layer {} on a $2,000 / $10,000 base",
        p.figures.layer_monthly_cents
    );
    assert_eq!(
        diamond.member_oop_max.embedded_individual_cents.get(),
        200_000
    );
    assert!(
        p.fit_flags
            .iter()
            .any(|f| f == "base_individual_max_below_family_minimum_deductible")
    );
    assert!(
        answer
            .assumptions
            .iter()
            .any(|a| a.contains("per-member maximum in family coverage"))
    );
    check_money_signs(&serde_json::to_value(&answer).unwrap()).unwrap();
}

/// `census` with one person (in record-then-dependent order) born `days`
/// earlier.
fn make_older(census: &[CensusMember], who: Index, days: i64) -> Vec<CensusMember> {
    let slots: Vec<(usize, Option<usize>)> = census
        .iter()
        .enumerate()
        .flat_map(|(i, m)| {
            let deps = m.dependents.as_ref().map_or(0, Vec::len);
            std::iter::once((i, None)).chain((0..deps).map(move |j| (i, Some(j))))
        })
        .collect();
    let mut out = census.to_vec();
    let Some(&(i, dep)) = slots.get(who.index(slots.len())) else {
        return out;
    };
    let Some(m) = out.get_mut(i) else {
        return out;
    };
    let dob = match dep {
        None => m.dob.as_mut(),
        Some(j) => m
            .dependents
            .as_mut()
            .and_then(|d| d.get_mut(j))
            .and_then(|d| d.dob.as_mut()),
    };
    if let Some(d) = dob {
        *d -= Duration::days(days);
    }
    out
}

/// The test-side recomputation of a partner plan's monthly cost (used by
/// invariant 2) on a hand example: PMPM per person, tier rates per tier.
#[test]
fn plan_monthly_recomputation_matches_a_hand_example() {
    use crate::support::{dependent, member};
    use pricing_core::Relationship;
    use time::macros::date;
    let mut fam = member("E-1", date!(1980 - 05 - 05), "10001");
    fam.dependents = Some(vec![
        dependent(Relationship::Spouse, date!(1981 - 01 - 01)),
        dependent(Relationship::Child, date!(2015 - 01 - 01)),
    ]);
    let single = member("E-2", date!(1990 - 05 - 05), "60601");
    let census = [fam, single];
    assert_eq!(plan_monthly(&census, PlanRates::Pmpm(50_000)), 4 * 50_000);
    let tiers = pricing_core::plan::TierRates {
        employee_only: 1,
        employee_spouse: 10,
        employee_children: 100,
        family: 1000,
    };
    assert_eq!(plan_monthly(&census, PlanRates::Tiers(tiers)), 1001);
}
