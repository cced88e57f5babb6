//! The operator commands of contract section 0: `partner …` and `key …`.
//!
//! Each command applies pending migrations first (so it works on a fresh
//! database), calls the domain's [`Partners`] service, and prints either a
//! human answer or, with `--json`, one JSON object (an array for lists).
//! Human answers are script-friendly where it matters: `partner create`
//! prints the `prt_` id alone, and `key create` / `key show` print the key
//! alone on the first line. Failures are an [`OpError`]: a stable code and
//! a one-line message.

mod render;

use clap::{Args, Subcommand, ValueEnum};

use domain::ids::{IdError, KeyId, PartnerId};
use domain::mode::Mode;
use domain::partner::{BenefitsAdmin, PartnerKind};
use domain::services::ServiceError;
use domain::services::partners::Partners;
use domain::store::Conflict;

use crate::config::Settings;
use crate::migrate;
use crate::operator::render::Output;
use crate::system::{self, Ports};

/// `partner …`: partner accounts.
#[derive(Debug, Subcommand)]
pub enum PartnerCommand {
    /// Create a partner and print its `prt_` id.
    Create(CreatePartner),
    /// Enable live mode: records that the business associate and data
    /// processing agreements are executed.
    EnableLive {
        /// The partner (`prt_…`).
        #[arg(value_name = "PRT_ID")]
        id: String,
    },
    /// Disable live mode (live keys then answer 403 `live_mode_disabled`).
    DisableLive {
        /// The partner (`prt_…`).
        #[arg(value_name = "PRT_ID")]
        id: String,
    },
    /// List every partner, oldest first.
    List,
    /// Show one partner.
    Show {
        /// The partner (`prt_…`).
        #[arg(value_name = "PRT_ID")]
        id: String,
    },
}

/// Arguments of `partner create`.
#[derive(Debug, Args)]
pub struct CreatePartner {
    /// Display name (1 to 200 characters).
    #[arg(long)]
    pub name: String,
    /// Broker or HR platform partner.
    #[arg(long, value_enum)]
    pub kind: KindArg,
    /// Who runs benefits administration (default: `partner` for brokers,
    /// `service` for HR platforms).
    #[arg(long, value_enum)]
    pub benefits_admin: Option<AdminArg>,
}

/// `--kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KindArg {
    /// A broker (snake_case responses, elections by default).
    #[value(name = "broker")]
    Broker,
    /// An HR or payroll platform (camelCase responses).
    #[value(name = "hr_platform")]
    HrPlatform,
}

/// `--benefits-admin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AdminArg {
    /// The partner administers benefits.
    Partner,
    /// The service administers benefits.
    Service,
}

/// `key …`: API keys.
#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Create a key and print it once (the key alone on the first line).
    Create {
        /// The partner (`prt_…`).
        #[arg(long, value_name = "PRT_ID")]
        partner: String,
        /// Test (sandbox) or live.
        #[arg(long, value_enum)]
        mode: ModeArg,
        /// Revoke the active live key in the same transaction (one live
        /// key is active at a time).
        #[arg(long)]
        rotate: bool,
    },
    /// List a partner's keys, newest first (never the key itself).
    List {
        /// The partner (`prt_…`).
        #[arg(long, value_name = "PRT_ID")]
        partner: String,
    },
    /// Revoke a key.
    Revoke {
        /// The key record (`key_…`).
        #[arg(value_name = "KEY_ID")]
        id: String,
    },
    /// Re-display an active test key (live keys cannot be shown again).
    Show {
        /// The key record (`key_…`).
        #[arg(value_name = "KEY_ID")]
        id: String,
    },
}

/// `--mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Sandbox.
    Test,
    /// Live.
    Live,
}

/// Why an operator command failed: a stable machine-readable code (the
/// API's vocabulary where one applies) and a one-line message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct OpError {
    /// `invalid_request`, `not_found`, `conflict`, `not_configured` or
    /// `server_error`.
    pub code: &'static str,
    /// What went wrong, lowercase, one line.
    pub message: String,
}

impl OpError {
    fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// Maps a service error; `missing` names what a `NotFound` lacked.
fn service_error(e: ServiceError, missing: &dyn Fn() -> String) -> OpError {
    match e {
        ServiceError::NotFound => OpError::new("not_found", missing()),
        ServiceError::Conflict(m) => OpError::new("conflict", m),
        e @ ServiceError::RatesPending { .. } => OpError::new("rates_pending", e.to_string()),
        ServiceError::QuoteExpired(m) => OpError::new("quote_expired", m),
        e @ ServiceError::CensusRequired => OpError::new("census_required", e.to_string()),
        e @ ServiceError::MarketUnavailable => OpError::new("market_unavailable", e.to_string()),
        ServiceError::Invalid(fields) => OpError::new(
            "invalid_request",
            fields
                .iter()
                .map(|f| format!("--{} {}", f.field.replace('_', "-"), f.message))
                .collect::<Vec<_>>()
                .join("; "),
        ),
        ServiceError::Unavailable(cause) => {
            OpError::new("not_configured", format!("database unavailable: {cause}"))
        }
        ServiceError::Internal(cause) => {
            OpError::new("server_error", format!("internal error: {cause}"))
        }
    }
}

fn bad_id(e: &IdError, text: &str) -> OpError {
    OpError::new("invalid_request", format!("{e}, got {text:?}"))
}

fn partner_id(text: &str) -> Result<PartnerId, OpError> {
    PartnerId::parse(text).map_err(|e| bad_id(&e, text))
}

fn key_id(text: &str) -> Result<KeyId, OpError> {
    KeyId::parse(text).map_err(|e| bad_id(&e, text))
}

fn no_partner(id: &PartnerId) -> impl Fn() -> String {
    move || format!("no such partner {id}")
}

fn no_key(id: &KeyId) -> impl Fn() -> String {
    move || format!("no such key {id}")
}

/// Runs a `partner` command and prints its answer.
///
/// # Errors
/// [`OpError`] for a refused command; other errors for configuration,
/// migration or database failures.
pub fn partner(settings: &Settings, cmd: &PartnerCommand, json: bool) -> anyhow::Result<()> {
    let out = with_partners(settings, async |svc| run_partner(svc, cmd).await)?;
    out.print(json);
    Ok(())
}

/// Runs a `key` command and prints its answer.
///
/// # Errors
/// As [`partner`].
pub fn key(settings: &Settings, cmd: &KeyCommand, json: bool) -> anyhow::Result<()> {
    let out = with_partners(settings, async |svc| run_key(svc, cmd).await)?;
    out.print(json);
    Ok(())
}

/// Loads the ports, migrates, and runs `f` over the partners service on a
/// runtime of its own.
fn with_partners<T>(
    settings: &Settings,
    f: impl AsyncFnOnce(&Partners) -> Result<T, OpError>,
) -> anyhow::Result<T> {
    let ports = Ports::load(settings)?;
    migrate::runtime()?.block_on(async {
        migrate::apply_async(&settings.database).await?;
        let stores = system::open_stores(settings, 2)?;
        let svc = system::partners(&stores, &ports);
        Ok(f(&svc).await?)
    })
}

async fn run_partner(svc: &Partners, cmd: &PartnerCommand) -> Result<Output, OpError> {
    match cmd {
        PartnerCommand::Create(args) => {
            let kind = match args.kind {
                KindArg::Broker => PartnerKind::Broker,
                KindArg::HrPlatform => PartnerKind::HrPlatform,
            };
            let admin = args.benefits_admin.map(|a| match a {
                AdminArg::Partner => BenefitsAdmin::Partner,
                AdminArg::Service => BenefitsAdmin::Service,
            });
            let partner = svc
                .create_partner(&args.name, kind, admin)
                .await
                .map_err(|e| service_error(e, &String::new))?;
            Ok(render::created_partner(&partner))
        }
        PartnerCommand::EnableLive { id } | PartnerCommand::DisableLive { id } => {
            let enable = matches!(cmd, PartnerCommand::EnableLive { .. });
            let id = partner_id(id)?;
            svc.set_live(&id, enable)
                .await
                .map_err(|e| service_error(e, &no_partner(&id)))?;
            let partner = svc
                .partner(&id)
                .await
                .map_err(|e| service_error(e, &no_partner(&id)))?;
            Ok(render::live_changed(&partner))
        }
        PartnerCommand::List => {
            let partners = svc
                .partners()
                .await
                .map_err(|e| service_error(e, &String::new))?;
            Ok(render::partner_list(&partners))
        }
        PartnerCommand::Show { id } => {
            let id = partner_id(id)?;
            let partner = svc
                .partner(&id)
                .await
                .map_err(|e| service_error(e, &no_partner(&id)))?;
            Ok(render::partner(&partner))
        }
    }
}

async fn run_key(svc: &Partners, cmd: &KeyCommand) -> Result<Output, OpError> {
    match cmd {
        KeyCommand::Create {
            partner,
            mode,
            rotate,
        } => {
            let id = partner_id(partner)?;
            let mode = match mode {
                ModeArg::Test => Mode::Test,
                ModeArg::Live => Mode::Live,
            };
            let minted = svc
                .create_key(&id, mode, *rotate)
                .await
                .map_err(|e| match service_error(e, &no_partner(&id)) {
                    c if c.message == Conflict::LiveKeyActive.to_string() => OpError::new(
                        "conflict",
                        format!(
                            "{id} already has an active live key; pass --rotate to revoke it and create a new one"
                        ),
                    ),
                    other => other,
                })?;
            Ok(render::minted(&minted))
        }
        KeyCommand::List { partner } => {
            let id = partner_id(partner)?;
            let keys = svc
                .list_keys(&id)
                .await
                .map_err(|e| service_error(e, &no_partner(&id)))?;
            Ok(render::key_list(&keys))
        }
        KeyCommand::Revoke { id } => {
            let id = key_id(id)?;
            svc.revoke_key(&id)
                .await
                .map_err(|e| service_error(e, &no_key(&id)))?;
            Ok(render::revoked(&id))
        }
        KeyCommand::Show { id } => {
            let id = key_id(id)?;
            let key = svc.show_key(&id).await.map_err(|e| {
                let e = service_error(e, &no_key(&id));
                match e.code {
                    "conflict" => {
                        OpError::new("conflict", format!("cannot show {id}: {}", e.message))
                    }
                    _ => e,
                }
            })?;
            Ok(render::shown(&id, &key))
        }
    }
}
