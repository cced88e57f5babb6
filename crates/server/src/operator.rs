//! The operator commands of contract section 0: `partner …`, `key …`,
//! `quote finalize` and `group go-live`.
//!
//! Each command applies pending migrations first (so it works on a fresh
//! database), calls the domain's services ([`Partners`], [`Quotes`],
//! [`Enrollments`]), and prints either a human answer or, with `--json`,
//! one JSON object (an array for lists). Human answers are script-friendly
//! where it matters: `partner create` prints the `prt_` id alone, and
//! `key create` / `key show` print the key alone on the first line.
//! Failures are an [`OpError`]: a stable code and a one-line message.
//!
//! `partner enable-live` records step (b) of the go-live sequence
//! (specification, Authentication rule 7) and refuses, unless `--force`,
//! while `partner readiness` shows step (a) incomplete in test mode.

mod readiness;
mod render;

use std::sync::Arc;

use clap::{Args, Subcommand, ValueEnum};

use domain::account::ClaimsAggregate;
use domain::error::Code;
use domain::ids::{GroupId, IdError, KeyId, PartnerId, QuoteId};
use domain::mode::Mode;
use domain::partner::{BenefitsAdmin, PartnerKind};
use domain::services::ServiceError;
use domain::services::accounts::Accounts;
use domain::services::enrollments::Enrollments;
use domain::services::partners::Partners;
use domain::services::quotes::{QuotePorts, Quotes};
use domain::store::Conflict;
use pricing_core::RateCard;
use store_diesel::Stores;

use crate::config::Settings;
use crate::operator::readiness::Readiness;
use crate::operator::render::Output;
use crate::system::{self, Ports};
use crate::{compose, migrate};

/// `partner …`: partner accounts.
#[derive(Debug, Subcommand)]
pub enum PartnerCommand {
    /// Create a partner and print its `prt_` id.
    Create(CreatePartner),
    /// Enable live mode: records that the business associate and data
    /// processing agreements are executed. Refused while `partner
    /// readiness` shows the test-mode flow incomplete, unless `--force`.
    EnableLive {
        /// The partner (`prt_…`).
        #[arg(value_name = "PRT_ID")]
        id: String,
        /// Enable even though test mode has not yet seen every step of
        /// the core flow (group, census, quote, enrollment, webhook ping).
        #[arg(long)]
        force: bool,
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
    /// Go-live readiness: what test mode has seen of the core flow (a
    /// group, a census, a quote, an enrollment, a webhook endpoint that
    /// answered a signed ping) and whether the agreements are recorded.
    Readiness {
        /// The partner (`prt_…`).
        #[arg(value_name = "PRT_ID")]
        id: String,
    },
}

/// `quote …`: underwriting.
#[derive(Debug, Subcommand)]
pub enum QuoteCommand {
    /// Finalize an `in_review` quote of any partner and mode: it becomes
    /// `ready` and `quote.finalized` is sent.
    Finalize {
        /// The quote (`qt_…`).
        #[arg(value_name = "QT_ID")]
        id: String,
    },
}

/// `group …`: employer groups.
#[derive(Debug, Subcommand)]
pub enum GroupCommand {
    /// Take an enrolled group's provisioned company live (`sandbox` →
    /// `prod`): the group becomes `active` and `group.state_changed` is
    /// sent.
    GoLive {
        /// The group (`grp_…`).
        #[arg(value_name = "GRP_ID")]
        id: String,
    },
    /// Import aggregate claims into the group's ledger (account spend):
    /// a CSV with the header `month,category,amount_cents,member_count`,
    /// one row per month and category. A row for a month and category
    /// already imported replaces it. Every row is checked first; a bad row
    /// imports nothing.
    ImportClaims {
        /// The group (`grp_…`).
        #[arg(value_name = "GRP_ID")]
        id: String,
        /// The CSV file.
        #[arg(long, value_name = "FILE")]
        file: std::path::PathBuf,
    },
}

/// Reads a claims CSV: `month,category,amount_cents,member_count`.
fn claims_csv(path: &std::path::Path) -> Result<Vec<ClaimsAggregate>, OpError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        OpError::new(
            Code::InvalidRequest,
            format!("cannot read {}: {e}", path.display()),
        )
    })?;
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .collect();
    if header != ["month", "category", "amount_cents", "member_count"] {
        return Err(OpError::new(
            Code::InvalidRequest,
            "the header must be month,category,amount_cents,member_count",
        ));
    }
    lines
        .enumerate()
        .map(|(i, line)| {
            let cells: Vec<&str> = line.split(',').map(str::trim).collect();
            let bad = || {
                OpError::new(
                    Code::InvalidRequest,
                    format!(
                        "data row {i}: {line:?} is not month,category,amount_cents,member_count"
                    ),
                )
            };
            match cells.as_slice() {
                [month, category, amount, members] => Ok(ClaimsAggregate {
                    month: (*month).to_owned(),
                    category: (*category).to_owned(),
                    amount_cents: amount.parse().map_err(|_| bad())?,
                    member_count: members.parse().map_err(|_| bad())?,
                }),
                _ => Err(bad()),
            }
        })
        .collect()
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
    /// `invalid_request`, `not_found`, `conflict`, `not_configured`,
    /// `server_error`, or another code a service answers with.
    pub code: Code,
    /// What went wrong, lowercase, one line.
    pub message: String,
}

impl OpError {
    fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// Maps a service error onto its code and message; `missing` names what a
/// `NotFound` lacked, invalid fields are named as the command's flags, and
/// a failure of the service side keeps its cause (an operator reads it).
fn service_error(e: ServiceError, missing: &dyn Fn() -> String) -> OpError {
    let message = match &e {
        ServiceError::NotFound => missing(),
        ServiceError::Invalid(fields) => fields
            .iter()
            .map(|f| format!("--{} {}", f.field.replace('_', "-"), f.message))
            .collect::<Vec<_>>()
            .join("; "),
        ServiceError::Unavailable(cause) | ServiceError::Internal(cause) => {
            format!("{e}: {cause}")
        }
        _ => e.message(),
    };
    OpError::new(e.code(), message)
}

fn bad_id(e: &IdError, text: &str) -> OpError {
    OpError::new(Code::InvalidRequest, format!("{e}, got {text:?}"))
}

fn partner_id(text: &str) -> Result<PartnerId, OpError> {
    PartnerId::parse(text).map_err(|e| bad_id(&e, text))
}

fn key_id(text: &str) -> Result<KeyId, OpError> {
    KeyId::parse(text).map_err(|e| bad_id(&e, text))
}

fn quote_id(text: &str) -> Result<QuoteId, OpError> {
    QuoteId::parse(text).map_err(|e| bad_id(&e, text))
}

fn group_id(text: &str) -> Result<GroupId, OpError> {
    GroupId::parse(text).map_err(|e| bad_id(&e, text))
}

fn no_partner(id: &PartnerId) -> impl Fn() -> String {
    move || format!("no such partner {id}")
}

fn no_key(id: &KeyId) -> impl Fn() -> String {
    move || format!("no such key {id}")
}

/// Prefixes a conflict's message with what was refused.
fn refused(e: OpError, what: impl Fn() -> String) -> OpError {
    match e.code {
        Code::Conflict => OpError::new(Code::Conflict, format!("{}: {}", what(), e.message)),
        _ => e,
    }
}

/// Runs a `partner` command and prints its answer.
///
/// # Errors
/// [`OpError`] for a refused command; other errors for configuration,
/// migration or database failures.
pub fn partner(settings: &Settings, cmd: &PartnerCommand, json: bool) -> anyhow::Result<()> {
    let out = with_ports(settings, async |ctx| run_partner(ctx, cmd).await)?;
    out.print(json);
    Ok(())
}

/// Runs a `key` command and prints its answer.
///
/// # Errors
/// As [`partner`].
pub fn key(settings: &Settings, cmd: &KeyCommand, json: bool) -> anyhow::Result<()> {
    let out = with_ports(settings, async |ctx| run_key(&ctx.partners(), cmd).await)?;
    out.print(json);
    Ok(())
}

/// Runs a `quote` command and prints its answer.
///
/// # Errors
/// As [`partner`]; also a rate card that cannot be loaded.
pub fn quote(settings: &Settings, cmd: &QuoteCommand, json: bool) -> anyhow::Result<()> {
    let card = Arc::new(compose::rate_card(settings)?);
    let out = with_ports(settings, async |ctx| run_quote(ctx, card, cmd).await)?;
    out.print(json);
    Ok(())
}

/// Runs a `group` command and prints its answer.
///
/// # Errors
/// As [`partner`].
pub fn group(settings: &Settings, cmd: &GroupCommand, json: bool) -> anyhow::Result<()> {
    let out = with_ports(settings, async |ctx| run_group(ctx, cmd).await)?;
    out.print(json);
    Ok(())
}

/// What a command runs over: the storage ports and the others.
struct Ctx {
    stores: Stores,
    ports: Ports,
}

impl Ctx {
    fn partners(&self) -> Partners {
        system::partners(&self.stores, &self.ports)
    }

    fn quotes(&self, card: Arc<RateCard>) -> Quotes {
        let (s, p) = (&self.stores, &self.ports);
        Quotes::new(
            QuotePorts {
                groups: Arc::clone(&s.groups),
                census: Arc::clone(&s.census),
                quotes: Arc::clone(&s.quotes),
                jobs: Arc::clone(&s.jobs),
                clock: Arc::clone(&p.clock),
                entropy: Arc::clone(&p.entropy),
            },
            card,
        )
    }

    fn enrollments(&self) -> Enrollments {
        let (s, p) = (&self.stores, &self.ports);
        Enrollments::new(
            Arc::clone(&s.groups),
            Arc::clone(&s.quotes),
            Arc::clone(&p.clock),
            Arc::clone(&p.entropy),
        )
    }

    /// The partner and what it has done in test mode.
    async fn readiness(&self, id: &PartnerId) -> Result<Readiness, OpError> {
        let missing = no_partner(id);
        let test_mode = self
            .stores
            .partners
            .activity(id, Mode::Test)
            .await
            .map_err(|e| service_error(e.into(), &missing))?;
        let partner = self
            .partners()
            .partner(id)
            .await
            .map_err(|e| service_error(e, &missing))?;
        Ok(Readiness { partner, test_mode })
    }
}

/// Loads the ports, migrates, and runs `f` over them on a runtime of its
/// own.
fn with_ports<T>(
    settings: &Settings,
    f: impl AsyncFnOnce(&Ctx) -> Result<T, OpError>,
) -> anyhow::Result<T> {
    let ports = Ports::load(settings)?;
    migrate::runtime()?.block_on(async {
        migrate::apply_async(&settings.database).await?;
        let stores = system::open_stores(settings, 2)?;
        Ok(f(&Ctx { stores, ports }).await?)
    })
}

async fn run_partner(ctx: &Ctx, cmd: &PartnerCommand) -> Result<Output, OpError> {
    let svc = &ctx.partners();
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
        PartnerCommand::EnableLive { id, force } => {
            let id = partner_id(id)?;
            let readiness = ctx.readiness(&id).await?;
            let refusal = readiness.refusal();
            if let Some(reason) = refusal.as_ref().filter(|_| !force) {
                return Err(OpError::new(Code::Conflict, reason.clone()));
            }
            svc.set_live(&id, true)
                .await
                .map_err(|e| service_error(e, &no_partner(&id)))?;
            let partner = svc
                .partner(&id)
                .await
                .map_err(|e| service_error(e, &no_partner(&id)))?;
            let forced: Vec<&str> = readiness.missing().iter().map(|i| i.name).collect();
            Ok(render::live_enabled(&partner, &forced))
        }
        PartnerCommand::DisableLive { id } => {
            let id = partner_id(id)?;
            svc.set_live(&id, false)
                .await
                .map_err(|e| service_error(e, &no_partner(&id)))?;
            let partner = svc
                .partner(&id)
                .await
                .map_err(|e| service_error(e, &no_partner(&id)))?;
            Ok(render::live_changed(&partner))
        }
        PartnerCommand::Readiness { id } => {
            let id = partner_id(id)?;
            Ok(render::readiness(&ctx.readiness(&id).await?))
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
                .map_err(|e| match e {
                    ServiceError::Conflict(Conflict::LiveKeyActive) => OpError::new(
                        Code::Conflict,
                        format!(
                            "{id} already has an active live key; pass --rotate to revoke it and create a new one"
                        ),
                    ),
                    other => service_error(other, &no_partner(&id)),
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
                    Code::Conflict => {
                        OpError::new(Code::Conflict, format!("cannot show {id}: {}", e.message))
                    }
                    _ => e,
                }
            })?;
            Ok(render::shown(&id, &key))
        }
    }
}

async fn run_quote(ctx: &Ctx, card: Arc<RateCard>, cmd: &QuoteCommand) -> Result<Output, OpError> {
    match cmd {
        QuoteCommand::Finalize { id } => {
            let id = quote_id(id)?;
            let quote = ctx.quotes(card).finalize_any(&id).await.map_err(|e| {
                refused(service_error(e, &|| format!("no such quote {id}")), || {
                    format!("cannot finalize {id}")
                })
            })?;
            Ok(render::finalized(&quote))
        }
    }
}

async fn run_group(ctx: &Ctx, cmd: &GroupCommand) -> Result<Output, OpError> {
    match cmd {
        GroupCommand::GoLive { id } => {
            let id = group_id(id)?;
            let group = ctx.enrollments().go_live_any(&id).await.map_err(|e| {
                refused(service_error(e, &|| format!("no such group {id}")), || {
                    format!("cannot take {id} live")
                })
            })?;
            Ok(render::went_live(&group))
        }
        GroupCommand::ImportClaims { id, file } => {
            let id = group_id(id)?;
            let rows = claims_csv(file)?;
            let s = &ctx.stores;
            let accounts = Accounts::new(
                Arc::clone(&s.groups),
                Arc::clone(&s.census),
                Arc::clone(&s.quotes),
                Arc::clone(&s.claims),
                Arc::clone(&ctx.ports.clock),
            );
            let n = accounts
                .import(&id, &rows)
                .await
                .map_err(|e| service_error(e, &|| format!("no such group {id}")))?;
            Ok(render::claims_imported(&id, n))
        }
    }
}

#[cfg(test)]
mod tests;
