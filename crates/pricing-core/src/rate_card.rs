//! The versioned, layered rate card.
//!
//! A card is a TOML document with layers `default` → `state:XX` →
//! `area:XX-NN` → `partner:prt_…`. A lookup takes the most specific layer
//! that defines a value. Group-level parameters (versions, household mix,
//! claims model, thresholds) resolve along the chain of the census's primary
//! rating area; per-person rates resolve along each member's own area chain.
//! The chain that priced a result is named in [`GroupParams::source`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::RateCardError;

/// Number of entries of an age curve: ages 0..=64 (64 applies to 64+).
pub const AGE_CURVE_LEN: usize = 65;

/// The two versions the service prices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VersionId {
    /// The richer version (lower member maxima).
    Diamond,
    /// The leaner version.
    Value,
}

impl VersionId {
    /// Both versions, diamond first.
    pub const ALL: [Self; 2] = [Self::Diamond, Self::Value];

    /// Index into per-version arrays.
    #[must_use]
    pub const fn index(self) -> usize {
        match self {
            Self::Diamond => 0,
            Self::Value => 1,
        }
    }

    /// Wire id (`diamond`, `value`).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Diamond => "diamond",
            Self::Value => "value",
        }
    }
}

/// Claims-model parameters (pricing model section 5).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimsParams {
    /// Probability of a zero-claims year (`p0`).
    pub zero_probability: f64,
    /// Lognormal σ of the positive part.
    pub sigma: f64,
    /// Target loss ratio of the platinum benchmark.
    pub target_loss_ratio: f64,
    /// Actuarial value of a platinum plan.
    pub platinum_actuarial_value: f64,
}

/// IRS HDHP limits for the plan year.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IrsLimits {
    /// Minimum deductible, self-only coverage.
    pub min_deductible_self_cents: i64,
    /// Minimum deductible, family coverage (and for any one member of it).
    pub min_deductible_family_cents: i64,
    /// Maximum out-of-pocket, self-only.
    pub max_oop_self_cents: i64,
    /// Maximum out-of-pocket, family.
    pub max_oop_family_cents: i64,
}

/// The illustrative funding split reported on quotes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FundingBreakdown {
    /// Expected claims, whole percent.
    pub expected_claims_pct: u32,
    /// Stop-loss, whole percent.
    pub stop_loss_pct: u32,
    /// Care navigation, whole percent.
    pub care_navigation_pct: u32,
    /// Administration, whole percent.
    pub admin_fees_pct: u32,
    /// Says the split is illustrative.
    pub note: String,
}

/// A plan design named by the card (the benchmark or the market base plan).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanDesign {
    /// Carrier.
    pub carrier: String,
    /// Plan name.
    pub plan_name: String,
    /// Network.
    pub network: String,
    /// Metal tier.
    pub metal_tier: String,
    /// Plan type (`PPO`, …).
    pub plan_type: String,
    /// Individual deductible.
    pub deductible_individual_cents: i64,
    /// Family deductible.
    pub deductible_family_cents: i64,
    /// Individual out-of-pocket maximum.
    pub oop_max_individual_cents: i64,
    /// Family out-of-pocket maximum.
    pub oop_max_family_cents: i64,
    /// Member coinsurance after the deductible, whole percent.
    pub coinsurance_pct: u32,
    /// HSA-eligible.
    pub hsa_eligible: bool,
}

/// A feature line of a version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Feature {
    /// Title.
    pub title: String,
    /// Description.
    pub description: String,
}

/// Per-version values of one layer; each may be left to a less specific layer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct VersionLayer {
    name: Option<String>,
    description: Option<String>,
    member_oop_max_individual_cents: Option<i64>,
    member_oop_max_family_cents: Option<i64>,
    care_navigation_pmpm_cents: Option<i64>,
    admin_pmpm_cents: Option<i64>,
    risk_margin_bp: Option<i64>,
    features: Option<Vec<Feature>>,
}

/// Resolved parameters of one version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VersionParams {
    /// Which version.
    pub id: VersionId,
    /// Display name.
    pub name: String,
    /// One-sentence description.
    pub description: String,
    /// Member out-of-pocket maximum, self-only.
    pub member_oop_max_individual_cents: i64,
    /// Member out-of-pocket maximum, family.
    pub member_oop_max_family_cents: i64,
    /// Care navigation fee per covered person per month.
    pub care_navigation_pmpm_cents: i64,
    /// Administration fee per covered person per month.
    pub admin_pmpm_cents: i64,
    /// Risk margin on the layer, basis points.
    pub risk_margin_bp: i64,
    /// Feature lines.
    pub features: Vec<Feature>,
}

impl VersionParams {
    /// Care navigation plus administration, per covered person per month.
    #[must_use]
    pub fn fees_pmpm_cents(&self) -> i64 {
        self.care_navigation_pmpm_cents + self.admin_pmpm_cents
    }
}

/// One layer as written in the card file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Layer {
    quote_expiry_days: Option<u32>,
    in_review_threshold: Option<u32>,
    simulated_plan_years: Option<u32>,
    household_mix_bp: Option<[u32; 4]>,
    two_children_share_bp: Option<u32>,
    default_child_age: Option<u32>,
    age_curve_milli: Option<Vec<u32>>,
    claims: Option<ClaimsParams>,
    irs: Option<IrsLimits>,
    funding_breakdown: Option<FundingBreakdown>,
    benchmark_plan: Option<PlanDesign>,
    market_base_plan: Option<PlanDesign>,
    versions: Option<BTreeMap<VersionId, VersionLayer>>,
    benchmark_rate21_cents: Option<i64>,
    market_base_rate21_cents: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CardFile {
    format: u32,
    version: String,
    plan_year: i32,
    layers: BTreeMap<String, Layer>,
    #[serde(default)]
    zip_areas: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    zip3_areas: BTreeMap<String, String>,
    #[serde(default)]
    meta: Option<toml::Table>,
}

/// Group-level parameters resolved for one census.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupParams {
    /// Card version, e.g. `2026.1`.
    pub card_version: String,
    /// Days a quote stays valid.
    pub quote_expiry_days: u32,
    /// Counted employees above which a quote is `in_review`.
    pub in_review_threshold: u32,
    /// Simulated plan years.
    pub simulated_plan_years: u32,
    /// Household mix in basis points: employeeOnly, employeeSpouse,
    /// employeeChildren, family.
    pub household_mix_bp: [u32; 4],
    /// Share of households with children that have two (the rest have one).
    pub two_children_share_bp: u32,
    /// Default age of a modelled or undated child.
    pub default_child_age: u32,
    /// Claims model.
    pub claims: ClaimsParams,
    /// IRS HDHP limits.
    pub irs: IrsLimits,
    /// Funding split.
    pub funding_breakdown: FundingBreakdown,
    /// The benchmark design (rates are per area).
    pub benchmark_plan: PlanDesign,
    /// The default market base plan design (rates are per area).
    pub market_base_plan: PlanDesign,
    /// Diamond then value.
    pub versions: [VersionParams; 2],
    /// `rate-card <version> <layer chain>`.
    pub source: String,
}

impl GroupParams {
    /// The parameters of one version.
    #[must_use]
    pub fn version(&self, id: VersionId) -> &VersionParams {
        match id {
            VersionId::Diamond => &self.versions[0],
            VersionId::Value => &self.versions[1],
        }
    }
}

/// A rating area's resolved rates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Market {
    /// Area id, e.g. `CA-04`.
    pub area: String,
    /// Two-letter state.
    pub state: String,
    /// Age factors in thousandths relative to age 21, ages 0..=64.
    pub age_curve_milli: Vec<u32>,
    /// Platinum benchmark monthly rate at age 21.
    pub benchmark_rate21_cents: i64,
    /// Market base HSA PPO monthly rate at age 21.
    pub market_base_rate21_cents: i64,
    /// The layers that defined these values, least specific first.
    pub layers: Vec<String>,
}

impl Market {
    /// Age factor in thousandths for `age` (64 and over use 64).
    #[must_use]
    pub fn factor_milli(&self, age: u32) -> u32 {
        let i = usize::try_from(age.min(64)).unwrap_or(64);
        self.age_curve_milli.get(i).copied().unwrap_or(1000)
    }

    /// `round(rate21 × factor(age))`, half away from zero.
    #[must_use]
    pub fn rate(&self, rate21_cents: i64, age: u32) -> i64 {
        // Card rates are positive (validated at load), so adding half the
        // divisor rounds half away from zero.
        rate21_cents
            .checked_mul(i64::from(self.factor_milli(age)))
            .map_or(i64::MAX, |num| (num + 500) / 1000)
    }
}

/// Index of a rating area in a [`RateCard`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AreaIdx(u16);

impl AreaIdx {
    /// Position in the card's sorted list of areas.
    #[must_use]
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

const NO_AREA: u16 = u16::MAX;

/// A loaded, validated rate card.
#[derive(Debug, Clone)]
pub struct RateCard {
    version: String,
    plan_year: i32,
    layers: BTreeMap<String, Layer>,
    areas: Vec<String>,
    zip5: Vec<u16>,
    zip3: Vec<u16>,
    meta: Option<toml::Table>,
}

/// The 2026 card generated from public data (`rate-cards/2026.toml`).
pub const RATE_CARD_2026: &str = include_str!("../../../rate-cards/2026.toml");

impl RateCard {
    /// The built-in 2026 card.
    ///
    /// # Errors
    /// Never in a released build (a test loads it); the signature keeps the
    /// loader's contract.
    pub fn builtin_2026() -> Result<Self, RateCardError> {
        Self::from_toml_str(RATE_CARD_2026)
    }

    /// Parses and validates a card.
    ///
    /// # Errors
    /// [`RateCardError::Parse`] for TOML or schema errors,
    /// [`RateCardError::Invalid`] when a validation rule fails.
    pub fn from_toml_str(text: &str) -> Result<Self, RateCardError> {
        let file: CardFile = toml::from_str(text)?;
        if file.format != 1 {
            return Err(invalid(format!("unsupported card format {}", file.format)));
        }
        let mut areas: Vec<String> = file.zip_areas.keys().cloned().collect();
        for (key, _) in file.layers.iter().filter(|(k, _)| k.starts_with("area:")) {
            let id = key.trim_start_matches("area:").to_owned();
            if !areas.contains(&id) {
                areas.push(id);
            }
        }
        for a in file.zip3_areas.values() {
            if !areas.contains(a) {
                areas.push(a.clone());
            }
        }
        areas.sort();
        if areas.len() >= usize::from(NO_AREA) {
            return Err(invalid("too many rating areas".to_owned()));
        }
        let index_of = |id: &str| -> Result<u16, RateCardError> {
            let i = areas
                .binary_search_by(|a| a.as_str().cmp(id))
                .map_err(|_| invalid(format!("unknown area {id}")))?;
            u16::try_from(i).map_err(|_| invalid("too many rating areas".to_owned()))
        };
        let mut zip5 = vec![NO_AREA; 100_000];
        for (area, zips) in &file.zip_areas {
            let idx = index_of(area)?;
            for z in zips {
                let n = zip_number(z).ok_or_else(|| invalid(format!("bad zip {z} in {area}")))?;
                if let Some(slot) = zip5.get_mut(n) {
                    *slot = idx;
                }
            }
        }
        let mut zip3 = vec![NO_AREA; 1000];
        for (prefix, area) in &file.zip3_areas {
            let n = prefix
                .parse::<usize>()
                .ok()
                .filter(|_| prefix.len() == 3)
                .ok_or_else(|| invalid(format!("bad zip3 {prefix}")))?;
            if let Some(slot) = zip3.get_mut(n) {
                *slot = index_of(area)?;
            }
        }
        let card = Self {
            version: file.version,
            plan_year: file.plan_year,
            layers: file.layers,
            areas,
            zip5,
            zip3,
            meta: file.meta,
        };
        card.validate()?;
        Ok(card)
    }

    /// Card version, e.g. `2026.1`.
    #[must_use]
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Plan year the card prices.
    #[must_use]
    pub fn plan_year(&self) -> i32 {
        self.plan_year
    }

    /// Provenance table of the card, when present.
    #[must_use]
    pub fn meta(&self) -> Option<&toml::Table> {
        self.meta.as_ref()
    }

    /// The rating area of a 5-digit ZIP: the exact ZIP first, then its
    /// 3-digit prefix.
    #[must_use]
    pub fn area_for_zip(&self, zip: &str) -> Option<AreaIdx> {
        let n = zip_number(zip)?;
        let exact = self.zip5.get(n).copied().unwrap_or(NO_AREA);
        let area = if exact == NO_AREA {
            self.zip3.get(n / 100).copied().unwrap_or(NO_AREA)
        } else {
            exact
        };
        (area != NO_AREA).then_some(AreaIdx(area))
    }

    /// The id (`CA-04`) of an area.
    #[must_use]
    pub fn area_id(&self, area: AreaIdx) -> &str {
        self.areas
            .get(usize::from(area.0))
            .map_or("", String::as_str)
    }

    /// Number of rating areas the card names.
    #[must_use]
    pub fn area_count(&self) -> usize {
        self.areas.len()
    }

    /// The area with id `id` (`CA-04`).
    #[must_use]
    pub fn area_for_id(&self, id: &str) -> Option<AreaIdx> {
        let i = self.areas.binary_search_by(|a| a.as_str().cmp(id)).ok()?;
        u16::try_from(i).ok().map(AreaIdx)
    }

    /// Number of ZIPs mapped exactly.
    #[must_use]
    pub fn zip_count(&self) -> usize {
        self.zip5.iter().filter(|&&a| a != NO_AREA).count()
    }

    fn chain<'a>(
        &'a self,
        area: Option<AreaIdx>,
        partner: Option<&str>,
    ) -> Vec<(&'a str, &'a Layer)> {
        let mut keys = vec!["default".to_owned()];
        if let Some(a) = area {
            let id = self.area_id(a);
            if let Some((state, _)) = id.split_once('-') {
                keys.push(format!("state:{state}"));
            }
            keys.push(format!("area:{id}"));
        }
        if let Some(p) = partner {
            keys.push(format!("partner:{p}"));
        }
        keys.iter()
            .filter_map(|k| self.layers.get_key_value(k.as_str()))
            .map(|(k, l)| (k.as_str(), l))
            .collect()
    }

    /// Resolved rates of an area, or `None` when the card has no price
    /// levels for it (the area is then not covered).
    #[must_use]
    pub fn market(&self, area: AreaIdx, partner: Option<&str>) -> Option<Market> {
        let chain = self.chain(Some(area), partner);
        let id = self.area_id(area).to_owned();
        let state = id
            .split_once('-')
            .map(|(s, _)| s.to_owned())
            .unwrap_or_default();
        Some(Market {
            age_curve_milli: pick(&chain, |l| l.age_curve_milli.as_ref())?.clone(),
            benchmark_rate21_cents: *pick(&chain, |l| l.benchmark_rate21_cents.as_ref())?,
            market_base_rate21_cents: *pick(&chain, |l| l.market_base_rate21_cents.as_ref())?,
            layers: chain.iter().map(|(k, _)| (*k).to_owned()).collect(),
            area: id,
            state,
        })
    }

    /// Group-level parameters along the chain of `primary` (the census's
    /// primary area) and `partner`.
    ///
    /// # Errors
    /// [`RateCardError::Invalid`] when the merged values break a rule (the
    /// default layer is validated at load, so only an override can).
    pub fn group_params(
        &self,
        primary: Option<AreaIdx>,
        partner: Option<&str>,
    ) -> Result<GroupParams, RateCardError> {
        let chain = self.chain(primary, partner);
        let params = resolve_group(&self.version, &chain)?;
        validate_group(&params)?;
        Ok(params)
    }

    fn validate(&self) -> Result<(), RateCardError> {
        if !self.layers.contains_key("default") {
            return Err(invalid("missing the default layer".to_owned()));
        }
        for (key, layer) in &self.layers {
            let valid_key = key == "default"
                || key.starts_with("state:")
                || key.starts_with("area:")
                || key.starts_with("partner:prt_");
            if !valid_key {
                return Err(invalid(format!("unknown layer kind `{key}`")));
            }
            if let Some(curve) = &layer.age_curve_milli {
                validate_curve(key, curve)?;
            }
            for (name, v) in [
                ("benchmark_rate21_cents", layer.benchmark_rate21_cents),
                ("market_base_rate21_cents", layer.market_base_rate21_cents),
            ] {
                if v.is_some_and(|c| c <= 0) {
                    return Err(invalid(format!("{key}: {name} must be positive")));
                }
            }
        }
        // Every layer merged over the default must give a valid group.
        let default = self.chain(None, None);
        validate_group(&resolve_group(&self.version, &default)?)?;
        for (key, layer) in &self.layers {
            if key != "default" {
                let mut chain = default.clone();
                chain.push((key.as_str(), layer));
                validate_group(&resolve_group(&self.version, &chain)?)
                    .map_err(|e| invalid(format!("layer {key}: {e}")))?;
            }
        }
        Ok(())
    }
}

fn invalid(message: String) -> RateCardError {
    RateCardError::Invalid(message)
}

fn zip_number(zip: &str) -> Option<usize> {
    if zip.len() == 5 && zip.bytes().all(|b| b.is_ascii_digit()) {
        zip.parse().ok()
    } else {
        None
    }
}

fn pick<'a, T>(
    chain: &[(&str, &'a Layer)],
    f: impl Fn(&'a Layer) -> Option<&'a T>,
) -> Option<&'a T> {
    chain.iter().rev().find_map(|(_, l)| f(l))
}

fn pick_version<'a, T>(
    chain: &[(&str, &'a Layer)],
    id: VersionId,
    f: impl Fn(&'a VersionLayer) -> Option<&'a T>,
) -> Option<&'a T> {
    chain
        .iter()
        .rev()
        .find_map(|(_, l)| l.versions.as_ref().and_then(|v| v.get(&id)).and_then(&f))
}

fn resolve_group(version: &str, chain: &[(&str, &Layer)]) -> Result<GroupParams, RateCardError> {
    fn need<'a, T>(v: Option<&'a T>, name: &str) -> Result<&'a T, RateCardError> {
        v.ok_or_else(|| invalid(format!("no layer defines {name}")))
    }
    let version_params = |id: VersionId| -> Result<VersionParams, RateCardError> {
        let field = |name: &str| format!("versions.{}.{name}", id.as_str());
        Ok(VersionParams {
            id,
            name: need(pick_version(chain, id, |v| v.name.as_ref()), &field("name"))?.clone(),
            description: need(
                pick_version(chain, id, |v| v.description.as_ref()),
                &field("description"),
            )?
            .clone(),
            member_oop_max_individual_cents: *need(
                pick_version(chain, id, |v| v.member_oop_max_individual_cents.as_ref()),
                &field("member_oop_max_individual_cents"),
            )?,
            member_oop_max_family_cents: *need(
                pick_version(chain, id, |v| v.member_oop_max_family_cents.as_ref()),
                &field("member_oop_max_family_cents"),
            )?,
            care_navigation_pmpm_cents: *need(
                pick_version(chain, id, |v| v.care_navigation_pmpm_cents.as_ref()),
                &field("care_navigation_pmpm_cents"),
            )?,
            admin_pmpm_cents: *need(
                pick_version(chain, id, |v| v.admin_pmpm_cents.as_ref()),
                &field("admin_pmpm_cents"),
            )?,
            risk_margin_bp: *need(
                pick_version(chain, id, |v| v.risk_margin_bp.as_ref()),
                &field("risk_margin_bp"),
            )?,
            features: pick_version(chain, id, |v| v.features.as_ref())
                .cloned()
                .unwrap_or_default(),
        })
    };
    let names: Vec<&str> = chain.iter().map(|(k, _)| *k).collect();
    Ok(GroupParams {
        card_version: version.to_owned(),
        quote_expiry_days: *need(
            pick(chain, |l| l.quote_expiry_days.as_ref()),
            "quote_expiry_days",
        )?,
        in_review_threshold: *need(
            pick(chain, |l| l.in_review_threshold.as_ref()),
            "in_review_threshold",
        )?,
        simulated_plan_years: *need(
            pick(chain, |l| l.simulated_plan_years.as_ref()),
            "simulated_plan_years",
        )?,
        household_mix_bp: *need(
            pick(chain, |l| l.household_mix_bp.as_ref()),
            "household_mix_bp",
        )?,
        two_children_share_bp: *need(
            pick(chain, |l| l.two_children_share_bp.as_ref()),
            "two_children_share_bp",
        )?,
        default_child_age: *need(
            pick(chain, |l| l.default_child_age.as_ref()),
            "default_child_age",
        )?,
        claims: *need(pick(chain, |l| l.claims.as_ref()), "claims")?,
        irs: *need(pick(chain, |l| l.irs.as_ref()), "irs")?,
        funding_breakdown: need(
            pick(chain, |l| l.funding_breakdown.as_ref()),
            "funding_breakdown",
        )?
        .clone(),
        benchmark_plan: need(pick(chain, |l| l.benchmark_plan.as_ref()), "benchmark_plan")?.clone(),
        market_base_plan: need(
            pick(chain, |l| l.market_base_plan.as_ref()),
            "market_base_plan",
        )?
        .clone(),
        versions: [
            version_params(VersionId::Diamond)?,
            version_params(VersionId::Value)?,
        ],
        source: format!("rate-card {version} {}", names.join(" > ")),
    })
}

fn validate_curve(key: &str, curve: &[u32]) -> Result<(), RateCardError> {
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

fn validate_group(p: &GroupParams) -> Result<(), RateCardError> {
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A small, complete card for unit tests: two areas in two states.
    pub(crate) const TEST_CARD: &str = r#"
format = 1
version = "test.1"
plan_year = 2026

[layers.default]
quote_expiry_days = 30
in_review_threshold = 200
simulated_plan_years = 400
household_mix_bp = [5500, 1500, 1000, 2000]
two_children_share_bp = 8000
default_child_age = 10
age_curve_milli = [765, 765, 765, 765, 765, 765, 765, 765, 765, 765, 765, 765, 765, 765, 765, 833, 859, 885, 913, 941, 970, 1000, 1000, 1000, 1000, 1004, 1024, 1048, 1087, 1119, 1135, 1159, 1183, 1198, 1214, 1222, 1230, 1238, 1246, 1262, 1278, 1302, 1325, 1357, 1397, 1444, 1500, 1563, 1635, 1706, 1786, 1865, 1952, 2040, 2135, 2230, 2333, 2437, 2548, 2603, 2714, 2810, 2873, 2952, 3000]
claims = { zero_probability = 0.15, sigma = 1.67, target_loss_ratio = 0.85, platinum_actuarial_value = 0.9 }
irs = { min_deductible_self_cents = 170000, min_deductible_family_cents = 340000, max_oop_self_cents = 850000, max_oop_family_cents = 1700000 }
funding_breakdown = { expected_claims_pct = 78, stop_loss_pct = 10, care_navigation_pct = 7, admin_fees_pct = 5, note = "Illustrative." }

[layers.default.benchmark_plan]
carrier = "Local market"
plan_name = "Platinum PPO benchmark"
network = "Broad PPO"
metal_tier = "Platinum"
plan_type = "PPO"
deductible_individual_cents = 25000
deductible_family_cents = 50000
oop_max_individual_cents = 300000
oop_max_family_cents = 600000
coinsurance_pct = 10
hsa_eligible = false

[layers.default.market_base_plan]
carrier = "Local market"
plan_name = "HSA PPO"
network = "Broad PPO"
metal_tier = "Bronze"
plan_type = "PPO"
deductible_individual_cents = 340000
deductible_family_cents = 680000
oop_max_individual_cents = 750000
oop_max_family_cents = 1500000
coinsurance_pct = 20
hsa_eligible = true

[layers.default.versions.diamond]
name = "Diamond"
description = "Diamond."
member_oop_max_individual_cents = 170000
member_oop_max_family_cents = 340000
care_navigation_pmpm_cents = 1800
admin_pmpm_cents = 1500
risk_margin_bp = 1000

[layers.default.versions.value]
name = "Value"
description = "Value."
member_oop_max_individual_cents = 340000
member_oop_max_family_cents = 680000
care_navigation_pmpm_cents = 1200
admin_pmpm_cents = 1200
risk_margin_bp = 800

[layers."state:NY"]
age_curve_milli = [412, 412, 412, 412, 412, 412, 412, 412, 412, 412, 412, 412, 412, 412, 412, 412, 412, 412, 412, 412, 412, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000]

[layers."area:CA-04"]
benchmark_rate21_cents = 80000
market_base_rate21_cents = 40000

[layers."area:NY-01"]
benchmark_rate21_cents = 120000
market_base_rate21_cents = 60000

[layers."partner:prt_0123456789ab"]
versions = { value = { admin_pmpm_cents = 1000 } }

[zip_areas]
"CA-04" = ["94103", "94110"]
"NY-01" = ["10001"]
"FL-22" = ["32456"]

[zip3_areas]
"941" = "CA-04"
"#;

    pub(crate) fn card() -> RateCard {
        RateCard::from_toml_str(TEST_CARD).unwrap()
    }

    #[test]
    fn zips_resolve_exactly_then_by_prefix() {
        let c = card();
        let exact = c.area_for_zip("94110").unwrap();
        assert_eq!(c.area_id(exact), "CA-04");
        let prefix = c.area_for_zip("94199").unwrap();
        assert_eq!(c.area_id(prefix), "CA-04");
        assert!(c.area_for_zip("99999").is_none());
        assert!(c.area_for_zip("9410").is_none());
        // Mapped, but the card has no price levels for it.
        let gulf = c.area_for_zip("32456").unwrap();
        assert!(c.market(gulf, None).is_none());
    }

    #[test]
    fn the_most_specific_layer_wins() {
        let c = card();
        let ny = c.area_for_zip("10001").unwrap();
        let m = c.market(ny, None).unwrap();
        assert_eq!(m.factor_milli(10), 412);
        assert_eq!(m.layers, ["default", "state:NY", "area:NY-01"]);
        let g = c.group_params(Some(ny), Some("prt_0123456789ab")).unwrap();
        assert_eq!(g.version(VersionId::Value).admin_pmpm_cents, 1000);
        assert_eq!(g.version(VersionId::Value).care_navigation_pmpm_cents, 1200);
        assert_eq!(
            g.source,
            "rate-card test.1 default > state:NY > area:NY-01 > partner:prt_0123456789ab"
        );
    }

    #[test]
    fn rates_are_rounded_once_per_person() {
        let c = card();
        let m = c.market(c.area_for_zip("94103").unwrap(), None).unwrap();
        assert_eq!(m.rate(80_000, 21), 80_000);
        assert_eq!(m.rate(80_000, 64), 240_000);
        assert_eq!(m.rate(80_000, 99), 240_000);
        // 80_001 × 0.765 = 61_200.765 → 61_201.
        assert_eq!(m.rate(80_001, 3), 61_201);
    }

    fn rejects(from: &str, to: &str, why: &str) {
        let text = TEST_CARD.replacen(from, to, 1);
        assert_ne!(text, TEST_CARD, "{from}");
        let err = RateCard::from_toml_str(&text).unwrap_err().to_string();
        assert!(err.contains(why), "{err} should mention {why}");
    }

    #[test]
    fn invalid_cards_are_rejected_with_a_reason() {
        rejects(
            "[5500, 1500, 1000, 2000]",
            "[5500, 1500, 1000, 2001]",
            "sum to 10000",
        );
        rejects(
            "member_oop_max_individual_cents = 170000\nmember_oop_max_family_cents = 340000",
            "member_oop_max_individual_cents = 350000\nmember_oop_max_family_cents = 680000",
            "diamond's member maxima",
        );
        rejects(
            "member_oop_max_family_cents = 340000",
            "member_oop_max_family_cents = 350000",
            "twice",
        );
        rejects(
            "risk_margin_bp = 1000",
            "risk_margin_bp = 100",
            "fees and margin",
        );
        rejects(
            "expected_claims_pct = 78",
            "expected_claims_pct = 77",
            "sum to 100",
        );
        rejects(
            "oop_max_family_cents = 1500000",
            "oop_max_family_cents = 760000",
            "too close",
        );
        rejects(
            "[layers.\"area:CA-04\"]",
            "[layers.\"region:CA-04\"]",
            "unknown layer kind",
        );
        rejects("format = 1", "format = 2", "format");
        rejects("[765, 765, 765", "[765, 765", "65 entries");
        rejects(
            "versions = { value = { admin_pmpm_cents = 1000 } }",
            "versions = { value = { admin_pmpm_cents = 9000 } }",
            "partner:prt_0123456789ab",
        );
    }
}
