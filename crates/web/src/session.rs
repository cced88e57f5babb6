//! The portal's session on the browser side: the cookie (HttpOnly,
//! SameSite=Lax, Path=/portal, Secure when `public_base_url` is https),
//! the [`Admin`] extractor that yields the signed-in account or sends the
//! browser to sign-in — so a handler cannot forget the check — and the
//! CSRF check every POST makes against its session's token.

use std::future::Future;
use std::pin::Pin;

use actix_web::cookie::{Cookie, SameSite, time::Duration};
use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest, HttpResponseBuilder, web};
use domain::portal::{PortalAccount, SESSION_MAX_SECS, digest};

use crate::PortalState;
use crate::errors::PageError;

/// The session cookie's name.
pub const COOKIE: &str = "portal_session";

/// A portal's session cookie: its name and the path it is sent to. Both
/// portals build, read and clear their cookies here, with the same
/// attributes.
#[derive(Debug, Clone, Copy)]
pub struct Jar {
    /// The cookie's name.
    pub name: &'static str,
    /// `Path`: the portal's prefix.
    pub path: &'static str,
}

/// The employer portal's cookie.
pub const EMPLOYER: Jar = Jar {
    name: COOKIE,
    path: "/portal",
};

/// The partner portal's cookie.
pub const PARTNER: Jar = Jar {
    name: "partner_session",
    path: "/partner",
};

impl Jar {
    /// The session id the browser sent, if any.
    #[must_use]
    pub fn read(&self, req: &HttpRequest) -> Option<String> {
        req.cookie(self.name).map(|c| c.value().to_owned())
    }

    /// The cookie holding `id` (HttpOnly, SameSite=Lax, `Secure` when
    /// `public_base_url` is https, gone after the absolute session time).
    #[must_use]
    pub fn cookie(&self, id: &str, secure: bool) -> Cookie<'static> {
        Cookie::build(self.name, id.to_owned())
            .path(self.path)
            .http_only(true)
            .same_site(SameSite::Lax)
            .secure(secure)
            .max_age(Duration::seconds(SESSION_MAX_SECS))
            .finish()
    }

    /// Sets the cookie to `id`.
    pub fn set(&self, res: &mut HttpResponseBuilder, id: &str, secure: bool) {
        res.cookie(self.cookie(id, secure));
    }

    /// Removes the cookie.
    pub fn clear(&self, res: &mut HttpResponseBuilder, secure: bool) {
        let mut c = self.cookie("", secure);
        c.make_removal();
        res.cookie(c);
    }
}

/// The session id the browser sent, if any.
#[must_use]
pub fn cookie_of(req: &HttpRequest) -> Option<String> {
    EMPLOYER.read(req)
}

/// The session cookie holding `id`.
#[must_use]
pub fn session_cookie(id: &str, secure: bool) -> Cookie<'static> {
    EMPLOYER.cookie(id, secure)
}

/// Sets the session cookie to `id`.
pub fn set_cookie(res: &mut HttpResponseBuilder, id: &str, secure: bool) {
    EMPLOYER.set(res, id, secure);
}

/// Removes the session cookie.
pub fn clear_cookie(res: &mut HttpResponseBuilder, secure: bool) {
    EMPLOYER.clear(res, secure);
}

/// What a page says of a form that came without its session's CSRF
/// token (an old tab, a session that ended): nothing was saved.
pub const EXPIRED: &str = "Your session expired. Please try again.";

/// Whether a form's `csrf` field is its session's token (compared in
/// constant time: both are hashed first).
#[must_use]
pub fn csrf_ok(sent: &str, expected: &str) -> bool {
    !expected.is_empty() && digest(sent) == digest(expected)
}

/// The signed-in admin of the request: their account and the session's
/// CSRF token. A request without a live signed-in session is sent to
/// sign-in.
#[derive(Debug, Clone)]
pub struct Admin {
    /// The account (its enrollment is the only company the pages show).
    pub account: PortalAccount,
    /// The session's CSRF token.
    pub csrf: String,
}

impl Admin {
    /// Refuses a POST whose CSRF token is not the session's: back to the
    /// page (`?expired=1`, which the page says), nothing done.
    ///
    /// # Errors
    /// [`PageError::Redirect`] to `back`.
    pub fn check(&self, sent: &str, back: &str) -> Result<(), PageError> {
        if csrf_ok(sent, &self.csrf) {
            Ok(())
        } else {
            let join = if back.contains('?') { '&' } else { '?' };
            Err(PageError::Redirect(format!("{back}{join}expired=1")))
        }
    }
}

impl FromRequest for Admin {
    type Error = PageError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = req.app_data::<web::Data<PortalState>>().cloned();
        let cookie = cookie_of(req);
        Box::pin(async move {
            let Some(state) = state else {
                return Err(PageError::NotFound);
            };
            match state.portal.session(cookie.as_deref()).await? {
                Some(s) => match s.account {
                    Some(account) => Ok(Self {
                        account,
                        csrf: s.csrf,
                    }),
                    None => Err(PageError::Redirect("/portal/sign-in".to_owned())),
                },
                None => Err(PageError::Redirect("/portal/sign-in".to_owned())),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_sessions_own_token_passes() {
        assert!(csrf_ok("abc", "abc"));
        assert!(!csrf_ok("abd", "abc"));
        assert!(!csrf_ok("", ""));
    }
}
