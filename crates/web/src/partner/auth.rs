//! Signing in (password, then a TOTP or recovery code when enrolled),
//! setting a password from the CLI's or an admin's link, signing out, and
//! enrolling an authenticator on the Security page.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use askama::Template;
use domain::portal::LinkState;
use domain::services::partner_portal::Enrolment;
use domain::services::portal::NewPassword;
use domain::services::{PortalRefusal, ServiceError};
use qrcode::QrCode;
use qrcode::render::svg;
use serde::Deserialize;

use super::{Frame, Member, PartnerState, refusal, render, see_other, source};
use crate::errors::PageError;
use crate::forms::{CsrfForm, SetPasswordForm, SignInForm, retry_after};
use crate::session::{EXPIRED, PARTNER, csrf_ok};
use crate::view::{Field, place_errors};

/// What a page says when a form came without its session.

#[derive(Template)]
#[template(path = "partner/sign_in.html")]
struct SignIn {
    frame: Frame,
    email: String,
}

#[derive(Template)]
#[template(path = "partner/two_factor.html")]
struct TwoFactor {
    frame: Frame,
}

#[derive(Template)]
#[template(path = "partner/set_password.html")]
struct SetPassword {
    frame: Frame,
    email: String,
    token: String,
    fields: Vec<Field>,
}

#[derive(Template)]
#[template(path = "partner/message.html")]
struct Message {
    frame: Frame,
    paragraphs: Vec<String>,
}

#[derive(Template)]
#[template(path = "partner/security.html")]
struct Security {
    frame: Frame,
    two_factor: bool,
    codes_left: u64,
    codes: Vec<String>,
    enrolment: Option<Enrolment>,
    qr: String,
}

/// Renders with the visitor's new session cookie, when there is one.
fn with_cookie(state: &PartnerState, new: Option<&String>, res: HttpResponse) -> HttpResponse {
    let mut res = res;
    if let Some(id) = new {
        let _ = res.add_cookie(&PARTNER.cookie(id, state.secure_cookies));
    }
    res
}

fn signed_in_to(state: &PartnerState, to: &str, cookie: &str) -> HttpResponse {
    let mut res = HttpResponse::SeeOther();
    res.insert_header((actix_web::http::header::LOCATION, to.to_owned()));
    PARTNER.set(&mut res, cookie, state.secure_cookies);
    res.finish()
}

#[derive(Deserialize)]
struct Flags {
    signed_out: Option<String>,
}

/// The sign-in page.
#[get("/sign-in")]
pub(super) async fn sign_in_page(
    state: web::Data<PartnerState>,
    req: HttpRequest,
    flags: web::Query<Flags>,
) -> Result<HttpResponse, PageError> {
    let users = state.console.users();
    let visit = users.visit(PARTNER.read(&req).as_deref()).await?;
    if let Some(s) = &visit.session
        && s.user.is_some()
    {
        let to = if s.second_factor_pending {
            "/partner/two-factor"
        } else {
            "/partner/overview"
        };
        return Ok(see_other(to));
    }
    let flash = flags
        .signed_out
        .as_ref()
        .map(|_| "You are signed out.".to_owned());
    let page = SignIn {
        frame: Frame::visitor("Sign in", &visit.csrf).flash(flash),
        email: String::new(),
    };
    Ok(with_cookie(
        &state,
        visit.new_cookie.as_ref(),
        render(StatusCode::OK, &page),
    ))
}

/// Checks the password; then the code page or the overview.
#[post("/sign-in")]
pub(super) async fn sign_in(
    state: web::Data<PartnerState>,
    req: HttpRequest,
    form: web::Form<SignInForm>,
) -> Result<HttpResponse, PageError> {
    let users = state.console.users();
    let cookie = PARTNER.read(&req);
    let visit = users.visit(cookie.as_deref()).await?;
    let refused = |status: StatusCode, error: String| {
        let page = SignIn {
            frame: Frame::visitor("Sign in", &visit.csrf).error(Some(error)),
            email: form.email.clone(),
        };
        with_cookie(&state, visit.new_cookie.as_ref(), render(status, &page))
    };
    if visit.new_cookie.is_some() || !csrf_ok(&form.csrf, &visit.csrf) {
        return Ok(refused(StatusCode::BAD_REQUEST, EXPIRED.to_owned()));
    }
    let ip = source(&req);
    match users
        .sign_in(
            cookie.as_deref(),
            &form.email,
            &form.password,
            ip.as_deref(),
        )
        .await
    {
        Ok(signed) => {
            let to = if signed.second_factor_pending {
                "/partner/two-factor"
            } else {
                "/partner/overview"
            };
            Ok(signed_in_to(&state, to, &signed.cookie))
        }
        Err(e) => {
            let Some((status, text)) = refusal(&e) else {
                return Err(e.into());
            };
            let res = refused(status, text);
            Ok(match too_many(&e) {
                Some(add) => add(res),
                None => res,
            })
        }
    }
}

/// For a failed-auth limit, a function adding `Retry-After`.
fn too_many(e: &ServiceError) -> Option<impl FnOnce(HttpResponse) -> HttpResponse> {
    match e {
        ServiceError::Portal(PortalRefusal::TooManyAttempts { retry_after_secs }) => {
            let secs = *retry_after_secs;
            Some(move |res| retry_after(res, secs))
        }
        _ => None,
    }
}

/// The code page of a sign-in that owes its second factor.
#[get("/two-factor")]
pub(super) async fn two_factor_page(
    state: web::Data<PartnerState>,
    req: HttpRequest,
) -> Result<HttpResponse, PageError> {
    let session = state
        .console
        .users()
        .session(PARTNER.read(&req).as_deref())
        .await?;
    match session {
        Some(s) if s.second_factor_pending => Ok(render(
            StatusCode::OK,
            &TwoFactor {
                frame: Frame::visitor("Two-factor authentication", &s.csrf),
            },
        )),
        Some(s) if s.user.is_some() => Ok(see_other("/partner/overview")),
        _ => Ok(see_other("/partner/sign-in")),
    }
}

#[derive(Deserialize)]
struct CodeForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    code: String,
}

/// Checks the code; a new session id, then the overview.
#[post("/two-factor")]
pub(super) async fn two_factor(
    state: web::Data<PartnerState>,
    req: HttpRequest,
    form: web::Form<CodeForm>,
) -> Result<HttpResponse, PageError> {
    let users = state.console.users();
    let cookie = PARTNER.read(&req);
    let Some(session) = users
        .session(cookie.as_deref())
        .await?
        .filter(|s| s.second_factor_pending)
    else {
        return Ok(see_other("/partner/sign-in"));
    };
    if !csrf_ok(&form.csrf, &session.csrf) {
        return Ok(see_other("/partner/two-factor"));
    }
    let ip = source(&req);
    match users
        .second_factor(cookie.as_deref(), &form.code, ip.as_deref())
        .await
    {
        Ok(signed) => Ok(signed_in_to(&state, "/partner/overview", &signed.cookie)),
        Err(e) => {
            let Some((status, text)) = refusal(&e) else {
                return Err(e.into());
            };
            let page = TwoFactor {
                frame: Frame::visitor("Two-factor authentication", &session.csrf).error(Some(text)),
            };
            let res = render(status, &page);
            Ok(match too_many(&e) {
                Some(add) => add(res),
                None => res,
            })
        }
    }
}

#[derive(Deserialize)]
struct TokenQuery {
    #[serde(default)]
    token: String,
}

fn link_message(state: LinkState, csrf: &str) -> Message {
    let (title, text) = match state {
        LinkState::Used => (
            "This link was already used",
            "Each set-password link works once, and only the newest one works.",
        ),
        LinkState::Expired => ("This link expired", "Set-password links work for 7 days."),
        LinkState::Unknown | LinkState::Usable => (
            "This link is not valid",
            "Check that the whole link was copied.",
        ),
    };
    Message {
        frame: Frame::visitor(title, csrf),
        paragraphs: vec![
            text.to_owned(),
            "Ask an admin of your team, or your account manager, for a new link.".to_owned(),
        ],
    }
}

fn password_fields() -> Vec<Field> {
    vec![
        Field::new("password", "Password", "password", "").autocomplete("new-password"),
        Field::new("password_confirmation", "Password again", "password", "")
            .autocomplete("new-password"),
    ]
}

/// The set-password page of a link.
#[get("/set-password")]
pub(super) async fn set_password_page(
    state: web::Data<PartnerState>,
    req: HttpRequest,
    query: web::Query<TokenQuery>,
) -> Result<HttpResponse, PageError> {
    let users = state.console.users();
    let visit = users.visit(PARTNER.read(&req).as_deref()).await?;
    let (link, email) = users.link(&query.token).await?;
    let res = match (link, email) {
        (LinkState::Usable, Some(email)) => render(
            StatusCode::OK,
            &SetPassword {
                frame: Frame::visitor("Set your password", &visit.csrf),
                email,
                token: query.token.clone(),
                fields: password_fields(),
            },
        ),
        (state, _) => render(StatusCode::GONE, &link_message(state, &visit.csrf)),
    };
    Ok(with_cookie(&state, visit.new_cookie.as_ref(), res))
}

/// Sets the password and signs in.
#[post("/set-password")]
pub(super) async fn set_password(
    state: web::Data<PartnerState>,
    req: HttpRequest,
    form: web::Form<SetPasswordForm>,
) -> Result<HttpResponse, PageError> {
    let users = state.console.users();
    let cookie = PARTNER.read(&req);
    let visit = users.visit(cookie.as_deref()).await?;
    let (link, email) = users.link(&form.token).await?;
    let Some(email) = email.filter(|_| link == LinkState::Usable) else {
        return Ok(render(StatusCode::GONE, &link_message(link, &visit.csrf)));
    };
    let page = |error: Option<String>, fields: Vec<Field>| SetPassword {
        frame: Frame::visitor("Set your password", &visit.csrf).error(error),
        email: email.clone(),
        token: form.token.clone(),
        fields,
    };
    if visit.new_cookie.is_some() || !csrf_ok(&form.csrf, &visit.csrf) {
        let res = render(
            StatusCode::BAD_REQUEST,
            &page(Some(EXPIRED.to_owned()), password_fields()),
        );
        return Ok(with_cookie(&state, visit.new_cookie.as_ref(), res));
    }
    let ip = source(&req);
    let form_in = NewPassword {
        token: &form.token,
        password: &form.password,
        confirmation: &form.password_confirmation,
    };
    match users
        .set_password(cookie.as_deref(), form_in, ip.as_deref())
        .await
    {
        Ok(signed) => Ok(signed_in_to(&state, "/partner/overview", &signed.cookie)),
        Err(ServiceError::Invalid(errors)) => {
            let mut fields = password_fields();
            let rest = place_errors(&mut fields, &errors);
            let error = (!rest.is_empty()).then(|| rest.join(" "));
            Ok(render(
                StatusCode::UNPROCESSABLE_ENTITY,
                &page(error, fields),
            ))
        }
        Err(ServiceError::Portal(
            r @ (PortalRefusal::LinkUsed | PortalRefusal::LinkExpired | PortalRefusal::LinkUnknown),
        )) => {
            let state_of = match r {
                PortalRefusal::LinkExpired => LinkState::Expired,
                PortalRefusal::LinkUsed => LinkState::Used,
                _ => LinkState::Unknown,
            };
            Ok(render(
                StatusCode::GONE,
                &link_message(state_of, &visit.csrf),
            ))
        }
        Err(e) => Err(e.into()),
    }
}

/// Signs out.
#[post("/sign-out")]
pub(super) async fn sign_out(
    state: web::Data<PartnerState>,
    req: HttpRequest,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    let users = state.console.users();
    let cookie = PARTNER.read(&req);
    match users.session(cookie.as_deref()).await? {
        Some(s) if csrf_ok(&form.csrf, &s.csrf) => {
            users.sign_out(cookie.as_deref()).await?;
            let mut res = HttpResponse::SeeOther();
            res.insert_header((
                actix_web::http::header::LOCATION,
                "/partner/sign-in?signed_out=1",
            ));
            PARTNER.clear(&mut res, state.secure_cookies);
            Ok(res.finish())
        }
        Some(_) => Ok(see_other("/partner/overview")),
        None => Ok(see_other("/partner/sign-in")),
    }
}

/// The otpauth URI as an inline SVG QR code (no image request: the CSP
/// allows none from elsewhere).
fn qr_svg(uri: &str) -> String {
    QrCode::new(uri.as_bytes()).map_or_else(
        |_| String::new(),
        |code| {
            code.render::<svg::Color<'_>>()
                .min_dimensions(220, 220)
                .quiet_zone(true)
                .build()
        },
    )
}

async fn security(
    state: &PartnerState,
    member: &Member,
    status: StatusCode,
    codes: Vec<String>,
    error: Option<String>,
) -> Result<HttpResponse, PageError> {
    let users = state.console.users();
    let enrolled = member.actor.user.two_factor() || !codes.is_empty();
    let codes_left = if enrolled {
        users.recovery_codes_left(&member.actor).await?
    } else {
        0
    };
    // Anyone may set up (or replace) their own authenticator.
    let enrolment = users.start_enrolment(&member.actor)?;
    let qr = qr_svg(&enrolment.uri);
    let page = Security {
        frame: Frame::of(member, "Security", "/partner/security").error(error),
        two_factor: enrolled,
        codes_left,
        codes,
        enrolment: Some(enrolment),
        qr,
    };
    Ok(render(status, &page))
}

/// Two-factor status and enrolment.
#[get("/security")]
pub(super) async fn security_page(
    state: web::Data<PartnerState>,
    member: Member,
) -> Result<HttpResponse, PageError> {
    security(&state, &member, StatusCode::OK, Vec::new(), None).await
}

#[derive(Deserialize)]
struct EnrolForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    sealed: String,
    #[serde(default)]
    code: String,
}

/// Confirms an authenticator; shows the recovery codes once.
#[post("/security")]
pub(super) async fn enrol(
    state: web::Data<PartnerState>,
    member: Member,
    form: web::Form<EnrolForm>,
) -> Result<HttpResponse, PageError> {
    member.check(&form.csrf, "/partner/security")?;
    match state
        .console
        .users()
        .confirm_enrolment(&member.actor, &form.sealed, &form.code)
        .await
    {
        Ok(codes) => security(&state, &member, StatusCode::OK, codes, None).await,
        Err(e) => match refusal(&e) {
            Some((status, text)) => security(&state, &member, status, Vec::new(), Some(text)).await,
            None => Err(e.into()),
        },
    }
}
