//! The checks after each restart of the crash part.

use std::collections::{BTreeMap, BTreeSet};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::reliability::crash::load::{Creation, Shared, census_ids, lock};
use crate::reliability::fixtures::list_all;
use crate::reliability::harness::{Backend, wait_for};
use crate::reliability::http::{Client, Receiver};

/// How long a retried key may stay in flight on PostgreSQL.
const RETRY_BOUND: Duration = Duration::from_secs(10);

/// How long a retry keeps trying before giving up.
const RETRY_LIMIT: Duration = Duration::from_secs(15);

/// What one restart showed.
pub(crate) struct Report {
    /// Broken invariants, one line each.
    pub problems: Vec<String>,
    /// The slowest non-409 answer to a retried idempotency key.
    pub slowest_retry: Duration,
}

/// Checks every invariant once the server listens again.
pub(crate) fn after_restart(
    client: &Client,
    backend: Backend,
    shared: &Shared,
    receiver: &Receiver,
) -> anyhow::Result<Report> {
    let restarted = Instant::now();
    let mut problems = Vec::new();
    let mut slowest_retry = Duration::ZERO;

    // Unanswered creations first, all at once: how soon each retry is
    // answered after the restart is one of the figures.
    let unknown: Vec<(usize, Creation)> = lock(shared)
        .creations
        .iter()
        .enumerate()
        .filter(|(_, c)| c.unknown)
        .map(|(i, c)| (i, c.clone()))
        .collect();
    let retries: Vec<(usize, Retry)> = thread::scope(|s| {
        let handles: Vec<_> = unknown
            .iter()
            .map(|(i, c)| (*i, s.spawn(move || retry(client, c, restarted))))
            .collect();
        handles
            .into_iter()
            .map(|(i, h)| {
                (
                    i,
                    h.join().unwrap_or(Retry {
                        answer: Err("retry thread panicked".to_owned()),
                        conflicts: 0,
                        took: RETRY_LIMIT,
                    }),
                )
            })
            .collect()
    });
    let (mut stuck, mut early_409, mut late, mut wrong) = (0usize, 0usize, 0usize, Vec::new());
    for (i, r) in &retries {
        slowest_retry = slowest_retry.max(r.took);
        let mut t = lock(shared);
        let Some(c) = t.creations.get_mut(*i) else {
            continue;
        };
        // Settled either way: a key is retried after one restart only.
        c.unknown = false;
        c.retried = true;
        match &r.answer {
            Ok((201, id)) => c.acked = id.clone(),
            Ok((status, _)) => wrong.push(*status),
            Err(_) => {
                stuck = stuck.saturating_add(1);
                c.abandoned = true;
            }
        }
        drop(t);
        match backend {
            Backend::Sqlite if r.conflicts > 0 => early_409 = early_409.saturating_add(1),
            Backend::Postgres if r.took > RETRY_BOUND => late = late.saturating_add(1),
            _ => {}
        }
    }
    if stuck > 0 {
        problems.push(format!(
            "{stuck} of {} retried idempotency key(s) still 409 in flight {} s after the restart",
            retries.len(),
            RETRY_LIMIT.as_secs()
        ));
    }
    if early_409 > 0 {
        problems.push(format!(
            "{early_409} of {} retried idempotency key(s) answered 409 in flight after the restart (SQLite: at once)",
            retries.len()
        ));
    }
    if late > 0 {
        problems.push(format!(
            "{late} of {} retried idempotency key(s) answered later than {} s after the restart",
            retries.len(),
            RETRY_BOUND.as_secs()
        ));
    }
    if !wrong.is_empty() {
        problems.push(format!(
            "retried idempotency key(s) answered {wrong:?} instead of 201"
        ));
    }

    problems.extend(groups(client, shared)?);
    problems.extend(censuses(client, shared)?);
    problems.extend(elections(client, shared)?);
    problems.extend(webhook(client, shared, receiver)?);
    Ok(Report {
        problems,
        slowest_retry,
    })
}

/// How one retried key was answered.
struct Retry {
    /// Status and id, or why there was no final answer.
    answer: Result<(u16, Option<String>), String>,
    /// 409 in-flight answers before it.
    conflicts: u32,
    /// Time from the restart to the final answer.
    took: Duration,
}

/// Retries `c` until it is answered other than 409 in flight.
fn retry(client: &Client, c: &Creation, restarted: Instant) -> Retry {
    let mut conflicts = 0u32;
    loop {
        let r = client.json(
            "POST",
            "/v1/groups",
            &c.body,
            &[("Idempotency-Key", &c.key)],
        );
        let took = restarted.elapsed();
        match r {
            Ok(r) if r.status == 409 && r.text("/error").as_deref() == Some("conflict") => {
                conflicts = conflicts.saturating_add(1);
                if took > RETRY_LIMIT {
                    return Retry {
                        answer: Err("still in flight".to_owned()),
                        conflicts,
                        took,
                    };
                }
                thread::sleep(Duration::from_millis(200));
            }
            Ok(r) => {
                return Retry {
                    answer: Ok((r.status, r.text("/id"))),
                    conflicts,
                    took,
                };
            }
            Err(e) => {
                return Retry {
                    answer: Err(e.to_string()),
                    conflicts,
                    took,
                };
            }
        }
    }
}

/// Every acknowledged group exists, once per idempotency key.
fn groups(client: &Client, shared: &Shared) -> anyhow::Result<Vec<String>> {
    let listed = list_all(client, "/v1/groups", "groups", "")?;
    let ids: BTreeSet<&str> = listed
        .iter()
        .filter_map(|g| g.get("id").and_then(Value::as_str))
        .collect();
    let mut per_domain: BTreeMap<&str, usize> = BTreeMap::new();
    for g in &listed {
        if let Some(d) = g.get("domain").and_then(Value::as_str) {
            *per_domain.entry(d).or_insert(0) += 1;
        }
    }
    let mut t = lock(shared);
    let (mut lost, mut duplicated, mut phantom, mut retried_dups) =
        (0usize, 0usize, 0usize, 0usize);
    // Each creation is reported once, at the restart that broke it.
    for c in t.creations.iter_mut().filter(|c| !c.reported) {
        let n = per_domain.get(c.domain().as_str()).copied().unwrap_or(0);
        let broken = match &c.acked {
            Some(id) if !ids.contains(id.as_str()) => {
                lost = lost.saturating_add(1);
                true
            }
            Some(_) if n != 1 => {
                duplicated = duplicated.saturating_add(1);
                retried_dups = retried_dups.saturating_add(usize::from(c.retried));
                true
            }
            None if c.abandoned && n > 1 => {
                duplicated = duplicated.saturating_add(1);
                true
            }
            None if !c.unknown && !c.abandoned && n > 0 => {
                phantom = phantom.saturating_add(1);
                true
            }
            _ => false,
        };
        c.reported = broken;
    }
    drop(t);
    let mut problems = Vec::new();
    if lost > 0 {
        problems.push(format!("{lost} acknowledged group(s) missing"));
    }
    if duplicated > 0 {
        problems.push(format!(
            "{duplicated} idempotency key(s) with more than one group ({retried_dups} of them unanswered before the kill and retried after it)"
        ));
    }
    if phantom > 0 {
        problems.push(format!(
            "{phantom} creation(s) answered with an error left a group"
        ));
    }
    Ok(problems)
}

/// Every census is one whole version, the last acknowledged or later.
fn censuses(client: &Client, shared: &Shared) -> anyhow::Result<Vec<String>> {
    let tracks = lock(shared).census.clone();
    let mut problems = Vec::new();
    for (w, track) in tracks.iter().enumerate() {
        let members = list_all(
            client,
            &format!("/v1/groups/{}/census", track.group),
            "members",
            "external_id",
        )?;
        let found: BTreeSet<String> = members
            .iter()
            .filter_map(Value::as_str)
            .map(ToOwned::to_owned)
            .collect();
        let version = track
            .possible
            .iter()
            .copied()
            .find(|v| census_ids(w, *v) == found);
        match version {
            Some(v) => {
                if let Some(t) = lock(shared).census.get_mut(w) {
                    t.possible = BTreeSet::from([v]);
                }
            }
            None => problems.push(format!(
                "census {w}: {} member(s) that are no whole version among {:?}",
                found.len(),
                track.possible
            )),
        }
    }
    Ok(problems)
}

/// The roster shows one election state for every member, the last
/// acknowledged or later.
fn elections(client: &Client, shared: &Shared) -> anyhow::Result<Vec<String>> {
    let Some(track) = lock(shared).elections.clone() else {
        return Ok(Vec::new());
    };
    let roster = list_all(
        client,
        &format!("/v1/groups/{}/members", track.group),
        "members",
        "enrollment_status",
    )?;
    let states: BTreeSet<String> = roster
        .iter()
        .filter_map(Value::as_str)
        .map(ToOwned::to_owned)
        .collect();
    let mut problems = Vec::new();
    match states.iter().next() {
        Some(state) if states.len() == 1 && track.possible.contains(state) => {
            if let Some(t) = lock(shared).elections.as_mut() {
                t.possible = BTreeSet::from([state.clone()]);
            }
        }
        _ => problems.push(format!(
            "elections: roster states {states:?} ({} members), expected one of {:?}",
            roster.len(),
            track.possible
        )),
    }
    Ok(problems)
}

/// A test ping reaches the endpoint last registered (or a later one).
fn webhook(client: &Client, shared: &Shared, receiver: &Receiver) -> anyhow::Result<Vec<String>> {
    let possible = lock(shared).webhook.possible.clone();
    let r = client.json("POST", "/v1/webhook/test", &json!({}), &[])?;
    let Some(id) = r.text("/id").filter(|_| r.status == 200) else {
        return Ok(vec![format!(
            "POST /v1/webhook/test answered {}",
            r.brief()
        )]);
    };
    let paths = receiver.paths_of(&id);
    match paths.first() {
        Some(path) if possible.contains(path) => {
            lock(shared).webhook.possible = BTreeSet::from([path.clone()]);
            Ok(Vec::new())
        }
        Some(path) => Ok(vec![format!(
            "the test ping went to {path}, expected one of {possible:?}"
        )]),
        None => Ok(vec!["the test ping did not arrive".to_owned()]),
    }
}

/// Every event is eventually delivered, and the receiver saw each.
pub(crate) fn events_delivered(
    client: &Client,
    receiver: &Receiver,
) -> anyhow::Result<Vec<String>> {
    let mut last = Vec::new();
    let settled = wait_for(Duration::from_secs(90), || {
        let events = match list_all(client, "/v1/events", "events", "") {
            Ok(e) => e,
            Err(e) => {
                last = vec![format!("GET /v1/events failed: {e:#}")];
                return None;
            }
        };
        let received = receiver.ids();
        let mut by_state: BTreeMap<String, usize> = BTreeMap::new();
        let mut unseen = 0usize;
        for e in &events {
            let state = e
                .pointer("/delivery/state")
                .and_then(Value::as_str)
                .unwrap_or("?");
            *by_state.entry(state.to_owned()).or_insert(0) += 1;
            let id = e.get("id").and_then(Value::as_str).unwrap_or_default();
            if !received.contains_key(id) {
                unseen = unseen.saturating_add(1);
            }
        }
        let undelivered = events
            .len()
            .saturating_sub(by_state.get("delivered").copied().unwrap_or(0));
        if undelivered == 0 && unseen == 0 {
            return Some(events.len());
        }
        last = vec![format!(
            "{} events, states {by_state:?}, {unseen} never received by the endpoint",
            events.len()
        )];
        thread::sleep(Duration::from_millis(500));
        None
    });
    Ok(if settled.is_some() { Vec::new() } else { last })
}
