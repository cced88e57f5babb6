//! One page per checklist step (onboarding §1), each with its form and
//! inline errors: the same rules and messages as the API, because every
//! form goes to the same `domain::services::onboarding` method the API
//! uses. A step that waits for another, or that the company's go-live
//! closed, says so instead of showing a form.

mod page;

use actix_web::http::StatusCode;
use actix_web::http::header::{LOCATION, USER_AGENT};
use actix_web::{HttpRequest, HttpResponse, Resource, get, guard, web};
use domain::error::FieldError;
use domain::onboarding::fields::AddressInput;
use domain::onboarding::{StepId, StepView};
use domain::portal::PortalAccount;
use domain::services::ServiceError;
use domain::services::onboarding::{BankInput, Onboarding, PlanInput, ProfileInput, SignInput};
use serde::Deserialize;
use serde::de::DeserializeOwned;

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

/// What a step form's call answers.
type Saved = Result<StepView, ServiceError>;

/// A step form's step, its name on the page, and where a success goes.
type Post = (StepId, &'static str, Then);

/// One form of a step page: its step, what a refusal shows again, and its
/// one `Onboarding` call. [`submit`] does the rest, the same for every
/// form.
trait StepForm: DeserializeOwned + 'static {
    /// Its step, its name on the page, and where a success goes.
    const POST: Post;

    /// The CSRF token the form came with.
    fn csrf(&self) -> &str;

    /// The typed values a refused form shows again (none by default).
    fn shown(&self) -> Vec<(&'static str, &str)> {
        Vec::new()
    }

    /// Calls the service for the account's enrollment.
    async fn save(&self, o: &Onboarding, a: &PortalAccount, req: &HttpRequest) -> Saved;
}

/// A step form's POST: checks its CSRF token (back to the step's page
/// without it), makes the form's call and finishes.
async fn submit<F: StepForm>(
    state: web::Data<PortalState>,
    admin: Admin,
    req: HttpRequest,
    form: web::Form<F>,
) -> Result<HttpResponse, PageError> {
    let (step, name, then) = F::POST;
    admin.check(form.csrf(), &step_url(step))?;
    let result = form.save(&state.onboarding, &admin.account, &req).await;
    let shown = Submitted::values(name, &form.shown());
    finish(&state, &admin, step, shown, result, then).await
}

/// `F`'s POST at `path`, registered as `#[post(path)]` registers a
/// handler: only a POST matches it.
fn route<F: StepForm>(path: &str) -> Resource {
    web::resource(path).guard(guard::Post()).to(submit::<F>)
}

/// Registers the step forms' POSTs.
pub(crate) fn forms(cfg: &mut web::ServiceConfig) {
    cfg.service(route::<ProfileForm>("/steps/company-profile"));
    cfg.service(route::<VerifyForm>("/steps/business-verification"));
    cfg.service(route::<BankForm>("/steps/banking/account"));
    cfg.service(route::<DepositsForm>("/steps/banking/deposits"));
    cfg.service(route::<PlanForm>("/steps/plan-setup/choices"));
    cfg.service(route::<SignForm>("/steps/plan-setup/sign"));
    cfg.service(route::<InviteForm>("/steps/employee-invitations"));
}

/// The company profile's form: saves the profile.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ProfileForm {
    csrf: String,
    legal_name: String,
    ein: String,
    entity_type: String,
    line1: String,
    line2: String,
    city: String,
    state: String,
    zip: String,
    phone: String,
    signatory_title: String,
}

impl StepForm for ProfileForm {
    const POST: Post = (StepId::CompanyProfile, "profile", Then::Dashboard);

    fn csrf(&self) -> &str {
        &self.csrf
    }

    fn shown(&self) -> Vec<(&'static str, &str)> {
        vec![
            ("legal_name", &self.legal_name),
            ("ein", &self.ein),
            ("entity_type", &self.entity_type),
            ("line1", &self.line1),
            ("line2", &self.line2),
            ("city", &self.city),
            ("state", &self.state),
            ("zip", &self.zip),
            ("phone", &self.phone),
            ("signatory_title", &self.signatory_title),
        ]
    }

    async fn save(&self, o: &Onboarding, a: &PortalAccount, _: &HttpRequest) -> Saved {
        let input = ProfileInput {
            legal_name: some(&self.legal_name),
            ein: some(&self.ein),
            entity_type: some(&self.entity_type),
            address: Some(AddressInput {
                line1: some(&self.line1),
                line2: some(&self.line2),
                city: some(&self.city),
                state: some(&self.state),
                zip: some(&self.zip),
            }),
            phone: some(&self.phone),
            signatory_title: some(&self.signatory_title),
        };
        o.save_profile(&a.scope, &a.enrollment_id, input).await
    }
}

/// A form that carries only its CSRF token, for a step whose call needs
/// nothing else: `$form` posts for `$post` and calls `Onboarding::$call`.
macro_rules! bare_form {
    ($(#[doc = $doc:literal])* $form:ident: $post:expr => $call:ident) => {
        $(#[doc = $doc])*
        #[derive(Debug, Default, Deserialize)]
        #[serde(default)]
        struct $form {
            csrf: String,
        }

        impl StepForm for $form {
            const POST: Post = $post;

            fn csrf(&self) -> &str {
                &self.csrf
            }

            async fn save(&self, o: &Onboarding, a: &PortalAccount, _: &HttpRequest) -> Saved {
                o.$call(&a.scope, &a.enrollment_id).await
            }
        }
    };
}

bare_form! {
    /// The business verification's form: asks the business verifier.
    VerifyForm: (StepId::BusinessVerification, "verify", Then::Back) => request_verification
}

/// The bank account's form: saves the account and sends its
/// micro-deposits.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct BankForm {
    csrf: String,
    routing_number: String,
    account_number: String,
    account_type: String,
    holder_name: String,
}

impl StepForm for BankForm {
    const POST: Post = (StepId::Banking, "bank", Then::Back);

    fn csrf(&self) -> &str {
        &self.csrf
    }

    /// The account number is never shown again, not even after an error.
    fn shown(&self) -> Vec<(&'static str, &str)> {
        vec![
            ("routing_number", &self.routing_number),
            ("account_type", &self.account_type),
            ("holder_name", &self.holder_name),
        ]
    }

    async fn save(&self, o: &Onboarding, a: &PortalAccount, _: &HttpRequest) -> Saved {
        let input = BankInput {
            routing_number: some(&self.routing_number),
            account_number: some(&self.account_number),
            account_type: some(&self.account_type),
            holder_name: some(&self.holder_name),
        };
        o.save_bank(&a.scope, &a.enrollment_id, input).await
    }
}

/// The micro-deposits' form: checks the two amounts.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct DepositsForm {
    csrf: String,
    first_amount: String,
    second_amount: String,
}

impl StepForm for DepositsForm {
    const POST: Post = (StepId::Banking, "deposits", Then::Back);

    fn csrf(&self) -> &str {
        &self.csrf
    }

    fn shown(&self) -> Vec<(&'static str, &str)> {
        vec![
            ("first_amount", &self.first_amount),
            ("second_amount", &self.second_amount),
        ]
    }

    async fn save(&self, o: &Onboarding, a: &PortalAccount, _: &HttpRequest) -> Saved {
        let amounts: Option<Vec<i64>> = [&self.first_amount, &self.second_amount]
            .iter()
            .map(|t| t.trim().parse().ok())
            .collect();
        let Some(amounts) = amounts else {
            return Err(ServiceError::Invalid(vec![FieldError::new(
                "amounts_cents",
                "must be two amounts of 1 to 99 cents",
            )]));
        };
        o.confirm_deposits(&a.scope, &a.enrollment_id, &amounts)
            .await
    }
}

/// The plan choices' form: saves them.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PlanForm {
    csrf: String,
    plan_id: String,
    employer_contribution_pct: String,
    waiting_period: String,
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

impl StepForm for PlanForm {
    const POST: Post = (StepId::PlanSetup, "plan", Then::Back);

    fn csrf(&self) -> &str {
        &self.csrf
    }

    fn shown(&self) -> Vec<(&'static str, &str)> {
        vec![
            ("plan_id", &self.plan_id),
            ("employer_contribution_pct", &self.employer_contribution_pct),
            ("waiting_period", &self.waiting_period),
            ("min_hours_per_week", &self.min_hours_per_week),
        ]
    }

    async fn save(&self, o: &Onboarding, a: &PortalAccount, _: &HttpRequest) -> Saved {
        let mut errors = Vec::new();
        let pct = number(
            "employer_contribution_pct",
            &self.employer_contribution_pct,
            &mut errors,
        );
        let hours = number("min_hours_per_week", &self.min_hours_per_week, &mut errors);
        if !errors.is_empty() {
            return Err(ServiceError::Invalid(errors));
        }
        let input = PlanInput {
            plan_id: some(&self.plan_id),
            employer_contribution_pct: pct,
            waiting_period: some(&self.waiting_period),
            min_hours_per_week: hours,
        };
        o.save_plan(&a.scope, &a.enrollment_id, input).await
    }
}

/// The signature's form: signs the plan documents.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SignForm {
    csrf: String,
    signer_name: String,
    accepted: Option<String>,
}

impl SignForm {
    /// Whether the box was ticked.
    fn accepted(&self) -> bool {
        self.accepted.as_deref() == Some("true")
    }
}

impl StepForm for SignForm {
    const POST: Post = (StepId::PlanSetup, "sign", Then::Dashboard);

    fn csrf(&self) -> &str {
        &self.csrf
    }

    fn shown(&self) -> Vec<(&'static str, &str)> {
        let accepted = if self.accepted() { "true" } else { "" };
        vec![("signer_name", &self.signer_name), ("accepted", accepted)]
    }

    async fn save(&self, o: &Onboarding, a: &PortalAccount, req: &HttpRequest) -> Saved {
        let input = SignInput {
            signer_name: some(&self.signer_name),
            accepted: Some(self.accepted()),
            ip: req.peer_addr().map(|p| p.ip().to_string()),
            user_agent: req
                .headers()
                .get(USER_AGENT)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
        };
        o.sign_plan(&a.scope, &a.enrollment_id, input).await
    }
}

bare_form! {
    /// The invitations' form: sends (or, in test mode, records) the
    /// employee invitations.
    InviteForm: (StepId::EmployeeInvitations, "invite", Then::Dashboard) => send_invitations
}
