//! The HTML side of the service: the hosted employer portal under
//! `/portal/` (onboarding §3), the partner portal under `/partner/`
//! (partner-portal §1–§2, [`partner`]) and the offer page of an embed session
//! under `/embed/` (onboarding §5, [`offer`]), server-rendered from
//! askama templates with stylesheets embedded in the binary, readable
//! without JavaScript.
//!
//! Page handlers parse a form, call a `domain` service method and render
//! a template (post/redirect/get after every form). Security is
//! structural: every portal answer carries the security headers
//! ([`configure`]), the [`session::Admin`] extractor yields the signed-in
//! admin or sends the browser to sign-in, every POST checks its session's
//! CSRF token, and the company a page shows is the session account's,
//! never an id taken from the URL.

mod auth;
mod company;
mod errors;
mod forms;
pub mod offer;
pub mod partner;
pub mod passwords;
pub mod session;
mod steps;
mod view;

use actix_web::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use actix_web::middleware::DefaultHeaders;
use actix_web::{HttpResponse, web};
use domain::services::onboarding::Onboarding;
use domain::services::portal::Portal;

pub use partner::PartnerState;
pub use passwords::Argon2id;

/// The portal's stylesheet, embedded in the binary.
pub(crate) const STYLESHEET: &str = include_str!("../assets/portal.css");

/// What the portal's pages share.
#[derive(Clone)]
pub struct PortalState {
    /// Accounts, sessions and links.
    pub portal: Portal,
    /// The checklist.
    pub onboarding: Onboarding,
    /// Cookies carry `Secure` (`public_base_url` is https).
    pub secure_cookies: bool,
}

/// The headers of every portal answer: no framing, no caching, no
/// referrer (a set-password URL holds its token), no sniffing.
pub(crate) fn security_headers() -> DefaultHeaders {
    DefaultHeaders::new()
        .add((
            "Content-Security-Policy",
            "default-src 'self'; frame-ancestors 'none'",
        ))
        .add((CACHE_CONTROL, "no-store"))
        .add(("Referrer-Policy", "no-referrer"))
        .add(("X-Content-Type-Options", "nosniff"))
        .add(("X-Frame-Options", "DENY"))
}

async fn stylesheet() -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((CONTENT_TYPE, "text/css; charset=utf-8"))
        .body(STYLESHEET)
}

async fn home() -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header(("Location", "/portal/dashboard"))
        .finish()
}

async fn not_found() -> Result<HttpResponse, errors::PageError> {
    Err(errors::PageError::NotFound)
}

/// Registers the portal under `/portal`.
pub fn configure(state: PortalState) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        cfg.service(
            web::scope("/portal")
                .app_data(web::Data::new(state))
                .wrap(security_headers())
                .route("", web::get().to(home))
                .route("/", web::get().to(home))
                .route("/assets/portal.css", web::get().to(stylesheet))
                .service(auth::sign_in_page)
                .service(auth::sign_in)
                .service(auth::sign_out)
                .service(auth::forgot_page)
                .service(auth::forgot)
                .service(auth::set_password_page)
                .service(auth::set_password)
                .service(company::dashboard)
                .service(company::roster)
                .service(steps::show)
                .configure(steps::forms)
                .default_service(web::to(not_found)),
        );
    }
}
