//! The overview with its go-live checklist, the mode switch, API keys,
//! groups, the team, the audit log and the embed origins. Each handler
//! calls the console once and renders; a refusal (a viewer acting, live
//! mode not enabled, two-factor missing) is shown on the page itself.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, get, post, web};
use askama::Template;
use domain::api_key::ApiKey;
use domain::ids::{KeyId, UserId};
use domain::mode::Mode;
use domain::page::{PageRequest, encode_cursor};
use domain::partner::readiness::Step;
use domain::partner_user::Role;
use domain::services::ServiceError;
use domain::services::partner_portal::is_live_key_active;
use serde::Deserialize;

use super::{Frame, Member, PartnerState, refusal, render, see_other, when};
use crate::errors::PageError;
use crate::forms::CsrfForm;

/// Rows per page of the lists.
const PAGE: u32 = 50;

#[derive(Deserialize)]
pub(super) struct CursorQuery {
    pub(super) cursor: Option<String>,
}

/// A page request from a `cursor` of list `list`; a bad cursor starts
/// over.
pub(super) fn page_of(list: &str, cursor: Option<&str>) -> PageRequest {
    PageRequest::parse(list, Some(&PAGE.to_string()), cursor)
        .unwrap_or_else(|_| PageRequest::first(PAGE))
}

/// Where a POST that failed for a reason of the user's shows it.
pub(super) fn failed(e: ServiceError) -> Result<(StatusCode, String), PageError> {
    refusal(&e).ok_or_else(|| e.into())
}

#[derive(Template)]
#[template(path = "partner/overview.html")]
struct Overview {
    frame: Frame,
    partner_name: String,
    partner_id: String,
    user: String,
    role: &'static str,
    admin: bool,
    two_factor: bool,
    steps: Vec<Step>,
    done: usize,
}

/// The overview: the go-live checklist, derived from facts.
#[get("/overview")]
pub(super) async fn overview(
    state: web::Data<PartnerState>,
    member: Member,
) -> Result<HttpResponse, PageError> {
    let o = state.console.overview(&member.actor).await?;
    let page = Overview {
        frame: Frame::of(&member, "Overview", "/partner/overview"),
        partner_name: o.partner.name.clone(),
        partner_id: o.partner.id.to_string(),
        user: member.actor.user.email.clone(),
        role: member.actor.user.role.as_str(),
        admin: member.admin(),
        two_factor: member.actor.user.two_factor(),
        steps: o.go_live.steps().to_vec(),
        done: o.go_live.done(),
    };
    Ok(render(StatusCode::OK, &page))
}

#[derive(Deserialize)]
struct ModeForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    mode: String,
    #[serde(default)]
    back: String,
}

/// Switches the mode the pages show, back to the page it came from.
#[post("/mode")]
pub(super) async fn set_mode(
    state: web::Data<PartnerState>,
    member: Member,
    form: web::Form<ModeForm>,
) -> Result<HttpResponse, PageError> {
    // Only a page of the portal, never elsewhere.
    let back = if form.back.starts_with("/partner/") && !form.back.contains("//") {
        form.back.clone()
    } else {
        "/partner/overview".to_owned()
    };
    member.check(&form.csrf, &back)?;
    let mode = Mode::parse(&form.mode).unwrap_or(Mode::Test);
    state.console.users().set_mode(&member.cookie, mode).await?;
    Ok(see_other(&back))
}

struct KeyRow {
    id: String,
    prefix: String,
    mode: &'static str,
    created: String,
    state: String,
    active: bool,
}

#[derive(Template)]
#[template(path = "partner/keys.html")]
struct Keys {
    frame: Frame,
    admin: bool,
    keys: Vec<KeyRow>,
    live_enabled: bool,
    live_active: bool,
    /// (heading, key, note).
    shown: Option<(String, String, String)>,
}

async fn keys_page(
    state: &PartnerState,
    member: &Member,
    status: StatusCode,
    shown: Option<(String, String, String)>,
    error: Option<String>,
) -> Result<HttpResponse, PageError> {
    let records = state.console.keys(&member.actor).await?;
    let partner = state.console.partner(&member.actor).await?;
    let live_active = records
        .iter()
        .any(|k| k.mode == Mode::Live && k.is_active());
    let rows = records
        .into_iter()
        .map(|k| KeyRow {
            id: k.id.to_string(),
            active: k.is_active(),
            state: k
                .revoked_at
                .map_or_else(|| "active".to_owned(), |t| format!("revoked {}", when(t))),
            prefix: k.prefix,
            mode: k.mode.as_str(),
            created: when(k.created_at),
        })
        .collect();
    let page = Keys {
        frame: Frame::of(member, "API keys", "/partner/keys").error(error),
        admin: member.admin(),
        keys: rows,
        live_enabled: partner.live_enabled,
        live_active,
        shown,
    };
    Ok(render(status, &page))
}

/// The partner's keys.
#[get("/keys")]
pub(super) async fn keys(
    state: web::Data<PartnerState>,
    member: Member,
) -> Result<HttpResponse, PageError> {
    keys_page(&state, &member, StatusCode::OK, None, None).await
}

fn shown(heading: &str, key: &ApiKey, note: &str) -> Option<(String, String, String)> {
    Some((heading.to_owned(), key.expose().to_owned(), note.to_owned()))
}

/// Shows the active sandbox key again.
#[post("/keys/sandbox")]
pub(super) async fn show_sandbox_key(
    state: web::Data<PartnerState>,
    member: Member,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    member.check(&form.csrf, "/partner/keys")?;
    match state.console.show_sandbox_key(&member.actor).await {
        Ok(key) => {
            let note = "Use it for test mode only. It can be shown again here.";
            let s = shown("Your sandbox key", &key, note);
            keys_page(&state, &member, StatusCode::OK, s, None).await
        }
        Err(e) => {
            let (status, text) = failed(e)?;
            keys_page(&state, &member, status, None, Some(text)).await
        }
    }
}

#[derive(Deserialize)]
struct LiveForm {
    #[serde(default)]
    csrf: String,
    replace: Option<String>,
}

/// Mints the live key (replacing the active one when confirmed).
#[post("/keys/live")]
pub(super) async fn mint_live_key(
    state: web::Data<PartnerState>,
    member: Member,
    form: web::Form<LiveForm>,
) -> Result<HttpResponse, PageError> {
    member.check(&form.csrf, "/partner/keys")?;
    let replace = form.replace.as_deref() == Some("true");
    match state.console.mint_live_key(&member.actor, replace).await {
        Ok(minted) => {
            let note = "This is the only time the live key is shown: store it in your secrets manager now.";
            let s = shown("Your live key", &minted.key, note);
            keys_page(&state, &member, StatusCode::OK, s, None).await
        }
        Err(e) if is_live_key_active(&e) => {
            let text =
                "A live key is already active. Tick the box to revoke it and mint a new one.";
            keys_page(
                &state,
                &member,
                StatusCode::CONFLICT,
                None,
                Some(text.to_owned()),
            )
            .await
        }
        Err(e) => {
            let (status, text) = failed(e)?;
            keys_page(&state, &member, status, None, Some(text)).await
        }
    }
}

/// Revokes a key.
#[post("/keys/{id}/revoke")]
pub(super) async fn revoke_key(
    state: web::Data<PartnerState>,
    member: Member,
    path: web::Path<String>,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    member.check(&form.csrf, "/partner/keys")?;
    let id = KeyId::parse(&path).map_err(|_| PageError::NotFound)?;
    match state.console.revoke_key(&member.actor, &id).await {
        Ok(()) => Ok(see_other("/partner/keys")),
        Err(e) => {
            let (status, text) = failed(e)?;
            keys_page(&state, &member, status, None, Some(text)).await
        }
    }
}

#[derive(Template)]
#[template(path = "partner/groups.html")]
struct Groups {
    frame: Frame,
    /// (company, id, status, company state, employees, onboarding, created).
    groups: Vec<(String, String, String, String, u32, String, String)>,
    next: Option<String>,
}

/// The groups of the mode shown.
#[get("/groups")]
pub(super) async fn groups(
    state: web::Data<PartnerState>,
    member: Member,
    query: web::Query<CursorQuery>,
) -> Result<HttpResponse, PageError> {
    let page = page_of("groups", query.cursor.as_deref());
    let found = state.console.groups(&member.actor, &page).await?;
    let page = Groups {
        frame: Frame::of(&member, "Groups", "/partner/groups"),
        groups: found
            .items
            .into_iter()
            .map(|row| {
                let g = row.group;
                let onboarding = row.enrollment.map_or_else(
                    || "not enrolled".to_owned(),
                    |(status, p)| {
                        format!(
                            "{} · {}% ({} required steps left)",
                            status.as_str(),
                            p.percent_complete,
                            p.blocking_remaining
                        )
                    },
                );
                (
                    g.company_name,
                    g.id.to_string(),
                    g.status.as_str().to_owned(),
                    g.company_state
                        .map_or("not provisioned", |s| s.as_str())
                        .to_owned(),
                    g.census_member_count,
                    onboarding,
                    when(g.created_at),
                )
            })
            .collect(),
        next: found.next.map(|c| encode_cursor("groups", &c)),
    };
    Ok(render(StatusCode::OK, &page))
}

#[derive(Template)]
#[template(path = "partner/team.html")]
struct Team {
    frame: Frame,
    admin: bool,
    me: String,
    /// (id, email, role, password, two-factor).
    users: Vec<(String, String, &'static str, &'static str, &'static str)>,
    /// (email, link).
    link: Option<(String, String)>,
}

async fn team_page(
    state: &PartnerState,
    member: &Member,
    status: StatusCode,
    link: Option<(String, String)>,
    error: Option<String>,
) -> Result<HttpResponse, PageError> {
    let users = state
        .console
        .users()
        .users(&member.actor.user.partner)
        .await?;
    let page = Team {
        frame: Frame::of(member, "Team", "/partner/team").error(error),
        admin: member.admin(),
        me: member.actor.user.email.clone(),
        users: users
            .into_iter()
            .map(|u| {
                (
                    u.id.to_string(),
                    u.email.clone(),
                    u.role.as_str(),
                    if u.password_hash.is_some() {
                        "set"
                    } else {
                        "invited"
                    },
                    if u.two_factor() { "on" } else { "off" },
                )
            })
            .collect(),
        link,
    };
    Ok(render(status, &page))
}

/// The team.
#[get("/team")]
pub(super) async fn team(
    state: web::Data<PartnerState>,
    member: Member,
) -> Result<HttpResponse, PageError> {
    team_page(&state, &member, StatusCode::OK, None, None).await
}

#[derive(Deserialize)]
struct AddUserForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    role: String,
}

/// Adds a user; shows their set-password link once.
#[post("/team")]
pub(super) async fn add_user(
    state: web::Data<PartnerState>,
    member: Member,
    form: web::Form<AddUserForm>,
) -> Result<HttpResponse, PageError> {
    member.check(&form.csrf, "/partner/team")?;
    let role = Role::parse(&form.role).unwrap_or(Role::Viewer);
    let added = state
        .console
        .users()
        .add_user(
            &member.actor.user.partner,
            &form.email,
            role,
            Some(&member.actor),
        )
        .await;
    match added {
        Ok(a) => {
            let link = Some((a.user.email, a.set_password_url));
            team_page(&state, &member, StatusCode::OK, link, None).await
        }
        Err(e) => {
            let (status, text) = failed(e)?;
            team_page(&state, &member, status, None, Some(text)).await
        }
    }
}

/// Removes a user.
#[post("/team/{id}/remove")]
pub(super) async fn remove_user(
    state: web::Data<PartnerState>,
    member: Member,
    path: web::Path<String>,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    member.check(&form.csrf, "/partner/team")?;
    let id = UserId::parse(&path).map_err(|_| PageError::NotFound)?;
    let removed = state
        .console
        .users()
        .remove_user(&member.actor.user.partner, id.as_str(), Some(&member.actor))
        .await;
    match removed {
        Ok(_) => Ok(see_other("/partner/team")),
        Err(e) => {
            let (status, text) = failed(e)?;
            team_page(&state, &member, status, None, Some(text)).await
        }
    }
}

#[derive(Template)]
#[template(path = "partner/audit.html")]
struct Audit {
    frame: Frame,
    /// (when, user, address, action, target).
    entries: Vec<(String, String, String, &'static str, String)>,
    next: Option<String>,
}

/// The audit log.
#[get("/audit")]
pub(super) async fn audit(
    state: web::Data<PartnerState>,
    member: Member,
    query: web::Query<CursorQuery>,
) -> Result<HttpResponse, PageError> {
    let page = page_of("audit", query.cursor.as_deref());
    let found = state
        .console
        .users()
        .audit_log(&member.actor, &page)
        .await?;
    let page = Audit {
        frame: Frame::of(&member, "Audit log", "/partner/audit"),
        entries: found
            .items
            .into_iter()
            .map(|e| {
                (
                    domain::ports::rfc3339(e.at_ms.div_euclid(1000)),
                    e.user,
                    e.ip.unwrap_or_default(),
                    e.action.as_str(),
                    e.target,
                )
            })
            .collect(),
        next: found.next.map(|c| encode_cursor("audit", &c)),
    };
    Ok(render(StatusCode::OK, &page))
}

#[derive(Template)]
#[template(path = "partner/embed_origins.html")]
struct EmbedOrigins {
    frame: Frame,
    admin: bool,
    origins: Vec<String>,
    text: String,
}

/// The embed origins.
#[get("/embed-origins")]
pub(super) async fn embed_origins(
    state: web::Data<PartnerState>,
    member: Member,
) -> Result<HttpResponse, PageError> {
    let partner = state.console.partner(&member.actor).await?;
    let page = EmbedOrigins {
        frame: Frame::of(&member, "Embed origins", "/partner/embed-origins"),
        admin: member.admin(),
        text: partner.embed_origins.join("\n"),
        origins: partner.embed_origins,
    };
    Ok(render(StatusCode::OK, &page))
}

#[derive(Deserialize)]
struct OriginsForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    origins: String,
}

/// Replaces the embed origins.
#[post("/embed-origins")]
pub(super) async fn save_embed_origins(
    state: web::Data<PartnerState>,
    member: Member,
    form: web::Form<OriginsForm>,
) -> Result<HttpResponse, PageError> {
    member.check(&form.csrf, "/partner/embed-origins")?;
    let origins: Vec<String> = form.origins.split_whitespace().map(str::to_owned).collect();
    match state
        .console
        .set_embed_origins(&member.actor, &origins)
        .await
    {
        Ok(_) => Ok(see_other("/partner/embed-origins")),
        Err(e) => {
            let (status, text) = failed(e)?;
            let partner = state.console.partner(&member.actor).await?;
            let page = EmbedOrigins {
                frame: Frame::of(&member, "Embed origins", "/partner/embed-origins")
                    .error(Some(text)),
                admin: member.admin(),
                text: form.origins.clone(),
                origins: partner.embed_origins,
            };
            Ok(render(status, &page))
        }
    }
}
