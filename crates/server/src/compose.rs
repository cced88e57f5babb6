//! The composition root: the one place where the domain's services are
//! built over the storage ports ([`Stores`]), the other ports ([`Ports`]:
//! clock, entropy, sealer) and what a process shares ([`Shared`]: the rate
//! card, the mailer, the webhook deliverer…). [`Services`] serves `serve`
//! (the HTTP application's [`AppState`], the job worker, the webhook
//! dispatcher), every operator command and the test suites alike.

use std::sync::Arc;

use anyhow::Context as _;
use domain::services::RecordPorts;
use domain::services::accounts::Accounts;
use domain::services::census::Census;
use domain::services::elections::Elections;
use domain::services::embed::{EmbedPorts, EmbedSessions};
use domain::services::enrollments::Enrollments;
use domain::services::events::Events;
use domain::services::groups::Groups;
use domain::services::jobs::Worker;
use domain::services::mailbox::{EmailHandler, Mailbox};
use domain::services::members::Members;
use domain::services::onboarding::{Onboarding, OnboardingPorts, VerificationHandler};
use domain::services::partner_portal::{Console, ConsolePorts, PartnerPortal, PartnerPortalPorts};
use domain::services::partners::Partners;
use domain::services::portal::{Credentials, Portal, PortalLinks, PortalPorts};
use domain::services::price_on_plan::{self, PriceOnPlan, PriceOnPlanHandler};
use domain::services::quotes::{ComparisonHandler, Quotes};
use domain::services::webhooks::{WebhookPorts, WebhookSettings, Webhooks};
use http_api::wire::plans::Plan;
use http_api::{AppState, HttpConfig};
use pricing_core::RateCard;
use store_diesel::Stores;

use crate::config::{DEFAULT_RATE_CARD, Settings};
use crate::jobs::JobHandlers;
use crate::system::Ports;
use crate::verifiers::{Deposits, Verifier};

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

/// What every worker's application shares: the rate card, its plan
/// catalogue, and the waker of this process's job worker.
#[derive(Clone)]
pub struct Shared {
    /// The rate card in use.
    pub card: Arc<RateCard>,
    /// The plan catalogue of `GET /plans`.
    pub plans: Arc<Vec<Plan>>,
    /// The plan catalogue as the domain reads it (the plan documents).
    pub catalogue: Arc<Vec<domain::plans::PlanInfo>>,
    /// `onboarding.verification_time_scale`.
    pub verification_time_scale: f64,
    /// `embed.session_minutes`.
    pub embed_session_minutes: f64,
    /// `public_base_url`.
    pub public_base_url: String,
    /// `members.login_url`.
    pub member_login_url: Option<String>,
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
    /// Hashes portal passwords (Argon2id).
    pub hasher: Arc<dyn domain::ports::PasswordHasher>,
}

impl Shared {
    /// The shared parts over `card`, with the defaults of everything else
    /// (a recording mailer, the default wait budget and webhook settings).
    ///
    /// # Errors
    /// When the plan catalogue does not describe the card's versions.
    pub fn of(card: RateCard) -> anyhow::Result<Self> {
        Self::over(
            card,
            Arc::new(mail::RecordingMailer::new()),
            price_on_plan::DEFAULT_WAIT_BUDGET,
            WebhookSettings::default(),
        )
    }

    /// The shared parts of `serve` over `card`: the mailer, the wait
    /// budget and the webhook settings of `settings`.
    ///
    /// # Errors
    /// When the catalogue does not describe the card, or the mailer or
    /// the deliverer cannot be set up.
    pub fn configured(card: RateCard, settings: &Settings) -> anyhow::Result<Self> {
        let mut shared = Self::over(
            card,
            crate::mail::mailer(settings)?,
            settings.pricing.wait_budget,
            settings.webhooks,
        )?;
        shared.verification_time_scale = settings.onboarding.verification_time_scale;
        shared.embed_session_minutes = settings.embed.session_minutes;
        shared.public_base_url.clone_from(&settings.public_base_url);
        shared
            .member_login_url
            .clone_from(&settings.member_login_url);
        Ok(shared)
    }

    fn over(
        card: RateCard,
        mailer: Arc<dyn domain::ports::Mailer>,
        wait_budget: std::time::Duration,
        webhooks: WebhookSettings,
    ) -> anyhow::Result<Self> {
        Ok(Self {
            plans: plans_of(&card)?,
            catalogue: Arc::new(domain::plans::catalogue(
                &card,
                domain::plans::BUILTIN_CATALOGUE,
            )?),
            verification_time_scale: crate::config::OnboardingSettings::default()
                .verification_time_scale,
            embed_session_minutes: domain::embed::DEFAULT_SESSION_MINUTES,
            public_base_url: domain::services::enrollments::DEFAULT_PUBLIC_BASE_URL.to_owned(),
            member_login_url: None,
            card: Arc::new(card),
            jobs_waker: Arc::new(tokio::sync::Notify::new()),
            mailer,
            wait_budget,
            webhooks,
            deliverer: Arc::new(crate::deliver::HttpDeliverer::start(
                webhooks.allow_insecure_endpoints,
                std::time::Duration::from_millis(webhooks.attempt_timeout_ms),
            )?),
            hasher: Arc::new(web::Argon2id),
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
            std::time::Duration::from_millis(settings.attempt_timeout_ms),
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

/// The plan catalogue of `GET /plans` for `card`.
///
/// # Errors
/// When the catalogue does not describe the card's versions.
pub fn plans_of(card: &RateCard) -> anyhow::Result<Arc<Vec<Plan>>> {
    let plans = domain::plans::catalogue(card, domain::plans::BUILTIN_CATALOGUE)?;
    Ok(Arc::new(plans.iter().map(Plan::from).collect()))
}

/// Every service of the application over one set of stores, ports and
/// shared parts. Cheap to build and to clone (it holds `Arc`s); each
/// method builds its service afresh.
#[derive(Clone)]
pub struct Services {
    stores: Stores,
    ports: Ports,
    shared: Shared,
}

impl Services {
    /// The services over `stores`, `ports` and `shared`.
    #[must_use]
    pub fn new(stores: &Stores, ports: &Ports, shared: &Shared) -> Self {
        Self {
            stores: stores.clone(),
            ports: ports.clone(),
            shared: shared.clone(),
        }
    }

    /// The storage ports.
    #[must_use]
    pub const fn stores(&self) -> &Stores {
        &self.stores
    }

    /// The other ports.
    #[must_use]
    pub const fn ports(&self) -> &Ports {
        &self.ports
    }

    /// The shared parts.
    #[must_use]
    pub const fn shared(&self) -> &Shared {
        &self.shared
    }

    /// Partners and their keys.
    #[must_use]
    pub fn partners(&self) -> Partners {
        let (s, p) = (&self.stores, &self.ports);
        Partners::new(
            Arc::clone(&s.partners),
            Arc::clone(&p.clock),
            Arc::clone(&p.entropy),
            Arc::clone(&p.sealer),
        )
    }

    /// Employer groups.
    #[must_use]
    pub fn groups(&self) -> Groups {
        let (s, p) = (&self.stores, &self.ports);
        Groups::new(
            Arc::clone(&s.groups),
            Arc::clone(&p.clock),
            Arc::clone(&p.entropy),
        )
    }

    /// Census writes.
    #[must_use]
    pub fn census(&self) -> Census {
        Census::new(self.records())
    }

    /// The ports of the services over a group's records, waking the job
    /// worker when they queue a job.
    fn records(&self) -> RecordPorts {
        let (s, p) = (&self.stores, &self.ports);
        RecordPorts {
            groups: Arc::clone(&s.groups),
            census: Arc::clone(&s.census),
            quotes: Arc::clone(&s.quotes),
            jobs: Arc::clone(&s.jobs),
            clock: Arc::clone(&p.clock),
            entropy: Arc::clone(&p.entropy),
            waker: self.waker(),
        }
    }

    /// Quotes, over the shared rate card.
    #[must_use]
    pub fn quotes(&self) -> Quotes {
        Quotes::new(self.records(), Arc::clone(&self.shared.card))
    }

    /// Price-on-plan, waking the job worker when it queues a pricing.
    #[must_use]
    pub fn price_on_plan(&self) -> PriceOnPlan {
        PriceOnPlan::new(
            self.records(),
            Arc::clone(&self.shared.card),
            self.shared.wait_budget,
        )
    }

    /// Enrollments and going live, inviting through the shared mailer.
    #[must_use]
    pub fn enrollments(&self) -> Enrollments {
        let (s, p) = (&self.stores, &self.ports);
        Enrollments::new(
            Arc::clone(&s.groups),
            Arc::clone(&s.quotes),
            Arc::clone(&p.clock),
            Arc::clone(&p.entropy),
        )
        .with_public_base_url(&self.shared.public_base_url)
        .with_portal(self.portal_links())
    }

    /// Members one at a time.
    #[must_use]
    pub fn members(&self) -> Members {
        let (s, p) = (&self.stores, &self.ports);
        Members::new(
            Arc::clone(&s.groups),
            Arc::clone(&s.census),
            Arc::clone(&p.clock),
            Arc::clone(&p.entropy),
            self.waker(),
        )
    }

    /// The waker of this process's job worker, as the services see it.
    fn waker(&self) -> Arc<dyn domain::ports::JobWaker> {
        let waker: Arc<dyn domain::ports::JobWaker> = self.shared.jobs_waker.clone();
        waker
    }

    /// Set-password links of the employer portal, their emails queued.
    #[must_use]
    pub fn portal_links(&self) -> PortalLinks {
        PortalLinks::new(
            Arc::clone(&self.stores.portal),
            Arc::clone(&self.ports.sealer),
            Mailbox::new(Arc::clone(&self.ports.sealer)),
            &self.shared.public_base_url,
        )
    }

    /// The employer portal's accounts and sessions; failed sign-ins count
    /// against `failed_auth` per source address.
    #[must_use]
    pub fn portal(&self, failed_auth: domain::rate_limit::Policy) -> Portal {
        let (s, p) = (&self.stores, &self.ports);
        Portal::new(PortalPorts {
            store: Arc::clone(&s.portal),
            enrollments: Arc::clone(&s.quotes),
            credentials: self.credentials(failed_auth),
            clock: Arc::clone(&p.clock),
            entropy: Arc::clone(&p.entropy),
            links: self.portal_links(),
        })
    }

    /// Password hashing and the failed-auth limit both portals share.
    fn credentials(&self, failed_auth: domain::rate_limit::Policy) -> Credentials {
        Credentials {
            hasher: Arc::clone(&self.shared.hasher),
            rate_limits: Arc::clone(&self.stores.rate_limits),
            failed_auth,
        }
    }

    /// The partner portal's users, sessions and audit log; failed
    /// sign-ins count against `failed_auth` per source address.
    #[must_use]
    pub fn partner_portal(&self, failed_auth: domain::rate_limit::Policy) -> PartnerPortal {
        let (s, p) = (&self.stores, &self.ports);
        PartnerPortal::new(PartnerPortalPorts {
            store: Arc::clone(&s.partner_users),
            credentials: self.credentials(failed_auth),
            clock: Arc::clone(&p.clock),
            entropy: Arc::clone(&p.entropy),
            sealer: Arc::clone(&p.sealer),
            base_url: self.shared.public_base_url.as_str().into(),
            mailbox: Mailbox::new(Arc::clone(&p.sealer)),
        })
    }

    /// The partner portal's actions over the services the API uses.
    #[must_use]
    pub fn console(&self, failed_auth: domain::rate_limit::Policy) -> Console {
        Console::new(ConsolePorts {
            users: self.partner_portal(failed_auth),
            partners: self.partners(),
            partner_store: Arc::clone(&self.stores.partners),
            webhooks: self.webhooks(),
            events: self.events(),
            groups: self.groups(),
            enrollments: Arc::clone(&self.stores.quotes),
            clock: Arc::clone(&self.ports.clock),
        })
    }

    /// Onboarding: the checklist behind the portal, the embedded endpoints
    /// and the operator's reviews.
    #[must_use]
    pub fn onboarding(&self) -> Onboarding {
        let (s, p) = (&self.stores, &self.ports);
        Onboarding::new(OnboardingPorts {
            quotes: Arc::clone(&s.quotes),
            groups: Arc::clone(&s.groups),
            store: Arc::clone(&s.onboarding),
            clock: Arc::clone(&p.clock),
            entropy: Arc::clone(&p.entropy),
            sealer: Arc::clone(&p.sealer),
            verifier: Arc::new(Verifier::new(self.shared.verification_time_scale)),
            deposits: Arc::new(Deposits::new(Arc::clone(&p.entropy))),
            waker: self.waker(),
            plans: Arc::clone(&self.shared.catalogue),
            census: Arc::clone(&s.census),
            mailbox: Mailbox::new(Arc::clone(&p.sealer)),
        })
    }

    /// Account data and claims imports.
    #[must_use]
    pub fn accounts(&self) -> Accounts {
        let (s, p) = (&self.stores, &self.ports);
        Accounts::new(
            Arc::clone(&s.groups),
            Arc::clone(&s.census),
            Arc::clone(&s.quotes),
            Arc::clone(&s.claims),
            Arc::clone(&p.clock),
        )
    }

    /// Final elections.
    #[must_use]
    pub fn elections(&self) -> Elections {
        Elections::new(self.records(), Mailbox::new(Arc::clone(&self.ports.sealer)))
            .with_login_url(self.shared.member_login_url.clone())
    }

    /// Embed sessions.
    #[must_use]
    pub fn embed_sessions(&self) -> EmbedSessions {
        let (s, p) = (&self.stores, &self.ports);
        EmbedSessions::new(
            EmbedPorts {
                groups: Arc::clone(&s.groups),
                quotes: Arc::clone(&s.quotes),
                partners: Arc::clone(&s.partners),
                store: Arc::clone(&s.embed),
                sealer: Arc::clone(&p.sealer),
                clock: Arc::clone(&p.clock),
                entropy: Arc::clone(&p.entropy),
                waker: self.waker(),
                mailbox: Mailbox::new(Arc::clone(&p.sealer)),
                plans: Arc::clone(&self.shared.catalogue),
                public_base_url: self.shared.public_base_url.clone(),
            },
            self.shared.embed_session_minutes,
        )
    }

    /// The event feed.
    #[must_use]
    pub fn events(&self) -> Events {
        Events::new(
            Arc::clone(&self.stores.outbox),
            Arc::clone(&self.ports.clock),
        )
    }

    /// Webhooks: registration, the test ping and the dispatcher.
    #[must_use]
    pub fn webhooks(&self) -> Webhooks {
        let (s, p) = (&self.stores, &self.ports);
        Webhooks::new(
            WebhookPorts {
                endpoints: Arc::clone(&s.webhooks),
                outbox: Arc::clone(&s.outbox),
                partners: Arc::clone(&s.partners),
                deliverer: Arc::clone(&self.shared.deliverer),
                sealer: Arc::clone(&p.sealer),
                clock: Arc::clone(&p.clock),
                entropy: Arc::clone(&p.entropy),
                users: Arc::clone(&s.partner_users),
                mailbox: Mailbox::new(Arc::clone(&p.sealer)),
                base_url: self.shared.public_base_url.as_str().into(),
            },
            self.shared.webhooks,
        )
    }

    /// The job worker, with the handlers of every job kind: the market
    /// comparison and price-on-plan pricing.
    #[must_use]
    pub fn job_worker(&self) -> (Worker, JobHandlers) {
        let (s, p) = (&self.stores, &self.ports);
        (
            Worker::new(Arc::clone(&s.jobs), Arc::clone(&p.clock)),
            JobHandlers {
                comparison: ComparisonHandler::new(self.quotes()),
                price_on_plan: PriceOnPlanHandler::new(self.price_on_plan()),
                verification: VerificationHandler::new(self.onboarding()),
                email: EmailHandler::new(Arc::clone(&p.sealer), Arc::clone(&self.shared.mailer)),
            },
        )
    }

    /// The employer portal's state: its services, with the failed-auth
    /// limit of `config` and `Secure` cookies when `public_base_url` is
    /// https.
    #[must_use]
    pub fn portal_state(&self, config: &HttpConfig) -> web::PortalState {
        web::PortalState {
            portal: self.portal(config.limits.failed_auth()),
            onboarding: self.onboarding(),
            secure_cookies: self.shared.public_base_url.starts_with("https://"),
        }
    }

    /// The partner portal's state: the console, with the failed-auth limit
    /// of `config` and `Secure` cookies when `public_base_url` is https.
    #[must_use]
    pub fn partner_portal_state(&self, config: &HttpConfig) -> web::PartnerState {
        web::PartnerState {
            console: self.console(config.limits.failed_auth()),
            secure_cookies: self.shared.public_base_url.starts_with("https://"),
        }
    }

    /// The HTTP application's state, configured by `config`.
    #[must_use]
    pub fn app_state(&self, config: HttpConfig) -> AppState {
        let (s, p) = (&self.stores, &self.ports);
        AppState {
            partners: self.partners(),
            groups: self.groups(),
            census: self.census(),
            quotes: self.quotes(),
            price_on_plan: self.price_on_plan(),
            enrollments: self.enrollments(),
            members: self.members(),
            accounts: self.accounts(),
            elections: self.elections(),
            embed_sessions: self.embed_sessions(),
            events: self.events(),
            webhooks: self.webhooks(),
            onboarding: self.onboarding().embedded_only(),
            portal: self.portal(config.limits.failed_auth()),
            idempotency: Arc::clone(&s.idempotency),
            rate_limits: Arc::clone(&s.rate_limits),
            health: Arc::clone(&s.health),
            clock: Arc::clone(&p.clock),
            entropy: Arc::clone(&p.entropy),
            plans: Arc::clone(&self.shared.plans),
            config: Arc::new(config),
            public_base_url: self.shared.public_base_url.clone(),
        }
    }
}

/// The whole HTTP application over `services`: the JSON API (`/v1`, the
/// reference at `/docs`), the employer portal (`/portal/`), the partner
/// portal (`/partner/`) and the offer
/// page of embed sessions (`/embed/{token}`).
pub fn app(
    services: Services,
    config: HttpConfig,
) -> actix_web::App<
    impl actix_web::dev::ServiceFactory<
        actix_web::dev::ServiceRequest,
        Config = (),
        Response = actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    let portal = services.portal_state(&config);
    let partners = services.partner_portal_state(&config);
    let offers = services.embed_sessions();
    http_api::app(services.app_state(config))
        .configure(web::configure(portal))
        .configure(web::partner::configure(partners))
        .configure(web::offer::configure(offers))
}
