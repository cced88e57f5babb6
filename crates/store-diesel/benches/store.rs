//! Storage benchmarks on both backends (PostgreSQL when
//! `PARTNER_API_TEST_POSTGRES_URL` is set): a 10,000-member census replace,
//! an idempotency begin + complete, a rate-limit check, and reading a page
//! of 50 groups. Each runs on a fresh database.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "a benchmark fails loudly"
)]

use criterion::{Criterion, criterion_group, criterion_main};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::census::{CensusWrite, rating_digest};
use domain::group::{Group, GroupFields};
use domain::idempotency::{Completion, IdempotentRequest, StoredResponse, request_digest};
use domain::ids::{GroupId, MemberId, PartnerId};
use domain::mode::Mode;
use domain::page::PageRequest;
use domain::partner::{Partner, PartnerKind};
use domain::rate_limit::Policy;
use domain::scope::Scope;
use pricing_core::census::CensusMember;
use store_diesel::migrate::{self, Direction};
use store_diesel::{Database, Stores};
use tokio::runtime::Runtime;

struct Bench {
    name: &'static str,
    stores: Stores,
    scope: Scope,
    group: GroupId,
    _dir: Option<tempfile::TempDir>,
}

fn rows(generation: u32) -> Vec<CensusMember> {
    (0..10_000u32)
        .map(|i| {
            let n = i + generation * 2_500;
            let mut m = CensusMember::new(
                &format!("E{n}"),
                time::Date::from_calendar_date(
                    1960 + i32::try_from(n % 40).unwrap(),
                    time::Month::May,
                    1,
                )
                .unwrap(),
                ["60601", "94103", "10001", "73301"][usize::try_from(n % 4).unwrap()],
            );
            m.email = Some(format!("p{n}@acme.com"));
            m.first_name = Some(format!("First{n}"));
            m
        })
        .collect()
}

async fn setup(name: &'static str, db: Database, dir: Option<tempfile::TempDir>) -> Bench {
    migrate::run(&db, Direction::Up).await.unwrap();
    let stores = Stores::open(&db, 4).unwrap();
    let p = Partner::new(
        PartnerId::from_bytes([1; 6]),
        "Bench".to_owned(),
        PartnerKind::Broker,
        None,
    );
    stores.partners.insert_partner(&p, 1).await.unwrap();
    let scope = Scope::new(p.id.clone(), Mode::Test);
    let mut group = GroupId::from_bytes([0; 6]);
    for n in 0..500u16 {
        let [a, b] = n.to_be_bytes();
        let g = Group::create(
            GroupId::from_bytes([0, 0, 0, 0, a, b]),
            p.id.clone(),
            Mode::Test,
            GroupFields {
                company_name: Some(format!("Company {n}")),
                domain: Some(format!("c{n}.com")),
                ..GroupFields::default()
            },
            1_000 + i64::from(n),
        )
        .unwrap();
        stores.groups.insert_group(&g).await.unwrap();
        group = g.id;
    }
    Bench {
        name,
        stores,
        scope,
        group,
        _dir: dir,
    }
}

fn benches(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let mut targets = Vec::new();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.sqlite");
    let db = Database::parse(&format!("sqlite://{}", path.display())).unwrap();
    targets.push(rt.block_on(setup("sqlite", db, Some(dir))));
    let mut pg_drop = None;
    if let Ok(admin) = std::env::var("PARTNER_API_TEST_POSTGRES_URL") {
        let name = format!("pa_bench_{}", std::process::id());
        rt.block_on(async {
            let mut c = AsyncPgConnection::establish(&admin)
                .await
                .expect("postgres reachable");
            diesel::sql_query(format!("CREATE DATABASE {name}"))
                .execute(&mut c)
                .await
                .unwrap();
        });
        let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
        let db = Database::parse(&format!("{base}/{name}")).unwrap();
        targets.push(rt.block_on(setup("postgres", db, None)));
        pg_drop = Some((admin, name));
    } else {
        eprintln!("PARTNER_API_TEST_POSTGRES_URL not set: PostgreSQL not benchmarked");
    }

    let generations = [rows(0), rows(1)];
    let mut group = c.benchmark_group("store");
    group.sample_size(10);
    for t in &targets {
        let mut generation = 0usize;
        group.bench_function(format!("census_replace_10k/{}", t.name), |b| {
            b.iter(|| {
                generation += 1;
                let members = generations[generation % 2].clone();
                let write = CensusWrite {
                    group_id: t.group.clone(),
                    rating_digest: rating_digest(&members),
                    fresh_ids: (0..members.len())
                        .map(|i| {
                            let [w, x, y, z] = u32::try_from(i).unwrap().to_be_bytes();
                            let [g1, g2] =
                                u16::try_from(generation % 65_536).unwrap().to_be_bytes();
                            MemberId::from_bytes([g1, g2, w, x, y, z])
                        })
                        .collect(),
                    rows: members,
                    job: None,
                    now: 10_000 + i64::try_from(generation).unwrap(),
                };
                rt.block_on(t.stores.census.replace_census(&t.scope, &write))
                    .unwrap()
            });
        });
    }
    group.finish();

    let mut group = c.benchmark_group("store");
    group.sample_size(50);
    for t in &targets {
        let mut n = 0u64;
        group.bench_function(format!("idempotency_begin_complete/{}", t.name), |b| {
            b.iter(|| {
                n += 1;
                let req = IdempotentRequest {
                    key: format!("key-{n}"),
                    method: "POST".to_owned(),
                    route: "/v1/groups".to_owned(),
                    digest: request_digest(b"{}"),
                    attempt: format!("attempt-{n}"),
                };
                rt.block_on(async {
                    t.stores
                        .idempotency
                        .begin(&t.scope, &req, 5_000)
                        .await
                        .unwrap();
                    let resp = StoredResponse {
                        status: 201,
                        headers: vec![],
                        body: b"{}".to_vec(),
                    };
                    t.stores
                        .idempotency
                        .complete(
                            &t.scope,
                            Completion {
                                request: &req,
                                response: &resp,
                                now: 5_000,
                            },
                        )
                        .await
                        .unwrap();
                });
            });
        });
        let policy = Policy::requests(u32::MAX);
        group.bench_function(format!("rate_limit_hit/{}", t.name), |b| {
            b.iter(|| {
                rt.block_on(
                    t.stores
                        .rate_limits
                        .hit(&policy, "requests:key_bench", 6_000),
                )
                .unwrap()
            });
        });
        group.bench_function(format!("groups_page_50/{}", t.name), |b| {
            b.iter(|| {
                rt.block_on(t.stores.groups.groups(
                    &t.scope,
                    &domain::group::GroupFilter::default(),
                    &PageRequest::first(50),
                ))
                .unwrap()
            });
        });
    }
    group.finish();

    drop(targets);
    if let Some((admin, name)) = pg_drop {
        rt.block_on(async {
            if let Ok(mut c) = AsyncPgConnection::establish(&admin).await {
                let _ = diesel::sql_query(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .execute(&mut c)
                    .await;
            }
        });
    }
}

criterion_group!(store, benches);
criterion_main!(store);
