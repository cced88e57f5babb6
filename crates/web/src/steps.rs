//! One page per checklist step (onboarding §1), each with its form and
//! inline errors: the same rules and messages as the API, because every
//! form goes to the same `domain::services::onboarding` method the API
//! uses. A step that waits for another, or that the company's go-live
//! closed, says so instead of showing a form.

mod page;

use actix_web::http::StatusCode;
use actix_web::http::header::{LOCATION, USER_AGENT};
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use domain::error::FieldError;
use domain::ids::EnrollmentId;
use domain::onboarding::StepId;
use domain::onboarding::fields::AddressInput;
use domain::scope::Scope;
use domain::services::ServiceError;
use domain::services::onboarding::{BankInput, Onboarding, PlanInput, ProfileInput, SignInput};
use serde::Deserialize;

use crate::PortalState;
use crate::company::slug;
use crate::errors::PageError;
use crate::session::Admin;
use crate::view::html;

use page::{StepPage, Submitted, step_page};

fn step_of(segment: &str) -> Result<StepId, PageError> {
    StepId::parse(&segment.replace('-', "_")).ok_or(PageError::NotFound)
}

fn redirect(to: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((LOCATION, to.to_owned()))
        .finish()
}

/// A step's page.
#[get("/steps/{step}")]
pub(crate) async fn show(
    state: web::Data<PortalState>,
    admin: Admin,
    path: web::Path<String>,
    flags: web::Query<StepFlags>,
) -> Result<HttpResponse, PageError> {
    let step = step_of(&path)?;
    let mut page = page(&state, &admin, step, None).await?;
    if flags.expired.is_some() {
        page.flash(crate::session::EXPIRED);
    }
    Ok(html(StatusCode::OK, &page))
}

/// What a step page's address may say.
#[derive(Deserialize)]
pub(crate) struct StepFlags {
    /// A form came back without its session's CSRF token: nothing was
    /// saved, and the page says so.
    expired: Option<String>,
}

/// `step`'s page of the admin's company, with a refused submission when
/// there is one (plan setup's with its documents).
async fn page(
    state: &PortalState,
    admin: &Admin,
    step: StepId,
    submitted: Option<Submitted>,
) -> Result<StepPage, PageError> {
    let a = &admin.account;
    let view = state.onboarding.view(&a.scope, &a.enrollment_id).await?;
    let documents = if step == StepId::PlanSetup {
        match state.onboarding.documents(&a.scope, &a.enrollment_id).await {
            Ok(docs) => docs,
            Err(ServiceError::Onboarding(_)) => Vec::new(),
            Err(e) => return Err(e.into()),
        }
    } else {
        Vec::new()
    };
    Ok(step_page(&view, step, &admin.csrf, &documents, submitted))
}

/// Renders `step`'s page, with a refused submission when there is one.
pub(crate) async fn render(
    state: &PortalState,
    admin: &Admin,
    step: StepId,
    submitted: Option<Submitted>,
) -> Result<HttpResponse, PageError> {
    let status = if submitted.is_some() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    Ok(html(status, &page(state, admin, step, submitted).await?))
}

/// The page of `step`.
fn step_url(step: StepId) -> String {
    format!("/portal/steps/{}", slug(step))
}

/// Where a saved step goes: back to its page (a step with more to do),
/// or to the dashboard, which says it was saved.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Then {
    /// The step's page.
    Back,
    /// The dashboard.
    Dashboard,
}

/// What a step's POST did: back to the page after a success, or the page
/// again with the refusal.
pub(crate) async fn finish<T>(
    state: &PortalState,
    admin: &Admin,
    step: StepId,
    form: Submitted,
    result: Result<T, ServiceError>,
    then: Then,
) -> Result<HttpResponse, PageError> {
    match result {
        Ok(_) => Ok(redirect(&match then {
            Then::Back => step_url(step),
            Then::Dashboard => format!("/portal/dashboard?saved={}", step.as_str()),
        })),
        Err(ServiceError::Invalid(errors)) => {
            render(state, admin, step, Some(form.with_errors(errors))).await
        }
        Err(
            e @ (ServiceError::Onboarding(_) | ServiceError::Conflict(_) | ServiceError::Portal(_)),
        ) => render(state, admin, step, Some(form.with_notice(e.message()))).await,
        Err(e) => Err(e.into()),
    }
}

fn some(text: &str) -> Option<String> {
    let t = text.trim();
    (!t.is_empty()).then(|| t.to_owned())
}

#[derive(Debug, Clone, Default, Deserialize)]
struct ProfileForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    legal_name: String,
    #[serde(default)]
    ein: String,
    #[serde(default)]
    entity_type: String,
    #[serde(default)]
    line1: String,
    #[serde(default)]
    line2: String,
    #[serde(default)]
    city: String,
    #[serde(default)]
    state: String,
    #[serde(default)]
    zip: String,
    #[serde(default)]
    phone: String,
    #[serde(default)]
    signatory_title: String,
}

/// Saves the company profile.
#[post("/steps/company-profile")]
pub(crate) async fn save_profile(
    state: web::Data<PortalState>,
    admin: Admin,
    form: web::Form<ProfileForm>,
) -> Result<HttpResponse, PageError> {
    admin.check(&form.csrf, &step_url(StepId::CompanyProfile))?;
    let f = form.into_inner();
    let input = ProfileInput {
        legal_name: some(&f.legal_name),
        ein: some(&f.ein),
        entity_type: some(&f.entity_type),
        address: Some(AddressInput {
            line1: some(&f.line1),
            line2: some(&f.line2),
            city: some(&f.city),
            state: some(&f.state),
            zip: some(&f.zip),
        }),
        phone: some(&f.phone),
        signatory_title: some(&f.signatory_title),
    };
    let a = &admin.account;
    let result = state
        .onboarding
        .save_profile(&a.scope, &a.enrollment_id, input)
        .await;
    let submitted = Submitted::values(
        "profile",
        &[
            ("legal_name", &f.legal_name),
            ("ein", &f.ein),
            ("entity_type", &f.entity_type),
            ("line1", &f.line1),
            ("line2", &f.line2),
            ("city", &f.city),
            ("state", &f.state),
            ("zip", &f.zip),
            ("phone", &f.phone),
            ("signatory_title", &f.signatory_title),
        ],
    );
    finish(
        &state,
        &admin,
        StepId::CompanyProfile,
        submitted,
        result,
        Then::Dashboard,
    )
    .await
}

#[derive(Debug, Deserialize)]
struct CsrfOnly {
    #[serde(default)]
    csrf: String,
}

/// A step whose form carries only its CSRF token: checks it, runs `act`
/// on the account's enrollment and finishes as the form `name`.
async fn bare_step<T>(
    state: &PortalState,
    admin: &Admin,
    csrf: &str,
    (step, name, then): (StepId, &'static str, Then),
    act: impl AsyncFnOnce(&Onboarding, &Scope, &EnrollmentId) -> Result<T, ServiceError>,
) -> Result<HttpResponse, PageError> {
    admin.check(csrf, &step_url(step))?;
    let a = &admin.account;
    let result = act(&state.onboarding, &a.scope, &a.enrollment_id).await;
    finish(
        state,
        admin,
        step,
        Submitted::values(name, &[]),
        result,
        then,
    )
    .await
}

/// Asks the business verifier.
#[post("/steps/business-verification")]
pub(crate) async fn verify(
    state: web::Data<PortalState>,
    admin: Admin,
    form: web::Form<CsrfOnly>,
) -> Result<HttpResponse, PageError> {
    let step = (StepId::BusinessVerification, "verify", Then::Back);
    bare_step(&state, &admin, &form.csrf, step, async |o, scope, id| {
        o.request_verification(scope, id).await
    })
    .await
}

#[derive(Debug, Deserialize)]
struct BankForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    routing_number: String,
    #[serde(default)]
    account_number: String,
    #[serde(default)]
    account_type: String,
    #[serde(default)]
    holder_name: String,
}

/// Saves a bank account and sends its micro-deposits.
#[post("/steps/banking/account")]
pub(crate) async fn save_bank(
    state: web::Data<PortalState>,
    admin: Admin,
    form: web::Form<BankForm>,
) -> Result<HttpResponse, PageError> {
    admin.check(&form.csrf, &step_url(StepId::Banking))?;
    let f = form.into_inner();
    let a = &admin.account;
    let result = state
        .onboarding
        .save_bank(
            &a.scope,
            &a.enrollment_id,
            BankInput {
                routing_number: some(&f.routing_number),
                account_number: some(&f.account_number),
                account_type: some(&f.account_type),
                holder_name: some(&f.holder_name),
            },
        )
        .await;
    // The account number is never shown again, not even after an error.
    let submitted = Submitted::values(
        "bank",
        &[
            ("routing_number", &f.routing_number),
            ("account_type", &f.account_type),
            ("holder_name", &f.holder_name),
        ],
    );
    finish(
        &state,
        &admin,
        StepId::Banking,
        submitted,
        result,
        Then::Back,
    )
    .await
}

#[derive(Debug, Deserialize)]
struct DepositsForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    first_amount: String,
    #[serde(default)]
    second_amount: String,
}

/// Checks the two micro-deposit amounts.
#[post("/steps/banking/deposits")]
pub(crate) async fn confirm_deposits(
    state: web::Data<PortalState>,
    admin: Admin,
    form: web::Form<DepositsForm>,
) -> Result<HttpResponse, PageError> {
    admin.check(&form.csrf, &step_url(StepId::Banking))?;
    let submitted = Submitted::values(
        "deposits",
        &[
            ("first_amount", &form.first_amount),
            ("second_amount", &form.second_amount),
        ],
    );
    let amounts: Option<Vec<i64>> = [&form.first_amount, &form.second_amount]
        .iter()
        .map(|t| t.trim().parse().ok())
        .collect();
    let result = match amounts {
        Some(amounts) => {
            let a = &admin.account;
            state
                .onboarding
                .confirm_deposits(&a.scope, &a.enrollment_id, &amounts)
                .await
                .map(drop)
        }
        None => Err(ServiceError::Invalid(vec![FieldError::new(
            "amounts_cents",
            "must be two amounts of 1 to 99 cents",
        )])),
    };
    finish(
        &state,
        &admin,
        StepId::Banking,
        submitted,
        result,
        Then::Back,
    )
    .await
}

#[derive(Debug, Deserialize)]
struct PlanForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    plan_id: String,
    #[serde(default)]
    employer_contribution_pct: String,
    #[serde(default)]
    waiting_period: String,
    #[serde(default)]
    min_hours_per_week: String,
}

/// A whole number, or a field error naming `field`.
fn number(field: &'static str, text: &str, errors: &mut Vec<FieldError>) -> Option<i64> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    t.parse().map_or_else(
        |_| {
            errors.push(FieldError::new(field, "must be a whole number"));
            None
        },
        Some,
    )
}

/// Saves the plan choices.
#[post("/steps/plan-setup/choices")]
pub(crate) async fn save_plan(
    state: web::Data<PortalState>,
    admin: Admin,
    form: web::Form<PlanForm>,
) -> Result<HttpResponse, PageError> {
    admin.check(&form.csrf, &step_url(StepId::PlanSetup))?;
    let f = form.into_inner();
    let mut errors = Vec::new();
    let pct = number(
        "employer_contribution_pct",
        &f.employer_contribution_pct,
        &mut errors,
    );
    let hours = number("min_hours_per_week", &f.min_hours_per_week, &mut errors);
    let result = if errors.is_empty() {
        let a = &admin.account;
        state
            .onboarding
            .save_plan(
                &a.scope,
                &a.enrollment_id,
                PlanInput {
                    plan_id: some(&f.plan_id),
                    employer_contribution_pct: pct,
                    waiting_period: some(&f.waiting_period),
                    min_hours_per_week: hours,
                },
            )
            .await
            .map(drop)
    } else {
        Err(ServiceError::Invalid(errors))
    };
    let submitted = Submitted::values(
        "plan",
        &[
            ("plan_id", &f.plan_id),
            ("employer_contribution_pct", &f.employer_contribution_pct),
            ("waiting_period", &f.waiting_period),
            ("min_hours_per_week", &f.min_hours_per_week),
        ],
    );
    finish(
        &state,
        &admin,
        StepId::PlanSetup,
        submitted,
        result,
        Then::Back,
    )
    .await
}

#[derive(Debug, Deserialize)]
struct SignForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    signer_name: String,
    #[serde(default)]
    accepted: Option<String>,
}

/// Signs the plan documents.
#[post("/steps/plan-setup/sign")]
pub(crate) async fn sign_plan(
    state: web::Data<PortalState>,
    admin: Admin,
    req: HttpRequest,
    form: web::Form<SignForm>,
) -> Result<HttpResponse, PageError> {
    admin.check(&form.csrf, &step_url(StepId::PlanSetup))?;
    let f = form.into_inner();
    let accepted = f.accepted.as_deref() == Some("true");
    let a = &admin.account;
    let result = state
        .onboarding
        .sign_plan(
            &a.scope,
            &a.enrollment_id,
            SignInput {
                signer_name: some(&f.signer_name),
                accepted: Some(accepted),
                ip: req.peer_addr().map(|p| p.ip().to_string()),
                user_agent: req
                    .headers()
                    .get(USER_AGENT)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned),
            },
        )
        .await;
    let submitted = Submitted::values(
        "sign",
        &[
            ("signer_name", &f.signer_name),
            ("accepted", if accepted { "true" } else { "" }),
        ],
    );
    finish(
        &state,
        &admin,
        StepId::PlanSetup,
        submitted,
        result,
        Then::Dashboard,
    )
    .await
}

/// Sends (or, in test mode, records) the employee invitations.
#[post("/steps/employee-invitations")]
pub(crate) async fn invite(
    state: web::Data<PortalState>,
    admin: Admin,
    form: web::Form<CsrfOnly>,
) -> Result<HttpResponse, PageError> {
    let step = (StepId::EmployeeInvitations, "invite", Then::Dashboard);
    bare_step(&state, &admin, &form.csrf, step, async |o, scope, id| {
        o.send_invitations(scope, id).await
    })
    .await
}
