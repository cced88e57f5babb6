//! Area premium levels (KFF via PolicyEngine) and their restatement as
//! age-21 monthly base rates in integer cents.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context as _, ensure};

use crate::rate_card::PLAN_DATE;
use crate::rate_card::decimal::{div_round, parse_scaled, product};
use crate::rate_card::geography::{Area, is_state};
use crate::rate_card::inputs::Yaml;

/// States whose published levels are adult base rates rather than age-0
/// premiums (family-tier / community rating).
pub(crate) const ADULT_BASE_RATE_STATES: [&str; 2] = ["NY", "VT"];

/// Platinum-to-silver level ratio: (0.90 × 1.15) / (0.70 × 1.03) = 1035/721
/// (actuarial value × induced demand).
const PLATINUM_PER_SILVER: (i128, i128) = (1035, 721);

/// Age-21 monthly base rates of one area, in cents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AreaRates {
    /// Platinum PPO benchmark at age 21.
    pub(crate) benchmark_rate21_cents: i128,
    /// Default market base plan (lowest-cost bronze) at age 21.
    pub(crate) market_base_rate21_cents: i128,
}

/// Reads a `STATE: {area: {YYYY-MM-DD: USD}}` file and returns the plan-date
/// value of every area that has one, in cents. Areas without a plan-date value
/// are left out.
pub(crate) fn read(path: &Path) -> anyhow::Result<BTreeMap<Area, i128>> {
    let yaml = Yaml::read(path)?;
    parse(&yaml).with_context(|| format!("invalid premium levels in {}", path.display()))
}

/// See [`read`].
pub(crate) fn parse(yaml: &Yaml) -> anyhow::Result<BTreeMap<Area, i128>> {
    let mut levels = BTreeMap::new();
    for (state, areas) in yaml.as_map("the file")? {
        if !is_state(state) {
            // `description`, `metadata`.
            continue;
        }
        for (number, dated) in areas.as_map(state)? {
            let what = format!("{state} area {number}");
            let number: u32 = number
                .parse()
                .with_context(|| format!("{what}: invalid area number"))?;
            let Some(usd) = dated.as_map(&what)?.get(PLAN_DATE) else {
                continue;
            };
            let cents = parse_scaled(usd.as_scalar(&what)?, 2)
                .with_context(|| format!("{what}: invalid premium"))?;
            ensure!(cents > 0, "{what}: premium must be positive");
            let area = Area {
                state: state.clone(),
                number,
            };
            levels.insert(area, cents);
        }
    }
    Ok(levels)
}

/// Restates an area's published levels as age-21 base rates.
///
/// - benchmark = round(SLCSP age-0 × 1035/721 × 1000 / milli0)
/// - market base = round(LCBP age-0 × 1000 / milli0)
///
/// where `milli0` is the state's age-0 milli factor (relative to age 21). For
/// the adult-base-rate states (NY, VT) the levels are not divided by it.
pub(crate) fn rates(
    state: &str,
    slcsp_cents: i128,
    lcbp_cents: i128,
    milli0: i64,
) -> anyhow::Result<AreaRates> {
    let (platinum, silver) = PLATINUM_PER_SILVER;
    if ADULT_BASE_RATE_STATES.contains(&state) {
        return Ok(AreaRates {
            benchmark_rate21_cents: div_round(product(&[slcsp_cents, platinum])?, silver)?,
            market_base_rate21_cents: lcbp_cents,
        });
    }
    let milli0 = i128::from(milli0);
    ensure!(milli0 > 0, "{state}: the age-0 factor must be positive");
    Ok(AreaRates {
        benchmark_rate21_cents: div_round(
            product(&[slcsp_cents, platinum, 1000])?,
            product(&[silver, milli0])?,
        )?,
        market_base_rate21_cents: div_round(product(&[lcbp_cents, 1000])?, milli0)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_plan_date_levels_only() {
        let yaml = Yaml::parse(
            "description: x\nmetadata:\n  unit: currency-USD\nAK:\n  1:\n    2025-01-01: 606.00\n    2026-01-01: 613.00\n  2:\n    2025-01-01: 1.00\n",
        )
        .unwrap();
        let levels = parse(&yaml).unwrap();
        assert_eq!(levels.len(), 1);
        let area = Area {
            state: "AK".to_owned(),
            number: 1,
        };
        assert_eq!(levels[&area], 61_300);
    }

    #[test]
    fn restates_levels_at_age_21() {
        // 43600 × 1035 × 1000 / (721 × 765) = 81813.9… → 81814
        // 44100 × 1000 / 765 = 57647.05… → 57647
        assert_eq!(
            rates("CA", 43_600, 44_100, 765).unwrap(),
            AreaRates {
                benchmark_rate21_cents: 81_814,
                market_base_rate21_cents: 57_647,
            }
        );
        // NY: 86700 × 1035 / 721 = 124457.7… → 124458; base unchanged.
        assert_eq!(
            rates("NY", 86_700, 64_700, 412).unwrap(),
            AreaRates {
                benchmark_rate21_cents: 124_458,
                market_base_rate21_cents: 64_700,
            }
        );
    }
}
