//! The census: `PUT /groups/{groupId}/census` and `GET
//! /groups/{groupId}/census` (contract section 3, Census).

use serde::Serialize;
use utoipa::ToSchema;

use crate::error::Detail;

/// Every field a census row may carry (snake_case; camelCase is accepted).
pub const MEMBER_FIELDS: &[&str] = &[
    "external_id",
    "first_name",
    "last_name",
    "email",
    "dob",
    "age",
    "zip",
    "sex_at_birth",
    "employment_type",
    "hire_date",
    "status",
    "dependents",
];

/// Every field a dependent may carry.
pub const DEPENDENT_FIELDS: &[&str] = &["relationship", "name", "dob", "age", "sex_at_birth"];

/// A dependent.
#[derive(Debug, Serialize, ToSchema)]
pub struct DependentWire {
    /// `spouse`, `domestic_partner`, `child` or `other`.
    #[schema(example = "child")]
    pub relationship: String,
    /// Name.
    pub name: Option<String>,
    /// Date of birth (required for a broker's dependents).
    #[schema(format = Date)]
    pub dob: Option<String>,
    /// Age, instead of `dob` (not for brokers).
    pub age: Option<u32>,
    /// `male`, `female` or `other`.
    pub sex_at_birth: Option<String>,
}

/// One census member, as sent.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "external_id": "E-1003", "first_name": "Cara", "last_name": "Nguyen", "email": "cara@acme-mfg.com",
    "dob": "1991-07-19", "zip": "60607", "sex_at_birth": "female", "employment_type": "full_time",
    "hire_date": "2026-11-16", "status": "active",
    "dependents": [{"relationship": "child", "name": "Leo", "dob": "2016-09-30"}]
}))]
pub struct MemberInput {
    /// Payroll employee id; the first upsert key.
    pub external_id: Option<String>,
    /// First name.
    pub first_name: Option<String>,
    /// Last name.
    pub last_name: Option<String>,
    /// Email; the second upsert key (case-insensitive).
    pub email: Option<String>,
    /// Date of birth (required for every employee and dependent of a broker).
    #[schema(format = Date)]
    pub dob: Option<String>,
    /// Age, instead of `dob` (not for brokers).
    pub age: Option<u32>,
    /// Home ZIP, 5 digits.
    #[schema(pattern = "^[0-9]{5}$", example = "60601")]
    pub zip: String,
    /// `male`, `female` or `other`.
    pub sex_at_birth: Option<String>,
    /// `full_time`, `part_time` or `contractor`.
    pub employment_type: Option<String>,
    /// Hire date.
    #[schema(format = Date)]
    pub hire_date: Option<String>,
    /// `active` (default) or `terminated`.
    pub status: Option<String>,
    /// At most 6.
    #[schema(max_items = 6)]
    pub dependents: Option<Vec<DependentWire>>,
}

/// The body of `PATCH /groups/{groupId}/members/{memberId}`: the fields to
/// change (a field sent as `null` or left out keeps its value), and
/// `termination_date` with a termination.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"status": "terminated", "termination_date": "2026-12-15"}))]
pub struct MemberPatch {
    /// Payroll employee id.
    pub external_id: Option<String>,
    /// First name.
    pub first_name: Option<String>,
    /// Last name.
    pub last_name: Option<String>,
    /// Email.
    pub email: Option<String>,
    /// Date of birth.
    #[schema(format = Date)]
    pub dob: Option<String>,
    /// Age, instead of `dob` (not for brokers).
    pub age: Option<u32>,
    /// Home ZIP, 5 digits.
    #[schema(pattern = "^[0-9]{5}$", example = "60601")]
    pub zip: Option<String>,
    /// `male`, `female` or `other`.
    pub sex_at_birth: Option<String>,
    /// `full_time`, `part_time` or `contractor`.
    pub employment_type: Option<String>,
    /// Hire date.
    #[schema(format = Date)]
    pub hire_date: Option<String>,
    /// `active` or `terminated`.
    pub status: Option<String>,
    /// The last day of coverage; required when `status` becomes
    /// `terminated`.
    #[schema(format = Date)]
    pub termination_date: Option<String>,
    /// At most 6; replaces the stored dependents.
    #[schema(max_items = 6)]
    pub dependents: Option<Vec<DependentWire>>,
}

/// The body of `PUT /groups/{groupId}/census`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"members": [
    {"external_id": "E-1001", "first_name": "Ana", "last_name": "Diaz", "email": "ana@acme-mfg.com", "dob": "1988-04-12", "zip": "60601"},
    {"external_id": "E-1002", "first_name": "Ben", "last_name": "Okafor", "dob": "1979-11-02", "zip": "60614",
     "dependents": [{"relationship": "spouse", "dob": "1981-05-20"}]}
]}))]
pub struct CensusInput {
    /// 0 to 10,000 members; the census is replaced as a whole.
    #[schema(max_items = 10000)]
    pub members: Vec<MemberInput>,
}

/// The answer of a census write.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "group_id": "grp_8c1e4a2f9b3d", "received": 3, "accepted": 2, "member_count": 2,
    "errors": [{"field": "members[2].dob", "message": "is required for every employee and dependent of a broker", "index": 2}],
    "rates": "pending"
}))]
pub struct CensusResult {
    /// Group.
    pub group_id: String,
    /// Employees sent (in CSV, employee rows; a dependent row is part of
    /// its employee).
    pub received: u32,
    /// Employees accepted.
    pub accepted: u32,
    /// Members in the census after the write.
    pub member_count: u32,
    /// One entry per failing field of a rejected row, with its row index.
    pub errors: Vec<Detail>,
    /// `pending`: the local market comparison runs in the background;
    /// `POST /quotes` answers 409 `rates_pending` until it finishes.
    #[schema(example = "pending")]
    pub rates: String,
}

/// A stored member: its `mem_` id and the fields sent.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = CensusMemberOut, example = json!({
    "id": "mem_1f0c2d3e4a5b", "external_id": "E-1001", "first_name": "Ana", "last_name": "Diaz",
    "email": "ana@acme-mfg.com", "dob": "1988-04-12", "zip": "60601"
}))]
pub struct MemberOut {
    /// `mem_` id, kept across writes that match the member.
    pub id: String,
    /// The fields sent (absent fields are omitted).
    #[serde(flatten)]
    pub member: MemberInput,
}

/// A page of the census.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "group_id": "grp_8c1e4a2f9b3d", "member_count": 2, "updated_at": "2026-11-21T13:14:00Z",
    "members": [{"id": "mem_1f0c2d3e4a5b", "external_id": "E-1001", "dob": "1988-04-12", "zip": "60601"}],
    "next_cursor": null
}))]
pub struct CensusPage {
    /// Group.
    pub group_id: String,
    /// Members in the census.
    pub member_count: u32,
    /// The last change to the group or its census.
    #[schema(format = DateTime)]
    pub updated_at: String,
    /// Members, newest first by first appearance.
    #[schema(value_type = Vec<MemberOut>)]
    pub members: Vec<serde_json::Value>,
    /// Pass as `cursor` for the next page; null on the last page.
    #[schema(required = true)]
    pub next_cursor: Option<String>,
}
