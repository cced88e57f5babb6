//! Members: `POST /groups/{groupId}/members`, `PATCH
//! /groups/{groupId}/members/{memberId}` and the roster `GET
//! /groups/{groupId}/members` (contract section 3, Members and roster).

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use domain::census::StoredMember;
use pricing_core::census::{MemberStatus, date_opt};

use crate::error::ApiError;

/// COBRA continuation of a member terminated after the enrollment.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CobraOut {
    /// `eligible`.
    #[schema(value_type = crate::wire::enums::CobraStatus, example = "eligible")]
    pub status: String,
    /// Termination date + 60 days.
    #[schema(format = Date, example = "2027-02-13")]
    pub election_deadline: String,
}

impl CobraOut {
    fn of(m: &StoredMember) -> Option<Self> {
        m.state.cobra_deadline.map(|d| Self {
            status: "eligible".to_owned(),
            election_deadline: date_opt::format(d),
        })
    }
}

/// A member as written: its `id`, the census fields sent, its
/// `termination_date` and `cobra` (null unless terminated after the
/// enrollment).
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "mem_3f9a1c2b7d40", "external_id": "E-1003", "first_name": "Chen", "last_name": "Wu",
    "email": "chen@acme-mfg.com", "dob": "1991-06-30", "zip": "60614", "status": "terminated",
    "termination_date": "2026-12-15",
    "cobra": {"status": "eligible", "election_deadline": "2027-02-13"}
}))]
pub struct MemberOut {
    /// `mem_` id.
    pub id: String,
    /// The census fields as sent.
    #[serde(flatten)]
    #[schema(value_type = crate::wire::census::MemberInput)]
    pub fields: Value,
    /// Last day of employment, for a terminated member.
    #[schema(required = true, format = Date)]
    pub termination_date: Option<String>,
    /// COBRA eligibility (after the enrollment).
    #[schema(required = true)]
    pub cobra: Option<CobraOut>,
}

impl MemberOut {
    /// The answer for a stored member.
    ///
    /// # Errors
    /// 500 when the member does not serialise (a bug).
    pub fn of(m: &StoredMember) -> Result<Self, ApiError> {
        Ok(Self {
            id: m.id.as_str().to_owned(),
            fields: serde_json::to_value(&m.member).map_err(ApiError::internal)?,
            termination_date: m.state.termination_date.map(date_opt::format),
            cobra: CobraOut::of(m),
        })
    }
}

/// One roster record: enrollment state and a dependent count, never a
/// dependent's identity or any health data.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "mem_3f9a1c2b7d40", "external_id": "E-1003", "first_name": "Chen", "last_name": "Wu",
    "status": "active", "enrollment_status": "enrolled", "invitation_status": "suppressed",
    "tier": "employeeSpouse", "effective_date": "2026-12-01", "dependent_count": 1, "cobra": null
}))]
pub struct RosterOut {
    /// `mem_` id.
    pub id: String,
    /// Payroll employee id.
    #[schema(required = true)]
    pub external_id: Option<String>,
    /// First name.
    #[schema(required = true)]
    pub first_name: Option<String>,
    /// Last name.
    #[schema(required = true)]
    pub last_name: Option<String>,
    /// `active` or `terminated`.
    #[schema(value_type = crate::wire::enums::MemberStatus)]
    pub status: String,
    /// `pending`, `enrolled` or `waived`.
    #[schema(value_type = crate::wire::enums::MemberEnrollmentStatus)]
    pub enrollment_status: String,
    /// `not_sent`, `suppressed` (test mode) or `sent`.
    #[schema(value_type = crate::wire::enums::InvitationStatus)]
    pub invitation_status: String,
    /// Household tier elected.
    #[schema(required = true)]
    pub tier: Option<String>,
    /// Coverage start.
    #[schema(required = true, format = Date)]
    pub effective_date: Option<String>,
    /// Dependents on the census record.
    pub dependent_count: u32,
    /// COBRA eligibility (after a termination).
    #[schema(required = true)]
    pub cobra: Option<CobraOut>,
}

impl From<&StoredMember> for RosterOut {
    fn from(m: &StoredMember) -> Self {
        let c = &m.member;
        Self {
            id: m.id.as_str().to_owned(),
            external_id: c.external_id.clone(),
            first_name: c.first_name.clone(),
            last_name: c.last_name.clone(),
            status: match c.status {
                Some(MemberStatus::Terminated) => "terminated",
                _ => "active",
            }
            .to_owned(),
            enrollment_status: m.state.enrollment.as_str().to_owned(),
            invitation_status: m.state.invitation.as_str().to_owned(),
            tier: m.state.tier.clone(),
            effective_date: m.state.effective_date.map(date_opt::format),
            dependent_count: c
                .dependents
                .as_ref()
                .map_or(0, |d| u32::try_from(d.len()).unwrap_or(u32::MAX)),
            cobra: CobraOut::of(m),
        }
    }
}

/// A page of the roster.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"members": [{
    "id": "mem_3f9a1c2b7d40", "external_id": "E-1003", "first_name": "Chen", "last_name": "Wu",
    "status": "active", "enrollment_status": "pending", "invitation_status": "not_sent",
    "tier": null, "effective_date": null, "dependent_count": 0, "cobra": null
}], "next_cursor": null}))]
pub struct RosterPage {
    /// Newest first.
    pub members: Vec<RosterOut>,
    /// Cursor of the next page; null on the last.
    #[schema(required = true)]
    pub next_cursor: Option<String>,
}
