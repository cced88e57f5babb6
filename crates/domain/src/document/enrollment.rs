//! An enrollment's stored document: its figures. Identity and state
//! fields (`id`, `group_id`, `quote_id`, `mode`, `onboarding_mode`,
//! `company_state`, `created_at`) live on the row and the group.

use serde::{Deserialize, Serialize};

use super::{DocumentError, Legacy, from_stored, to_stored};

/// `onboarding`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = OnboardingOut))]
pub struct OnboardingProgress {
    /// Percent of onboarding done.
    pub percent_complete: u32,
    /// Blocking steps left.
    pub blocking_remaining: u32,
}

/// `employer_portal`: present when the signatory was provisioned (hosted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = EmployerPortalOut))]
pub struct EmployerPortal {
    /// The signatory is an employer-portal admin.
    pub provisioned: bool,
    /// Where the admin signs in.
    pub signin_url: String,
    /// `true` in test mode: no invitation email is sent.
    pub invite_suppressed: bool,
    /// Where the admin sets a password.
    pub set_password_url: String,
}

/// The stored figures of an enrollment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = EnrollmentFigures))]
pub struct EnrollmentDocument {
    /// `onboarding`.
    #[cfg_attr(feature = "openapi", schema(example = "onboarding"))]
    pub status: String,
    /// Coverage start.
    #[cfg_attr(feature = "openapi", schema(format = Date))]
    pub start_date: String,
    /// The group's domain.
    pub company_domain: String,
    /// Progress.
    pub onboarding: OnboardingProgress,
    /// What happens next.
    pub next_steps: Vec<String>,
    /// Hosted mode only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub employer_portal: Option<EmployerPortal>,
}

impl EnrollmentDocument {
    /// The stored form.
    ///
    /// # Errors
    /// When the document does not serialize.
    pub fn to_stored(&self) -> Result<String, serde_json::Error> {
        to_stored(self)
    }

    /// Reads a stored document (current, or a bare camelCase row of the
    /// previous version).
    ///
    /// # Errors
    /// [`DocumentError`] when it does not read.
    pub fn from_stored(text: &str) -> Result<Self, DocumentError> {
        from_stored(text, Legacy::Camel)
    }
}
