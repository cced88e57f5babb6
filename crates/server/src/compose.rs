//! Composition of the HTTP application: the domain's services over the
//! storage ports and the production (or test) clock, entropy and sealer,
//! handed to the actix-web adapter as one [`AppState`].

use std::sync::Arc;

use anyhow::Context as _;
use domain::services::accounts::Accounts;
use domain::services::census::Census;
use domain::services::elections::Elections;
use domain::services::embed::EmbedSessions;
use domain::services::enrollments::Enrollments;
use domain::services::events::Events;
use domain::services::groups::Groups;
use domain::services::jobs::Worker;
use domain::services::members::Members;
use domain::services::price_on_plan::{self, PriceOnPlan, PriceOnPlanHandler, PriceOnPlanPorts};
use domain::services::quotes::{ComparisonHandler, QuotePorts, Quotes};
use domain::services::webhooks::{WebhookPorts, WebhookSettings, Webhooks};
use http_api::wire::plans::Plan;
use http_api::{AppState, HttpConfig};
use pricing_core::RateCard;
use store_diesel::Stores;

use crate::config::Settings;
use crate::jobs::JobHandlers;
use crate::system::{self, Ports};

/// The rate card in use: the file `pricing.rate_card` names, or the
/// built-in 2026 card when that file is the default path and absent (a
/// binary run outside the repository). A named file that is missing or
/// invalid stops the start.
///
/// # Errors
/// When the configured file cannot be read or is not a valid card.
pub fn rate_card(settings: &Settings) -> anyhow::Result<RateCard> {
    let path = &settings.pricing.rate_card;
    if !path.exists() && path == std::path::Path::new(crate::config::DEFAULT_RATE_CARD) {
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

/// What every worker's application shares: the rate card, its plan
/// catalogue, and the waker of this process's job worker.
#[derive(Clone)]
pub struct Shared {
    /// The rate card in use.
    pub card: Arc<RateCard>,
    /// The plan catalogue of `GET /plans`.
    pub plans: Arc<Vec<Plan>>,
    /// Wakes the job worker after a census write.
    pub jobs_waker: Arc<tokio::sync::Notify>,
    /// Outbound member email (`[email]`; recording by default).
    pub mailer: Arc<dyn domain::ports::Mailer>,
    /// How long price-on-plan waits for pricing before answering 202
    /// (`pricing.wait_budget_ms`).
    pub wait_budget: std::time::Duration,
    /// `[webhooks]`.
    pub webhooks: WebhookSettings,
    /// Sends webhook deliveries (one client thread per process).
    pub deliverer: Arc<dyn domain::ports::Deliverer>,
}

impl Shared {
    /// The shared parts over `card`.
    ///
    /// # Errors
    /// When the plan catalogue does not describe the card's versions.
    pub fn of(card: RateCard) -> anyhow::Result<Self> {
        Ok(Self {
            plans: plans_of(&card)?,
            card: Arc::new(card),
            jobs_waker: Arc::new(tokio::sync::Notify::new()),
            mailer: Arc::new(mail::RecordingMailer::new()),
            wait_budget: price_on_plan::DEFAULT_WAIT_BUDGET,
            webhooks: WebhookSettings::default(),
            deliverer: Arc::new(crate::deliver::HttpDeliverer::start(false)?),
        })
    }

    /// Applies `[webhooks]`: the settings and a deliverer that allows
    /// insecure endpoints when they do.
    ///
    /// # Errors
    /// When the deliverer cannot start.
    pub fn with_webhooks(mut self, settings: WebhookSettings) -> anyhow::Result<Self> {
        self.deliverer = Arc::new(crate::deliver::HttpDeliverer::start(
            settings.allow_insecure_endpoints,
        )?);
        self.webhooks = settings;
        Ok(self)
    }

    /// The shared parts over the built-in rate card.
    ///
    /// # Errors
    /// When the built-in card or catalogue does not load (a build defect).
    pub fn builtin() -> anyhow::Result<Self> {
        Self::of(RateCard::builtin_2026().context("built-in rate card")?)
    }
}

/// The job worker over `stores` and `ports`, with the handlers of every
/// job kind: the market comparison and price-on-plan pricing.
#[must_use]
pub fn job_worker(stores: &Stores, ports: &Ports, shared: &Shared) -> (Worker, JobHandlers) {
    (
        Worker::new(Arc::clone(&stores.jobs), Arc::clone(&ports.clock)),
        JobHandlers {
            comparison: ComparisonHandler::new(
                Arc::clone(&stores.groups),
                Arc::clone(&stores.census),
                Arc::clone(&ports.clock),
                Arc::clone(&ports.entropy),
                Arc::clone(&shared.card),
            ),
            price_on_plan: PriceOnPlanHandler::new(price_on_plan_service(stores, ports, shared)),
        },
    )
}

/// The webhook service (registration, test ping, dispatcher) over
/// `stores` and `ports`.
#[must_use]
pub fn webhooks_service(stores: &Stores, ports: &Ports, shared: &Shared) -> Webhooks {
    Webhooks::new(
        WebhookPorts {
            endpoints: Arc::clone(&stores.webhooks),
            outbox: Arc::clone(&stores.outbox),
            partners: Arc::clone(&stores.partners),
            deliverer: Arc::clone(&shared.deliverer),
            sealer: Arc::clone(&ports.sealer),
            clock: Arc::clone(&ports.clock),
            entropy: Arc::clone(&ports.entropy),
        },
        shared.webhooks,
    )
}

/// The price-on-plan service over `stores` and `ports`.
#[must_use]
pub fn price_on_plan_service(stores: &Stores, ports: &Ports, shared: &Shared) -> PriceOnPlan {
    PriceOnPlan::new(
        PriceOnPlanPorts {
            groups: Arc::clone(&stores.groups),
            quotes: Arc::clone(&stores.quotes),
            jobs: Arc::clone(&stores.jobs),
            clock: Arc::clone(&ports.clock),
            entropy: Arc::clone(&ports.entropy),
        },
        Arc::clone(&shared.card),
        shared.wait_budget,
    )
    .with_waker(Arc::clone(&shared.jobs_waker))
}

/// The plan catalogue of `GET /plans` for `card`.
///
/// # Errors
/// When the catalogue does not describe the card's versions.
pub fn plans_of(card: &RateCard) -> anyhow::Result<Arc<Vec<Plan>>> {
    let plans = domain::plans::catalogue(card, domain::plans::BUILTIN_CATALOGUE)?;
    Ok(Arc::new(plans.iter().map(Plan::from).collect()))
}

/// The application state over `stores` and `ports`.
#[must_use]
pub fn app_state(stores: &Stores, ports: &Ports, config: HttpConfig, shared: &Shared) -> AppState {
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
        quotes: Quotes::new(
            QuotePorts {
                groups: Arc::clone(&stores.groups),
                census: Arc::clone(&stores.census),
                quotes: Arc::clone(&stores.quotes),
                jobs: Arc::clone(&stores.jobs),
                clock: Arc::clone(&ports.clock),
                entropy: Arc::clone(&ports.entropy),
            },
            Arc::clone(&shared.card),
        ),
        price_on_plan: price_on_plan_service(stores, ports, shared),
        enrollments: Enrollments::new(
            Arc::clone(&stores.groups),
            Arc::clone(&stores.quotes),
            Arc::clone(&ports.clock),
            Arc::clone(&ports.entropy),
        )
        .with_mailer(Arc::clone(&shared.mailer)),
        members: Members::new(
            Arc::clone(&stores.groups),
            Arc::clone(&stores.census),
            Arc::clone(&ports.clock),
            Arc::clone(&ports.entropy),
        ),
        accounts: Accounts::new(
            Arc::clone(&stores.groups),
            Arc::clone(&stores.census),
            Arc::clone(&stores.quotes),
            Arc::clone(&stores.claims),
            Arc::clone(&ports.clock),
        ),
        elections: Elections::new(
            Arc::clone(&stores.groups),
            Arc::clone(&stores.census),
            Arc::clone(&stores.quotes),
            Arc::clone(&shared.mailer),
            Arc::clone(&ports.clock),
            Arc::clone(&ports.entropy),
        ),
        embed_sessions: EmbedSessions::new(
            Arc::clone(&stores.groups),
            Arc::clone(&stores.quotes),
            Arc::clone(&ports.sealer),
            Arc::clone(&ports.clock),
            Arc::clone(&ports.entropy),
        ),
        events: Events::new(Arc::clone(&stores.outbox), Arc::clone(&ports.clock)),
        webhooks: webhooks_service(stores, ports, shared),
        jobs_waker: Arc::clone(&shared.jobs_waker),
        census_store: Arc::clone(&stores.census),
        idempotency: Arc::clone(&stores.idempotency),
        rate_limits: Arc::clone(&stores.rate_limits),
        health: Arc::clone(&stores.health),
        clock: Arc::clone(&ports.clock),
        entropy: Arc::clone(&ports.entropy),
        plans: Arc::clone(&shared.plans),
        config: Arc::new(config),
    }
}
