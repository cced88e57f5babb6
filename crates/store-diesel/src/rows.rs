//! Row structs and their conversions to and from domain entities. Enums
//! are stored as their wire strings and JSON documents as TEXT, so both
//! backends share one schema.

use diesel::prelude::{Insertable, Queryable, QueryableByName, Selectable};
use domain::api_key::{KeyDigest, KeyRecord};
use domain::census::StoredMember;
use domain::document::{EnrollmentDocument, EventData, JobPayload, QuoteDocument};
use domain::enrollment::{Enrollment, OnboardingMode};
use domain::event::{DeliveryState, Event, EventType, NewEvent};
use domain::group::{CompanyState, Group, GroupStatus};
use domain::ids::{EnrollmentId, EventId, GroupId, JobId, KeyId, MemberId, PartnerId, QuoteId};
use domain::job::{Job, JobKind, JobState, NewJob};
use domain::member::{EnrollmentStatus, InvitationStatus, MemberState};
use domain::onboarding::Checklist;
use domain::partner::{BenefitsAdmin, Capability, Partner, PartnerKind};
use domain::quote::{Quote, QuoteKind, QuoteStatus};

use crate::error::corrupt;
use crate::schema::{api_keys, enrollments, events, groups, jobs, members, partners, quotes};

mod columns;

use columns::{R, date_text, enum_text, json_doc, json_enum, known, parsed, stored_date, to_json};
pub(crate) use columns::{count, int, mode, scope, stored};

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = partners, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite), treat_none_as_default_value = false)]
pub(crate) struct PartnerRow {
    pub id: String,
    pub name: String,
    pub kind: String,
    pub benefits_admin: String,
    pub capabilities: String,
    pub live_enabled: bool,
    pub live_changed_at: Option<i64>,
    pub created_at: i64,
    pub embed_origins: String,
    pub commercial_done_at: Option<i64>,
}

impl PartnerRow {
    pub(crate) fn new(p: &Partner, now: i64) -> Self {
        let caps: Vec<String> = p.capabilities.iter().map(enum_text).collect();
        Self {
            id: p.id.to_string(),
            name: p.name.clone(),
            kind: enum_text(&p.kind),
            benefits_admin: enum_text(&p.benefits_admin),
            capabilities: caps.join(","),
            live_enabled: p.live_enabled,
            live_changed_at: None,
            created_at: now,
            embed_origins: to_json(&p.embed_origins).unwrap_or_default(),
            commercial_done_at: None,
        }
    }

    pub(crate) fn into_domain(self) -> R<Partner> {
        let capabilities = self
            .capabilities
            .split(',')
            .filter(|c| !c.is_empty())
            .map(|c| json_enum::<Capability>("capability", c))
            .collect::<R<Vec<_>>>()?;
        Ok(Partner {
            id: parsed("partner id", &self.id, PartnerId::parse)?,
            name: self.name,
            kind: json_enum::<PartnerKind>("partner kind", &self.kind)?,
            benefits_admin: json_enum::<BenefitsAdmin>("benefits admin", &self.benefits_admin)?,
            live_enabled: self.live_enabled,
            commercial_done: self.commercial_done_at.is_some(),
            capabilities,
            embed_origins: json_doc("embed origins", Some(&self.embed_origins))?
                .unwrap_or_default(),
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = api_keys, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite), treat_none_as_default_value = false)]
pub(crate) struct KeyRow {
    pub id: String,
    pub partner_id: String,
    pub mode: String,
    pub digest: String,
    pub prefix: String,
    pub sealed: Option<Vec<u8>>,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
}

impl KeyRow {
    pub(crate) fn new(k: &KeyRecord) -> Self {
        Self {
            id: k.id.to_string(),
            partner_id: k.partner_id.to_string(),
            mode: k.mode.as_str().to_owned(),
            digest: hex::encode(k.digest.as_bytes()),
            prefix: k.prefix.clone(),
            sealed: k.sealed.clone(),
            created_at: k.created_at,
            revoked_at: k.revoked_at,
        }
    }

    pub(crate) fn into_domain(self) -> R<KeyRecord> {
        let digest = <[u8; 32] as hex::FromHex>::from_hex(&self.digest)
            .map_err(|_| corrupt("key digest", &self.digest))?;
        Ok(KeyRecord {
            id: parsed("key id", &self.id, KeyId::parse)?,
            partner_id: parsed("partner id", &self.partner_id, PartnerId::parse)?,
            mode: mode(&self.mode)?,
            digest: KeyDigest::from_bytes(digest),
            prefix: self.prefix,
            sealed: self.sealed,
            created_at: self.created_at,
            revoked_at: self.revoked_at,
        })
    }
}

#[derive(Clone, Queryable, QueryableByName, Selectable, Insertable)]
#[diesel(table_name = groups, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite), treat_none_as_default_value = false)]
pub(crate) struct GroupRow {
    pub id: String,
    pub partner_id: String,
    pub mode: String,
    pub status: String,
    pub company_name: String,
    pub domain: String,
    pub external_id: Option<String>,
    pub address: Option<String>,
    pub contact: Option<String>,
    pub current_coverage: Option<String>,
    pub census_member_count: i32,
    pub rating_digest: Option<String>,
    pub company_state: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

impl GroupRow {
    pub(crate) fn new(g: &Group) -> R<Self> {
        Ok(Self {
            id: g.id.to_string(),
            partner_id: g.partner_id.to_string(),
            mode: g.mode.as_str().to_owned(),
            status: g.status.as_str().to_owned(),
            company_name: g.company_name.clone(),
            domain: g.domain.clone(),
            external_id: g.external_id.clone(),
            address: g.address.as_ref().map(to_json).transpose()?,
            contact: g.contact.as_ref().map(to_json).transpose()?,
            current_coverage: g.current_coverage.as_ref().map(to_json).transpose()?,
            census_member_count: int(g.census_member_count),
            rating_digest: g.rating_digest.clone(),
            company_state: g.company_state.map(|s| s.as_str().to_owned()),
            created_at: g.created_at,
            updated_at: g.updated_at,
        })
    }

    pub(crate) fn into_domain(self) -> R<Group> {
        Ok(Group {
            id: parsed("group id", &self.id, GroupId::parse)?,
            partner_id: parsed("partner id", &self.partner_id, PartnerId::parse)?,
            mode: mode(&self.mode)?,
            status: known("group status", &self.status, GroupStatus::parse)?,
            company_name: self.company_name,
            domain: self.domain,
            external_id: self.external_id,
            address: json_doc("address", self.address.as_deref())?,
            contact: json_doc("contact", self.contact.as_deref())?,
            current_coverage: json_doc("current coverage", self.current_coverage.as_deref())?,
            census_member_count: count(self.census_member_count),
            rating_digest: self.rating_digest,
            company_state: self
                .company_state
                .as_deref()
                .map(|s| known("company state", s, CompanyState::parse))
                .transpose()?,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// A member's roster-state columns, all a census replace reads of the
/// members it replaces (not their fields, which the write brings anew).
#[derive(Queryable, Selectable)]
#[diesel(table_name = members, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct RosterState {
    pub id: String,
    pub enrollment_status: String,
    pub invitation_status: String,
    pub tier: Option<String>,
    pub effective_date: Option<String>,
    pub termination_date: Option<String>,
    pub cobra_deadline: Option<String>,
}

#[derive(Queryable, Selectable, Insertable, serde::Serialize)]
#[diesel(table_name = members, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite), treat_none_as_default_value = false)]
pub(crate) struct MemberRow {
    pub id: String,
    pub group_id: String,
    pub partner_id: String,
    pub mode: String,
    pub external_id: Option<String>,
    pub email_key: Option<String>,
    pub position: i32,
    pub data: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub enrollment_status: String,
    pub invitation_status: String,
    pub tier: Option<String>,
    pub effective_date: Option<String>,
    pub termination_date: Option<String>,
    pub cobra_deadline: Option<String>,
    /// The census record's status (`active` or `terminated`), for the
    /// roster's filter; the record itself stays in `data`.
    pub status: String,
}

/// A member's census status as stored in the `status` column.
pub(crate) fn member_status(status: Option<pricing_core::census::MemberStatus>) -> &'static str {
    match status {
        Some(pricing_core::census::MemberStatus::Terminated) => "terminated",
        _ => "active",
    }
}

impl MemberRow {
    /// The roster-state columns of `state`.
    pub(crate) fn set_state(&mut self, state: &MemberState) {
        self.enrollment_status = state.enrollment.as_str().to_owned();
        self.invitation_status = state.invitation.as_str().to_owned();
        self.tier.clone_from(&state.tier);
        self.effective_date = date_text(state.effective_date);
        self.termination_date = date_text(state.termination_date);
        self.cobra_deadline = date_text(state.cobra_deadline);
    }

    /// A row with only the roster-state columns meaningful (to render a
    /// state into its columns).
    pub(crate) fn blank() -> Self {
        Self {
            id: String::new(),
            group_id: String::new(),
            partner_id: String::new(),
            mode: String::new(),
            external_id: None,
            email_key: None,
            position: 0,
            data: String::new(),
            created_at: 0,
            updated_at: 0,
            enrollment_status: String::new(),
            invitation_status: String::new(),
            tier: None,
            effective_date: None,
            termination_date: None,
            cobra_deadline: None,
            status: String::new(),
        }
    }

    /// Takes the roster-state columns of `old` (the same member before a
    /// census replace).
    pub(crate) fn copy_state(&mut self, old: RosterState) {
        self.enrollment_status = old.enrollment_status;
        self.invitation_status = old.invitation_status;
        self.tier = old.tier;
        self.effective_date = old.effective_date;
        self.termination_date = old.termination_date;
        self.cobra_deadline = old.cobra_deadline;
    }

    fn state(&self) -> R<MemberState> {
        Ok(MemberState {
            enrollment: known(
                "enrollment status",
                &self.enrollment_status,
                EnrollmentStatus::parse,
            )?,
            invitation: known(
                "invitation status",
                &self.invitation_status,
                InvitationStatus::parse,
            )?,
            tier: self.tier.clone(),
            effective_date: stored_date(self.effective_date.as_deref(), "effective date")?,
            termination_date: stored_date(self.termination_date.as_deref(), "termination date")?,
            cobra_deadline: stored_date(self.cobra_deadline.as_deref(), "cobra deadline")?,
        })
    }

    pub(crate) fn into_domain(self) -> R<StoredMember> {
        let state = self.state()?;
        Ok(StoredMember {
            state,
            id: parsed("member id", &self.id, MemberId::parse)?,
            group_id: parsed("group id", &self.group_id, GroupId::parse)?,
            member: serde_json::from_str(&self.data).map_err(|_| corrupt("member", &self.id))?,
            position: count(self.position),
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// The JSON document of a census member's fields.
pub(crate) fn member_data<T: serde::Serialize>(m: &T) -> R<String> {
    to_json(m)
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = quotes, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite), treat_none_as_default_value = false)]
pub(crate) struct QuoteRow {
    pub id: String,
    pub group_id: String,
    pub partner_id: String,
    pub mode: String,
    pub status: String,
    pub rating_digest: Option<String>,
    pub expires_at: i64,
    pub body: String,
    pub created_at: i64,
    pub kind: String,
    pub request_digest: Option<String>,
    pub acceptance: Option<String>,
}

impl QuoteRow {
    pub(crate) fn new(q: &Quote) -> R<Self> {
        Ok(Self {
            id: q.id.to_string(),
            group_id: q.group_id.to_string(),
            partner_id: q.scope.partner.to_string(),
            mode: q.scope.mode.as_str().to_owned(),
            status: q.status.as_str().to_owned(),
            rating_digest: q.rating_digest.clone(),
            expires_at: q.expires_at,
            body: stored(q.body.to_stored())?,
            created_at: q.created_at,
            kind: q.kind.as_str().to_owned(),
            request_digest: q.request_digest.clone(),
            acceptance: q.acceptance.as_ref().map(to_json).transpose()?,
        })
    }

    pub(crate) fn into_domain(self) -> R<Quote> {
        let kind = known("quote kind", &self.kind, QuoteKind::parse)?;
        Ok(Quote {
            id: parsed("quote id", &self.id, QuoteId::parse)?,
            kind,
            request_digest: self.request_digest,
            scope: scope(&self.partner_id, &self.mode)?,
            group_id: parsed("group id", &self.group_id, GroupId::parse)?,
            status: known("quote status", &self.status, QuoteStatus::parse)?,
            rating_digest: self.rating_digest,
            expires_at: self.expires_at,
            body: QuoteDocument::from_stored(kind, &self.body)
                .map_err(|_| corrupt("quote body", &self.id))?,
            created_at: self.created_at,
            acceptance: json_doc("quote acceptance", self.acceptance.as_deref())?,
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = enrollments, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite), treat_none_as_default_value = false)]
pub(crate) struct EnrollmentRow {
    pub id: String,
    pub group_id: String,
    pub quote_id: String,
    pub partner_id: String,
    pub mode: String,
    pub onboarding_mode: String,
    pub body: String,
    pub created_at: i64,
    pub onboarding: String,
    pub onboarding_revision: i64,
}

impl EnrollmentRow {
    pub(crate) fn new(e: &Enrollment) -> R<Self> {
        Ok(Self {
            id: e.id.to_string(),
            group_id: e.group_id.to_string(),
            quote_id: e.quote_id.to_string(),
            partner_id: e.scope.partner.to_string(),
            mode: e.scope.mode.as_str().to_owned(),
            onboarding_mode: enum_text(&e.onboarding_mode),
            body: stored(e.body.to_stored())?,
            created_at: e.created_at,
            onboarding: stored(e.onboarding.to_stored())?,
            onboarding_revision: e.onboarding_revision,
        })
    }

    pub(crate) fn into_domain(self) -> R<Enrollment> {
        Ok(Enrollment {
            id: parsed("enrollment id", &self.id, EnrollmentId::parse)?,
            scope: scope(&self.partner_id, &self.mode)?,
            group_id: parsed("group id", &self.group_id, GroupId::parse)?,
            quote_id: parsed("quote id", &self.quote_id, QuoteId::parse)?,
            onboarding_mode: json_enum::<OnboardingMode>("onboarding mode", &self.onboarding_mode)?,
            body: EnrollmentDocument::from_stored(&self.body)
                .map_err(|_| corrupt("enrollment body", &self.id))?,
            onboarding: Checklist::from_stored(&self.onboarding)
                .map_err(|_| corrupt("onboarding checklist", &self.id))?,
            onboarding_revision: self.onboarding_revision,
            created_at: self.created_at,
        })
    }
}

#[derive(Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = events, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite), treat_none_as_default_value = false)]
pub(crate) struct EventRow {
    pub id: String,
    pub partner_id: String,
    pub mode: String,
    pub event_type: String,
    pub data: String,
    pub created_at: i64,
    pub state: String,
    pub attempts: i32,
    pub next_attempt_at_ms: Option<i64>,
    pub locked_until_ms: Option<i64>,
    pub last_status: Option<i32>,
}

impl EventRow {
    /// A pending event, due at `due_ms`.
    pub(crate) fn new(e: &NewEvent, due_ms: i64) -> R<Self> {
        Ok(Self {
            id: e.id.to_string(),
            partner_id: e.scope.partner.to_string(),
            mode: e.scope.mode.as_str().to_owned(),
            event_type: e.event_type().as_str().to_owned(),
            data: stored(e.data.to_stored())?,
            created_at: e.created_at,
            state: DeliveryState::Pending.as_str().to_owned(),
            attempts: 0,
            next_attempt_at_ms: Some(due_ms),
            locked_until_ms: None,
            last_status: None,
        })
    }

    pub(crate) fn into_domain(self) -> R<Event> {
        Ok(Event {
            event: NewEvent {
                id: parsed("event id", &self.id, EventId::parse)?,
                scope: scope(&self.partner_id, &self.mode)?,
                created_at: self.created_at,
                data: EventData::from_stored(
                    known("event type", &self.event_type, EventType::parse)?,
                    &self.data,
                )
                .map_err(|_| corrupt("event data", &self.id))?,
            },
            state: known("delivery state", &self.state, DeliveryState::parse)?,
            attempts: count(self.attempts),
            next_attempt_at: self.next_attempt_at_ms.map(|ms| ms.div_euclid(1000)),
            last_status: self.last_status.and_then(|s| u16::try_from(s).ok()),
            lease_until_ms: self.locked_until_ms,
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = jobs, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite), treat_none_as_default_value = false)]
pub(crate) struct JobRow {
    pub id: String,
    pub partner_id: String,
    pub mode: String,
    pub kind: String,
    pub group_id: Option<String>,
    pub payload: String,
    pub state: String,
    pub attempts: i32,
    pub run_after_ms: i64,
    pub locked_until_ms: Option<i64>,
    pub last_error: Option<String>,
    /// The process holding the claim of a running job, if it has one.
    pub owner_id: Option<String>,
}

impl JobRow {
    pub(crate) fn new(j: &NewJob) -> R<Self> {
        Ok(Self {
            id: j.id.to_string(),
            partner_id: j.scope.partner.to_string(),
            mode: j.scope.mode.as_str().to_owned(),
            kind: j.kind().as_str().to_owned(),
            group_id: j.group_id.as_ref().map(ToString::to_string),
            payload: stored(j.payload.to_stored())?,
            state: JobState::Queued.as_str().to_owned(),
            attempts: 0,
            run_after_ms: j.run_after_ms,
            locked_until_ms: None,
            last_error: None,
            owner_id: None,
        })
    }

    pub(crate) fn into_domain(self) -> R<Job> {
        Ok(Job {
            job: NewJob {
                id: parsed("job id", &self.id, JobId::parse)?,
                scope: scope(&self.partner_id, &self.mode)?,
                group_id: self
                    .group_id
                    .as_deref()
                    .map(|g| parsed("group id", g, GroupId::parse))
                    .transpose()?,
                payload: JobPayload::from_stored(
                    known("job kind", &self.kind, JobKind::parse)?,
                    &self.payload,
                )
                .map_err(|_| corrupt("job payload", &self.id))?,
                run_after_ms: self.run_after_ms,
            },
            state: known("job state", &self.state, JobState::parse)?,
            attempts: count(self.attempts),
            locked_until_ms: self.locked_until_ms,
        })
    }
}
