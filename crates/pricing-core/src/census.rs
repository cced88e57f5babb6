//! The census as partners send it: employee records with optional dependents,
//! and the validation rules of the specification.
//!
//! Field names are snake_case; every multi-word field also accepts its
//! camelCase spelling, and sending both spellings of one field is an error.

use serde::{Deserialize, Serialize};
use time::Date;

use crate::error::FieldError;

/// At most this many dependents per census member.
pub const MAX_DEPENDENTS: usize = 6;
/// Oldest accepted age, in whole years.
pub const MAX_AGE: u32 = 120;

/// Sex at birth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SexAtBirth {
    /// Male.
    Male,
    /// Female.
    Female,
    /// Other.
    Other,
}

/// Employment type; contractors are not counted employees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EmploymentType {
    /// Full time.
    FullTime,
    /// Part time.
    PartTime,
    /// Contractor (excluded from pricing).
    Contractor,
}

/// Member status; terminated members are not counted employees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemberStatus {
    /// Active (the default).
    Active,
    /// Terminated (excluded from pricing).
    Terminated,
}

/// A dependent's relationship to the employee.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Relationship {
    /// Spouse.
    Spouse,
    /// Domestic partner (rated as a spouse).
    DomesticPartner,
    /// Child.
    Child,
    /// Other dependent (rated as a child for tiers).
    Other,
}

impl Relationship {
    /// Spouse or domestic partner.
    #[must_use]
    pub fn is_partner(self) -> bool {
        matches!(self, Self::Spouse | Self::DomesticPartner)
    }
}

/// One dependent of a census member.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dependent {
    /// Relationship to the employee (required).
    pub relationship: Relationship,
    /// Name (never used for pricing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Date of birth.
    #[serde(default, with = "date_opt", skip_serializing_if = "Option::is_none")]
    pub dob: Option<Date>,
    /// Age in whole years, an alternative to `dob`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age: Option<u32>,
    /// Sex at birth.
    #[serde(default, alias = "sexAtBirth", skip_serializing_if = "Option::is_none")]
    pub sex_at_birth: Option<SexAtBirth>,
}

/// One employee record of a census.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CensusMember {
    /// Payroll employee id; the preferred household key.
    #[serde(default, alias = "externalId", skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    /// First name.
    #[serde(default, alias = "firstName", skip_serializing_if = "Option::is_none")]
    pub first_name: Option<String>,
    /// Last name.
    #[serde(default, alias = "lastName", skip_serializing_if = "Option::is_none")]
    pub last_name: Option<String>,
    /// Email.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Date of birth.
    #[serde(default, with = "date_opt", skip_serializing_if = "Option::is_none")]
    pub dob: Option<Date>,
    /// Age in whole years, an alternative to `dob`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age: Option<u32>,
    /// Home ZIP, 5 digits (required).
    pub zip: String,
    /// Sex at birth.
    #[serde(default, alias = "sexAtBirth", skip_serializing_if = "Option::is_none")]
    pub sex_at_birth: Option<SexAtBirth>,
    /// Employment type; absent means full time (reported).
    #[serde(
        default,
        alias = "employmentType",
        skip_serializing_if = "Option::is_none"
    )]
    pub employment_type: Option<EmploymentType>,
    /// Hire date.
    #[serde(
        default,
        alias = "hireDate",
        with = "date_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub hire_date: Option<Date>,
    /// Status; absent means active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<MemberStatus>,
    /// Dependents; absent means the household is unknown, `[]` means
    /// employee only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependents: Option<Vec<Dependent>>,
}

impl CensusMember {
    /// A minimal active full-time member, for examples and tests.
    #[must_use]
    pub fn new(external_id: &str, dob: Date, zip: &str) -> Self {
        Self {
            external_id: Some(external_id.to_owned()),
            first_name: None,
            last_name: None,
            email: None,
            dob: Some(dob),
            age: None,
            zip: zip.to_owned(),
            sex_at_birth: None,
            employment_type: None,
            hire_date: None,
            status: None,
            dependents: Some(Vec::new()),
        }
    }

    /// Whether the member is a counted employee: active, and full or part time
    /// (an absent employment type counts as full time).
    #[must_use]
    pub fn is_counted(&self) -> bool {
        self.status != Some(MemberStatus::Terminated)
            && self.employment_type != Some(EmploymentType::Contractor)
    }
}

/// Which validation rules apply to the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CensusRules {
    /// Brokers must send `dob` for every employee and dependent; `age` alone
    /// is rejected.
    pub require_dob: bool,
}

/// Checks one census row and returns every failing field (empty when valid).
/// `prefix` is the array path, for example `census` or `members`.
#[must_use]
pub fn validate_member(
    prefix: &str,
    index: usize,
    m: &CensusMember,
    rules: CensusRules,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    validate_member_into(&mut errs, prefix, index, m, rules);
    errs
}

/// [`validate_member`] appending to `errs`: a valid row allocates nothing.
pub(crate) fn validate_member_into(
    errs: &mut Vec<FieldError>,
    prefix: &str,
    index: usize,
    m: &CensusMember,
    rules: CensusRules,
) {
    let field = |name: &str| format!("{prefix}[{index}].{name}");
    if !is_zip5(&m.zip) {
        errs.push(FieldError::at(
            index,
            field("zip"),
            "must be 5 digits (pattern ^[0-9]{5}$)",
        ));
    }
    check_age_fields(errs, index, &field, m.dob, m.age, rules);
    if let Some(email) = &m.email
        && !is_plausible_email(email)
    {
        errs.push(FieldError::at(
            index,
            field("email"),
            "must be an email address",
        ));
    }
    for (name, value) in [
        ("external_id", &m.external_id),
        ("first_name", &m.first_name),
        ("last_name", &m.last_name),
    ] {
        // `v.chars().all(char::is_whitespace)` is `v.trim().is_empty()`,
        // stopping at the first other character.
        if let Some(v) = value
            && (v.chars().all(char::is_whitespace) || (v.len() > 200 && v.chars().count() > 200))
        {
            errs.push(FieldError::at(
                index,
                field(name),
                "must be 1 to 200 characters",
            ));
        }
    }
    if let Some(deps) = &m.dependents {
        if deps.len() > MAX_DEPENDENTS {
            errs.push(FieldError::at(
                index,
                field("dependents"),
                format!("at most {MAX_DEPENDENTS} dependents"),
            ));
        }
        let mut partner_seen = false;
        for (j, d) in deps.iter().enumerate() {
            let path = |name: &str| format!("{prefix}[{index}].dependents[{j}].{name}");
            if d.relationship.is_partner() {
                if partner_seen {
                    errs.push(FieldError::at(
                        index,
                        path("relationship"),
                        "at most one spouse or domestic partner per employee",
                    ));
                }
                partner_seen = true;
            }
            // A dependent may omit both for non-broker callers (defaulted and
            // reported); a broker's dependent needs `dob`.
            if rules.require_dob || d.dob.is_some() || d.age.is_some() {
                check_age_fields(errs, index, &path, d.dob, d.age, rules);
            }
        }
    }
}

/// Checks `dob`/`age`; `path` builds a field path only when an error needs it.
fn check_age_fields(
    errs: &mut Vec<FieldError>,
    index: usize,
    path: &dyn Fn(&str) -> String,
    dob: Option<Date>,
    age: Option<u32>,
    rules: CensusRules,
) {
    match (dob, age) {
        (None, None) => errs.push(FieldError::at(
            index,
            path("dob"),
            if rules.require_dob {
                "is required"
            } else {
                "one of dob or age is required"
            },
        )),
        (None, Some(_)) if rules.require_dob => errs.push(FieldError::at(
            index,
            path("dob"),
            "is required for broker keys; age alone is not accepted",
        )),
        _ => {}
    }
    if age.is_some_and(|a| a > MAX_AGE) {
        errs.push(FieldError::at(
            index,
            path("age"),
            format!("must be 0 to {MAX_AGE}"),
        ));
    }
    if dob.is_some_and(|d| d.year() < 1900) {
        errs.push(FieldError::at(
            index,
            path("dob"),
            "must be after 1900-01-01",
        ));
    }
}

/// Whether `zip` is exactly five ASCII digits.
#[must_use]
pub fn is_zip5(zip: &str) -> bool {
    zip.len() == 5 && zip.bytes().all(|b| b.is_ascii_digit())
}

fn is_plausible_email(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !email.chars().any(char::is_whitespace)
        && email.len() <= 254
}

/// Whole years between `dob` and `on` (0 when `dob` is after `on`).
#[must_use]
pub fn age_on(dob: Date, on: Date) -> u32 {
    let mut years = on.year() - dob.year();
    if (on.month(), on.day()) < (dob.month(), dob.day()) {
        years -= 1;
    }
    u32::try_from(years).unwrap_or(0)
}

/// Serde support for optional `YYYY-MM-DD` dates.
pub mod date_opt {
    use serde::{Deserialize, Deserializer, Serializer};
    use time::Date;
    use time::macros::format_description;

    const FORMAT: &[time::format_description::BorrowedFormatItem<'static>] =
        format_description!("[year]-[month]-[day]");

    /// Serializes as `YYYY-MM-DD`.
    ///
    /// # Errors
    /// When the date cannot be formatted (a year outside 0..=9999).
    pub fn serialize<S: Serializer>(d: &Option<Date>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => {
                let text = d.format(FORMAT).map_err(serde::ser::Error::custom)?;
                s.serialize_str(&text)
            }
            None => s.serialize_none(),
        }
    }

    /// Parses `YYYY-MM-DD`.
    ///
    /// # Errors
    /// When the text is not a valid calendar date of that shape.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Date>, D::Error> {
        let text: Option<String> = Option::deserialize(d)?;
        text.map(|t| parse(&t).map_err(serde::de::Error::custom))
            .transpose()
    }

    /// Parses one `YYYY-MM-DD` date.
    ///
    /// # Errors
    /// A message naming the expected shape.
    pub fn parse(text: &str) -> Result<Date, String> {
        Date::parse(text, FORMAT).map_err(|_| format!("invalid date `{text}`, expected YYYY-MM-DD"))
    }

    /// Formats one date as `YYYY-MM-DD`.
    #[must_use]
    pub fn format(d: Date) -> String {
        d.format(FORMAT).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use time::macros::date;

    use super::*;

    const BROKER: CensusRules = CensusRules { require_dob: true };
    const HR: CensusRules = CensusRules { require_dob: false };

    fn member(json: &str) -> CensusMember {
        serde_json::from_str(json).unwrap()
    }

    fn check(json: &str, rules: CensusRules, expect: &[&str]) {
        let errs = validate_member("members", 0, &member(json), rules);
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, expect, "{json}");
    }

    #[test]
    fn validation_table() {
        check(r#"{"zip":"94103","dob":"1980-02-03"}"#, BROKER, &[]);
        check(
            r#"{"zip":"9410","dob":"1980-02-03"}"#,
            BROKER,
            &["members[0].zip"],
        );
        check(r#"{"zip":"94103","age":40}"#, BROKER, &["members[0].dob"]);
        check(r#"{"zip":"94103","age":40}"#, HR, &[]);
        check(r#"{"zip":"94103"}"#, HR, &["members[0].dob"]);
        check(r#"{"zip":"94103","age":121}"#, HR, &["members[0].age"]);
        check(
            r#"{"zip":"94103","dob":"1980-02-03","email":"nope"}"#,
            HR,
            &["members[0].email"],
        );
        check(
            r#"{"zip":"94103","dob":"1980-02-03","dependents":[{"relationship":"child"}]}"#,
            BROKER,
            &["members[0].dependents[0].dob"],
        );
        check(
            r#"{"zip":"94103","dob":"1980-02-03","dependents":[{"relationship":"child"}]}"#,
            HR,
            &[],
        );
        let seven = r#"{"relationship":"child","age":3}"#;
        let json = format!(
            r#"{{"zip":"94103","age":30,"dependents":[{}]}}"#,
            [seven; 7].join(",")
        );
        check(&json, HR, &["members[0].dependents"]);
    }

    #[test]
    fn camel_case_is_accepted_and_both_spellings_rejected() {
        let m =
            member(r#"{"zip":"94103","age":30,"externalId":"E1","employmentType":"part_time"}"#);
        assert_eq!(m.external_id.as_deref(), Some("E1"));
        assert_eq!(m.employment_type, Some(EmploymentType::PartTime));
        assert!(
            serde_json::from_str::<CensusMember>(
                r#"{"zip":"94103","age":30,"externalId":"E1","external_id":"E1"}"#
            )
            .is_err()
        );
        assert!(serde_json::from_str::<CensusMember>(r#"{"zip":"94103","nope":1}"#).is_err());
    }

    #[test]
    fn ages_are_whole_years_at_the_date() {
        assert_eq!(age_on(date!(1980 - 06 - 15), date!(2026 - 06 - 14)), 45);
        assert_eq!(age_on(date!(1980 - 06 - 15), date!(2026 - 06 - 15)), 46);
        assert_eq!(age_on(date!(2027 - 01 - 01), date!(2026 - 06 - 15)), 0);
    }

    #[test]
    fn counted_employees_exclude_contractors_and_terminated() {
        let mut m = CensusMember::new("E1", date!(1990 - 01 - 01), "94103");
        assert!(m.is_counted());
        m.employment_type = Some(EmploymentType::Contractor);
        assert!(!m.is_counted());
        m.employment_type = Some(EmploymentType::PartTime);
        m.status = Some(MemberStatus::Terminated);
        assert!(!m.is_counted());
    }
}
