//! Embedded onboarding (onboarding §4): `GET /enrollments/{id}/onboarding`
//! for both modes, and the step endpoints of an embedded enrollment. Each
//! handler parses, calls one method of the onboarding service — the same
//! checklist the employer portal drives — and answers with the step.

use actix_web::{HttpRequest, get, post, put, web};

use domain::ids::EnrollmentId;

use crate::auth::{Caller, source_ip};
use crate::error::{ApiError, ErrorBody};
use crate::extract::{Body, Optional, PathId};
use crate::reply::Reply;
use crate::routes::CommonErrors;
use crate::routes::params::{EnrollmentNotFound, EnrollmentPath, IdempotencyKey};
use crate::state::AppState;
use crate::wire::enrollments::StepOut;
use crate::wire::onboarding::{
    BankingInput, CompanyProfileInput, DepositsInput, NoFields, OnboardingRead, PlanSetupInput,
    SignatureInput,
};

/// The step a step endpoint answers, in the caller's form.
fn step(
    caller: &Caller,
    result: Result<domain::onboarding::StepView, domain::services::ServiceError>,
) -> Result<Reply, ApiError> {
    let step = result.map_err(PathId::<EnrollmentId>::missing)?;
    Reply::ok(&StepOut::of(&step, caller.style)?)
}

/// Read an enrollment's onboarding: progress, the five steps and the next
/// steps (both onboarding modes).
#[utoipa::path(
    tag = "Onboarding",
    operation_id = "get_onboarding",
    params(EnrollmentPath),
    responses(
        (status = 200, description = "The onboarding", body = OnboardingRead),
        EnrollmentNotFound,
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[get("/enrollments/{id}/onboarding")]
pub async fn get_onboarding(
    state: web::Data<AppState>,
    caller: Caller,
    id: PathId<EnrollmentId>,
) -> Result<Reply, ApiError> {
    let view = state
        .onboarding
        .view(&caller.scope(), &id)
        .await
        .map_err(PathId::<EnrollmentId>::missing)?;
    Reply::ok(&OnboardingRead::of(&view, caller.style)?)
}

/// The answers every step endpoint can give besides its own 400.
#[derive(utoipa::IntoResponses)]
pub enum StepErrors {
    /// No such enrollment for this partner and mode.
    #[response(status = 404, example = json!({"error": "not_found", "message": "no such enrollment in this mode"}))]
    NotFound(ErrorBody),
    /// A hosted enrollment (its onboarding runs in the employer portal),
    /// a step whose prerequisites are not completed, or a required step
    /// once the company is live.
    #[response(status = 409, example = json!({"error": "conflict", "message": "business_verification can start once company_profile is completed"}))]
    Conflict(ErrorBody),
}

/// Save the company profile (embedded enrollments).
///
/// The whole profile: a field left out is missing and listed in the
/// step's `requirements`. Editing a verified profile sends business
/// verification back to `not_started`.
#[utoipa::path(
    tag = "Onboarding",
    operation_id = "put_company_profile",
    params(EnrollmentPath, IdempotencyKey),
    request_body = CompanyProfileInput,
    responses(
        (status = 200, description = "The `company_profile` step", body = StepOut),
        (status = 400, description = "A field is invalid", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "ein: must be an EIN: NN-NNNNNNN or 9 digits",
                          "details": [{"field": "ein", "message": "must be an EIN: NN-NNNNNNN or 9 digits"}]})),
        StepErrors,
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[put("/enrollments/{id}/onboarding/company_profile")]
pub async fn put_company_profile(
    state: web::Data<AppState>,
    caller: Caller,
    id: PathId<EnrollmentId>,
    Body(input, ..): Body<CompanyProfileInput>,
) -> Result<Reply, ApiError> {
    let result = state
        .onboarding
        .save_profile(&caller.scope(), &id, input.into())
        .await;
    step(&caller, result)
}

/// Ask for business verification of the saved profile (embedded
/// enrollments).
///
/// Test mode verifies every valid EIN at once, except `11-1111111`
/// (refused: the step is `action_required` with a `verification_failed`
/// error on `ein`) and `22-2222222` (`pending`, then `completed` after
/// 60 s). A refusal is the step's status, not an HTTP error: correct the
/// profile and ask again.
#[utoipa::path(
    tag = "Onboarding",
    operation_id = "request_business_verification",
    params(EnrollmentPath, IdempotencyKey),
    request_body(content = Option<NoFields>, description = "None, or `{}`", example = json!({})),
    responses(
        (status = 200, description = "The `business_verification` step", body = StepOut),
        (status = 400, description = "The body is not empty and not `{}`", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "force: is not a known field",
                          "details": [{"field": "force", "message": "is not a known field"}]})),
        StepErrors,
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[post("/enrollments/{id}/onboarding/business_verification")]
pub async fn request_business_verification(
    state: web::Data<AppState>,
    caller: Caller,
    id: PathId<EnrollmentId>,
    _: Body<NoFields, Optional>,
) -> Result<Reply, ApiError> {
    let result = state
        .onboarding
        .request_verification(&caller.scope(), &id)
        .await;
    step(&caller, result)
}

/// Save the bank account (embedded enrollments) and send its two
/// micro-deposits.
///
/// The account number is encrypted at rest and never returned (the step
/// shows `last4`). The step is `pending` until the two amounts are
/// confirmed; test mode always sends 32 and 45 cents.
#[utoipa::path(
    tag = "Onboarding",
    operation_id = "put_banking",
    params(EnrollmentPath, IdempotencyKey),
    request_body = BankingInput,
    responses(
        (status = 200, description = "The `banking` step", body = StepOut),
        (status = 400, description = "A field is invalid", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "routing_number: must be a 9-digit ABA routing number",
                          "details": [{"field": "routing_number", "message": "must be a 9-digit ABA routing number"}]})),
        StepErrors,
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[put("/enrollments/{id}/onboarding/banking")]
pub async fn put_banking(
    state: web::Data<AppState>,
    caller: Caller,
    id: PathId<EnrollmentId>,
    Body(input, ..): Body<BankingInput>,
) -> Result<Reply, ApiError> {
    let result = state
        .onboarding
        .save_bank(&caller.scope(), &id, input.into())
        .await;
    step(&caller, result)
}

/// Confirm the two micro-deposit amounts (embedded enrollments).
///
/// Right: the step is `completed`. Wrong: it stays `pending`; the third
/// wrong answer makes it `action_required` (`verification_failed` on
/// `amounts_cents`) and the account must be saved again. Neither is an
/// HTTP error.
#[utoipa::path(
    tag = "Onboarding",
    operation_id = "verify_banking",
    params(EnrollmentPath, IdempotencyKey),
    request_body = DepositsInput,
    responses(
        (status = 200, description = "The `banking` step", body = StepOut),
        (status = 400, description = "Not two amounts of 1 to 99 cents", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "amounts_cents: must be two amounts of 1 to 99 cents",
                          "details": [{"field": "amounts_cents", "message": "must be two amounts of 1 to 99 cents"}]})),
        StepErrors,
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[post("/enrollments/{id}/onboarding/banking/verify")]
pub async fn verify_banking(
    state: web::Data<AppState>,
    caller: Caller,
    id: PathId<EnrollmentId>,
    Body(input, ..): Body<DepositsInput>,
) -> Result<Reply, ApiError> {
    // Left out, the service names the field (after refusing a hosted
    // enrollment, like every step).
    let amounts = input.amounts_cents.unwrap_or_default();
    let result = state
        .onboarding
        .confirm_deposits(&caller.scope(), &id, &amounts)
        .await;
    step(&caller, result)
}

/// Save the plan choices (embedded enrollments); a field left out takes
/// its default. The step completes once the signatory signs.
#[utoipa::path(
    tag = "Onboarding",
    operation_id = "put_plan_setup",
    params(EnrollmentPath, IdempotencyKey),
    request_body = PlanSetupInput,
    responses(
        (status = 200, description = "The `plan_setup` step", body = StepOut),
        (status = 400, description = "A field is invalid", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "min_hours_per_week: must be an integer from 20 to 40",
                          "details": [{"field": "min_hours_per_week", "message": "must be an integer from 20 to 40"}]})),
        StepErrors,
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[put("/enrollments/{id}/onboarding/plan_setup")]
pub async fn put_plan_setup(
    state: web::Data<AppState>,
    caller: Caller,
    id: PathId<EnrollmentId>,
    Body(input, ..): Body<PlanSetupInput, Optional>,
) -> Result<Reply, ApiError> {
    let result = state
        .onboarding
        .save_plan(&caller.scope(), &id, input.into())
        .await;
    step(&caller, result)
}

/// Sign the plan documents for the saved choices (embedded enrollments).
///
/// `signer_name` must be the enrollment's signatory; recorded with the
/// signatory's email, the time, the caller's IP address and user agent and
/// the SHA-256 of each document. A signed step cannot be unsigned.
#[utoipa::path(
    tag = "Onboarding",
    operation_id = "sign_plan_setup",
    params(EnrollmentPath, IdempotencyKey),
    request_body = SignatureInput,
    responses(
        (status = 200, description = "The `plan_setup` step, `completed`", body = StepOut),
        (status = 400, description = "Another name, or `accepted` is not true", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "signer_name: must be the signatory's full name as given on the enrollment",
                          "details": [{"field": "signer_name", "message": "must be the signatory's full name as given on the enrollment"}]})),
        StepErrors,
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[post("/enrollments/{id}/onboarding/plan_setup/sign")]
pub async fn sign_plan_setup(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    id: PathId<EnrollmentId>,
    Body(input, ..): Body<SignatureInput>,
) -> Result<Reply, ApiError> {
    let ip = source_ip(&req, &state.config).map(|ip| ip.to_string());
    let agent = req
        .headers()
        .get(actix_web::http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let result = state
        .onboarding
        .sign_plan(&caller.scope(), &id, input.with_origin(ip, agent))
        .await;
    step(&caller, result)
}

/// Invite the employees (embedded enrollments; optional step): live mode
/// emails every census member with an address; test mode records the
/// invitations as suppressed.
#[utoipa::path(
    tag = "Onboarding",
    operation_id = "send_employee_invitations",
    params(EnrollmentPath, IdempotencyKey),
    request_body(content = Option<NoFields>, description = "None, or `{}`", example = json!({})),
    responses(
        (status = 200, description = "The `employee_invitations` step", body = StepOut),
        (status = 400, description = "The body is not empty and not `{}`", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "to: is not a known field",
                          "details": [{"field": "to", "message": "is not a known field"}]})),
        StepErrors,
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[post("/enrollments/{id}/onboarding/employee_invitations")]
pub async fn send_employee_invitations(
    state: web::Data<AppState>,
    caller: Caller,
    id: PathId<EnrollmentId>,
    _: Body<NoFields, Optional>,
) -> Result<Reply, ApiError> {
    let result = state
        .onboarding
        .send_invitations(&caller.scope(), &id)
        .await;
    step(&caller, result)
}
