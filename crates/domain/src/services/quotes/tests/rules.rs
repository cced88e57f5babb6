//! The quote rules without mocks: default start, retry-after, start range, error mapping.

use super::*;

#[test]
fn the_default_plan_year_starts_on_the_first_of_next_month() {
    assert_eq!(
        next_month_start(date!(2026 - 11 - 21)),
        date!(2026 - 12 - 01)
    );
    assert_eq!(
        next_month_start(date!(2026 - 12 - 31)),
        date!(2027 - 01 - 01)
    );
    assert_eq!(
        next_month_start(date!(2026 - 01 - 01)),
        date!(2026 - 02 - 01)
    );
}

#[test]
fn retry_after_grows_with_the_census_and_is_capped() {
    assert_eq!(rates_retry_after(0), 1);
    assert_eq!(rates_retry_after(3_999), 1);
    assert_eq!(rates_retry_after(10_000), 3);
    assert_eq!(rates_retry_after(u32::MAX), 30);
}

#[test]
fn a_plan_year_start_is_not_in_the_past_nor_over_a_year_ahead() {
    let today = date!(2026 - 11 - 21);
    assert_eq!(check_start(today, today).ok(), Some(today));
    let last = date!(2027 - 11 - 22);
    assert_eq!(check_start(last, today).ok(), Some(last));
    for bad in [date!(2026 - 11 - 20), date!(2027 - 11 - 23)] {
        match check_start(bad, today) {
            Err(ServiceError::Invalid(d)) => assert_eq!(d[0].field, "plan_year_start_date"),
            other => panic!("{bad}: {other:?}"),
        }
    }
}

#[test]
fn pricing_errors_map_to_the_specified_answers() {
    assert!(matches!(
        pricing_error(PricingError::CensusRequired),
        ServiceError::CensusRequired
    ));
    assert!(matches!(
        pricing_error(PricingError::MarketUnavailable),
        ServiceError::MarketUnavailable
    ));
    assert!(matches!(
        pricing_error(PricingError::Overflow),
        ServiceError::AmountOutOfRange
    ));
    assert!(matches!(
        pricing_error(PricingError::RateCard("bad layer".into())),
        ServiceError::Internal(_)
    ));
    // Census paths name the stored census's rows.
    let e = pricing_error(PricingError::InvalidCensus(vec![FieldError::at(
        3,
        "census[3].dob",
        "is after the plan-year start (2026-12-01)",
    )]));
    match e {
        ServiceError::Invalid(d) => {
            assert_eq!(d[0].field, "members[3].dob");
            assert_eq!(d[0].index, Some(3));
        }
        other => panic!("{other:?}"),
    }
}
