//! Unit tests of `household`.

use time::macros::date;

use sha2::{Digest, Sha256};

use super::*;
use crate::census::{Dependent, EmploymentType, MemberStatus, Relationship};
use crate::rate_card::tests::card;

const START: Date = date!(2026 - 01 - 01);

/// The context of a census starting 2026 that may leave out dates of birth.
pub(crate) fn ctx(card: &RateCard) -> CensusContext<'_> {
    CensusContext {
        card,
        plan_year_start: START,
        partner: None,
        rules: CensusRules { require_dob: false },
        fallback_zip: None,
    }
}

/// An undated dependent of a given age.
pub(crate) fn dep(rel: Relationship, age: u32) -> Dependent {
    Dependent {
        relationship: rel,
        name: None,
        dob: None,
        age: Some(age),
        sex_at_birth: None,
    }
}

fn member(id: &str, deps: Option<Vec<Dependent>>) -> CensusMember {
    let mut m = CensusMember::new(id, date!(1986 - 03 - 10), "94103");
    m.dependents = deps;
    m
}

fn tier_of(deps: Vec<Dependent>) -> Tier {
    let c = card();
    let r = RatedCensus::build(&[member("E1", Some(deps))], ctx(&c)).unwrap();
    match &r.households[0].shape {
        Shape::Known { tier, .. } => *tier,
        Shape::Unknown { .. } => panic!("known household expected"),
    }
}

#[test]
fn tiers_follow_dependents() {
    use Relationship::*;
    assert_eq!(tier_of(vec![]), Tier::EmployeeOnly);
    assert_eq!(tier_of(vec![dep(Spouse, 40)]), Tier::EmployeeSpouse);
    assert_eq!(
        tier_of(vec![dep(DomesticPartner, 40)]),
        Tier::EmployeeSpouse
    );
    assert_eq!(tier_of(vec![dep(Child, 4)]), Tier::EmployeeChildren);
    assert_eq!(tier_of(vec![dep(Other, 4)]), Tier::EmployeeChildren);
    assert_eq!(tier_of(vec![dep(Spouse, 40), dep(Child, 4)]), Tier::Family);
}

#[test]
fn only_the_three_oldest_children_under_21_are_charged() {
    use Relationship::*;
    let c = card();
    let deps = vec![
        dep(Child, 3),
        dep(Child, 22),
        dep(Child, 9),
        dep(Child, 12),
        dep(Child, 9),
        dep(Spouse, 41),
    ];
    let r = RatedCensus::build(&[member("E1", Some(deps))], ctx(&c)).unwrap();
    let Shape::Known { people, .. } = &r.households[0].shape else {
        panic!()
    };
    let summary: Vec<(String, u32, bool)> = people
        .iter()
        .map(|p| (p.place.label(), p.age, p.charged))
        .collect();
    let expect = [
        ("e", 39, true),
        ("s", 41, true),
        ("c1", 22, true),
        ("c2", 12, true),
        ("c3", 9, true),
        ("c4", 9, true),
        ("c5", 3, false),
    ];
    let expect: Vec<(String, u32, bool)> = expect
        .iter()
        .map(|(p, a, c)| ((*p).to_owned(), *a, *c))
        .collect();
    assert_eq!(summary, expect);
    assert!(
        r.assumptions
            .iter()
            .any(|a| a.contains("1 child is not charged"))
    );
}

#[test]
fn counted_employees_lives_and_apportioned_tiers() {
    let c = card();
    let mut contractor = member("C1", Some(vec![]));
    contractor.employment_type = Some(EmploymentType::Contractor);
    let mut gone = member("T1", Some(vec![]));
    gone.status = Some(MemberStatus::Terminated);
    let census = vec![
        member("E1", Some(vec![dep(Relationship::Spouse, 30)])),
        member("E2", None),
        member("E3", None),
        contractor,
        gone,
    ];
    let r = RatedCensus::build(&census, ctx(&c)).unwrap();
    assert_eq!(r.employees(), 3);
    assert_eq!((r.excluded_contractors, r.excluded_terminated), (1, 1));
    // 3 employees + 1 spouse + 2 × 0.89 expected dependents = 5.78.
    assert_eq!(r.lives_e8, 578_000_000);
    assert_eq!(r.covered_lives(), 6);
    // Two unknown households: quotas 1.1, 0.3, 0.2, 0.4 → 1, 0, 0, 1,
    // plus the known employee + spouse.
    assert_eq!(r.tiers, [1, 1, 0, 1]);
    assert_eq!(r.unknown_households, 2);
    assert!(
        r.assumptions
            .iter()
            .any(|a| a.contains("55% employee only"))
    );
    assert!(r.assumptions.iter().any(|a| a.contains("1.8 children")));
}

#[test]
fn apportion_uses_largest_remainder_with_ties_to_the_earlier_tier() {
    assert_eq!(apportion([0; 4], 1, [5500, 1500, 1000, 2000]), [1, 0, 0, 0]);
    assert_eq!(apportion([0; 4], 3, [2500, 2500, 2500, 2500]), [1, 1, 1, 0]);
    assert_eq!(
        apportion([2, 0, 0, 0], 10, [5500, 1500, 1000, 2000]),
        // Quotas 5.5, 1.5, 1, 2: one left over; 0.5 ties go to employeeOnly.
        [8, 1, 1, 2]
    );
}

#[test]
fn keys_are_stable_under_row_order_and_number_duplicates() {
    let a = member("E-001", Some(vec![]));
    let mut b = member("E-001", Some(vec![]));
    b.zip = "94110".to_owned();
    let mut anon = member("x", None);
    anon.external_id = None;
    anon.first_name = Some("Ada".to_owned());
    let k1 = household_keys(&[a.clone(), b.clone(), anon.clone()]);
    let k2 = household_keys(&[anon.clone(), b, a]);
    assert_eq!(k1[0], k2[2]);
    assert_eq!(k1[1], k2[1]);
    assert_eq!(k1[2], k2[0]);
    assert_ne!(k1[0], k1[1]);
    assert!(k1[0].starts_with("E-001#"));
    assert_eq!(k1[2].len(), 64 + 2);
    // A rating input does not change an anonymous record's key.
    let mut older = anon.clone();
    older.dob = Some(date!(1950 - 01 - 01));
    assert_eq!(household_keys(&[older])[0], household_keys(&[anon])[0]);
}

#[test]
fn anonymous_keys_hash_the_sorted_canonical_json() {
    let mut m = member("x", None);
    m.external_id = None;
    m.first_name = Some("Ada".to_owned());
    m.last_name = Some("Lovelace".to_owned());
    m.employment_type = Some(EmploymentType::FullTime);
    // Pinned: SHA-256 of
    // {"employment_type":"full_time","first_name":"Ada","last_name":"Lovelace"}
    let text = r#"{"employment_type":"full_time","first_name":"Ada","last_name":"Lovelace"}"#;
    let expect = format!("{}#0", hex::encode(Sha256::digest(text.as_bytes())));
    assert_eq!(household_keys(&[m])[0], expect);
    assert_eq!(
        &expect[..16],
        "419c69061c5fe2f8",
        "the pinned digest of the canonical text above"
    );
}

#[test]
fn email_keys_are_lowercased() {
    let mut m = member("x", None);
    m.external_id = None;
    m.email = Some("Ada@Example.COM".to_owned());
    assert_eq!(household_keys(&[m])[0], "ada@example.com#0");
}

#[test]
fn errors_name_the_failing_case() {
    let c = card();
    let mut contractor = member("C1", Some(vec![]));
    contractor.employment_type = Some(EmploymentType::Contractor);
    assert_eq!(
        RatedCensus::build(&[contractor], ctx(&c)).unwrap_err(),
        PricingError::CensusRequired
    );
    let mut far = member("E1", Some(vec![]));
    far.zip = "99999".to_owned();
    assert_eq!(
        RatedCensus::build(&[far.clone()], ctx(&c)).unwrap_err(),
        PricingError::MarketUnavailable
    );
    // With a company ZIP the member is rated there, and it is reported.
    let mut with_company = ctx(&c);
    with_company.fallback_zip = Some("10001");
    let r = RatedCensus::build(&[far], with_company).unwrap();
    assert_eq!(r.primary().area, "NY-01");
    assert!(
        r.assumptions
            .iter()
            .any(|a| a.contains("rated in area NY-01"))
    );
    let mut bad = member("E1", None);
    bad.zip = "abc".to_owned();
    assert!(matches!(
        RatedCensus::build(&[bad], ctx(&c)),
        Err(PricingError::InvalidCensus(d)) if d[0].field == "census[0].zip"
    ));
}

#[test]
fn the_primary_area_has_the_most_employees() {
    let c = card();
    let mut ny = member("E3", Some(vec![]));
    ny.zip = "10001".to_owned();
    let census = vec![member("E1", Some(vec![])), ny.clone(), {
        let mut m = ny;
        m.external_id = Some("E4".to_owned());
        m
    }];
    let r = RatedCensus::build(&census, ctx(&c)).unwrap();
    assert_eq!(r.primary().area, "NY-01");
    assert_eq!(r.markets.len(), 2);
    assert!(r.group.source.ends_with("area:NY-01"));
}

#[test]
fn areas_without_benchmarks_are_priced_as_the_states_median_and_say_so() {
    let c = RateCard::builtin_2026().unwrap();
    let at = |id: &str, zip: &str| {
        let mut m = member(id, Some(vec![]));
        m.zip = zip.to_owned();
        m
    };
    // Gulf County, FL-22: priced, with the stand-in named.
    let census = [at("E1", "32456"), at("E2", "32465"), at("E3", "32456")];
    let r = RatedCensus::build(&census, ctx(&c)).unwrap();
    assert_eq!(r.primary().area, "FL-22");
    assert_eq!(r.primary().priced_as.as_deref(), Some("FL-09"));
    let lines: Vec<&String> = r
        .assumptions
        .iter()
        .filter(|a| a.contains("public benchmark"))
        .collect();
    assert_eq!(
        lines,
        [
            "ZIPs 32456 and 32465 are in FL-22, which has no 2026 public benchmark; priced with the FL median area FL-09."
        ]
    );
    // One line per area; a census without such an area has none.
    let census = [at("E1", "29030"), at("E2", "29821"), at("E3", "60601")];
    let r = RatedCensus::build(&census, ctx(&c)).unwrap();
    let lines: Vec<&String> = r
        .assumptions
        .iter()
        .filter(|a| a.contains("public benchmark"))
        .collect();
    assert_eq!(
        lines,
        [
            "ZIP 29030 is in SC-09, which has no 2026 public benchmark; priced with the SC median area SC-18.",
            "ZIP 29821 is in SC-19, which has no 2026 public benchmark; priced with the SC median area SC-18.",
        ]
    );
    let r = RatedCensus::build(&[at("E1", "60601")], ctx(&c)).unwrap();
    assert!(!r.assumptions.iter().any(|a| a.contains("public benchmark")));
}

/// A census in household-key order (ids ascending), of every kind of
/// household: unknown ones, undated children, excluded members, ZIPs
/// without a priced area, a stand-in area.
fn ordered_census() -> Vec<CensusMember> {
    use Relationship::*;
    let undated = |rel| Dependent {
        relationship: rel,
        name: None,
        dob: None,
        age: None,
        sex_at_birth: None,
    };
    (0..40)
        .map(|i| {
            let mut m = member(&format!("E-{i:03}"), Some(vec![]));
            m.zip = ["10001", "94103", "10001", "99999", "32456"][i % 5].to_owned();
            m.dependents = match i % 6 {
                0 => None,
                1 => Some(vec![dep(Spouse, 33)]),
                2 => Some(vec![undated(Child), dep(Child, 3), dep(Child, 12)]),
                // Whether the undated child is charged depends on the
                // default child age (the three oldest under 21 are).
                3 => Some(vec![
                    dep(Child, 4),
                    undated(Other),
                    undated(Spouse),
                    dep(Child, 2),
                    dep(Child, 9),
                ]),
                4 => Some(vec![]),
                _ => Some(vec![
                    dep(DomesticPartner, 40),
                    undated(Child),
                    dep(Child, 7),
                ]),
            };
            if i % 7 == 3 {
                m.employment_type = Some(EmploymentType::Contractor);
            }
            if i % 11 == 5 {
                m.status = Some(MemberStatus::Terminated);
            }
            if i % 4 == 1 {
                m.employment_type = Some(EmploymentType::PartTime);
            }
            m
        })
        .collect()
}

/// The census as JSON, with each household's row given as its row in
/// `rows` (the census it was built from, before reordering).
fn normalised(r: &RatedCensus, rows: &[usize]) -> serde_json::Value {
    let mut r = r.clone();
    for h in &mut r.households {
        h.row = rows[h.row];
    }
    serde_json::to_value(&r).unwrap()
}

#[test]
fn rows_in_key_order_and_in_any_order_give_the_same_census() {
    let default_card = card();
    // A group whose primary area sets another default child age than the
    // card's default layer: households are shaped again.
    let override_card = RateCard::from_toml_str(&crate::rate_card::tests::TEST_CARD.replacen(
        "[layers.\"state:NY\"]\n",
        "[layers.\"state:NY\"]\ndefault_child_age = 25\n",
        1,
    ))
    .unwrap();
    let census = ordered_census();
    let n = census.len();
    let reversed: Vec<CensusMember> = census.iter().rev().cloned().collect();
    let mut swapped = census.clone();
    swapped.swap(2, 30);
    let identity: Vec<usize> = (0..n).collect();
    let back: Vec<usize> = (0..n).rev().collect();
    let mut unswap = identity.clone();
    unswap.swap(2, 30);
    for (card, child_age) in [(&default_card, 10), (&override_card, 25)] {
        for fallback_zip in [None, Some("94110")] {
            let mut c = ctx(card);
            c.fallback_zip = fallback_zip;
            let sorted = RatedCensus::build(&census, c).unwrap();
            assert_eq!(sorted.group.default_child_age, child_age);
            assert_eq!(sorted.primary().area, "NY-01");
            assert!(
                sorted
                    .assumptions
                    .iter()
                    .any(|a| a.contains(&format!("child: {child_age})")))
            );
            let uncharged = sorted.assumptions.iter().any(|a| a.contains("not charged"));
            assert_eq!(uncharged, child_age < 21);
            let expect = normalised(&sorted, &identity);
            assert_eq!(
                normalised(&RatedCensus::build(&reversed, c).unwrap(), &back),
                expect
            );
            assert_eq!(
                normalised(&RatedCensus::build(&swapped, c).unwrap(), &unswap),
                expect
            );
        }
    }
}
