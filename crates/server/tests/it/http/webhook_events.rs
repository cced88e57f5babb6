//! The test `ping` and every event type over real HTTP (specification,
//! Events; contract sections 3 and 6): each fires at the moment the
//! specification names,
//! carries its documented data in the partner's field style (snake_case
//! for brokers, camelCase for HR platforms), verifies, and reads back
//! through `GET /v1/events/{id}` as delivered; no delivery without an
//! endpoint; test and live endpoints kept apart; `GET /v1/events` with
//! each event's `delivery`.

mod delivery;
mod every_event;

use actix_web::body::MessageBody;
use serde_json::{Value, json};

use crate::http::webhooks::{Receiver, Svc, assert_verifies, at, event, keys};
use crate::http::{T0, TestApp};

/// The field style of a partner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Style {
    /// Brokers.
    Snake,
    /// HR platforms.
    Camel,
}

/// A webhook receiver registered for a partner's test mode.
pub(super) struct Hooked<'a> {
    app: &'a TestApp,
    rx: Receiver,
    secret: String,
    style: Style,
    /// Every body delivered so far.
    bodies: Vec<Value>,
}

impl Hooked<'_> {
    /// Delivers what is due: exactly one new delivery, which must verify
    /// and be the envelope of a `kind` event created now; its body.
    async fn next(&mut self, kind: &str) -> Value {
        let before = self.rx.received().len();
        assert_eq!(self.app.deliver().await, 1, "{kind}: one attempt due");
        let got = self.rx.received();
        assert_eq!(got.len(), before + 1, "{kind}: one delivery");
        let body = self.check_last(kind);
        self.bodies.push(body.clone());
        body
    }

    /// Checks the last delivery: a signed POST of the envelope of a `kind`
    /// event created at the app's current time, in this partner's style.
    fn check_last(&self, kind: &str) -> Value {
        let r = self.rx.last();
        let now = self.app.clock.secs();
        assert_eq!(r.method, "POST");
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(
            r.header("webhook-timestamp"),
            Some(now.to_string().as_str())
        );
        assert_verifies(&self.secret, &r, now);
        let body = r.json();
        assert_eq!(r.header("webhook-id"), body["id"].as_str(), "{body}");
        let created = match self.style {
            Style::Snake => "created_at",
            Style::Camel => "createdAt",
        };
        let mut want = vec!["data", created, "id", "mode", "type"];
        want.sort_unstable();
        assert_eq!(keys(&body), want, "{body}");
        let id = body["id"].as_str().unwrap();
        assert!(id.starts_with("evt_") && id.len() == 16, "{body}");
        assert_eq!(body["type"], kind, "{body}");
        assert_eq!(body["mode"], "test", "{body}");
        assert_eq!(body[created], at(now - T0), "{body}");
        if self.style == Style::Camel {
            let mut snake = Vec::new();
            snake_keys(&body, &mut snake);
            assert!(snake.is_empty(), "snake_case keys {snake:?} in {body}");
        }
        body
    }

    /// Nothing is due.
    async fn nothing(&self, when: &str) {
        assert_eq!(self.app.deliver().await, 0, "an event fired {when}");
    }
}

/// Collects the object keys of `v` (at any depth) that contain `_`.
fn snake_keys(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, item) in map {
                if k.contains('_') {
                    out.push(k.clone());
                }
                snake_keys(item, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| snake_keys(i, out)),
        _ => {}
    }
}

/// Every delivered body reads back through `GET /v1/events/{id}` with the
/// same envelope, delivered at the first attempt.
pub(super) async fn read_back<B: MessageBody>(svc: &impl Svc<B>, key: &str, hooked: &Hooked<'_>) {
    let last_status = match hooked.style {
        Style::Snake => "last_status_code",
        Style::Camel => "lastStatusCode",
    };
    for body in &hooked.bodies {
        let mut e = event(svc, key, body["id"].as_str().unwrap()).await;
        let d = e.as_object_mut().unwrap().remove("delivery").unwrap();
        assert_eq!(&e, body);
        assert_eq!(
            (&d["state"], &d["attempts"], &d[last_status]),
            (&json!("delivered"), &json!(1), &json!(204)),
            "{d}"
        );
    }
}

pub(super) fn id_of(v: &Value) -> String {
    v["id"].as_str().unwrap().to_owned()
}

/// `n` broker census rows (employee only, Chicago).
pub(super) fn broker_employees(n: u64) -> Value {
    let members: Vec<Value> = (0..n)
        .map(|i| json!({"external_id": format!("E{i}"), "dob": "1985-06-15", "zip": "60601"}))
        .collect();
    json!({"members": members})
}

/// `n` HR platform census rows (employee only, Chicago).
pub(super) fn hr_employees(n: u64) -> Value {
    let members: Vec<Value> = (0..n)
        .map(
            |i| json!({"externalId": format!("E{i}"), "age": 40, "zip": "60601", "dependents": []}),
        )
        .collect();
    json!({"members": members})
}
