//! Stored documents written by the previous version (bare camelCase or
//! snake_case, no envelope) read through the store, and the data migration
//! rewrites them in the current form, once.

use diesel::QueryableByName;
use diesel::sql_types::Text;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::document::fixtures::{
    LEGACY_COMPARISON_JOB, LEGACY_ENROLLMENT, LEGACY_EVENTS, LEGACY_MARKET_QUOTE,
    legacy_price_on_plan_document, legacy_pricing_payload, price_on_plan_document,
};
use domain::document::{EventData, JobPayload, QuoteDocument, is_current};
use domain::event::{EventType, NewEvent};
use domain::ids::{EventId, JobId};
use domain::job::{JobKind, NewJob};
use domain::quote::QuoteKind;
use store_diesel::Database;
use store_diesel::migrate::{self, Direction};

use domain::services::quotes::group_pricing_digest;

use crate::groups::group;
use crate::harness::{TestDb, partner};
use crate::lookups::{enrollment, quote};
use crate::on_both;

#[derive(QueryableByName)]
struct One {
    #[diesel(sql_type = Text)]
    text: String,
}

/// Runs `sql` with `binds` (texts) on `db`, as the previous version's
/// writes would have; returns the `text` column of any rows.
async fn sql(db: &Database, sql: &str, binds: &[&str]) -> Vec<String> {
    let select = sql.starts_with("SELECT");
    match db {
        Database::Sqlite { path } => {
            use diesel::Connection as _;
            let mut c = diesel::sqlite::SqliteConnection::establish(path).unwrap();
            let mut q = diesel::sql_query(sql).into_boxed();
            for b in binds {
                q = q.bind::<Text, _>(b.to_string());
            }
            if select {
                diesel::RunQueryDsl::load::<One>(q, &mut c).unwrap()
            } else {
                diesel::RunQueryDsl::execute(q, &mut c).unwrap();
                Vec::new()
            }
        }
        Database::Postgres { url } => {
            let mut c = AsyncPgConnection::establish(url).await.unwrap();
            let mut q = diesel::sql_query(sql).into_boxed();
            for b in binds {
                q = q.bind::<Text, _>(b.to_string());
            }
            if select {
                q.load::<One>(&mut c).await.unwrap()
            } else {
                q.execute(&mut c).await.unwrap();
                Vec::new()
            }
        }
    }
    .into_iter()
    .map(|r| r.text)
    .collect()
}

/// `?` placeholders for SQLite, `$n` for PostgreSQL.
fn placeholders(db: &Database, sql: &str) -> String {
    match db {
        Database::Sqlite { .. } => sql.to_owned(),
        Database::Postgres { .. } => {
            let mut out = String::new();
            let mut n = 0;
            for c in sql.chars() {
                if c == '?' {
                    n += 1;
                    out.push_str(&format!("${n}"));
                } else {
                    out.push(c);
                }
            }
            out
        }
    }
}

async fn set(db: &Database, table: &str, column: &str, id: &str, text: &str) {
    let q = placeholders(db, &format!("UPDATE {table} SET {column} = ? WHERE id = ?"));
    sql(db, &q, &[text, id]).await;
}

async fn get(db: &Database, table: &str, column: &str, id: &str) -> String {
    let q = placeholders(
        db,
        &format!("SELECT {column} AS text FROM {table} WHERE id = ?"),
    );
    sql(db, &q, &[id]).await.remove(0)
}

async fn rows_of_the_previous_version_read_and_are_rewritten_once(t: TestDb) {
    let s = &t.stores;
    let db = &t.db;
    let (_, scope) = partner(s, 1).await;
    let g = group(1, &scope, "acme.com", 100);
    s.groups.insert_group(&g).await.unwrap();

    // A market quote, a price-on-plan quote and an enrollment, stored now,
    // then put back as the previous version wrote them.
    let mut market = quote(1, &scope, &g.id, 100);
    market.rating_digest = group_pricing_digest(&g);
    s.quotes.insert_quote(&market, &[]).await.unwrap();
    let mut lead = quote(2, &scope, &g.id, 101);
    lead.kind = QuoteKind::PriceOnPlan;
    lead.body = QuoteDocument::PriceOnPlan(Box::new(price_on_plan_document()));
    s.quotes.insert_quote(&lead, &[]).await.unwrap();
    let e = enrollment(1, &market, 102);
    s.quotes
        .insert_enrollment(&e, &[], None, &[])
        .await
        .unwrap();
    set(
        db,
        "quotes",
        "body",
        market.id.as_str(),
        LEGACY_MARKET_QUOTE,
    )
    .await;
    set(
        db,
        "quotes",
        "body",
        lead.id.as_str(),
        &legacy_price_on_plan_document(),
    )
    .await;
    set(db, "enrollments", "body", e.id.as_str(), LEGACY_ENROLLMENT).await;

    // One event of every type, and a job of each kind.
    let mut events = Vec::new();
    for (n, (name, legacy)) in (1u8..).zip(LEGACY_EVENTS) {
        let event_type = EventType::parse(name).unwrap();
        let event = NewEvent {
            id: EventId::from_bytes([0, 0, 0, 0, 0xe, n]),
            scope: scope.clone(),
            created_at: 100,
            data: EventData::from_stored(event_type, legacy).unwrap(),
        };
        s.outbox
            .append(std::slice::from_ref(&event), 100_000)
            .await
            .unwrap();
        set(db, "events", "data", event.id.as_str(), legacy).await;
        events.push(event);
    }
    let pricing = legacy_pricing_payload(&lead.id);
    let jobs = [
        (JobKind::MarketComparison, LEGACY_COMPARISON_JOB.to_owned()),
        (JobKind::PriceOnPlan, pricing),
    ];
    let mut job_ids = Vec::new();
    for (n, (kind, legacy)) in (1u8..).zip(&jobs) {
        let job = NewJob {
            id: JobId::from_bytes([0, 0, 0, 0, 0xb, n]),
            scope: scope.clone(),
            group_id: Some(g.id.clone()),
            payload: JobPayload::from_stored(*kind, legacy).unwrap(),
            run_after_ms: 100_000,
        };
        s.jobs.enqueue(&job).await.unwrap();
        set(db, "jobs", "payload", job.id.as_str(), legacy).await;
        job_ids.push(job);
    }

    // The old rows read through the store as the typed documents.
    let read = s.quotes.quote(&scope, &market.id).await.unwrap();
    assert_eq!(read.body, market.body);
    let read = s.quotes.quote(&scope, &lead.id).await.unwrap();
    assert_eq!(read.body, lead.body);
    assert_eq!(
        s.quotes.enrollment(&scope, &e.id).await.unwrap().body,
        e.body
    );
    for event in &events {
        let read = s.outbox.event(&scope, &event.id).await.unwrap();
        assert_eq!(read.event, *event);
    }

    // The migration rewrites every one of them, in the current form.
    let rewritten = migrate::rewrite_documents(db).await.unwrap();
    assert_eq!(rewritten, 3 + 6 + 2);
    for (table, column, id) in [
        ("quotes", "body", market.id.as_str()),
        ("quotes", "body", lead.id.as_str()),
        ("enrollments", "body", e.id.as_str()),
    ] {
        let text = get(db, table, column, id).await;
        assert!(is_current(&text), "{table} {id}: {text}");
        assert!(!text.contains("totalCents"), "{text}");
    }
    for event in &events {
        assert!(is_current(
            &get(db, "events", "data", event.id.as_str()).await
        ));
    }
    for job in &job_ids {
        assert!(is_current(
            &get(db, "jobs", "payload", job.id.as_str()).await
        ));
    }
    // … and the rows still read the same.
    assert_eq!(
        s.quotes.quote(&scope, &market.id).await.unwrap().body,
        market.body
    );
    assert_eq!(
        s.quotes.quote(&scope, &lead.id).await.unwrap().body,
        lead.body
    );
    assert_eq!(
        s.quotes.enrollment(&scope, &e.id).await.unwrap().body,
        e.body
    );
    for event in &events {
        assert_eq!(
            s.outbox.event(&scope, &event.id).await.unwrap().event,
            *event
        );
    }
    let mut claimed = Vec::new();
    while let Some(j) = s
        .jobs
        .claim_job(
            &[JobKind::MarketComparison, JobKind::PriceOnPlan],
            200_000,
            60_000,
        )
        .await
        .unwrap()
    {
        claimed.push(j.job);
    }
    claimed.sort_by(|a, b| a.id.as_str().cmp(b.id.as_str()));
    assert_eq!(claimed, job_ids);

    // A second run finds nothing to do.
    assert_eq!(migrate::rewrite_documents(db).await.unwrap(), 0);
    // And a row that does not read stops it, naming the row.
    set(
        db,
        "quotes",
        "body",
        market.id.as_str(),
        r#"{"monthly":{}}"#,
    )
    .await;
    let err = migrate::rewrite_documents(db)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains(market.id.as_str()), "{err}");
}
on_both!(rows_of_the_previous_version_read_and_are_rewritten_once);

/// The rewrite runs in the start that applies the marker migration, and in
/// no later start: a database already past it is never scanned again.
async fn the_rewrite_runs_only_when_the_marker_migration_applies(t: TestDb) {
    let s = &t.stores;
    let db = &t.db;
    let (_, scope) = partner(s, 1).await;
    let g = group(1, &scope, "acme.com", 100);
    s.groups.insert_group(&g).await.unwrap();
    let market = quote(1, &scope, &g.id, 100);
    s.quotes.insert_quote(&market, &[]).await.unwrap();
    let id = market.id.as_str();
    set(db, "quotes", "body", id, LEGACY_MARKET_QUOTE).await;

    // Past the marker: a start applies nothing and leaves the row alone.
    assert!(migrate::run(db, Direction::Up).await.unwrap().is_empty());
    assert!(!is_current(&get(db, "quotes", "body", id).await));

    // A database from before the marker: the start that applies it
    // rewrites the row.
    let forget = placeholders(
        db,
        "DELETE FROM __diesel_schema_migrations WHERE version = ?",
    );
    sql(db, &forget, &["20261126000001"]).await;
    assert_eq!(
        migrate::run(db, Direction::Up).await.unwrap(),
        ["20261126000001"]
    );
    let text = get(db, "quotes", "body", id).await;
    assert!(is_current(&text), "{text}");
    assert_eq!(
        s.quotes.quote(&scope, &market.id).await.unwrap().body,
        market.body
    );
    assert!(migrate::run(db, Direction::Up).await.unwrap().is_empty());
}
on_both!(the_rewrite_runs_only_when_the_marker_migration_applies);
