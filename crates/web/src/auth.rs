//! Signing in and out, forgotten passwords and setting a password from a
//! link. Each handler parses its form, checks the CSRF token against the
//! visitor's session, calls one portal service method and renders or
//! redirects (post/redirect/get).

use actix_web::http::StatusCode;
use actix_web::http::header::LOCATION;
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use askama::Template;
use domain::portal::LinkState;
use domain::services::portal::{NewPassword, Visit};
use domain::services::{PortalRefusal, ServiceError};
use serde::Deserialize;

use crate::PortalState;
use crate::errors::PageError;
use crate::forms::{CsrfForm, SetPasswordForm, SignInForm, retry_after};
use crate::session::{EXPIRED, clear_cookie, cookie_of, csrf_ok, session_cookie, set_cookie};
use crate::view::{Chrome, Field, Message, html, place_errors, sentence};

/// What a sign-in page says when a form came without its session.

#[derive(Template)]
#[template(path = "sign_in.html")]
struct SignIn {
    chrome: Chrome,
    email: String,
    error: Option<String>,
}

#[derive(Template)]
#[template(path = "forgot.html")]
struct Forgot {
    chrome: Chrome,
    sent: bool,
    email: String,
    error: Option<String>,
}

#[derive(Template)]
#[template(path = "set_password.html")]
struct SetPassword {
    chrome: Chrome,
    email: String,
    token: String,
    fields: Vec<Field>,
    error: Option<String>,
}

/// The answer with the visitor's new session cookie, when there is one.
fn answer(
    state: &PortalState,
    visit: &Visit,
    status: StatusCode,
    page: &impl Template,
) -> HttpResponse {
    let mut res = html(status, page);
    if let Some(id) = &visit.new_cookie {
        let _ = res.add_cookie(&session_cookie(id, state.secure_cookies));
    }
    res
}

fn redirect(to: &str) -> actix_web::HttpResponseBuilder {
    let mut res = HttpResponse::SeeOther();
    res.insert_header((LOCATION, to.to_owned()));
    res
}

fn source(req: &HttpRequest) -> Option<String> {
    req.peer_addr().map(|a| a.ip().to_string())
}

#[derive(Deserialize)]
struct Flags {
    signed_out: Option<String>,
}

/// The sign-in page.
#[get("/sign-in")]
pub(crate) async fn sign_in_page(
    state: web::Data<PortalState>,
    req: HttpRequest,
    flags: web::Query<Flags>,
) -> Result<HttpResponse, PageError> {
    let visit = state.portal.visit(cookie_of(&req).as_deref()).await?;
    if visit.account.is_some() {
        return Ok(redirect("/portal/dashboard").finish());
    }
    let mut chrome = Chrome::new("Sign in", &visit.csrf, false);
    chrome.flash = flags
        .signed_out
        .as_ref()
        .map(|_| "You are signed out.".to_owned());
    let page = SignIn {
        chrome,
        email: String::new(),
        error: None,
    };
    Ok(answer(&state, &visit, StatusCode::OK, &page))
}

/// Signs in: a new session id, then the dashboard.
#[post("/sign-in")]
pub(crate) async fn sign_in(
    state: web::Data<PortalState>,
    req: HttpRequest,
    form: web::Form<SignInForm>,
) -> Result<HttpResponse, PageError> {
    let cookie = cookie_of(&req);
    let visit = state.portal.visit(cookie.as_deref()).await?;
    let refused = |status: StatusCode, error: String| {
        let page = SignIn {
            chrome: Chrome::new("Sign in", &visit.csrf, false),
            email: form.email.clone(),
            error: Some(error),
        };
        answer(&state, &visit, status, &page)
    };
    if visit.new_cookie.is_some() || !csrf_ok(&form.csrf, &visit.csrf) {
        return Ok(refused(StatusCode::BAD_REQUEST, EXPIRED.to_owned()));
    }
    match state
        .portal
        .sign_in(
            cookie.as_deref(),
            &form.email,
            &form.password,
            source(&req).as_deref(),
        )
        .await
    {
        Ok(signed) => {
            let mut res = redirect("/portal/dashboard");
            set_cookie(&mut res, &signed.cookie, state.secure_cookies);
            Ok(res.finish())
        }
        Err(ServiceError::Portal(r @ PortalRefusal::SignInFailed)) => {
            Ok(refused(StatusCode::UNAUTHORIZED, sentence(&r.to_string())))
        }
        Err(ServiceError::Portal(PortalRefusal::TooManyAttempts { retry_after_secs })) => {
            let res = refused(
                StatusCode::TOO_MANY_REQUESTS,
                format!("Too many failed sign-ins. Try again in {retry_after_secs} seconds."),
            );
            Ok(retry_after(res, retry_after_secs))
        }
        Err(e) => Err(e.into()),
    }
}

/// Signs out: the session ends and its cookie is removed.
#[post("/sign-out")]
pub(crate) async fn sign_out(
    state: web::Data<PortalState>,
    req: HttpRequest,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    let cookie = cookie_of(&req);
    let session = state.portal.session(cookie.as_deref()).await?;
    match session {
        Some(s) if csrf_ok(&form.csrf, &s.csrf) => {
            state.portal.sign_out(cookie.as_deref()).await?;
            let mut res = redirect("/portal/sign-in?signed_out=1");
            clear_cookie(&mut res, state.secure_cookies);
            Ok(res.finish())
        }
        // A forged or stale form signs nobody out.
        Some(_) => Ok(redirect("/portal/dashboard").finish()),
        None => Ok(redirect("/portal/sign-in").finish()),
    }
}

#[derive(Deserialize)]
struct SentFlag {
    sent: Option<String>,
}

/// The forgot-password page (and, after the form, what happens next).
#[get("/forgot-password")]
pub(crate) async fn forgot_page(
    state: web::Data<PortalState>,
    req: HttpRequest,
    flags: web::Query<SentFlag>,
) -> Result<HttpResponse, PageError> {
    let visit = state.portal.visit(cookie_of(&req).as_deref()).await?;
    let page = Forgot {
        chrome: Chrome::new(
            "Forgot your password?",
            &visit.csrf,
            visit.account.is_some(),
        ),
        sent: flags.sent.is_some(),
        email: String::new(),
        error: None,
    };
    Ok(answer(&state, &visit, StatusCode::OK, &page))
}

#[derive(Deserialize)]
struct ForgotForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    email: String,
}

/// Emails a new link (live mode); the answer never tells whether the
/// address has an account.
#[post("/forgot-password")]
pub(crate) async fn forgot(
    state: web::Data<PortalState>,
    req: HttpRequest,
    form: web::Form<ForgotForm>,
) -> Result<HttpResponse, PageError> {
    let visit = state.portal.visit(cookie_of(&req).as_deref()).await?;
    let error = if visit.new_cookie.is_some() || !csrf_ok(&form.csrf, &visit.csrf) {
        Some(EXPIRED.to_owned())
    } else {
        domain::group::check_email("email", form.email.trim())
            .map(|_| "Email must be an email address.".to_owned())
    };
    if let Some(error) = error {
        let page = Forgot {
            chrome: Chrome::new("Forgot your password?", &visit.csrf, false),
            sent: false,
            email: form.email.clone(),
            error: Some(error),
        };
        return Ok(answer(&state, &visit, StatusCode::BAD_REQUEST, &page));
    }
    state.portal.forgot_password(&form.email).await?;
    Ok(redirect("/portal/forgot-password?sent=1").finish())
}

#[derive(Deserialize)]
struct TokenQuery {
    #[serde(default)]
    token: String,
}

fn password_fields() -> Vec<Field> {
    vec![
        Field::new("password", "Password", "password", "")
            .autocomplete("new-password")
            .hint("12 to 128 characters, not your email address."),
        Field::new("password_confirmation", "Password again", "password", "")
            .autocomplete("new-password"),
    ]
}

/// The page of a link that cannot set a password, and how to get a new
/// one.
fn link_problem(state: LinkState) -> (StatusCode, Message) {
    let (status, title, first) = match state {
        LinkState::Expired => (
            StatusCode::GONE,
            "This link expired",
            "Set-password links work for 7 days.",
        ),
        LinkState::Used => (
            StatusCode::GONE,
            "This link was already used",
            "Set-password links work once, and a newer link replaces older ones. If you already set your password, sign in.",
        ),
        LinkState::Unknown | LinkState::Usable => (
            StatusCode::NOT_FOUND,
            "This link is not valid",
            "Check that you opened the whole link from your email.",
        ),
    };
    (
        status,
        Message {
            chrome: Chrome::new(title, "", false),
            paragraphs: vec![
                first.to_owned(),
                "To get a new link, use \u{201c}Forgot your password?\u{201d} on the sign-in page (live mode emails it to you), or ask your benefits partner, who can create one at any time.".to_owned(),
            ],
            link: Some(("/portal/sign-in".to_owned(), "Go to sign in".to_owned())),
        },
    )
}

/// The set-password page of a link.
#[get("/set-password")]
pub(crate) async fn set_password_page(
    state: web::Data<PortalState>,
    req: HttpRequest,
    query: web::Query<TokenQuery>,
) -> Result<HttpResponse, PageError> {
    let (link, email) = state.portal.link(&query.token).await?;
    let (LinkState::Usable, Some(email)) = (link, email) else {
        let (status, page) = link_problem(link);
        return Ok(html(status, &page));
    };
    let visit = state.portal.visit(cookie_of(&req).as_deref()).await?;
    let page = SetPassword {
        chrome: Chrome::new("Set your password", &visit.csrf, false),
        email,
        token: query.token.clone(),
        fields: password_fields(),
        error: None,
    };
    Ok(answer(&state, &visit, StatusCode::OK, &page))
}

/// Sets the password, signs in and shows the dashboard.
#[post("/set-password")]
pub(crate) async fn set_password(
    state: web::Data<PortalState>,
    req: HttpRequest,
    form: web::Form<SetPasswordForm>,
) -> Result<HttpResponse, PageError> {
    let cookie = cookie_of(&req);
    let visit = state.portal.visit(cookie.as_deref()).await?;
    let (link, email) = state.portal.link(&form.token).await?;
    let (LinkState::Usable, Some(email)) = (link, email) else {
        let (status, page) = link_problem(link);
        return Ok(html(status, &page));
    };
    let again = |fields: Vec<Field>, error: Option<String>| SetPassword {
        chrome: Chrome::new("Set your password", &visit.csrf, false),
        email: email.clone(),
        token: form.token.clone(),
        fields,
        error,
    };
    if visit.new_cookie.is_some() || !csrf_ok(&form.csrf, &visit.csrf) {
        let page = again(password_fields(), Some(EXPIRED.to_owned()));
        return Ok(answer(&state, &visit, StatusCode::BAD_REQUEST, &page));
    }
    let result = state
        .portal
        .set_password(
            cookie.as_deref(),
            NewPassword {
                token: &form.token,
                password: &form.password,
                confirmation: &form.password_confirmation,
            },
        )
        .await;
    match result {
        Ok(signed) => {
            let mut res = redirect("/portal/dashboard?welcome=1");
            set_cookie(&mut res, &signed.cookie, state.secure_cookies);
            Ok(res.finish())
        }
        Err(ServiceError::Invalid(details)) => {
            let mut fields = password_fields();
            let rest = place_errors(&mut fields, &details);
            let page = again(fields, rest.first().cloned());
            Ok(answer(&state, &visit, StatusCode::BAD_REQUEST, &page))
        }
        Err(ServiceError::Portal(
            r @ (PortalRefusal::LinkUsed | PortalRefusal::LinkExpired | PortalRefusal::LinkUnknown),
        )) => {
            // The link changed state after the page was opened.
            let state = match r {
                PortalRefusal::LinkExpired => LinkState::Expired,
                PortalRefusal::LinkUnknown => LinkState::Unknown,
                _ => LinkState::Used,
            };
            let (status, page) = link_problem(state);
            Ok(html(status, &page))
        }
        Err(e) => Err(e.into()),
    }
}
