//! The concurrent writers of the crash part, and what each must find
//! after a restart.
//!
//! Every writer records what it sent: a write answered 2xx is
//! *acknowledged*; a write that got no answer (the process died under it)
//! is *unknown* and may or may not have happened; a write answered with an
//! error did not happen.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

use crate::reliability::fixtures::{group_body, member};
use crate::reliability::harness::{Ctx, Kind};
use crate::reliability::http::{Client, Response};

/// One census writer's group.
#[derive(Debug, Clone)]
pub(crate) struct CensusTrack {
    /// The group.
    pub group: String,
    /// Versions the stored census may be (the last acknowledged one, and
    /// any unknown one sent after it).
    pub possible: BTreeSet<u32>,
    /// The next version to send.
    pub next: u32,
}

/// Members of census version `v` of writer `w`: `C<w>-v<v>-<i>`.
pub(crate) fn census_ids(w: usize, v: u32) -> BTreeSet<String> {
    let n = 2_u32.saturating_add(v % 4);
    (0..n).map(|i| format!("C{w}-v{v}-{i}")).collect()
}

/// One idempotent group creation.
#[derive(Debug, Clone)]
pub(crate) struct Creation {
    /// The `Idempotency-Key`.
    pub key: String,
    /// The body (its domain is unique to this key).
    pub body: Value,
    /// The id answered, when acknowledged.
    pub acked: Option<String>,
    /// Whether it got no answer (to be retried after the restart).
    pub unknown: bool,
    /// Whether it was retried after a restart.
    pub retried: bool,
    /// Whether a broken invariant of it was already reported.
    pub reported: bool,
    /// Whether its retry never got past 409 in flight (its group may or
    /// may not exist).
    pub abandoned: bool,
}

impl Creation {
    /// The group's domain.
    pub(crate) fn domain(&self) -> String {
        self.body
            .get("domain")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    }
}

/// The enrolled group's elections: every member enrolled, or every member
/// waived, alternately.
#[derive(Debug, Clone)]
pub(crate) struct ElectionTrack {
    /// The group.
    pub group: String,
    /// Its members' external ids.
    pub members: Vec<String>,
    /// `enrolled` / `waived` states the roster may show (`pending` before
    /// any election was acknowledged).
    pub possible: BTreeSet<String>,
    /// Submissions sent.
    pub sent: u32,
}

/// Webhook endpoints registered: paths `/hooks/<n>`.
#[derive(Debug, Clone, Default)]
pub(crate) struct WebhookTrack {
    /// Paths the endpoint in force may have.
    pub possible: BTreeSet<String>,
    /// Registrations sent.
    pub sent: u32,
}

/// Everything the writers did.
#[derive(Debug, Default)]
pub(crate) struct Tracks {
    /// One per census writer.
    pub census: Vec<CensusTrack>,
    /// Every group creation.
    pub creations: Vec<Creation>,
    /// The elections group.
    pub elections: Option<ElectionTrack>,
    /// The webhook endpoint.
    pub webhook: WebhookTrack,
}

/// Shared state of a load round.
pub(crate) type Shared = Arc<Mutex<Tracks>>;

/// Locks the tracks.
pub(crate) fn lock(shared: &Shared) -> std::sync::MutexGuard<'_, Tracks> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether an answer acknowledges a write.
fn acked(r: &std::io::Result<Response>) -> Option<&Response> {
    r.as_ref().ok().filter(|r| (200..300).contains(&r.status))
}

/// Runs every writer against `client` while `during` runs (it kills the
/// server), then stops them.
pub(crate) fn round(
    ctx: &Ctx,
    client: &Client,
    receiver: &str,
    shared: &Shared,
    during: impl FnOnce(),
) {
    let stop = AtomicBool::new(false);
    let (census_writers, elections) = {
        let t = lock(shared);
        (t.census.len(), t.elections.is_some())
    };
    thread::scope(|s| {
        let stop = &stop;
        for w in 0..census_writers {
            s.spawn(move || census_writer(ctx, client, shared, stop, w));
        }
        for _ in 0..2 {
            s.spawn(move || creator(ctx, client, shared, stop));
        }
        if elections {
            s.spawn(move || elector(client, shared, stop));
        }
        s.spawn(move || registrar(ctx, client, shared, stop, receiver));
        during();
        stop.store(true, Ordering::SeqCst);
    });
}

/// A short pause between writes, so a round interleaves its writers.
fn pause() {
    thread::sleep(Duration::from_millis(5));
}

fn census_writer(ctx: &Ctx, client: &Client, shared: &Shared, stop: &AtomicBool, w: usize) {
    while !stop.load(Ordering::SeqCst) {
        let (group, v) = {
            let mut t = lock(shared);
            let Some(track) = t.census.get_mut(w) else {
                return;
            };
            let v = track.next;
            track.next = v.saturating_add(1);
            (track.group.clone(), v)
        };
        let members: Vec<Value> = census_ids(w, v).iter().map(|id| member(ctx, id)).collect();
        let answer = client.json(
            "PUT",
            &format!("/v1/groups/{group}/census"),
            &json!({ "members": members }),
            &[],
        );
        let mut t = lock(shared);
        let Some(track) = t.census.get_mut(w) else {
            return;
        };
        if acked(&answer).is_some() {
            track.possible = BTreeSet::from([v]);
        } else if answer.is_err() {
            track.possible.insert(v);
        }
        drop(t);
        pause();
    }
}

fn creator(ctx: &Ctx, client: &Client, shared: &Shared, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        let key = format!("crash-{}", ctx.hex(8));
        let body = group_body(ctx);
        let answer = client.json("POST", "/v1/groups", &body, &[("Idempotency-Key", &key)]);
        let creation = Creation {
            key,
            body,
            acked: acked(&answer).and_then(|r| r.text("/id")),
            unknown: answer.is_err(),
            retried: false,
            reported: false,
            abandoned: false,
        };
        lock(shared).creations.push(creation);
        pause();
    }
}

fn elector(client: &Client, shared: &Shared, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        let (group, members, state) = {
            let mut t = lock(shared);
            let Some(track) = t.elections.as_mut() else {
                return;
            };
            track.sent = track.sent.saturating_add(1);
            let state = if track.sent % 2 == 0 {
                "waived"
            } else {
                "enrolled"
            };
            (track.group.clone(), track.members.clone(), state)
        };
        let rows: Vec<Value> = members
            .iter()
            .map(|m| {
                if state == "enrolled" {
                    json!({"external_id": m, "election": "enrolled", "tier": "employeeOnly", "effective_date": "2027-01-01"})
                } else {
                    json!({"external_id": m, "election": "waived", "waiver_reason": "other_employer_group"})
                }
            })
            .collect();
        let answer = client.json(
            "POST",
            &format!("/v1/groups/{group}/elections"),
            &json!({ "elections": rows }),
            &[],
        );
        let mut t = lock(shared);
        let Some(track) = t.elections.as_mut() else {
            return;
        };
        if acked(&answer).is_some() {
            track.possible = BTreeSet::from([state.to_owned()]);
        } else if answer.is_err() {
            track.possible.insert(state.to_owned());
        }
        drop(t);
        pause();
    }
}

fn registrar(ctx: &Ctx, client: &Client, shared: &Shared, stop: &AtomicBool, receiver: &str) {
    while !stop.load(Ordering::SeqCst) {
        let n = {
            let mut t = lock(shared);
            t.webhook.sent = t.webhook.sent.saturating_add(1);
            t.webhook.sent
        };
        let path = format!("/hooks/{n}");
        let answer = client.json(
            "PUT",
            "/v1/webhook",
            &json!({"url": format!("{receiver}/{n}")}),
            &[],
        );
        if let Some(secret) = acked(&answer).and_then(|r| r.text("/secret")) {
            ctx.watch(Kind::WebhookSecret, &secret);
        }
        let mut t = lock(shared);
        if acked(&answer).is_some() {
            t.webhook.possible = BTreeSet::from([path]);
        } else if answer.is_err() {
            t.webhook.possible.insert(path);
        }
        drop(t);
        // Registrations are rarer than the other writes.
        thread::sleep(Duration::from_millis(50));
    }
}
