//! Employer groups: the lifecycle status, the provisioned company's state,
//! and the validation of group fields (contract section 3, Groups).

use serde::{Deserialize, Serialize};

use crate::error::{DomainError, FieldError};
use crate::ids::{GroupId, PartnerId};
use crate::mode::Mode;

/// Group lifecycle, in order. Status only moves forward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(
    feature = "openapi",
    derive(utoipa::ToSchema),
    schema(description = "A group's status.")
)]
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

impl CompanyState {
    /// Wire value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Sandbox => "sandbox",
            Self::Prod => "prod",
        }
    }

    /// Parses a wire value.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Sandbox, Self::Prod]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

impl GroupStatus {
    /// Parses a wire value.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Created,
            Self::CensusReceived,
            Self::Quoted,
            Self::Enrolled,
            Self::Active,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

/// A group's address.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Address {
    /// Street line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line1: Option<String>,
    /// City.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub city: Option<String>,
    /// Two-letter state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// Five-digit ZIP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zip: Option<String>,
}

/// A group's contact person.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contact {
    /// Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Email.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// The group's current coverage.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CurrentCoverage {
    /// Plan type, e.g. `fully_insured`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_type: Option<String>,
    /// Carrier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carrier: Option<String>,
    /// Per-employee-per-month cost, cents (0 to
    /// [`pricing_core::money::MAX_MONTHLY_CENTS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pepm_cents: Option<i64>,
    /// Renewal date, `YYYY-MM-DD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renewal_date: Option<String>,
}

/// An employer group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// `grp_` id.
    pub id: GroupId,
    /// Owning partner.
    pub partner_id: PartnerId,
    /// Mode of the key that created it.
    pub mode: Mode,
    /// Lifecycle status.
    pub status: GroupStatus,
    /// Company name.
    pub company_name: String,
    /// Company domain (lowercase DNS name).
    pub domain: String,
    /// The partner's own company id.
    pub external_id: Option<String>,
    /// Address.
    pub address: Option<Address>,
    /// Contact.
    pub contact: Option<Contact>,
    /// Current coverage.
    pub current_coverage: Option<CurrentCoverage>,
    /// Members in the current census.
    pub census_member_count: u32,
    /// Digest of the census's rating inputs (`None` before any census).
    pub rating_digest: Option<String>,
    /// Provisioned company state (`None` until enrollment).
    pub company_state: Option<CompanyState>,
    /// Creation time, Unix seconds.
    pub created_at: i64,
    /// Last change, Unix seconds.
    pub updated_at: i64,
}

/// The writable fields of a group; in a create, `company_name` and
/// `domain` are required; in a patch, every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupFields {
    /// Company name.
    pub company_name: Option<String>,
    /// Domain.
    pub domain: Option<String>,
    /// External id.
    pub external_id: Option<String>,
    /// Address.
    pub address: Option<Address>,
    /// Contact.
    pub contact: Option<Contact>,
    /// Current coverage.
    pub current_coverage: Option<CurrentCoverage>,
}

impl GroupFields {
    /// Validates the fields; `create` requires `company_name` and `domain`.
    ///
    /// # Errors
    /// [`DomainError::Invalid`] naming every failing field.
    pub fn validate(&self, create: bool) -> Result<(), DomainError> {
        let mut checks: Vec<Option<FieldError>> = Vec::new();
        match &self.company_name {
            Some(n) => checks.push(check_company_name("company_name", n)),
            None if create => checks.push(Some(FieldError::new("company_name", "is required"))),
            None => {}
        }
        match &self.domain {
            Some(d) => checks.push(check_domain("domain", d)),
            None if create => checks.push(Some(FieldError::new("domain", "is required"))),
            None => {}
        }
        if let Some(e) = &self.external_id
            && (e.trim().is_empty() || e.chars().count() > 200)
        {
            checks.push(Some(FieldError::new(
                "external_id",
                "must be 1 to 200 characters",
            )));
        }
        if let Some(a) = &self.address {
            checks.push(
                a.state
                    .as_deref()
                    .and_then(|s| check_state("address.state", s)),
            );
            checks.push(a.zip.as_deref().and_then(|z| check_zip("address.zip", z)));
        }
        if let Some(c) = &self.contact {
            checks.push(
                c.email
                    .as_deref()
                    .and_then(|e| check_email("contact.email", e)),
            );
        }
        if let Some(cov) = &self.current_coverage {
            checks.push(
                cov.pepm_cents
                    .and_then(|c| check_monthly_cents("current_coverage.pepm_cents", c)),
            );
            if let Some(d) = &cov.renewal_date
                && pricing_core::census::date_opt::parse(d).is_err()
            {
                checks.push(Some(FieldError::new(
                    "current_coverage.renewal_date",
                    "must be a date (YYYY-MM-DD)",
                )));
            }
        }
        collect(checks)
    }
}

impl Group {
    /// A new group from validated create fields.
    ///
    /// # Errors
    /// [`DomainError::Invalid`] when the fields break a rule.
    pub fn create(
        id: GroupId,
        partner_id: PartnerId,
        mode: Mode,
        fields: GroupFields,
        now: i64,
    ) -> Result<Self, DomainError> {
        fields.validate(true)?;
        Ok(Self {
            id,
            partner_id,
            mode,
            status: GroupStatus::Created,
            company_name: fields.company_name.unwrap_or_default(),
            domain: fields.domain.unwrap_or_default(),
            external_id: fields.external_id,
            address: fields.address,
            contact: fields.contact,
            current_coverage: fields.current_coverage,
            census_member_count: 0,
            rating_digest: None,
            company_state: None,
            created_at: now,
            updated_at: now,
        })
    }

    /// Applies a validated patch.
    ///
    /// # Errors
    /// [`DomainError::Invalid`] when the fields break a rule.
    pub fn patch(&mut self, fields: GroupFields, now: i64) -> Result<(), DomainError> {
        fields.validate(false)?;
        if let Some(v) = fields.company_name {
            self.company_name = v;
        }
        if let Some(v) = fields.domain {
            self.domain = v;
        }
        if let Some(v) = fields.external_id {
            self.external_id = Some(v);
        }
        if let Some(v) = fields.address {
            self.address = Some(v);
        }
        if let Some(v) = fields.contact {
            self.contact = Some(v);
        }
        if let Some(v) = fields.current_coverage {
            self.current_coverage = Some(v);
        }
        self.updated_at = now;
        Ok(())
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

/// Validates a monthly amount of cents (0 to
/// [`pricing_core::money::MAX_MONTHLY_CENTS`]).
#[must_use]
pub fn check_monthly_cents(field: &str, cents: i64) -> Option<FieldError> {
    pricing_core::money::Amount::Monthly.check(field, None, cents)
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

/// Which groups a list returns (each field an exact match; none set: all).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupFilter {
    /// The partner's own `external_id`.
    pub external_id: Option<String>,
    /// The company domain, as stored (lowercase).
    pub domain: Option<String>,
    /// The group's status.
    pub status: Option<GroupStatus>,
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
        let pepm = |c| fails(check_monthly_cents("current_coverage.pepm_cents", c));
        assert!(pepm(-1));
        assert!(!pepm(0));
        assert!(!pepm(100_000_000));
        assert!(pepm(100_000_001));
        assert!(pepm(i64::MAX));
        assert_eq!(
            collect([check_zip("a", "1"), None, check_state("b", "x")]),
            Err(DomainError::Invalid(vec![
                FieldError::new("a", "must be 5 digits (pattern ^[0-9]{5}$)"),
                FieldError::new("b", "must be a two-letter state code such as CA"),
            ]))
        );
    }
}
