//! The seeded common-random-number simulation that prices the layer and
//! yields the median year (pricing model sections 5 and 7).
//!
//! Each person's draws depend only on their stream key, age and market, so
//! households are simulated independently (in parallel) and every
//! household-year's layer is rounded to a cent before it is summed: sums are
//! integers and summation order cannot matter.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::claims::{self, gross_cost_sharing, mean_claims, mu_for_mean, stream_key};
use crate::household::{COMPOSITIONS, E8, Household, RatedCensus, Shape, Tier};
use crate::money::to_f64;

/// Out-of-pocket caps of one plan: self-only, embedded individual in family
/// coverage, family.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Caps {
    /// Self-only maximum.
    pub individual: i64,
    /// Per-person maximum inside family coverage.
    pub embedded: i64,
    /// Family maximum.
    pub family: i64,
}

/// The base plan's cost sharing and both versions' caps.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LayerPlan {
    /// Base plan individual deductible.
    pub deductible: i64,
    /// Base plan coinsurance, whole percent.
    pub coinsurance_pct: u32,
    /// Base plan caps.
    pub base: Caps,
    /// Version caps, diamond then value.
    pub versions: [Caps; 2],
}

/// Results of one version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionSim {
    /// Σ households Σ years layer cents.
    pub layer_total: i128,
    /// Σ years layer cents per household, in household order.
    pub household_layer: Vec<i64>,
    /// Σ unknown households Σ years of each tier's modelled layer.
    pub unknown_tier_layer: [i128; 4],
    /// Per plan year: Σ households layer (what the pool pays).
    pub pool_by_year: Vec<i64>,
    /// Per plan year: Σ households member cost sharing under the version.
    pub members_by_year: Vec<i64>,
}

/// The simulation of a census under one base plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Simulation {
    /// Simulated plan years.
    pub years: u32,
    /// Diamond then value.
    pub versions: [VersionSim; 2],
    /// Claims drawn (people × years), for benchmarks.
    pub draws: u64,
}

const CHUNK: usize = 16;

/// Per-version accumulators of a slice of households.
struct VersionAcc {
    pool: Vec<i64>,
    members: Vec<i64>,
    unknown_tier: [i128; 4],
}

struct Acc {
    versions: [VersionAcc; 2],
    draws: u64,
}

impl Acc {
    fn new(years: usize) -> Self {
        let v = || VersionAcc {
            pool: vec![0; years],
            members: vec![0; years],
            unknown_tier: [0; 4],
        };
        Self {
            versions: [v(), v()],
            draws: 0,
        }
    }

    fn merge(mut self, other: Self) -> Self {
        for (a, b) in self.versions.iter_mut().zip(other.versions) {
            add_into(&mut a.pool, &b.pool);
            add_into(&mut a.members, &b.members);
            for (x, y) in a.unknown_tier.iter_mut().zip(b.unknown_tier) {
                *x += y;
            }
        }
        self.draws += other.draws;
        self
    }
}

fn add_into(a: &mut [i64], b: &[i64]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += *y;
    }
}

/// Rounds a bounded, finite cost (at most a family maximum) to cents.
fn round_cents(x: f64) -> i64 {
    #[expect(
        clippy::as_conversions,
        reason = "inputs are capped cost sharing: finite and far below 2^53"
    )]
    let c = libm::round(x) as i64;
    c
}

/// A simulated person: stream key and lognormal μ.
#[derive(Debug, Clone, Copy)]
struct SimPerson {
    key: u64,
    mu: f64,
}

/// Simulates every household of `rated` for the card's plan years.
#[must_use]
pub fn simulate(rated: &RatedCensus, plan: &LayerPlan) -> Simulation {
    let years = rated.group.simulated_plan_years;
    let n_years = usize::try_from(years).unwrap_or(0);
    let households = &rated.households;
    let mut per_household = vec![[0i64; 2]; households.len()];
    let acc = households
        .par_chunks(CHUNK)
        .zip(per_household.par_chunks_mut(CHUNK))
        .fold(
            || Acc::new(n_years),
            |mut acc, (hs, out)| {
                for (h, slot) in hs.iter().zip(out.iter_mut()) {
                    *slot = simulate_household(rated, h, plan, years, &mut acc);
                }
                acc
            },
        )
        .reduce(|| Acc::new(n_years), Acc::merge);
    let Acc { versions, draws } = acc;
    let mut v = 0;
    let versions = versions.map(|va| {
        let household_layer: Vec<i64> = per_household
            .iter()
            .map(|l| l.get(v).copied().unwrap_or(0))
            .collect();
        v += 1;
        VersionSim {
            layer_total: household_layer.iter().map(|&x| i128::from(x)).sum(),
            household_layer,
            unknown_tier_layer: va.unknown_tier,
            pool_by_year: va.pool,
            members_by_year: va.members,
        }
    });
    Simulation {
        years,
        versions,
        draws,
    }
}

/// Every simulated person's stream key and lognormal μ, in household order
/// (four per unknown household: employee, modelled spouse, two modelled
/// children). Benchmarks use it to measure the cost of the draws alone.
#[must_use]
pub fn person_streams(rated: &RatedCensus) -> Vec<(u64, f64)> {
    let mut out = Vec::new();
    for h in &rated.households {
        match &h.shape {
            Shape::Known { people, .. } => {
                out.extend(
                    people
                        .iter()
                        .map(|p| sim_person(rated, h, p))
                        .map(|p| (p.key, p.mu)),
                );
            }
            Shape::Unknown { people } => {
                out.extend(
                    people
                        .iter()
                        .map(|p| sim_person(rated, h, p))
                        .map(|p| (p.key, p.mu)),
                );
            }
        }
    }
    out
}

fn sim_person(rated: &RatedCensus, h: &Household, p: &crate::household::Person) -> SimPerson {
    let market = rated.market_of(h);
    let claims = &rated.group.claims;
    let annual = market
        .rate(market.benchmark_rate21_cents, p.age)
        .saturating_mul(12);
    SimPerson {
        key: stream_key(&rated.card_version, &h.key, &p.place.label()),
        mu: mu_for_mean(mean_claims(annual, claims), claims),
    }
}

fn simulate_household(
    rated: &RatedCensus,
    h: &Household,
    plan: &LayerPlan,
    years: u32,
    acc: &mut Acc,
) -> [i64; 2] {
    let c = &rated.group.claims;
    let (sigma, p0) = (c.sigma, c.zero_probability);
    let d = to_f64(plan.deductible);
    let pct = f64::from(plan.coinsurance_pct);
    let base = caps_f64(plan.base);
    let ver = plan.versions.map(caps_f64);
    let mut totals = [0i64; 2];
    match &h.shape {
        Shape::Known { people, .. } => {
            let persons: Vec<SimPerson> = people.iter().map(|p| sim_person(rated, h, p)).collect();
            acc.draws += u64::from(years) * u64::try_from(persons.len()).unwrap_or(0);
            let single = persons.len() == 1;
            for (y, year) in (0..years).zip(0usize..) {
                let (mut b, mut v) = (0.0, [0.0; 2]);
                for p in &persons {
                    let g = gross_cost_sharing(claims::draw(p.key, y, p.mu, sigma, p0), d, pct);
                    if single {
                        b = g.min(base.0);
                        v = ver.map(|c| g.min(c.0));
                    } else {
                        b += g.min(base.1);
                        for (vv, c) in v.iter_mut().zip(ver) {
                            *vv += g.min(c.1);
                        }
                    }
                }
                if !single {
                    b = b.min(base.2);
                    for (vv, c) in v.iter_mut().zip(ver) {
                        *vv = vv.min(c.2);
                    }
                }
                let layers = v.map(|vv| (round_cents(b - vv), round_cents(vv)));
                record(acc, &mut totals, year, layers);
            }
        }
        Shape::Unknown { people } => {
            let persons = people.map(|p| sim_person(rated, h, &p));
            acc.draws += u64::from(years) * 4;
            let w = rated
                .composition_weights_e8
                .map(|x| to_f64_i128(x) / to_f64_i128(E8));
            let two = f64::from(rated.group.two_children_share_bp) / 10_000.0;
            let one = 1.0 - two;
            for (y, year) in (0..years).zip(0usize..) {
                let g = persons
                    .map(|p| gross_cost_sharing(claims::draw(p.key, y, p.mu, sigma, p0), d, pct));
                let base_c = compositions(&g, base);
                let mut out = [(0, 0); 2];
                for ((o, caps), va) in out.iter_mut().zip(ver).zip(acc.versions.iter_mut()) {
                    let ver_c = compositions(&g, caps);
                    let mut layer_c = [0.0; 6];
                    let (mut layer_w, mut member_w) = (0.0, 0.0);
                    for (((l, b), vc), wc) in layer_c.iter_mut().zip(base_c).zip(ver_c).zip(w) {
                        *l = b - vc;
                        layer_w += wc * *l;
                        member_w += wc * vc;
                    }
                    let [eo, es, ec1, ec2, f1, f2] = layer_c;
                    let tiers = [eo, es, one * ec1 + two * ec2, one * f1 + two * f2];
                    for (acc_t, x) in va.unknown_tier.iter_mut().zip(tiers) {
                        *acc_t += i128::from(round_cents(x));
                    }
                    *o = (round_cents(layer_w), round_cents(member_w));
                }
                record(acc, &mut totals, year, out);
            }
        }
    }
    totals
}

/// Adds one household-year's (layer, member cost sharing) per version.
fn record(acc: &mut Acc, totals: &mut [i64; 2], year: usize, out: [(i64, i64); 2]) {
    for ((va, t), (layer, members)) in acc.versions.iter_mut().zip(totals.iter_mut()).zip(out) {
        if let Some(slot) = va.pool.get_mut(year) {
            *slot += layer;
        }
        if let Some(slot) = va.members.get_mut(year) {
            *slot += members;
        }
        *t += layer;
    }
}

fn to_f64_i128(x: i128) -> f64 {
    to_f64(i64::try_from(x).unwrap_or(i64::MAX))
}

/// (self-only, embedded, family) caps as floats.
fn caps_f64(c: Caps) -> (f64, f64, f64) {
    (to_f64(c.individual), to_f64(c.embedded), to_f64(c.family))
}

/// Capped cost sharing of the six compositions, given the gross cost sharing
/// of employee, spouse, child 1 and child 2. People are summed in that order.
fn compositions(g: &[f64; 4], caps: (f64, f64, f64)) -> [f64; 6] {
    let (single, emb, fam) = caps;
    let [e0, ..] = *g;
    let [e, s, c1, c2] = g.map(|x| x.min(emb));
    [
        e0.min(single),
        (e + s).min(fam),
        (e + c1).min(fam),
        (e + c1 + c2).min(fam),
        (e + s + c1).min(fam),
        (e + s + c1 + c2).min(fam),
    ]
}

/// The most the layer can pay one household in a year (the all-max
/// exposure), × 1e8 for unknown households' mix weighting:
/// `max over k = 1..n of [min(Bf, k·Bi) − min(Vf, k·Ve)]`, and `Bi − Vi`
/// for one person.
#[must_use]
pub fn household_exposure_e8(rated: &RatedCensus, h: &Household, base: Caps, ver: Caps) -> i128 {
    let exposure = |n: usize| -> i128 {
        if n == 1 {
            return i128::from(base.individual - ver.individual);
        }
        (1..=n)
            .map(|k| {
                let k = i128::try_from(k).unwrap_or(0);
                (i128::from(base.family)).min(k * i128::from(base.embedded))
                    - (i128::from(ver.family)).min(k * i128::from(ver.embedded))
            })
            .max()
            .unwrap_or(0)
    };
    match &h.shape {
        Shape::Known { people, .. } => exposure(people.len()) * E8,
        Shape::Unknown { .. } => weighted(rated, exposure),
    }
}

/// The member out-of-pocket allowance of one household in the all-max year
/// (the version maximum: individual for one person, family otherwise), × 1e8.
#[must_use]
pub fn household_allowance_e8(rated: &RatedCensus, h: &Household, ver: Caps) -> i128 {
    let allowance = |n: usize| i128::from(if n == 1 { ver.individual } else { ver.family });
    match &h.shape {
        Shape::Known { people, .. } => allowance(people.len()) * E8,
        Shape::Unknown { .. } => weighted(rated, allowance),
    }
}

/// Σ over compositions of weight × f(people in the composition), × 1e8.
fn weighted(rated: &RatedCensus, f: impl Fn(usize) -> i128) -> i128 {
    COMPOSITIONS
        .iter()
        .zip(rated.composition_weights_e8)
        .map(|(&(tier, kids), w)| {
            let partner = usize::from(matches!(tier, Tier::EmployeeSpouse | Tier::Family));
            w * f(1 + partner + kids)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use time::macros::date;

    use super::*;
    use crate::census::{CensusMember, CensusRules};
    use crate::claims::ClaimsDistribution;
    use crate::household::CensusContext;
    use crate::rate_card::tests::card;

    fn plan() -> LayerPlan {
        LayerPlan {
            deductible: 340_000,
            coinsurance_pct: 20,
            base: Caps {
                individual: 750_000,
                embedded: 750_000,
                family: 1_500_000,
            },
            versions: [
                Caps {
                    individual: 170_000,
                    embedded: 340_000,
                    family: 340_000,
                },
                Caps {
                    individual: 340_000,
                    embedded: 340_000,
                    family: 680_000,
                },
            ],
        }
    }

    fn rated(census: &[CensusMember], years: u32) -> RatedCensus {
        let c = card();
        let mut r = RatedCensus::build(
            census,
            CensusContext {
                card: &c,
                plan_year_start: date!(2026 - 01 - 01),
                partner: None,
                rules: CensusRules { require_dob: true },
                fallback_zip: None,
            },
        )
        .unwrap();
        r.group.simulated_plan_years = years;
        r
    }

    #[test]
    fn the_single_person_mean_matches_the_closed_form_within_4_standard_errors() {
        let years = 20_000;
        for (dob, zip) in [
            (date!(1995 - 05 - 01), "94103"),
            (date!(1970 - 05 - 01), "94103"),
            (date!(1962 - 05 - 01), "10001"),
        ] {
            for (d, pct, bi) in [
                (340_000, 20, 750_000),
                (170_000, 30, 850_000),
                (500_000, 10, 700_000),
            ] {
                let r = rated(&[CensusMember::new("E1", dob, zip)], years);
                let mut p = plan();
                p.deductible = d;
                p.coinsurance_pct = pct;
                p.base = Caps {
                    individual: bi,
                    embedded: bi,
                    family: 2 * bi,
                };
                let sim = simulate(&r, &p);
                let h = &r.households[0];
                let Shape::Known { people, .. } = &h.shape else {
                    panic!()
                };
                let person = sim_person(&r, h, &people[0]);
                let dist = ClaimsDistribution {
                    mu: person.mu,
                    sigma: r.group.claims.sigma,
                    p0: r.group.claims.zero_probability,
                };
                for v in 0..2 {
                    let ys = &sim.versions[v].pool_by_year;
                    let n = to_f64(i64::try_from(ys.len()).unwrap());
                    let mean = ys.iter().map(|&x| to_f64(x)).sum::<f64>() / n;
                    let var =
                        ys.iter().map(|&x| (to_f64(x) - mean).powi(2)).sum::<f64>() / (n - 1.0);
                    let se = (var / n).sqrt();
                    let exact = dist.expected_single_layer(
                        to_f64(d),
                        f64::from(pct) / 100.0,
                        to_f64(bi),
                        to_f64(p.versions[v].individual),
                    );
                    assert!(
                        (mean - exact).abs() <= 4.0 * se,
                        "dob {dob} d {d} v {v}: simulated {mean} vs exact {exact} (se {se})"
                    );
                }
            }
        }
    }

    #[test]
    fn the_layer_is_never_negative_and_bounded_by_exposure() {
        let mut m = CensusMember::new("E1", date!(1980 - 01 - 01), "94103");
        m.dependents = None;
        let mut f = CensusMember::new("E2", date!(1975 - 01 - 01), "94103");
        f.dependents = Some(
            serde_json::from_str(r#"[{"relationship":"spouse","dob":"1976-02-02"},{"relationship":"child","dob":"2015-03-03"}]"#)
                .unwrap(),
        );
        let r = rated(&[m, f], 500);
        let p = plan();
        let sim = simulate(&r, &p);
        for v in 0..2 {
            let exposure: i128 = r
                .households
                .iter()
                .map(|h| household_exposure_e8(&r, h, p.base, p.versions[v]))
                .sum();
            for &y in &sim.versions[v].pool_by_year {
                assert!(y >= 0);
                assert!(i128::from(y) * E8 <= exposure + 2 * E8, "{y} > {exposure}");
            }
        }
        assert_eq!(sim.draws, 500 * (4 + 3));
    }

    #[test]
    fn exposure_matches_the_formula() {
        let r = rated(
            &[CensusMember::new("E1", date!(1980 - 01 - 01), "94103")],
            10,
        );
        let p = plan();
        let h = &r.households[0];
        // One person: Bi − Vi.
        assert_eq!(
            household_exposure_e8(&r, h, p.base, p.versions[0]),
            (750_000 - 170_000) * E8
        );
    }

    #[test]
    fn results_do_not_depend_on_thread_count() {
        let census: Vec<CensusMember> = (0..100)
            .map(|i| {
                let mut m = CensusMember::new(&format!("E{i}"), date!(1980 - 01 - 01), "94103");
                if i % 3 == 0 {
                    m.dependents = None;
                }
                m
            })
            .collect();
        let r = rated(&census, 200);
        let a = simulate(&r, &plan());
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let b = pool.install(|| simulate(&r, &plan()));
        assert_eq!(a, b);
    }
}
