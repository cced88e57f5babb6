//! What the offer page shows, worked out from a market quote's figures:
//! the facts, the subtitle naming what the offer is compared against,
//! the two bars of the chart and the disclaimer. Templates only print
//! these.

use domain::document::MarketQuote;
use domain::text::dollars;

/// Width of the chart's longest bar, in SVG units.
pub const BAR_MAX: i64 = 360;

/// Vertical distance between the chart's rows, in SVG units.
const ROW: i64 = 95;

/// One figure of the offer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    /// What it is.
    pub label: String,
    /// The amount, formatted.
    pub value: String,
    /// Shown as a saving (green).
    pub saving: bool,
}

/// One bar of the chart, with its label above it and its amount after
/// it; positions in SVG units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bar {
    /// What the bar stands for.
    pub label: String,
    /// Its monthly cost, formatted.
    pub amount: String,
    /// Its length.
    pub width: i64,
    /// Its fill colour.
    pub color: &'static str,
    /// Baseline of the label.
    pub label_y: i64,
    /// Top of the bar.
    pub bar_y: i64,
    /// Where the amount starts.
    pub amount_x: i64,
    /// Baseline of the amount.
    pub amount_y: i64,
}

/// The offer as the page shows it.
#[derive(Debug, Clone)]
pub struct OfferView {
    /// The plan's name (the heading and the title).
    pub plan: String,
    /// What the offer is compared against.
    pub subtitle: String,
    /// The figures, in reading order.
    pub facts: Vec<Fact>,
    /// The chart's bars: the offer, then the prior cost.
    pub bars: Vec<Bar>,
    /// The chart's text alternative.
    pub chart_label: String,
    /// What the chart compares (`current coverage` or `benchmark plan`).
    pub prior: String,
    /// The preliminary-pricing disclaimer.
    pub disclaimer: String,
}

/// Bar length of `value` against `max` (at least 2 units for a positive
/// value, so that a small cost still shows).
#[must_use]
pub fn width(value: i64, max: i64) -> i64 {
    if value <= 0 || max <= 0 {
        return 0;
    }
    let w = i128::from(value)
        .saturating_mul(i128::from(BAR_MAX))
        .checked_div(i128::from(max))
        .unwrap_or(0);
    i64::try_from(w).unwrap_or(BAR_MAX).clamp(2, BAR_MAX)
}

/// The chart's bars of `(label, monthly cents, colour)`, each label above
/// its bar so that it stays legible in a 360 px frame.
fn bars(rows: &[(&str, i64, &'static str)]) -> Vec<Bar> {
    let max = rows.iter().map(|(_, v, _)| *v).max().unwrap_or(0);
    let mut y: i64 = 0;
    let mut out = Vec::with_capacity(rows.len());
    for (label, value, color) in rows {
        let w = width(*value, max);
        out.push(Bar {
            label: (*label).to_owned(),
            amount: dollars(*value),
            width: w,
            color,
            label_y: y.saturating_add(28),
            bar_y: y.saturating_add(38),
            amount_x: w.saturating_add(10),
            amount_y: y.saturating_add(68),
        });
        y = y.saturating_add(ROW);
    }
    out
}

/// A saving as a green fact, or a cost increase as a plain one.
fn difference(what: &str, cents: i64, suffix: &str) -> Fact {
    if cents >= 0 {
        Fact {
            label: format!("{what} savings"),
            value: format!("{}{suffix}", dollars(cents)),
            saving: true,
        }
    } else {
        Fact {
            label: format!("{what} increase"),
            value: format!("{}{suffix}", dollars(cents.saturating_neg())),
            saving: false,
        }
    }
}

impl OfferView {
    /// The view of a market quote's figures.
    #[must_use]
    pub fn of(doc: &MarketQuote) -> Self {
        let c = &doc.comparison;
        let current = c.basis == "current_coverage";
        let prior = if current {
            "Current coverage"
        } else {
            "Benchmark plan"
        };
        let benchmark = [
            doc.benchmark.carrier.as_str(),
            doc.benchmark.plan_name.as_str(),
        ]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
        let subtitle = if current {
            "Your offer compared with your current coverage".to_owned()
        } else if benchmark.is_empty() {
            "Your offer compared with the local benchmark plan".to_owned()
        } else {
            format!("Your offer compared with the local benchmark plan, {benchmark}")
        };
        let total = doc.monthly.total_cents;
        let prior_monthly = total.saturating_add(c.savings_monthly_cents);
        let plain = |label: &str, cents: i64| Fact {
            label: label.to_owned(),
            value: dollars(cents),
            saving: false,
        };
        let facts = vec![
            plain("Monthly total", total),
            plain("Per employee per month", doc.monthly.pepm_cents),
            plain("Annual total", doc.annual.total_cents),
            plain(&format!("{prior} PEPM"), c.prior_pepm_cents),
            difference("Monthly", c.savings_monthly_cents, ""),
            difference(
                "Annual",
                c.savings_annual_cents,
                &format!(" ({}%)", c.savings_pct.saturating_abs()),
            ),
        ];
        let chart_label = format!(
            "Monthly cost: {} {}, {} {}",
            doc.plan.name,
            dollars(total),
            prior.to_lowercase(),
            dollars(prior_monthly)
        );
        let disclaimer = doc
            .assumptions
            .iter()
            .find(|a| a.starts_with("Preliminary"))
            .map_or_else(
                || "Market-rate figures; final pricing is confirmed in underwriting.".to_owned(),
                Clone::clone,
            );
        Self {
            plan: doc.plan.name.clone(),
            subtitle,
            facts,
            bars: bars(&[
                (doc.plan.name.as_str(), total, "#2f6fd6"),
                (prior, prior_monthly, "#8a96a3"),
            ]),
            chart_label,
            prior: prior.to_lowercase(),
            disclaimer,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A market quote's figures, as stored.
    const MARKET: &str = r#"{"v":1,"doc":{"annual":{"total_cents":2777472},"assumptions":[],"benchmark":{"carrier":"Local market","metal_tier":"Platinum","monthly_cents":301234,"network":"PPO","pepm_cents":150617,"plan_name":"Platinum PPO (IL-01)"},"census":{"covered_lives":3,"employees":2,"tiers":{"employee_children":1,"employee_only":1,"employee_spouse":0,"family":0}},"comparison":{"basis":"current_coverage","prior_pepm_cents":156000,"savings_annual_cents":966528,"savings_monthly_cents":80544,"savings_pct":26},"employee_contribution":{"employer_contribution_pct":100,"premium_cents":0},"funding_breakdown":{"admin_fees_pct":7,"care_navigation_pct":8,"expected_claims_pct":70,"note":"Illustrative split.","stop_loss_pct":15},"monthly":{"by_tier":{"employee_children":{"avg_cents":151146,"count":1},"employee_only":{"avg_cents":80310,"count":1},"employee_spouse":{"avg_cents":0,"count":0},"family":{"avg_cents":0,"count":0}},"pepm_cents":115728,"total_cents":231456},"plan":{"id":"diamond","name":"Diamond"},"plan_year_start_date":"2026-12-01","pricing":{"source":"rate-card 2026.1 default","updated_at":null},"pricing_basis":"market_rates"}}"#;

    fn market() -> MarketQuote {
        domain::document::from_stored(MARKET, domain::document::Legacy::Snake).unwrap()
    }

    #[test]
    fn the_view_names_its_comparison_and_shows_savings_in_green() {
        let v = OfferView::of(&market());
        assert_eq!(v.plan, "Diamond");
        assert_eq!(v.subtitle, "Your offer compared with your current coverage");
        let facts: Vec<_> = v
            .facts
            .iter()
            .map(|f| (f.label.as_str(), f.value.as_str(), f.saving))
            .collect();
        assert_eq!(
            facts,
            [
                ("Monthly total", "$2,314.56", false),
                ("Per employee per month", "$1,157.28", false),
                ("Annual total", "$27,774.72", false),
                ("Current coverage PEPM", "$1,560.00", false),
                ("Monthly savings", "$805.44", true),
                ("Annual savings", "$9,665.28 (26%)", true),
            ]
        );
        assert_eq!(v.bars.len(), 2);
        assert_eq!(v.bars[0].amount, "$2,314.56");
        assert_eq!(v.bars[1].amount, "$3,120.00");
        assert_eq!(v.bars[1].width, BAR_MAX);
        assert!(v.bars[0].width < BAR_MAX);
        assert!(v.bars[1].label_y > v.bars[0].amount_y);
    }

    #[test]
    fn a_benchmark_comparison_names_the_plan_and_an_increase_is_not_a_saving() {
        let mut doc = market();
        doc.comparison.basis = "benchmark".to_owned();
        doc.comparison.savings_monthly_cents = -1_000;
        doc.comparison.savings_annual_cents = -12_000;
        doc.comparison.savings_pct = -1;
        let v = OfferView::of(&doc);
        assert_eq!(
            v.subtitle,
            "Your offer compared with the local benchmark plan, Local market Platinum PPO (IL-01)"
        );
        let last: Vec<_> = v.facts[3..]
            .iter()
            .map(|f| (f.label.as_str(), f.value.as_str(), f.saving))
            .collect();
        assert_eq!(
            last,
            [
                ("Benchmark plan PEPM", "$1,560.00", false),
                ("Monthly increase", "$10.00", false),
                ("Annual increase", "$120.00 (1%)", false),
            ]
        );
        assert_eq!(v.bars[0].width, BAR_MAX);
        assert_eq!(v.prior, "benchmark plan");
    }

    #[test]
    fn bars_scale_to_the_larger_cost() {
        assert_eq!(width(50, 100), BAR_MAX / 2);
        assert_eq!(width(100, 100), BAR_MAX);
        assert_eq!(width(1, 1_000_000), 2);
        assert_eq!(width(0, 100), 0);
        assert_eq!(width(i64::MAX, i64::MAX), BAR_MAX);
    }
}
