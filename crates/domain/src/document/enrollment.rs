//! An enrollment's stored document: what was fixed at its creation.
//! Identity and state fields (`id`, `group_id`, `quote_id`, `mode`,
//! `onboarding_mode`, `company_state`, `created_at`) live on the row and
//! the group; the status, `onboarding` and `next_steps` derive from the
//! checklist (earlier rows stored them; reading ignores them).

use serde::{Deserialize, Serialize};

use super::{DocumentError, Legacy, from_stored, to_stored};

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
    /// Where the admin sets a password: the newest unused link, `null`
    /// once it is used or expired (no dead link is shown). Stored rows
    /// leave it out; the link lives in `portal_links`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = true, required = true))]
    pub set_password_url: Option<String>,
}

/// `signatory`: who signs for the company (the employer-portal admin in
/// hosted mode).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = SignatoryOut))]
pub struct SignatoryDoc {
    /// Full name.
    pub name: String,
    /// Email.
    pub email: String,
}

/// The stored figures of an enrollment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = EnrollmentFigures))]
pub struct EnrollmentDocument {
    /// Coverage start.
    #[cfg_attr(feature = "openapi", schema(format = Date))]
    pub start_date: String,
    /// The group's domain.
    pub company_domain: String,
    /// Hosted mode only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub employer_portal: Option<EmployerPortal>,
    /// Who signs (absent on enrollments made before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub signatory: Option<SignatoryDoc>,
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
