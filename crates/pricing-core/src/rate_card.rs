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

mod markets;
mod resolve;
mod validate;

use resolve::resolve_group;
use validate::{validate_curve, validate_group};

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
    /// The area whose rates price this one, when the card has no price
    /// levels for it: the state's median priced area (see
    /// [`RateCard::proxy_area`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priced_as: Option<String>,
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
    /// Per area: the area that prices it when it has no levels, or
    /// `NO_AREA`.
    proxies: Vec<u16>,
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
        let mut card = Self {
            version: file.version,
            plan_year: file.plan_year,
            layers: file.layers,
            areas,
            zip5,
            zip3,
            proxies: Vec::new(),
            meta: file.meta,
        };
        card.validate()?;
        card.proxies = card.median_proxies();
        Ok(card)
    }

    /// Card version, e.g. `2026.1`.
    #[must_use]
    pub fn version(&self) -> &str {
        &self.version
    }

    /// When the card's rates were last updated (`[meta] updated_at`, a
    /// `YYYY-MM-DD` date), when the card says.
    #[must_use]
    pub fn updated_at(&self) -> Option<&str> {
        self.meta.as_ref()?.get("updated_at")?.as_str()
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

    /// The default child age of the default layer chain of `partner` (a
    /// census's group may take another from its primary area's chain).
    #[must_use]
    pub(crate) fn default_child_age(&self, partner: Option<&str>) -> Option<u32> {
        resolve::pick(&self.chain(None, partner), |l| l.default_child_age.as_ref()).copied()
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

/// The number a 5-digit ZIP spells; `None` for anything else.
fn zip_number(zip: &str) -> Option<usize> {
    if zip.len() != 5 {
        return None;
    }
    zip.bytes().try_fold(0usize, |n, b| {
        b.is_ascii_digit().then(|| n * 10 + usize::from(b - b'0'))
    })
}

#[cfg(test)]
pub(crate) mod tests;
