//! The plan documents the signatory signs (onboarding §1, Signature): the
//! plan summary, the service agreement and the privacy notice, rendered
//! from the plan catalogue and the saved choices. The text shown is the
//! text hashed: a signature records the SHA-256 of each.

use sha2::{Digest as _, Sha256};

use super::PlanChoices;
use super::SignedDocument;
use crate::plans::PlanInfo;

/// One document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanDocument {
    /// Stable name: `plan_summary`, `service_agreement`, `privacy_notice`.
    pub name: &'static str,
    /// Title.
    pub title: &'static str,
    /// The text, as shown and signed.
    pub text: String,
}

impl PlanDocument {
    /// Hex SHA-256 of the text.
    #[must_use]
    pub fn sha256(&self) -> String {
        hex::encode(Sha256::digest(self.text.as_bytes()))
    }

    /// The record of signing it.
    #[must_use]
    pub fn signed(&self) -> SignedDocument {
        SignedDocument {
            name: self.name.to_owned(),
            sha256: self.sha256(),
        }
    }
}

/// What the documents are about.
#[derive(Debug, Clone, Copy)]
pub struct DocumentFacts<'a> {
    /// The company's legal name.
    pub company: &'a str,
    /// Coverage start (`YYYY-MM-DD`).
    pub start_date: &'a str,
    /// The plan chosen, from the catalogue.
    pub plan: &'a PlanInfo,
    /// The saved choices.
    pub choices: &'a PlanChoices,
}

/// The three documents, in signing order.
#[must_use]
pub fn plan_documents(facts: DocumentFacts<'_>) -> Vec<PlanDocument> {
    let DocumentFacts {
        company,
        start_date,
        plan,
        choices,
    } = facts;
    let mut summary = format!(
        "Plan summary for {company}\n\n\
         Plan: {name}\n{description}\n\n\
         Coverage starts: {start_date}\n\
         Employer contribution: {pct}% of the premium\n\
         Waiting period for new hires: {waiting}\n\
         Eligibility: employees working at least {hours} hours a week\n\
         Network: {network}\n\
         Member out-of-pocket maximum: ${oop_self} self-only, ${oop_family} family\n\
         HSA-eligible: {hsa}\n",
        name = plan.name,
        description = plan.description,
        pct = choices.employer_contribution_pct,
        waiting = choices.waiting_period.label(),
        hours = choices.min_hours_per_week,
        network = plan.facts.network,
        oop_self = plan.facts.member_oop_max_individual_cents / 100,
        oop_family = plan.facts.member_oop_max_family_cents / 100,
        hsa = if plan.facts.hsa_eligible { "yes" } else { "no" },
    );
    for d in &plan.disclaimers {
        summary.push('\n');
        summary.push_str(d);
        summary.push('\n');
    }
    let agreement = format!(
        "Service agreement between {company} and the plan administrator\n\n\
         1. The administrator provides the {name} plan to the eligible employees of {company} \
         from {start_date}, on the terms of the plan summary.\n\
         2. {company} pays the monthly premium by debit from the bank account verified during \
         onboarding, contributing {pct}% of each employee's premium.\n\
         3. Final pricing, eligibility, network availability and plan documents are confirmed \
         during underwriting; the quote's numbers are preliminary until then.\n\
         4. Either party may end this agreement at the end of a plan year with 60 days' notice.\n",
        name = plan.name,
        pct = choices.employer_contribution_pct,
    );
    let privacy = format!(
        "Privacy notice\n\n\
         {company} shares its employees' census data (names, dates of birth, ZIP codes, \
         dependents) with the plan administrator to price, enroll and administer the {name} plan. \
         The administrator reports claims to {company} and its partners only in aggregate, \
         never for a group of fewer than 11 people, and never shares an individual's health \
         information with the employer.\n",
        name = plan.name,
    );
    vec![
        PlanDocument {
            name: "plan_summary",
            title: "Plan summary",
            text: summary,
        },
        PlanDocument {
            name: "service_agreement",
            title: "Service agreement",
            text: agreement,
        },
        PlanDocument {
            name: "privacy_notice",
            title: "Privacy notice",
            text: privacy,
        },
    ]
}
