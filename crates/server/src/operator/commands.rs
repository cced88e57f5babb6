//! What each operator command does, over the composed [`Services`], and
//! the answer it prints.

use domain::error::Code;
use domain::ids::PartnerId;
use domain::partner::{BenefitsAdmin, Partner};
use domain::services::ServiceError;
use domain::services::onboarding::Review;
use domain::services::partners::Partners;
use domain::store::Conflict;

use crate::compose::Services;
use crate::operator::args::{
    AgreementArg, CompanyCommand, GroupCommand, KeyCommand, PartnerCommand, QuoteCommand,
    UserCommand,
};
use crate::operator::render::{self, Output};
use crate::operator::{
    OpError, claims, group_id, key_id, no_key, no_partner, partner_id, quote_id, readiness,
    refused, service_error,
};

/// A failed call about partner `id` as the operator reads it.
fn of_partner(id: &PartnerId) -> impl Fn(ServiceError) -> OpError {
    let missing = no_partner(id);
    move |e| service_error(e, &missing)
}

/// Partner `id` as it now stands.
async fn shown(svc: &Partners, id: &PartnerId) -> Result<Partner, OpError> {
    svc.partner(id).await.map_err(of_partner(id))
}

pub(crate) async fn partner(ctx: &Services, cmd: &PartnerCommand) -> Result<Output, OpError> {
    let svc = &ctx.partners();
    match cmd {
        PartnerCommand::Create(args) => {
            let admin = args.benefits_admin.map(BenefitsAdmin::from);
            let partner = svc
                .create_partner(&args.name, args.kind.into(), admin)
                .await
                .map_err(|e| service_error(e, &String::new))?;
            Ok(render::created_partner(&partner))
        }
        PartnerCommand::EnableLive { id, force } => {
            let id = partner_id(id)?;
            let readiness = readiness(ctx, &id).await?;
            let refusal = readiness.refusal();
            if let Some(reason) = refusal.as_ref().filter(|_| !force) {
                return Err(OpError::new(Code::Conflict, reason.clone()));
            }
            svc.set_live(&id, true).await.map_err(of_partner(&id))?;
            let partner = shown(svc, &id).await?;
            let forced: Vec<&str> = readiness.missing().iter().map(|i| i.name).collect();
            Ok(render::live_enabled(&partner, &forced))
        }
        PartnerCommand::DisableLive { id } => {
            let id = partner_id(id)?;
            svc.set_live(&id, false).await.map_err(of_partner(&id))?;
            Ok(render::live_changed(&shown(svc, &id).await?))
        }
        PartnerCommand::EmbedOrigins { id, origins, none } => {
            let id = partner_id(id)?;
            if !origins.is_empty() || *none {
                svc.set_embed_origins(&id, origins)
                    .await
                    .map_err(of_partner(&id))?;
            }
            Ok(render::embed_origins(&shown(svc, &id).await?))
        }
        PartnerCommand::User(cmd) => user(ctx, cmd).await,
        PartnerCommand::Agreements { id, commercial } => {
            let id = partner_id(id)?;
            let done = matches!(commercial, AgreementArg::Done);
            svc.set_commercial(&id, done)
                .await
                .map_err(of_partner(&id))?;
            Ok(render::agreements(&shown(svc, &id).await?))
        }
        PartnerCommand::Readiness { id } => {
            let id = partner_id(id)?;
            Ok(render::readiness(&readiness(ctx, &id).await?))
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
            Ok(render::partner(&shown(svc, &id).await?))
        }
    }
}

async fn user(ctx: &Services, cmd: &UserCommand) -> Result<Output, OpError> {
    // No one signs in here: the failed-auth limit plays no part.
    let users = ctx.partner_portal(domain::rate_limit::Policy::failed_auth(10));
    match cmd {
        UserCommand::Add {
            partner,
            email,
            role,
        } => {
            let id = partner_id(partner)?;
            let added = users
                .add_user(&id, email, (*role).into(), None)
                .await
                .map_err(of_partner(&id))?;
            Ok(render::user_added(&added))
        }
        UserCommand::List { partner } => {
            let id = partner_id(partner)?;
            shown(&ctx.partners(), &id).await?;
            let list = users.users(&id).await.map_err(of_partner(&id))?;
            Ok(render::user_list(&list))
        }
        UserCommand::Remove { partner, user } => {
            let id = partner_id(partner)?;
            let missing = || format!("no such user {user} of partner {id}");
            let removed = users
                .remove_user(&id, user, None)
                .await
                .map_err(|e| service_error(e, &missing))?;
            Ok(render::user_removed(&removed))
        }
    }
}

pub(crate) async fn key(svc: &Partners, cmd: &KeyCommand) -> Result<Output, OpError> {
    match cmd {
        KeyCommand::Create {
            partner,
            mode,
            rotate,
        } => {
            let id = partner_id(partner)?;
            let minted = svc
                .create_key(&id, (*mode).into(), *rotate)
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
            let keys = svc.list_keys(&id).await.map_err(of_partner(&id))?;
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

pub(crate) async fn quote(ctx: &Services, cmd: &QuoteCommand) -> Result<Output, OpError> {
    match cmd {
        QuoteCommand::Finalize { id } => {
            let id = quote_id(id)?;
            let quote = ctx.quotes().finalize_any(&id).await.map_err(|e| {
                refused(service_error(e, &|| format!("no such quote {id}")), || {
                    format!("cannot finalize {id}")
                })
            })?;
            Ok(render::finalized(&quote))
        }
    }
}

pub(crate) async fn group(ctx: &Services, cmd: &GroupCommand) -> Result<Output, OpError> {
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
            let rows = claims::claims_csv(file)?;
            let n = ctx
                .accounts()
                .import(&id, &rows)
                .await
                .map_err(|e| service_error(e, &|| format!("no such group {id}")))?;
            Ok(render::claims_imported(&id, n))
        }
    }
}

pub(crate) async fn company(ctx: &Services, cmd: &CompanyCommand) -> Result<Output, OpError> {
    let onboarding = ctx.onboarding();
    match cmd {
        CompanyCommand::Verify { id } | CompanyCommand::Reject { id, .. } => {
            let id = group_id(id)?;
            let review = match cmd {
                CompanyCommand::Reject { reason, .. } => {
                    let reason = reason.trim();
                    if reason.is_empty() || reason.chars().count() > 500 {
                        return Err(OpError::new(
                            Code::InvalidRequest,
                            "--reason must be 1 to 500 characters",
                        ));
                    }
                    Review::Reject(reason.to_owned())
                }
                _ => Review::Verify,
            };
            let step = onboarding.review(&id, review).await.map_err(|e| {
                refused(
                    service_error(e, &|| format!("no enrollment for group {id}")),
                    || format!("cannot review {id}"),
                )
            })?;
            Ok(render::reviewed(&id, &step))
        }
        CompanyCommand::Deposits { id } => {
            let id = group_id(id)?;
            let amounts = onboarding
                .deposits(&id)
                .await
                .map_err(|e| service_error(e, &|| format!("no bank account for group {id}")))?;
            Ok(render::deposits(&id, amounts))
        }
    }
}
