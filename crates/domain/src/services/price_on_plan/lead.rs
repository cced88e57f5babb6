//! The lead a price-on-plan request keeps: its group, from the request's
//! company (validated as a group's fields) or a generated one.

use time::Date;

use super::Company;
use crate::error::FieldError;
use crate::group::{Address, Group, GroupFields, GroupStatus};
use crate::ids::GroupId;
use crate::scope::Scope;
use crate::services::{PriceOnPlanRefusal, ServiceError};

/// An enrolled group holds the company's domain.
pub(super) fn domain_taken() -> ServiceError {
    PriceOnPlanRefusal::DomainTaken.into()
}

/// The group fields of a company, for validation and the lead.
fn company_fields(c: &Company) -> GroupFields {
    GroupFields {
        company_name: c.name.clone(),
        domain: c.domain.clone(),
        external_id: c.external_id.clone(),
        address: (c.zip.is_some() || c.state.is_some()).then(|| Address {
            line1: None,
            city: None,
            state: c.state.clone(),
            zip: c.zip.clone(),
        }),
        contact: None,
        current_coverage: None,
    }
}

/// Every bad field of a company, named `company.*`.
pub(super) fn company_errors(c: &Company) -> Vec<FieldError> {
    match company_fields(c).validate(false) {
        Ok(()) => Vec::new(),
        Err(crate::error::DomainError::Invalid(errors)) => errors
            .into_iter()
            .map(|e| {
                let field = match e.field.as_str() {
                    "company_name" => "company.name".to_owned(),
                    "address.zip" => "company.zip".to_owned(),
                    "address.state" => "company.state".to_owned(),
                    other => format!("company.{other}"),
                };
                FieldError { field, ..e }
            })
            .collect(),
        Err(other) => vec![FieldError::new("company", other.to_string())],
    }
}

/// The lead's group: the company's fields (a generated name and domain
/// where it sent none), the company ZIP as its address, and the census
/// already counted; `quoted`.
#[expect(
    clippy::too_many_arguments,
    reason = "one call site; the inputs are distinct facts"
)]
pub(super) fn lead_group(
    scope: &Scope,
    id: GroupId,
    company: Option<&Company>,
    zip: Option<&str>,
    members: usize,
    digest: &str,
    now: i64,
    start: Date,
) -> Result<Group, ServiceError> {
    let mut fields = company.map(company_fields).unwrap_or_default();
    let hex_id = id.as_str().trim_start_matches("grp_").to_owned();
    fields
        .company_name
        .get_or_insert_with(|| format!("Price-on-plan lead {start}"));
    fields
        .domain
        .get_or_insert_with(|| format!("lead-{hex_id}.invalid"));
    let address = fields.address.get_or_insert_with(Address::default);
    if address.zip.is_none() {
        address.zip = zip.map(str::to_owned);
    }
    if address.zip.is_none() && address.state.is_none() {
        fields.address = None;
    }
    let mut group = Group::create(id, scope.partner.clone(), scope.mode, fields, now)
        .map_err(ServiceError::from)?;
    group.status = GroupStatus::Quoted;
    group.census_member_count = u32::try_from(members).unwrap_or(u32::MAX);
    group.rating_digest = Some(digest.to_owned());
    Ok(group)
}
