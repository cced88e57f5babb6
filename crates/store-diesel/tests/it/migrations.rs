//! Migrations apply, revert completely and re-apply on both backends.

use diesel::QueryableByName;
use diesel::sql_types::Text;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use store_diesel::Database;
use store_diesel::migrate::{self, Direction};

use crate::harness::TestDb;
use crate::on_both;

#[derive(QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    name: String,
}

async fn tables(db: &Database) -> Vec<String> {
    let mut names: Vec<String> = match db {
        Database::Sqlite { path } => {
            use diesel::Connection as _;
            let mut c = diesel::sqlite::SqliteConnection::establish(path).unwrap();
            diesel::RunQueryDsl::load::<Name>(
                diesel::sql_query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"),
                &mut c,
            )
            .unwrap()
        }
        Database::Postgres { url } => {
            let mut c = AsyncPgConnection::establish(url).await.unwrap();
            diesel::sql_query("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'")
                .load::<Name>(&mut c)
                .await
                .unwrap()
        }
    }
    .into_iter()
    .map(|n| n.name)
    .collect();
    names.sort();
    names
}

async fn up_down_up(t: TestDb) {
    let expected = [
        "__diesel_schema_migrations",
        "api_keys",
        "claims_aggregates",
        "creation_keys",
        "embed_sessions",
        "enrollments",
        "events",
        "groups",
        "idempotency",
        "jobs",
        "members",
        "partner_audit",
        "partner_recovery_codes",
        "partner_sessions",
        "partner_user_links",
        "partner_users",
        "partners",
        "portal_accounts",
        "portal_links",
        "portal_sessions",
        "processes",
        "quotes",
        "rate_limits",
        "webhook_attempts",
        "webhook_endpoints",
    ];
    assert_eq!(tables(&t.db).await, expected);
    // Applying again is a no-op.
    assert!(migrate::run(&t.db, Direction::Up).await.unwrap().is_empty());
    let mut reverted = migrate::run(&t.db, Direction::DownAll).await.unwrap();
    assert_eq!(reverted.len(), testkit::db::migrations(t.db.backend()));
    assert_eq!(tables(&t.db).await, ["__diesel_schema_migrations"]);
    let applied = migrate::run(&t.db, Direction::Up).await.unwrap();
    // Reverted newest first, applied oldest first.
    reverted.reverse();
    assert_eq!(applied, reverted);
    assert_eq!(tables(&t.db).await, expected);
    if matches!(t.db, Database::Postgres { .. }) {
        // The shared migrations as PostgreSQL runs them: bytes are BYTEA
        // and the counters skip the write-ahead log.
        let blobs = testkit::db::texts(
            &t.db,
            "SELECT table_name || '.' || column_name AS value FROM information_schema.columns \
             WHERE table_schema = 'public' AND data_type = 'bytea' ORDER BY 1",
        )
        .await;
        assert!(
            blobs.contains(&"webhook_endpoints.sealed_secret".to_owned()),
            "{blobs:?}"
        );
        let unlogged = testkit::db::texts(
            &t.db,
            "SELECT relname::text AS value FROM pg_class WHERE relpersistence = 'u' AND relkind = 'r'",
        )
        .await;
        assert_eq!(unlogged, ["rate_limits"]);
    }
}
on_both!(up_down_up);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_file_and_directory_are_created_on_first_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/dir/partner-api.sqlite");
    let db = Database::parse(&format!("sqlite://{}", path.display())).unwrap();
    migrate::run(&db, Direction::Up).await.unwrap();
    assert!(path.exists());
    let mode: Vec<Name> = {
        use diesel::Connection as _;
        let mut c = diesel::sqlite::SqliteConnection::establish(path.to_str().unwrap()).unwrap();
        diesel::RunQueryDsl::load(
            diesel::sql_query("SELECT journal_mode AS name FROM pragma_journal_mode"),
            &mut c,
        )
        .unwrap()
    };
    assert_eq!(
        mode.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(),
        ["wal"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_postgres_is_a_connect_error() {
    let db = Database::parse("postgres://nobody@127.0.0.1:1/none").unwrap();
    let err = migrate::run(&db, Direction::Up).await.unwrap_err();
    assert!(matches!(err, migrate::MigrateError::Connect(_)), "{err}");
}
