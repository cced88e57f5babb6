//! The markets of a census: the rating areas of its counted employees that
//! the card prices, numbered as first met in household-key order, and the
//! primary one.

use crate::error::PricingError;
use crate::rate_card::{AreaIdx, Market, RateCard};

/// A card area not met yet.
const UNSEEN: usize = usize::MAX;
/// A card area the card does not price.
const UNPRICED: usize = usize::MAX - 1;

/// The markets met so far.
#[derive(Debug)]
pub(super) struct MarketSlots<'c> {
    card: &'c RateCard,
    partner: Option<&'c str>,
    /// Per card area: its index in `markets`, [`UNSEEN`] or [`UNPRICED`].
    slots: Vec<usize>,
    markets: Vec<Market>,
    /// Counted employees per market.
    counts: Vec<usize>,
}

impl<'c> MarketSlots<'c> {
    pub(super) fn new(card: &'c RateCard, partner: Option<&'c str>) -> Self {
        Self {
            card,
            partner,
            slots: vec![UNSEEN; card.area_count()],
            markets: Vec::new(),
            counts: Vec::new(),
        }
    }

    /// The market of `area`, numbered when first met; `None` when the card
    /// does not price the area.
    pub(super) fn market_of(&mut self, area: AreaIdx) -> Option<usize> {
        let slot = self.slots.get_mut(area.index())?;
        if *slot == UNSEEN {
            *slot = match self.card.market(area, self.partner) {
                Some(m) => {
                    self.markets.push(m);
                    self.counts.push(0);
                    self.markets.len() - 1
                }
                None => UNPRICED,
            };
        }
        (*slot != UNPRICED).then_some(*slot)
    }

    /// The market of a counted employee whose ZIP is in `area`, counting
    /// the employee in it.
    pub(super) fn place(&mut self, area: Option<AreaIdx>) -> Option<usize> {
        let market = self.market_of(area?)?;
        if let Some(c) = self.counts.get_mut(market) {
            *c += 1;
        }
        Some(market)
    }

    /// The market with the most counted employees (ties go to the smallest
    /// area id), else `fallback`.
    ///
    /// # Errors
    /// [`PricingError::MarketUnavailable`] without either.
    pub(super) fn primary(&self, fallback: Option<usize>) -> Result<usize, PricingError> {
        self.counts
            .iter()
            .zip(&self.markets)
            .enumerate()
            .filter(|(_, (n, _))| **n > 0)
            .min_by(|(_, (na, ma)), (_, (nb, mb))| nb.cmp(na).then(ma.area.cmp(&mb.area)))
            .map(|(i, _)| i)
            .or(fallback)
            .ok_or(PricingError::MarketUnavailable)
    }

    /// The markets, in order.
    pub(super) fn markets(&self) -> &[Market] {
        &self.markets
    }

    pub(super) fn into_markets(self) -> Vec<Market> {
        self.markets
    }
}
