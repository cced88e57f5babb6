//! Employer groups: the lifecycle status, the provisioned company's state,
//! and the validation of group fields (contract section 3, Groups).

use serde::{Deserialize, Serialize};

use crate::error::{DomainError, FieldError};

/// Group lifecycle, in order. Status only moves forward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupStatus {
    /// Created, no census yet.
    Created,
    /// A census write accepted at least one member.
    CensusReceived,
    /// The first quote was created.
    Quoted,
    /// The enrollment was created.
    Enrolled,
    /// The provisioned company went to production.
    Active,
}

impl GroupStatus {
    /// Wire value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::CensusReceived => "census_received",
            Self::Quoted => "quoted",
            Self::Enrolled => "enrolled",
            Self::Active => "active",
        }
    }

    /// The status after an event that can only move it forward: a later
    /// event on an earlier status advances it; an earlier event on a later
    /// status leaves it (a second census on a quoted group stays `quoted`).
    #[must_use]
    pub fn advance_to(self, reached: Self) -> Self {
        self.max(reached)
    }

    /// Whether an enrolled or active group holds its domain (another group
    /// of the same mode and domain is then a 409 `conflict`).
    #[must_use]
    pub fn holds_domain(self) -> bool {
        matches!(self, Self::Enrolled | Self::Active)
    }
}

/// The provisioned company's state: null until enrollment, then `sandbox`,
/// then `prod`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompanyState {
    /// Provisioned at enrollment.
    Sandbox,
    /// Live (`group.state_changed` is sent, the group becomes `active`).
    Prod,
}

/// Moves the company to production (`sandbox` → `prod`).
///
/// # Errors
/// [`DomainError::Transition`] when there is no company yet or it is already
/// in production.
pub fn go_live(current: Option<CompanyState>) -> Result<CompanyState, DomainError> {
    match current {
        Some(CompanyState::Sandbox) => Ok(CompanyState::Prod),
        Some(CompanyState::Prod) => Err(DomainError::Transition {
            from: "prod",
            to: "prod",
        }),
        None => Err(DomainError::Transition {
            from: "none",
            to: "prod",
        }),
    }
}

/// Validates a company name: 1 to 200 characters, not blank.
#[must_use]
pub fn check_company_name(field: &str, name: &str) -> Option<FieldError> {
    let n = name.chars().count();
    (name.trim().is_empty() || n > 200)
        .then(|| FieldError::new(field, "must be 1 to 200 characters"))
}

/// Validates a domain: a lowercase DNS name with at least two labels, each
/// 1 to 63 of `a-z`, `0-9` and inner `-`, at most 253 characters.
#[must_use]
pub fn check_domain(field: &str, domain: &str) -> Option<FieldError> {
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    let labels: Vec<&str> = domain.split('.').collect();
    let ok = domain.len() <= 253 && labels.len() >= 2 && labels.iter().all(|l| label_ok(l));
    (!ok).then(|| FieldError::new(field, "must be a lowercase domain name such as example.com"))
}

/// Validates a US state: two uppercase letters.
#[must_use]
pub fn check_state(field: &str, state: &str) -> Option<FieldError> {
    let ok = state.len() == 2 && state.bytes().all(|b| b.is_ascii_uppercase());
    (!ok).then(|| FieldError::new(field, "must be a two-letter state code such as CA"))
}

/// Validates a 5-digit ZIP.
#[must_use]
pub fn check_zip(field: &str, zip: &str) -> Option<FieldError> {
    let ok = zip.len() == 5 && zip.bytes().all(|b| b.is_ascii_digit());
    (!ok).then(|| FieldError::new(field, "must be 5 digits (pattern ^[0-9]{5}$)"))
}

/// Validates an email address (shape only).
#[must_use]
pub fn check_email(field: &str, email: &str) -> Option<FieldError> {
    let ok = email.split_once('@').is_some_and(|(local, domain)| {
        !local.is_empty()
            && domain.contains('.')
            && !domain.starts_with('.')
            && !domain.ends_with('.')
    }) && !email.chars().any(char::is_whitespace)
        && email.len() <= 254;
    (!ok).then(|| FieldError::new(field, "must be an email address"))
}

/// Validates a non-negative amount of cents.
#[must_use]
pub fn check_cents(field: &str, cents: i64) -> Option<FieldError> {
    (cents < 0).then(|| FieldError::new(field, "must be a non-negative integer of cents"))
}

/// Collects failures into a [`DomainError::Invalid`].
///
/// # Errors
/// When any check failed.
pub fn collect(checks: impl IntoIterator<Item = Option<FieldError>>) -> Result<(), DomainError> {
    let errs: Vec<FieldError> = checks.into_iter().flatten().collect();
    if errs.is_empty() {
        Ok(())
    } else {
        Err(DomainError::Invalid(errs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_only_moves_forward() {
        use GroupStatus::*;
        assert_eq!(Created.advance_to(CensusReceived), CensusReceived);
        assert_eq!(Quoted.advance_to(CensusReceived), Quoted);
        assert_eq!(Enrolled.advance_to(Quoted), Enrolled);
        assert_eq!(Enrolled.advance_to(Active), Active);
        assert!(Enrolled.holds_domain() && Active.holds_domain());
        assert!(!Quoted.holds_domain());
        assert_eq!(
            serde_json::to_string(&CensusReceived).unwrap(),
            "\"census_received\""
        );
    }

    #[test]
    fn the_company_goes_live_once_after_enrollment() {
        assert_eq!(go_live(Some(CompanyState::Sandbox)), Ok(CompanyState::Prod));
        assert!(go_live(Some(CompanyState::Prod)).is_err());
        assert!(go_live(None).is_err());
    }

    fn fails(e: Option<FieldError>) -> bool {
        e.is_some()
    }

    #[test]
    fn field_rules() {
        assert!(!fails(check_company_name("company_name", "Acme, Inc.")));
        assert!(fails(check_company_name("company_name", "  ")));
        assert!(fails(check_company_name("company_name", &"x".repeat(201))));
        for ok in ["acme.com", "a-b.example.co", "x1.io"] {
            assert!(!fails(check_domain("domain", ok)), "{ok}");
        }
        for bad in [
            "Acme.com",
            "acme",
            "-a.com",
            "a-.com",
            "a..com",
            "acme.com.",
            "ac me.com",
        ] {
            assert!(fails(check_domain("domain", bad)), "{bad}");
        }
        assert!(!fails(check_state("address.state", "CA")));
        assert!(fails(check_state("address.state", "ca")));
        assert!(fails(check_state("address.state", "CAL")));
        assert!(!fails(check_zip("address.zip", "94103")));
        assert!(fails(check_zip("address.zip", "9410a")));
        assert!(!fails(check_email("contact.email", "hr@acme.com")));
        assert!(fails(check_email("contact.email", "hr@acme")));
        assert!(fails(check_cents("current_coverage.pepm_cents", -1)));
        assert_eq!(
            collect([check_zip("a", "1"), None, check_state("b", "x")]),
            Err(DomainError::Invalid(vec![
                FieldError::new("a", "must be 5 digits (pattern ^[0-9]{5}$)"),
                FieldError::new("b", "must be a two-letter state code such as CA"),
            ]))
        );
    }
}
