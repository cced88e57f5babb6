//! Part 2: SIGKILL at random moments during concurrent census writes,
//! idempotent group creations, elections and webhook registrations; after
//! each restart the invariants hold:
//!
//! - every census is one version whole (all old or all new members);
//! - every acknowledged write is there: each acknowledged group exists,
//!   the census and the elections are the last acknowledged version or one
//!   sent after it, and a webhook ping reaches the endpoint last
//!   registered (or one registered after it);
//! - no duplicate: one group per idempotency key, the retry of an
//!   unanswered key answers 201 with that group, and is answered (not 409
//!   in flight) within 10 s of the restart on PostgreSQL, at once on
//!   SQLite;
//! - after the last restart, every event of `GET /v1/events` is delivered
//!   to the local receiver.

mod load;
mod verify;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use anyhow::Context as _;
use serde_json::json;

use crate::reliability::Figure;
use crate::reliability::crash::load::{
    CensusTrack, ElectionTrack, Tracks, census_ids, lock, round,
};
use crate::reliability::fixtures::{enroll, group, member, quoted_group};
use crate::reliability::harness::{Backend, Ctx, Kind, Server};
use crate::reliability::http::{Client, Receiver};

/// Census writers (one group each).
const CENSUS_WRITERS: usize = 2;

/// Members of the elections group.
const ELECTION_MEMBERS: usize = 4;

/// Runs the part on `backend` with `kills` SIGKILLs.
pub(crate) fn run(ctx: &Ctx, backend: Backend, kills: u64) -> anyhow::Result<Figure> {
    let db = ctx.fresh_db(backend, "crash")?;
    let key = ctx.partner(&db, "broker", "Reliability Crash Broker")?;
    let env = vec![(
        "PARTNER_API_WEBHOOKS__ALLOW_INSECURE_ENDPOINTS".to_owned(),
        "true".to_owned(),
    )];
    let mut server = Server::start(ctx, &db, "crash", &env)?;
    let client = server.client(&key);
    let receiver = Receiver::start().context("cannot start the webhook receiver")?;
    let hooks = receiver.url();

    let registered = client.json(
        "PUT",
        "/v1/webhook",
        &json!({"url": format!("{hooks}/0")}),
        &[],
    )?;
    let secret = registered
        .text("/secret")
        .context("PUT /v1/webhook answered no secret")?;
    ctx.watch(Kind::WebhookSecret, &secret);

    let mut tracks = Tracks::default();
    tracks.webhook.possible.insert("/hooks/0".to_owned());
    for w in 0..CENSUS_WRITERS {
        let g = group(ctx, &client)?;
        let first: Vec<_> = census_ids(w, 0).into_iter().collect();
        put_census(ctx, &client, &g, &first)?;
        tracks.census.push(CensusTrack {
            group: g,
            possible: BTreeSet::from([0]),
            next: 1,
        });
    }
    let (g, quote) = quoted_group(ctx, &client, "EL", ELECTION_MEMBERS)?;
    enroll(ctx, &client, &g, &quote)?;
    tracks.elections = Some(ElectionTrack {
        group: g,
        members: (0..ELECTION_MEMBERS).map(|i| format!("EL-{i}")).collect(),
        possible: BTreeSet::from(["pending".to_owned()]),
        sent: 0,
    });
    let shared = Arc::new(Mutex::new(tracks));

    let mut figure = Figure::default();
    let mut slowest_retry = Duration::ZERO;
    for kill in 1..=kills {
        let moment = Duration::from_millis(ctx.range(200, 1_500));
        round(ctx, &client, &hooks, &shared, || {
            thread::sleep(moment);
            server.kill();
        });
        server.restart()?;
        let report = verify::after_restart(&client, backend, &shared, &receiver)?;
        slowest_retry = slowest_retry.max(report.slowest_retry);
        let last = kill == kills;
        let mut problems = report.problems;
        if last {
            problems.extend(verify::events_delivered(&client, &receiver)?);
        }
        let moment_ms = moment.as_millis();
        figure.check(problems.is_empty(), || {
            format!("kill {kill} (at {moment_ms} ms): {}", problems.join("; "))
        });
    }
    let t = lock(&shared);
    figure.note(format!(
        "{} kills; {} group creations ({} unanswered and retried), {} census writes, {} elections, {} webhook registrations, {} deliveries received",
        kills,
        t.creations.len(),
        t.creations.iter().filter(|c| c.retried).count(),
        t.census.iter().map(|c| u64::from(c.next.saturating_sub(1))).sum::<u64>(),
        t.elections.as_ref().map_or(0, |e| e.sent),
        t.webhook.sent,
        receiver.count()
    ));
    figure.note(format!(
        "slowest answer to a retried idempotency key after a restart: {:.2} s ({})",
        slowest_retry.as_secs_f64(),
        match backend {
            Backend::Postgres => "bound 10 s",
            Backend::Sqlite => "bound: at once, no 409",
        }
    ));
    Ok(figure)
}

/// Writes a census whose members have the given external ids.
fn put_census(ctx: &Ctx, client: &Client, group: &str, ids: &[String]) -> anyhow::Result<()> {
    let members: Vec<_> = ids.iter().map(|id| member(ctx, id)).collect();
    let r = client.json(
        "PUT",
        &format!("/v1/groups/{group}/census"),
        &json!({ "members": members }),
        &[],
    )?;
    anyhow::ensure!(r.status == 200, "PUT census answered {}", r.brief());
    Ok(())
}
