//! Census replace: one transaction, upsert by external id then email
//! keeping member ids, removals, the group's counters and status, and the
//! market-comparison job written with it.

use domain::census::{CensusWrite, rating_digest};
use domain::group::GroupStatus;
use domain::ids::{JobId, MemberId};
use domain::job::{JobKind, JobState, NewJob};
use domain::page::{GroupQuery, PageRequest};
use domain::scope::Scope;
use domain::store::StoreError;
use pricing_core::census::CensusMember;
use time::macros::date;

use crate::groups::group;
use crate::harness::{TestDb, partner};
use crate::jobs::claim;
use crate::on_both;

pub fn member(ext: Option<&str>, email: Option<&str>, zip: &str) -> CensusMember {
    let mut m = CensusMember::new("x", date!(1985 - 06 - 15), zip);
    m.external_id = ext.map(str::to_owned);
    m.email = email.map(str::to_owned);
    m
}

pub fn write(
    scope: &Scope,
    g: &domain::ids::GroupId,
    rows: Vec<CensusMember>,
    seed: u8,
    now: i64,
) -> CensusWrite {
    let fresh_ids = (0..rows.len())
        .map(|i| {
            let [a, b, c, d] = u32::try_from(i).unwrap().to_be_bytes();
            MemberId::from_bytes([seed, a, b, c, d, 0x5a])
        })
        .collect();
    CensusWrite {
        group_id: g.clone(),
        rating_digest: rating_digest(&rows),
        rows,
        fresh_ids,
        job: Some(NewJob {
            id: JobId::from_bytes([seed, 0, 0, 0, 0, 1]),
            scope: scope.clone(),
            group_id: Some(g.clone()),
            payload: crate::jobs::payload(JobKind::MarketComparison, 0),
            run_after_ms: now * 1000,
        }),
        now,
    }
}

/// How many members of `after` kept an id of `before`, how many are new,
/// and how many of `before` are gone.
fn tally(
    before: &[domain::census::StoredMember],
    after: &[domain::census::StoredMember],
) -> (usize, usize, usize) {
    let old: std::collections::HashSet<_> = before.iter().map(|m| &m.id).collect();
    let new: std::collections::HashSet<_> = after.iter().map(|m| &m.id).collect();
    let kept = new.intersection(&old).count();
    (kept, new.len() - kept, old.len() - kept)
}

async fn replace_keeps_ids_by_external_id_then_email(t: TestDb) {
    let s = &t.stores;
    let (_, sc) = partner(s, 1).await;
    let g = group(1, &sc, "acme.com", 100);
    s.groups.insert_group(&g).await.unwrap();

    let first = vec![
        member(Some("E1"), Some("ann@acme.com"), "60601"),
        member(None, Some("bob@acme.com"), "60602"),
        member(Some("E3"), None, "60603"),
    ];
    let first = write(&sc, &g.id, first, 1, 200);
    let out = s.census.replace_census(&sc, &first).await.unwrap();
    let before = s.census.census(&sc, &g.id).await.unwrap();
    assert_eq!(out.member_count, 3);
    assert_eq!(tally(&[], &before), (0, 3, 0));
    let id_of = |list: &[domain::census::StoredMember], i: usize| list[i].id.clone();
    let grp = s.groups.group(&sc, &g.id).await.unwrap();
    assert_eq!(grp.status, GroupStatus::CensusReceived);
    assert_eq!(grp.census_member_count, 3);
    assert_eq!(grp.rating_digest, Some(first.rating_digest));

    // E3 leaves; Bob comes back by email (case-insensitive) with an
    // external id now; Ann by external id with a new email; Dee is new.
    let second = vec![
        member(Some("E1"), Some("ann.new@acme.com"), "60601"),
        member(Some("E2"), Some("BOB@acme.com"), "60602"),
        member(Some("E4"), Some("dee@acme.com"), "60604"),
    ];
    let out = s
        .census
        .replace_census(&sc, &write(&sc, &g.id, second, 2, 300))
        .await
        .unwrap();
    let after = s.census.census(&sc, &g.id).await.unwrap();
    assert_eq!(out.member_count, 3);
    assert_eq!(tally(&before, &after), (2, 1, 1));
    assert_eq!(id_of(&after, 0), id_of(&before, 0));
    assert_eq!(id_of(&after, 1), id_of(&before, 1));
    assert!(!before.iter().any(|m| m.id == after[2].id));
    assert_eq!(after[0].created_at, 200);
    assert_eq!(after[2].created_at, 300);
    assert_eq!(after[1].member.external_id.as_deref(), Some("E2"));
    assert_eq!(
        after.iter().map(|m| m.position).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );

    // The first write's job was superseded by the second's.
    let open = s
        .jobs
        .open_job(&sc, &g.id, JobKind::MarketComparison)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(open.job.id, JobId::from_bytes([2, 0, 0, 0, 0, 1]));
    assert_eq!(open.state, JobState::Queued);
    assert!(
        !s.jobs
            .complete_job(&claim(&JobId::from_bytes([1, 0, 0, 0, 0, 1]), 0), &[], None)
            .await
            .unwrap()
    );

    // Pages: newest first over (created_at, id).
    let page = s
        .census
        .census_page(&sc, GroupQuery::all(&g.id, &PageRequest::first(2)))
        .await
        .unwrap();
    assert_eq!(page.items[0].id, after[2].id);
    let rest = s
        .census
        .census_page(
            &sc,
            GroupQuery::all(
                &g.id,
                &PageRequest {
                    limit: 2,
                    after: page.next,
                },
            ),
        )
        .await
        .unwrap();
    assert_eq!(rest.items.len(), 1);
    assert_eq!(rest.next, None);

    // An empty census empties the group, which keeps its status.
    let out = s
        .census
        .replace_census(&sc, &write(&sc, &g.id, vec![], 3, 400))
        .await
        .unwrap();
    assert_eq!(out.member_count, 0);
    assert_eq!(
        tally(&after, &s.census.census(&sc, &g.id).await.unwrap()),
        (0, 0, 3)
    );
    let grp = s.groups.group(&sc, &g.id).await.unwrap();
    assert_eq!(
        (grp.census_member_count, grp.status),
        (0, GroupStatus::CensusReceived)
    );
}
on_both!(replace_keeps_ids_by_external_id_then_email);

async fn a_failed_replace_changes_nothing(t: TestDb) {
    let s = &t.stores;
    let (_, sc) = partner(s, 1).await;
    let g = group(1, &sc, "acme.com", 100);
    s.groups.insert_group(&g).await.unwrap();
    let rows: Vec<CensusMember> = (0..50)
        .map(|i| member(Some(&format!("E{i}")), None, "60601"))
        .collect();
    s.census
        .replace_census(&sc, &write(&sc, &g.id, rows, 1, 200))
        .await
        .unwrap();
    let before = s.census.census(&sc, &g.id).await.unwrap();

    // The job id collides with the first write's job: the insert of the
    // job fails after the members were rewritten, and everything rolls back.
    let mut bad = write(
        &sc,
        &g.id,
        (0..70)
            .map(|i| member(Some(&format!("N{i}")), None, "94103"))
            .collect(),
        2,
        300,
    );
    bad.job.as_mut().unwrap().id = JobId::from_bytes([1, 0, 0, 0, 0, 1]);
    assert!(s.census.replace_census(&sc, &bad).await.is_err());
    assert_eq!(s.census.census(&sc, &g.id).await.unwrap(), before);
    let grp = s.groups.group(&sc, &g.id).await.unwrap();
    assert_eq!(grp.census_member_count, 50);
    assert_eq!(grp.updated_at, 200);

    let other = Scope::new(domain::ids::PartnerId::from_bytes([7; 6]), sc.mode);
    assert!(matches!(
        s.census
            .replace_census(&other, &write(&other, &g.id, vec![], 3, 1))
            .await,
        Err(StoreError::NotFound)
    ));
}
on_both!(a_failed_replace_changes_nothing);

async fn ten_thousand_members_in_one_write(t: TestDb) {
    let s = &t.stores;
    let (_, sc) = partner(s, 1).await;
    let g = group(1, &sc, "acme.com", 100);
    s.groups.insert_group(&g).await.unwrap();
    let rows: Vec<CensusMember> = (0..10_000)
        .map(|i| {
            member(
                Some(&format!("E{i}")),
                Some(&format!("p{i}@acme.com")),
                "60601",
            )
        })
        .collect();
    let out = s
        .census
        .replace_census(&sc, &write(&sc, &g.id, rows.clone(), 1, 200))
        .await
        .unwrap();
    assert_eq!(out.member_count, 10_000);
    let before = s.census.census(&sc, &g.id).await.unwrap();
    let mut shifted = rows;
    shifted.rotate_left(5_000);
    s.census
        .replace_census(&sc, &write(&sc, &g.id, shifted, 2, 300))
        .await
        .unwrap();
    let all = s.census.census(&sc, &g.id).await.unwrap();
    assert_eq!(tally(&before, &all), (10_000, 0, 0));
    assert_eq!(all.len(), 10_000);
    assert_eq!(all[0].member.external_id.as_deref(), Some("E5000"));
}
on_both!(ten_thousand_members_in_one_write);

async fn concurrent_writes_to_one_group_never_mix(t: TestDb) {
    let (_, sc) = partner(&t.stores, 1).await;
    let g = group(1, &sc, "acme.com", 100);
    t.stores.groups.insert_group(&g).await.unwrap();
    let other = t.second_process();
    for round in 0..10u8 {
        let a: Vec<CensusMember> = (0..300)
            .map(|i| member(Some(&format!("A{round}-{i}")), None, "60601"))
            .collect();
        let b: Vec<CensusMember> = (0..200)
            .map(|i| member(Some(&format!("B{round}-{i}")), None, "94103"))
            .collect();
        let wa = write(&sc, &g.id, a.clone(), round * 2, 1_000 + i64::from(round));
        let wb = write(
            &sc,
            &g.id,
            b.clone(),
            round * 2 + 1,
            1_000 + i64::from(round),
        );
        let (s1, s2, sc1, sc2) = (
            t.stores.census.clone(),
            other.census.clone(),
            sc.clone(),
            sc.clone(),
        );
        let ta = tokio::spawn(async move { s1.replace_census(&sc1, &wa).await });
        let tb = tokio::spawn(async move { s2.replace_census(&sc2, &wb).await });
        ta.await.unwrap().unwrap();
        tb.await.unwrap().unwrap();
        let stored: Vec<CensusMember> = t
            .stores
            .census
            .census(&sc, &g.id)
            .await
            .unwrap()
            .into_iter()
            .map(|m| m.member)
            .collect();
        assert!(
            stored == a || stored == b,
            "round {round}: a mix of {} members",
            stored.len()
        );
        let grp = t.stores.groups.group(&sc, &g.id).await.unwrap();
        assert_eq!(
            usize::try_from(grp.census_member_count).unwrap(),
            stored.len()
        );
        assert_eq!(
            grp.rating_digest.as_deref(),
            Some(rating_digest(&stored).as_str())
        );
    }
}
on_both!(concurrent_writes_to_one_group_never_mix);

async fn a_cancelled_write_leaves_no_lock_behind(t: TestDb) {
    let (_, sc) = partner(&t.stores, 1).await;
    let g = group(1, &sc, "acme.com", 100);
    t.stores.groups.insert_group(&g).await.unwrap();
    let rows: Vec<CensusMember> = (0..10_000)
        .map(|i| member(Some(&format!("E{i}")), None, "60601"))
        .collect();
    for (round, delay_ms) in [(0u8, 20u64), (1, 60), (2, 120), (3, 250)] {
        // A request dropped mid-write: the transaction's future is aborted.
        let census = t.stores.census.clone();
        let (sc2, w) = (sc.clone(), write(&sc, &g.id, rows.clone(), round, 200));
        let task = tokio::spawn(async move { census.replace_census(&sc2, &w).await });
        tokio::time::sleep(std::time::Duration::from_millis(delay_ms)).await;
        task.abort();
        let _ = task.await;
        // Every following write goes through; none inherits the aborted
        // transaction or waits on its lock.
        for n in 0..6 {
            let mut changed = t.stores.groups.group(&sc, &g.id).await.unwrap();
            changed.company_name = format!("Acme {round}-{n}");
            t.stores.groups.update_group(&sc, &changed).await.unwrap();
        }
    }
}
on_both!(a_cancelled_write_leaves_no_lock_behind);
