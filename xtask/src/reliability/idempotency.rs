//! Part 3: 200 concurrent identical `POST /groups` with one
//! `Idempotency-Key` create exactly one group, and every client ends with
//! the same answer (a client told 409 `conflict` while the first executes
//! retries after `Retry-After`, as the contract asks).

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde_json::Value;

use crate::reliability::Figure;
use crate::reliability::fixtures::{encode, group_body, list_all};
use crate::reliability::harness::{Backend, Ctx, Server};
use crate::reliability::http::{Client, Response};

/// Concurrent clients.
const CLIENTS: usize = 200;

/// How long a client keeps retrying 409 in-flight answers.
const RETRY_FOR: Duration = Duration::from_secs(30);

/// Runs the part on `backend`.
pub(crate) fn run(ctx: &Ctx, backend: Backend) -> anyhow::Result<Figure> {
    let db = ctx.fresh_db(backend, "idempotency")?;
    let key = ctx.partner(&db, "broker", "Reliability Idempotency Broker")?;
    let server = Server::start(ctx, &db, "idempotency", &[])?;
    let client = server.client(&key);
    let body = group_body(ctx);
    let domain = body
        .get("domain")
        .and_then(Value::as_str)
        .context("no domain")?
        .to_owned();
    let idem = format!("reliability-{}", ctx.hex(8));

    let barrier = Arc::new(Barrier::new(CLIENTS));
    let handles: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (client, body, idem, barrier) = (
                client.clone(),
                body.clone(),
                idem.clone(),
                Arc::clone(&barrier),
            );
            thread::spawn(move || {
                barrier.wait();
                post_until_settled(&client, &body, &idem)
            })
        })
        .collect();
    let outcomes: Vec<Outcome> = handles
        .into_iter()
        .map(|h| {
            h.join()
                .unwrap_or(Outcome::Failed("client thread panicked".to_owned()))
        })
        .collect();

    let mut figure = Figure::default();
    let reference = outcomes.iter().find_map(|o| match o {
        Outcome::Settled { response, .. } => Some(response.clone()),
        Outcome::Failed(_) => None,
    });
    let (mut in_flight, mut replays) = (0usize, 0usize);
    for outcome in &outcomes {
        match (outcome, &reference) {
            (
                Outcome::Settled {
                    response,
                    conflicts,
                },
                Some(first),
            ) => {
                in_flight = in_flight.saturating_add(*conflicts);
                if response.header("idempotent-replay") == Some("true") {
                    replays = replays.saturating_add(1);
                }
                let same = response.status == first.status && response.json() == first.json();
                figure.check(same && response.status == 201, || {
                    format!(
                        "a client ended with {} instead of the first answer {}",
                        response.brief(),
                        first.brief()
                    )
                });
            }
            (Outcome::Settled { .. }, None) => {}
            (Outcome::Failed(why), _) => figure.check(false, || why.clone()),
        }
    }
    let groups = list_all(
        &client,
        &format!("/v1/groups?domain={}", encode(&domain)),
        "groups",
        "id",
    )?;
    figure.check(groups.len() == 1, || {
        format!(
            "{} groups exist for one idempotency key (want exactly 1)",
            groups.len()
        )
    });
    figure.note(format!(
        "{CLIENTS} clients: {replays} replays, {in_flight} in-flight 409s retried, {} group(s)",
        groups.len()
    ));
    Ok(figure)
}

/// What one client ended with.
enum Outcome {
    /// A final answer, after `conflicts` in-flight 409s.
    Settled {
        response: Response,
        conflicts: usize,
    },
    /// No final answer.
    Failed(String),
}

/// POSTs until the answer is not a 409 in-flight `conflict`.
fn post_until_settled(client: &Client, body: &Value, idem: &str) -> Outcome {
    let started = Instant::now();
    let mut conflicts = 0usize;
    loop {
        let response = match client.json("POST", "/v1/groups", body, &[("Idempotency-Key", idem)]) {
            Ok(r) => r,
            Err(e) => return Outcome::Failed(format!("request failed: {e}")),
        };
        let in_flight =
            response.status == 409 && response.text("/error").as_deref() == Some("conflict");
        if !in_flight {
            return Outcome::Settled {
                response,
                conflicts,
            };
        }
        conflicts = conflicts.saturating_add(1);
        if started.elapsed() > RETRY_FOR {
            return Outcome::Failed(format!(
                "still 409 in flight after {} s",
                RETRY_FOR.as_secs()
            ));
        }
        let wait = response
            .header("retry-after")
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(1);
        thread::sleep(Duration::from_millis(wait.saturating_mul(1000).min(2000)));
    }
}
