//! Per-area rates, and the areas priced from a stand-in.
//!
//! A few rating areas have no public benchmark data for the card's plan
//! year (in 2026: FL-22, SC-09 and SC-19), so the card maps their ZIPs but
//! has no price levels for them. Such an area is priced with its state's
//! **median priced area**: the state's areas that have levels, ordered by
//! the figure the area lacks — the platinum benchmark rate at 21 — then by
//! area id, and the lower middle one taken (the `(n − 1) / 2`-th, zero
//! based), so the choice is deterministic and is always a real area. An
//! area whose state has no priced area stays unpriced.

use super::resolve::pick;
use super::{AreaIdx, Market, NO_AREA, RateCard};

impl RateCard {
    /// Resolved rates of an area. An area without price levels is priced
    /// with its state's median priced area ([`Market::priced_as`] names
    /// it); `None` when neither has levels (the area is then not covered).
    #[must_use]
    pub fn market(&self, area: AreaIdx, partner: Option<&str>) -> Option<Market> {
        self.own_market(area, partner).or_else(|| {
            let proxy = self.proxy_area(area)?;
            let mut m = self.own_market(proxy, partner)?;
            m.priced_as = Some(std::mem::replace(
                &mut m.area,
                self.area_id(area).to_owned(),
            ));
            Some(m)
        })
    }

    /// The area whose rates price `area` when the card has no price levels
    /// for it: the state's median priced area (see the module docs).
    #[must_use]
    pub fn proxy_area(&self, area: AreaIdx) -> Option<AreaIdx> {
        let p = *self.proxies.get(area.index())?;
        (p != NO_AREA).then_some(AreaIdx(p))
    }

    /// The rates of `area` from its own layer chain, without a stand-in.
    fn own_market(&self, area: AreaIdx, partner: Option<&str>) -> Option<Market> {
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
            priced_as: None,
        })
    }

    /// Per area, the index of its stand-in (or `NO_AREA`), from the
    /// card's own layers (partner layers never choose a stand-in).
    pub(super) fn median_proxies(&self) -> Vec<u16> {
        let all = (0..self.areas.len()).filter_map(|i| u16::try_from(i).ok().map(AreaIdx));
        let priced: Vec<(AreaIdx, Option<Market>)> =
            all.map(|a| (a, self.own_market(a, None))).collect();
        priced
            .iter()
            .map(|(area, own)| {
                if own.is_some() {
                    return NO_AREA;
                }
                let state = state_of(self.area_id(*area));
                let mut peers: Vec<(i64, &str, AreaIdx)> = priced
                    .iter()
                    .filter_map(|(a, m)| Some((*a, m.as_ref()?)))
                    .filter(|(_, m)| m.state == state)
                    .map(|(a, m)| (m.benchmark_rate21_cents, m.area.as_str(), a))
                    .collect();
                peers.sort_unstable();
                let middle = peers.len().saturating_sub(1) / 2;
                peers.get(middle).map_or(NO_AREA, |(_, _, a)| a.0)
            })
            .collect()
    }
}

fn state_of(area: &str) -> &str {
    area.split_once('-').map_or("", |(s, _)| s)
}
