//! The operator commands of contract section 0: `partner …`, `key …`,
//! `quote finalize` and `group go-live`.
//!
//! Each command applies pending migrations first (so it works on a fresh
//! database), calls the domain's services as the composition root builds
//! them ([`Services`]), and prints either a human answer or, with `--json`,
//! one JSON object (an array for lists). Human answers are script-friendly
//! where it matters: `partner create` prints the `prt_` id alone, and
//! `key create` / `key show` print the key alone on the first line.
//! Failures are an [`OpError`]: a stable code and a one-line message.
//!
//! `partner enable-live` records step (b) of the go-live sequence
//! (specification, Authentication rule 7) and refuses, unless `--force`,
//! while `partner readiness` shows step (a) incomplete in test mode.

mod args;
mod claims;
mod commands;
mod render;

use domain::error::Code;
use domain::ids::{GroupId, IdError, KeyId, PartnerId, QuoteId};
use domain::mode::Mode;
use domain::services::ServiceError;

use crate::compose::{self, Services, Shared};
use crate::config::Settings;
use crate::migrate;
pub use crate::operator::args::{
    AdminArg, CompanyCommand, CreatePartner, GroupCommand, KeyCommand, KindArg, ModeArg,
    PartnerCommand, QuoteCommand, RoleArg, UserCommand,
};
use crate::system::{self, Ports};
use domain::partner::readiness::Readiness;

/// Why an operator command failed: a stable machine-readable code (the
/// API's vocabulary where one applies) and a one-line message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct OpError {
    /// `invalid_request`, `not_found`, `conflict`, `not_configured` or
    /// `server_error`.
    pub code: Code,
    /// What went wrong, lowercase, one line.
    pub message: String,
}

impl OpError {
    pub(crate) fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// Maps a service error; `missing` names what a `NotFound` lacked.
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
    // `partner user add` prints a link under `public_base_url`.
    let mut shared = Shared::builtin()?;
    shared.public_base_url.clone_from(&settings.public_base_url);
    let out = with_services(settings, shared, async |svc| {
        commands::partner(svc, cmd).await
    })?;
    out.print(json);
    Ok(())
}

/// Runs a `key` command and prints its answer.
///
/// # Errors
/// As [`partner`].
pub fn key(settings: &Settings, cmd: &KeyCommand, json: bool) -> anyhow::Result<()> {
    let out = with_services(settings, Shared::builtin()?, async |svc| {
        commands::key(&svc.partners(), cmd).await
    })?;
    out.print(json);
    Ok(())
}

/// Runs a `quote` command and prints its answer.
///
/// # Errors
/// As [`partner`]; also a rate card that cannot be loaded.
pub fn quote(settings: &Settings, cmd: &QuoteCommand, json: bool) -> anyhow::Result<()> {
    let shared = Shared::of(compose::rate_card(settings)?)?;
    let out = with_services(settings, shared, async |svc| {
        commands::quote(svc, cmd).await
    })?;
    out.print(json);
    Ok(())
}

/// Runs a `group` command and prints its answer.
///
/// # Errors
/// As [`partner`].
pub fn group(settings: &Settings, cmd: &GroupCommand, json: bool) -> anyhow::Result<()> {
    let out = with_services(settings, Shared::builtin()?, async |svc| {
        commands::group(svc, cmd).await
    })?;
    out.print(json);
    Ok(())
}

/// Runs a `company` command and prints its answer.
///
/// # Errors
/// As [`partner`].
pub fn company(settings: &Settings, cmd: &CompanyCommand, json: bool) -> anyhow::Result<()> {
    let out = with_services(settings, Shared::builtin()?, async |svc| {
        commands::company(svc, cmd).await
    })?;
    out.print(json);
    Ok(())
}

/// Loads the ports, migrates, and runs `f` over the services the
/// composition root builds on them (with `shared`), on a runtime of its
/// own.
fn with_services<T>(
    settings: &Settings,
    shared: Shared,
    f: impl AsyncFnOnce(&Services) -> Result<T, OpError>,
) -> anyhow::Result<T> {
    let ports = Ports::load(settings)?;
    migrate::runtime()?.block_on(async {
        migrate::apply_async(&settings.database).await?;
        let stores = system::open_stores(settings, 2)?;
        Ok(f(&Services::new(&stores, &ports, &shared)).await?)
    })
}

/// The partner and what it has done in test mode.
async fn readiness(svc: &Services, id: &PartnerId) -> Result<Readiness, OpError> {
    let missing = no_partner(id);
    let test_mode = svc
        .stores()
        .partners
        .activity(id, Mode::Test)
        .await
        .map_err(|e| service_error(e.into(), &missing))?;
    let partner = svc
        .partners()
        .partner(id)
        .await
        .map_err(|e| service_error(e, &missing))?;
    Ok(Readiness { partner, test_mode })
}

#[cfg(test)]
mod tests;
