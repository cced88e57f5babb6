//! A 10,000-employee census, generated deterministically into a scratch
//! directory, priced as a quote and on a plan; the invariants must hold at
//! scale and the run time is printed (`--nocapture` shows it).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::common::{
    array, at, check_price_on_plan, check_quote, example, int, ok, price, scratch, string, write,
};

/// Counted employees of the generated census.
const EMPLOYEES: u64 = 10_000;

/// Counted employees of the price-on-plan run: all of them. The workspace
/// builds `pricing-core` optimized even for tests, so a run takes seconds.
const PLAN_EMPLOYEES: u64 = EMPLOYEES;

/// SplitMix64: small, deterministic and good enough to mix a census.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// Picks from `(weight, item)` pairs.
    fn pick<T: Copy>(&mut self, items: &[(u64, T)]) -> T {
        let total: u64 = items.iter().map(|(w, _)| w).sum();
        let mut r = self.below(total);
        for &(w, item) in items {
            if r < w {
                return item;
            }
            r -= w;
        }
        panic!("empty pick")
    }

    fn date(&mut self, from_year: u64, to_year: u64) -> String {
        format!(
            "{}-{:02}-{:02}",
            self.range(from_year, to_year),
            self.range(1, 12),
            self.range(1, 28)
        )
    }
}

#[derive(Clone, Copy)]
enum Household {
    EmployeeOnly,
    Spouse,
    Children,
    Family,
    Unknown,
}

/// Generates a census of `employees` counted employees and returns its JSON
/// with the number of rows.
/// San Francisco, Chicago, New York, Houston and Miami ZIPs, plus a few in an
/// area without public benchmark data (priced with its state's median
/// area) and a few the card does not map (rated in the primary area); a fifth of the
/// households unknown; contractors and terminated members interleaved.
fn generate(seed: u64, employees: u64) -> (String, u64) {
    let mut rng = Rng(seed);
    let zips: [(u64, &str); 8] = [
        (30, "94103"),
        (20, "94110"),
        (18, "60601"),
        (14, "10001"),
        (10, "77002"),
        (7, "33101"),
        (1, "32456"),
        (1, "00601"),
    ];
    let households = [
        (40, Household::EmployeeOnly),
        (12, Household::Spouse),
        (10, Household::Children),
        (18, Household::Family),
        (20, Household::Unknown),
    ];
    let sexes = [(49, "female"), (49, "male"), (2, "other")];
    let mut out = String::from("{\"members\":[\n");
    let (mut counted, mut rows) = (0u64, 0u64);
    while counted < employees {
        rows += 1;
        let n = rows;
        let kind = rng.below(1000);
        let (employment, status) = match kind {
            0..=14 => (Some("contractor"), None),
            15..=19 => (Some("full_time"), Some("terminated")),
            20..=69 => (None, None),
            70..=219 => (Some("part_time"), Some("active")),
            _ => (Some("full_time"), None),
        };
        let is_counted = employment != Some("contractor") && status != Some("terminated");
        if is_counted {
            counted += 1;
        }
        if n > 1 {
            out.push_str(",\n");
        }
        let _ = write!(
            out,
            r#"{{"external_id":"E{n:05}","first_name":"First{n}","last_name":"Last{n}","email":"e{n}@example.com","dob":"{}","zip":"{}","sex_at_birth":"{}","hire_date":"{}""#,
            rng.date(1961, 2004),
            rng.pick(&zips),
            rng.pick(&sexes),
            rng.date(2005, 2025),
        );
        if let Some(e) = employment {
            let _ = write!(out, r#","employment_type":"{e}""#);
        }
        if let Some(s) = status {
            let _ = write!(out, r#","status":"{s}""#);
        }
        let (spouse, children) = match rng.pick(&households) {
            Household::Unknown => {
                out.push('}');
                continue;
            }
            Household::EmployeeOnly => (false, 0),
            Household::Spouse => (true, 0),
            Household::Children => (false, rng.range(1, 3)),
            Household::Family => (true, rng.range(1, 5)),
        };
        let mut deps = Vec::new();
        if spouse {
            let relationship = if rng.below(10) == 0 {
                "domestic_partner"
            } else {
                "spouse"
            };
            deps.push(format!(
                r#"{{"relationship":"{relationship}","name":"Partner{n}","dob":"{}","sex_at_birth":"{}"}}"#,
                rng.date(1958, 2004),
                rng.pick(&sexes)
            ));
        }
        for c in 0..children {
            // Mostly minors; now and then an adult child or an "other".
            let relationship = if rng.below(25) == 0 { "other" } else { "child" };
            let dob = if rng.below(200) == 0 {
                "2026-03-15".to_owned() // born after the plan-year start
            } else {
                rng.date(2000, 2025)
            };
            deps.push(format!(
                r#"{{"relationship":"{relationship}","name":"Child{n}-{c}","dob":"{dob}"}}"#
            ));
        }
        let _ = write!(out, r#","dependents":[{}]}}"#, deps.join(","));
    }
    out.push_str("\n]}\n");
    (out, rows)
}

fn census_file(dir: &Path, employees: u64) -> (PathBuf, u64) {
    let (json, rows) = generate(2026, employees);
    (write(dir, &format!("census_{employees}.json"), &json), rows)
}

#[test]
fn generator_is_deterministic() {
    let (a, rows) = generate(7, 1_000);
    let (b, _) = generate(7, 1_000);
    assert_eq!(a, b);
    assert!(
        rows > 1_000,
        "contractors and terminated members are mixed in"
    );
    let parsed: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert_eq!(
        array(&parsed, "/members").len(),
        usize::try_from(rows).unwrap()
    );
}

#[test]
fn ten_thousand_employees_are_priced() {
    let dir = scratch("ten_thousand");
    let (census, _) = census_file(&dir, EMPLOYEES);
    let employees = i64::try_from(EMPLOYEES).unwrap();

    let (plan_census, rows) = census_file(&dir, PLAN_EMPLOYEES);
    let plan_employees = i64::try_from(PLAN_EMPLOYEES).unwrap();
    let timed = |mut cmd: Command| {
        let started = Instant::now();
        let out = ok(&mut cmd);
        (out, started.elapsed())
    };
    // The generated census is dated against a plan year starting on
    // 2026-01-01 (some children are born after it).
    let dated = |file: &std::path::Path| {
        let mut cmd = price(file);
        cmd.args(["--plan-year-start", "2026-01-01"]);
        cmd
    };
    let mut plan_cmd = dated(&plan_census);
    plan_cmd
        .arg("--plan")
        .arg(example("plan.json"))
        .arg("--market-plans")
        .arg(example("market_plans.json"));
    // The two runs are independent: run them side by side.
    let ((q, quote_time), (p, plan_time)) = std::thread::scope(|s| {
        let quote = s.spawn(|| timed(dated(&census)));
        let plan = timed(plan_cmd);
        (quote.join().unwrap(), plan)
    });

    check_quote(&q, employees);
    assert_eq!(
        string(&q, "/status"),
        "in_review",
        "above the in-review threshold"
    );
    let assumptions = at(&q, "/assumptions").to_string();
    for needle in [
        "contractors are excluded",
        "terminated members are excluded",
        "without an employment type counted as full time",
        "households without submitted dependents",
        "born after the plan-year start",
        "whose ZIP has no priced rating area",
        "ZIP 32456 is in FL-22, which has no 2026 public benchmark",
    ] {
        assert!(assumptions.contains(needle), "{needle}: {assumptions}");
    }

    check_price_on_plan(&p, plan_employees);
    assert_eq!(int(&p, "/census_members"), i64::try_from(rows).unwrap());
    assert_eq!(string(&p, "/status"), "in_review");
    assert_eq!(string(&p, "/pricing_method"), "engine");
    assert_eq!(array(&p, "/versions").len(), 2);
    for v in array(&p, "/versions") {
        assert_eq!(string(v, "/status"), "in_review");
        let flags = at(v, "/priced/fit_flags").to_string();
        assert!(flags.contains("in_review"), "{flags}");
        assert!(flags.contains("household_mix_assumed"), "{flags}");
    }
    if PLAN_EMPLOYEES == EMPLOYEES {
        // The quote and price-on-plan see the same census.
        assert_eq!(int(&q, "/census/covered_lives"), int(&p, "/covered_lives"));
    }

    println!(
        "quote of {EMPLOYEES} employees: {:.1} s; price-on-plan of {PLAN_EMPLOYEES} employees ({rows} rows): {:.1} s",
        quote_time.as_secs_f64(),
        plan_time.as_secs_f64()
    );
}
