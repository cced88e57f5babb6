//! Unit tests of the groups service against the port mocks: validation before any store call, creation in the caller's scope with the clock's time and fresh ids, domain conflicts, and scoped reads, patches and listings.

use std::sync::{Arc, Mutex};

use mockall::Sequence;

use super::*;
use crate::group::{Address, CompanyState, Contact, CurrentCoverage, GroupStatus};
use crate::ids::PartnerId;
use crate::mode::Mode;
use crate::page::Cursor;
use crate::ports::{MockClock, MockEntropy};
use crate::store::{Conflict, MockGroupStore, StoreError};

const NOW_MS: i64 = 1_795_000_456_789;
const NOW: i64 = 1_795_000_456;
const CREATED: i64 = 1_790_000_000;

fn clock() -> MockClock {
    let mut c = MockClock::new();
    c.expect_now_ms().return_const(NOW_MS);
    c
}

/// Entropy that yields 0, 1, 2, … across successive fills.
fn counting_entropy() -> MockEntropy {
    let mut e = MockEntropy::new();
    let mut next = 0u8;
    e.expect_fill().returning(move |buf| {
        for b in buf.iter_mut() {
            *b = next;
            next = next.wrapping_add(1);
        }
    });
    e
}

fn service(store: MockGroupStore, clock: MockClock, entropy: MockEntropy) -> Groups {
    Groups::new(Arc::new(store), Arc::new(clock), Arc::new(entropy))
}

fn scope() -> Scope {
    Scope::new(PartnerId::from_bytes([0xaa; 6]), Mode::Live)
}

fn other_scope() -> Scope {
    Scope::new(PartnerId::from_bytes([0xbb; 6]), Mode::Live)
}

fn group_id() -> GroupId {
    GroupId::from_bytes([0x42; 6])
}

fn create_fields() -> GroupFields {
    GroupFields {
        company_name: Some("Acme, Inc.".to_owned()),
        domain: Some("acme.com".to_owned()),
        external_id: Some("ACME-1".to_owned()),
        address: Some(Address {
            line1: Some("1 Main St".to_owned()),
            city: Some("Chicago".to_owned()),
            state: Some("IL".to_owned()),
            zip: Some("60601".to_owned()),
        }),
        contact: Some(Contact {
            name: Some("Pat".to_owned()),
            email: Some("hr@acme.com".to_owned()),
            title: None,
        }),
        current_coverage: Some(CurrentCoverage {
            plan_type: Some("fully_insured".to_owned()),
            carrier: Some("Carrier".to_owned()),
            pepm_cents: Some(65_000),
            renewal_date: Some("2027-01-01".to_owned()),
        }),
    }
}

/// A stored group of `scope()` that has moved past `created`.
fn stored_group() -> Group {
    Group {
        id: group_id(),
        partner_id: scope().partner,
        mode: scope().mode,
        status: GroupStatus::Quoted,
        company_name: "Acme, Inc.".to_owned(),
        domain: "acme.com".to_owned(),
        external_id: None,
        address: None,
        contact: None,
        current_coverage: None,
        census_member_count: 12,
        rating_digest: Some("abc123".to_owned()),
        company_state: None,
        created_at: CREATED,
        updated_at: CREATED,
    }
}

fn down() -> StoreError {
    StoreError::Unavailable(Box::new(std::io::Error::other("connection refused")))
}

fn invalid_fields(err: ServiceError) -> Vec<String> {
    match err {
        ServiceError::Invalid(fields) => fields.into_iter().map(|f| f.field).collect(),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------
// create
// ---------------------------------------------------------------------------

#[tokio::test]
async fn create_stores_a_created_group_of_the_scope_at_the_clock_time() {
    let stored: Arc<Mutex<Vec<Group>>> = Arc::default();
    let sink = Arc::clone(&stored);
    let mut store = MockGroupStore::new();
    store.expect_insert_group().times(1).returning(move |g| {
        sink.lock().unwrap().push(g.clone());
        Ok(())
    });
    let svc = service(store, clock(), counting_entropy());

    let g = svc.create(&scope(), create_fields()).await.unwrap();

    assert_eq!(g.id.as_str(), "grp_315102030405");
    assert_eq!(g.partner_id, scope().partner);
    assert_eq!(g.mode, Mode::Live);
    assert_eq!(g.status, GroupStatus::Created);
    assert_eq!(g.company_name, "Acme, Inc.");
    assert_eq!(g.domain, "acme.com");
    assert_eq!(g.external_id.as_deref(), Some("ACME-1"));
    assert_eq!(g.address, create_fields().address);
    assert_eq!(g.contact, create_fields().contact);
    assert_eq!(g.current_coverage, create_fields().current_coverage);
    assert_eq!(g.census_member_count, 0);
    assert_eq!(g.rating_digest, None);
    assert_eq!(g.company_state, None);
    assert_eq!(g.created_at, NOW);
    assert_eq!(g.updated_at, NOW);
    assert_eq!(
        *stored.lock().unwrap(),
        vec![g],
        "the answer is what was stored"
    );
}

#[tokio::test]
async fn create_takes_the_mode_from_the_scope() {
    let test_scope = Scope::new(PartnerId::from_bytes([0xcc; 6]), Mode::Test);
    let expected = test_scope.clone();
    let mut store = MockGroupStore::new();
    store
        .expect_insert_group()
        .withf(move |g| g.partner_id == expected.partner && g.mode == Mode::Test)
        .times(1)
        .returning(|_| Ok(()));
    let svc = service(store, clock(), counting_entropy());
    let g = svc.create(&test_scope, create_fields()).await.unwrap();
    assert_eq!(g.mode, Mode::Test);
    assert_eq!(g.partner_id, test_scope.partner);
}

#[tokio::test]
async fn create_with_only_the_required_fields() {
    let mut store = MockGroupStore::new();
    store.expect_insert_group().times(1).returning(|_| Ok(()));
    let svc = service(store, clock(), counting_entropy());
    let fields = GroupFields {
        company_name: Some("Acme".to_owned()),
        domain: Some("acme.com".to_owned()),
        ..GroupFields::default()
    };
    let g = svc.create(&scope(), fields).await.unwrap();
    assert_eq!(g.external_id, None);
    assert_eq!(g.address, None);
    assert_eq!(g.contact, None);
    assert_eq!(g.current_coverage, None);
}

#[tokio::test]
async fn create_validates_before_touching_any_port() {
    let cases: Vec<(GroupFields, Vec<&str>)> = vec![
        (
            GroupFields {
                domain: Some("Acme".to_owned()),
                ..create_fields()
            },
            vec!["domain"],
        ),
        (GroupFields::default(), vec!["company_name", "domain"]),
        (
            GroupFields {
                company_name: Some("   ".to_owned()),
                domain: Some("acme..com".to_owned()),
                external_id: Some(String::new()),
                address: Some(Address {
                    state: Some("il".to_owned()),
                    zip: Some("6060".to_owned()),
                    ..Address::default()
                }),
                contact: Some(Contact {
                    email: Some("hr@acme".to_owned()),
                    ..Contact::default()
                }),
                current_coverage: Some(CurrentCoverage {
                    pepm_cents: Some(-1),
                    renewal_date: Some("2027-13-01".to_owned()),
                    ..CurrentCoverage::default()
                }),
            },
            vec![
                "company_name",
                "domain",
                "external_id",
                "address.state",
                "address.zip",
                "contact.email",
                "current_coverage.pepm_cents",
                "current_coverage.renewal_date",
            ],
        ),
    ];
    for (fields, expected) in cases {
        let mut store = MockGroupStore::new();
        store.expect_insert_group().never();
        store.expect_group().never();
        // Bare clock and entropy: reading either would panic.
        let svc = service(store, MockClock::new(), MockEntropy::new());
        let err = svc.create(&scope(), fields).await.unwrap_err();
        assert_eq!(invalid_fields(err), expected);
    }
}

#[tokio::test]
async fn create_maps_a_taken_domain_to_a_conflict_without_retrying() {
    let mut store = MockGroupStore::new();
    store
        .expect_insert_group()
        .times(1)
        .returning(|_| Err(StoreError::Conflict(Conflict::DomainTaken)));
    let svc = service(store, clock(), counting_entropy());
    let err = svc.create(&scope(), create_fields()).await.unwrap_err();
    assert!(
        matches!(err, ServiceError::Conflict(Conflict::DomainTaken)),
        "{err:?}"
    );
}

#[tokio::test]
async fn create_retries_an_id_collision_with_a_fresh_id() {
    let mut seq = Sequence::new();
    let mut store = MockGroupStore::new();
    store
        .expect_insert_group()
        .withf(|g| g.id.as_str() == "grp_315102030405")
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_| Err(StoreError::Conflict(Conflict::IdTaken)));
    store
        .expect_insert_group()
        .withf(|g| g.id.as_str() == "grp_315708090a0b" && g.created_at == NOW)
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_| Ok(()));
    let svc = service(store, clock(), counting_entropy());
    let g = svc.create(&scope(), create_fields()).await.unwrap();
    assert_eq!(g.id.as_str(), "grp_315708090a0b");
}

#[tokio::test]
async fn create_gives_up_after_three_colliding_ids() {
    let tried: Arc<Mutex<Vec<GroupId>>> = Arc::default();
    let sink = Arc::clone(&tried);
    let mut store = MockGroupStore::new();
    store.expect_insert_group().times(3).returning(move |g| {
        sink.lock().unwrap().push(g.id.clone());
        Err(StoreError::Conflict(Conflict::IdTaken))
    });
    let svc = service(store, clock(), counting_entropy());
    let err = svc.create(&scope(), create_fields()).await.unwrap_err();
    assert!(
        matches!(err, ServiceError::Conflict(Conflict::IdTaken)),
        "{err:?}"
    );
    let tried = tried.lock().unwrap();
    let ids: Vec<&str> = tried.iter().map(GroupId::as_str).collect();
    assert_eq!(
        ids,
        vec!["grp_315102030405", "grp_315708090a0b", "grp_315d0e0f1011"]
    );
}

#[tokio::test]
async fn create_propagates_an_unavailable_store() {
    let mut store = MockGroupStore::new();
    store
        .expect_insert_group()
        .times(1)
        .returning(|_| Err(down()));
    let svc = service(store, clock(), counting_entropy());
    let err = svc.create(&scope(), create_fields()).await.unwrap_err();
    assert!(matches!(err, ServiceError::Unavailable(_)), "{err:?}");
}

// ---------------------------------------------------------------------------
// get and list
// ---------------------------------------------------------------------------

#[tokio::test]
async fn get_passes_the_scope_and_id_through() {
    let mut store = MockGroupStore::new();
    store
        .expect_group()
        .withf(|s, id| *s == scope() && *id == group_id())
        .times(1)
        .returning(|_, _| Ok(stored_group()));
    let svc = service(store, MockClock::new(), MockEntropy::new());
    assert_eq!(
        svc.get(&scope(), &group_id()).await.unwrap(),
        stored_group()
    );
}

#[tokio::test]
async fn get_outside_the_scope_is_not_found() {
    let mut store = MockGroupStore::new();
    store
        .expect_group()
        .withf(|s, _| *s == other_scope())
        .times(1)
        .returning(|_, _| Err(StoreError::NotFound));
    let svc = service(store, MockClock::new(), MockEntropy::new());
    let err = svc.get(&other_scope(), &group_id()).await.unwrap_err();
    assert!(matches!(err, ServiceError::NotFound), "{err:?}");
}

#[tokio::test]
async fn list_passes_the_scope_and_page_through() {
    let page = PageRequest {
        limit: 2,
        after: Some(Cursor {
            created_at: CREATED,
            id: "grp_ffffffffffff".to_owned(),
        }),
    };
    let expected_page = page.clone();
    let answer = Page {
        items: vec![stored_group()],
        next: None,
    };
    let returned = answer.clone();
    let mut store = MockGroupStore::new();
    store
        .expect_groups()
        .withf(move |s, f, p| *s == scope() && *f == GroupFilter::default() && *p == expected_page)
        .times(1)
        .return_once(move |_, _, _| Ok(returned));
    let svc = service(store, MockClock::new(), MockEntropy::new());
    assert_eq!(
        svc.list(&scope(), &GroupFilter::default(), &page)
            .await
            .unwrap(),
        answer
    );
}

#[tokio::test]
async fn list_propagates_store_failures() {
    let mut store = MockGroupStore::new();
    store
        .expect_groups()
        .times(1)
        .returning(|_, _, _| Err(down()));
    let svc = service(store, MockClock::new(), MockEntropy::new());
    let err = svc
        .list(&scope(), &GroupFilter::default(), &PageRequest::first(50))
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::Unavailable(_)), "{err:?}");
}

// ---------------------------------------------------------------------------
// patch
// ---------------------------------------------------------------------------

#[tokio::test]
async fn patch_reads_then_saves_in_the_scope_keeping_status_and_creation_time() {
    let mut before = stored_group();
    before.company_state = Some(CompanyState::Sandbox);
    before.status = GroupStatus::Enrolled;
    let answer = before.clone();
    let mut seq = Sequence::new();
    let mut store = MockGroupStore::new();
    store
        .expect_group()
        .withf(|s, id| *s == scope() && *id == group_id())
        .times(1)
        .in_sequence(&mut seq)
        .return_once(move |_, _| Ok(answer));
    store
        .expect_update_group()
        .withf(|s, g| {
            *s == scope()
                && g.id == group_id()
                && g.status == GroupStatus::Enrolled
                && g.company_state == Some(CompanyState::Sandbox)
                && g.company_name == "Acme Holdings"
                && g.domain == "acme.com"
                && g.census_member_count == 12
                && g.created_at == CREATED
                && g.updated_at == NOW
        })
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _| Ok(()));
    let svc = service(store, clock(), MockEntropy::new());

    let fields = GroupFields {
        company_name: Some("Acme Holdings".to_owned()),
        contact: Some(Contact {
            email: Some("benefits@acme.com".to_owned()),
            ..Contact::default()
        }),
        ..GroupFields::default()
    };
    let after = svc.patch(&scope(), &group_id(), fields).await.unwrap();

    let mut expected = before;
    expected.company_name = "Acme Holdings".to_owned();
    expected.contact = Some(Contact {
        email: Some("benefits@acme.com".to_owned()),
        ..Contact::default()
    });
    expected.updated_at = NOW;
    assert_eq!(after, expected);
}

#[tokio::test]
async fn an_empty_patch_only_touches_updated_at() {
    let mut store = MockGroupStore::new();
    store
        .expect_group()
        .times(1)
        .returning(|_, _| Ok(stored_group()));
    store
        .expect_update_group()
        .times(1)
        .returning(|_, _| Ok(()));
    let svc = service(store, clock(), MockEntropy::new());
    let after = svc
        .patch(&scope(), &group_id(), GroupFields::default())
        .await
        .unwrap();
    let mut expected = stored_group();
    expected.updated_at = NOW;
    assert_eq!(after, expected);
}

#[tokio::test]
async fn patch_of_another_scopes_group_is_not_found_and_saves_nothing() {
    let mut store = MockGroupStore::new();
    store
        .expect_group()
        .withf(|s, id| *s == other_scope() && *id == group_id())
        .times(1)
        .returning(|_, _| Err(StoreError::NotFound));
    store.expect_update_group().never();
    let svc = service(store, clock(), MockEntropy::new());
    let fields = GroupFields {
        company_name: Some("Hijacked".to_owned()),
        ..GroupFields::default()
    };
    let err = svc
        .patch(&other_scope(), &group_id(), fields)
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::NotFound), "{err:?}");
}

#[tokio::test]
async fn patch_validates_before_touching_any_port() {
    let mut store = MockGroupStore::new();
    store.expect_group().never();
    store.expect_update_group().never();
    let svc = service(store, MockClock::new(), MockEntropy::new());
    let fields = GroupFields {
        company_name: Some(String::new()),
        domain: Some("ACME.COM".to_owned()),
        ..GroupFields::default()
    };
    let err = svc.patch(&scope(), &group_id(), fields).await.unwrap_err();
    assert_eq!(invalid_fields(err), vec!["company_name", "domain"]);
}

#[tokio::test]
async fn patch_onto_a_taken_domain_is_a_conflict() {
    let mut store = MockGroupStore::new();
    store
        .expect_group()
        .times(1)
        .returning(|_, _| Ok(stored_group()));
    store
        .expect_update_group()
        .withf(|_, g| g.domain == "taken.com")
        .times(1)
        .returning(|_, _| Err(StoreError::Conflict(Conflict::DomainTaken)));
    let svc = service(store, clock(), MockEntropy::new());
    let fields = GroupFields {
        domain: Some("taken.com".to_owned()),
        ..GroupFields::default()
    };
    let err = svc.patch(&scope(), &group_id(), fields).await.unwrap_err();
    assert!(
        matches!(err, ServiceError::Conflict(Conflict::DomainTaken)),
        "{err:?}"
    );
}
