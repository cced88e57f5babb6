//! `partner-api serve`: applies pending migrations, optionally creates the
//! demo partner, then serves `/v1` (plus `/healthz`, `/readyz`, `/docs`)
//! with actix-web until SIGINT or SIGTERM, and runs the background job
//! worker (market comparisons) on a thread of its own.
//!
//! The process owns its stores under a random id: it registers before it
//! serves, keeps a heartbeat on a thread of its own (`heartbeat`), and
//! deregisters when it stops, so the idempotency keys and job claims it
//! leaves behind free promptly (see `domain::store::process`).
//!
//! Each actix worker is its own single-threaded runtime. PostgreSQL
//! connections run a driver task on the runtime that opened them, so each
//! worker opens its own pool (the limits and idempotency records live in
//! the database, so they hold across workers and processes). SQLite keeps
//! one shared pool, whose in-process rate-limit counters must be shared by
//! every worker.

use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use domain::ids::ProcessId;
use domain::mode::Mode;
use domain::partner::PartnerKind;
use domain::partner_user::Role;
use domain::ports::Minter;
use store_diesel::{Database, Stores};

use crate::compose::{self, Services};
use crate::config::{Settings, describe};
use crate::system::{self, Ports};
use crate::{heartbeat, migrate};

/// Pooled connections per worker on PostgreSQL, and in total on SQLite.
const POOL_PER_WORKER: usize = 8;

/// How long a stopping process waits to deregister.
const DEREGISTER_PATIENCE: Duration = Duration::from_secs(5);

/// The demo partner portal admin's address.
const DEMO_ADMIN: &str = "admin@demo-broker.example";

/// The demo partner's name.
pub const DEMO_PARTNER: &str = "Demo Broker";

/// Runs `serve`.
///
/// # Errors
/// A bad configuration, an unreachable database, a failed migration or a
/// listen address that cannot be bound.
pub fn run(settings: &Settings, demo: bool, json: bool) -> anyhow::Result<()> {
    init_logs();
    let card = compose::rate_card(settings)?;
    let db = settings.database.clone();
    let ports = Ports::load(settings)?;
    let setup = migrate::runtime()?;
    let applied = setup.block_on(migrate::apply_async(&db))?;
    tracing::info!(database = %describe(&db), applied = applied.len(), "database ready");
    tracing::info!(rate_card = card.version(), "rate card loaded");
    let parts = compose::Shared::configured(card, settings)?;
    if demo {
        setup.block_on(create_demo(settings, &ports, &parts, json))?;
    }
    let owner = Minter::new(ports.entropy.as_ref()).process_id();
    setup.block_on(register(&db, &owner, &ports))?;
    // Connections opened on the setup runtime die with it.
    drop(setup);

    let config = settings.http.clone();
    let shared = match &db {
        Database::Sqlite { .. } => Some(
            Stores::open_owned(&db, POOL_PER_WORKER, &owner)
                .with_context(|| format!("cannot open {}", describe(&db)))?,
        ),
        Database::Postgres { .. } => None,
    };
    let owned = Owned {
        db,
        owner,
        shared,
        keys: store_diesel::key_cache::KeyCache::default(),
    };
    let heartbeat = spawn_heartbeat(&owned, &ports)?;
    spawn_job_worker(&owned, &ports, &parts)?;
    spawn_dispatcher(&owned, &ports, &parts)?;
    spawn_background("purge", &owned, crate::purge::task(&ports))?;
    let listen = settings.listen;
    let portal_base = parts.public_base_url.clone();
    let served = actix_web::rt::System::new().block_on(async move {
        let listener =
            crate::listener::bind(listen).with_context(|| format!("cannot listen on {listen}"))?;
        let addr = listener
            .local_addr()
            .with_context(|| format!("cannot listen on {listen}"))?;
        let server = crate::listener::server(listener, move || {
            // Opening a pool does not connect; a bad URL was refused when
            // the settings were validated.
            let stores = owned.stores(POOL_PER_WORKER).unwrap_or_else(|e| {
                tracing::error!(error = %e, "cannot open the PostgreSQL pool");
                std::process::exit(1)
            });
            compose::app(Services::new(&stores, &ports, &parts), config.clone())
        })
        .with_context(|| format!("cannot listen on {listen}"))?;
        if json {
            println!(
                "{}",
                serde_json::json!({"listening": format!("http://{addr}")})
            );
        } else {
            // The portal line comes first: a reader may stop at `Listening`.
            println!(
                "Employer portal: {portal_base}/portal/sign-in (a hosted enrollment's employer_portal.set_password_url opens it)"
            );
            println!(
                "Partner portal: {portal_base}/partner/sign-in (invite users with `partner-api partner user add`)"
            );
            println!("Listening on http://{addr} (API at /v1, reference at /docs)");
        }
        let _ = std::io::stdout().flush();
        server.await.context("the HTTP server failed")
    });
    heartbeat.stop(DEREGISTER_PATIENCE);
    served
}

/// Where each runtime of `serve` gets its stores, all owned by this
/// process: SQLite's one shared set (its write thread and rate-limit
/// counters are the process's), or on PostgreSQL a pool of the runtime's own.
#[derive(Clone)]
struct Owned {
    db: Database,
    owner: ProcessId,
    shared: Option<Stores>,
    /// The keys the process authenticates from memory, one cache for every
    /// worker's stores.
    keys: store_diesel::key_cache::KeyCache,
}

impl Owned {
    /// The shared stores, or a new pool of at most `max_connections`
    /// (sharing the process's key cache).
    fn stores(&self, max_connections: usize) -> anyhow::Result<Stores> {
        match &self.shared {
            Some(stores) => Ok(stores.clone()),
            None => Stores::open_owned(&self.db, max_connections, &self.owner)
                .map(|s| s.sharing_keys(&self.keys))
                .with_context(|| format!("cannot open {}", describe(&self.db))),
        }
    }
}

/// Registers the process before it serves, on a pool of its own (closed
/// with the setup runtime). On SQLite this frees at once whatever keys and
/// job claims a crashed predecessor left.
async fn register(db: &Database, owner: &ProcessId, ports: &Ports) -> anyhow::Result<()> {
    let stores = Stores::open_owned(db, 1, owner)
        .with_context(|| format!("cannot open {}", describe(db)))?;
    stores
        .processes
        .register_process(ports.clock.now_ms())
        .await
        .context("cannot register the process")?;
    tracing::info!(process = owner.as_str(), "process registered");
    Ok(())
}

/// Runs background work on a thread of its own with its own runtime, so
/// it never shares a runtime with HTTP workers (the simulation is
/// CPU-bound; deliveries wait on endpoints). SQLite reuses the process's
/// stores (their write thread is the file's one writer); PostgreSQL opens a pool on
/// the thread's runtime. `run` builds the work over the stores.
fn spawn_background<F, Fut>(name: &'static str, owned: &Owned, run: F) -> anyhow::Result<()>
where
    F: FnOnce(&Stores) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()>,
{
    let stores = owned.stores(2)?;
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(r) => r,
                Err(e) => {
                    tracing::error!(error = %e, thread = name, "cannot start a background runtime");
                    std::process::exit(1)
                }
            };
            // The stores stay alive for as long as the work runs.
            let work = run(&stores);
            runtime.block_on(work);
        })
        .with_context(|| format!("cannot start the {name} thread"))?;
    Ok(())
}

/// Starts the heartbeat; the returned stopper deregisters the process.
fn spawn_heartbeat(owned: &Owned, ports: &Ports) -> anyhow::Result<heartbeat::Stopper> {
    let (stopper, signals) = heartbeat::signals();
    let clock = Arc::clone(&ports.clock);
    spawn_background("heartbeat", owned, move |stores| {
        heartbeat::run(Arc::clone(&stores.processes), clock, signals)
    })?;
    Ok(stopper)
}

/// Starts the job worker (market comparisons, price-on-plan pricing).
fn spawn_job_worker(owned: &Owned, ports: &Ports, parts: &compose::Shared) -> anyhow::Result<()> {
    let (ports, parts) = (ports.clone(), parts.clone());
    spawn_background("jobs", owned, move |stores| {
        let (worker, handler) = Services::new(stores, &ports, &parts).job_worker();
        crate::jobs::run(worker, handler, Arc::clone(&parts.jobs_waker))
    })
}

/// Starts the webhook dispatcher.
fn spawn_dispatcher(owned: &Owned, ports: &Ports, parts: &compose::Shared) -> anyhow::Result<()> {
    let (ports, parts) = (ports.clone(), parts.clone());
    spawn_background("webhooks", owned, move |stores| {
        crate::dispatch::run(Services::new(stores, &ports, &parts).webhooks())
    })
}

/// Creates the demo broker and its test key when the database has no
/// partner yet, printing the key once; otherwise says where to find keys.
async fn create_demo(
    settings: &Settings,
    ports: &Ports,
    parts: &compose::Shared,
    json: bool,
) -> anyhow::Result<()> {
    let stores = system::open_stores(settings, 2)?;
    let partners = Services::new(&stores, ports, parts).partners();
    let existing = partners.partners().await?;
    if !existing.is_empty() {
        // The demo partner when it is there, else the first one listed.
        let shown = existing
            .iter()
            .find(|p| p.name == DEMO_PARTNER)
            .or_else(|| existing.first());
        let Some(partner) = shown else {
            return Ok(());
        };
        let id = partner.id.as_str();
        let create = format!("partner-api key create --partner {id} --mode test");
        if json {
            println!(
                "{}",
                serde_json::json!({
                    "demo": "exists",
                    "partner": {"id": id, "name": partner.name, "kind": partner.kind},
                    "create_key": create,
                })
            );
        } else {
            println!(
                "Demo: this database already has partner {id} ({}); no key was printed again. \
                 Get a test key with `{create}` (list keys with `partner-api key list --partner {id}`, \
                 show a test key again with `partner-api key show KEY_ID`).",
                partner.name
            );
        }
        return Ok(());
    }
    let partner = partners
        .create_partner(DEMO_PARTNER, PartnerKind::Broker, None)
        .await?;
    let minted = partners.create_key(&partner.id, Mode::Test, false).await?;
    let admin = Services::new(&stores, ports, parts)
        .partner_portal(domain::rate_limit::Policy::failed_auth(10))
        .add_user(&partner.id, DEMO_ADMIN, Role::Admin, None)
        .await?;
    if json {
        println!(
            "{}",
            serde_json::json!({
                "demo": "created",
                "partner": {"id": partner.id.as_str(), "name": DEMO_PARTNER, "kind": "broker"},
                "key_id": minted.record.id.as_str(),
                "key": minted.key.expose(),
                "partner_portal": {"email": DEMO_ADMIN, "set_password_url": admin.set_password_url},
            })
        );
    } else {
        println!("Demo partner: {} ({})", partner.id.as_str(), DEMO_PARTNER);
        println!("Demo test key (shown once): {}", minted.key.expose());
        println!(
            "Demo partner portal admin {DEMO_ADMIN}: set a password at {} (single use, 7 days)",
            admin.set_password_url
        );
        println!(
            "Try: curl -H \"Authorization: Bearer $KEY\" http://{}/v1/ping   (KEY = the key above)",
            settings.listen
        );
    }
    Ok(())
}

/// Structured logs on stderr, filtered by `PARTNER_API_LOG` (default
/// `info`); `PARTNER_API_LOG_FORMAT=json` gives one JSON object per line.
fn init_logs() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PARTNER_API_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false);
    let json = std::env::var("PARTNER_API_LOG_FORMAT").is_ok_and(|v| v == "json");
    let _ = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}
