//! The HTTP suite: every cross-cutting rule and endpoint exercised through
//! the real actix-web application (`http_api::app`) over real storage —
//! a fresh SQLite file always, a fresh PostgreSQL database when
//! `PARTNER_API_TEST_POSTGRES_URL` is set.
//!
//! Every [`TestApp`] runs on a [`ManualClock`] that starts at a whole minute
//! and moves only when a test moves it, so fixed rate-limit windows,
//! timestamps and page order are deterministic (no test depends on how
//! fast the machine is).

mod account;
mod auth;
mod benchmark_gaps;
mod budget;
mod casing;
mod census;
mod conformance;
mod elections;
mod embed;
mod embed_iframe;
mod embedded;
mod enrollments;
mod envelope;
mod events;
mod filters;
mod groups;
mod hostile;
mod idempotency;
mod isolation;
mod journey;
mod limits;
mod logs;
mod members;
mod money_limits;
mod openapi;
mod pages;
mod portal;
mod price_on_plan;
mod price_on_plan_forms;
mod quotes;
mod races;
mod smoke;
mod ssrf;
mod unavailable;
mod webhook_events;
mod webhook_ops;
mod webhooks;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::Method;
use actix_web::http::StatusCode;
use actix_web::http::header::HeaderMap;
use actix_web::test::{self, TestRequest};
use domain::api_key::ApiKey;
use domain::ids::KeyId;
use domain::mode::Mode;
use domain::partner::{Partner, PartnerKind};
use domain::ports::Clock;
use domain::scope::Scope;
use http_api::{AppState, HttpConfig, Limits};
use serde_json::Value;
use server::compose::Services;
use server::system::{OsEntropy, Ports, SystemClock};
use store_diesel::Stores;
use store_diesel::sealer::AesGcmSealer;
use testkit::db::TestDb;

/// A fixed sealing key for tests.
const SEALING_KEY: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

/// Where every [`ManualClock`] starts: 2026-11-21T13:14:00Z, the first
/// second of a minute (so a fresh per-minute window has 60 s to run).
pub const T0: i64 = 1_795_266_840;

/// The peer address [`send`] uses.
pub const PEER: &str = "198.51.100.1";

/// A clock that moves only when told to.
#[derive(Debug)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    /// A clock at [`T0`].
    pub fn new() -> Self {
        Self(AtomicI64::new(T0 * 1000))
    }

    /// Moves the clock `secs` forward.
    pub fn advance(&self, secs: i64) {
        self.0.fetch_add(secs * 1000, Ordering::SeqCst);
    }

    /// Moves the clock `ms` milliseconds forward.
    pub fn advance_ms(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }

    /// Now, in whole seconds.
    pub fn secs(&self) -> i64 {
        self.0.load(Ordering::SeqCst).div_euclid(1000)
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// An application over one test database.
pub struct TestApp {
    /// The database (kept alive for the test).
    pub db: TestDb,
    /// The application state.
    pub state: AppState,
    /// The clock of the application.
    pub clock: Arc<ManualClock>,
    /// The ports the state was built with.
    pub ports: Ports,
    /// The configuration the state was built with.
    pub config: HttpConfig,
    /// The rate card, plan catalogue and job waker.
    pub shared: server::compose::Shared,
    /// What the app's mailer was given to send.
    pub mail: Arc<mail::RecordingMailer>,
}

/// The test ports: the real clock and entropy, a fixed sealing key.
pub fn ports() -> Ports {
    ports_with(Arc::new(SystemClock))
}

/// The test ports over `clock`.
pub fn ports_with(clock: Arc<dyn Clock>) -> Ports {
    Ports {
        clock,
        entropy: Arc::new(OsEntropy::new()),
        sealer: Arc::new(AesGcmSealer::from_hex(SEALING_KEY).unwrap()),
    }
}

impl TestApp {
    /// The application with the default limits.
    pub fn new(db: TestDb) -> Self {
        Self::with_limits(db, Limits::default())
    }

    /// The application with `limits`.
    pub fn with_limits(db: TestDb, limits: Limits) -> Self {
        Self::with_config(
            db,
            HttpConfig {
                limits,
                ..HttpConfig::default()
            },
        )
    }

    /// The application with `config`.
    pub fn with_config(db: TestDb, config: HttpConfig) -> Self {
        Self::with_parts(db, config, |_| {})
    }

    /// The application whose price-on-plan waits `budget` for pricing
    /// (zero: every new request answers 202 and the job worker prices it).
    pub fn with_wait_budget(db: TestDb, budget: std::time::Duration) -> Self {
        Self::with_parts(db, HttpConfig::default(), |p| p.wait_budget = budget)
    }

    /// The application with `config` and the shared parts `adjust` sets.
    pub fn with_parts(
        db: TestDb,
        config: HttpConfig,
        adjust: impl FnOnce(&mut server::compose::Shared),
    ) -> Self {
        let clock = Arc::new(ManualClock::new());
        let shared: Arc<dyn Clock> = clock.clone();
        let ports = ports_with(shared);
        let mut parts = server::compose::Shared::builtin().unwrap();
        adjust(&mut parts);
        let mail = Arc::new(mail::RecordingMailer::new());
        parts.mailer = mail.clone();
        let state = Services::new(&db.stores, &ports, &parts).app_state(config.clone());
        Self {
            db,
            state,
            clock,
            ports,
            config,
            shared: parts,
            mail,
        }
    }

    /// The application whose webhooks allow `http://` and loopback
    /// endpoints (a receiver on 127.0.0.1) and whose retry delays are
    /// multiplied by `retry_time_scale`.
    pub fn with_webhooks(db: TestDb, retry_time_scale: f64) -> Self {
        Self::with_webhook_settings(
            db,
            domain::services::webhooks::WebhookSettings {
                allow_insecure_endpoints: true,
                retry_time_scale,
                ..Default::default()
            },
        )
    }

    /// The application with the `[webhooks]` settings `settings`.
    pub fn with_webhook_settings(
        db: TestDb,
        settings: domain::services::webhooks::WebhookSettings,
    ) -> Self {
        Self::with_parts(db, HttpConfig::default(), |p| {
            let parts = std::mem::replace(p, server::compose::Shared::builtin().unwrap());
            *p = parts.with_webhooks(settings).unwrap();
        })
    }

    /// The services of this application, as the composition root builds
    /// them for `serve`.
    pub fn services(&self) -> Services {
        Services::new(&self.db.stores, &self.ports, &self.shared)
    }

    /// The webhook service of this application (its dispatcher).
    pub fn webhooks(&self) -> domain::services::webhooks::Webhooks {
        self.services().webhooks()
    }

    /// Makes every due webhook attempt (the dispatcher, stepped until
    /// nothing is due at the app's clock); returns how many were made.
    pub async fn deliver(&self) -> usize {
        server::dispatch::drain(&self.webhooks()).await.unwrap()
    }

    /// The state of a second application (another server process) over
    /// `stores`, with the same clock and configuration.
    pub fn state_over(&self, stores: &Stores) -> AppState {
        Services::new(stores, &self.ports, &self.shared).app_state(self.config.clone())
    }

    /// Runs every due background job (the market comparisons census
    /// writes enqueued) to completion; returns how many ran.
    pub async fn run_jobs(&self) -> u32 {
        let (worker, handler) = self.services().job_worker();
        server::jobs::drain(&worker, &handler).await.unwrap()
    }

    /// The initialised service.
    pub async fn service(
        &self,
    ) -> impl Service<
        actix_http::Request,
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
    > {
        test::init_service(http_api::app(self.state.clone())).await
    }

    /// The initialised service of the whole application: the API and the
    /// employer portal.
    pub async fn full_service(
        &self,
    ) -> impl Service<
        actix_http::Request,
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
    > {
        test::init_service(server::compose::app(self.services(), self.config.clone())).await
    }

    /// A new partner of `kind` with live mode `live_enabled`.
    pub async fn partner(&self, name: &str, kind: PartnerKind, live_enabled: bool) -> Partner {
        let p = self
            .state
            .partners
            .create_partner(name, kind, None)
            .await
            .unwrap();
        if live_enabled {
            self.state.partners.set_live(&p.id, true).await.unwrap();
        }
        p
    }

    /// A new key of `partner` in `mode`, as the bearer token.
    pub async fn key(&self, partner: &Partner, mode: Mode) -> String {
        self.minted(partner, mode).await.1
    }

    /// A new key of `partner` in `mode`: its id and the bearer token.
    pub async fn minted(&self, partner: &Partner, mode: Mode) -> (KeyId, String) {
        let m = self
            .state
            .partners
            .create_key(&partner.id, mode, true)
            .await
            .unwrap();
        (m.record.id, m.key.expose().to_owned())
    }

    /// A broker partner with a test key.
    pub async fn broker(&self) -> (Partner, String) {
        let p = self
            .partner("Acme Brokers", PartnerKind::Broker, false)
            .await;
        let k = self.key(&p, Mode::Test).await;
        (p, k)
    }

    /// An HR platform partner with a test key.
    pub async fn hr_platform(&self) -> (Partner, String) {
        let p = self
            .partner("Payroll Co", PartnerKind::HrPlatform, false)
            .await;
        let k = self.key(&p, Mode::Test).await;
        (p, k)
    }
}

/// The scope of `partner` in `mode`.
pub fn scope(partner: &Partner, mode: Mode) -> Scope {
    Scope::new(partner.id.clone(), mode)
}

/// A well-formed test key that no partner has.
pub fn unknown_key() -> String {
    ApiKey::from_bytes(Mode::Test, [7; 16]).expose().to_owned()
}

/// An answer, read whole.
#[derive(Debug)]
pub struct Answer {
    /// Status.
    pub status: StatusCode,
    /// Headers.
    pub headers: HeaderMap,
    /// Body as JSON (`Value::Null` when it is not JSON).
    pub body: Value,
    /// Raw body.
    pub raw: Vec<u8>,
}

impl Answer {
    /// A header as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The `details[].field` values of an error.
    pub fn fields(&self) -> Vec<String> {
        self.body["details"]
            .as_array()
            .map(|d| {
                d.iter()
                    .map(|e| e["field"].as_str().unwrap_or_default().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Sends `req` from [`PEER`] and reads the whole answer.
pub async fn send<S, B>(svc: &S, req: TestRequest) -> Answer
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    send_from(svc, req, PEER).await
}

/// Sends `req` from the peer address `ip` and reads the whole answer.
pub async fn send_from<S, B>(svc: &S, req: TestRequest, ip: &str) -> Answer
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let peer = format!("{ip}:40000").parse().unwrap();
    let res = test::call_service(svc, req.peer_addr(peer).to_request()).await;
    let status = res.status();
    let headers = res.headers().clone();
    let raw = test::read_body(res).await.to_vec();
    let body = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    Answer {
        status,
        headers,
        body,
        raw,
    }
}

/// A request with `Authorization: Bearer key`.
pub fn authed(req: TestRequest, key: &str) -> TestRequest {
    req.insert_header(("authorization", format!("Bearer {key}")))
}

/// `GET path` with `key`.
pub fn get(path: &str, key: &str) -> TestRequest {
    authed(TestRequest::get().uri(path), key)
}

/// `method path` with `key` and a JSON body.
pub fn json(method: actix_web::http::Method, path: &str, key: &str, body: &Value) -> TestRequest {
    authed(
        TestRequest::default()
            .method(method)
            .uri(path)
            .insert_header(("content-type", "application/json"))
            .set_payload(body.to_string()),
        key,
    )
}

/// `POST path` with `key` and a JSON body.
pub fn post(path: &str, key: &str, body: &Value) -> TestRequest {
    json(Method::POST, path, key, body)
}

/// `PUT path` with `key` and a JSON body.
pub fn put(path: &str, key: &str, body: &Value) -> TestRequest {
    json(Method::PUT, path, key, body)
}

/// `PATCH path` with `key` and a JSON body.
pub fn patch(path: &str, key: &str, body: &Value) -> TestRequest {
    json(Method::PATCH, path, key, body)
}

/// A complete, valid group body (snake_case) for `domain`.
pub fn group_body(domain: &str) -> Value {
    serde_json::json!({
        "company_name": "Acme Manufacturing",
        "domain": domain,
        "external_id": "crm-4411",
        "address": {"line1": "1 Main St", "city": "Chicago", "state": "IL", "zip": "60601"},
        "contact": {"name": "Dana Lee", "email": "dana@acme-mfg.com", "title": "HR Director"},
        "current_coverage": {"plan_type": "fully_insured", "carrier": "Blue Plan",
                             "pepm_cents": 78000, "renewal_date": "2027-01-01"}
    })
}

/// Creates a group with `body` and returns it (asserting 201).
pub async fn create_group<S, B>(svc: &S, key: &str, body: &Value) -> Value
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let a = send(svc, post("/v1/groups", key, body)).await;
    assert_eq!(a.status, 201, "{}", a.body);
    a.body
}

/// Asserts the error envelope: `status`, `error` code, a string `message`
/// and a well-formed `Request-Id`.
pub fn assert_error(a: &Answer, status: u16, code: &str) {
    assert_eq!(a.status.as_u16(), status, "{}", a.body);
    assert_eq!(a.body["error"], code, "{}", a.body);
    assert!(a.body["message"].is_string(), "{}", a.body);
    assert!(is_request_id(a.header("request-id").unwrap_or_default()));
}

/// Whether `id` matches `^req_[0-9a-f]{12}$`.
pub fn is_request_id(id: &str) -> bool {
    id.strip_prefix("req_").is_some_and(|h| {
        h.len() == 12
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Runs `$name(TestApp-less TestDb)` on both backends.
#[macro_export]
macro_rules! http_on_both {
    ($name:ident) => {
        mod $name {
            #[actix_web::test]
            async fn sqlite() {
                super::$name(testkit::db::sqlite().await).await;
            }

            #[actix_web::test]
            async fn postgres() {
                match testkit::db::postgres().await {
                    Some(db) => super::$name(db).await,
                    None => eprintln!(
                        "SKIPPED: {} is not set; PostgreSQL not tested",
                        testkit::db::PG_ENV
                    ),
                }
            }
        }
    };
}

/// The `(field, index)` of each row error of a census or elections answer.
pub fn row_errors(a: &crate::http::Answer) -> Vec<(String, u64)> {
    a.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["field"].as_str().unwrap().to_owned(),
                e["index"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// `PUT` of a CSV body.
pub fn put_csv(path: &str, key: &str, text: &str) -> actix_web::test::TestRequest {
    crate::http::authed(
        actix_web::test::TestRequest::put()
            .uri(path)
            .insert_header(("content-type", "text/csv"))
            .set_payload(text.to_owned()),
        key,
    )
}
