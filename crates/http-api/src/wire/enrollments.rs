//! Enrollments: `POST /groups/{groupId}/enrollments`, `GET
//! /groups/{groupId}/enrollments` and `GET /enrollments/{id}`
//! (specification, Enrollment; contract section 3).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use domain::document::EnrollmentDocument;
use domain::services::enrollments::{EnrollmentView, mode_str};

use crate::error::ApiError;
use crate::wire::timestamp;

/// The signatory.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct SignatoryInput {
    /// Name, 1 to 200 characters.
    #[schema(example = "Dana Lee")]
    pub name: Option<String>,
    /// Email; in hosted mode the employer-portal admin's login.
    #[schema(example = "dana@acme-mfg.com")]
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
    /// census (required).
    #[schema(example = "qt_1a2b3c4d5e6f")]
    pub quote_id: Option<String>,
    /// Who signs (required).
    pub signatory: Option<SignatoryInput>,
    /// `hosted` (default: onboarding in the employer portal) or `embedded`
    /// (onboarding inside the partner's product).
    #[schema(example = "hosted")]
    pub onboarding_mode: Option<String>,
    /// Coverage start; default the quote's plan-year start.
    #[schema(format = Date, example = "2026-12-01")]
    pub start_date: Option<String>,
}

/// An enrollment.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "enr_0b7d2c9e4a11", "group_id": "grp_8c1e4a2f9b3d", "quote_id": "qt_1a2b3c4d5e6f",
    "mode": "test", "status": "onboarding", "start_date": "2026-12-01",
    "company_domain": "acme-mfg.com", "company_state": "sandbox", "onboarding_mode": "hosted",
    "onboarding": {"percent_complete": 0, "blocking_remaining": 4},
    "next_steps": ["The signatory sets a password and signs in to the employer portal."],
    "employer_portal": {"provisioned": true, "signin_url": "https://portal.service.example/signin?company=acme-mfg.com",
        "invite_suppressed": true, "set_password_url": "https://portal.service.example/set-password?token=5f0c…"},
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
    pub mode: String,
    /// `hosted` or `embedded`.
    pub onboarding_mode: String,
    /// `sandbox` until the group goes live, then `prod`.
    #[schema(example = "sandbox")]
    pub company_state: Option<String>,
    /// The figures.
    #[serde(flatten)]
    pub figures: EnrollmentDocument,
    /// Creation time.
    #[schema(format = DateTime)]
    pub created_at: String,
}

impl EnrollmentOut {
    /// The answer for a stored enrollment.
    ///
    /// # Errors
    /// 500 when the stored document does not read back (a bug).
    pub fn of(v: &EnrollmentView) -> Result<Self, ApiError> {
        let e = &v.enrollment;
        let figures = e.body.clone();
        Ok(Self {
            id: e.id.as_str().to_owned(),
            group_id: e.group_id.as_str().to_owned(),
            quote_id: e.quote_id.as_str().to_owned(),
            mode: e.scope.mode.as_str().to_owned(),
            onboarding_mode: mode_str(e.onboarding_mode).to_owned(),
            company_state: v.company_state.map(|s| s.as_str().to_owned()),
            figures,
            created_at: timestamp(e.created_at),
        })
    }
}

/// The group's enrollments: zero or one.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"enrollments": [{
    "id": "enr_0b7d2c9e4a11", "group_id": "grp_8c1e4a2f9b3d", "quote_id": "qt_1a2b3c4d5e6f",
    "mode": "test", "status": "onboarding", "start_date": "2026-12-01",
    "company_domain": "acme-mfg.com", "company_state": "sandbox", "onboarding_mode": "embedded",
    "onboarding": {"percent_complete": 0, "blocking_remaining": 4},
    "next_steps": ["Collect business verification details in your product."],
    "created_at": "2026-11-21T13:14:00Z"
}], "count": 1, "next_cursor": null}))]
pub struct EnrollmentList {
    /// Zero or one enrollment.
    pub enrollments: Vec<EnrollmentOut>,
    /// How many (0 or 1).
    pub count: u64,
    /// Always null: a group has at most one enrollment.
    pub next_cursor: Option<String>,
}
