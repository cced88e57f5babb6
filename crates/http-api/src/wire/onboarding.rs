//! Embedded onboarding (onboarding §4): `GET /enrollments/{id}/onboarding`
//! and the bodies of the step endpoints an HR platform calls for an
//! embedded enrollment. Every field is optional on the wire so that the
//! checklist's rules name each missing or bad one at once.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use domain::onboarding::fields::AddressInput;
use domain::services::enrollments::mode_str;
use domain::services::onboarding::{BankInput, OnboardingView, PlanInput, ProfileInput, SignInput};

use crate::casing::Style;
use crate::error::ApiError;
use crate::wire::enrollments::{OnboardingOut, StepOut};

/// An enrollment's onboarding (`GET /enrollments/{id}/onboarding`).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({
    "enrollment_id": "enr_0b7d2c9e4a11", "onboarding_mode": "embedded", "status": "onboarding",
    "company_state": "sandbox",
    "onboarding": {"percent_complete": 25, "blocking_remaining": 3, "steps": [
        {"id": "company_profile", "title": "Company profile", "required": true, "status": "completed",
         "completed_at": "2026-11-21T13:20:00Z", "requirements": [], "errors": [],
         "data": {"legal_name": "Acme Manufacturing LLC", "ein": "12-3456789", "entity_type": "llc",
                  "address": {"line1": "100 Main St", "line2": null, "city": "Chicago", "state": "IL", "zip": "60601"},
                  "phone": "+13125550100", "signatory_title": "CFO"}},
        {"id": "business_verification", "title": "Business verification", "required": true,
         "status": "action_required", "completed_at": null, "requirements": [],
         "errors": [{"field": "ein", "code": "verification_failed", "message": "The EIN does not match the legal name"}],
         "data": {"ein": "11-1111111", "legal_name": "Acme Manufacturing LLC", "requested_at": "2026-11-21T13:21:00Z"}}]},
    "next_steps": ["Request business verification: POST /v1/enrollments/{id}/onboarding/business_verification."]
}))]
pub struct OnboardingRead {
    /// The enrollment.
    #[schema(example = "enr_0b7d2c9e4a11")]
    pub enrollment_id: String,
    /// `hosted` or `embedded`.
    #[schema(value_type = crate::wire::enums::OnboardingMode, example = "embedded")]
    pub onboarding_mode: String,
    /// `onboarding`, `in_review` or `active`.
    #[schema(value_type = crate::wire::enums::EnrollmentStatus, example = "onboarding")]
    pub status: String,
    /// `sandbox` until the company goes live, then `prod`.
    #[schema(required = true, value_type = Option<crate::wire::enums::CompanyState>, example = "sandbox")]
    pub company_state: Option<String>,
    /// Progress and the five steps.
    pub onboarding: OnboardingOut,
    /// One sentence per step not completed, required first.
    pub next_steps: Vec<String>,
}

impl OnboardingRead {
    /// The answer for a caller of `style`.
    ///
    /// # Errors
    /// 500 when a step does not serialize (a bug).
    pub fn of(v: &OnboardingView, style: Style) -> Result<Self, ApiError> {
        Ok(Self {
            enrollment_id: v.enrollment.id.as_str().to_owned(),
            onboarding_mode: mode_str(v.enrollment.onboarding_mode).to_owned(),
            status: v.status.as_str().to_owned(),
            company_state: v.group.company_state.map(|s| s.as_str().to_owned()),
            onboarding: OnboardingOut {
                percent_complete: v.progress.percent_complete,
                blocking_remaining: v.progress.blocking_remaining,
                steps: v
                    .steps
                    .iter()
                    .map(|s| StepOut::of(s, style))
                    .collect::<Result<_, _>>()?,
            },
            next_steps: v.next_steps.clone(),
        })
    }
}

/// The company's street address.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct ProfileAddressInput {
    /// Street line.
    #[schema(example = "100 Main St")]
    pub line1: Option<String>,
    /// Suite or unit.
    #[schema(example = "Suite 400")]
    pub line2: Option<String>,
    /// City.
    #[schema(example = "Chicago")]
    pub city: Option<String>,
    /// Two-letter state.
    #[schema(example = "IL", pattern = "^[A-Z]{2}$")]
    pub state: Option<String>,
    /// Five-digit ZIP.
    #[schema(example = "60601", pattern = "^[0-9]{5}$")]
    pub zip: Option<String>,
}

/// The body of `PUT /enrollments/{id}/onboarding/company_profile`: the
/// whole profile (a field left out is missing, and the step stays
/// `in_progress` with it in `requirements`).
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[schema(example = json!({
    "legal_name": "Acme Manufacturing LLC", "ein": "12-3456789", "entity_type": "llc",
    "address": {"line1": "100 Main St", "city": "Chicago", "state": "IL", "zip": "60601"},
    "phone": "(312) 555-0100", "signatory_title": "CFO"
}))]
pub struct CompanyProfileInput {
    /// Legal name, 1 to 200 characters.
    #[schema(example = "Acme Manufacturing LLC")]
    pub legal_name: Option<String>,
    /// `NN-NNNNNNN` or 9 digits, with a prefix the IRS assigns.
    #[schema(example = "12-3456789")]
    pub ein: Option<String>,
    /// `c_corporation`, `s_corporation`, `llc`, `partnership`,
    /// `sole_proprietorship` or `nonprofit`.
    #[schema(example = "llc")]
    pub entity_type: Option<String>,
    /// Street address.
    pub address: Option<ProfileAddressInput>,
    /// 10 US digits in any formatting (an optional leading `+1` or `1`);
    /// shown as E.164.
    #[schema(example = "(312) 555-0100")]
    pub phone: Option<String>,
    /// The signatory's title, 1 to 100 characters.
    #[schema(example = "CFO")]
    pub signatory_title: Option<String>,
}

impl From<CompanyProfileInput> for ProfileInput {
    fn from(w: CompanyProfileInput) -> Self {
        Self {
            legal_name: w.legal_name,
            ein: w.ein,
            entity_type: w.entity_type,
            address: w.address.map(|a| AddressInput {
                line1: a.line1,
                line2: a.line2,
                city: a.city,
                state: a.state,
                zip: a.zip,
            }),
            phone: w.phone,
            signatory_title: w.signatory_title,
        }
    }
}

/// The body of `PUT /enrollments/{id}/onboarding/banking`. The account
/// number is encrypted at rest and never returned; two micro-deposits are
/// sent (test mode: always 32 and 45 cents).
#[derive(Clone, Default, Deserialize, ToSchema)]
#[schema(example = json!({
    "routing_number": "021000021", "account_number": "000123456789",
    "account_type": "checking", "holder_name": "Acme Manufacturing LLC"
}))]
pub struct BankingInput {
    /// 9 digits passing the ABA checksum.
    #[schema(example = "021000021", pattern = "^[0-9]{9}$")]
    pub routing_number: Option<String>,
    /// 4 to 17 digits.
    #[schema(example = "000123456789", pattern = "^[0-9]{4,17}$")]
    pub account_number: Option<String>,
    /// `checking` or `savings`.
    #[schema(example = "checking")]
    pub account_type: Option<String>,
    /// The account holder, 1 to 100 characters.
    #[schema(example = "Acme Manufacturing LLC")]
    pub holder_name: Option<String>,
}

impl std::fmt::Debug for BankingInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BankingInput")
            .field("routing_number", &self.routing_number)
            .field("account_number", &"[redacted]")
            .field("account_type", &self.account_type)
            .field("holder_name", &self.holder_name)
            .finish()
    }
}

impl From<BankingInput> for BankInput {
    fn from(w: BankingInput) -> Self {
        Self {
            routing_number: w.routing_number,
            account_number: w.account_number,
            account_type: w.account_type,
            holder_name: w.holder_name,
        }
    }
}

/// The body of `POST /enrollments/{id}/onboarding/banking/verify`.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[schema(example = json!({"amounts_cents": [32, 45]}))]
pub struct DepositsInput {
    /// The two micro-deposit amounts, in cents (1 to 99 each), in either
    /// order. Three wrong answers void the account.
    #[schema(example = json!([32, 45]))]
    pub amounts_cents: Option<Vec<i64>>,
}

/// The body of `PUT /enrollments/{id}/onboarding/plan_setup`; a field
/// left out takes its default. Changing the choices after signing needs
/// a new signature.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[schema(example = json!({
    "plan_id": "diamond", "employer_contribution_pct": 80,
    "waiting_period": "first_of_month_after_hire", "min_hours_per_week": 30
}))]
pub struct PlanSetupInput {
    /// `diamond` or `value`; default the quote's.
    #[schema(example = "diamond")]
    pub plan_id: Option<String>,
    /// 0 to 100; default the quote's.
    #[schema(example = 80, minimum = 0, maximum = 100)]
    pub employer_contribution_pct: Option<i64>,
    /// `none`, `first_of_month_after_hire` (default), `30_days` or
    /// `60_days`.
    #[schema(example = "first_of_month_after_hire")]
    pub waiting_period: Option<String>,
    /// 20 to 40; default 30.
    #[schema(example = 30, minimum = 20, maximum = 40)]
    pub min_hours_per_week: Option<i64>,
}

impl From<PlanSetupInput> for PlanInput {
    fn from(w: PlanSetupInput) -> Self {
        Self {
            plan_id: w.plan_id,
            employer_contribution_pct: w.employer_contribution_pct,
            waiting_period: w.waiting_period,
            min_hours_per_week: w.min_hours_per_week,
        }
    }
}

/// The body of `POST /enrollments/{id}/onboarding/plan_setup/sign`.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[schema(example = json!({"signer_name": "Dana Lee", "accepted": true}))]
pub struct SignatureInput {
    /// The signatory's full name as typed: must equal the enrollment's
    /// signatory name (case- and space-insensitive).
    #[schema(example = "Dana Lee")]
    pub signer_name: Option<String>,
    /// Must be `true`: the signatory accepts the plan documents.
    #[schema(example = true)]
    pub accepted: Option<bool>,
}

impl SignatureInput {
    /// The domain's input, with where the request came from.
    #[must_use]
    pub fn with_origin(self, ip: Option<String>, user_agent: Option<String>) -> SignInput {
        SignInput {
            signer_name: self.signer_name,
            accepted: self.accepted,
            ip,
            user_agent,
        }
    }
}

/// The body of a step action that takes no fields: none, or `{}`.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[schema(example = json!({}))]
pub struct NoFields {}
