//! The stored documents: round trips in the current form, and the rows the
//! previous version wrote (bare camelCase or snake_case, no envelope).

use pricing_core::household::Tier;

use super::fixtures::*;
use super::*;
use crate::event::EventType;
use crate::job::JobKind;
use crate::quote::QuoteKind;

fn value(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap()
}

#[test]
fn a_legacy_market_quote_reads_and_is_rewritten_in_snake_case() {
    let doc = QuoteDocument::from_stored(QuoteKind::Quote, LEGACY_MARKET_QUOTE).unwrap();
    let market = doc.market().unwrap();
    assert_eq!(market.monthly.by_tier.employee_children.avg_cents, 151_146);
    assert_eq!(market.employee_contribution.employer_contribution_pct, 80);
    assert_eq!(
        market.pricing.updated_at.as_deref(),
        Some("2026-11-21T00:00:00Z")
    );
    assert!(!is_current(LEGACY_MARKET_QUOTE));
    let stored = doc.to_stored().unwrap();
    assert!(is_current(&stored));
    // Stored keys are snake_case, and the document is the legacy one
    // re-cased key by key.
    let current = value(&stored);
    assert_eq!(current["v"], 1);
    assert_eq!(
        current["doc"],
        recase(value(LEGACY_MARKET_QUOTE), &camel_to_snake)
    );
    assert_eq!(
        QuoteDocument::from_stored(QuoteKind::Quote, &stored).unwrap(),
        doc
    );
}

#[test]
fn a_renamed_or_missing_figure_is_an_error_not_zero() {
    let renamed = LEGACY_MARKET_QUOTE.replace("\"totalCents\":231456", "\"total\":231456");
    assert!(QuoteDocument::from_stored(QuoteKind::Quote, &renamed).is_err());
    let future = r#"{"v":2,"doc":{}}"#;
    assert!(matches!(
        QuoteDocument::from_stored(QuoteKind::Quote, future),
        Err(DocumentError::Version(2))
    ));
    assert!(QuoteDocument::from_stored(QuoteKind::Quote, "not json").is_err());
}

#[test]
fn deductions_split_the_tier_cost_by_the_contribution() {
    let doc = QuoteDocument::from_stored(QuoteKind::Quote, LEGACY_MARKET_QUOTE).unwrap();
    let mut market = doc.market().unwrap().clone();
    market.monthly.by_tier.family.avg_cents = 150_001;
    // 20% of 150,001 is 30,000.2: the employee's share rounds half up.
    assert_eq!(market.deduction(Tier::Family), (30_000, 120_001));
    assert_eq!(market.deduction(Tier::EmployeeSpouse), (0, 0));
    market.employee_contribution.employer_contribution_pct = 100;
    assert_eq!(market.deduction(Tier::Family), (0, 150_001));
    market.employee_contribution.employer_contribution_pct = 0;
    assert_eq!(market.deduction(Tier::Family), (150_001, 0));
}

#[test]
fn a_legacy_enrollment_reads_and_round_trips() {
    let doc = EnrollmentDocument::from_stored(LEGACY_ENROLLMENT).unwrap();
    assert_eq!(doc.start_date, "2026-12-01");
    // What the checklist now derives is no longer stored.
    assert_eq!(doc.signatory, None);
    let portal = doc.employer_portal.as_ref().unwrap();
    assert!(portal.invite_suppressed);
    assert!(
        portal
            .set_password_url
            .as_deref()
            .unwrap()
            .ends_with("token=5f0c")
    );
    let stored = doc.to_stored().unwrap();
    assert!(is_current(&stored) && !is_current(LEGACY_ENROLLMENT));
    for derived in ["next_steps", "onboarding", "status"] {
        assert!(!stored.contains(derived), "{stored}");
    }
    assert_eq!(EnrollmentDocument::from_stored(&stored).unwrap(), doc);
    // An embedded enrollment has no portal, and stores none.
    let embedded = EnrollmentDocument {
        employer_portal: None,
        ..doc
    };
    let stored = embedded.to_stored().unwrap();
    assert!(!stored.contains("employer_portal"));
    assert_eq!(EnrollmentDocument::from_stored(&stored).unwrap(), embedded);
}

#[test]
fn every_legacy_event_payload_reads_as_its_type() {
    for (name, text) in LEGACY_EVENTS {
        let event_type = EventType::parse(name).unwrap();
        let data = EventData::from_stored(event_type, text).unwrap();
        assert_eq!(data.event_type(), event_type, "{name}");
        // The payload is the legacy one in snake_case.
        assert_eq!(data.data(), recase(value(text), &camel_to_snake), "{name}");
        // And back to camelCase for HR platforms: the very legacy bytes.
        assert_eq!(recase(data.data(), &snake_to_camel), value(text), "{name}");
        let stored = data.to_stored().unwrap();
        assert!(is_current(&stored));
        assert_eq!(EventData::from_stored(event_type, &stored).unwrap(), data);
    }
    // A payload of another type does not read.
    assert!(EventData::from_stored(EventType::QuoteFinalized, "{}").is_err());
}

#[test]
fn job_payloads_read_in_both_forms() {
    let legacy = JobPayload::from_stored(JobKind::MarketComparison, LEGACY_COMPARISON_JOB).unwrap();
    assert_eq!(
        legacy,
        JobPayload::MarketComparison(job::CensusCounts {
            received: 3,
            accepted: 2,
            error_count: 1,
        })
    );
    assert_eq!(legacy.kind(), JobKind::MarketComparison);
    let stored = legacy.to_stored().unwrap();
    assert!(is_current(&stored));
    assert_eq!(
        JobPayload::from_stored(JobKind::MarketComparison, &stored).unwrap(),
        legacy
    );
}

#[test]
fn casing_round_trips_the_service_names() {
    for (snake, camel) in [
        ("created_at", "createdAt"),
        ("employee_monthly_cents", "employeeMonthlyCents"),
        ("id", "id"),
        ("type", "type"),
    ] {
        assert_eq!(snake_to_camel(snake), camel);
        assert_eq!(camel_to_snake(camel), snake);
    }
}
