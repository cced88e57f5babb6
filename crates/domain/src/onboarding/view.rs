//! A step as partners and the portal see it: `{ id, title, required,
//! status, completedAt, requirements, errors, data }`. `data` holds the
//! values saved, never the account number nor the deposit amounts.

use serde::Serialize;

use super::fields::{StreetAddress, ein_display};
use super::{Checklist, StepError, StepId, StepStatus};
use crate::ports::rfc3339;

/// One step, shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepView {
    /// Stable id.
    pub id: StepId,
    /// Title.
    pub title: &'static str,
    /// Whether going live waits for it.
    pub required: bool,
    /// Status.
    pub status: StepStatus,
    /// When it was completed (RFC 3339).
    pub completed_at: Option<String>,
    /// Top-level fields still missing.
    pub requirements: Vec<&'static str>,
    /// A verifier's refusal.
    pub errors: Vec<StepError>,
    /// What was saved, or null.
    pub data: Option<StepData>,
}

/// The values saved for a step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum StepData {
    /// `company_profile`.
    CompanyProfile {
        /// Legal name.
        legal_name: Option<String>,
        /// `NN-NNNNNNN`.
        ein: Option<String>,
        /// Legal form.
        entity_type: Option<&'static str>,
        /// Street address.
        address: Option<StreetAddress>,
        /// E.164.
        phone: Option<String>,
        /// The signatory's title.
        signatory_title: Option<String>,
    },
    /// `business_verification`: the facts verified.
    BusinessVerification {
        /// `NN-NNNNNNN`.
        ein: String,
        /// Legal name.
        legal_name: String,
        /// When it was asked for (RFC 3339).
        requested_at: String,
    },
    /// `banking`: never the account number.
    Banking {
        /// ABA routing number.
        routing_number: String,
        /// The account number's last four digits.
        last4: String,
        /// `checking` or `savings`.
        account_type: &'static str,
        /// The account holder.
        holder_name: String,
    },
    /// `plan_setup`.
    PlanSetup {
        /// `diamond` or `value`.
        plan_id: &'static str,
        /// Employer share, percent.
        employer_contribution_pct: u32,
        /// When coverage starts for a new hire.
        waiting_period: &'static str,
        /// Minimum weekly hours.
        min_hours_per_week: u32,
        /// Who signed and when (RFC 3339), once signed.
        signed_by: Option<String>,
        /// When it was signed (RFC 3339).
        signed_at: Option<String>,
    },
    /// `employee_invitations`.
    EmployeeInvitations {
        /// When (RFC 3339).
        sent_at: String,
        /// Test mode: recorded, not sent.
        suppressed: bool,
        /// Employees invited.
        count: u32,
    },
}

impl Checklist {
    /// The five steps, in order.
    #[must_use]
    pub fn steps(&self) -> Vec<StepView> {
        StepId::ALL.into_iter().map(|id| self.step(id)).collect()
    }

    /// One step.
    #[must_use]
    pub fn step(&self, id: StepId) -> StepView {
        let (completed_at, errors, requirements, data) = match id {
            StepId::CompanyProfile => {
                let s = &self.company_profile;
                let profile = s.data.clone().unwrap_or_default();
                let missing = profile.missing();
                let data = s.data.as_ref().map(|p| StepData::CompanyProfile {
                    legal_name: p.legal_name.clone(),
                    ein: p.ein.as_deref().map(ein_display),
                    entity_type: p.entity_type.map(|t| t.as_str()),
                    address: p.address.clone(),
                    phone: p.phone.clone(),
                    signatory_title: p.signatory_title.clone(),
                });
                (s.completed_at, &s.errors, missing, data)
            }
            StepId::BusinessVerification => {
                let s = &self.business_verification;
                let data = s.data.as_ref().map(|v| StepData::BusinessVerification {
                    ein: ein_display(&v.ein),
                    legal_name: v.legal_name.clone(),
                    requested_at: rfc3339(v.requested_at),
                });
                (s.completed_at, &s.errors, Vec::new(), data)
            }
            StepId::Banking => {
                let s = &self.banking;
                let data = s.data.as_ref().map(|b| StepData::Banking {
                    routing_number: b.routing_number.clone(),
                    last4: b.last4.clone(),
                    account_type: b.account_type.as_str(),
                    holder_name: b.holder_name.clone(),
                });
                let missing = if s.data.is_none() {
                    vec![
                        "routing_number",
                        "account_number",
                        "account_type",
                        "holder_name",
                    ]
                } else {
                    Vec::new()
                };
                (s.completed_at, &s.errors, missing, data)
            }
            StepId::PlanSetup => {
                let s = &self.plan_setup;
                let data = s.data.as_ref().map(|p| StepData::PlanSetup {
                    plan_id: p.plan_id.as_str(),
                    employer_contribution_pct: p.employer_contribution_pct,
                    waiting_period: p.waiting_period.as_str(),
                    min_hours_per_week: p.min_hours_per_week,
                    signed_by: p.signature.as_ref().map(|sig| sig.name.clone()),
                    signed_at: p.signature.as_ref().map(|sig| rfc3339(sig.signed_at)),
                });
                let signed = s.data.as_ref().is_some_and(|p| p.signature.is_some());
                let missing = if signed {
                    Vec::new()
                } else {
                    vec!["signature"]
                };
                (s.completed_at, &s.errors, missing, data)
            }
            StepId::EmployeeInvitations => {
                let s = &self.employee_invitations;
                let data = s.data.as_ref().map(|i| StepData::EmployeeInvitations {
                    sent_at: rfc3339(i.sent_at),
                    suppressed: i.suppressed,
                    count: i.count,
                });
                (s.completed_at, &s.errors, Vec::new(), data)
            }
        };
        StepView {
            id,
            title: id.title(),
            required: id.required(),
            status: self.status(id),
            completed_at: completed_at.map(rfc3339),
            requirements,
            errors: errors.clone(),
            data,
        }
    }
}
