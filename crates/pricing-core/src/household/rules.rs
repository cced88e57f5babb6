//! The census rules that span rows (pricing model section 2): repeated
//! external ids and emails, and employees born after the plan-year start.

use std::collections::HashMap;

use time::Date;

use crate::census::CensusMember;
use crate::error::FieldError;

/// Rules across rows: a repeated `external_id` or email (case-insensitive)
/// is an error on the later row, and an employee born after the plan-year
/// start cannot be priced.
pub(super) fn census_wide_errors(members: &[CensusMember], start: Date) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut ids: HashMap<&str, usize> = HashMap::with_capacity(members.len());
    let mut emails: HashMap<String, usize> = HashMap::new();
    for (i, m) in members.iter().enumerate() {
        if let Some(id) = m.external_id.as_deref()
            && let Some(first) = ids.insert(id, i)
        {
            errs.push(FieldError::at(
                i,
                format!("census[{i}].external_id"),
                format!("duplicates row {first}"),
            ));
        }
        if let Some(email) = m.email.as_deref()
            && let Some(first) = emails.insert(email.to_lowercase(), i)
        {
            errs.push(FieldError::at(
                i,
                format!("census[{i}].email"),
                format!("duplicates row {first}"),
            ));
        }
        if m.dob.is_some_and(|d| d > start) {
            errs.push(FieldError::at(
                i,
                format!("census[{i}].dob"),
                format!(
                    "is after the plan-year start ({})",
                    crate::census::date_opt::format(start)
                ),
            ));
        }
    }
    errs
}
