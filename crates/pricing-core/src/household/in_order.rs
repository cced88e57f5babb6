//! Normalising a census whose rows come in household-key order: every row
//! keyed by its own `external_id`, each greater than the row before's (as
//! payroll exports sorted by employee id are). Each counted employee's
//! household is then built as its row is read, in the one pass that checks
//! the rows, rather than in a second pass over them in key order.
//!
//! Two things are only known once every row is read: the market of
//! employees whose ZIP has none (the company ZIP's, else the primary
//! market), and the group's default child age (the primary area's layer
//! chain may set it). Such employees are rated at the stand-in once it is
//! known, and households are shaped with the card's default child age for
//! the partner, then shaped again in the rare case the group's differs.

use crate::census::CensusMember;
use crate::error::PricingError;
use crate::household::assemble::Built;
use crate::household::shape::{Stats, shape_into};
use crate::household::{CensusContext, Excluded, Household, RatedCensus};
use crate::rate_card::AreaIdx;

/// The households built so far, with what finishing them needs.
#[derive(Debug)]
pub(super) struct InRowOrder<'c> {
    built: Built<'c>,
    /// Households whose ZIP has no priced area.
    unmapped: Vec<usize>,
    /// Households that the default child age rated someone in.
    child_age_used: Vec<usize>,
    /// The default child age households are shaped with.
    child_age: u32,
}

impl<'c> InRowOrder<'c> {
    /// Room for `rows` households.
    pub(super) fn new(ctx: CensusContext<'c>, rows: usize) -> Self {
        Self {
            built: Built::new(ctx, rows),
            unmapped: Vec::new(),
            child_age_used: Vec::new(),
            child_age: ctx.card.default_child_age(ctx.partner).unwrap_or(0),
        }
    }

    /// Adds the household of the counted employee on row `row`, keyed by
    /// `id`, whose ZIP is in `area`.
    pub(super) fn push(&mut self, row: usize, m: &CensusMember, id: &str, area: Option<AreaIdx>) {
        let index = self.built.households.len();
        let market = self.built.places.place(area);
        let Some((h, child_age_used)) = self.built.push(row, m, self.child_age) else {
            return;
        };
        match market {
            Some(market) => h.market = market,
            None => self.unmapped.push(index),
        }
        if child_age_used {
            self.child_age_used.push(index);
        }
        h.key.set(id, 0);
        h.keyed_by_external_id = true;
    }

    /// The rated census, once every row was pushed.
    ///
    /// # Errors
    /// [`PricingError::MarketUnavailable`] when no ZIP has a priced market,
    /// [`PricingError::RateCard`] when the card cannot price the group.
    pub(super) fn finish(
        self,
        members: &[CensusMember],
        ctx: CensusContext<'_>,
        excluded: Excluded,
    ) -> Result<RatedCensus, PricingError> {
        let Self {
            mut built,
            unmapped,
            child_age_used,
            child_age,
        } = self;
        let settled = built.places.settle(ctx.fallback_zip)?;
        for &i in &unmapped {
            if let Some(h) = built.households.get_mut(i) {
                h.market = settled.stand_in;
            }
        }
        built.stats.unmapped = unmapped.len();
        let group_child_age = settled.group.default_child_age;
        if group_child_age != child_age {
            let clock = built.clock;
            for &i in &child_age_used {
                let Some(h) = built.households.get_mut(i) else {
                    continue;
                };
                let Some(m) = members.get(h.row) else {
                    continue;
                };
                let mut before = Stats::default();
                let mut scratch = Household::TEMPLATE.shape;
                shape_into(&mut scratch, m, clock, child_age, &mut before);
                let mut after = Stats::default();
                shape_into(&mut h.shape, m, clock, group_child_age, &mut after);
                built.stats.replace(&before, &after);
            }
        }
        Ok(RatedCensus::assemble(
            members, ctx, built, settled, excluded,
        ))
    }
}
