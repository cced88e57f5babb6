//! Election rows of `POST /groups/{id}/elections` (specification, Election
//! row and the six rules).

use serde::{Deserialize, Serialize};
use time::Date;

use crate::error::FieldError;

/// Most rows in one submission.
pub const MAX_ELECTION_ROWS: usize = 10_000;

/// Enrolled or waived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Election {
    /// Takes coverage from `effectiveDate`.
    Enrolled,
    /// Declines coverage.
    Waived,
}

/// Household tier: the pricing engine's own.
pub use pricing_core::household::Tier;

/// One election row after parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElectionRow {
    /// The census member's external id.
    pub external_id: Option<String>,
    /// Election.
    pub election: Option<Election>,
    /// Tier.
    pub tier: Option<Tier>,
    /// Coverage effective date.
    pub effective_date: Option<Date>,
    /// Waiver reason.
    pub waiver_reason: Option<String>,
}

/// Checks one row; `index` is its zero-based position. Field paths are
/// snake_case (`elections[0].effective_date`); adapters re-case them.
#[must_use]
pub fn validate_row(index: usize, row: &ElectionRow, known_member: bool) -> Vec<FieldError> {
    let f = |name: &str| format!("elections[{index}].{name}");
    let mut errs = Vec::new();
    match row.external_id.as_deref() {
        None | Some("") => errs.push(FieldError::at(index, f("external_id"), "is required")),
        Some(_) if !known_member => errs.push(FieldError::at(
            index,
            f("external_id"),
            "matches no member of the group's census",
        )),
        Some(_) => {}
    }
    match row.election {
        None => errs.push(FieldError::at(index, f("election"), "is required")),
        Some(Election::Enrolled) => {
            if row.effective_date.is_none() {
                errs.push(FieldError::at(
                    index,
                    f("effective_date"),
                    "is required when election is enrolled",
                ));
            }
            if row.tier.is_none() {
                errs.push(FieldError::at(
                    index,
                    f("tier"),
                    "is required when election is enrolled",
                ));
            }
        }
        Some(Election::Waived) => {}
    }
    errs
}

#[cfg(test)]
mod tests {
    use time::macros::date;

    use super::*;

    fn row(e: Option<Election>, tier: Option<Tier>, date: Option<Date>) -> ElectionRow {
        ElectionRow {
            external_id: Some("E1".to_owned()),
            election: e,
            tier,
            effective_date: date,
            waiver_reason: None,
        }
    }

    #[test]
    fn rows_are_checked_per_rule() {
        let ok = row(
            Some(Election::Enrolled),
            Some(Tier::Family),
            Some(date!(2027 - 01 - 01)),
        );
        assert!(validate_row(0, &ok, true).is_empty());
        assert!(validate_row(0, &row(Some(Election::Waived), None, None), true).is_empty());
        let errs = validate_row(
            3,
            &row(Some(Election::Enrolled), Some(Tier::Family), None),
            true,
        );
        assert_eq!(
            errs.iter().map(|e| e.field.as_str()).collect::<Vec<_>>(),
            vec!["elections[3].effective_date"]
        );
        assert_eq!(errs.first().and_then(|e| e.index), Some(3));
        assert_eq!(validate_row(0, &ok, false).len(), 1);
        assert_eq!(validate_row(0, &row(None, None, None), true).len(), 1);
        assert_eq!(
            serde_json::to_value(Tier::EmployeeSpouse).unwrap(),
            serde_json::json!("employeeSpouse")
        );
    }
}
