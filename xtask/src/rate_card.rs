//! `cargo xtask rate-card`: regenerates the rate card from the public data.
//!
//! The recipe is the one in the data folder's `SOURCES.md` ("How they join"):
//! ZCTA → primary county → state → rating area, then the area's 2026 premium
//! levels restated as age-21 base rates with the state's age curve. The output
//! depends only on the input files: the same inputs give byte-identical
//! output.

mod age_curve;
mod decimal;
mod geography;
mod inputs;
mod levels;
mod render;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use anyhow::{Context as _, ensure};

use crate::rate_card::age_curve::MilliCurve;
use crate::rate_card::levels::AreaRates;

/// The date whose values the card uses.
pub(crate) const PLAN_DATE: &str = "2026-01-01";

/// Names of the input files in the data folder.
pub(crate) mod files {
    /// ZCTA → primary county, population.
    pub(crate) const PRIMARY_COUNTY: &str = "census2020_zcta_primary_county.csv";
    /// County FIPS → state and county name.
    pub(crate) const COUNTY_FIPS: &str = "pe_county_fips_2020.csv.gz";
    /// PolicyEngine county name key → rating area.
    pub(crate) const PE_COUNTY_AREAS: &str = "pe_aca_rating_areas_by_county.csv";
    /// CMS 2014 county → rating area.
    pub(crate) const CMS_COUNTY_AREAS: &str = "hrecht_cms_county_rating_areas_2014.csv";
    /// CMS 2014 ZIP3 → rating area.
    pub(crate) const CMS_ZIP3_AREAS: &str = "hrecht_cms_zip3_rating_areas_2014.csv";
    /// Los Angeles County ZIP3 → rating area.
    pub(crate) const LA_ZIP3_AREAS: &str = "pe_la_county_zip3_rating_area.yaml";
    /// Second-lowest-cost silver premium at age 0 by area.
    pub(crate) const SLCSP: &str = "pe_slcsp_age0_by_state_rating_area.yaml";
    /// Lowest-cost bronze premium at age 0 by area.
    pub(crate) const LCBP: &str = "pe_lcbp_age0_by_state_rating_area.yaml";
    /// Prefix of the age-curve files (`default` or a lower-case state code).
    pub(crate) const AGE_CURVE_PREFIX: &str = "pe_age_curve_";
    /// Suffix of the age-curve files.
    pub(crate) const AGE_CURVE_SUFFIX: &str = ".yaml";
}

/// Everything the card holds that comes from the data.
#[derive(Debug)]
pub(crate) struct RateCard {
    /// The federal default age curve, in milli factors relative to age 21.
    pub(crate) default_curve: MilliCurve,
    /// States with their own age curve.
    pub(crate) state_curves: BTreeMap<String, MilliCurve>,
    /// Area id → age-21 base rates, for the areas with both 2026 levels.
    pub(crate) areas: BTreeMap<String, AreaRates>,
    /// Area id → sorted ZCTAs mapped to it.
    pub(crate) zip_areas: BTreeMap<String, Vec<String>>,
    /// ZIP3 prefix → area id.
    pub(crate) zip3_areas: BTreeMap<String, String>,
    /// One provenance line per input file.
    pub(crate) sources: Vec<String>,
    /// Coverage line for `[meta]`.
    pub(crate) coverage: String,
    /// Diagnostics for the person running the generator (not written).
    pub(crate) notes: Vec<String>,
}

/// What [`write`] reports.
#[derive(Debug)]
pub(crate) struct Summary {
    /// Size of the written file.
    pub(crate) bytes: usize,
    /// The coverage line.
    pub(crate) coverage: String,
    /// Diagnostics.
    pub(crate) notes: Vec<String>,
}

/// Builds the card from `data` and writes it to `out`.
pub(crate) fn write(data: &Path, out: &Path) -> anyhow::Result<Summary> {
    let card = build(data)?;
    let text = render::render(&card)?;
    if let Some(parent) = out.parent() {
        fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    fs::write(out, &text).with_context(|| format!("cannot write {}", out.display()))?;
    Ok(Summary {
        bytes: text.len(),
        coverage: card.coverage,
        notes: card.notes,
    })
}

/// Reads the data folder and computes the card's contents.
pub(crate) fn build(data: &Path) -> anyhow::Result<RateCard> {
    let (default_curve, state_curves) = read_curves(data)?;
    let geography = geography::map_zctas(data)?;
    let slcsp = levels::read(&data.join(files::SLCSP))?;
    let lcbp = levels::read(&data.join(files::LCBP))?;

    let mut notes = Vec::new();
    let mut areas = BTreeMap::new();
    for (area, &slcsp_cents) in &slcsp {
        let Some(&lcbp_cents) = lcbp.get(area) else {
            notes.push(format!("{area} has a silver level but no bronze level"));
            continue;
        };
        let curve = state_curves.get(&area.state).unwrap_or(&default_curve);
        let rates = levels::rates(&area.state, slcsp_cents, lcbp_cents, curve[0])
            .with_context(|| format!("cannot price {area}"))?;
        areas.insert(area.to_string(), rates);
    }
    for area in lcbp.keys().filter(|area| !slcsp.contains_key(*area)) {
        notes.push(format!("{area} has a bronze level but no silver level"));
    }

    let mut zip_areas: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // ZIP3 → area id → population of its ZCTAs under that prefix.
    let mut zip3_population: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for (zcta, area) in &geography.areas {
        let id = area.to_string();
        zip_areas.entry(id.clone()).or_default().push(zcta.clone());
        let prefix = zcta.get(..3).context("short ZCTA")?.to_owned();
        let population = geography.population.get(zcta).copied().unwrap_or(0);
        *zip3_population
            .entry(prefix)
            .or_default()
            .entry(id)
            .or_default() += population;
    }
    let mut zip3_areas = BTreeMap::new();
    for (prefix, by_area) in &zip3_population {
        // Iterating in id order and replacing only on a strictly larger
        // population breaks ties towards the smallest id.
        let mut best: Option<(&String, u64)> = None;
        for (id, &population) in by_area {
            if best.is_none_or(|(_, top)| population > top) {
                best = Some((id, population));
            }
        }
        if let Some((id, _)) = best {
            if areas.contains_key(id) {
                zip3_areas.insert(prefix.clone(), id.clone());
            } else {
                notes.push(format!(
                    "ZIP3 {prefix} falls mostly in unpriced {id}: no fallback"
                ));
            }
        }
    }
    for (id, zctas) in &zip_areas {
        if !areas.contains_key(id) {
            notes.push(format!(
                "{id} has {} ZCTAs but no 2026 levels: uncovered",
                zctas.len()
            ));
        }
    }
    for (rule, count) in &geography.counts {
        notes.push(format!("{count} ZCTAs: {rule}"));
    }
    if !geography.unmapped.is_empty() {
        notes.push(format!(
            "ZCTAs in a state without a rating area: {}",
            geography.unmapped.join(", ")
        ));
    }
    ensure!(!areas.is_empty(), "no area has 2026 premium levels");

    let coverage = format!(
        "{} ZCTAs mapped to {} areas; {} areas priced; {} ZIP3 fallbacks",
        geography.areas.len(),
        zip_areas.len(),
        areas.len(),
        zip3_areas.len()
    );
    Ok(RateCard {
        sources: render::sources(state_curves.keys()),
        default_curve,
        state_curves,
        areas,
        zip_areas,
        zip3_areas,
        coverage,
        notes,
    })
}

/// Reads the default curve and every `pe_age_curve_<st>.yaml` state curve.
fn read_curves(data: &Path) -> anyhow::Result<(MilliCurve, BTreeMap<String, MilliCurve>)> {
    let default_path = data.join(format!(
        "{}default{}",
        files::AGE_CURVE_PREFIX,
        files::AGE_CURVE_SUFFIX
    ));
    let default_curve = age_curve::read(&default_path)?;
    let mut state_curves = BTreeMap::new();
    let entries = fs::read_dir(data).with_context(|| format!("cannot list {}", data.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", data.display()))?;
        let name = entry.file_name();
        let Some(state) = name
            .to_str()
            .and_then(|n| n.strip_prefix(files::AGE_CURVE_PREFIX))
            .and_then(|n| n.strip_suffix(files::AGE_CURVE_SUFFIX))
            .filter(|st| st.len() == 2 && st.bytes().all(|b| b.is_ascii_lowercase()))
        else {
            continue;
        };
        let curve = age_curve::read(&entry.path())?;
        state_curves.insert(state.to_ascii_uppercase(), curve);
    }
    Ok((default_curve, state_curves))
}
