//! Composition of the HTTP application: the domain's services over the
//! storage ports and the production (or test) clock, entropy and sealer,
//! handed to the actix-web adapter as one [`AppState`].

use std::sync::Arc;

use anyhow::Context as _;
use domain::services::census::Census;
use domain::services::groups::Groups;
use http_api::wire::plans::Plan;
use http_api::{AppState, HttpConfig, Limits};
use pricing_core::RateCard;
use store_diesel::Stores;

use crate::config::Settings;
use crate::system::{self, Ports};

/// The HTTP adapter's configuration from the settings.
#[must_use]
pub fn http_config(settings: &Settings) -> HttpConfig {
    let r = &settings.rate_limits;
    HttpConfig {
        limits: Limits {
            requests_per_minute: r.requests_per_minute,
            census_writes_per_minute: r.census_writes_per_minute,
            quote_creates_per_hour: r.quote_creates_per_hour,
            failed_auth_per_minute: r.failed_auth_per_minute,
        },
        trusted_proxies: settings.proxy.trusted.clone(),
    }
}

/// The rate card in use: the file `pricing.rate_card` names, or the
/// built-in 2026 card when that file is the default path and absent (a
/// binary run outside the repository). A named file that is missing or
/// invalid stops the start.
///
/// # Errors
/// When the configured file cannot be read or is not a valid card.
pub fn rate_card(settings: &Settings) -> anyhow::Result<RateCard> {
    let path = &settings.pricing.rate_card;
    if !path.exists() && path == std::path::Path::new(DEFAULT_RATE_CARD) {
        return RateCard::builtin_2026().context("built-in rate card");
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("pricing.rate_card: cannot read {}", path.display()))?;
    RateCard::from_toml_str(&text).with_context(|| {
        format!(
            "pricing.rate_card: {} is not a valid rate card",
            path.display()
        )
    })
}

/// The default `pricing.rate_card`.
pub const DEFAULT_RATE_CARD: &str = "rate-cards/2026.toml";

/// The plan catalogue of `GET /plans` for `card`.
///
/// # Errors
/// When the catalogue does not describe the card's versions.
pub fn plans_of(card: &RateCard) -> anyhow::Result<Arc<Vec<Plan>>> {
    let plans = domain::plans::catalogue(card, domain::plans::BUILTIN_CATALOGUE)?;
    Ok(Arc::new(plans.iter().map(Plan::from).collect()))
}

/// The plan catalogue of the built-in rate card.
///
/// # Errors
/// When the built-in card or catalogue does not load (a build defect).
pub fn plans() -> anyhow::Result<Arc<Vec<Plan>>> {
    plans_of(&RateCard::builtin_2026().context("built-in rate card")?)
}

/// The application state over `stores` and `ports`.
#[must_use]
pub fn app_state(
    stores: &Stores,
    ports: &Ports,
    config: HttpConfig,
    plans: Arc<Vec<Plan>>,
) -> AppState {
    AppState {
        partners: system::partners(stores, ports),
        groups: Groups::new(
            Arc::clone(&stores.groups),
            Arc::clone(&ports.clock),
            Arc::clone(&ports.entropy),
        ),
        census: Census::new(
            Arc::clone(&stores.census),
            Arc::clone(&stores.groups),
            Arc::clone(&ports.clock),
            Arc::clone(&ports.entropy),
        ),
        census_store: Arc::clone(&stores.census),
        idempotency: Arc::clone(&stores.idempotency),
        rate_limits: Arc::clone(&stores.rate_limits),
        health: Arc::clone(&stores.health),
        clock: Arc::clone(&ports.clock),
        entropy: Arc::clone(&ports.entropy),
        plans,
        config: Arc::new(config),
    }
}
