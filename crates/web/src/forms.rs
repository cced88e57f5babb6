//! The forms both portals post: every field defaults to empty, so a
//! missing field is judged by the page (CSRF first), never refused by the
//! extractor with a bare 400.

use actix_web::HttpResponse;
use actix_web::http::header::RETRY_AFTER;
use serde::Deserialize;

/// A form that carries only its CSRF token (sign out, a button).
#[derive(Deserialize)]
pub(crate) struct CsrfForm {
    #[serde(default)]
    pub(crate) csrf: String,
}

/// The sign-in form.
#[derive(Deserialize)]
pub(crate) struct SignInForm {
    #[serde(default)]
    pub(crate) csrf: String,
    #[serde(default)]
    pub(crate) email: String,
    #[serde(default)]
    pub(crate) password: String,
}

/// The set-password form of a link.
#[derive(Deserialize)]
pub(crate) struct SetPasswordForm {
    #[serde(default)]
    pub(crate) csrf: String,
    #[serde(default)]
    pub(crate) token: String,
    #[serde(default)]
    pub(crate) password: String,
    #[serde(default)]
    pub(crate) password_confirmation: String,
}

/// `res` with `Retry-After: secs` (the failed-auth limit's answer).
pub(crate) fn retry_after(mut res: HttpResponse, secs: u32) -> HttpResponse {
    if let Ok(v) = secs.to_string().parse() {
        res.headers_mut().insert(RETRY_AFTER, v);
    }
    res
}
