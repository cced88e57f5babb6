//! Final elections (`POST /groups/{id}/elections`, specification rules 1–6):
//! valid rows are recorded on the group's census, invalid rows come back
//! by index, enrolled members are emailed a login (never in test mode),
//! and a partner that runs benefits administration gets one
//! `deductions.changed` event per submission.

use std::collections::HashMap;

use time::Date;

use crate::census::{ElectionsWrite, StoredMember};
use crate::document::EventData;
use crate::document::event::{Deduction, DeductionsChanged};
use crate::election::{Election, ElectionRow, MAX_ELECTION_ROWS, Tier, validate_row};
use crate::email::{deliverable, member_login};
use crate::error::FieldError;
use crate::event::NewEvent;
use crate::ids::{GroupId, MemberId};
use crate::member::{EnrollmentStatus, InvitationStatus, MemberState};
use crate::mode::Mode;
use crate::partner::{BenefitsAdmin, Capability, Partner};
use crate::ports::{Minter, now_secs};
use crate::scope::Scope;
use crate::services::enrollments::enrolled_figures;
use crate::services::mailbox::Mailbox;
use crate::services::{ElectionRefusal, RecordPorts, ServiceError};

/// Array path of election rows in field errors.
pub const ROWS: &str = "elections";

/// One row as the adapter parsed it, or the errors that kept it from
/// parsing.
pub type RowInput = Result<ElectionRow, Vec<FieldError>>;

/// The answer to a submission (specification, `POST /elections`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElectionResult {
    /// Group.
    pub group_id: GroupId,
    /// Rows sent.
    pub received: u32,
    /// Rows applied.
    pub accepted: u32,
    /// Applied rows that enrolled.
    pub enrolled: u32,
    /// Applied rows that waived.
    pub waived: u32,
    /// Login emails queued (none in test mode).
    pub invited: u32,
    /// `Some("test-mode")` when invitations were suppressed.
    pub invites_suppressed: Option<&'static str>,
    /// Whether a `deductions.changed` event was written.
    pub deductions_webhook: bool,
    /// One entry per failing field of a rejected row.
    pub errors: Vec<FieldError>,
}

/// The elections service.
#[derive(Clone)]
pub struct Elections {
    ports: RecordPorts,
    mailbox: Mailbox,
    /// Where members sign in to their benefits account (`members.login_url`);
    /// without it the login email has no link.
    login_url: Option<String>,
}

/// A tier's wire value.
const fn tier_str(t: Tier) -> &'static str {
    match t {
        Tier::EmployeeOnly => "employeeOnly",
        Tier::EmployeeSpouse => "employeeSpouse",
        Tier::EmployeeChildren => "employeeChildren",
        Tier::Family => "family",
    }
}

impl Elections {
    /// The service over its ports (groups, census, quotes, the clock and
    /// ids) and the mailbox of the members' login emails.
    #[must_use]
    pub fn new(ports: RecordPorts, mailbox: Mailbox) -> Self {
        Self {
            ports,
            mailbox,
            login_url: None,
        }
    }

    /// The service with members' sign-in page at `url` (the link of their
    /// login email).
    #[must_use]
    pub fn with_login_url(mut self, url: Option<String>) -> Self {
        self.login_url = url;
        self
    }

    /// Applies a submission for `partner` in `mode`.
    ///
    /// # Errors
    /// [`ElectionRefusal::NoCapability`] without the elections capability;
    /// [`ServiceError::Invalid`] for 0 or more than 10,000 rows or when no
    /// row is valid; [`ServiceError::NotFound`] outside the scope;
    /// [`ElectionRefusal::NotEnrolled`] before the group's enrollment.
    pub async fn submit(
        &self,
        partner: &Partner,
        mode: Mode,
        group_id: &GroupId,
        rows: Vec<RowInput>,
        dry_run: bool,
    ) -> Result<ElectionResult, ServiceError> {
        if !partner.capabilities.contains(&Capability::Elections) {
            return Err(ElectionRefusal::NoCapability.into());
        }
        if rows.is_empty() || rows.len() > MAX_ELECTION_ROWS {
            return Err(ServiceError::Invalid(vec![FieldError::new(
                ROWS,
                format!("must hold 1 to {MAX_ELECTION_ROWS} rows"),
            )]));
        }
        let scope = Scope::new(partner.id.clone(), mode);
        let group = self.ports.groups.group(&scope, group_id).await?;
        let Some(enrollment) = self.ports.quotes.group_enrollment(&scope, group_id).await? else {
            return Err(ElectionRefusal::NotEnrolled.into());
        };
        let census = self.ports.census.census(&scope, group_id).await?;
        let by_external: HashMap<&str, &StoredMember> = census
            .iter()
            .filter_map(|m| m.member.external_id.as_deref().map(|e| (e, m)))
            .collect();

        let received = rows.len();
        let mut errors = Vec::new();
        let mut valid: Vec<(&StoredMember, ElectionRow)> = Vec::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (index, row) in rows.into_iter().enumerate() {
            let row = match row {
                Ok(r) => r,
                Err(e) => {
                    errors.extend(e);
                    continue;
                }
            };
            let member = row
                .external_id
                .as_deref()
                .and_then(|e| by_external.get(e).copied());
            let mut errs = validate_row(index, &row, member.is_some());
            if let (Some(ext), true) = (row.external_id.as_deref(), errs.is_empty())
                && let Some(first) = seen.insert(ext.to_owned(), index)
            {
                errs.push(FieldError::at(
                    index,
                    format!("{ROWS}[{index}].external_id"),
                    format!("duplicates row {first}"),
                ));
            }
            match member {
                Some(m) if errs.is_empty() => valid.push((m, row)),
                _ => errors.extend(errs),
            }
        }
        errors.sort_by_key(|e| e.index);
        if valid.is_empty() {
            return Err(ServiceError::Invalid(errors));
        }

        let sends = deliverable(mode);
        let stored = self
            .ports
            .quotes
            .quote(&scope, &enrollment.quote_id)
            .await?;
        let quote = enrolled_figures(&stored)?;
        let now = now_secs(self.ports.clock.as_ref());
        let mut states: Vec<(MemberId, MemberState)> = Vec::with_capacity(valid.len());
        let mut deductions = Vec::new();
        let mut invites: Vec<String> = Vec::new();
        let (mut enrolled, mut waived) = (0u32, 0u32);
        for (member, row) in &valid {
            let mut state = member.state.clone();
            let effective: Option<Date> = row.effective_date;
            match (row.election, row.tier) {
                (Some(Election::Enrolled), Some(tier)) => {
                    enrolled += 1;
                    state.enrollment = EnrollmentStatus::Enrolled;
                    state.tier = Some(tier_str(tier).to_owned());
                    state.effective_date = effective;
                    match (&member.member.email, sends) {
                        (_, false) => state.invitation = InvitationStatus::Suppressed,
                        // A member already sent a login is not sent another.
                        (Some(_), true) if member.state.invitation == InvitationStatus::Sent => {}
                        (Some(email), true) => {
                            state.invitation = InvitationStatus::Sent;
                            invites.push(email.clone());
                        }
                        (None, true) => {}
                    }
                }
                _ => {
                    waived += 1;
                    state.enrollment = EnrollmentStatus::Waived;
                    state.tier = None;
                    state.effective_date = None;
                }
            }
            let (employee, employer) = match (row.election, row.tier) {
                (Some(Election::Enrolled), Some(tier)) => quote.deduction(tier),
                _ => (0, 0),
            };
            deductions.push(Deduction {
                member_id: member.id.clone(),
                external_id: member.member.external_id.clone(),
                election: if state.enrollment == EnrollmentStatus::Enrolled {
                    "enrolled"
                } else {
                    "waived"
                }
                .to_owned(),
                tier: state.tier.clone(),
                effective_date: state
                    .effective_date
                    .map(pricing_core::census::date_opt::format),
                employee_monthly_cents: employee,
                employer_monthly_cents: employer,
            });
            states.push((member.id.clone(), state));
        }
        let deductions_webhook = partner.benefits_admin == BenefitsAdmin::Partner;
        let events: Vec<NewEvent> = if deductions_webhook {
            vec![NewEvent {
                id: Minter::new(self.ports.entropy.as_ref()).event_id(),
                scope: scope.clone(),
                created_at: now,
                data: EventData::DeductionsChanged(DeductionsChanged {
                    group_id: group.id.clone(),
                    members: deductions,
                }),
            }]
        } else {
            Vec::new()
        };
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        // Each login is an `email` job stored with the elections: the
        // request never waits on the mail server, and the worker retries.
        let minter = Minter::new(self.ports.entropy.as_ref());
        let jobs: Vec<_> = invites
            .iter()
            .filter_map(|to| {
                self.mailbox.job(
                    &minter,
                    &scope,
                    Some(group_id),
                    &member_login(to, self.login_url.as_deref()),
                    now.saturating_mul(1000),
                )
            })
            .collect();
        // A dry run answers as the write would: the logins it would send.
        let invited = count(invites.len());
        if !dry_run {
            self.ports
                .census
                .record_elections(
                    &scope,
                    &ElectionsWrite {
                        group_id: group_id.clone(),
                        states,
                        events,
                        jobs,
                        now,
                    },
                )
                .await?;
        }
        Ok(ElectionResult {
            group_id: group_id.clone(),
            received: count(received),
            accepted: count(valid.len()),
            enrolled,
            waived,
            invited,
            invites_suppressed: (!sends).then_some("test-mode"),
            deductions_webhook,
            errors,
        })
    }
}
