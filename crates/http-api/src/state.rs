//! What every handler and middleware shares: the use-case services, the
//! ports the adapter itself needs (idempotency, rate limits, health, clock,
//! entropy) and the adapter's configuration.

use std::net::IpAddr;
use std::sync::Arc;

use domain::ports::{Clock, Entropy};
use domain::rate_limit::Policy;
use domain::services::accounts::Accounts;
use domain::services::census::Census;
use domain::services::elections::Elections;
use domain::services::embed::EmbedSessions;
use domain::services::enrollments::Enrollments;
use domain::services::events::Events;
use domain::services::groups::Groups;
use domain::services::members::Members;
use domain::services::onboarding::Onboarding;
use domain::services::partners::Partners;
use domain::services::price_on_plan::PriceOnPlan;
use domain::services::quotes::Quotes;
use domain::services::webhooks::Webhooks;
use domain::store::{Health, IdempotencyStore, RateLimitStore};

use crate::wire::plans::Plan;

/// Rate limits (contract section 0, `[rate_limits]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// All requests, per key, per minute.
    pub requests_per_minute: u32,
    /// Census writes, member writes and elections, per key, per minute.
    pub census_writes_per_minute: u32,
    /// Quote creates and price-on-plan, per key, per hour.
    pub quote_creates_per_hour: u32,
    /// Failed authentication, per source IP, per minute.
    pub failed_auth_per_minute: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            requests_per_minute: 120,
            census_writes_per_minute: 20,
            quote_creates_per_hour: 60,
            failed_auth_per_minute: 30,
        }
    }
}

impl Limits {
    /// The per-key policy for all requests.
    #[must_use]
    pub fn requests(&self) -> Policy {
        Policy::requests(self.requests_per_minute)
    }

    /// The per-key policy for census writes and elections.
    #[must_use]
    pub fn census_writes(&self) -> Policy {
        Policy::census_writes(self.census_writes_per_minute)
    }

    /// The per-key policy for quote creates and price-on-plan.
    #[must_use]
    pub fn quote_creates(&self) -> Policy {
        Policy::quote_creates(self.quote_creates_per_hour)
    }

    /// The per-IP policy for failed authentication.
    #[must_use]
    pub fn failed_auth(&self) -> Policy {
        Policy::failed_auth(self.failed_auth_per_minute)
    }
}

/// The HTTP adapter's configuration; its `Default` is the documented
/// defaults (`[rate_limits]`, no trusted proxies, `body_timeout_secs = 60`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    /// Rate limits.
    pub limits: Limits,
    /// Peers whose `X-Forwarded-For` is believed.
    pub trusted_proxies: Vec<IpAddr>,
    /// How long a client has to send a whole request body, counted from
    /// the moment its head arrived; then 408.
    pub body_timeout: std::time::Duration,
}

/// The default of [`HttpConfig::body_timeout`].
pub const DEFAULT_BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            limits: Limits::default(),
            trusted_proxies: Vec::new(),
            body_timeout: DEFAULT_BODY_TIMEOUT,
        }
    }
}

/// The shared application state.
#[derive(Clone)]
pub struct AppState {
    /// Partners and keys (authentication).
    pub partners: Partners,
    /// Employer groups.
    pub groups: Groups,
    /// Census writes.
    pub census: Census,
    /// Quotes.
    pub quotes: Quotes,
    /// Price-on-plan.
    pub price_on_plan: PriceOnPlan,
    /// Enrollments and going live.
    pub enrollments: Enrollments,
    /// Members one at a time, and the roster.
    pub members: Members,
    /// Account data.
    pub accounts: Accounts,
    /// Final elections.
    pub elections: Elections,
    /// Embed sessions and their offer pages.
    pub embed_sessions: EmbedSessions,
    /// The event history.
    pub events: Events,
    /// Webhook registration and the test ping.
    pub webhooks: Webhooks,
    /// Embedded onboarding: the checklist, changed through the API for
    /// embedded enrollments only.
    pub onboarding: Onboarding,
    /// Employer-portal links (`portal_links`).
    pub portal: domain::services::portal::Portal,
    /// Idempotency records.
    pub idempotency: Arc<dyn IdempotencyStore>,
    /// Rate-limit counters.
    pub rate_limits: Arc<dyn RateLimitStore>,
    /// Store health.
    pub health: Arc<dyn Health>,
    /// The clock.
    pub clock: Arc<dyn Clock>,
    /// Randomness for request ids.
    pub entropy: Arc<dyn Entropy>,
    /// The plan catalogue of `GET /plans`.
    pub plans: Arc<Vec<Plan>>,
    /// Configuration.
    pub config: Arc<HttpConfig>,
    /// Where partners reach this service (`public_base_url`): the
    /// OpenAPI document's server.
    pub public_base_url: String,
}
