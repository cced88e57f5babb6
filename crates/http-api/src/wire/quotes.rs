//! Quotes: `POST /groups/{groupId}/quotes`, `GET /groups/{groupId}/quotes`
//! and `GET /quotes/{id}` (specification, Quote; contract section 3).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use domain::document::MarketQuote;
use domain::quote::{Quote, QuoteKind};

use crate::error::ApiError;
use crate::wire::timestamp;

/// The body of `POST /groups/{groupId}/quotes`; every field is optional.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[schema(example = json!({"plan_id": "diamond", "plan_year_start_date": "2027-01-01", "employer_contribution_pct": 80}))]
pub struct QuoteInput {
    /// `diamond` (default) or `value`.
    #[schema(example = "diamond")]
    pub plan_id: Option<String>,
    /// Plan-year start; default the first day of the next month. Not in
    /// the past, at most 366 days ahead.
    #[schema(format = Date, example = "2027-01-01")]
    pub plan_year_start_date: Option<String>,
    /// Employer share of the premium, 0 to 100 (default 100).
    #[schema(minimum = 0, maximum = 100, example = 100)]
    pub employer_contribution_pct: Option<i64>,
}

/// The example of a quote, shown for `QuoteOut` and `QuoteRead` (data,
/// kept in `examples/quote.json`; a unit test reads it).
fn quote_example() -> serde_json::Value {
    serde_json::from_str(include_str!("examples/quote.json")).unwrap_or_default()
}

/// The example of a quote list: [`quote_example`] for a larger group on
/// the `value` plan, in review, with an 80% employer share (the fields
/// that differ, in `examples/quote_in_review.json`).
fn quote_list_example() -> serde_json::Value {
    let mut quote = quote_example();
    let changes = serde_json::from_str(include_str!("examples/quote_in_review.json"));
    if let (Some(fields), Ok(serde_json::Value::Object(changes))) = (quote.as_object_mut(), changes)
    {
        fields.extend(changes);
    }
    serde_json::json!({"quotes": [quote], "next_cursor": null})
}

/// A quote.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = quote_example)]
pub struct QuoteOut {
    /// `qt_` id.
    #[schema(example = "qt_1a2b3c4d5e6f")]
    pub id: String,
    /// Group.
    pub group_id: String,
    /// `test` or `live`.
    #[schema(value_type = crate::wire::enums::Mode)]
    pub mode: String,
    /// `ready` or `in_review` (above the rate card's in-review threshold;
    /// underwriting finalizes it).
    #[schema(value_type = crate::wire::enums::MarketQuoteStatus, example = "ready")]
    pub status: String,
    /// The figures.
    #[serde(flatten)]
    pub figures: MarketQuote,
    /// When the quote stops being usable (410 `quote_expired` after).
    #[schema(format = DateTime)]
    pub expires_at: String,
    /// Creation time.
    #[schema(format = DateTime)]
    pub created_at: String,
    /// Who accepted the offer in its iframe; present once accepted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acceptance: Option<QuoteAcceptanceOut>,
}

/// `quote.acceptance`: the employer accepted the offer in its iframe.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct QuoteAcceptanceOut {
    /// The name typed.
    #[schema(example = "Dana Lee")]
    pub name: String,
    /// The address verified with a code.
    #[schema(example = "dana@acme-mfg.com")]
    pub email: String,
    /// When.
    #[schema(format = DateTime)]
    pub accepted_at: String,
}

impl QuoteOut {
    /// The answer for a stored quote.
    ///
    /// # Errors
    /// 500 when the stored document does not read back (a bug).
    pub fn of(q: &Quote) -> Result<Self, ApiError> {
        let figures = q
            .body
            .market()
            .cloned()
            .ok_or_else(|| ApiError::internal("a price-on-plan quote has no market figures"))?;
        Ok(Self {
            id: q.id.as_str().to_owned(),
            group_id: q.group_id.as_str().to_owned(),
            mode: q.scope.mode.as_str().to_owned(),
            status: q.status.as_str().to_owned(),
            figures,
            expires_at: timestamp(q.expires_at),
            created_at: timestamp(q.created_at),
            acceptance: q.acceptance.as_ref().map(|a| QuoteAcceptanceOut {
                name: a.name.clone(),
                email: a.email.clone(),
                accepted_at: timestamp(a.accepted_at),
            }),
        })
    }
}

/// A price-on-plan quote in a list: its identity and status; its answer is
/// read through `GET /quotes/{id}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct PriceOnPlanSummary {
    /// `qt_` id.
    pub id: String,
    /// Group.
    pub group_id: String,
    /// `test` or `live`.
    #[schema(value_type = crate::wire::enums::Mode)]
    pub mode: String,
    /// Always `price_on_plan`.
    #[schema(example = "price_on_plan")]
    pub kind: String,
    /// `pricing`, `ready`, `in_review` or `unavailable`.
    #[schema(value_type = crate::wire::enums::QuoteStatus)]
    pub status: String,
    /// When the quote stops being current.
    #[schema(format = DateTime)]
    pub expires_at: String,
    /// Creation time.
    #[schema(format = DateTime)]
    pub created_at: String,
}

/// An item of a quote list: a quote, or a price-on-plan quote's summary.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum QuoteItem {
    /// `POST /groups/{id}/quotes`.
    Quote(Box<QuoteOut>),
    /// `POST /price-on-plan`.
    PriceOnPlan(PriceOnPlanSummary),
}

impl QuoteItem {
    /// The item for a stored quote.
    ///
    /// # Errors
    /// 500 when the stored document does not read back (a bug).
    pub fn of(q: &Quote) -> Result<Self, ApiError> {
        Ok(match q.kind {
            QuoteKind::Quote => Self::Quote(Box::new(QuoteOut::of(q)?)),
            QuoteKind::PriceOnPlan => Self::PriceOnPlan(PriceOnPlanSummary {
                id: q.id.as_str().to_owned(),
                group_id: q.group_id.as_str().to_owned(),
                mode: q.scope.mode.as_str().to_owned(),
                kind: q.kind.as_str().to_owned(),
                status: q.status.as_str().to_owned(),
                expires_at: timestamp(q.expires_at),
                created_at: timestamp(q.created_at),
            }),
        })
    }
}

/// A page of quotes.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = quote_list_example)]
pub struct QuoteList {
    /// Newest first.
    pub quotes: Vec<QuoteItem>,
    /// Cursor of the next page; null on the last.
    #[schema(required = true)]
    pub next_cursor: Option<String>,
}

/// What `GET /quotes/{id}` answers: a market-rate quote, or a
/// price-on-plan quote's stored answer as `POST /price-on-plan` gave it.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = quote_example)]
#[serde(untagged)]
pub enum QuoteRead {
    /// A market-rate quote.
    Quote(Box<QuoteOut>),
    /// A price-on-plan quote's answer, as `POST /price-on-plan` gave it
    /// (the HR platform document shows its `versions` form).
    PriceOnPlan(Box<crate::wire::price_on_plan::snake::PlansAnswer>),
    /// A price-on-plan quote still pricing.
    Pricing(crate::wire::price_on_plan::snake::PlansPending),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_files_hold_a_quote_and_its_changes() {
        let quote = quote_example();
        assert_eq!(quote["id"], "qt_1a2b3c4d5e6f");
        let changes: serde_json::Value =
            serde_json::from_str(include_str!("examples/quote_in_review.json")).unwrap();
        assert!(changes.is_object());
        let list = quote_list_example();
        assert_eq!(list["quotes"][0]["status"], "in_review");
        assert_eq!(list["quotes"][0]["id"], quote["id"]);
    }
}
