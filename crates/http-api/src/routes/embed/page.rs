//! The offer page of an embed session, rendered server-side: the quote's
//! numbers and an inline SVG bar chart of its monthly cost against the
//! prior (current coverage or benchmark) cost. No script, no external
//! asset; every text is escaped.

use std::fmt::Write as _;

use domain::document::MarketQuote;

/// Width of the chart's longest bar, in SVG units.
const BAR_MAX: i64 = 360;

/// Escapes `text` for HTML text and attribute values.
#[must_use]
pub fn escape(text: &str) -> String {
    domain::email::escape_html(text)
}

/// Integer cents as dollars with two decimals and thousands separators
/// (`123456` → `$1,234.56`).
#[must_use]
pub fn money(cents: i64) -> String {
    domain::text::dollars(cents)
}

/// The page around `body`.
fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
<title>{}</title><style>\
body{{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;padding:24px;color:#1f2933;background:#fff}}\
h1{{font-size:22px;margin:0 0 4px}}p.sub{{color:#52606d;margin:0 0 20px}}\
dl{{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:12px;margin:0 0 24px}}\
dl div{{border:1px solid #e4e7eb;border-radius:8px;padding:12px}}\
dt{{font-size:12px;color:#52606d;text-transform:uppercase;letter-spacing:.04em}}\
dd{{margin:4px 0 0;font-size:20px;font-weight:600}}.save dd{{color:#0b7a4b}}\
small{{color:#52606d}}.note{{background:#f5f7fa;border-radius:8px;padding:12px;font-size:14px}}\
form{{display:grid;gap:8px;max-width:420px;margin:16px 0}}input{{font:inherit;padding:10px;border:1px solid #7b8794;border-radius:6px}}\
button{{font:inherit;font-weight:600;padding:10px 16px;border:0;border-radius:6px;background:#1f5fbf;color:#fff;cursor:pointer;justify-self:start}}\
.err{{color:#b42318;margin:0;min-height:1em}}[hidden]{{display:none!important}}</style></head><body>{body}</body></html>\n",
        escape(title)
    )
}

/// Bar width of `value` against `max` (at least 2 units for a positive
/// value).
fn width(value: i64, max: i64) -> i64 {
    if value <= 0 || max <= 0 {
        return 0;
    }
    let w = i128::from(value)
        .saturating_mul(i128::from(BAR_MAX))
        .checked_div(i128::from(max))
        .unwrap_or(0);
    i64::try_from(w).unwrap_or(BAR_MAX).clamp(2, BAR_MAX)
}

/// The SVG bar chart of the two monthly costs.
fn chart(bars: &[(&str, i64, &str)]) -> String {
    let max = bars.iter().map(|(_, v, _)| *v).max().unwrap_or(0);
    let mut svg = String::from(
        "<svg role=\"img\" aria-label=\"Monthly cost comparison\" width=\"100%\" \
viewBox=\"0 0 640 190\" xmlns=\"http://www.w3.org/2000/svg\" font-family=\"system-ui,sans-serif\" font-size=\"28\">",
    );
    // Each label sits above its bar and the text is large in the
    // viewBox, so that it stays legible when the frame is 360 px wide.
    let mut y: i64 = 0;
    for (label, value, color) in bars {
        let _ = write!(
            svg,
            "<text x=\"0\" y=\"{}\" fill=\"#1f2933\">{}</text>\
<rect x=\"0\" y=\"{}\" width=\"{}\" height=\"40\" rx=\"4\" fill=\"{color}\"/>\
<text x=\"{}\" y=\"{}\" fill=\"#1f2933\" font-weight=\"600\">{}</text>",
            y.saturating_add(28),
            escape(label),
            y.saturating_add(38),
            width(*value, max),
            width(*value, max).saturating_add(10),
            y.saturating_add(68),
            escape(&money(*value)),
        );
        y = y.saturating_add(95);
    }
    svg.push_str("</svg>");
    svg
}

/// The offer page of a market quote's figures, valid until `expires`
/// (RFC 3339).
#[must_use]
pub fn offer(doc: &MarketQuote, expires: &str) -> String {
    let plan = doc.plan.name.as_str();
    let total = doc.monthly.total_cents;
    let pepm = doc.monthly.pepm_cents;
    let annual = doc.annual.total_cents;
    let prior_pepm = doc.comparison.prior_pepm_cents;
    let savings_monthly = doc.comparison.savings_monthly_cents;
    let savings_annual = doc.comparison.savings_annual_cents;
    let savings_pct = doc.comparison.savings_pct.to_string();
    let prior_label = if doc.comparison.basis == "current_coverage" {
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
    let prior_monthly = total.saturating_add(savings_monthly);
    let mut body = String::new();
    let _ = write!(
        body,
        "<h1>{}</h1><p class=\"sub\">{}</p><dl>\
<div><dt>Monthly total</dt><dd>{}</dd></div>\
<div><dt>Per employee per month</dt><dd>{}</dd></div>\
<div><dt>Annual total</dt><dd>{}</dd></div>\
<div><dt>{} PEPM</dt><dd>{}</dd></div>\
<div class=\"save\"><dt>Monthly savings</dt><dd>{}</dd></div>\
<div class=\"save\"><dt>Annual savings</dt><dd>{} ({}%)</dd></div></dl>",
        escape(plan),
        escape(&if doc.comparison.basis == "current_coverage" {
            "Your offer compared with your current coverage".to_owned()
        } else if benchmark.is_empty() {
            "Your offer compared with the local benchmark plan".to_owned()
        } else {
            format!("Your offer compared with the local benchmark plan, {benchmark}")
        }),
        escape(&money(total)),
        escape(&money(pepm)),
        escape(&money(annual)),
        escape(prior_label),
        escape(&money(prior_pepm)),
        escape(&money(savings_monthly)),
        escape(&money(savings_annual)),
        escape(&savings_pct),
    );
    body.push_str(&chart(&[
        (plan, total, "#2f80ed"),
        (prior_label, prior_monthly, "#9aa5b1"),
    ]));
    let disclaimer = doc
        .assumptions
        .iter()
        .find(|a| a.starts_with("Preliminary"))
        .map_or(
            "Market-rate figures; final pricing is confirmed in underwriting.",
            String::as_str,
        );
    let _ = write!(
        body,
        "<p><small>Monthly cost of this plan against the {}. This link expires {}.</small></p>\
<p class=\"note\"><strong>Preliminary pricing.</strong> {}</p>",
        escape(&prior_label.to_lowercase()),
        escape(expires),
        escape(disclaimer),
    );
    body.push_str(STEPS);
    page(plan, &body)
}

/// The interactive steps: hidden until the script (`offer.js`, this
/// service's own) shows them; without it the offer still reads.
const STEPS: &str = "<section id=\"steps\" aria-label=\"Accept this offer\">\
<button type=\"button\" id=\"get-started\" hidden>Get started</button>\
<form id=\"email-form\" hidden><label for=\"email\">Your work email</label>\
<input id=\"email\" name=\"email\" type=\"email\" autocomplete=\"email\" required>\
<button type=\"submit\">Send a code</button><p class=\"err\" role=\"alert\"></p></form>\
<form id=\"code-form\" hidden><label for=\"code\">The 6-digit code we sent</label>\
<input id=\"code\" name=\"code\" inputmode=\"numeric\" autocomplete=\"one-time-code\" maxlength=\"6\" required>\
<button type=\"submit\">Verify</button><p class=\"err\" role=\"alert\"></p></form>\
<div id=\"accept\" hidden><h2>Plan documents</h2><ul id=\"docs\"></ul>\
<form id=\"accept-form\"><label for=\"name\">Your full name</label>\
<input id=\"name\" name=\"name\" autocomplete=\"name\" required>\
<button type=\"submit\">Accept the offer</button><p class=\"err\" role=\"alert\"></p></form></div>\
<p id=\"done\" role=\"status\" hidden></p></section>\
<script src=\"/embed/assets/offer.js\" defer></script>";

/// The 410 page of an expired link.
#[must_use]
pub fn expired() -> String {
    page(
        "Offer link expired",
        "<h1>This offer link expired</h1><p class=\"sub\">Offer links are valid for 30 minutes. \
Open the offer again from your benefits platform.</p>",
    )
}

/// The 410 page of an offer whose quote expired or whose census changed
/// since it was priced: no number of it is shown.
#[must_use]
pub fn outdated(stale: bool) -> String {
    let why = if stale {
        "The company's census changed after this offer was priced, so its prices no longer apply."
    } else {
        "The quote behind this offer has expired, so its prices no longer apply."
    };
    page(
        "Offer out of date",
        &format!(
            "<h1>This offer is out of date</h1><p class=\"sub\">{why} \
Open the offer again from your benefits platform to see current prices.</p>"
        ),
    )
}

/// The 404 page of an unknown link.
#[must_use]
pub fn not_found() -> String {
    page(
        "Offer not found",
        "<h1>Offer not found</h1><p class=\"sub\">This offer link is not valid.</p>",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A market quote's figures, as stored.
    const MARKET: &str = r#"{"v":1,"doc":{"annual":{"total_cents":2777472},"assumptions":[],"benchmark":{"carrier":"Local market","metal_tier":"Platinum","monthly_cents":301234,"network":"PPO","pepm_cents":150617,"plan_name":"Platinum PPO (IL-01)"},"census":{"covered_lives":3,"employees":2,"tiers":{"employee_children":1,"employee_only":1,"employee_spouse":0,"family":0}},"comparison":{"basis":"current_coverage","prior_pepm_cents":156000,"savings_annual_cents":966528,"savings_monthly_cents":80544,"savings_pct":26},"employee_contribution":{"employer_contribution_pct":100,"premium_cents":0},"funding_breakdown":{"admin_fees_pct":7,"care_navigation_pct":8,"expected_claims_pct":70,"note":"Illustrative split.","stop_loss_pct":15},"monthly":{"by_tier":{"employee_children":{"avg_cents":151146,"count":1},"employee_only":{"avg_cents":80310,"count":1},"employee_spouse":{"avg_cents":0,"count":0},"family":{"avg_cents":0,"count":0}},"pepm_cents":115728,"total_cents":231456},"plan":{"id":"diamond","name":"Diamond"},"plan_year_start_date":"2026-12-01","pricing":{"source":"rate-card 2026.1 default","updated_at":null},"pricing_basis":"market_rates"}}"#;

    #[test]
    fn money_is_dollars_with_two_decimals() {
        for (c, s) in [
            (0, "$0.00"),
            (5, "$0.05"),
            (123_456, "$1,234.56"),
            (100_000_000, "$1,000,000.00"),
            (-99_950, "-$999.50"),
        ] {
            assert_eq!(money(c), s);
        }
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            escape("<a href='x'>&\""),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;"
        );
        let mut doc: MarketQuote =
            domain::document::from_stored(MARKET, domain::document::Legacy::Snake).unwrap();
        doc.plan.name = "<script>".to_owned();
        let html = offer(&doc, "soon");
        assert!(!html.contains("<script>") && html.contains("&lt;script&gt;"));
    }

    #[test]
    fn bars_scale_to_the_larger_cost() {
        assert_eq!(width(50, 100), BAR_MAX / 2);
        assert_eq!(width(100, 100), BAR_MAX);
        assert_eq!(width(1, 1_000_000), 2);
        assert_eq!(width(0, 100), 0);
    }
}
