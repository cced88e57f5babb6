//! Shared helpers: run the binary, parse its JSON, read fields by JSON
//! pointer with helpful panics, and check the figures every priced result
//! must satisfy.

pub mod api;
pub mod serve_process;
pub mod webdriver;
pub mod webhook_receiver;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use domain::ids::GroupId;
use domain::job::JobKind;
use domain::ports::Clock;
use domain::scope::Scope;
use pricing_core::CensusRules;
use serde_json::Value;
use server::compose::{Services, Shared};
use store_diesel::Stores;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_partner-api");

/// A command running the binary.
pub fn cli() -> Command {
    Command::new(BIN)
}

/// `partner-api price --census <census>`.
/// `price --engine`: the engine's whole result, which the pricing tests
/// read (the API's shape is [`price_as_api`]'s).
pub fn price(census: &Path) -> Command {
    let mut cmd = price_as_api(census);
    cmd.arg("--engine");
    cmd
}

/// `price` as a newcomer runs it: the answer in the API's shape.
pub fn price_as_api(census: &Path) -> Command {
    let mut cmd = cli();
    cmd.arg("price").arg("--census").arg(census);
    cmd
}

/// A file of `crates/server/examples`.
pub fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
}

/// A fresh scratch directory for one test, under Cargo's target tmpdir.
pub fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(test);
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot clear {}: {e}", dir.display()));
    }
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    path
}

fn output(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {BIN}: {e}"))
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| panic!("output is not UTF-8: {e}"))
}

/// Requires exit 0 and an empty stderr of `what`'s output; returns stdout.
fn success(what: &str, out: Output) -> String {
    let (stdout, stderr) = (text(out.stdout), text(out.stderr));
    assert!(
        out.status.success(),
        "{what} failed with {}: {stderr}",
        out.status
    );
    assert!(stderr.is_empty(), "{what} wrote to stderr: {stderr}");
    stdout
}

fn parse(what: &str, stdout: &str) -> Value {
    serde_json::from_str(stdout)
        .unwrap_or_else(|e| panic!("{what} printed invalid JSON ({e}): {stdout}"))
}

/// Runs `cmd`, requires exit 0 and an empty stderr, and returns stdout.
pub fn stdout_ok(cmd: &mut Command) -> String {
    let out = output(cmd);
    success(&format!("{cmd:?}"), out)
}

/// Runs `cmd`, requires exit 0, and returns (stdout, stderr): for the
/// commands that keep their answer alone on stdout and talk to the person
/// at the terminal on stderr.
pub fn answer_and_aside(cmd: &mut Command) -> (String, String) {
    let out = output(cmd);
    let (stdout, stderr) = (text(out.stdout), text(out.stderr));
    assert!(
        out.status.success(),
        "{cmd:?} failed with {}: {stderr}",
        out.status
    );
    (stdout, stderr)
}

/// Runs `cmd`, requires exit 0, and parses stdout as JSON.
pub fn ok(cmd: &mut Command) -> Value {
    let stdout = stdout_ok(cmd);
    parse(&format!("{cmd:?}"), &stdout)
}

/// Runs `cmd`, requires exit 1, nothing on stdout and exactly one line
/// `error: …` on stderr, and returns that line.
pub fn fails(cmd: &mut Command) -> String {
    let out = output(cmd);
    let (stdout, stderr) = (text(out.stdout), text(out.stderr));
    assert_eq!(
        out.status.code(),
        Some(1),
        "{cmd:?}: expected exit 1, got {}; stderr: {stderr}",
        out.status
    );
    assert!(stdout.is_empty(), "{cmd:?} printed on failure: {stdout}");
    let line = stderr
        .strip_suffix('\n')
        .unwrap_or_else(|| panic!("{cmd:?}: stderr does not end with a newline: {stderr:?}"));
    assert!(
        !line.contains('\n') && !line.contains('\r'),
        "{cmd:?}: stderr is more than one line: {stderr:?}"
    );
    assert!(
        line.starts_with("error: "),
        "{cmd:?}: stderr does not start with `error: `: {line}"
    );
    line.to_owned()
}

/// The shared parts of a test process: the built-in rate card, a
/// recording mailer, the default webhook settings.
pub fn shared() -> Shared {
    Shared::builtin().unwrap()
}

/// Writes a one-member census for group `gid` of `scope`, its time read
/// from `clock`, and checks that it queued the group's market comparison:
/// what a census written with no `serve` running leaves in the database.
pub async fn queue_a_comparison(
    stores: &Stores,
    scope: &Scope,
    gid: &GroupId,
    clock: Arc<dyn Clock>,
) {
    let census = Services::new(stores, &crate::http::ports_with(clock), &shared()).census();
    let member =
        pricing_core::CensusMember::new("E-1", time::macros::date!(1988 - 04 - 12), "60601");
    census
        .replace(
            scope,
            gid,
            vec![Ok(member)],
            CensusRules { require_dob: true },
            false,
        )
        .await
        .unwrap();
    let open = stores
        .jobs
        .open_job(scope, gid, JobKind::MarketComparison)
        .await
        .unwrap();
    assert!(open.is_some(), "the comparison is queued");
}

/// The value at a JSON pointer, panicking with the pointer when absent.
pub fn at<'a>(v: &'a Value, ptr: &str) -> &'a Value {
    v.pointer(ptr)
        .unwrap_or_else(|| panic!("no {ptr} in the output"))
}

/// The integer at a JSON pointer.
pub fn int(v: &Value, ptr: &str) -> i64 {
    at(v, ptr)
        .as_i64()
        .unwrap_or_else(|| panic!("{ptr} is not an integer: {}", at(v, ptr)))
}

/// The string at a JSON pointer.
pub fn string<'a>(v: &'a Value, ptr: &str) -> &'a str {
    at(v, ptr)
        .as_str()
        .unwrap_or_else(|| panic!("{ptr} is not a string: {}", at(v, ptr)))
}

/// The array at a JSON pointer.
pub fn array<'a>(v: &'a Value, ptr: &str) -> &'a [Value] {
    at(v, ptr)
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_else(|| panic!("{ptr} is not an array: {}", at(v, ptr)))
}

/// The invariants of one version's figures (`Figures` of pricing-core):
/// sums, annual = 12 × monthly, the all-max year's decomposition and the
/// median year not above the all-max year.
pub fn check_figures(f: &Value, what: &str) {
    let g = |p: &str| int(f, p);
    for p in [
        "/base_monthly_cents",
        "/layer_monthly_cents",
        "/fees_monthly_cents",
        "/your_plan_pmpm_cents",
        "/service_pmpm_cents",
    ] {
        assert!(g(p) >= 0, "{what}: {p} is negative: {}", g(p));
    }
    assert_eq!(
        g("/joint_pmpm_cents"),
        g("/your_plan_pmpm_cents") + g("/service_pmpm_cents"),
        "{what}: joint pmpm = your plan pmpm + service pmpm"
    );
    assert_eq!(
        g("/service_monthly_cents"),
        g("/layer_monthly_cents") + g("/fees_monthly_cents"),
        "{what}: service = layer + fees"
    );
    assert_eq!(
        g("/joint_monthly_cents"),
        g("/base_monthly_cents") + g("/service_monthly_cents"),
        "{what}: joint = base + service"
    );
    for name in ["base", "layer", "service", "joint"] {
        assert_eq!(
            g(&format!("/{name}_annual_cents")),
            12 * g(&format!("/{name}_monthly_cents")),
            "{what}: {name} annual = 12 × monthly"
        );
    }
    let m = |p: &str| g(&format!("/all_max_year/{p}"));
    assert_eq!(m("base_premium_cents"), g("/base_annual_cents"), "{what}");
    assert_eq!(m("service_cents"), g("/service_annual_cents"), "{what}");
    assert!(m("modeled_extra_cents") >= 0, "{what}: negative extra");
    assert_eq!(
        m("modeled_extra_cents"),
        (m("theoretical_exposure_cents") - g("/layer_annual_cents")).max(0),
        "{what}: modeled extra = max(0, exposure − annual layer funding)"
    );
    assert_eq!(
        m("employer_total_cents"),
        m("base_premium_cents") + m("service_cents") + m("modeled_extra_cents"),
        "{what}: modeled total = base + service + extra"
    );
    assert_eq!(
        m("headroom_cents"),
        m("benchmark_premium_cents") - m("employer_total_cents"),
        "{what}: headroom = benchmark − modeled total"
    );
    let median = g("/median_year/employer_total_cents");
    assert!(
        median <= m("employer_total_cents"),
        "{what}: median year {median} above the all-max year {}",
        m("employer_total_cents")
    );
    assert!(
        median >= g("/joint_annual_cents"),
        "{what}: median year {median} below the fixed annual cost {}",
        g("/joint_annual_cents")
    );
    assert!(g("/median_year/pool_pays_cents") >= 0, "{what}");
    assert!(g("/median_year/members_pay_cents") >= 0, "{what}");
}

/// The invariants of a quote for `employees` counted employees.
pub fn check_quote(q: &Value, employees: i64) {
    assert_eq!(int(q, "/census/employees"), employees);
    let tiers = at(q, "/census/tiers")
        .as_object()
        .unwrap_or_else(|| panic!("census.tiers is not an object"));
    let tier_sum: i64 = tiers.values().filter_map(Value::as_i64).sum();
    assert_eq!(tier_sum, employees, "tier counts sum to the employees");
    for (tier, n) in tiers {
        assert_eq!(
            int(q, &format!("/monthly/by_tier/{tier}/count")),
            n.as_i64().unwrap_or(-1),
            "by_tier.{tier}.count"
        );
    }
    assert!(int(q, "/census/covered_lives") >= employees);
    assert_eq!(
        int(q, "/annual_total_cents"),
        12 * int(q, "/monthly/total_cents"),
        "annual_total_cents = 12 × monthly.total_cents"
    );
    assert_eq!(
        int(q, "/monthly/total_cents"),
        int(q, "/components/joint_monthly_cents")
    );
    assert_eq!(
        int(q, "/monthly/pepm_cents"),
        int(q, "/components/joint_pepm_cents")
    );
    assert!(
        string(q, "/pricing_source").starts_with("rate-card 2026.1"),
        "pricing_source: {}",
        string(q, "/pricing_source")
    );
    assert_eq!(
        int(q, "/comparison/savings_annual_cents"),
        12 * int(q, "/comparison/savings_monthly_cents")
    );
    assert_eq!(
        int(q, "/comparison/benchmark/monthly_cents") * 12,
        int(q, "/components/all_max_year/benchmark_premium_cents"),
        "the all-max year compares with the quote's benchmark"
    );
    check_figures(at(q, "/components"), "quote");
}

/// The invariants of a price-on-plan answer with every version priced.
pub fn check_price_on_plan(p: &Value, employees: i64) {
    assert_eq!(int(p, "/employees"), employees);
    let tier_sum: i64 = array(p, "/tiers").iter().filter_map(Value::as_i64).sum();
    assert_eq!(tier_sum, employees, "tier counts sum to the employees");
    assert!(int(p, "/covered_lives") >= employees);
    assert!(
        string(p, "/pricing_source").starts_with("rate-card 2026.1"),
        "pricing_source: {}",
        string(p, "/pricing_source")
    );
    assert_eq!(
        int(p, "/base_plan/annual_cents"),
        12 * int(p, "/base_plan/monthly_cents")
    );
    assert_eq!(
        int(p, "/benchmark/annual_cents"),
        12 * int(p, "/benchmark/monthly_cents")
    );
    let versions = array(p, "/versions");
    assert!(!versions.is_empty(), "no versions printed");
    for v in versions {
        let id = string(v, "/id");
        assert!(
            v.pointer("/priced").is_some_and(|x| !x.is_null()),
            "{id} is not priced: {}",
            at(v, "/reason")
        );
        let f = at(v, "/priced/figures");
        check_figures(f, id);
        assert_eq!(
            int(f, "/base_monthly_cents"),
            int(p, "/base_plan/monthly_cents"),
            "{id}: the figures use the base plan's cost"
        );
        assert_eq!(
            int(f, "/all_max_year/benchmark_premium_cents"),
            int(p, "/benchmark/annual_cents"),
            "{id}: the all-max year compares with the benchmark"
        );
        assert_eq!(
            int(v, "/priced/comparison/annual_savings_cents"),
            int(p, "/benchmark/annual_cents") - int(f, "/joint_annual_cents"),
            "{id}: savings = benchmark − joint annual"
        );
        assert_eq!(
            int(v, "/priced/comparison/worst_year_under_benchmark_cents"),
            int(f, "/all_max_year/headroom_cents"),
            "{id}"
        );
        let households: i64 = array(v, "/priced/monthly_rates_by_household")
            .iter()
            .map(|r| int(r, "/households"))
            .sum();
        assert_eq!(households, employees, "{id}: household rows cover everyone");
        assert!(int(v, "/priced/benchmark_rank") >= 1, "{id}");
    }
}
