//! Plans being combined (pricing model section 4): the partner's plan, the
//! market plans a partner quoted, their validation and classification into
//! base candidates, benchmark candidates and ignored plans.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::error::FieldError;
use crate::money::Amount;
use crate::rate_card::IrsLimits;

mod input;

pub use input::{Copays, MarketPlan, MemberRate, PartnerPlan, TierRates};

use input::Shared;

/// At most this many `member_rates_cents` items.
pub const MAX_MEMBER_RATES: usize = 10_000;
/// At most this many market plans.
pub const MAX_MARKET_PLANS: usize = 500;
/// Coinsurance assumed when a plan does not say, whole percent.
pub const DEFAULT_COINSURANCE_PCT: u32 = 20;

/// Where a household's base cost came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RateBasis {
    /// `member_rates_cents`.
    MemberRates,
    /// `pmpm_cents` × people.
    Pmpm,
    /// `monthly_rates_cents` by tier.
    MonthlyRates,
    /// The rate card's age-rated area rates.
    RateCard,
}

/// A plan's rates, in order of preference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanRates {
    /// Exact household rates by external id.
    pub member_rates: HashMap<String, i64>,
    /// Per covered person.
    pub pmpm: Option<i64>,
    /// By tier.
    pub monthly: Option<TierRates>,
}

impl PlanRates {
    /// Whether any rate was sent.
    #[must_use]
    pub fn any(&self) -> bool {
        !self.member_rates.is_empty() || self.pmpm.is_some() || self.monthly.is_some()
    }

    /// The preferred basis of the plan.
    #[must_use]
    pub fn preferred_basis(&self) -> Option<RateBasis> {
        if !self.member_rates.is_empty() {
            Some(RateBasis::MemberRates)
        } else if self.pmpm.is_some() {
            Some(RateBasis::Pmpm)
        } else if self.monthly.is_some() {
            Some(RateBasis::MonthlyRates)
        } else {
            None
        }
    }

    /// The rates a plan sent.
    fn sent(plan: &Shared<'_>) -> Self {
        Self {
            member_rates: plan
                .member_rates_cents
                .unwrap_or_default()
                .iter()
                .map(|r| (r.external_id.clone(), r.monthly_cents))
                .collect(),
            pmpm: plan.pmpm_cents,
            monthly: plan.monthly_rates_cents,
        }
    }
}

/// A base plan design with its rates, ready to price.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BasePlan {
    /// Carrier.
    pub carrier: String,
    /// Plan name.
    pub plan_name: String,
    /// Plan type.
    pub plan_type: String,
    /// Network.
    pub network: String,
    /// Funding type when known.
    pub funding_type: Option<String>,
    /// Individual deductible.
    pub deductible_individual_cents: i64,
    /// Family deductible.
    pub deductible_family_cents: i64,
    /// Individual out-of-pocket maximum.
    pub oop_max_individual_cents: i64,
    /// Family out-of-pocket maximum.
    pub oop_max_family_cents: i64,
    /// Coinsurance, whole percent.
    pub coinsurance_pct: u32,
}

impl BasePlan {
    /// The base plan of a plan's `carrier`, name, type and network (upper
    /// case, and empty when left out), funding type and terms.
    fn new(
        carrier: &str,
        plan_name: String,
        (plan_type, network): (Option<&str>, Option<&str>),
        funding_type: Option<String>,
        terms: Terms,
    ) -> Self {
        let Terms {
            deductible: (ded_i, ded_f),
            oop_max: (oop_i, oop_f),
            coinsurance_pct,
        } = terms;
        Self {
            carrier: carrier.to_owned(),
            plan_name,
            plan_type: plan_type.unwrap_or_default().to_uppercase(),
            network: network.unwrap_or_default().to_owned(),
            funding_type,
            deductible_individual_cents: ded_i,
            deductible_family_cents: ded_f,
            oop_max_individual_cents: oop_i,
            oop_max_family_cents: oop_f,
            coinsurance_pct,
        }
    }
}

/// A plan's deductibles and out-of-pocket maximums (individual, family)
/// and its coinsurance.
struct Terms {
    deductible: (i64, i64),
    oop_max: (i64, i64),
    coinsurance_pct: u32,
}

impl Terms {
    /// The terms of a plan, those it left out assumed: a family amount at
    /// twice the individual one, coinsurance at [`DEFAULT_COINSURANCE_PCT`],
    /// each with a sentence in `assumptions` (headed by its name for a
    /// market plan, `market`).
    fn assumed(
        market: Option<&str>,
        (ded_i, ded_f): (i64, Option<i64>),
        (oop_i, oop_f): (i64, Option<i64>),
        coinsurance_pct: Option<u32>,
        assumptions: &mut Vec<String>,
    ) -> Self {
        let mut assume = |what: &str| {
            assumptions.push(match market {
                Some(name) => format!("{name}: {what}"),
                None => {
                    let mut sentence = what.to_owned();
                    if let Some(first) = sentence.get_mut(..1) {
                        first.make_ascii_uppercase();
                    }
                    sentence
                }
            });
        };
        let ded_f = ded_f.unwrap_or_else(|| {
            assume("family deductible assumed at twice the individual deductible.");
            2 * ded_i
        });
        let oop_f = oop_f.unwrap_or_else(|| {
            assume("family out-of-pocket maximum assumed at twice the individual maximum.");
            2 * oop_i
        });
        let coinsurance_pct = coinsurance_pct.unwrap_or_else(|| {
            assume(&format!(
                "member coinsurance after the deductible assumed at {DEFAULT_COINSURANCE_PCT}%."
            ));
            DEFAULT_COINSURANCE_PCT
        });
        Self {
            deductible: (ded_i, ded_f),
            oop_max: (oop_i, oop_f),
            coinsurance_pct,
        }
    }
}

fn is_buildable_type(t: &str) -> bool {
    ["PPO", "EPO", "POS"]
        .iter()
        .any(|k| t.eq_ignore_ascii_case(k))
}

fn irs_problem(oop_i: i64, oop_f: i64, irs: &IrsLimits) -> Option<&'static str> {
    if oop_f < oop_i {
        Some("not HSA-eligible: the family out-of-pocket maximum is below the individual one")
    } else if oop_i > irs.max_oop_self_cents || oop_f > irs.max_oop_family_cents {
        Some("not HSA-eligible: the out-of-pocket maximum exceeds the IRS HDHP limit")
    } else {
        None
    }
}

/// Validates the explicit `plan` and turns it into a base plan, its rates
/// and the assumptions applied.
///
/// # Errors
/// Every failing field, with `plan.`-prefixed snake_case paths.
pub fn validate_partner_plan(
    plan: &PartnerPlan,
    irs: &IrsLimits,
) -> Result<(BasePlan, PlanRates, Vec<String>), Vec<FieldError>> {
    let mut errs = Vec::new();
    let mut assumptions = Vec::new();
    let f = |name: &str| format!("plan.{name}");
    match plan.plan_type.as_deref() {
        None => errs.push(FieldError::new(
            f("plan_type"),
            "is required (PPO, EPO or POS)",
        )),
        Some(t) if t.eq_ignore_ascii_case("HMO") => errs.push(FieldError::new(
            f("plan_type"),
            "an HMO cannot be built on; send a PPO, EPO or POS",
        )),
        Some(t) if !is_buildable_type(t) => {
            errs.push(FieldError::new(f("plan_type"), "must be PPO, EPO or POS"));
        }
        Some(_) => {}
    }
    match plan.hsa_eligible {
        None => errs.push(FieldError::new(
            f("hsa_eligible"),
            "is required and must be true",
        )),
        Some(false) => errs.push(FieldError::new(
            f("hsa_eligible"),
            "must be true: the versions are built on an HSA-eligible plan",
        )),
        Some(true) => {}
    }
    let shared = plan.shared();
    // The explicit plan must send its individual deductible and maximum;
    // an amount is kept only when it is in range.
    let required = ["deductible_individual_cents", "oop_max_individual_cents"];
    let [ded_i, ded_f, oop_i, oop_f, _pmpm] = shared.amounts().map(|(name, kind, v)| match v {
        None => {
            if required.contains(&name) {
                errs.push(FieldError::new(f(name), "is required"));
            }
            None
        }
        Some(x) => match kind.check(&f(name), None, x) {
            Some(e) => {
                errs.push(e);
                None
            }
            None => Some(x),
        },
    });
    if plan.pmpm_cents.is_none() && plan.monthly_rates_cents.is_none() {
        errs.push(FieldError::new(
            f("pmpm_cents"),
            "is required unless monthly_rates_cents is sent",
        ));
    }
    if let Some(r) = &plan.monthly_rates_cents {
        errs.extend(r.out_of_range("plan.monthly_rates_cents", None));
    }
    if let Some(rates) = shared.member_rates_cents {
        errs.extend(shared.too_many_member_rates("plan", None));
        let mut seen = HashMap::new();
        for (i, r) in rates.iter().enumerate() {
            let item = format!("plan.member_rates_cents[{i}]");
            if r.external_id.trim().is_empty() {
                errs.push(FieldError::at(
                    i,
                    format!("{item}.external_id"),
                    "is required",
                ));
            } else if let Some(first) = seen.insert(r.external_id.as_str(), i) {
                errs.push(FieldError::at(
                    i,
                    format!("{item}.external_id"),
                    format!("duplicates item {first}"),
                ));
            }
            errs.extend(r.out_of_range(&item, Some(i)));
        }
    }
    errs.extend(shared.coinsurance_error("plan", None));
    let (Some(ded_i), Some(oop_i)) = (ded_i, oop_i) else {
        return Err(errs);
    };
    let terms = Terms::assumed(
        None,
        (ded_i, ded_f),
        (oop_i, oop_f),
        plan.coinsurance_pct,
        &mut assumptions,
    );
    let (_, oop_f) = terms.oop_max;
    if let Some(problem) = irs_problem(oop_i, oop_f, irs) {
        let field = if oop_f >= oop_i && oop_i > irs.max_oop_self_cents {
            "oop_max_individual_cents"
        } else {
            "oop_max_family_cents"
        };
        errs.push(FieldError::new(f(field), problem));
    }
    if ded_i > oop_i {
        errs.push(FieldError::new(
            f("deductible_individual_cents"),
            "must not exceed the individual out-of-pocket maximum",
        ));
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    let base = BasePlan::new(
        plan.carrier.as_deref().unwrap_or("Partner plan"),
        plan.plan_name
            .clone()
            .unwrap_or_else(|| "Partner HSA plan".to_owned()),
        (plan.plan_type.as_deref(), plan.network.as_deref()),
        None,
        terms,
    );
    // Every amount passed, so the rates are the ones sent.
    Ok((base, PlanRates::sent(&shared), assumptions))
}

/// Validates the shape of the market plans (their count and required
/// fields); plans that merely cannot be used are classified, not rejected.
#[must_use]
pub fn validate_market_plans(plans: &[MarketPlan]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if plans.len() > MAX_MARKET_PLANS {
        errs.push(FieldError::new(
            "market_plans",
            format!("at most {MAX_MARKET_PLANS} items"),
        ));
    }
    for (i, p) in plans.iter().enumerate() {
        let prefix = format!("market_plans[{i}]");
        let shared = p.shared();
        if p.metal_tier.trim().is_empty() {
            errs.push(FieldError::at(
                i,
                format!("{prefix}.metal_tier"),
                "is required",
            ));
        }
        errs.extend(shared.too_many_member_rates(&prefix, Some(i)));
        let rx = ("rx_deductible_cents", Amount::Annual, p.rx_deductible_cents);
        for (name, kind, v) in shared.amounts().into_iter().chain([rx]) {
            if let Some(v) = v {
                errs.extend(kind.check(&format!("{prefix}.{name}"), Some(i), v));
            }
        }
        if let Some(r) = &p.monthly_rates_cents {
            errs.extend(r.out_of_range(&format!("{prefix}.monthly_rates_cents"), Some(i)));
        }
        if let Some(c) = &p.copays_cents {
            errs.extend(c.out_of_range(&format!("{prefix}.copays_cents"), Some(i)));
        }
        for (j, r) in shared.member_rates_cents.into_iter().flatten().enumerate() {
            errs.extend(r.out_of_range(&format!("{prefix}.member_rates_cents[{j}]"), Some(i)));
        }
        errs.extend(shared.coinsurance_error(&prefix, Some(i)));
    }
    errs
}

/// A market plan that was neither a base nor a benchmark candidate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IgnoredPlan {
    /// Index in `market_plans`.
    pub index: usize,
    /// Why.
    pub reason: String,
    /// Carrier.
    pub carrier: Option<String>,
    /// Plan name.
    pub plan_name: Option<String>,
}

/// Market plans sorted into roles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Classified {
    /// HSA-eligible PPO/EPO/POS plans with rates and a complete design.
    pub base_candidates: Vec<usize>,
    /// Platinum PPOs with rates.
    pub benchmark_candidates: Vec<usize>,
    /// Everything else, with reasons.
    pub ignored: Vec<IgnoredPlan>,
}

/// Whether a plan is a platinum PPO.
#[must_use]
pub fn is_platinum_ppo(p: &MarketPlan) -> bool {
    p.metal_tier.eq_ignore_ascii_case("platinum")
        && p.plan_type
            .as_deref()
            .is_some_and(|t| t.eq_ignore_ascii_case("PPO"))
}

/// The rates of a market plan.
#[must_use]
pub fn market_rates(p: &MarketPlan) -> PlanRates {
    PlanRates::sent(&p.shared())
}

/// Why a market plan cannot be a base, if it cannot.
fn base_problem(p: &MarketPlan, irs: &IrsLimits) -> Option<String> {
    let t = p.plan_type.as_deref().unwrap_or("");
    if t.eq_ignore_ascii_case("HMO") {
        return Some("an HMO cannot be built on".to_owned());
    }
    if !is_buildable_type(t) {
        return Some("plan type must be PPO, EPO or POS to be built on".to_owned());
    }
    if p.hsa_eligible != Some(true) {
        return Some("not HSA-eligible".to_owned());
    }
    let (Some(_), Some(oop_i)) = (p.deductible_individual_cents, p.oop_max_individual_cents) else {
        return Some("incomplete: deductible and out-of-pocket maximum are required".to_owned());
    };
    let oop_f = p.oop_max_family_cents.unwrap_or(2 * oop_i);
    irs_problem(oop_i, oop_f, irs).map(str::to_owned)
}

/// Sorts market plans into base candidates, benchmark candidates and
/// ignored plans (with the first reason that applies).
#[must_use]
pub fn classify(plans: &[MarketPlan], irs: &IrsLimits) -> Classified {
    let mut out = Classified {
        base_candidates: Vec::new(),
        benchmark_candidates: Vec::new(),
        ignored: Vec::new(),
    };
    for (i, p) in plans.iter().enumerate() {
        if !market_rates(p).any() {
            out.ignored.push(IgnoredPlan {
                index: i,
                reason: "no rates: send pmpmCents, monthlyRatesCents or memberRatesCents"
                    .to_owned(),
                carrier: p.carrier.clone(),
                plan_name: p.plan_name.clone(),
            });
            continue;
        }
        let base = base_problem(p, irs);
        let bench = is_platinum_ppo(p);
        if base.is_none() {
            out.base_candidates.push(i);
        }
        if bench {
            out.benchmark_candidates.push(i);
        }
        if let (Some(why), false) = (base, bench) {
            out.ignored.push(IgnoredPlan {
                index: i,
                reason: format!("{why}, and not a platinum PPO benchmark"),
                carrier: p.carrier.clone(),
                plan_name: p.plan_name.clone(),
            });
        }
    }
    out
}

/// A market base candidate as a [`BasePlan`], with a sentence for every
/// default applied.
#[must_use]
pub fn market_base_plan(p: &MarketPlan) -> (BasePlan, Vec<String>) {
    let mut assumptions = Vec::new();
    let name = p
        .plan_name
        .clone()
        .unwrap_or_else(|| "Market HSA plan".to_owned());
    let terms = Terms::assumed(
        Some(&name),
        (
            p.deductible_individual_cents.unwrap_or(0),
            p.deductible_family_cents,
        ),
        (
            p.oop_max_individual_cents.unwrap_or(0),
            p.oop_max_family_cents,
        ),
        p.coinsurance_pct,
        &mut assumptions,
    );
    let base = BasePlan::new(
        p.carrier.as_deref().unwrap_or("Market plan"),
        name,
        (p.plan_type.as_deref(), p.network.as_deref()),
        p.funding_type.clone(),
        terms,
    );
    (base, assumptions)
}

#[cfg(test)]
mod tests;
