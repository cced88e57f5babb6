//! Enrollments: `POST /groups/{groupId}/enrollments`, `GET
//! /groups/{groupId}/enrollments` and `GET /enrollments/{id}`
//! (specification, Enrollment; contract section 3).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use domain::document::enrollment::EmployerPortal;
use domain::onboarding::{StepView, enrollment_status};
use domain::services::enrollments::{EnrollmentView, mode_str};

use crate::casing::{Style, path_to_style};
use crate::error::ApiError;
use crate::wire::timestamp;

/// The signatory.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct SignatoryInput {
    /// Name, 1 to 200 characters.
    #[schema(required = true, example = "Dana Lee")]
    pub name: Option<String>,
    /// Email; in hosted mode the employer-portal admin's login.
    #[schema(required = true, example = "dana@acme-mfg.com")]
    pub email: Option<String>,
}

/// The body of `POST /groups/{groupId}/enrollments`.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[schema(example = json!({
    "quote_id": "qt_1a2b3c4d5e6f",
    "signatory": {"name": "Dana Lee", "email": "dana@acme-mfg.com"},
    "onboarding_mode": "hosted"
}))]
pub struct EnrollmentInput {
    /// A `ready`, unexpired quote of this group, priced on its current
    /// census.
    #[schema(required = true, example = "qt_1a2b3c4d5e6f")]
    pub quote_id: Option<String>,
    /// Who signs.
    #[schema(required = true)]
    pub signatory: Option<SignatoryInput>,
    /// `hosted` (default: onboarding in the employer portal) or `embedded`
    /// (onboarding inside the partner's product).
    #[schema(example = "hosted")]
    pub onboarding_mode: Option<String>,
    /// Coverage start; default the quote's plan-year start.
    #[schema(format = Date, example = "2026-12-01")]
    pub start_date: Option<String>,
}

/// A step's refusal by a verifier.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct StepErrorOut {
    /// The field refused.
    #[schema(example = "ein")]
    pub field: String,
    /// `verification_failed`.
    #[schema(example = "verification_failed")]
    pub code: String,
    /// What a person reads.
    #[schema(example = "The EIN does not match the legal name")]
    pub message: String,
}

/// One onboarding step.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "banking", "title": "Banking", "required": true, "status": "pending",
    "completed_at": null, "requirements": [], "errors": [],
    "data": {"routing_number": "021000021", "last4": "6789", "account_type": "checking",
             "holder_name": "Acme Manufacturing LLC"}
}))]
pub struct StepOut {
    /// `company_profile`, `business_verification`, `banking`,
    /// `plan_setup` or `employee_invitations`.
    #[schema(example = "company_profile")]
    pub id: String,
    /// Title.
    #[schema(example = "Company profile")]
    pub title: String,
    /// Whether going live waits for it.
    pub required: bool,
    /// `not_started`, `in_progress`, `pending`, `action_required` or
    /// `completed`.
    #[schema(value_type = crate::wire::enums::StepStatus, example = "not_started")]
    pub status: String,
    /// When it was completed.
    #[schema(required = true, format = DateTime)]
    pub completed_at: Option<String>,
    /// Top-level fields still missing.
    pub requirements: Vec<String>,
    /// A verifier's refusal.
    pub errors: Vec<StepErrorOut>,
    /// The values saved (never an account number), or null.
    #[schema(required = true, value_type = Option<Object>)]
    pub data: Option<serde_json::Value>,
}

impl StepOut {
    /// The wire form of a step; field names in `requirements` and
    /// `errors` follow the caller's field `style`, like every field path.
    ///
    /// # Errors
    /// 500 when the step's data does not serialize (a bug).
    pub fn of(step: &StepView, style: Style) -> Result<Self, ApiError> {
        Ok(Self {
            id: step.id.as_str().to_owned(),
            title: step.title.to_owned(),
            required: step.required,
            status: step.status.as_str().to_owned(),
            completed_at: step.completed_at.clone(),
            requirements: step.requirements.iter().map(|r| style.name(r)).collect(),
            errors: step
                .errors
                .iter()
                .map(|e| StepErrorOut {
                    field: path_to_style(&e.field, style),
                    code: e.code.clone(),
                    message: e.message.clone(),
                })
                .collect(),
            data: step
                .data
                .as_ref()
                .map(serde_json::to_value)
                .transpose()
                .map_err(ApiError::internal)?,
        })
    }
}

/// `onboarding`: progress over the four required steps, and the steps.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OnboardingOut {
    /// ⌊100 × completed required steps ÷ 4⌋.
    #[schema(example = 0)]
    pub percent_complete: u32,
    /// Required steps not completed.
    #[schema(example = 4)]
    pub blocking_remaining: u32,
    /// The five steps, in order.
    pub steps: Vec<StepOut>,
}

/// An enrollment.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "enr_0b7d2c9e4a11", "group_id": "grp_8c1e4a2f9b3d", "quote_id": "qt_1a2b3c4d5e6f",
    "mode": "test", "onboarding_mode": "hosted", "company_state": "sandbox",
    "status": "onboarding", "start_date": "2026-12-01", "company_domain": "acme-mfg.com",
    "onboarding": {"percent_complete": 0, "blocking_remaining": 4, "steps": [
        {"id": "company_profile", "title": "Company profile", "required": true, "status": "not_started",
         "completed_at": null, "requirements": ["legal_name", "ein", "entity_type", "address", "phone", "signatory_title"],
         "errors": [], "data": null}]},
    "next_steps": ["The employer enters the company profile in the employer portal."],
    "employer_portal": {"provisioned": true, "signin_url": "http://127.0.0.1:8080/portal/sign-in",
        "invite_suppressed": true, "set_password_url": "http://127.0.0.1:8080/portal/set-password?token=5f0c…"},
    "created_at": "2026-11-21T13:14:00Z"
}))]
pub struct EnrollmentOut {
    /// `enr_` id.
    #[schema(example = "enr_0b7d2c9e4a11")]
    pub id: String,
    /// Group.
    pub group_id: String,
    /// Quote enrolled on.
    pub quote_id: String,
    /// `test` or `live`.
    #[schema(value_type = crate::wire::enums::Mode)]
    pub mode: String,
    /// `hosted` or `embedded`.
    #[schema(value_type = crate::wire::enums::OnboardingMode)]
    pub onboarding_mode: String,
    /// `sandbox` until the group goes live, then `prod`.
    #[schema(required = true, value_type = Option<crate::wire::enums::CompanyState>, example = "sandbox")]
    pub company_state: Option<String>,
    /// `onboarding`, `in_review` (live mode, every required step done) or
    /// `active` (the company is `prod`).
    #[schema(value_type = crate::wire::enums::EnrollmentStatus, example = "onboarding")]
    pub status: String,
    /// Coverage start.
    #[schema(format = Date, example = "2026-12-01")]
    pub start_date: String,
    /// The group's domain.
    pub company_domain: String,
    /// Progress and steps.
    pub onboarding: OnboardingOut,
    /// One sentence per step not completed, required first.
    pub next_steps: Vec<String>,
    /// Hosted mode only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub employer_portal: Option<EmployerPortal>,
    /// Creation time.
    #[schema(format = DateTime)]
    pub created_at: String,
}

impl EnrollmentOut {
    /// The answer for a stored enrollment, for a caller of `style`.
    ///
    /// # Errors
    /// 500 when a step does not serialize (a bug).
    pub fn of(v: &EnrollmentView, style: Style) -> Result<Self, ApiError> {
        let e = &v.enrollment;
        let c = &e.onboarding;
        let progress = c.progress();
        Ok(Self {
            id: e.id.as_str().to_owned(),
            group_id: e.group_id.as_str().to_owned(),
            quote_id: e.quote_id.as_str().to_owned(),
            mode: e.scope.mode.as_str().to_owned(),
            onboarding_mode: mode_str(e.onboarding_mode).to_owned(),
            company_state: v.company_state.map(|s| s.as_str().to_owned()),
            status: enrollment_status(c, e.scope.mode, v.company_state)
                .as_str()
                .to_owned(),
            start_date: e.body.start_date.clone(),
            company_domain: e.body.company_domain.clone(),
            onboarding: OnboardingOut {
                percent_complete: progress.percent_complete,
                blocking_remaining: progress.blocking_remaining,
                steps: c
                    .steps()
                    .iter()
                    .map(|s| StepOut::of(s, style))
                    .collect::<Result<_, _>>()?,
            },
            next_steps: c.next_steps(e.onboarding_mode),
            employer_portal: v.employer_portal.clone(),
            created_at: timestamp(e.created_at),
        })
    }
}

/// A fresh set-password link of the employer portal (`POST
/// /enrollments/{id}/portal_links`).
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "set_password_url": "http://127.0.0.1:8080/portal/set-password?token=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "signin_url": "http://127.0.0.1:8080/portal/sign-in",
    "expires_at": "2026-12-03T13:14:00Z"
}))]
pub struct PortalLinkOut {
    /// Works once, for 7 days; older unused links stopped working.
    pub set_password_url: String,
    /// Where the admin signs in.
    pub signin_url: String,
    /// When the link stops working.
    #[schema(format = DateTime)]
    pub expires_at: String,
}

impl PortalLinkOut {
    /// The answer for an issued link.
    #[must_use]
    pub fn of(link: &domain::services::portal::IssuedLink) -> Self {
        Self {
            set_password_url: link.set_password_url.clone(),
            signin_url: link.signin_url.clone(),
            expires_at: timestamp(link.expires_at),
        }
    }
}

/// The group's enrollments: zero or one.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"enrollments": [{
    "id": "enr_0b7d2c9e4a11", "group_id": "grp_8c1e4a2f9b3d", "quote_id": "qt_1a2b3c4d5e6f",
    "mode": "test", "onboarding_mode": "embedded", "company_state": "sandbox",
    "status": "onboarding", "start_date": "2026-12-01", "company_domain": "acme-mfg.com",
    "onboarding": {"percent_complete": 0, "blocking_remaining": 4, "steps": []},
    "next_steps": ["Send the company profile: PUT /v1/enrollments/{id}/onboarding/company_profile."],
    "created_at": "2026-11-21T13:14:00Z"
}], "count": 1, "next_cursor": null}))]
pub struct EnrollmentList {
    /// Zero or one enrollment.
    pub enrollments: Vec<EnrollmentOut>,
    /// How many (0 or 1).
    pub count: u64,
    /// Always null: a group has at most one enrollment.
    #[schema(required = true)]
    pub next_cursor: Option<String>,
}
