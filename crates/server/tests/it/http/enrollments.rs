//! `POST /v1/groups/{id}/enrollments`, `GET /v1/groups/{id}/enrollments`, `GET /v1/enrollments/{id}` and the go-live test helper.

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use domain::event::EventType;
use domain::mode::Mode;
use domain::page::PageRequest;
use domain::partner::Partner;
use serde_json::{Value, json};

use crate::http::{Answer, TestApp, assert_error, get, group_body, post, put, scope, send};

pub(super) const CREATED: EventType = EventType::EnrollmentCreated;
const HOSTED_STEP: &str = "The employer enters the company profile in the employer portal.";
const EMBEDDED_STEP: &str =
    "Send the company profile: PUT /v1/enrollments/{id}/onboarding/company_profile.";
/// `public_base_url` of the test app: the default.
const PORTAL: &str = "http://127.0.0.1:8080/portal";

/// A two-employee census, the first with a child.
pub(super) fn census() -> Value {
    json!({"members": [
        {"external_id": "E1", "first_name": "Ana", "last_name": "Diaz", "email": "ana@acme-mfg.com",
         "dob": "1988-04-12", "zip": "60601",
         "dependents": [{"relationship": "child", "name": "Leo", "dob": "2016-09-30"}]},
        {"external_id": "E2", "first_name": "Ben", "last_name": "Okafor", "dob": "1979-11-02",
         "zip": "60614"},
    ]})
}

/// A census of `n` employees.
pub(super) fn big_census(n: usize) -> Value {
    let member = |i: usize| {
        let dob = format!("19{}-0{}-1{}", 60 + i % 40, 1 + i % 9, i % 10);
        json!({"external_id": format!("E{i}"), "last_name": "Doe", "dob": dob, "zip": "60601"})
    };
    json!({ "members": (0..n).map(member).collect::<Vec<_>>() })
}

/// A valid enrollment body on quote `qid` (snake_case, defaults).
pub(crate) fn body(qid: &str) -> Value {
    json!({"quote_id": qid, "signatory": {"name": "Dana Lee", "email": "dana@acme-mfg.com"}})
}

/// The empty enrollment list (broker style).
pub(super) fn empty() -> Value {
    json!({"enrollments": [], "count": 0, "next_cursor": null})
}

/// The one-item enrollment list (broker style).
pub(super) fn one(e: &Value) -> Value {
    json!({"enrollments": [e], "count": 1, "next_cursor": null})
}

pub(super) fn enrollments(gid: &str) -> String {
    format!("/v1/groups/{gid}/enrollments")
}

pub(super) fn enrollment(id: &str) -> String {
    format!("/v1/enrollments/{id}")
}

/// Asserts every field of the object `want` in `got`.
pub(super) fn has(got: &Value, want: &Value) {
    for (k, v) in want.as_object().unwrap() {
        assert_eq!(&got[k], v, "{k} of {got}");
    }
}

/// [`has`] with the wanted fields written as `json!` object contents.
macro_rules! has {
    ($got:expr, $($want:tt)+) => {
        has(&$got, &json!($($want)+))
    };
}

/// Asserts an error answer and its message.
pub(super) fn refused(a: &Answer, status: u16, code: &str, message: &str) {
    assert_error(a, status, code);
    assert_eq!(a.body["message"], message);
}

/// Whether `s` is `n` lowercase hex characters.
fn is_hex(s: &str, n: usize) -> bool {
    let lower_hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
    s.len() == n && s.bytes().all(lower_hex)
}

/// The application under test and its service.
pub(crate) struct Api<'a, S>(pub(crate) &'a TestApp, pub(crate) &'a S);

impl<S, B> Api<'_, S>
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    pub(crate) async fn get(&self, path: &str, key: &str) -> Answer {
        send(self.1, get(path, key)).await
    }

    pub(crate) async fn post(&self, path: &str, key: &str, body: &Value) -> Answer {
        send(self.1, post(path, key, body)).await
    }

    pub(crate) async fn enroll(&self, key: &str, gid: &str, body: &Value) -> Answer {
        self.post(&enrollments(gid), key, body).await
    }

    async fn go_live(&self, key: &str, gid: &str) -> Answer {
        let path = format!("/v1/test_helpers/groups/{gid}/go_live");
        self.post(&path, key, &json!({})).await
    }

    /// A new quote of the group (asserting 201).
    async fn quote(&self, key: &str, gid: &str) -> Value {
        let path = format!("/v1/groups/{gid}/quotes");
        let q = self.post(&path, key, &json!({})).await;
        assert_eq!(q.status, 201, "{}", q.body);
        q.body
    }

    /// Replaces the census and runs the market comparison.
    async fn census(&self, key: &str, gid: &str, census: &Value) {
        let path = format!("/v1/groups/{gid}/census");
        let a = send(self.1, put(&path, key, census)).await;
        assert_eq!(a.status, 200, "{}", a.body);
        self.0.run_jobs().await;
    }

    /// Asserts the group's `status` and company state (either style);
    /// returns the group.
    async fn state(&self, key: &str, gid: &str, status: &str, company: Value) -> Value {
        let a = self.get(&format!("/v1/groups/{gid}"), key).await;
        assert_eq!(
            (a.status.as_u16(), &a.body["status"]),
            (200, &json!(status))
        );
        let state = a.body.get("company_state").or(a.body.get("companyState"));
        assert_eq!(state, Some(&company), "{}", a.body);
        a.body
    }

    /// The group's enrollment list (asserting 200).
    async fn list(&self, key: &str, gid: &str) -> Value {
        let a = self.get(&enrollments(gid), key).await;
        assert_eq!(a.status, 200, "{}", a.body);
        a.body
    }

    /// Creates a group for `domain`, writes `census`, runs the market
    /// comparison and creates a quote, asserting the group's status at
    /// each step; the group id and the quote.
    async fn setup(&self, key: &str, domain: &str, census: &Value) -> (String, Value) {
        let g = self.post("/v1/groups", key, &group_body(domain)).await;
        assert_eq!(g.status, 201, "{}", g.body);
        let gid = g.body["id"].as_str().unwrap().to_owned();
        self.state(key, &gid, "created", Value::Null).await;
        self.census(key, &gid, census).await;
        self.state(key, &gid, "census_received", Value::Null).await;
        let q = self.quote(key, &gid).await;
        self.state(key, &gid, "quoted", Value::Null).await;
        (gid, q)
    }

    /// [`Api::setup`] with [`census`]: the group id and a `ready` quote's id.
    pub(crate) async fn quoted(&self, key: &str, domain: &str) -> (String, String) {
        let (gid, q) = self.setup(key, domain, &census()).await;
        let start = q.get("plan_year_start_date").or(q.get("planYearStartDate"));
        assert_eq!(
            (&q["status"], start),
            (&json!("ready"), Some(&json!("2026-12-01")))
        );
        (gid, q["id"].as_str().unwrap().to_owned())
    }

    /// Asserts that refused enrollments changed nothing.
    async fn unchanged(&self, key: &str, gid: &str) {
        self.state(key, gid, "quoted", Value::Null).await;
        let list = self.list(key, gid).await;
        let cursor = list.get("next_cursor").or(list.get("nextCursor"));
        assert_eq!(cursor, Some(&Value::Null), "{list}");
        has!(list, {"enrollments": [], "count": 0});
    }

    /// The `data` of the outbox events of `kind` of `partner` in `mode`.
    async fn events(&self, partner: &Partner, mode: Mode, kind: EventType) -> Vec<Value> {
        let (outbox, page) = (&self.0.db.stores.outbox, PageRequest::first(200));
        let events = outbox
            .events(
                &scope(partner, mode),
                &domain::event::EventFilter::since(0),
                &page,
            )
            .await
            .unwrap();
        let of_kind = events
            .items
            .into_iter()
            .filter(|e| e.event.event_type() == kind);
        of_kind
            .map(|e| {
                domain::document::recase(e.event.data.data(), &domain::document::snake_to_camel)
            })
            .collect()
    }
}

/// What a created enrollment must say.
pub(super) struct Want<'a> {
    gid: &'a str,
    qid: &'a str,
    mode: &'a str,
    onboarding: &'a str,
    start: &'a str,
    domain: &'a str,
}

impl<'a> Want<'a> {
    /// A hosted test-mode enrollment starting 2026-12-01 for `acme-mfg.com`.
    fn hosted(gid: &'a str, qid: &'a str) -> Self {
        let (mode, onboarding) = ("test", "hosted");
        let (start, domain) = ("2026-12-01", "acme-mfg.com");
        Self {
            gid,
            qid,
            mode,
            onboarding,
            start,
            domain,
        }
    }

    fn domain(self, domain: &'a str) -> Self {
        Self { domain, ..self }
    }

    fn start(self, start: &'a str) -> Self {
        Self { start, ..self }
    }

    /// Asserts a 201 with exactly the snake_case fields; returns the id.
    fn check(&self, a: &Answer) -> String {
        assert_eq!(a.status, 201, "{}", a.body);
        let e = &a.body;
        let id = e["id"].as_str().unwrap().to_owned();
        assert!(
            id.strip_prefix("enr_").is_some_and(|h| is_hex(h, 12)),
            "{id}"
        );
        assert_eq!(a.header("location"), Some(enrollment(&id).as_str()));
        has!(e, {"group_id": self.gid, "quote_id": self.qid, "mode": self.mode,
                 "status": "onboarding", "start_date": self.start,
                 "company_domain": self.domain, "company_state": "sandbox",
                 "onboarding_mode": self.onboarding});
        assert!(
            e.get("signatory").is_none(),
            "the signatory is kept, not echoed"
        );
        has!(e["onboarding"], {"percent_complete": 0, "blocking_remaining": 4});
        let checklist = e["onboarding"]["steps"].as_array().unwrap();
        let ids: Vec<&str> = checklist.iter().filter_map(|s| s["id"].as_str()).collect();
        assert_eq!(
            ids,
            [
                "company_profile",
                "business_verification",
                "banking",
                "plan_setup",
                "employee_invitations"
            ]
        );
        assert!(
            checklist
                .iter()
                .all(|s| s["status"] == "not_started" && s["data"].is_null())
        );
        let steps = e["next_steps"].as_array().unwrap();
        let texts = steps.iter().filter_map(Value::as_str);
        assert_eq!(texts.filter(|s| !s.is_empty()).count(), 5, "{e}");
        assert!(
            e["created_at"].as_str().unwrap().starts_with("2026-"),
            "{e}"
        );
        let hosted = self.onboarding == "hosted";
        assert_eq!(steps[0], if hosted { HOSTED_STEP } else { EMBEDDED_STEP });
        // The nine fields above, onboarding, id, next_steps, created_at; the
        // portal when hosted.
        assert_eq!(
            e.as_object().unwrap().len(),
            12 + usize::from(hosted),
            "{e}"
        );
        if hosted {
            let p = &e["employer_portal"];
            let signin = format!("{PORTAL}/sign-in");
            let suppressed = self.mode == "test";
            has!(p, {"provisioned": true, "signin_url": signin, "invite_suppressed": suppressed});
            assert_eq!(p.as_object().unwrap().len(), 4);
            let url = p["set_password_url"].as_str().unwrap();
            let token = url.strip_prefix(&format!("{PORTAL}/set-password?token="));
            assert!(token.is_some_and(|t| is_hex(t, 64)), "{url}");
        }
        id
    }
}

mod enroll;
mod portal_links;
mod refusals;
mod stale;
