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

/// Writes a step endpoint: its operation (the step as the 200, the 400
/// with its example, [`StepErrors`] and [`CommonErrors`]) and its handler.
/// The handler is written as `pub async fn name(state, caller, id, input:
/// Body<..>, extra: Type..) { call }`: `state`, `caller` and `id` take the
/// extractors every step takes, `input` is the body's content (`_none`
/// when the step takes none), and `call`, one onboarding method, gives the
/// step.
macro_rules! step_endpoint {
    (
        $(#[doc = $doc:tt])*
        #[step(
            $method:ident($path:literal),
            request_body($($request_body:tt)*),
            ok = $ok:literal,
            bad_request = $bad_request:literal,
            example = ($field:literal, $message:literal) $(,)?
        )]
        pub async fn $name:ident(
            $state:ident,
            $caller:ident,
            $id:ident,
            $input:ident: $input_ty:ty
            $(, $extra:ident: $extra_ty:ty)* $(,)?
        ) $call:block
    ) => {
        $(#[doc = $doc])*
        #[utoipa::path(
            tag = "Onboarding",
            operation_id = stringify!($name),
            params(EnrollmentPath, IdempotencyKey),
            request_body($($request_body)*),
            responses(
                (status = 200, description = $ok, body = StepOut),
                (status = 400, description = $bad_request, body = ErrorBody,
                 example = json!({"error": "invalid_request", "message": concat!($field, ": ", $message),
                                  "details": [{"field": $field, "message": $message}]})),
                StepErrors,
                CommonErrors
            ),
            security(("bearer" = []))
        )]
        #[$method($path)]
        pub async fn $name(
            $state: web::Data<AppState>,
            $caller: Caller,
            $id: PathId<EnrollmentId>,
            Body($input, ..): $input_ty,
            $($extra: $extra_ty,)*
        ) -> Result<Reply, ApiError> {
            step(&$caller, $call)
        }
    };
}

step_endpoint! {
    /// Save the company profile (embedded enrollments).
    ///
    /// The whole profile: a field left out is missing and listed in the
    /// step's `requirements`. Editing a verified profile sends business
    /// verification back to `not_started`.
    #[step(
        put("/enrollments/{id}/onboarding/company_profile"),
        request_body(content = CompanyProfileInput),
        ok = "The `company_profile` step",
        bad_request = "A field is invalid",
        example = ("ein", "must be an EIN: NN-NNNNNNN or 9 digits"),
    )]
    pub async fn put_company_profile(state, caller, id, input: Body<CompanyProfileInput>) {
        state
            .onboarding
            .save_profile(&caller.scope(), &id, input.into())
            .await
    }
}

step_endpoint! {
    /// Ask for business verification of the saved profile (embedded
    /// enrollments).
    ///
    /// Test mode verifies every valid EIN at once, except `11-1111111`
    /// (refused: the step is `action_required` with a `verification_failed`
    /// error on `ein`) and `22-2222222` (`pending`, then `completed` after
    /// 60 s). A refusal is the step's status, not an HTTP error: correct the
    /// profile and ask again.
    #[step(
        post("/enrollments/{id}/onboarding/business_verification"),
        request_body(content = Option<NoFields>, description = "None, or `{}`", example = json!({})),
        ok = "The `business_verification` step",
        bad_request = "The body is not empty and not `{}`",
        example = ("force", "is not a known field"),
    )]
    pub async fn request_business_verification(state, caller, id, _none: Body<NoFields, Optional>) {
        state
            .onboarding
            .request_verification(&caller.scope(), &id)
            .await
    }
}

step_endpoint! {
    /// Save the bank account (embedded enrollments) and send its two
    /// micro-deposits.
    ///
    /// The account number is encrypted at rest and never returned (the step
    /// shows `last4`). The step is `pending` until the two amounts are
    /// confirmed; test mode always sends 32 and 45 cents.
    #[step(
        put("/enrollments/{id}/onboarding/banking"),
        request_body(content = BankingInput),
        ok = "The `banking` step",
        bad_request = "A field is invalid",
        example = ("routing_number", "must be a 9-digit ABA routing number"),
    )]
    pub async fn put_banking(state, caller, id, input: Body<BankingInput>) {
        state
            .onboarding
            .save_bank(&caller.scope(), &id, input.into())
            .await
    }
}

step_endpoint! {
    /// Confirm the two micro-deposit amounts (embedded enrollments).
    ///
    /// Right: the step is `completed`. Wrong: it stays `pending`; the third
    /// wrong answer makes it `action_required` (`verification_failed` on
    /// `amounts_cents`) and the account must be saved again. Neither is an
    /// HTTP error.
    #[step(
        post("/enrollments/{id}/onboarding/banking/verify"),
        request_body(content = DepositsInput),
        ok = "The `banking` step",
        bad_request = "Not two amounts of 1 to 99 cents",
        example = ("amounts_cents", "must be two amounts of 1 to 99 cents"),
    )]
    pub async fn verify_banking(state, caller, id, input: Body<DepositsInput>) {
        // Left out, the service names the field (after refusing a hosted
        // enrollment, like every step).
        let amounts = input.amounts_cents.unwrap_or_default();
        state
            .onboarding
            .confirm_deposits(&caller.scope(), &id, &amounts)
            .await
    }
}

step_endpoint! {
    /// Save the plan choices (embedded enrollments); a field left out takes
    /// its default. The step completes once the signatory signs.
    #[step(
        put("/enrollments/{id}/onboarding/plan_setup"),
        request_body(content = PlanSetupInput),
        ok = "The `plan_setup` step",
        bad_request = "A field is invalid",
        example = ("min_hours_per_week", "must be an integer from 20 to 40"),
    )]
    pub async fn put_plan_setup(state, caller, id, input: Body<PlanSetupInput, Optional>) {
        state
            .onboarding
            .save_plan(&caller.scope(), &id, input.into())
            .await
    }
}

step_endpoint! {
    /// Sign the plan documents for the saved choices (embedded enrollments).
    ///
    /// `signer_name` must be the enrollment's signatory; recorded with the
    /// signatory's email, the time, the caller's IP address and user agent and
    /// the SHA-256 of each document. A signed step cannot be unsigned.
    #[step(
        post("/enrollments/{id}/onboarding/plan_setup/sign"),
        request_body(content = SignatureInput),
        ok = "The `plan_setup` step, `completed`",
        bad_request = "Another name, or `accepted` is not true",
        example = ("signer_name", "must be the signatory's full name as given on the enrollment"),
    )]
    pub async fn sign_plan_setup(state, caller, id, input: Body<SignatureInput>, req: HttpRequest) {
        let ip = source_ip(&req, &state.config).map(|ip| ip.to_string());
        let agent = req
            .headers()
            .get(actix_web::http::header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        state
            .onboarding
            .sign_plan(&caller.scope(), &id, input.with_origin(ip, agent))
            .await
    }
}

step_endpoint! {
    /// Invite the employees (embedded enrollments; optional step): live mode
    /// emails every census member with an address; test mode records the
    /// invitations as suppressed.
    #[step(
        post("/enrollments/{id}/onboarding/employee_invitations"),
        request_body(content = Option<NoFields>, description = "None, or `{}`", example = json!({})),
        ok = "The `employee_invitations` step",
        bad_request = "The body is not empty and not `{}`",
        example = ("to", "is not a known field"),
    )]
    pub async fn send_employee_invitations(state, caller, id, _none: Body<NoFields, Optional>) {
        state
            .onboarding
            .send_invitations(&caller.scope(), &id)
            .await
    }
}
