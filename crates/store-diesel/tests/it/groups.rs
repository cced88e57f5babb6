//! Groups: partner and mode scoping on every read, the held-domain rule,
//! and keyset pagination that stays stable while new groups arrive.

use domain::group::{Group, GroupFields, GroupStatus};
use domain::ids::GroupId;
use domain::mode::Mode;
use domain::page::PageRequest;
use domain::scope::Scope;
use domain::store::{Conflict, GroupAdvance, StoreError};

use crate::harness::{TestDb, partner};
use crate::on_both;

pub fn group(n: u16, scope: &Scope, domain: &str, at: i64) -> Group {
    let [a, b] = n.to_be_bytes();
    let fields = GroupFields {
        company_name: Some(format!("Company {n}")),
        domain: Some(domain.to_owned()),
        ..GroupFields::default()
    };
    Group::create(
        GroupId::from_bytes([0, 0, 0, 0, a, b]),
        scope.partner.clone(),
        scope.mode,
        fields,
        at,
    )
    .unwrap()
}

async fn reads_are_scoped_to_partner_and_mode(t: TestDb) {
    let s = &t.stores;
    let (_, a) = partner(s, 1).await;
    let (_, b) = partner(s, 2).await;
    let a_live = Scope::new(a.partner.clone(), Mode::Live);
    let g = group(1, &a, "acme.com", 100);
    s.groups.insert_group(&g).await.unwrap();
    assert_eq!(s.groups.group(&a, &g.id).await.unwrap(), g);
    for other in [&b, &a_live] {
        assert!(matches!(
            s.groups.group(other, &g.id).await,
            Err(StoreError::NotFound)
        ));
        assert!(
            s.groups
                .groups(
                    other,
                    &domain::group::GroupFilter::default(),
                    &PageRequest::first(50)
                )
                .await
                .unwrap()
                .items
                .is_empty()
        );
        assert!(matches!(
            s.groups.update_group(other, &g).await,
            Err(StoreError::NotFound)
        ));
        assert!(matches!(
            s.census.census(other, &g.id).await,
            Err(StoreError::NotFound)
        ));
    }
    assert!(matches!(
        s.groups.insert_group(&g).await,
        Err(StoreError::Conflict(Conflict::IdTaken))
    ));

    let mut changed = g.clone();
    changed.company_name = "Acme 2".to_owned();
    changed.updated_at = 200;
    s.groups.update_group(&a, &changed).await.unwrap();
    assert_eq!(
        s.groups.group(&a, &g.id).await.unwrap().company_name,
        "Acme 2"
    );
}
on_both!(reads_are_scoped_to_partner_and_mode);

async fn an_enrolled_domain_is_held_in_its_mode(t: TestDb) {
    let s = &t.stores;
    let (_, a) = partner(s, 1).await;
    let (_, b) = partner(s, 2).await;
    let g1 = group(1, &a, "acme.com", 100);
    s.groups.insert_group(&g1).await.unwrap();
    // Not yet enrolled: other groups may use the domain.
    let g2 = group(2, &b, "acme.com", 101);
    s.groups.insert_group(&g2).await.unwrap();
    let moved = s
        .groups
        .advance_group(
            &a,
            &g1.id,
            &GroupAdvance {
                status: GroupStatus::Enrolled,
                company_state: None,
                events: Vec::new(),
                now: 102,
            },
        )
        .await
        .unwrap();
    assert_eq!(moved.status, GroupStatus::Enrolled);
    // Status never moves back.
    let still = s
        .groups
        .advance_group(
            &a,
            &g1.id,
            &GroupAdvance {
                status: GroupStatus::CensusReceived,
                company_state: None,
                events: Vec::new(),
                now: 103,
            },
        )
        .await
        .unwrap();
    assert_eq!(still.status, GroupStatus::Enrolled);
    assert!(matches!(
        s.groups.insert_group(&group(3, &b, "acme.com", 104)).await,
        Err(StoreError::Conflict(Conflict::DomainTaken))
    ));
    // The live mode is separate.
    let b_live = Scope::new(b.partner.clone(), Mode::Live);
    s.groups
        .insert_group(&group(4, &b_live, "acme.com", 105))
        .await
        .unwrap();
    // Renaming another group onto the held domain is refused too.
    let mut g5 = group(5, &b, "other.com", 107);
    s.groups.insert_group(&g5).await.unwrap();
    g5.domain = "acme.com".to_owned();
    assert!(matches!(
        s.groups.update_group(&b, &g5).await,
        Err(StoreError::Conflict(Conflict::DomainTaken))
    ));
    // A second group cannot reach enrolled on a held domain either.
    assert!(
        s.groups
            .advance_group(
                &b,
                &g2.id,
                &GroupAdvance {
                    status: GroupStatus::Enrolled,
                    company_state: None,
                    events: Vec::new(),
                    now: 106
                }
            )
            .await
            .is_err()
    );
}
on_both!(an_enrolled_domain_is_held_in_its_mode);

async fn pages_are_newest_first_and_stable_under_inserts(t: TestDb) {
    let s = &t.stores;
    let (_, a) = partner(s, 1).await;
    // 25 groups over 10 distinct seconds, so ties on created_at are broken by id.
    for n in 0..25u16 {
        s.groups
            .insert_group(&group(
                n,
                &a,
                &format!("c{n}.com"),
                1_000 + i64::from(n / 3),
            ))
            .await
            .unwrap();
    }
    let first = s
        .groups
        .groups(
            &a,
            &domain::group::GroupFilter::default(),
            &PageRequest::first(10),
        )
        .await
        .unwrap();
    assert_eq!(first.items.len(), 10);
    // New groups arrive between page reads, newer than everything.
    for n in 100..110u16 {
        s.groups
            .insert_group(&group(n, &a, &format!("n{n}.com"), 5_000))
            .await
            .unwrap();
    }
    let mut seen: Vec<GroupId> = first.items.iter().map(|g| g.id.clone()).collect();
    let mut next = first.next.clone();
    while let Some(cursor) = next {
        let page = s
            .groups
            .groups(
                &a,
                &domain::group::GroupFilter::default(),
                &PageRequest {
                    limit: 10,
                    after: Some(cursor),
                },
            )
            .await
            .unwrap();
        seen.extend(page.items.iter().map(|g| g.id.clone()));
        next = page.next;
    }
    // Exactly the 25 original groups, each once, newest first.
    let mut want: Vec<(i64, GroupId)> = (0..25u16)
        .map(|n| (1_000 + i64::from(n / 3), group(n, &a, "x.com", 0).id))
        .collect();
    want.sort_by(|x, y| y.cmp(x));
    assert_eq!(seen, want.into_iter().map(|(_, id)| id).collect::<Vec<_>>());
    // The last page says so.
    let all = s
        .groups
        .groups(
            &a,
            &domain::group::GroupFilter::default(),
            &PageRequest::first(200),
        )
        .await
        .unwrap();
    assert_eq!(all.items.len(), 35);
    assert_eq!(all.next, None);
}
on_both!(pages_are_newest_first_and_stable_under_inserts);
