//! `serve` migrates the database, creates the demo partner once and
//! answers HTTP on the address it prints; `migrate` creates or upgrades the
//! database.

use crate::common::serve_process::{ServeDemo, Served};
use crate::common::{cli, queue_a_comparison, scratch, stdout_ok};

fn sqlite_url(test: &str) -> String {
    format!(
        "sqlite://{}",
        scratch(test).join("partner-api.sqlite").display()
    )
}

/// Starts `serve --demo` on a free port over `url`, reading stdout until
/// the server says where it listens.
fn start(dir: &std::path::Path, url: &str) -> Served {
    ServeDemo::new(dir, url).start()
}

/// One HTTP/1.1 request over a plain socket; returns (status, body).
fn http(
    addr: &str,
    method: &str,
    path: &str,
    key: &str,
    body: Option<&str>,
) -> (u16, serde_json::Value) {
    use std::io::{Read as _, Write as _};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    let body = body.unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
    (status, serde_json::from_str(body).unwrap_or_default())
}

/// `GET path` with `key`.
fn http_get(addr: &str, path: &str, key: &str) -> (u16, serde_json::Value) {
    http(addr, "GET", path, key, None)
}

#[test]
fn serve_demo_prints_a_test_key_once_and_ping_answers() {
    let dir = scratch("serve_demo");
    let url = sqlite_url("serve_demo_db");
    let server = start(&dir, &url);
    let key = server.demo_key();
    assert!(key.starts_with("psk_test_") && key.len() == 41, "{key}");
    let (status, body) = http_get(&server.addr, "/v1/ping", &key);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["ok"], true);
    assert_eq!(body["mode"], "test");
    assert_eq!(body["partner"]["name"], "Demo Broker");
    let partner = body["partner"]["id"].as_str().unwrap().to_owned();
    assert!(partner.starts_with("prt_"), "{partner}");
    let (status, body) = http_get(
        &server.addr,
        "/v1/ping",
        "psk_test_00000000000000000000000000000000",
    );
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("unauthorized"))
    );
    drop(server);

    // A second start on the same database prints no new key.
    let again = start(&dir, &url);
    assert!(
        again.stdout.iter().all(|l| !l.contains("psk_test_")),
        "{:?}",
        again.stdout
    );
    let said = again
        .stdout
        .iter()
        .find(|l| l.starts_with("Demo: "))
        .unwrap_or_else(|| panic!("{:?}", again.stdout));
    assert!(
        said.contains(&format!("already has partner {partner} (Demo Broker)"))
            && said.contains(&format!(
                "`partner-api key create --partner {partner} --mode test`"
            )),
        "{said}"
    );
}

#[test]
fn serve_refuses_a_bad_listen_address_in_one_line() {
    let url = sqlite_url("serve_bad_listen");
    let out = cli()
        .args(["serve", "--listen", "nowhere", "--database-url", &url])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("listen"), "{err}");
}

#[test]
fn version_and_help() {
    let version = stdout_ok(cli().arg("--version"));
    assert!(version.starts_with("partner-api "), "{version}");
    let help = stdout_ok(cli().args(["price", "--help"]));
    for flag in [
        "--census",
        "--plan",
        "--market-plans",
        "--version",
        "--plan-year-start",
        "--allow-age",
    ] {
        assert!(help.contains(flag), "{flag} missing from help: {help}");
    }
}

#[test]
fn migrate_creates_the_database_once_and_reports_json() {
    let url = sqlite_url("migrate_json");
    let first = stdout_ok(cli().args(["migrate", "--json", "--database-url", &url]));
    let v: serde_json::Value = serde_json::from_str(first.trim()).unwrap();
    assert_eq!(v["backend"], "sqlite");
    assert_eq!(
        v["applied"].as_array().map(Vec::len),
        Some(testkit::db::sqlite_migrations())
    );
    let again = stdout_ok(cli().env("PARTNER_API_DATABASE_URL", &url).arg("migrate"));
    assert!(again.contains("up to date"), "{again}");
}

#[test]
fn migrate_refuses_a_bad_url_in_one_line() {
    let out = cli()
        .args(["migrate", "--database-url", "mysql://x"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: database_url must be sqlite://PATH (a file) or postgres://"),
        "{err}"
    );
}

/// The shell block of README.md between the journey markers.
fn readme_journey() -> String {
    let readme = include_str!("../../../../README.md");
    let start = readme
        .find("<!-- journey:start")
        .unwrap_or_else(|| panic!("journey start marker"));
    let end = readme
        .find("<!-- journey:end -->")
        .unwrap_or_else(|| panic!("journey end marker"));
    let block = &readme[start..end];
    let code = block
        .split_once("```sh\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(code, _)| code)
        .unwrap_or_else(|| panic!("a sh block between the markers"));
    code.to_owned()
}

/// The README's five-minute journey, exactly as written, against a real
/// `serve --demo` (its job worker included): ping → group → census →
/// quote → enrollment.
#[test]
fn the_readme_journey_runs_against_serve_demo() {
    let dir = scratch("readme_journey");
    let url = sqlite_url("readme_journey_db");
    let server = start(&dir, &url);
    let key = server.demo_key();
    let mut child = std::process::Command::new("bash")
        .args(["-euo", "pipefail", "-c", &readme_journey()])
        .env("KEY", &key)
        .env("API", format!("http://{}/v1", server.addr))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|_| panic!("bash and curl are installed"));
    // The journey takes a second or two; a hang is a failure, not a wait.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the README journey did not finish within 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    for expected in [
        r#""ok":true"#,
        "group grp_",
        r#""rates":"pending""#,
        r#""pricing_basis":"market_rates""#,
        r#""status":"ready""#,
        r#""status":"onboarding""#,
        r#""company_state":"sandbox""#,
        r#""invite_suppressed":true"#,
    ] {
        assert!(
            stdout.contains(expected),
            "{expected} missing from:\n{stdout}"
        );
    }
}

/// A market comparison enqueued while no server runs (a census written
/// just before a crash) is run by the next `serve`: jobs live in the
/// database, not in the process.
#[test]
fn a_comparison_left_queued_is_run_after_a_restart() {
    use domain::scope::Scope;
    use server::system::SystemClock;
    use std::sync::Arc;

    let dir = scratch("resume_job");
    let url = sqlite_url("resume_job_db");
    let server = start(&dir, &url);
    let key = server.demo_key();
    let (status, group) = http(
        &server.addr,
        "POST",
        "/v1/groups",
        &key,
        Some(r#"{"company_name":"Acme","domain":"acme-mfg.com"}"#),
    );
    assert_eq!(status, 201, "{group}");
    let (_, ping) = http_get(&server.addr, "/v1/ping", &key);
    drop(server);

    // The census is written with no server running, so nothing runs its job.
    let gid = domain::ids::GroupId::parse(group["id"].as_str().unwrap()).unwrap();
    let partner = domain::ids::PartnerId::parse(ping["partner"]["id"].as_str().unwrap()).unwrap();
    let scope = Scope::new(partner, domain::mode::Mode::Test);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let db = store_diesel::Database::parse(&url).unwrap();
        let stores = store_diesel::Stores::open(&db, 2).unwrap();
        queue_a_comparison(&stores, &scope, &gid, Arc::new(SystemClock)).await;
    });

    let server = start(&dir, &url);
    let path = format!("/v1/groups/{}/quotes", gid.as_str());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (status, body) = http(&server.addr, "POST", &path, &key, Some("{}"));
        if status == 201 {
            assert_eq!(body["census"]["employees"], 1, "{body}");
            break;
        }
        assert_eq!(
            (status, body["error"].as_str()),
            (409, Some("rates_pending")),
            "{body}"
        );
        assert!(
            std::time::Instant::now() < deadline,
            "the queued comparison never ran"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// A key is authenticated from memory, so another process's revocation
/// (here the operator's `key revoke`) is seen once the cached entry
/// expires: within `store_diesel::key_cache::FRESH` (one second) by
/// construction; the wait allowed here is generous, so the test does not
/// depend on the machine's speed.
async fn revocation_by_another_process_is_seen(dir: &std::path::Path, url: &str) {
    let server = ServeDemo::new(dir, url).start();
    let key = server.demo_key();
    assert_eq!(http_get(&server.addr, "/v1/ping", &key).0, 200);
    let operator = |args: &[&str]| {
        stdout_ok(
            cli()
                .env("PARTNER_API_DATABASE_URL", url)
                .env("PARTNER_API_LOG", "warn")
                .current_dir(dir)
                .args(args),
        )
    };
    let partners: serde_json::Value =
        serde_json::from_str(&operator(&["partner", "list", "--json"])).unwrap_or_default();
    let partner = partners[0]["id"].as_str().unwrap_or_default().to_owned();
    let list = operator(&["key", "list", "--partner", &partner, "--json"]);
    let keys: serde_json::Value = serde_json::from_str(&list).unwrap_or_default();
    let id = keys
        .as_array()
        .and_then(|k| {
            k.iter().find(|k| {
                key.starts_with(k["prefix"].as_str().unwrap_or("-").trim_end_matches('…'))
            })
        })
        .and_then(|k| k["id"].as_str())
        .unwrap_or_else(|| panic!("the demo key is not listed: {list}"))
        .to_owned();
    operator(&["key", "revoke", &id]);
    let started = std::time::Instant::now();
    while http_get(&server.addr, "/v1/ping", &key).0 == 200 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "the revoked key still authenticates"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Every worker shares the one cache: the key stays refused.
    for _ in 0..20 {
        assert_eq!(http_get(&server.addr, "/v1/ping", &key).0, 401);
    }
}

#[tokio::test]
async fn a_key_revoked_by_another_process_stops_authenticating_on_sqlite() {
    let dir = scratch("revoked_elsewhere_sqlite");
    revocation_by_another_process_is_seen(&dir, &sqlite_url("revoked_elsewhere_sqlite_db")).await;
}

#[tokio::test]
async fn a_key_revoked_by_another_process_stops_authenticating_on_postgres() {
    let Some(db) = testkit::db::postgres().await else {
        eprintln!("SKIPPED: {} is not set", testkit::db::PG_ENV);
        return;
    };
    let dir = scratch("revoked_elsewhere_postgres");
    revocation_by_another_process_is_seen(&dir, &db.url).await;
}
