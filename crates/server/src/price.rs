//! `partner-api price`: prices a census from JSON files with the built-in
//! rate card and prints, as JSON (money in integer cents), what the API
//! answers — the Quote resource without the stored quote's identity, or
//! price-on-plan's broker form without `quote_id` and `group_id` — or, with
//! `--engine`, the engine's whole result.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, ValueEnum};
use pricing_core::{
    CensusContext, CensusMember, CensusRules, MarketPlan, PartnerPlan, PriceOnPlanRequest,
    PricingContext, PricingError, QuoteRequest, RateCard, VersionId,
};
use serde::Deserialize;

/// Arguments of `price`.
#[derive(Debug, Args)]
pub struct PriceArgs {
    /// Census file: `{"members": [...]}` as for `PUT /groups/{id}/census`.
    #[arg(long)]
    census: PathBuf,
    /// Partner plan file (the `plan` object of price-on-plan). Without it, a
    /// market-rate quote is priced.
    #[arg(long)]
    plan: Option<PathBuf>,
    /// Market plans file (the `market_plans` array of price-on-plan).
    #[arg(long)]
    market_plans: Option<PathBuf>,
    /// Quote one version only (quotes and price-on-plan both price both
    /// versions; this selects what is printed).
    #[arg(long, value_enum)]
    version: Option<Version>,
    /// Plan-year start, `YYYY-MM-DD` (default: the first day of next month,
    /// as the API's quotes and price-on-plan take it).
    #[arg(long)]
    plan_year_start: Option<String>,
    /// Accept members with only `age` (HR platform rules); brokers need `dob`.
    #[arg(long)]
    allow_age: bool,
    /// Company ZIP (price-on-plan `company.zip`): employees whose own ZIP has
    /// no priced rating area are rated there.
    #[arg(long)]
    company_zip: Option<String>,
    /// Print the engine's whole result (its components, pricing source and
    /// version detail) instead of the API's answer.
    #[arg(long)]
    engine: bool,
}

/// A version choice.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Version {
    Diamond,
    Value,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CensusFile {
    members: Vec<CensusMember>,
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path, what: &str) -> anyhow::Result<T> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read {what} file {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{what} file {}", path.display()))
}

/// Runs `price`.
///
/// # Errors
/// A one-line reason naming the file and field for malformed input, or the
/// engine's error.
pub fn run(args: &PriceArgs) -> anyhow::Result<()> {
    let card = RateCard::builtin_2026()?;
    let census: CensusFile = read_json(&args.census, "census")?;
    let start = match &args.plan_year_start {
        Some(text) => pricing_core::census::date_opt::parse(text)
            .map_err(anyhow::Error::msg)
            .context("--plan-year-start")?,
        None => domain::services::quotes::next_month_start(time::OffsetDateTime::now_utc().date()),
    };
    if let Some(zip) = &args.company_zip
        && !pricing_core::census::is_zip5(zip)
    {
        anyhow::bail!("--company-zip: must be 5 digits (pattern ^[0-9]{{5}}$)");
    }
    let rules = CensusRules {
        require_dob: !args.allow_age,
    };
    let version = args.version.map(|v| match v {
        Version::Diamond => VersionId::Diamond,
        Version::Value => VersionId::Value,
    });
    let out = if args.plan.is_some() || args.market_plans.is_some() {
        let plan: Option<PartnerPlan> = args
            .plan
            .as_deref()
            .map(|p| read_json(p, "plan"))
            .transpose()?;
        let market_plans: Vec<MarketPlan> = args
            .market_plans
            .as_deref()
            .map(|p| read_json(p, "market plans"))
            .transpose()?
            .unwrap_or_default();
        let req = PriceOnPlanRequest {
            census: census.members,
            plan,
            market_plans,
            company_zip: args.company_zip.clone(),
        };
        let ctx = PricingContext {
            card: &card,
            plan_year_start: start,
            partner: None,
            rules,
        };
        let mut answer = pricing_core::price_on_plan(&req, ctx).map_err(explain)?;
        if let Some(v) = version {
            answer.versions.retain(|x| x.id == v);
        }
        if args.engine {
            serde_json::to_value(&answer)?
        } else {
            http_api::wire::price_on_plan::unstored(&answer)
        }
    } else {
        let ctx = CensusContext {
            card: &card,
            plan_year_start: start,
            partner: None,
            rules,
            fallback_zip: args.company_zip.as_deref(),
        };
        let req = QuoteRequest {
            plan: version.unwrap_or(VersionId::Diamond),
            ..QuoteRequest::default()
        };
        let quote = pricing_core::quote(&census.members, ctx, req).map_err(explain)?;
        if args.engine {
            serde_json::to_value(&quote)?
        } else {
            api_quote(&quote, &card)?
        }
    };
    let text = serde_json::to_string_pretty(&out)?;
    let mut stdout = std::io::stdout().lock();
    match writeln!(stdout, "{text}").and_then(|()| stdout.flush()) {
        // A reader that stopped early (`| head`) is not a failure.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// The Quote resource `POST /groups/{id}/quotes` would answer, without the
/// stored quote's identity (`id`, `group_id`, `mode`, `expires_at`,
/// `created_at`): its `status` and figures, the employer paying the whole
/// premium (the API's default).
fn api_quote(
    quote: &pricing_core::quote::Quote,
    card: &RateCard,
) -> anyhow::Result<serde_json::Value> {
    let figures = domain::document::MarketQuote::of(quote, card.updated_at(), 100);
    let mut out = serde_json::to_value(figures)?;
    let status = domain::quote::QuoteStatus::from(quote.status);
    if let serde_json::Value::Object(map) = &mut out {
        map.insert("status".to_owned(), status.as_str().into());
    }
    Ok(out)
}

fn explain(e: PricingError) -> anyhow::Error {
    match &e {
        PricingError::InvalidCensus(d) | PricingError::InvalidPlan(d) => {
            if let Some(first) = d.first() {
                let more = if d.len() > 1 {
                    format!(" (and {} more)", d.len() - 1)
                } else {
                    String::new()
                };
                return anyhow::anyhow!("{}: {}{more}", first.field, first.message);
            }
            anyhow::Error::new(e)
        }
        _ => anyhow::Error::new(e),
    }
}
