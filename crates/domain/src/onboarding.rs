//! The onboarding checklist of an enrollment (onboarding §1 and §2): five
//! steps in a fixed order, the typed state of each, the prerequisites, and
//! what is derived from them — `percentComplete`, `blockingRemaining`,
//! `nextSteps` and the enrollment's status. The transitions are pure: the
//! onboarding service applies one to the stored checklist and stores the
//! result with its events in one transaction.

pub mod documents;
pub mod fields;
#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
mod steps;
mod view;

use serde::{Deserialize, Serialize};

use crate::enrollment::OnboardingMode;
use crate::group::CompanyState;
use crate::mode::Mode;

pub use steps::{
    BankAccount, CompanyProfile, DepositCheck, Invitations, PlanChoices, Signature, SignedDocument,
    Verification, VerifierAnswer,
};
pub use view::{StepData, StepView};

/// A step of the checklist; the ids are stable API values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepId {
    /// Legal name, EIN, entity type, address, phone, signatory title.
    CompanyProfile,
    /// The business verifier's answer for the saved profile.
    BusinessVerification,
    /// A bank account, verified by micro-deposits.
    Banking,
    /// Plan choices, and the signatory's signature on the plan documents.
    PlanSetup,
    /// Invitations to the employees (not required).
    EmployeeInvitations,
}

impl StepId {
    /// Every step, in order.
    pub const ALL: [Self; 5] = [
        Self::CompanyProfile,
        Self::BusinessVerification,
        Self::Banking,
        Self::PlanSetup,
        Self::EmployeeInvitations,
    ];

    /// The number of required steps.
    pub const REQUIRED: u32 = 4;

    /// Wire id.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::CompanyProfile => "company_profile",
            Self::BusinessVerification => "business_verification",
            Self::Banking => "banking",
            Self::PlanSetup => "plan_setup",
            Self::EmployeeInvitations => "employee_invitations",
        }
    }

    /// Parses a wire id.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// The step's title.
    #[must_use]
    pub const fn title(self) -> &'static str {
        match self {
            Self::CompanyProfile => "Company profile",
            Self::BusinessVerification => "Business verification",
            Self::Banking => "Banking",
            Self::PlanSetup => "Plan setup",
            Self::EmployeeInvitations => "Employee invitations",
        }
    }

    /// Whether going live waits for it.
    #[must_use]
    pub const fn required(self) -> bool {
        !matches!(self, Self::EmployeeInvitations)
    }

    /// The step that must be completed before this one can start.
    #[must_use]
    pub const fn needs(self) -> Option<Self> {
        match self {
            Self::BusinessVerification => Some(Self::CompanyProfile),
            Self::PlanSetup => Some(Self::Banking),
            Self::EmployeeInvitations => Some(Self::PlanSetup),
            Self::CompanyProfile | Self::Banking => None,
        }
    }

    /// What the partner reads about a step not yet completed.
    #[must_use]
    pub const fn next_step(self, mode: OnboardingMode) -> &'static str {
        match (mode, self) {
            (OnboardingMode::Hosted, Self::CompanyProfile) => {
                "The employer enters the company profile in the employer portal."
            }
            (OnboardingMode::Hosted, Self::BusinessVerification) => {
                "The employer submits the company for business verification in the employer portal."
            }
            (OnboardingMode::Hosted, Self::Banking) => {
                "The employer adds a bank account and confirms its two micro-deposits in the employer portal."
            }
            (OnboardingMode::Hosted, Self::PlanSetup) => {
                "The employer chooses the plan settings and signs the plan documents in the employer portal."
            }
            (OnboardingMode::Hosted, Self::EmployeeInvitations) => {
                "The employer invites employees from the employer portal (optional)."
            }
            (OnboardingMode::Embedded, Self::CompanyProfile) => {
                "Send the company profile: PUT /v1/enrollments/{id}/onboarding/company_profile."
            }
            (OnboardingMode::Embedded, Self::BusinessVerification) => {
                "Request business verification: POST /v1/enrollments/{id}/onboarding/business_verification."
            }
            (OnboardingMode::Embedded, Self::Banking) => {
                "Send the bank account, then the two micro-deposit amounts: PUT /v1/enrollments/{id}/onboarding/banking and POST /v1/enrollments/{id}/onboarding/banking/verify."
            }
            (OnboardingMode::Embedded, Self::PlanSetup) => {
                "Send the plan choices and the signatory's signature: PUT /v1/enrollments/{id}/onboarding/plan_setup and POST /v1/enrollments/{id}/onboarding/plan_setup/sign."
            }
            (OnboardingMode::Embedded, Self::EmployeeInvitations) => {
                "Invite the employees: POST /v1/enrollments/{id}/onboarding/employee_invitations (optional)."
            }
        }
    }
}

/// A step's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Nothing saved.
    #[default]
    NotStarted,
    /// Some of it saved.
    InProgress,
    /// Waiting for a verifier.
    Pending,
    /// A verifier refused; `errors` says why.
    ActionRequired,
    /// Done.
    Completed,
}

impl StepStatus {
    /// Wire value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::NotStarted => "not_started",
            Self::InProgress => "in_progress",
            Self::Pending => "pending",
            Self::ActionRequired => "action_required",
            Self::Completed => "completed",
        }
    }
}

/// Why a verifier refused, as a step shows it: `{ field, code, message }`
/// with the API's error codes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepError {
    /// The field refused (`ein`, `amounts_cents`).
    pub field: String,
    /// The API error code (`verification_failed`).
    pub code: String,
    /// What a person reads.
    pub message: String,
}

impl StepError {
    /// A `verification_failed` error on `field`.
    #[must_use]
    pub fn verification_failed(field: &str, message: impl Into<String>) -> Self {
        Self {
            field: field.to_owned(),
            code: "verification_failed".to_owned(),
            message: message.into(),
        }
    }
}

/// One step's stored state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound(deserialize = "T: Deserialize<'de>"))]
pub struct StepState<T> {
    /// Its status.
    #[serde(default)]
    pub status: StepStatus,
    /// When it was completed, Unix seconds.
    #[serde(default)]
    pub completed_at: Option<i64>,
    /// A verifier's refusal.
    #[serde(default)]
    pub errors: Vec<StepError>,
    /// What was saved for it.
    #[serde(default)]
    pub data: Option<T>,
}

impl<T> Default for StepState<T> {
    fn default() -> Self {
        Self {
            status: StepStatus::NotStarted,
            completed_at: None,
            errors: Vec::new(),
            data: None,
        }
    }
}

impl<T> StepState<T> {
    /// Moves to `status`, stamping `completed_at` when it becomes
    /// completed and clearing it otherwise.
    fn set(&mut self, status: StepStatus, now: i64) {
        if status == StepStatus::Completed {
            if self.status != StepStatus::Completed {
                self.completed_at = Some(now);
            }
        } else {
            self.completed_at = None;
        }
        self.status = status;
    }

    /// Whether it is completed.
    #[must_use]
    pub fn done(&self) -> bool {
        self.status == StepStatus::Completed
    }
}

/// An enrollment's checklist.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checklist {
    /// `company_profile`.
    #[serde(default)]
    pub company_profile: StepState<CompanyProfile>,
    /// `business_verification`.
    #[serde(default)]
    pub business_verification: StepState<Verification>,
    /// `banking`.
    #[serde(default)]
    pub banking: StepState<BankAccount>,
    /// `plan_setup`.
    #[serde(default)]
    pub plan_setup: StepState<PlanChoices>,
    /// `employee_invitations`.
    #[serde(default)]
    pub employee_invitations: StepState<Invitations>,
}

impl Checklist {
    /// The stored form (the service's versioned snake_case document).
    ///
    /// # Errors
    /// When the checklist does not serialize.
    pub fn to_stored(&self) -> Result<String, serde_json::Error> {
        crate::document::to_stored(self)
    }

    /// Reads a stored checklist; an empty text is a fresh one (rows made
    /// before checklists were kept).
    ///
    /// # Errors
    /// [`crate::document::DocumentError`] when it does not read.
    pub fn from_stored(text: &str) -> Result<Self, crate::document::DocumentError> {
        if text.is_empty() {
            return Ok(Self::default());
        }
        crate::document::from_stored(text, crate::document::Legacy::Snake)
    }
}

/// An enrollment's status (onboarding §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnrollmentStatus {
    /// Steps remain.
    Onboarding,
    /// Live mode: every required step is done; underwriting confirms.
    InReview,
    /// The company is `prod`.
    Active,
}

impl EnrollmentStatus {
    /// Wire value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Onboarding => "onboarding",
            Self::InReview => "in_review",
            Self::Active => "active",
        }
    }
}

/// `onboarding.percentComplete` and `onboarding.blockingRemaining`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// ⌊100 × completed required steps ÷ 4⌋.
    pub percent_complete: u32,
    /// Required steps not completed.
    pub blocking_remaining: u32,
}

impl Checklist {
    /// A step's status.
    #[must_use]
    pub const fn status(&self, id: StepId) -> StepStatus {
        match id {
            StepId::CompanyProfile => self.company_profile.status,
            StepId::BusinessVerification => self.business_verification.status,
            StepId::Banking => self.banking.status,
            StepId::PlanSetup => self.plan_setup.status,
            StepId::EmployeeInvitations => self.employee_invitations.status,
        }
    }

    /// Progress over the required steps.
    #[must_use]
    pub fn progress(&self) -> Progress {
        let done = StepId::ALL
            .into_iter()
            .filter(|s| s.required() && self.status(*s) == StepStatus::Completed)
            .count();
        let done = u32::try_from(done).unwrap_or(StepId::REQUIRED);
        Progress {
            percent_complete: 100 * done / StepId::REQUIRED,
            blocking_remaining: StepId::REQUIRED.saturating_sub(done),
        }
    }

    /// Whether every required step is completed.
    #[must_use]
    pub fn complete(&self) -> bool {
        self.progress().blocking_remaining == 0
    }

    /// One sentence per step not completed, required first, in order.
    #[must_use]
    pub fn next_steps(&self, mode: OnboardingMode) -> Vec<String> {
        let open = |required: bool| {
            StepId::ALL.into_iter().filter(move |s| {
                s.required() == required && self.status(*s) != StepStatus::Completed
            })
        };
        open(true)
            .chain(open(false))
            .map(|s| s.next_step(mode).to_owned())
            .collect()
    }

    /// The step a step waits for, when that one is not completed.
    #[must_use]
    pub fn blocked_by(&self, id: StepId) -> Option<StepId> {
        id.needs()
            .filter(|needed| self.status(*needed) != StepStatus::Completed)
    }
}

/// The enrollment's status: `active` once the company is `prod`; in live
/// mode `in_review` once every required step is done; `onboarding` before.
#[must_use]
pub fn enrollment_status(
    checklist: &Checklist,
    mode: Mode,
    company: Option<CompanyState>,
) -> EnrollmentStatus {
    if company == Some(CompanyState::Prod) {
        EnrollmentStatus::Active
    } else if mode == Mode::Live && checklist.complete() {
        EnrollmentStatus::InReview
    } else {
        EnrollmentStatus::Onboarding
    }
}

#[cfg(test)]
mod tests;
