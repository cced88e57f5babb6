//! ZIP (ZCTA) → county → state → ACA rating area, following "How they join"
//! in the data folder's `SOURCES.md`.
//!
//! 1. The ZCTA's primary county gives the county FIPS; its first two digits
//!    give the state.
//! 2. AK, ID, MA and NE define areas by three-digit ZIP (2014 CMS table); Los
//!    Angeles County too (PolicyEngine's LA table); the rest of California uses
//!    the 2014 CMS county table (PolicyEngine's is wrong for five counties);
//!    everywhere else uses PolicyEngine's county table through the county name,
//!    falling back to the 2014 CMS county table by FIPS. Territories get no
//!    area.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use anyhow::{Context as _, bail, ensure};

use crate::rate_card::inputs::{Csv, Yaml, field, value_on};
use crate::rate_card::{PLAN_DATE, files};

/// States whose rating areas are defined by three-digit ZIP prefix.
const ZIP3_STATES: [&str; 4] = ["AK", "ID", "MA", "NE"];

/// Territories: no marketplace, so no rating area.
const TERRITORIES: [&str; 6] = ["AS", "GU", "MP", "PR", "UM", "VI"];

/// Los Angeles County, whose areas are defined by three-digit ZIP prefix.
const LOS_ANGELES_COUNTY: &str = "06037";

/// County FIPS codes renamed since the 2014 CMS county table, mapped to the
/// code that table uses: Oglala Lakota SD (formerly Shannon) and Kusilvak AK
/// (formerly Wade Hampton).
const FIPS_RENAMES_SINCE_2014: [(&str, &str); 2] = [("46102", "46113"), ("02158", "02270")];

/// Suffixes dropped when folding county names that do not match exactly.
const FOLDED_SUFFIXES: [&str; 6] = [
    "COUNTY",
    "PARISH",
    "BOROUGH",
    "CENSUSAREA",
    "MUNICIPIO",
    "MUNICIPALITY",
];

/// A rating area: state code and CMS area number.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Area {
    /// USPS state code, e.g. `CA`.
    pub(crate) state: String,
    /// CMS rating-area number within the state.
    pub(crate) number: u32,
}

impl fmt::Display for Area {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{:02}", self.state, self.number)
    }
}

/// The mapped ZCTAs.
#[derive(Debug, Default)]
pub(crate) struct Geography {
    /// ZCTA → rating area, for the ZCTAs that have one.
    pub(crate) areas: BTreeMap<String, Area>,
    /// ZCTA → population (ACS), for every ZCTA in the primary-county file.
    pub(crate) population: BTreeMap<String, u64>,
    /// How many ZCTAs each rule mapped or left out, for the generator's report.
    pub(crate) counts: BTreeMap<&'static str, usize>,
    /// ZCTAs in a state that got no area (not territories).
    pub(crate) unmapped: Vec<String>,
}

/// The lookup tables read from the data folder.
struct Tables {
    /// Two-digit state FIPS → USPS code.
    state_by_prefix: BTreeMap<String, String>,
    /// County FIPS → county name.
    county_names: BTreeMap<String, String>,
    /// PolicyEngine name key → area number.
    pe_by_key: BTreeMap<String, u32>,
    /// (folded name, state) → PolicyEngine area numbers of the keys that fold
    /// to it (usable only when there is exactly one).
    pe_by_folded: BTreeMap<(String, String), Vec<u32>>,
    /// County FIPS → area number (2014 CMS county table).
    cms_by_county: BTreeMap<String, u32>,
    /// (two-digit state FIPS, ZIP3) → area number (2014 CMS ZIP3 table).
    cms_by_zip3: BTreeMap<(String, String), u32>,
    /// ZIP3 → area number for Los Angeles County.
    la_by_zip3: BTreeMap<String, u32>,
}

/// Maps every ZCTA of the primary-county file to its rating area.
pub(crate) fn map_zctas(data: &Path) -> anyhow::Result<Geography> {
    let tables = Tables::read(data)?;
    let path = data.join(files::PRIMARY_COUNTY);
    let csv = Csv::read(&path)?;
    let (zcta_col, county_col, population_col) = (
        csv.column("ZCTA5")?,
        csv.column("Primary County")?,
        csv.column("Population")?,
    );
    let mut geography = Geography::default();
    for row in csv.rows() {
        let zcta = field(row, zcta_col)?;
        ensure!(
            is_digits(zcta, 5),
            "{}: invalid ZCTA {zcta:?}",
            files::PRIMARY_COUNTY
        );
        let population = field(row, population_col)?;
        let population: u64 = if population.is_empty() {
            0
        } else {
            population
                .parse()
                .with_context(|| format!("ZCTA {zcta}: invalid population {population:?}"))?
        };
        ensure!(
            geography
                .population
                .insert(zcta.to_owned(), population)
                .is_none(),
            "{}: duplicate ZCTA {zcta}",
            files::PRIMARY_COUNTY
        );
        let county = field(row, county_col)?;
        let (outcome, area) = tables.area_for(zcta, county);
        *geography.counts.entry(outcome).or_default() += 1;
        match area {
            Some(area) => {
                geography.areas.insert(zcta.to_owned(), area);
            }
            None if outcome != OUTCOME_TERRITORY => geography.unmapped.push(zcta.to_owned()),
            None => {}
        }
    }
    Ok(geography)
}

/// Outcome label of a ZCTA in a territory.
const OUTCOME_TERRITORY: &str = "territory (no area)";

impl Tables {
    fn read(data: &Path) -> anyhow::Result<Self> {
        let mut tables = Self {
            state_by_prefix: BTreeMap::new(),
            county_names: BTreeMap::new(),
            pe_by_key: BTreeMap::new(),
            pe_by_folded: BTreeMap::new(),
            cms_by_county: BTreeMap::new(),
            cms_by_zip3: BTreeMap::new(),
            la_by_zip3: BTreeMap::new(),
        };
        tables
            .read_counties(data)
            .with_context(|| format!("cannot use {}", files::COUNTY_FIPS))?;
        tables
            .read_pe_counties(data)
            .with_context(|| format!("cannot use {}", files::PE_COUNTY_AREAS))?;
        tables
            .read_cms_counties(data)
            .with_context(|| format!("cannot use {}", files::CMS_COUNTY_AREAS))?;
        tables
            .read_cms_zip3(data)
            .with_context(|| format!("cannot use {}", files::CMS_ZIP3_AREAS))?;
        tables
            .read_la_zip3(data)
            .with_context(|| format!("cannot use {}", files::LA_ZIP3_AREAS))?;
        Ok(tables)
    }

    fn read_counties(&mut self, data: &Path) -> anyhow::Result<()> {
        let csv = Csv::read(&data.join(files::COUNTY_FIPS))?;
        let (state_col, name_col, fips_col) = (
            csv.column("state")?,
            csv.column("county_name")?,
            csv.column("county_fips")?,
        );
        for row in csv.rows() {
            let (state, name, fips) = (
                field(row, state_col)?,
                field(row, name_col)?,
                field(row, fips_col)?,
            );
            ensure!(is_digits(fips, 5), "invalid county FIPS {fips:?}");
            ensure!(is_state(state), "invalid state {state:?}");
            let prefix = fips.get(..2).context("short FIPS")?;
            let known = self
                .state_by_prefix
                .entry(prefix.to_owned())
                .or_insert_with(|| state.to_owned());
            ensure!(
                known == state,
                "state FIPS {prefix} is both {known} and {state}"
            );
            self.county_names.insert(fips.to_owned(), name.to_owned());
        }
        Ok(())
    }

    fn read_pe_counties(&mut self, data: &Path) -> anyhow::Result<()> {
        let csv = Csv::read(&data.join(files::PE_COUNTY_AREAS))?;
        let (key_col, area_col) = (csv.column("county")?, csv.column("rating_area")?);
        for row in csv.rows() {
            let key = field(row, key_col)?;
            let area = parse_area(field(row, area_col)?)?;
            let (name, state) = key
                .rsplit_once('_')
                .with_context(|| format!("county key {key:?} has no state"))?;
            ensure!(
                self.pe_by_key.insert(key.to_owned(), area).is_none(),
                "duplicate county key {key:?}"
            );
            self.pe_by_folded
                .entry((fold(name), state.to_owned()))
                .or_default()
                .push(area);
        }
        Ok(())
    }

    fn read_cms_counties(&mut self, data: &Path) -> anyhow::Result<()> {
        let csv = Csv::read(&data.join(files::CMS_COUNTY_AREAS))?;
        let (fips_col, area_col) = (csv.column("countyfip")?, csv.column("ratingarea")?);
        for row in csv.rows() {
            let area = field(row, area_col)?;
            if area.is_empty() {
                // ZIP3-defined counties (AK, ID, MA, NE, Los Angeles).
                continue;
            }
            let fips: u32 = field(row, fips_col)?
                .parse()
                .context("invalid county FIPS")?;
            let fips = format!("{fips:05}");
            ensure!(
                self.cms_by_county
                    .insert(fips.clone(), parse_area(area)?)
                    .is_none(),
                "duplicate county {fips}"
            );
        }
        Ok(())
    }

    fn read_cms_zip3(&mut self, data: &Path) -> anyhow::Result<()> {
        let csv = Csv::read(&data.join(files::CMS_ZIP3_AREAS))?;
        let (state_col, area_col, zip3_col) = (
            csv.column("statefip")?,
            csv.column("ratingarea")?,
            csv.column("zip3")?,
        );
        for row in csv.rows() {
            let state: u32 = field(row, state_col)?
                .parse()
                .context("invalid state FIPS")?;
            let zip3 = field(row, zip3_col)?;
            ensure!(is_digits(zip3, 3), "invalid ZIP3 {zip3:?}");
            let key = (format!("{state:02}"), zip3.to_owned());
            ensure!(
                self.cms_by_zip3
                    .insert(key, parse_area(field(row, area_col)?)?)
                    .is_none(),
                "duplicate ZIP3 {zip3}"
            );
        }
        Ok(())
    }

    fn read_la_zip3(&mut self, data: &Path) -> anyhow::Result<()> {
        let yaml = Yaml::read(&data.join(files::LA_ZIP3_AREAS))?;
        for (key, dated) in yaml.as_map("the file")? {
            if !is_digits(key, 3) {
                // `description`, `metadata`.
                continue;
            }
            let area = parse_area(value_on(dated, PLAN_DATE, key)?)?;
            self.la_by_zip3.insert(key.clone(), area);
        }
        ensure!(!self.la_by_zip3.is_empty(), "no ZIP3 entries");
        Ok(())
    }

    /// The rating area of a ZCTA whose primary county is `county`, with the
    /// label of the rule that decided it.
    fn area_for(&self, zcta: &str, county: &str) -> (&'static str, Option<Area>) {
        let Some(prefix) = county.get(..2).filter(|_| is_digits(county, 5)) else {
            return ("no primary county", None);
        };
        let Some(state) = self.state_by_prefix.get(prefix) else {
            return ("unknown state", None);
        };
        let area = |number: Option<u32>| {
            number.map(|number| Area {
                state: state.clone(),
                number,
            })
        };
        let zip3 = zcta.get(..3).unwrap_or_default().to_owned();
        if TERRITORIES.contains(&state.as_str()) {
            (OUTCOME_TERRITORY, None)
        } else if ZIP3_STATES.contains(&state.as_str()) {
            let number = self.cms_by_zip3.get(&(prefix.to_owned(), zip3)).copied();
            ("state ZIP3 table", area(number))
        } else if county == LOS_ANGELES_COUNTY {
            (
                "Los Angeles ZIP3 table",
                area(self.la_by_zip3.get(&zip3).copied()),
            )
        } else if state == "CA" {
            (
                "CMS county table (CA)",
                area(self.cms_by_county.get(county).copied()),
            )
        } else if let Some((rule, number)) = self.pe_area(county, state) {
            (rule, area(Some(number)))
        } else {
            let fips = FIPS_RENAMES_SINCE_2014
                .iter()
                .find(|(now, _)| *now == county)
                .map_or(county, |(_, then)| *then);
            (
                "CMS county table (fallback)",
                area(self.cms_by_county.get(fips).copied()),
            )
        }
    }

    /// PolicyEngine's area for a county, by exact name key or folded name.
    fn pe_area(&self, county: &str, state: &str) -> Option<(&'static str, u32)> {
        let name = self.county_names.get(county)?;
        if let Some(&number) = self.pe_by_key.get(&pe_key(name, state)) {
            return Some(("PolicyEngine county table", number));
        }
        match self
            .pe_by_folded
            .get(&(fold(name), state.to_owned()))
            .map(Vec::as_slice)
        {
            Some(&[number]) => Some(("PolicyEngine county table (folded name)", number)),
            _ => None,
        }
    }
}

/// PolicyEngine's county key: `name.replace(' ','_').replace('-','_')
/// .replace('.','').replace("'",'_').upper() + '_' + ST`.
pub(crate) fn pe_key(name: &str, state: &str) -> String {
    let key = name
        .replace([' ', '-'], "_")
        .replace('.', "")
        .replace('\'', "_")
        .to_uppercase();
    format!("{key}_{state}")
}

/// Folds a county name for the names that do not match exactly: accents are
/// removed, only ASCII letters and digits kept, and a trailing "County",
/// "Parish", "Borough", … dropped (`Doña Ana County` → `DONAANA`, PolicyEngine's
/// `PRINCE_OF_WALESHYDER` → `PRINCEOFWALESHYDER`).
pub(crate) fn fold(name: &str) -> String {
    let mut folded = String::new();
    for ch in name.chars().flat_map(char::to_uppercase) {
        let ch = match ch {
            'À' | 'Á' | 'Â' | 'Ã' | 'Ä' | 'Å' => 'A',
            'Ç' => 'C',
            'È' | 'É' | 'Ê' | 'Ë' => 'E',
            'Ì' | 'Í' | 'Î' | 'Ï' => 'I',
            'Ñ' => 'N',
            'Ò' | 'Ó' | 'Ô' | 'Õ' | 'Ö' => 'O',
            'Ù' | 'Ú' | 'Û' | 'Ü' => 'U',
            'Ý' => 'Y',
            other => other,
        };
        if ch.is_ascii_alphanumeric() {
            folded.push(ch);
        }
    }
    for suffix in FOLDED_SUFFIXES {
        if let Some(stem) = folded.strip_suffix(suffix).filter(|stem| !stem.is_empty()) {
            return stem.to_owned();
        }
    }
    folded
}

/// Parses a rating-area number (1 to 99).
fn parse_area(text: &str) -> anyhow::Result<u32> {
    let number: u32 = text
        .trim()
        .parse()
        .with_context(|| format!("invalid rating area {text:?}"))?;
    if !(1..=99).contains(&number) {
        bail!("rating area {number} is out of range");
    }
    Ok(number)
}

/// Whether `text` is exactly `len` ASCII digits.
fn is_digits(text: &str, len: usize) -> bool {
    text.len() == len && text.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `text` is a two-letter upper-case code.
pub(crate) fn is_state(text: &str) -> bool {
    text.len() == 2 && text.bytes().all(|b| b.is_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_policyengine_keys() {
        assert_eq!(
            pe_key("San Francisco County", "CA"),
            "SAN_FRANCISCO_COUNTY_CA"
        );
        assert_eq!(pe_key("St. Louis city", "MO"), "ST_LOUIS_CITY_MO");
        assert_eq!(
            pe_key("Prince George's County", "MD"),
            "PRINCE_GEORGE_S_COUNTY_MD"
        );
        assert_eq!(pe_key("Miami-Dade County", "FL"), "MIAMI_DADE_COUNTY_FL");
    }

    #[test]
    fn folds_accents_punctuation_and_suffixes() {
        assert_eq!(fold("Doña Ana County"), fold("DONA_ANA"));
        assert_eq!(
            fold("Prince of Wales-Hyder Census Area"),
            fold("PRINCE_OF_WALESHYDER")
        );
        assert_eq!(fold("LaSalle Parish"), fold("LA_SALLE"));
        assert_eq!(fold("Mayagüez Municipio"), fold("MAYAGUEZ_MUNICIPIO"));
        assert_ne!(fold("Clark County"), fold("CLARKE_COUNTY"));
        assert_ne!(fold("Fairfax city"), fold("FAIRFAX_COUNTY"));
    }

    #[test]
    fn formats_area_ids() {
        let area = Area {
            state: "CA".to_owned(),
            number: 4,
        };
        assert_eq!(area.to_string(), "CA-04");
    }
}
