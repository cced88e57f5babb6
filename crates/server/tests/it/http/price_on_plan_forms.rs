//! `POST /v1/price-on-plan`'s two answer forms: the snake_case form of
//! broker keys and the camelCase form of HR platform keys, key by key as
//! the specification lists them, their invariants, snapshots of both,
//! each rate basis, the market-plan classification, and `fields` /
//! `exclude`.
//!
//! Snapshots live in `snapshots/` beside this file, with ids and
//! timestamps masked; `UPDATE_SNAPSHOTS=1` rewrites them.

mod bases;
mod fields;
mod forms;
mod snapshots;

use serde_json::Value;

use crate::http::price_on_plan::{int, items, keys, set};

/// Top-level keys of the snake_case form.
pub(super) const SNAKE_TOP: &[&str] = &[
    "quote_id",
    "group_id",
    "status",
    "reason",
    "plans",
    "assumptions",
    "ignored_plans",
];

/// Keys of a snake_case version object.
pub(super) const SNAKE_VERSION: &[&str] = &[
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

/// Keys of an ignored plan (both forms).
pub(super) const IGNORED: &[&str] = &["index", "reason", "carrier", "planName"];

/// Top-level keys of the camelCase form.
pub(super) const CAMEL_TOP: &[&str] = &[
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
const CAMEL_VERSION: &[&str] = &[
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

/// The keys of each object inside a camelCase version, by JSON pointer.
const CAMEL_NESTED: &[(&str, &[&str])] = &[
    ("/monthly", &["totalCents", "pepmCents", "pmpmCents"]),
    ("/annual", &["totalCents"]),
    (
        "/pricedAgainst",
        &["carrier", "planName", "metalTier", "source", "label"],
    ),
    (
        "/benchmarkPlan",
        &["carrier", "planName", "metalTier", "network"],
    ),
    (
        "/benefits",
        &[
            "oopMaxIndividualCents",
            "oopMaxEmployeePlusOneCents",
            "oopMaxFamilyCents",
            "memberCoinsurancePct",
            "hsaEligible",
            "network",
            "features",
        ],
    ),
    (
        "/price_components",
        &[
            "underlying_premium_monthly_cents",
            "service_monthly_cents",
            "total_monthly_cents",
            "underlying_pmpm_cents",
            "service_pmpm_cents",
            "total_pmpm_cents",
        ],
    ),
    (
        "/worst_year",
        &[
            "modeled_extra_cents",
            "modeled_total_cents",
            "benchmark_premium_cents",
            "headroom_cents",
            "basis",
            "contractual",
            "note",
            "recompute",
        ],
    ),
    (
        "/worst_year/recompute",
        &[
            "underlying_annual_premium_cents",
            "theoretical_exposure_cents",
            "member_oop_allowance_cents",
        ],
    ),
    (
        "/base_plan",
        &[
            "carrier",
            "plan_name",
            "deductible_individual_cents",
            "deductible_family_cents",
            "label",
        ],
    ),
    ("/member_oop_max", &["individual_cents", "family_cents"]),
    ("/rate_basis", &["base_plan", "benchmark"]),
    (
        "/all_max_year",
        &[
            "base_premium_cents",
            "service_cents",
            "modeled_extra_cents",
            "employer_total_cents",
            "members_pay_cents",
        ],
    ),
    (
        "/median_year",
        &[
            "employer_total_cents",
            "pool_pays_cents",
            "members_pay_cents",
        ],
    ),
    (
        "/time_machine",
        &["simulated_plan_years", "census_members", "generated_at"],
    ),
    ("/hsa", &["eligible", "basis"]),
    ("/renewal", &["method", "note"]),
    (
        "/comparison",
        &[
            "benchmark",
            "annualSavingsCents",
            "savingsPct",
            "worstYearUnderBenchmarkCents",
            "oopMaxIndividualLowerByCents",
            "oopMaxFamilyLowerByCents",
            "hsaEligibleWhereBenchmarkIsNot",
        ],
    ),
    (
        "/comparison/benchmark",
        &[
            "carrier",
            "planName",
            "metalTier",
            "annualCents",
            "deductibleIndividualCents",
            "oopMaxIndividualCents",
            "oopMaxFamilyCents",
            "hsaEligible",
        ],
    ),
    (
        "/joint",
        &[
            "name",
            "option",
            "basePmpmCents",
            "serviceLayerPmpmCents",
            "totalPmpmCents",
            "totalPepmCents",
            "monthlyCents",
            "annualCents",
            "baseDeductibleIndividualCents",
            "memberOopMaxIndividualCents",
            "memberOopMaxFamilyCents",
            "modeledWorstYearCents",
            "summary",
        ],
    ),
    (
        "/serviceOnly",
        &[
            "pmpmCents",
            "pepmCents",
            "monthlyCents",
            "annualCents",
            "note",
        ],
    ),
];

/// The fields `underlyingPlan` has besides the market plan's own.
const UNDERLYING: &[&str] = &[
    "carrier",
    "planName",
    "network",
    "source",
    "fundingType",
    "brokerPlan",
    "note",
];

// -------------------------------------------------------- camel form --

/// Asserts every key of a priced camelCase version and its invariants.
pub(super) fn check_camel_version(v: &Value) {
    assert_eq!(keys(v), set(CAMEL_VERSION), "{}", v["id"]);
    for (pointer, names) in CAMEL_NESTED {
        let at = v.pointer(pointer).unwrap_or_else(|| panic!("{pointer}"));
        assert_eq!(keys(at), set(names), "{pointer} of {}", v["id"]);
    }
    let underlying = keys(&v["underlyingPlan"]);
    assert!(
        set(UNDERLYING).is_subset(&underlying),
        "underlyingPlan: {underlying:?}"
    );
    for f in items(v, "/benefits/features") {
        assert_eq!(keys(f), set(&["title", "description"]), "{f}");
    }
    for r in items(v, "/monthly_rates_by_household") {
        assert_eq!(
            keys(r),
            set(&["label", "people", "households", "monthly_cents"]),
            "{r}"
        );
    }
    for r in items(v, "/new_member_rates_by_household") {
        assert_eq!(keys(r), set(&["label", "people", "monthly_cents"]), "{r}");
    }
    assert!(v["benchmark_rank"].is_u64(), "{}", v["benchmark_rank"]);
    assert!(v["member_experience"].is_string());
    assert!(v["broker_row"].is_string() && v["summary"].is_string());
    assert!(items(v, "/fit_flags").iter().all(Value::is_string));

    let i = |p: &str| int(v, p);
    assert_eq!(
        i("/joint/basePmpmCents") + i("/joint/serviceLayerPmpmCents"),
        i("/joint/totalPmpmCents")
    );
    assert_eq!(i("/annual/totalCents"), 12 * i("/monthly/totalCents"));
    assert_eq!(
        i("/worst_year/headroom_cents"),
        i("/worst_year/benchmark_premium_cents") - i("/worst_year/modeled_total_cents")
    );
    assert_eq!(v["worst_year"]["contractual"], false);
    assert!(i("/median_year/employer_total_cents") <= i("/all_max_year/employer_total_cents"));
    assert_eq!(
        i("/price_components/total_monthly_cents") - i("/price_components/service_monthly_cents"),
        i("/price_components/underlying_premium_monthly_cents")
    );
    // modeled_total = base + service + extra (pricing model 7 and 9.3).
    assert_eq!(
        i("/worst_year/modeled_total_cents"),
        i("/worst_year/recompute/underlying_annual_premium_cents")
            + i("/all_max_year/service_cents")
            + i("/worst_year/modeled_extra_cents")
    );
    assert_eq!(
        i("/worst_year/recompute/underlying_annual_premium_cents"),
        12 * i("/price_components/underlying_premium_monthly_cents")
    );
    assert_eq!(
        i("/all_max_year/employer_total_cents"),
        i("/worst_year/modeled_total_cents")
    );
    // The same figures, named several ways, agree.
    assert_eq!(i("/monthly/totalCents"), i("/joint/monthlyCents"));
    assert_eq!(
        i("/monthly/totalCents"),
        i("/price_components/total_monthly_cents")
    );
    assert_eq!(i("/monthly/pmpmCents"), i("/joint/totalPmpmCents"));
    assert_eq!(
        i("/serviceOnly/monthlyCents"),
        i("/price_components/service_monthly_cents")
    );
    assert_eq!(
        i("/serviceOnly/annualCents"),
        12 * i("/serviceOnly/monthlyCents")
    );
    assert_eq!(
        i("/member_oop_max/individual_cents"),
        i("/benefits/oopMaxIndividualCents")
    );
    assert_eq!(
        i("/member_oop_max/family_cents"),
        i("/joint/memberOopMaxFamilyCents")
    );
    assert!(v["worst_year"]["basis"].is_string());
}
