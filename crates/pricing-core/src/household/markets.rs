//! The markets of a census: the rating areas of its counted employees that
//! the card prices, numbered as first met in household-key order, and the
//! primary one.

use crate::error::PricingError;
use crate::rate_card::{AreaIdx, GroupParams, Market, RateCard};

/// A card area not met yet.
const UNSEEN: usize = usize::MAX;
/// A card area the card does not price.
const UNPRICED: usize = usize::MAX - 1;

/// Where a census is rated ([`MarketSlots::settle`]).
#[derive(Debug)]
pub(super) struct Settled {
    /// The primary market.
    pub primary_market: usize,
    /// The group's parameters, from the primary market's area.
    pub group: GroupParams,
    /// The market of households whose ZIP the card does not price.
    pub stand_in: usize,
}

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

    /// Where the census is rated, once every household is placed: the
    /// primary market ([`MarketSlots::primary`], the company ZIP's market
    /// `fallback_zip` standing in when no employee has one), the group's
    /// parameters from its area, and the market of households whose ZIP
    /// the card does not price (the company ZIP's, else the primary).
    ///
    /// # Errors
    /// [`PricingError::MarketUnavailable`] without a market;
    /// [`PricingError::RateCard`] when the card has no parameters for it.
    pub(super) fn settle(&mut self, fallback_zip: Option<&str>) -> Result<Settled, PricingError> {
        let card = self.card;
        let fallback = fallback_zip
            .and_then(|zip| card.area_for_zip(zip))
            .and_then(|area| self.market_of(area));
        let primary_market = self.primary(fallback)?;
        let primary_area = self
            .markets
            .get(primary_market)
            .and_then(|m| card.area_for_id(&m.area));
        let group = card
            .group_params(primary_area, self.partner)
            .map_err(|e| PricingError::RateCard(e.to_string()))?;
        Ok(Settled {
            primary_market,
            group,
            stand_in: fallback.unwrap_or(primary_market),
        })
    }

    pub(super) fn into_markets(self) -> Vec<Market> {
        self.markets
    }
}
