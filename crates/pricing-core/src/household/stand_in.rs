//! The assumption line of each rating area of a census that the card
//! prices with a stand-in (an area without public benchmark data, priced
//! with its state's median priced area).

use std::collections::BTreeSet;

use crate::census::CensusMember;
use crate::household::Household;
use crate::rate_card::{Market, RateCard};

/// ZIPs named in one line; more are counted.
const LISTED_ZIPS: usize = 5;

/// One sentence per stand-in-priced market that a household uses, naming
/// the census ZIPs in that area (and the company ZIP when members without
/// a priced ZIP were rated there).
pub(super) fn stand_in_assumptions(
    card: &RateCard,
    markets: &[Market],
    households: &[Household],
    members: &[CensusMember],
    fallback_zip: Option<&str>,
) -> Vec<String> {
    let in_area = |zip: &str, m: &Market| {
        card.area_for_zip(zip)
            .is_some_and(|a| card.area_id(a) == m.area)
    };
    let mut out = Vec::new();
    for (i, m) in markets.iter().enumerate() {
        let Some(proxy) = &m.priced_as else { continue };
        let mut zips = BTreeSet::new();
        for h in households.iter().filter(|h| h.market == i) {
            let Some(zip) = members.get(h.row).map(|r| r.zip.as_str()) else {
                continue;
            };
            if in_area(zip, m) {
                zips.insert(zip);
            } else if let Some(f) = fallback_zip.filter(|f| in_area(f, m)) {
                zips.insert(f);
            }
        }
        if zips.is_empty() {
            continue;
        }
        out.push(format!(
            "{} in {}, which has no {} public benchmark; priced with the {} median area {proxy}.",
            zip_list(&zips),
            m.area,
            card.plan_year(),
            m.state,
        ));
    }
    out
}

/// `ZIP 32456 is`, `ZIPs 32456 and 32465 are`, `ZIPs a, b, c, d, e and 2
/// more are`.
fn zip_list(zips: &BTreeSet<&str>) -> String {
    let listed: Vec<&str> = zips.iter().take(LISTED_ZIPS).copied().collect();
    let more = zips.len().saturating_sub(LISTED_ZIPS);
    match (listed.as_slice(), more) {
        ([one], 0) => format!("ZIP {one} is"),
        ([init @ .., last], 0) => format!("ZIPs {} and {last} are", init.join(", ")),
        _ => format!("ZIPs {} and {more} more are", listed.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zips_are_listed_then_counted() {
        let set = |z: &[&'static str]| z.iter().copied().collect::<BTreeSet<&str>>();
        assert_eq!(zip_list(&set(&["32456"])), "ZIP 32456 is");
        assert_eq!(
            zip_list(&set(&["32465", "32456"])),
            "ZIPs 32456 and 32465 are"
        );
        assert_eq!(
            zip_list(&set(&["29821", "29824", "29832"])),
            "ZIPs 29821, 29824 and 29832 are"
        );
        assert_eq!(
            zip_list(&set(&["1", "2", "3", "4", "5", "6", "7"])),
            "ZIPs 1, 2, 3, 4, 5 and 2 more are"
        );
    }
}
