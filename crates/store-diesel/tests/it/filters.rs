//! List filters (contract §10): each keeps exactly its rows, together they
//! must all hold, and every filter has its index on both backends.

use domain::event::{EventFilter, EventType};
use domain::group::{GroupFilter, GroupStatus};
use domain::page::PageRequest;
use domain::store::GroupAdvance;
use store_diesel::Database;

use crate::groups::group;
use crate::harness::{TestDb, partner};
use crate::on_both;
use crate::outbox::event;

async fn group_filters_keep_their_rows(t: TestDb) {
    let s = &t.stores;
    let (_, sc) = partner(s, 1).await;
    let mut a = group(1, &sc, "acme.com", 100);
    a.external_id = Some("crm-1".to_owned());
    let b = group(2, &sc, "globex.com", 101);
    let c = group(3, &sc, "initech.com", 102);
    for g in [&a, &b, &c] {
        s.groups.insert_group(g).await.unwrap();
    }
    s.groups
        .advance_group(
            &sc,
            &c.id,
            &GroupAdvance {
                status: GroupStatus::CensusReceived,
                company_state: None,
                events: Vec::new(),
                now: 103,
            },
        )
        .await
        .unwrap();
    let ids = |filter: GroupFilter| {
        let sc = sc.clone();
        async move {
            s.groups
                .groups(&sc, &filter, &PageRequest::first(50))
                .await
                .unwrap()
                .items
                .into_iter()
                .map(|g| g.id)
                .collect::<Vec<_>>()
        }
    };
    let by_external = GroupFilter {
        external_id: Some("crm-1".to_owned()),
        ..GroupFilter::default()
    };
    assert_eq!(ids(by_external.clone()).await, vec![a.id.clone()]);
    let by_domain = GroupFilter {
        domain: Some("globex.com".to_owned()),
        ..GroupFilter::default()
    };
    assert_eq!(ids(by_domain).await, vec![b.id.clone()]);
    let created = GroupFilter {
        status: Some(GroupStatus::Created),
        ..GroupFilter::default()
    };
    assert_eq!(ids(created).await, vec![b.id.clone(), a.id.clone()]);
    let received = GroupFilter {
        status: Some(GroupStatus::CensusReceived),
        ..GroupFilter::default()
    };
    assert_eq!(ids(received).await, vec![c.id.clone()]);
    // Together, every filter must hold.
    let both = GroupFilter {
        domain: Some("globex.com".to_owned()),
        ..by_external
    };
    assert!(ids(both).await.is_empty());
    // Pages of a filtered list follow one another.
    let first = s
        .groups
        .groups(
            &sc,
            &GroupFilter {
                status: Some(GroupStatus::Created),
                ..GroupFilter::default()
            },
            &PageRequest::first(1),
        )
        .await
        .unwrap();
    assert_eq!(first.items.len(), 1);
    assert!(first.next.is_some());
}
on_both!(group_filters_keep_their_rows);

async fn event_filters_keep_their_window_and_types(t: TestDb) {
    let s = &t.stores;
    let (_, sc) = partner(s, 1).await;
    let list: Vec<_> = [10, 20, 30]
        .iter()
        .map(|&at| event(at, &sc, i64::from(at)))
        .collect();
    s.outbox.append(&list, 0).await.unwrap();
    let created = |filter: EventFilter| {
        let sc = sc.clone();
        async move {
            s.outbox
                .events(&sc, &filter, &PageRequest::first(50))
                .await
                .unwrap()
                .items
                .into_iter()
                .map(|e| e.event.created_at)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(created(EventFilter::since(0)).await, vec![30, 20, 10]);
    let window = EventFilter {
        since: 20,
        until: Some(30),
        types: Vec::new(),
    };
    assert_eq!(created(window).await, vec![20]);
    let of_type = |t: EventType| EventFilter {
        types: vec![t],
        ..EventFilter::since(0)
    };
    assert_eq!(
        created(of_type(EventType::GroupStateChanged)).await,
        vec![30, 20, 10]
    );
    assert!(
        created(of_type(EventType::EnrollmentCreated))
            .await
            .is_empty()
    );
}
on_both!(event_filters_keep_their_window_and_types);

async fn every_filter_has_its_index(t: TestDb) {
    let sql = match &t.db {
        Database::Sqlite { .. } => "SELECT name AS value FROM sqlite_master WHERE type = 'index'",
        Database::Postgres { .. } => {
            "SELECT indexname::text AS value FROM pg_indexes WHERE schemaname = current_schema()"
        }
    };
    let indexes = testkit::db::texts(&t.db, sql).await;
    for name in [
        "groups_external_id",
        "groups_domain",
        "groups_status",
        "quotes_status",
        "quotes_kind",
        "events_type",
        "members_status",
        "members_enrollment_status",
    ] {
        assert!(
            indexes.iter().any(|i| i == name),
            "no {name} in {indexes:?}"
        );
    }
}
on_both!(every_filter_has_its_index);

/// A group's creation checks that no enrolled or active group of its mode
/// holds its domain: the partial unique index `groups_domain_held` serves
/// that check on both backends (the status list is in the query's text,
/// so the planners can match the index's predicate), instead of a scan
/// that grows with the table.
async fn the_domain_check_uses_its_partial_index(t: TestDb) {
    let s = &t.stores;
    let (_, sc) = partner(s, 1).await;
    for i in 0..20 {
        s.groups
            .insert_group(&group(i, &sc, &format!("d{i}.example"), 100 + i64::from(i)))
            .await
            .unwrap();
    }
    let plan = testkit::db::plan(
        &t.db,
        store_diesel::DOMAIN_HELD,
        &["test", "d3.example", "grp_000000000000"],
    )
    .await;
    assert!(
        plan.iter().any(|line| line.contains("groups_domain_held")),
        "{plan:#?}"
    );
}
on_both!(the_domain_check_uses_its_partial_index);
