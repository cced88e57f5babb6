//! Groups: `POST /groups`, `GET /groups`, `GET` and `PATCH /groups/{id}`
//! (contract section 3, Groups).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use domain::group::{Address, Contact, CurrentCoverage, Group, GroupFields};

use crate::extract::ReadOnlyFields;
use crate::wire::timestamp;

/// A group's address.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
pub struct AddressWire {
    /// Street line.
    pub line1: Option<String>,
    /// City.
    pub city: Option<String>,
    /// Two-letter state, e.g. `IL`.
    #[schema(example = "IL")]
    pub state: Option<String>,
    /// Five-digit ZIP.
    #[schema(example = "60601", pattern = "^[0-9]{5}$")]
    pub zip: Option<String>,
}

/// A group's contact person.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
pub struct ContactWire {
    /// Name.
    pub name: Option<String>,
    /// Email.
    pub email: Option<String>,
    /// Title.
    pub title: Option<String>,
}

/// A group's current coverage.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
pub struct CoverageWire {
    /// Plan type, e.g. `fully_insured`.
    pub plan_type: Option<String>,
    /// Carrier.
    pub carrier: Option<String>,
    /// Cost per employee per month, cents (0 to 100,000,000, the monthly
    /// maximum `pricing_core::money::MAX_MONTHLY_CENTS`).
    #[schema(minimum = 0, maximum = 100_000_000)]
    pub pepm_cents: Option<i64>,
    /// Renewal date, `YYYY-MM-DD`.
    #[schema(format = Date)]
    pub renewal_date: Option<String>,
}

/// The writable fields of a group. In `POST /groups`, `company_name` and
/// `domain` are required; in `PATCH`, every field is optional and a field
/// sent as null is left unchanged. Lifecycle fields (`id`, `mode`,
/// `status`, `census_member_count`, `company_state`, timestamps) are
/// read-only.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[schema(example = json!({
    "company_name": "Acme Manufacturing", "domain": "acme-mfg.com", "external_id": "crm-4411",
    "address": {"line1": "1 Main St", "city": "Chicago", "state": "IL", "zip": "60601"},
    "contact": {"name": "Dana Lee", "email": "dana@acme-mfg.com", "title": "HR Director"},
    "current_coverage": {"plan_type": "fully_insured", "carrier": "Blue Plan", "pepm_cents": 78000, "renewal_date": "2027-01-01"}
}))]
pub struct GroupInput {
    /// Company name, 1 to 200 characters (required on create).
    pub company_name: Option<String>,
    /// Company domain, a lowercase DNS name (required on create).
    #[schema(example = "acme-mfg.com")]
    pub domain: Option<String>,
    /// The partner's own company id.
    pub external_id: Option<String>,
    /// Address.
    pub address: Option<AddressWire>,
    /// Contact.
    pub contact: Option<ContactWire>,
    /// Current coverage.
    pub current_coverage: Option<CoverageWire>,
}

/// Fields a caller may not write.
pub const READ_ONLY: &[&str] = &[
    "id",
    "mode",
    "status",
    "census_member_count",
    "company_state",
    "created_at",
    "updated_at",
];

impl ReadOnlyFields for GroupInput {
    const READ_ONLY: &'static [&'static str] = READ_ONLY;
}

impl From<GroupInput> for GroupFields {
    fn from(g: GroupInput) -> Self {
        Self {
            company_name: g.company_name,
            domain: g.domain,
            external_id: g.external_id,
            address: g.address.map(|a| Address {
                line1: a.line1,
                city: a.city,
                state: a.state,
                zip: a.zip,
            }),
            contact: g.contact.map(|c| Contact {
                name: c.name,
                email: c.email,
                title: c.title,
            }),
            current_coverage: g.current_coverage.map(|c| CurrentCoverage {
                plan_type: c.plan_type,
                carrier: c.carrier,
                pepm_cents: c.pepm_cents,
                renewal_date: c.renewal_date,
            }),
        }
    }
}

/// An employer group.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "grp_8c1e4a2f9b3d", "mode": "test", "status": "created",
    "company_name": "Acme Manufacturing", "domain": "acme-mfg.com", "external_id": "crm-4411",
    "address": {"line1": "1 Main St", "city": "Chicago", "state": "IL", "zip": "60601"},
    "contact": {"name": "Dana Lee", "email": "dana@acme-mfg.com", "title": "HR Director"},
    "current_coverage": {"plan_type": "fully_insured", "carrier": "Blue Plan", "pepm_cents": 78000, "renewal_date": "2027-01-01"},
    "census_member_count": 0, "company_state": null,
    "created_at": "2026-11-21T13:14:00Z", "updated_at": "2026-11-21T13:14:00Z"
}))]
pub struct GroupOut {
    /// `grp_` + 12 hex.
    #[schema(pattern = "^grp_[0-9a-f]{12}$")]
    pub id: String,
    /// `test` or `live`.
    #[schema(value_type = crate::wire::enums::Mode)]
    pub mode: String,
    /// `created`, `census_received`, `quoted`, `enrolled` or `active`.
    #[schema(value_type = domain::group::GroupStatus)]
    pub status: String,
    /// Company name.
    pub company_name: String,
    /// Company domain.
    pub domain: String,
    /// The partner's own company id.
    #[schema(required = true)]
    pub external_id: Option<String>,
    /// Address.
    #[schema(required = true)]
    pub address: Option<AddressWire>,
    /// Contact.
    #[schema(required = true)]
    pub contact: Option<ContactWire>,
    /// Current coverage.
    #[schema(required = true)]
    pub current_coverage: Option<CoverageWire>,
    /// Members in the current census.
    pub census_member_count: u32,
    /// Provisioned company state: null until enrollment, then `sandbox`, then `prod`.
    #[schema(required = true, value_type = Option<crate::wire::enums::CompanyState>)]
    pub company_state: Option<String>,
    /// Creation time (RFC 3339 UTC, seconds).
    #[schema(format = DateTime, example = "2026-11-21T13:14:00Z")]
    pub created_at: String,
    /// Last change (RFC 3339 UTC, seconds).
    #[schema(format = DateTime, example = "2026-11-21T13:14:00Z")]
    pub updated_at: String,
}

impl From<&Group> for GroupOut {
    fn from(g: &Group) -> Self {
        Self {
            id: g.id.as_str().to_owned(),
            mode: g.mode.as_str().to_owned(),
            status: g.status.as_str().to_owned(),
            company_name: g.company_name.clone(),
            domain: g.domain.clone(),
            external_id: g.external_id.clone(),
            address: g.address.as_ref().map(|a| AddressWire {
                line1: a.line1.clone(),
                city: a.city.clone(),
                state: a.state.clone(),
                zip: a.zip.clone(),
            }),
            contact: g.contact.as_ref().map(|c| ContactWire {
                name: c.name.clone(),
                email: c.email.clone(),
                title: c.title.clone(),
            }),
            current_coverage: g.current_coverage.as_ref().map(|c| CoverageWire {
                plan_type: c.plan_type.clone(),
                carrier: c.carrier.clone(),
                pepm_cents: c.pepm_cents,
                renewal_date: c.renewal_date.clone(),
            }),
            census_member_count: g.census_member_count,
            company_state: g.company_state.map(|s| s.as_str().to_owned()),
            created_at: timestamp(g.created_at),
            updated_at: timestamp(g.updated_at),
        }
    }
}

/// A page of groups.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"groups": [{
    "id": "grp_8c1e4a2f9b3d", "mode": "test", "status": "created",
    "company_name": "Acme Manufacturing", "domain": "acme-mfg.com", "external_id": null,
    "address": null, "contact": null, "current_coverage": null,
    "census_member_count": 0, "company_state": null,
    "created_at": "2026-11-21T13:14:00Z", "updated_at": "2026-11-21T13:14:00Z"
}], "next_cursor": null}))]
pub struct GroupList {
    /// Newest first.
    pub groups: Vec<GroupOut>,
    /// Pass as `cursor` for the next page; null on the last page.
    #[schema(required = true)]
    pub next_cursor: Option<String>,
}
