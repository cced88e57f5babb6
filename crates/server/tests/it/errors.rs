//! Malformed input: exit 1, nothing on stdout, and exactly one line on
//! stderr that names the file and the failing field.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{cli, example, fails, price, scratch, write};

/// A valid member, to mix with broken ones.
const GOOD: &str = r#"{"external_id":"E1","zip":"94103","dob":"1985-04-02","dependents":[]}"#;

fn census(dir: &Path, name: &str, members: &[&str]) -> PathBuf {
    write(
        dir,
        name,
        &format!(r#"{{"members":[{}]}}"#, members.join(",")),
    )
}

fn on_plan(census: &Path, plan: &Path) -> Command {
    let mut cmd = price(census);
    cmd.arg("--plan").arg(plan);
    cmd
}

fn assert_names(line: &str, needles: &[&str]) {
    for n in needles {
        assert!(line.contains(n), "`{line}` does not contain `{n}`");
    }
}

#[test]
fn unreadable_files() {
    let dir = scratch("unreadable_files");
    let missing = dir.join("missing.json");
    let line = fails(&mut price(&missing));
    assert_names(&line, &["cannot read census file", "missing.json"]);
    // A directory is not a readable file either.
    let line = fails(&mut price(&dir));
    assert_names(&line, &["cannot read census file"]);
    let line = fails(&mut on_plan(&example("census.json"), &missing));
    assert_names(&line, &["cannot read plan file", "missing.json"]);
    let line = fails(
        price(&example("census.json"))
            .arg("--market-plans")
            .arg(&missing),
    );
    assert_names(&line, &["cannot read market plans file", "missing.json"]);
}

#[test]
fn malformed_json() {
    let dir = scratch("malformed_json");
    let trailing = write(
        &dir,
        "trailing.json",
        &format!(r#"{{"members":[{GOOD},]}}"#),
    );
    let line = fails(&mut price(&trailing));
    assert_names(&line, &["census file", "trailing.json", "line 1"]);
    let truncated = write(&dir, "truncated.json", r#"{"members":[{"zip":"94103""#);
    let line = fails(&mut price(&truncated));
    assert_names(&line, &["census file", "truncated.json", "EOF"]);
    let empty = write(&dir, "empty.json", "");
    fails(&mut price(&empty));
    // A bare array instead of `{"members": [...]}`.
    let bare = write(&dir, "bare.json", &format!("[{GOOD}]"));
    let line = fails(&mut price(&bare));
    assert_names(&line, &["census file", "bare.json", "invalid type"]);
    let plan = write(&dir, "plan.json", r#"{"plan_type": PPO}"#);
    let line = fails(&mut on_plan(&example("census.json"), &plan));
    assert_names(&line, &["plan file", "plan.json"]);
}

#[test]
fn unknown_and_missing_fields_are_named() {
    let dir = scratch("unknown_fields");
    let top = write(&dir, "top.json", r#"{"members":[],"company":{}}"#);
    assert_names(&fails(&mut price(&top)), &["unknown field `company`"]);
    let member = census(
        &dir,
        "member.json",
        &[GOOD, r#"{"zip":"94103","dob":"1980-01-01","salary":90000}"#],
    );
    assert_names(
        &fails(&mut price(&member)),
        &["census file", "member.json", "unknown field `salary`"],
    );
    let dependent = census(
        &dir,
        "dependent.json",
        &[
            r#"{"zip":"94103","dob":"1980-01-01","dependents":[{"relationship":"child","dob":"2015-01-01","school":"x"}]}"#,
        ],
    );
    assert_names(&fails(&mut price(&dependent)), &["unknown field `school`"]);
    let no_zip = census(&dir, "no_zip.json", &[r#"{"dob":"1980-01-01"}"#]);
    assert_names(&fails(&mut price(&no_zip)), &["missing field `zip`"]);
    let both = census(
        &dir,
        "both.json",
        &[r#"{"zip":"94103","dob":"1980-01-01","external_id":"E1","externalId":"E1"}"#],
    );
    assert_names(&fails(&mut price(&both)), &["duplicate field"]);
    let plan = write(
        &dir,
        "plan.json",
        r#"{"plan_type":"PPO","hsa_eligible":true,"deductible_individual_cents":340000,"oop_max_individual_cents":750000,"pmpm_cents":52000,"premium_cents":1}"#,
    );
    assert_names(
        &fails(&mut on_plan(&example("census.json"), &plan)),
        &["plan file", "unknown field `premium_cents`"],
    );
    let market = write(&dir, "market.json", r#"[{"planType":"PPO","pmpmCents":1}]"#);
    assert_names(
        &fails(
            price(&example("census.json"))
                .arg("--market-plans")
                .arg(&market),
        ),
        &["market plans file", "missing field `metal_tier`"],
    );
}

#[test]
fn bad_values_are_named() {
    let dir = scratch("bad_values");
    let date = census(
        &dir,
        "date.json",
        &[r#"{"zip":"94103","dob":"1980-02-30"}"#],
    );
    assert_names(
        &fails(&mut price(&date)),
        &["census file", "invalid date `1980-02-30`"],
    );
    let relationship = census(
        &dir,
        "relationship.json",
        &[
            r#"{"zip":"94103","dob":"1980-01-01","dependents":[{"relationship":"cousin","dob":"2010-01-01"}]}"#,
        ],
    );
    assert_names(
        &fails(&mut price(&relationship)),
        &["unknown variant `cousin`"],
    );
    let zip_number = census(
        &dir,
        "zip_number.json",
        &[r#"{"zip":94103,"dob":"1980-01-01"}"#],
    );
    assert_names(&fails(&mut price(&zip_number)), &["invalid type: integer"]);
    let negative_age = census(&dir, "negative_age.json", &[r#"{"zip":"94103","age":-1}"#]);
    assert_names(
        &fails(price(&negative_age).arg("--allow-age")),
        &["invalid value: integer `-1`"],
    );
}

#[test]
fn duplicate_rows_name_the_later_row() {
    let dir = scratch("duplicates");
    let file = census(&dir, "census.json", &[GOOD, GOOD]);
    assert_eq!(
        fails(&mut price(&file)),
        "error: census[1].external_id: duplicates row 0"
    );
    let two_spouses = census(
        &dir,
        "spouses.json",
        &[
            r#"{"external_id":"E1","zip":"94103","dob":"1985-04-02","dependents":[{"relationship":"spouse","dob":"1985-01-01"},{"relationship":"domestic_partner","dob":"1986-01-01"}]}"#,
        ],
    );
    assert_names(
        &fails(&mut price(&two_spouses)),
        &["census[0].dependents[1].relationship", "at most one spouse"],
    );
    let unborn = census(
        &dir,
        "unborn.json",
        &[r#"{"external_id":"E1","zip":"94103","dob":"2030-01-01","dependents":[]}"#],
    );
    assert_names(
        &fails(&mut price(&unborn)),
        &["census[0].dob", "after the plan-year start"],
    );
    assert_names(
        &fails(price(&example("census.json")).args(["--company-zip", "123"])),
        &["--company-zip"],
    );
}

#[test]
fn bad_zip_names_its_row() {
    let dir = scratch("bad_zip");
    let file = census(
        &dir,
        "census.json",
        &[
            GOOD,
            r#"{"external_id":"E2","zip":"94110","dob":"1990-04-02","dependents":[]}"#,
            r#"{"zip":"9410","dob":"1980-01-01"}"#,
        ],
    );
    let line = fails(&mut price(&file));
    assert_eq!(
        line,
        "error: census[2].zip: must be 5 digits (pattern ^[0-9]{5}$)"
    );
    // The same rule applies to price-on-plan.
    let line = fails(&mut on_plan(&file, &example("plan.json")));
    assert_names(&line, &["census[2].zip"]);
    // Several failures still fit on one line.
    let two = census(
        &dir,
        "two.json",
        &[
            r#"{"zip":"941030","dob":"1980-01-01"}"#,
            r#"{"zip":"ABCDE","dob":"1980-01-01"}"#,
        ],
    );
    assert_names(&fails(&mut price(&two)), &["census[0].zip", "(and 1 more)"]);
}

#[test]
fn broker_member_with_only_age_is_rejected() {
    let dir = scratch("age_only");
    let file = census(&dir, "census.json", &[GOOD, r#"{"zip":"94103","age":40}"#]);
    let line = fails(&mut price(&file));
    assert_names(&line, &["census[1].dob", "age alone is not accepted"]);
    assert_names(
        &fails(&mut on_plan(&file, &example("plan.json"))),
        &["census[1].dob"],
    );
    let dependent = census(
        &dir,
        "dependent.json",
        &[
            r#"{"zip":"94103","dob":"1980-01-01","dependents":[{"relationship":"spouse","age":44}]}"#,
        ],
    );
    assert_names(
        &fails(&mut price(&dependent)),
        &["census[0].dependents[0].dob"],
    );
    // HR platform rules accept it.
    crate::common::ok(price(&file).arg("--allow-age"));
    crate::common::ok(price(&dependent).arg("--allow-age"));
}

#[test]
fn other_census_rules_are_named() {
    let dir = scratch("census_rules");
    let email = census(
        &dir,
        "email.json",
        &[r#"{"zip":"94103","dob":"1980-01-01","email":"not-an-email"}"#],
    );
    assert_names(&fails(&mut price(&email)), &["census[0].email"]);
    let child = r#"{"relationship":"child","dob":"2012-01-01"}"#;
    let seven = format!(
        r#"{{"zip":"94103","dob":"1980-01-01","dependents":[{}]}}"#,
        [child; 7].join(",")
    );
    let many = census(&dir, "many.json", &[&seven]);
    assert_names(
        &fails(&mut price(&many)),
        &["census[0].dependents", "at most 6"],
    );
    let blank = census(
        &dir,
        "blank.json",
        &[r#"{"zip":"94103","dob":"1980-01-01","last_name":"  "}"#],
    );
    assert_names(&fails(&mut price(&blank)), &["census[0].last_name"]);
    let old = census(&dir, "old.json", &[r#"{"zip":"94103","age":121}"#]);
    assert_names(&fails(price(&old).arg("--allow-age")), &["census[0].age"]);
}

#[test]
fn census_that_cannot_be_priced() {
    let dir = scratch("unpriceable");
    let empty = census(&dir, "empty.json", &[]);
    assert_names(&fails(&mut price(&empty)), &["no quotable member"]);
    let contractors = census(
        &dir,
        "contractors.json",
        &[
            r#"{"zip":"94103","dob":"1980-01-01","employment_type":"contractor"}"#,
            r#"{"zip":"94103","dob":"1980-01-01","status":"terminated"}"#,
        ],
    );
    assert_names(&fails(&mut price(&contractors)), &["no quotable member"]);
    // Neither ZIP is mapped (00601 is in Puerto Rico, a territory the card
    // does not cover). A ZIP mapped to an area without price levels, such
    // as 32456 in FL-22, is priced with its state's median area.
    let unpriced = census(
        &dir,
        "unpriced.json",
        &[
            r#"{"zip":"00601","dob":"1980-01-01"}"#,
            r#"{"zip":"00000","dob":"1980-01-01"}"#,
        ],
    );
    assert_names(&fails(&mut price(&unpriced)), &["no rate-card market"]);
    assert_names(
        &fails(&mut on_plan(&unpriced, &example("plan.json"))),
        &["no rate-card market"],
    );
}

#[test]
fn hmo_and_other_bad_plans_are_named() {
    let dir = scratch("bad_plans");
    let good = std::fs::read_to_string(example("plan.json")).unwrap();
    let variant = |name: &str, from: &str, to: &str| {
        assert!(good.contains(from), "{from} is not in plan.json");
        write(&dir, name, &good.replacen(from, to, 1))
    };
    let cases = [
        (
            variant("hmo.json", r#""plan_type": "PPO""#, r#""plan_type": "HMO""#),
            "error: plan.plan_type: an HMO cannot be built on; send a PPO, EPO or POS",
        ),
        (
            variant(
                "indemnity.json",
                r#""plan_type": "PPO""#,
                r#""plan_type": "Indemnity""#,
            ),
            "error: plan.plan_type: must be PPO, EPO or POS",
        ),
        (
            variant(
                "not_hsa.json",
                r#""hsa_eligible": true"#,
                r#""hsa_eligible": false"#,
            ),
            "error: plan.hsa_eligible: must be true: the versions are built on an HSA-eligible plan",
        ),
        (
            variant(
                "no_rates.json",
                r#""pmpm_cents": 52000"#,
                r#""pmpm_cents": null"#,
            ),
            "error: plan.pmpm_cents: is required unless monthly_rates_cents is sent",
        ),
        (
            variant(
                "negative.json",
                r#""pmpm_cents": 52000"#,
                r#""pmpm_cents": -1"#,
            ),
            "error: plan.pmpm_cents: must be an integer of cents from 0 to 100000000",
        ),
        (
            variant(
                "above_irs.json",
                r#""oop_max_individual_cents": 750000"#,
                r#""oop_max_individual_cents": 950000"#,
            ),
            "error: plan.oop_max_individual_cents: not HSA-eligible: the out-of-pocket maximum exceeds the IRS HDHP limit",
        ),
    ];
    for (file, expected) in &cases {
        assert_eq!(
            &fails(&mut on_plan(&example("census.json"), file)),
            expected
        );
    }
    // A plan failure and a census failure together: the plan first, one line.
    let bad_census = census(
        &dir,
        "census.json",
        &[r#"{"zip":"9410","dob":"1980-01-01"}"#],
    );
    assert_names(
        &fails(&mut on_plan(&bad_census, &cases[0].0)),
        &["plan.plan_type", "(and 1 more)"],
    );
    let negative_market = write(
        &dir,
        "market.json",
        r#"[{"metalTier":"Bronze","planType":"PPO","pmpmCents":-5}]"#,
    );
    assert_names(
        &fails(
            price(&example("census.json"))
                .arg("--market-plans")
                .arg(&negative_market),
        ),
        &["market_plans[0].pmpm_cents", "from 0 to 100000000"],
    );
}

#[test]
fn bad_plan_year_start_names_the_flag() {
    let line = fails(price(&example("census.json")).args(["--plan-year-start", "2026-1-1"]));
    assert_names(&line, &["--plan-year-start", "invalid date `2026-1-1`"]);
}

#[test]
fn bad_arguments_are_usage_errors() {
    // Argument errors are clap's: exit 2 with usage help on stderr.
    let out = price(&example("census.json"))
        .args(["--version", "gold"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--version"));
    let out = cli().arg("price").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--census"));
}
