//! Unit tests of the enrollments service: input rules and quote refusals.

use super::*;

#[test]
fn a_signatory_needs_a_name_and_an_email() {
    let ok = Signatory {
        name: "Dana Lee".into(),
        email: "dana@acme-mfg.com".into(),
    };
    assert!(check_signatory(&ok).is_ok());
    let bad = Signatory {
        name: "  ".into(),
        email: "dana".into(),
    };
    match check_signatory(&bad) {
        Err(ServiceError::Invalid(d)) => {
            let fields: Vec<&str> = d.iter().map(|f| f.field.as_str()).collect();
            assert_eq!(fields, ["signatory.name", "signatory.email"]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_unusable_quote_is_410_or_409() {
    assert!(matches!(
        quote_refusal(QuoteUse::Expired),
        ServiceError::QuoteExpired(_)
    ));
    match quote_refusal(QuoteUse::Stale) {
        ServiceError::QuoteExpired(m) => assert!(m.contains("census changed"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        quote_refusal(QuoteUse::InReview),
        ServiceError::Conflict(_)
    ));
    assert!(matches!(
        quote_refusal(QuoteUse::NotPriced),
        ServiceError::Conflict(_)
    ));
}
