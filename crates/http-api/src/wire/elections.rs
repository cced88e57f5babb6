//! Elections: `POST /groups/{groupId}/elections` (specification, Election
//! row and the six rules).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use domain::election::{Election, Tier};
use domain::services::elections::ElectionResult;
use pricing_core::census::Relationship;

use crate::error::Detail;

/// Every field an election row may carry (snake_case; camelCase accepted).
pub const ROW_FIELDS: &[&str] = &[
    "external_id",
    "election",
    "tier",
    "dependents",
    "effective_date",
    "waiver_reason",
];

/// Every field of a row's dependent.
pub const DEPENDENT_FIELDS: &[&str] = &["relationship"];

/// A dependent covered by the election.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct ElectionDependent {
    /// `spouse`, `domestic_partner`, `child` or `other`.
    #[schema(value_type = String, example = "spouse")]
    pub relationship: Relationship,
}

/// One election row.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[schema(example = json!({"external_id": "E-1002", "election": "enrolled", "tier": "employeeSpouse",
                          "dependents": [{"relationship": "spouse"}], "effective_date": "2026-12-01"}))]
pub struct ElectionInput {
    /// The census member's external id.
    #[schema(required = true)]
    pub external_id: Option<String>,
    /// `enrolled` or `waived`.
    #[schema(required = true, value_type = ElectionIn, example = "enrolled")]
    pub election: Option<Election>,
    /// `employeeOnly`, `employeeSpouse`, `employeeChildren` or `family`
    /// (required when enrolled; these values in both field styles).
    #[schema(value_type = Option<TierIn>, example = "employeeSpouse")]
    pub tier: Option<Tier>,
    /// Dependents covered.
    pub dependents: Option<Vec<ElectionDependent>>,
    /// Coverage start (required when enrolled).
    #[schema(format = Date, example = "2026-12-01")]
    pub effective_date: Option<String>,
    /// Why coverage was waived, e.g. `other_employer_group`.
    pub waiver_reason: Option<String>,
}

/// An election, as the document lists its values.
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum ElectionIn {
    /// Coverage elected.
    Enrolled,
    /// Coverage waived.
    Waived,
}

/// A household tier, as the document lists its values (the same in both
/// field styles).
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase")]
pub enum TierIn {
    /// The employee alone.
    EmployeeOnly,
    /// The employee and a spouse.
    EmployeeSpouse,
    /// The employee and children.
    EmployeeChildren,
    /// The employee, a spouse and children.
    Family,
}

/// The body: `{ elections: [row, …] }`, 1 to 10,000 rows.
#[derive(Debug, ToSchema)]
#[schema(example = json!({"elections": [
    {"external_id": "E-1002", "election": "enrolled", "tier": "employeeSpouse",
     "dependents": [{"relationship": "spouse"}], "effective_date": "2026-12-01"},
    {"external_id": "E-1001", "election": "waived", "waiver_reason": "other_employer_group"}
]}))]
pub struct ElectionsInput {
    /// The rows.
    pub elections: Vec<ElectionInput>,
}

/// The answer.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"group_id": "grp_8c1e4a2f9b3d", "received": 3, "accepted": 2, "enrolled": 1,
    "waived": 1, "invited": 0, "invites_suppressed": "test-mode", "deductions_webhook": true,
    "errors": [{"field": "elections[2].effective_date", "message": "is required when election is enrolled", "index": 2}]}))]
pub struct ElectionsOut {
    /// Group.
    pub group_id: String,
    /// Rows sent.
    pub received: u32,
    /// Rows applied.
    pub accepted: u32,
    /// Applied rows that enrolled.
    pub enrolled: u32,
    /// Applied rows that waived.
    pub waived: u32,
    /// Member login emails sent; none in test mode.
    pub invited: u32,
    /// `test-mode` when invitations were suppressed, else null.
    #[schema(required = true)]
    pub invites_suppressed: Option<String>,
    /// Whether a `deductions.changed` event was sent.
    pub deductions_webhook: bool,
    /// One entry per failing field of a rejected row, by row index.
    pub errors: Vec<Detail>,
}

impl From<ElectionResult> for ElectionsOut {
    fn from(r: ElectionResult) -> Self {
        Self {
            group_id: r.group_id.as_str().to_owned(),
            received: r.received,
            accepted: r.accepted,
            enrolled: r.enrolled,
            waived: r.waived,
            invited: r.invited,
            invites_suppressed: r.invites_suppressed.map(str::to_owned),
            deductions_webhook: r.deductions_webhook,
            errors: r.errors.into_iter().map(Detail::from).collect(),
        }
    }
}
