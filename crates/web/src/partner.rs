//! The partner portal under `/partner/` (partner-portal §1 and §2): sign-in
//! with TOTP two-factor, the go-live overview, API keys, webhooks and
//! their delivery log, events, groups, the team and the audit log, and
//! the embed origins.
//!
//! It is the employer portal's machinery with another cookie
//! ([`crate::session::PARTNER`], `Path=/partner`): the same password,
//! lockout and session rules (in `domain`), the same CSRF check, security
//! headers, stylesheet and form templates. Every page handler takes a
//! [`Member`] — the signed-in user with the second factor done — and
//! calls the `domain` console, which decides what a viewer or an admin
//! without two-factor may do and writes the audit log.

mod auth;
mod pages;
mod webhooks;

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::StatusCode;
use actix_web::http::header::LOCATION;
use actix_web::{FromRequest, HttpRequest, HttpResponse, web};
use domain::mode::Mode;
use domain::services::ServiceError;
use domain::services::partner_portal::{Actor, Console};

use crate::errors::PageError;
use crate::session::{PARTNER, csrf_ok};
use crate::view::{Chrome, sentence};

/// What the partner portal's pages share.
#[derive(Clone)]
pub struct PartnerState {
    /// Users, sessions and every action of the pages.
    pub console: Console,
    /// Cookies carry `Secure` (`public_base_url` is https).
    pub secure_cookies: bool,
}

/// The layout's part of every page: chrome, the mode shown, the page to
/// come back to after switching mode, and a refusal to show.
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    pub(crate) chrome: Chrome,
    pub(crate) mode: &'static str,
    pub(crate) back: String,
    pub(crate) error: Option<String>,
}

impl Frame {
    /// The frame of a page of a signed-in member.
    pub(crate) fn of(member: &Member, title: &str, back: &str) -> Self {
        Self {
            chrome: Chrome::new(title, &member.csrf, true),
            mode: member.actor.mode.as_str(),
            back: back.to_owned(),
            error: None,
        }
    }

    /// The frame of a page shown before signing in.
    pub(crate) fn visitor(title: &str, csrf: &str) -> Self {
        Self {
            chrome: Chrome::new(title, csrf, false),
            mode: Mode::Test.as_str(),
            back: String::new(),
            error: None,
        }
    }

    /// With a flash line.
    pub(crate) fn flash(mut self, text: Option<String>) -> Self {
        self.chrome.flash = text;
        self
    }

    /// With a refusal.
    pub(crate) fn error(mut self, text: Option<String>) -> Self {
        self.error = text;
        self
    }
}

/// The signed-in member of a request: their actor (user, source address,
/// mode shown), the session's CSRF token and its cookie. Without a
/// signed-in session the browser goes to sign-in; with the second factor
/// still owed, to the code page.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub(crate) actor: Actor,
    pub(crate) csrf: String,
    pub(crate) cookie: String,
}

impl Member {
    /// Refuses a form whose CSRF token is not the session's: back to
    /// `back`, nothing done.
    pub(crate) fn check(&self, sent: &str, back: &str) -> Result<(), PageError> {
        if csrf_ok(sent, &self.csrf) {
            Ok(())
        } else {
            Err(PageError::Redirect(back.to_owned()))
        }
    }

    pub(crate) fn admin(&self) -> bool {
        self.actor.user.is_admin()
    }
}

impl FromRequest for Member {
    type Error = PageError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = req.app_data::<web::Data<PartnerState>>().cloned();
        let cookie = PARTNER.read(req);
        let ip = source(req);
        Box::pin(async move {
            let state = state.ok_or(PageError::NotFound)?;
            let to_sign_in = || PageError::Redirect("/partner/sign-in".to_owned());
            let cookie = cookie.ok_or_else(to_sign_in)?;
            let session = state
                .console
                .users()
                .session(Some(&cookie))
                .await?
                .ok_or_else(to_sign_in)?;
            let user = session.user.ok_or_else(to_sign_in)?;
            if session.second_factor_pending {
                return Err(PageError::Redirect("/partner/two-factor".to_owned()));
            }
            Ok(Self {
                actor: Actor {
                    user,
                    ip,
                    mode: session.mode,
                },
                csrf: session.csrf,
                cookie,
            })
        })
    }
}

/// The request's source address.
pub(crate) fn source(req: &HttpRequest) -> Option<String> {
    req.peer_addr().map(|a| a.ip().to_string())
}

/// A 303 to `to`.
pub(crate) fn see_other(to: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((LOCATION, to.to_owned()))
        .finish()
}

/// What a page says when the console refuses an action, with its status;
/// `None` for a failure that is not the user's (the error page).
pub(crate) fn refusal(e: &ServiceError) -> Option<(StatusCode, String)> {
    use domain::error::Code;
    let status = match e.code() {
        Code::Unauthorized => StatusCode::UNAUTHORIZED,
        Code::Forbidden | Code::LiveModeDisabled => StatusCode::FORBIDDEN,
        Code::NotFound => StatusCode::NOT_FOUND,
        Code::Conflict => StatusCode::CONFLICT,
        Code::RateLimited => StatusCode::TOO_MANY_REQUESTS,
        _ => StatusCode::BAD_REQUEST,
    };
    match e {
        ServiceError::Unavailable(_) | ServiceError::Internal(_) => None,
        ServiceError::Invalid(fields) => Some((
            StatusCode::UNPROCESSABLE_ENTITY,
            fields
                .iter()
                .map(|f| format!("{}: {}.", f.field.replace('_', " "), f.message))
                .collect::<Vec<_>>()
                .join(" "),
        )),
        _ => Some((status, sentence(&e.message()))),
    }
}

/// Renders a page with its status.
pub(crate) use crate::view::html as render;

/// Unix seconds as `2026-11-29 09:07 UTC`.
pub(crate) fn when(unix_secs: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(unix_secs).map_or_else(
        |_| String::new(),
        |t| {
            format!(
                "{}-{:02}-{:02} {:02}:{:02} UTC",
                t.year(),
                u8::from(t.month()),
                t.day(),
                t.hour(),
                t.minute()
            )
        },
    )
}

async fn stylesheet() -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((
            actix_web::http::header::CONTENT_TYPE,
            "text/css; charset=utf-8",
        ))
        .body(crate::STYLESHEET)
}

async fn home() -> HttpResponse {
    see_other("/partner/overview")
}

async fn not_found() -> Result<HttpResponse, PageError> {
    Err(PageError::NotFound)
}

/// Registers the partner portal under `/partner`.
pub fn configure(state: PartnerState) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        cfg.service(
            web::scope("/partner")
                .app_data(web::Data::new(state))
                .wrap(crate::security_headers())
                .route("", web::get().to(home))
                .route("/", web::get().to(home))
                .route("/assets/portal.css", web::get().to(stylesheet))
                .service(auth::sign_in_page)
                .service(auth::sign_in)
                .service(auth::two_factor_page)
                .service(auth::two_factor)
                .service(auth::set_password_page)
                .service(auth::set_password)
                .service(auth::sign_out)
                .service(auth::security_page)
                .service(auth::enrol)
                .service(pages::overview)
                .service(pages::set_mode)
                .service(pages::keys)
                .service(pages::show_sandbox_key)
                .service(pages::mint_live_key)
                .service(pages::revoke_key)
                .service(pages::groups)
                .service(pages::team)
                .service(pages::add_user)
                .service(pages::remove_user)
                .service(pages::audit)
                .service(pages::embed_origins)
                .service(pages::save_embed_origins)
                .service(webhooks::index)
                .service(webhooks::save_endpoint)
                .service(webhooks::remove_endpoint)
                .service(webhooks::ping)
                .service(webhooks::rotate)
                .service(webhooks::replay)
                .service(webhooks::resend)
                .service(webhooks::events)
                .service(webhooks::event)
                .default_service(web::to(not_found)),
        );
    }
}
