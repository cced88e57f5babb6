//! ACA age curves: PolicyEngine's bracket files expanded to ages 0..=64 and
//! restated as integer "milli" factors relative to age 21.

use std::path::Path;

use anyhow::{Context as _, ensure};

use crate::rate_card::PLAN_DATE;
use crate::rate_card::decimal::{div_round, parse_scaled, product};
use crate::rate_card::inputs::{Yaml, value_on};

/// Number of ages in a curve: 0 to 64, where 64 also applies above 64.
pub(crate) const AGES: usize = 65;

/// Decimals kept when reading an age factor.
const FACTOR_SCALE: u32 = 4;

/// The reference age of the milli factors.
const REFERENCE_AGE: usize = 21;

/// An age curve as milli factors: `1000 × factor(age) / factor(21)`.
pub(crate) type MilliCurve = [i64; AGES];

/// Reads a PolicyEngine age-curve file and returns its milli curve.
pub(crate) fn read(path: &Path) -> anyhow::Result<MilliCurve> {
    let yaml = Yaml::read(path)?;
    milli_curve(&yaml).with_context(|| format!("invalid age curve in {}", path.display()))
}

/// Turns a parsed age-curve file into milli factors.
///
/// The file either has `brackets` (age threshold → factor, each dated) or a
/// single dated `values` factor for a flat curve (Vermont). Values in force on
/// the plan date are used.
pub(crate) fn milli_curve(yaml: &Yaml) -> anyhow::Result<MilliCurve> {
    let root = yaml.as_map("the age curve")?;
    let amounts = if let Some(brackets) = root.get("brackets") {
        expand(brackets)?
    } else {
        let flat = root
            .get("values")
            .context("the age curve has neither brackets nor values")?;
        let factor = parse_scaled(value_on(flat, PLAN_DATE, "values")?, FACTOR_SCALE)?;
        [factor; AGES]
    };
    to_milli(&amounts)
}

/// Expands dated brackets into one scaled factor per age.
fn expand(brackets: &Yaml) -> anyhow::Result<[i128; AGES]> {
    let mut steps = Vec::new();
    for bracket in brackets.as_list("brackets")? {
        let bracket = bracket.as_map("a bracket")?;
        let threshold = bracket
            .get("threshold")
            .context("bracket without threshold")?;
        let amount = bracket.get("amount").context("bracket without amount")?;
        let threshold: usize = value_on(threshold, PLAN_DATE, "threshold")?
            .parse()
            .context("bracket threshold is not an age")?;
        let amount = parse_scaled(value_on(amount, PLAN_DATE, "amount")?, FACTOR_SCALE)?;
        steps.push((threshold, amount));
    }
    steps.sort_unstable();
    let mut amounts = [0_i128; AGES];
    for (age, slot) in amounts.iter_mut().enumerate() {
        *slot = steps
            .iter()
            .rev()
            .find(|(threshold, _)| *threshold <= age)
            .map(|(_, amount)| *amount)
            .with_context(|| format!("no bracket covers age {age}"))?;
    }
    Ok(amounts)
}

/// `round_half_away(1000 × amount(age) / amount(21))` for every age.
fn to_milli(amounts: &[i128; AGES]) -> anyhow::Result<MilliCurve> {
    let reference = *amounts
        .get(REFERENCE_AGE)
        .context("the curve has no age 21")?;
    ensure!(reference > 0, "the age-21 factor must be positive");
    let mut milli = [0_i64; AGES];
    for (slot, &amount) in milli.iter_mut().zip(amounts) {
        let value = div_round(product(&[amount, 1000])?, reference)?;
        *slot = i64::try_from(value).context("age factor out of range")?;
    }
    Ok(milli)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The federal default curve as PolicyEngine states it: age threshold and
    /// factor normalised so that age 0 = 1.0 (CMS 0.765 / 1.0 / 3.0 at 0, 21
    /// and 64).
    const DEFAULT_BRACKETS: [(u32, &str); 48] = [
        (0, "1.0"),
        (15, "1.0889"),
        (16, "1.1229"),
        (17, "1.1569"),
        (18, "1.1935"),
        (19, "1.2301"),
        (20, "1.268"),
        (21, "1.3072"),
        (25, "1.3124"),
        (26, "1.3386"),
        (27, "1.3699"),
        (28, "1.4209"),
        (29, "1.4627"),
        (30, "1.4837"),
        (31, "1.515"),
        (32, "1.5464"),
        (33, "1.566"),
        (34, "1.5869"),
        (35, "1.5974"),
        (36, "1.6078"),
        (37, "1.6183"),
        (38, "1.6288"),
        (39, "1.6497"),
        (40, "1.6706"),
        (41, "1.702"),
        (42, "1.732"),
        (43, "1.7739"),
        (44, "1.8261"),
        (45, "1.8876"),
        (46, "1.9608"),
        (47, "2.0431"),
        (48, "2.1373"),
        (49, "2.2301"),
        (50, "2.3346"),
        (51, "2.4379"),
        (52, "2.5516"),
        (53, "2.6667"),
        (54, "2.7908"),
        (55, "2.915"),
        (56, "3.0497"),
        (57, "3.1856"),
        (58, "3.3307"),
        (59, "3.4026"),
        (60, "3.5477"),
        (61, "3.6732"),
        (62, "3.7556"),
        (63, "3.8588"),
        (64, "3.9216"),
    ];

    /// Writes bracket pairs in PolicyEngine's age-curve layout.
    pub(crate) fn curve_yaml(brackets: &[(u32, &str)]) -> String {
        let mut yaml = String::from(
            "description: test curve\nmetadata:\n  type: single_amount\n  amount_unit: /1\nbrackets:\n",
        );
        for (threshold, amount) in brackets {
            yaml.push_str(&format!(
                "- threshold:\n   2018-01-01: {threshold}\n  amount:\n   2018-01-01: {amount}\n"
            ));
        }
        yaml
    }

    /// The default curve file.
    pub(crate) fn default_curve_yaml() -> String {
        curve_yaml(&DEFAULT_BRACKETS)
    }

    #[test]
    fn default_curve_is_the_cms_federal_curve() {
        let milli = milli_curve(&Yaml::parse(&default_curve_yaml()).unwrap()).unwrap();
        // CMS federal default age curve (PY2018+), as factors × 1000.
        let cms: [i64; AGES] = [
            765, 765, 765, 765, 765, 765, 765, 765, 765, 765, 765, 765, 765, 765, 765, // 0-14
            833, 859, 885, 913, 941, 970, // 15-20
            1000, 1000, 1000, 1000, 1004, 1024, 1048, 1087, 1119, // 21-29
            1135, 1159, 1183, 1198, 1214, 1222, 1230, 1238, 1246, 1262, // 30-39
            1278, 1302, 1325, 1357, 1397, 1444, 1500, 1563, 1635, 1706, // 40-49
            1786, 1865, 1952, 2040, 2135, 2230, 2333, 2437, 2548, 2603, // 50-59
            2714, 2810, 2873, 2952, 3000, // 60-64
        ];
        assert_eq!(milli, cms);
        assert_eq!(milli[0], 765);
        assert_eq!(milli[14], 765);
        assert_eq!(milli[15], 833);
        assert_eq!(milli[21], 1000);
        assert_eq!(milli[64], 3000);
    }

    #[test]
    fn flat_and_two_step_curves() {
        let flat = Yaml::parse("description: flat\nvalues:\n 2018-01-01: 1.0\n").unwrap();
        assert_eq!(milli_curve(&flat).unwrap(), [1000; AGES]);

        let ny = Yaml::parse(
            "brackets:\n- threshold:\n    2018-01-01: 0\n  amount:\n    2018-01-01: 0.412\n- threshold:\n    2018-01-01: 21\n  amount:\n    2018-01-01: 1.0\n",
        )
        .unwrap();
        let milli = milli_curve(&ny).unwrap();
        assert_eq!(milli[20], 412);
        assert_eq!(milli[21], 1000);
        assert_eq!(milli[64], 1000);
    }

    #[test]
    fn refuses_curves_without_age_zero() {
        let gap = Yaml::parse(
            "brackets:\n- threshold:\n    2018-01-01: 1\n  amount:\n    2018-01-01: 1.0\n",
        )
        .unwrap();
        assert!(milli_curve(&gap).is_err());
    }
}
