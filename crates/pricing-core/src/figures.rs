//! Per-version figures (pricing model sections 4, 6 and 7): HSA eligibility
//! and caps of a version, its availability on a base plan, the service
//! price, the all-max (worst) year and the median year.

use serde::{Deserialize, Serialize};

use crate::error::Overflow;
use crate::household::{E8, Household, RatedCensus};
use crate::money::{Cents, div_round, div_round_cents};
use crate::plan::BasePlan;
use crate::rate_card::{IrsLimits, VersionParams};
use crate::simulate::{Caps, VersionSim, household_allowance_e8, household_exposure_e8};

/// HSA eligibility of a version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hsa {
    /// Whether the joint plan stays HSA-eligible.
    pub eligible: bool,
    /// The rule applied, in a sentence.
    pub basis: String,
}

/// A version's caps, with the family-coverage raise of section 4 applied.
#[must_use]
pub fn version_caps(v: &VersionParams, irs: &IrsLimits) -> (Caps, Hsa) {
    let (vi, vf) = (
        v.member_oop_max_individual_cents,
        v.member_oop_max_family_cents,
    );
    let eligible = vi >= irs.min_deductible_self_cents && vf >= irs.min_deductible_family_cents;
    let embedded = if eligible {
        vi.max(irs.min_deductible_family_cents)
    } else {
        vi
    };
    let basis = if eligible {
        format!(
            "An HDHP may pay nothing before the IRS minimum deductible ({} self-only, {} family and for any one member of a family). The {} layer pays only above {} self-only and {} family, and in family coverage above {} for any one member, so the joint plan stays HSA-eligible. This is a model choice for benefits counsel to confirm.",
            Cents::new(irs.min_deductible_self_cents),
            Cents::new(irs.min_deductible_family_cents),
            v.name,
            Cents::new(vi),
            Cents::new(vf),
            Cents::new(embedded),
        )
    } else {
        format!(
            "The {} layer starts paying below the IRS minimum deductible ({} self-only, {} family), so the joint plan is not HSA-eligible.",
            v.name,
            Cents::new(irs.min_deductible_self_cents),
            Cents::new(irs.min_deductible_family_cents),
        )
    };
    (
        Caps {
            individual: vi,
            embedded,
            family: vf,
        },
        Hsa { eligible, basis },
    )
}

/// The base plan's caps (its individual maximum is embedded).
#[must_use]
pub fn base_caps(b: &BasePlan) -> Caps {
    Caps {
        individual: b.oop_max_individual_cents,
        embedded: b.oop_max_individual_cents,
        family: b.oop_max_family_cents,
    }
}

/// The version's caps as a member meets them on top of `base`: a layer only
/// ever pays, so a member never pays more than the base plan alone would.
/// Each cap is the smaller of the version's and the base plan's. This
/// matters when the HSA raise lifts the version's per-member maximum in
/// family coverage ($3,400) above a base plan's individual maximum.
#[must_use]
pub fn effective_caps(base: Caps, version: Caps) -> Caps {
    Caps {
        individual: version.individual.min(base.individual),
        embedded: version.embedded.min(base.embedded),
        family: version.family.min(base.family),
    }
}

/// Whether the HSA raise of a version's per-member family-coverage maximum
/// is capped by the base plan's individual maximum.
#[must_use]
pub fn raise_capped_by_base(base: Caps, version: Caps) -> bool {
    version.embedded > base.embedded
}

/// Why a version cannot be built on a base plan, if it cannot.
#[must_use]
pub fn unavailable_reason(base: &BasePlan, v: &VersionParams) -> Option<String> {
    let (bi, bf) = (base.oop_max_individual_cents, base.oop_max_family_cents);
    let (vi, vf) = (
        v.member_oop_max_individual_cents,
        v.member_oop_max_family_cents,
    );
    if bi <= vi || bf <= vf {
        Some(format!(
            "the base plan's out-of-pocket maximum ({} individual / {} family) is already at or below {}'s ({} / {})",
            Cents::new(bi),
            Cents::new(bf),
            v.name,
            Cents::new(vi),
            Cents::new(vf)
        ))
    } else if bf - bi < vf - vi {
        Some("the base plan's family maximum is too close to its individual maximum".to_owned())
    } else {
        None
    }
}

/// The all-max (worst) year: every household reaches the base plan's
/// maximum; members pay the version's maximum and the layer the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllMaxYear {
    /// Annual base premium.
    pub base_premium_cents: Cents,
    /// Annual service price.
    pub service_cents: Cents,
    /// Σ households of the most the layer can pay each in a year.
    pub theoretical_exposure_cents: Cents,
    /// Σ households of the version maximum members pay.
    pub member_oop_allowance_cents: Cents,
    /// max(0, exposure − annual layer funding).
    pub modeled_extra_cents: Cents,
    /// base + service + extra (the modeled total).
    pub employer_total_cents: Cents,
    /// Annual benchmark premium for the census.
    pub benchmark_premium_cents: Cents,
    /// benchmark − modeled total (signed).
    pub headroom_cents: Cents,
}

/// The lower-median simulated year by employer total.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MedianYear {
    /// base + service + max(0, pool − annual layer funding).
    pub employer_total_cents: Cents,
    /// What the layer paid that year.
    pub pool_pays_cents: Cents,
    /// What members paid under the version that year.
    pub members_pay_cents: Cents,
    /// Which simulated year (0-based).
    pub year: u32,
}

/// Every money figure of one version on one base plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Figures {
    /// Exact sum of household base costs, monthly.
    pub base_monthly_cents: Cents,
    /// Layer funding, monthly (rounded once).
    pub layer_monthly_cents: Cents,
    /// Care navigation and administration, monthly.
    pub fees_monthly_cents: Cents,
    /// Layer funding + fees, monthly.
    pub service_monthly_cents: Cents,
    /// Base + service, monthly (`monthly_premium_cents`).
    pub joint_monthly_cents: Cents,
    /// Base monthly ÷ expected lives.
    pub your_plan_pmpm_cents: Cents,
    /// Service monthly ÷ expected lives.
    pub service_pmpm_cents: Cents,
    /// `your_plan_pmpm + service_pmpm`.
    pub joint_pmpm_cents: Cents,
    /// Base monthly ÷ counted employees.
    pub base_pepm_cents: Cents,
    /// Service monthly ÷ counted employees.
    pub service_pepm_cents: Cents,
    /// Joint monthly ÷ counted employees.
    pub joint_pepm_cents: Cents,
    /// 12 × base monthly.
    pub base_annual_cents: Cents,
    /// 12 × layer monthly.
    pub layer_annual_cents: Cents,
    /// 12 × service monthly.
    pub service_annual_cents: Cents,
    /// 12 × joint monthly.
    pub joint_annual_cents: Cents,
    /// The worst year.
    pub all_max_year: AllMaxYear,
    /// The median year.
    pub median_year: MedianYear,
}

/// The households of a census by size, for the all-max year: a
/// household's exposure and allowance depend only on its size (or on the
/// mix for an unknown household), so each size is computed once.
#[derive(Debug, Default)]
pub(crate) struct SizeTally {
    /// Households of each size (0: unknown; 8 and more together).
    count: [i128; 9],
    /// The first household of each size, by index.
    first: [Option<usize>; 9],
}

impl SizeTally {
    /// Tallies every household of `rated`.
    pub(crate) fn of(rated: &RatedCensus) -> Self {
        let mut t = Self::default();
        for (i, h) in rated.households.iter().enumerate() {
            t.add(i, h);
        }
        t
    }

    /// Adds household `index` of the census.
    pub(crate) fn add(&mut self, index: usize, h: &Household) {
        self.add_size(index, h.known_people());
    }

    /// Adds household `index`, of `people` people (`None`: unknown).
    pub(crate) fn add_size(&mut self, index: usize, people: Option<usize>) {
        let size = people.map_or(0, |n| n.min(8));
        if let (Some(c), Some(f)) = (self.count.get_mut(size), self.first.get_mut(size)) {
            *c += 1;
            f.get_or_insert(index);
        }
    }

    /// Σ households of the all-max exposure and allowance, × 1e8, each size
    /// priced as its first household.
    fn all_max_e8(&self, rated: &RatedCensus, base: Caps, ver: Caps) -> (i128, i128) {
        let mut exposure_e8 = 0i128;
        let mut allowance_e8 = 0i128;
        for (&n, first) in self.count.iter().zip(&self.first) {
            if let Some(h) = first.and_then(|i| rated.households.get(i)) {
                exposure_e8 += n * household_exposure_e8(rated, h, base, ver);
                allowance_e8 += n * household_allowance_e8(rated, h, ver);
            }
        }
        (exposure_e8, allowance_e8)
    }
}

/// Computes a version's figures from the exact monthly sum of the household
/// base costs and the households by size ([`SizeTally::of`]).
///
/// # Errors
/// [`Overflow`] when an amount does not fit.
pub(crate) fn figures(
    rated: &RatedCensus,
    (base_monthly, sizes): (i64, &SizeTally),
    sim: &VersionSim,
    years: u32,
    caps: (Caps, Caps),
    v: &VersionParams,
    benchmark_annual: Cents,
) -> Result<Figures, Overflow> {
    let (base, ver) = caps;
    let lives = rated.lives_e8;
    let employees = i128::from(rated.employees());
    let y12 = i128::from(years) * 12 * 10_000;
    let layer_monthly = div_round_cents(
        sim.layer_total * (10_000 + i128::from(v.risk_margin_bp)),
        y12,
    )?;
    let fees_monthly = div_round_cents(i128::from(v.fees_pmpm_cents()) * lives, E8)?;
    let service_monthly = layer_monthly.checked_add(fees_monthly)?;
    let base_monthly = Cents::new(base_monthly);
    let joint_monthly = base_monthly.checked_add(service_monthly)?;
    let per_life = |c: Cents| div_round_cents(i128::from(c.get()) * E8, lives);
    let per_employee = |c: Cents| div_round_cents(i128::from(c.get()), employees);
    let your_plan_pmpm = per_life(base_monthly)?;
    let service_pmpm = per_life(service_monthly)?;
    let base_annual = base_monthly.checked_mul(12)?;
    let layer_annual = layer_monthly.checked_mul(12)?;
    let service_annual = service_monthly.checked_mul(12)?;
    let joint_annual = joint_monthly.checked_mul(12)?;

    let (exposure_e8, allowance_e8) = sizes.all_max_e8(rated, base, ver);
    let exposure = Cents::from_i128(div_round(exposure_e8, E8)?)?;
    let extra = Cents::new((exposure.get() - layer_annual.get()).max(0));
    let fixed = base_annual.checked_add(service_annual)?;
    let modeled_total = fixed.checked_add(extra)?;
    let all_max_year = AllMaxYear {
        base_premium_cents: base_annual,
        service_cents: service_annual,
        theoretical_exposure_cents: exposure,
        member_oop_allowance_cents: Cents::from_i128(div_round(allowance_e8, E8)?)?,
        modeled_extra_cents: extra,
        employer_total_cents: modeled_total,
        benchmark_premium_cents: benchmark_annual,
        headroom_cents: benchmark_annual.checked_sub(modeled_total)?,
    };

    // Lower median by employer total; years with the same total (the pool
    // stayed within the funding) are ordered by what the pool paid, then by
    // year, so the median year's pool is the median pool among them.
    let mut order: Vec<(i64, i64, u32)> = sim
        .pool_by_year
        .iter()
        .zip(0u32..)
        .map(|(&pool, y)| ((pool - layer_annual.get()).max(0), pool, y))
        .collect();
    // The entries are distinct (the year is part of each), so selecting the
    // lower middle one is the same as sorting and taking it.
    let middle = order.len().saturating_sub(1) / 2;
    let (extra_y, _, year) = if order.is_empty() {
        (0, 0, 0)
    } else {
        *order.select_nth_unstable(middle).1
    };
    let idx = usize::try_from(year).unwrap_or(0);
    let median_year = MedianYear {
        employer_total_cents: fixed.checked_add(Cents::new(extra_y))?,
        pool_pays_cents: Cents::new(sim.pool_by_year.get(idx).copied().unwrap_or(0)),
        members_pay_cents: Cents::new(sim.members_by_year.get(idx).copied().unwrap_or(0)),
        year,
    };

    Ok(Figures {
        base_monthly_cents: base_monthly,
        layer_monthly_cents: layer_monthly,
        fees_monthly_cents: fees_monthly,
        service_monthly_cents: service_monthly,
        joint_monthly_cents: joint_monthly,
        your_plan_pmpm_cents: your_plan_pmpm,
        service_pmpm_cents: service_pmpm,
        joint_pmpm_cents: your_plan_pmpm.checked_add(service_pmpm)?,
        base_pepm_cents: per_employee(base_monthly)?,
        service_pepm_cents: per_employee(service_monthly)?,
        joint_pepm_cents: per_employee(joint_monthly)?,
        base_annual_cents: base_annual,
        layer_annual_cents: layer_annual,
        service_annual_cents: service_annual,
        joint_annual_cents: joint_annual,
        all_max_year,
        median_year,
    })
}

#[cfg(test)]
mod tests {
    use time::macros::date;

    use super::*;
    use crate::census::{CensusMember, Relationship};
    use crate::household::tests::{ctx, dep};
    use crate::rate_card::tests::card;

    #[test]
    fn tallied_sizes_sum_every_households_all_max_terms() {
        let c = card();
        let child = |age| dep(Relationship::Child, age);
        let members: Vec<CensusMember> = (0..25)
            .map(|i: usize| {
                let mut m = CensusMember::new(&format!("E{i}"), date!(1980 - 01 - 01), "94103");
                let kids = u32::try_from(i % 7).unwrap();
                m.dependents =
                    (!i.is_multiple_of(5)).then(|| (0..kids).map(|k| child(k * 3)).collect());
                m
            })
            .collect();
        let rated = crate::household::RatedCensus::build(&members, ctx(&c)).unwrap();
        let irs = &rated.group.irs;
        for v in &rated.group.versions {
            let base = base_caps(&crate::quote::card_base_plan(&rated.group.market_base_plan));
            let ver = effective_caps(base, version_caps(v, irs).0);
            let each: (i128, i128) = rated.households.iter().fold((0, 0), |(e, a), h| {
                (
                    e + household_exposure_e8(&rated, h, base, ver),
                    a + household_allowance_e8(&rated, h, ver),
                )
            });
            assert_eq!(SizeTally::of(&rated).all_max_e8(&rated, base, ver), each);
        }
    }
}
