//! The HTML side of the service: the hosted employer portal under
//! `/portal/` (onboarding §3), server-rendered from askama templates with
//! one stylesheet embedded in the binary.
//!
//! Page handlers parse a form, call one `domain` service method and
//! render a template. Security is structural: [`headers`] adds the
//! security headers to every portal answer, the [`session`] extractors
//! yield the signed-in admin (or send the browser to sign-in) and check
//! every POST's CSRF token, and the company a page shows is the one of
//! the session's account, never an id taken from the URL.

pub mod passwords;

pub use passwords::Argon2id;
