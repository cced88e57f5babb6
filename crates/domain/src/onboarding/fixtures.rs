//! Checklists and step values for tests (feature `fixtures`): a valid
//! value of every step, and a checklist with every required step done.

use pricing_core::VersionId;

use super::fields::{AccountType, EntityType, StreetAddress, WaitingPeriod};
use super::*;

/// The time the fixtures are made at.
pub const NOW: i64 = 1_795_266_840;

/// A complete company profile.
#[must_use]
pub fn profile() -> CompanyProfile {
    CompanyProfile {
        legal_name: Some("Acme Manufacturing LLC".into()),
        ein: Some("123456789".into()),
        entity_type: Some(EntityType::Llc),
        address: Some(StreetAddress {
            line1: "1 Main St".into(),
            line2: None,
            city: "Chicago".into(),
            state: "IL".into(),
            zip: "60601".into(),
        }),
        phone: Some("+13125550142".into()),
        signatory_title: Some("CFO".into()),
    }
}

/// A verification asked for with the profile's facts.
#[must_use]
pub fn asked() -> Verification {
    Verification {
        ein: "123456789".into(),
        legal_name: "Acme Manufacturing LLC".into(),
        requested_at: NOW,
        due_at: None,
    }
}

/// A bank account whose deposits are 32 and 45 cents.
#[must_use]
pub fn account() -> BankAccount {
    BankAccount {
        routing_number: "011000015".into(),
        last4: "6789".into(),
        account_type: AccountType::Checking,
        holder_name: "Acme Manufacturing LLC".into(),
        account_number_sealed: "c2VhbGVk".into(),
        deposits_cents: [32, 45],
        wrong_attempts: 0,
    }
}

/// Plan choices, not signed.
#[must_use]
pub fn choices() -> PlanChoices {
    PlanChoices {
        plan_id: VersionId::Diamond,
        employer_contribution_pct: 80,
        waiting_period: WaitingPeriod::FirstOfMonthAfterHire,
        min_hours_per_week: 30,
        signature: None,
    }
}

/// The signatory's signature.
#[must_use]
pub fn signature() -> Signature {
    Signature {
        name: "Dana Kim".into(),
        email: "dana@acme.example".into(),
        signed_at: NOW,
        ip: Some("127.0.0.1".into()),
        user_agent: Some("test".into()),
        documents: vec![SignedDocument {
            name: "plan_summary".into(),
            sha256: "00".repeat(32),
        }],
    }
}

/// Every required step completed (test mode would be live).
#[must_use]
pub fn completed() -> Checklist {
    let mut c = Checklist::default();
    c.save_profile(profile(), NOW);
    c.start_verification(asked(), VerifierAnswer::Verified, NOW);
    c.save_bank(account(), NOW);
    // The deposits match and choices are saved: both verify.
    let _verified = c.check_deposits([45, 32], NOW);
    c.save_plan(choices(), NOW);
    let _signed = c.sign_plan(signature(), NOW);
    c
}
