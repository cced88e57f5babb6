//! Part 4: per-key limits hold across two server processes on one
//! PostgreSQL database. Within one fixed window, a burst spread over both
//! processes gets exactly `limit` successes and 429 `rate_limited` (with
//! `Retry-After`) for the rest — for the all-requests limit and for the
//! census-writes limit. SQLite keeps its counters in the process, so the
//! part is PostgreSQL only.

use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;

use crate::reliability::Figure;
use crate::reliability::fixtures::{group, member};
use crate::reliability::harness::{Backend, Ctx, Server};
use crate::reliability::http::{Client, Response};

/// `rate_limits.requests_per_minute` for this part.
const REQUESTS_PER_MINUTE: u32 = 60;

/// `rate_limits.census_writes_per_minute` for this part.
const CENSUS_PER_MINUTE: u32 = 15;

/// Concurrent clients per burst.
const CLIENTS: usize = 8;

/// Runs the part; `None` on SQLite.
pub(crate) fn run(ctx: &Ctx, backend: Backend) -> anyhow::Result<Option<Figure>> {
    if backend != Backend::Postgres {
        return Ok(None);
    }
    let db = ctx.fresh_db(backend, "rate_limits")?;
    let ping_key = ctx.partner(&db, "broker", "Reliability Limits Broker")?;
    let census_key = ctx.partner(&db, "hr_platform", "Reliability Limits Platform")?;
    let env = vec![
        (
            "PARTNER_API_RATE_LIMITS__REQUESTS_PER_MINUTE".to_owned(),
            REQUESTS_PER_MINUTE.to_string(),
        ),
        (
            "PARTNER_API_RATE_LIMITS__CENSUS_WRITES_PER_MINUTE".to_owned(),
            CENSUS_PER_MINUTE.to_string(),
        ),
    ];
    let a = Server::start(ctx, &db, "rate_limits_a", &env)?;
    let b = Server::start(ctx, &db, "rate_limits_b", &env)?;

    // The census key writes to a group of its own (one request of its
    // all-requests budget, which the census burst stays below).
    let group_id = group(ctx, &b.client(&census_key))?;
    let census = json!({"members": [member(ctx, "RL-1")]});

    let mut figure = Figure::default();
    let clients = [a.client(&ping_key), b.client(&ping_key)];
    wait_for_fresh_window();
    let answers = burst(
        &clients,
        REQUESTS_PER_MINUTE.saturating_mul(2).saturating_add(20),
        |c| c.get("/v1/ping"),
    );
    judge(
        &mut figure,
        "requests_per_minute",
        REQUESTS_PER_MINUTE,
        &answers,
    );

    let clients = [a.client(&census_key), b.client(&census_key)];
    let path = format!("/v1/groups/{group_id}/census");
    wait_for_fresh_window();
    let answers = burst(
        &clients,
        CENSUS_PER_MINUTE.saturating_mul(2).saturating_add(10),
        |c| c.json("PUT", &path, &census, &[]),
    );
    judge(
        &mut figure,
        "census_writes_per_minute",
        CENSUS_PER_MINUTE,
        &answers,
    );
    Ok(Some(figure))
}

/// Sends `total` requests spread over `clients` from several threads.
fn burst<F>(clients: &[Client; 2], total: u32, send: F) -> Vec<Result<Response, String>>
where
    F: Fn(&Client) -> std::io::Result<Response> + Sync,
{
    let per_thread = total.div_ceil(u32::try_from(CLIENTS).unwrap_or(1));
    let send = &send;
    thread::scope(|s| {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|t| {
                s.spawn(move || {
                    (0..per_thread)
                        .map(|i| {
                            let [first, second] = clients;
                            let client =
                                if (usize::try_from(i).unwrap_or(0).saturating_add(t)) % 2 == 0 {
                                    first
                                } else {
                                    second
                                };
                            send(client).map_err(|e| e.to_string())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

/// Counts successes and well-formed 429s against `limit`.
fn judge(figure: &mut Figure, name: &str, limit: u32, answers: &[Result<Response, String>]) {
    let ok = answers
        .iter()
        .filter(|r| r.as_ref().is_ok_and(|r| (200..300).contains(&r.status)))
        .count();
    let limited = answers
        .iter()
        .filter(|r| {
            r.as_ref().is_ok_and(|r| {
                r.status == 429
                    && r.is_envelope()
                    && r.text("/error").as_deref() == Some("rate_limited")
                    && r.header("retry-after")
                        .and_then(|v| v.parse::<u64>().ok())
                        .is_some_and(|s| s >= 1)
            })
        })
        .count();
    let other = answers.len().saturating_sub(ok).saturating_sub(limited);
    let want = usize::try_from(limit).unwrap_or(usize::MAX);
    figure.check(ok == want && other == 0, || {
        format!("{name}={limit} over 2 processes: {ok} successes, {limited} × 429, {other} other answers (want exactly {limit} successes, the rest 429)")
    });
    figure.note(format!(
        "{name}={limit}: {ok} × 2xx, {limited} × 429 of {} requests over 2 processes",
        answers.len()
    ));
}

/// Waits until the current minute window has at least 20 s left, so a
/// burst stays inside one window.
fn wait_for_fresh_window() {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let into = secs % 60;
    if into > 40 {
        thread::sleep(Duration::from_secs(61 - into));
    }
}
