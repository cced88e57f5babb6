//! `POST /v1/price-on-plan`'s two answer forms: the snake_case form of
//! broker keys and the camelCase form of HR platform keys, key by key as
//! the specification lists them, their invariants, snapshots of both,
//! each rate basis, the market-plan classification, and `fields` /
//! `exclude`.
//!
//! Snapshots live in `snapshots/` beside this file, with ids and
//! timestamps masked; `UPDATE_SNAPSHOTS=1` rewrites them.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::price_on_plan::{
    app_with, assumes, census, census_and_plan, examples, int, is_id, items, keys, market_plans,
    plan, price, price_ok, quote_creates, set, text,
};
use crate::http::{TestApp, get, send};

/// Top-level keys of the snake_case form.
const SNAKE_TOP: &[&str] = &[
    "quote_id",
    "group_id",
    "status",
    "reason",
    "plans",
    "assumptions",
    "ignored_plans",
];

/// Keys of a snake_case version object.
const SNAKE_VERSION: &[&str] = &[
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
const IGNORED: &[&str] = &["index", "reason", "carrier", "planName"];

/// Top-level keys of the camelCase form.
const CAMEL_TOP: &[&str] = &[
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

/// The example plan without its family deductible and maximum.
fn plan_without_family() -> Value {
    let mut p = plan();
    let fields = p.as_object_mut().unwrap();
    fields.remove("deductible_family_cents");
    fields.remove("oop_max_family_cents");
    p
}

/// A plan with no rates yet, to add one basis to.
fn rateless_plan() -> Value {
    json!({"carrier": "Acme Health", "plan_name": "PPO HSA 3400", "plan_type": "PPO",
           "hsa_eligible": true, "deductible_individual_cents": 340000,
           "oop_max_individual_cents": 750000})
}

/// Three employee-only households in Chicago: `E0`, `E1`, `E2`.
fn three() -> Value {
    crate::http::price_on_plan::employees(3, "60601")
}

// -------------------------------------------------------- snake form --

crate::http_on_both!(a_broker_gets_the_snake_form);
async fn a_broker_gets_the_snake_form(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let a = price_ok(&svc, &key, &examples(), 201).await;
    let b = &a.body;
    assert_eq!(keys(b), set(SNAKE_TOP), "{b}");
    let qid = text(b, "/quote_id");
    assert!(is_id(qid, "qt_"), "{qid}");
    assert!(is_id(text(b, "/group_id"), "grp_"), "{b}");
    assert_eq!(a.header("location"), Some(&*format!("/v1/quotes/{qid}")));
    assert_eq!(
        (&b["status"], &b["reason"]),
        (&json!("ready"), &Value::Null)
    );
    let plans = items(b, "/plans");
    let ids: Vec<&str> = plans.iter().map(|p| text(p, "/id")).collect();
    assert_eq!(ids, ["diamond", "value"]);
    for p in plans {
        assert_eq!(keys(p), set(SNAKE_VERSION), "{p}");
        assert_eq!(
            (&p["status"], &p["reason"]),
            (&json!("ready"), &Value::Null)
        );
        let pmpm = int(p, "/pmpm_cents");
        assert_eq!(
            pmpm,
            int(p, "/your_plan_pmpm_cents") + int(p, "/service_pmpm_cents"),
            "{p}"
        );
        // A PMPM plan: its own PMPM comes back unchanged.
        assert_eq!(int(p, "/your_plan_pmpm_cents"), 52_000, "{p}");
        assert_eq!(int(p, "/deductible_cents"), 340_000, "{p}");
        assert!(int(p, "/max_extra_cents") >= 0, "{p}");
        let (monthly, service) = (
            int(p, "/monthly_premium_cents"),
            int(p, "/service_monthly_cents"),
        );
        assert!(monthly > service && service > 0, "{p}");
        assert!(int(p, "/service_pmpm_cents") > 0, "{p}");
    }
    assert_eq!(plans[0]["plan_name"], "Diamond");
    assert_eq!(plans[1]["plan_name"], "Value");
    assert_eq!(int(&plans[0], "/oop_max_cents"), 170_000);
    assert_eq!(int(&plans[1], "/oop_max_cents"), 340_000);
    // Diamond caps lower, so its layer costs more.
    assert!(int(&plans[0], "/service_pmpm_cents") >= int(&plans[1], "/service_pmpm_cents"));

    let ignored = items(b, "/ignored_plans");
    assert_eq!(ignored.len(), 3, "{b}");
    for i in ignored {
        assert_eq!(keys(i), set(IGNORED), "{i}");
    }
    assert!(assumes(b, "Plan year starts 2026-12-01"), "{b}");
    assert!(assumes(b, "Company ZIP 94103"), "{b}");
    assert!(assumes(b, "generated company"), "{b}");
    assert!(!assumes(b, "Family deductible assumed"), "{b}");
    assert!(!assumes(b, "Family out-of-pocket maximum assumed"), "{b}");

    // Without the family amounts they default to twice the individual
    // ones (what the example plan says anyway), and that is disclosed.
    let mut defaulted = examples();
    defaulted["plan"] = plan_without_family();
    let d = price_ok(&svc, &key, &defaulted, 201).await;
    assert_ne!(d.body["quote_id"], b["quote_id"]);
    assert!(
        assumes(
            &d.body,
            "Family deductible assumed at twice the individual deductible"
        ),
        "{}",
        d.body
    );
    assert!(
        assumes(&d.body, "Family out-of-pocket maximum assumed at twice"),
        "{}",
        d.body
    );
    assert_eq!(d.body["plans"], b["plans"]);
}

// -------------------------------------------------------- camel form --

/// Asserts every key of a priced camelCase version and its invariants.
fn check_camel_version(v: &Value) {
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

crate::http_on_both!(an_hr_platform_gets_the_camel_form);
async fn an_hr_platform_gets_the_camel_form(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, hr) = app.hr_platform().await;
    let (_, broker) = app.broker().await;
    let a = price_ok(&svc, &hr, &examples(), 201).await;
    let b = &a.body;
    assert_eq!(keys(b), set(CAMEL_TOP), "{b}");
    let qid = text(b, "/quoteId");
    assert!(
        is_id(qid, "qt_") && is_id(text(b, "/groupId"), "grp_"),
        "{b}"
    );
    assert_eq!(a.header("location"), Some(&*format!("/v1/quotes/{qid}")));
    assert_eq!(
        (&b["status"], &b["reason"]),
        (&json!("ready"), &Value::Null)
    );
    assert_eq!(
        keys(&b["usedPlans"]),
        set(&["sent", "used", "baseCandidates", "benchmarkCandidates"])
    );
    let tm = json!({"simulated_plan_years": 2000, "census_members": 12,
                    "generated_at": "2026-11-21T13:14:00Z"});
    assert_eq!(b["time_machine"], tm);
    for i in items(b, "/ignoredPlans") {
        assert_eq!(keys(i), set(IGNORED), "{i}");
    }
    let versions = items(b, "/versions");
    let ids: Vec<&str> = versions.iter().map(|v| text(v, "/id")).collect();
    assert_eq!(ids, ["diamond", "value"]);
    for v in versions {
        check_camel_version(v);
        assert_eq!(
            (&v["status"], &v["reason"]),
            (&json!("ready"), &Value::Null)
        );
        assert_eq!(v["time_machine"], tm);
        assert_eq!(v["hsa"]["eligible"], true);
        assert_eq!(int(v, "/joint/basePmpmCents"), 52_000);
        assert_eq!(int(v, "/base_plan/deductible_individual_cents"), 340_000);
        assert_eq!(v["underlyingPlan"]["source"], "partner_plan");
        assert_eq!(v["underlyingPlan"]["brokerPlan"], Value::Null);
    }
    assert_eq!(versions[0]["name"], "Diamond");
    assert_eq!(
        int(&versions[0], "/member_oop_max/individual_cents"),
        170_000
    );
    assert_eq!(
        int(&versions[1], "/member_oop_max/individual_cents"),
        340_000
    );

    // Both forms carry the same figures.
    let s = price_ok(&svc, &broker, &examples(), 201).await;
    for (p, v) in items(&s.body, "/plans").iter().zip(versions) {
        let pairs = [
            ("/pmpm_cents", "/joint/totalPmpmCents"),
            ("/your_plan_pmpm_cents", "/joint/basePmpmCents"),
            ("/service_pmpm_cents", "/joint/serviceLayerPmpmCents"),
            ("/monthly_premium_cents", "/monthly/totalCents"),
            ("/service_monthly_cents", "/serviceOnly/monthlyCents"),
            ("/deductible_cents", "/joint/baseDeductibleIndividualCents"),
            ("/oop_max_cents", "/member_oop_max/individual_cents"),
            ("/max_extra_cents", "/worst_year/modeled_extra_cents"),
        ];
        for (snake, camel) in pairs {
            assert_eq!(int(p, snake), int(v, camel), "{snake} vs {camel}");
        }
    }
    assert_eq!(s.body["assumptions"], b["assumptions"]);
    assert_eq!(s.body["ignored_plans"], b["ignoredPlans"]);
}

// ---------------------------------------------------------- snapshots --

/// Where snapshot `name` is kept.
fn snapshot_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/http/snapshots")
        .join(format!("{name}.json"))
}

/// Whether `s` is an RFC 3339 UTC timestamp of second precision.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 20
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

/// Masks ids and timestamps.
fn mask(v: &mut Value) {
    match v {
        Value::String(s) if is_id(s, "qt_") => *s = "qt_<id>".to_owned(),
        Value::String(s) if is_id(s, "grp_") => *s = "grp_<id>".to_owned(),
        Value::String(s) if is_timestamp(s) => *s = "<timestamp>".to_owned(),
        Value::Array(items) => items.iter_mut().for_each(mask),
        Value::Object(map) => map.values_mut().for_each(mask),
        _ => {}
    }
}

/// Compares `body` (masked, pretty-printed) with snapshot `name`, or
/// rewrites the snapshot when `UPDATE_SNAPSHOTS=1`.
fn snapshot(name: &str, body: &Value) {
    let mut masked = body.clone();
    mask(&mut masked);
    let got = format!("{}\n", serde_json::to_string_pretty(&masked).unwrap());
    let path = snapshot_path(name);
    if std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with UPDATE_SNAPSHOTS=1 to write it",
            path.display()
        )
    });
    if want != got {
        let line = want
            .lines()
            .zip(got.lines())
            .position(|(w, g)| w != g)
            .unwrap_or_else(|| want.lines().count().min(got.lines().count()));
        let around = |s: &str| {
            s.lines()
                .skip(line.saturating_sub(3))
                .take(7)
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!(
            "snapshot {name} differs at line {} (UPDATE_SNAPSHOTS=1 rewrites it)\n--- want\n{}\n--- got\n{}",
            line + 1,
            around(&want),
            around(&got)
        );
    }
}

crate::http_on_both!(snapshots_pin_both_answer_forms);
async fn snapshots_pin_both_answer_forms(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, broker) = app.broker().await;
    let (_, hr) = app.hr_platform().await;
    let a = price_ok(&svc, &broker, &examples(), 201).await;
    snapshot("price_on_plan_broker", &a.body);
    let a = price_ok(&svc, &hr, &examples(), 201).await;
    snapshot("price_on_plan_hr", &a.body);
    let market = json!({"census": census(), "marketPlans": market_plans()});
    let a = price_ok(&svc, &hr, &market, 201).await;
    snapshot("price_on_plan_hr_base_from_market", &a.body);
}

crate::http_on_both!(snapshots_pin_both_pending_forms);
async fn snapshots_pin_both_pending_forms(db: TestDb) {
    let app = TestApp::with_wait_budget(db, Duration::ZERO);
    let svc = app.service().await;
    let (_, broker) = app.broker().await;
    let (_, hr) = app.hr_platform().await;
    let a = price_ok(&svc, &broker, &examples(), 202).await;
    snapshot("price_on_plan_pending_broker", &a.body);
    let a = price_ok(&svc, &hr, &examples(), 202).await;
    snapshot("price_on_plan_pending_hr", &a.body);
}

// -------------------------------------------------------- rate bases --

crate::http_on_both!(each_rate_basis_prices_the_base_plan);
async fn each_rate_basis_prices_the_base_plan(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, broker) = app.broker().await;
    let (_, hr) = app.hr_platform().await;
    let rates = |cents: &[i64]| -> Value {
        cents
            .iter()
            .enumerate()
            .map(|(i, c)| json!({"external_id": format!("E{i}"), "monthly_cents": c}))
            .collect()
    };
    // (rates added to the plan, basis, base monthly, base PMPM); three
    // employee-only households.
    let cases = [
        (json!({"pmpm_cents": 52_000}), "pmpm", 156_000, 52_000),
        (
            json!({"monthly_rates_cents": {"employee_only": 45_000, "employee_spouse": 90_000,
                                           "employee_children": 80_000, "family": 130_000}}),
            "monthly_rates",
            135_000,
            45_000,
        ),
        // Member rates are preferred over the PMPM fallback.
        (
            json!({"member_rates_cents": rates(&[40_000, 50_000, 61_000]), "pmpm_cents": 99_999}),
            "member_rates",
            151_000,
            50_333,
        ),
        // E2 has no member rate: it falls back to the PMPM.
        (
            json!({"member_rates_cents": rates(&[40_000, 50_000]), "pmpm_cents": 60_000}),
            "member_rates",
            150_000,
            50_000,
        ),
        // ... or to the tier rates.
        (
            json!({"member_rates_cents": rates(&[40_000, 50_000]),
                   "monthly_rates_cents": {"employee_only": 45_000, "employee_spouse": 90_000,
                                           "employee_children": 80_000, "family": 130_000}}),
            "member_rates",
            135_000,
            45_000,
        ),
    ];
    for (n, (extra, basis, monthly, pmpm)) in cases.into_iter().enumerate() {
        let mut p = rateless_plan();
        for (k, v) in extra.as_object().unwrap() {
            p[k] = v.clone();
        }
        let body = json!({"census": three(), "plan": p});
        let h = price_ok(&svc, &hr, &body, 201).await;
        for v in items(&h.body, "/versions") {
            assert_eq!(v["rate_basis"]["base_plan"], basis, "case {n}");
            assert_eq!(v["rate_basis"]["benchmark"], "rate_card", "case {n}");
            let pc = &v["price_components"];
            assert_eq!(
                int(pc, "/underlying_premium_monthly_cents"),
                monthly,
                "case {n}"
            );
            assert_eq!(int(pc, "/underlying_pmpm_cents"), pmpm, "case {n}");
        }
        let fallback = n == 3 || n == 4;
        assert_eq!(
            assumes(
                &h.body,
                "1 employee without a member rate priced on the plan's fallback rate"
            ),
            fallback,
            "case {n}: {}",
            h.body["assumptions"]
        );
        let s = price_ok(&svc, &broker, &body, 201).await;
        for p in items(&s.body, "/plans") {
            assert_eq!(int(p, "/your_plan_pmpm_cents"), pmpm, "case {n}");
            assert_eq!(
                int(p, "/monthly_premium_cents") - int(p, "/service_monthly_cents"),
                monthly,
                "case {n}"
            );
        }
    }
}

// ------------------------------------------------ market classification --

crate::http_on_both!(market_plans_are_classified);
async fn market_plans_are_classified(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, hr) = app.hr_platform().await;

    // A platinum PPO among the market plans: the engine prices against it.
    let a = price_ok(&svc, &hr, &examples(), 201).await;
    let b = &a.body;
    assert_eq!(b["pricingMethod"], "engine");
    let used = json!({"sent": 5, "used": 2, "baseCandidates": 1, "benchmarkCandidates": 1});
    assert_eq!(b["usedPlans"], used);
    let ignored = items(b, "/ignoredPlans");
    let indexes: Vec<i64> = ignored.iter().map(|i| int(i, "/index")).collect();
    assert_eq!(indexes, [1, 3, 4]);
    assert!(text(&ignored[0], "/reason").contains("HMO"), "{b}");
    assert!(
        text(&ignored[1], "/reason").contains("not HSA-eligible"),
        "{b}"
    );
    assert!(text(&ignored[2], "/reason").starts_with("no rates"), "{b}");
    assert_eq!(ignored[0]["carrier"], "Kaiser Permanente");
    assert_eq!(ignored[2]["planName"], "Gold Open Access EPO 1000");
    for v in items(b, "/versions") {
        assert_eq!(v["pricing_method"], "engine");
        assert_eq!(v["pricedAgainst"]["source"], "market_plans");
        assert_eq!(
            v["pricedAgainst"]["planName"],
            "Platinum Full PPO 0/10 OffEx"
        );
        assert_eq!(v["benchmarkPlan"]["metalTier"], "Platinum");
        assert_eq!(v["rate_basis"]["benchmark"], "pmpm");
        assert_eq!(v["underlyingPlan"]["source"], "partner_plan");
    }

    // Without one: the card's benchmark, cost plus.
    let a = price_ok(&svc, &hr, &census_and_plan(), 201).await;
    let b = &a.body;
    assert_eq!(b["pricingMethod"], "cost_plus");
    let none = json!({"sent": 0, "used": 0, "baseCandidates": 0, "benchmarkCandidates": 0});
    assert_eq!(b["usedPlans"], none);
    assert_eq!(b["ignoredPlans"], json!([]));
    assert!(assumes(b, "Benchmark: the rate card's"), "{b}");
    for v in items(b, "/versions") {
        assert_eq!(v["pricing_method"], "cost_plus");
        assert_eq!(v["pricedAgainst"]["source"], "rate_card");
        assert_eq!(v["rate_basis"]["benchmark"], "rate_card");
    }

    // Without a plan: the base is chosen among the market plans.
    let market = json!({"census": census(), "marketPlans": market_plans()});
    let a = price_ok(&svc, &hr, &market, 201).await;
    let b = &a.body;
    assert_eq!(b["pricingMethod"], "engine");
    assert!(assumes(b, "Base plan chosen among the market plans"), "{b}");
    for v in items(b, "/versions") {
        check_camel_version(v);
        let u = &v["underlyingPlan"];
        assert_eq!(u["source"], "market_plans", "{u}");
        assert_eq!(u["planName"], "Bronze PPO HSA 3400/7500");
        assert_eq!(u["brokerPlan"]["planName"], "Bronze PPO HSA 3400/7500");
        assert_eq!(u["brokerPlan"]["carrierPlanId"], "ABC-BRZ-PPO-HSA-3400");
        assert_eq!(v["base_plan"]["plan_name"], "Bronze PPO HSA 3400/7500");
        assert_eq!(v["rate_basis"]["base_plan"], "pmpm");
        assert_eq!(int(v, "/joint/basePmpmCents"), 46_500);
    }

    // HSA plans whose maxima break the HDHP rules are ignored, with why.
    let hsa = market_plans()[2].clone();
    let mut inverted = hsa.clone();
    inverted["oopMaxFamilyCents"] = json!(700_000);
    let mut above_irs = hsa.clone();
    above_irs["oopMaxIndividualCents"] = json!(900_000);
    above_irs["oopMaxFamilyCents"] = json!(1_800_000);
    let body = json!({"census": census(), "plan": plan(), "marketPlans": [inverted, above_irs]});
    let a = price_ok(&svc, &hr, &body, 201).await;
    let ignored = items(&a.body, "/ignoredPlans");
    assert_eq!(ignored.len(), 2, "{}", a.body);
    assert!(
        text(&ignored[0], "/reason").contains("family out-of-pocket maximum is below"),
        "{}",
        a.body
    );
    assert!(text(&ignored[1], "/reason").contains("IRS"), "{}", a.body);
    let none_used = json!({"sent": 2, "used": 0, "baseCandidates": 0, "benchmarkCandidates": 0});
    assert_eq!(a.body["usedPlans"], none_used);

    // Only a base candidate among them: base from the market, card
    // benchmark.
    let base_only = json!({"census": census(), "marketPlans": [market_plans()[2].clone()]});
    let a = price_ok(&svc, &hr, &base_only, 201).await;
    let b = &a.body;
    assert_eq!(b["pricingMethod"], "cost_plus");
    let one = json!({"sent": 1, "used": 1, "baseCandidates": 1, "benchmarkCandidates": 0});
    assert_eq!(b["usedPlans"], one);
    for v in items(b, "/versions") {
        assert_eq!(v["underlyingPlan"]["source"], "market_plans");
        assert_eq!(v["pricedAgainst"]["source"], "rate_card");
    }
}

// ---------------------------------------------------- fields, exclude --

crate::http_on_both!(fields_and_exclude_trim_the_answer_for_free);
async fn fields_and_exclude_trim_the_answer_for_free(db: TestDb) {
    // One create an hour per key: every trimmed repeat is a free poll.
    let app = app_with(db, quote_creates(1), Duration::from_secs(10));
    let svc = app.service().await;
    let (_, broker) = app.broker().await;
    let (_, hr) = app.hr_platform().await;
    let with = |k: &str, names: Value| {
        let mut b = examples();
        b[k] = names;
        b
    };

    let full = price_ok(&svc, &broker, &examples(), 201).await;
    for names in [json!(["pmpm_cents"]), json!(["pmpmCents"])] {
        let a = price_ok(&svc, &broker, &with("fields", names), 201).await;
        let b = &a.body;
        assert_eq!(b["quote_id"], full.body["quote_id"]);
        assert_eq!(
            keys(b),
            set(&["quote_id", "group_id", "status", "reason", "plans"]),
            "{b}"
        );
        for (p, f) in items(b, "/plans").iter().zip(items(&full.body, "/plans")) {
            assert_eq!(
                keys(p),
                set(&["id", "status", "reason", "pmpm_cents"]),
                "{p}"
            );
            assert_eq!(p["pmpm_cents"], f["pmpm_cents"]);
        }
    }
    let a = price_ok(&svc, &broker, &with("exclude", json!(["assumptions"])), 201).await;
    let mut want = set(SNAKE_TOP);
    want.remove("assumptions");
    assert_eq!(keys(&a.body), want);
    assert_eq!(a.body["plans"], full.body["plans"]);
    // The stored answer is whole.
    let qid = text(&full.body, "/quote_id");
    let read = send(&svc, get(&format!("/v1/quotes/{qid}"), &broker)).await;
    assert_eq!(read.body, full.body);

    let full = price_ok(&svc, &hr, &examples(), 201).await;
    let mut trimmed = Vec::new();
    for names in [
        json!(["monthly", "worst_year"]),
        json!(["monthly", "worstYear"]),
    ] {
        let a = price_ok(&svc, &hr, &with("fields", names), 201).await;
        let b = &a.body;
        assert_eq!(b["quoteId"], full.body["quoteId"]);
        assert_eq!(
            keys(b),
            set(&["quoteId", "groupId", "status", "reason", "versions"]),
            "{b}"
        );
        for v in items(b, "/versions") {
            assert_eq!(
                keys(v),
                set(&["id", "status", "reason", "monthly", "worst_year"]),
                "{v}"
            );
        }
        trimmed.push(a.body);
    }
    assert_eq!(trimmed[0], trimmed[1]);
    let a = price_ok(
        &svc,
        &hr,
        &with("exclude", json!(["time_machine", "ignoredPlans"])),
        201,
    )
    .await;
    let mut want = set(CAMEL_TOP);
    want.remove("time_machine");
    want.remove("ignoredPlans");
    assert_eq!(keys(&a.body), want);
    for v in items(&a.body, "/versions") {
        assert!(v.get("time_machine").is_none(), "{v}");
        assert!(v.get("monthly").is_some(), "{v}");
    }
    // Still one create each: another body is limited.
    let other = price(&svc, &hr, &census_and_plan()).await;
    crate::http::assert_error(&other, 429, "rate_limited");
}
