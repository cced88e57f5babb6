//! `POST /v1/groups/{id}/enrollments`, `GET /v1/groups/{id}/enrollments`, `GET /v1/enrollments/{id}` and the go-live test helper.

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::test::TestRequest;
use domain::event::EventType;
use domain::mode::Mode;
use domain::page::PageRequest;
use domain::partner::{Partner, PartnerKind};
use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::{Answer, TestApp, assert_error, authed, get, group_body, post, put, scope, send};

const CREATED: EventType = EventType::EnrollmentCreated;
const HOSTED_STEP: &str = "The employer enters the company profile in the employer portal.";
const EMBEDDED_STEP: &str =
    "Send the company profile: PUT /v1/enrollments/{id}/onboarding/company_profile.";
/// `public_base_url` of the test app: the default.
const PORTAL: &str = "http://127.0.0.1:8080/portal";

/// A two-employee census, the first with a child.
fn census() -> Value {
    json!({"members": [
        {"external_id": "E1", "first_name": "Ana", "last_name": "Diaz", "email": "ana@acme-mfg.com",
         "dob": "1988-04-12", "zip": "60601",
         "dependents": [{"relationship": "child", "name": "Leo", "dob": "2016-09-30"}]},
        {"external_id": "E2", "first_name": "Ben", "last_name": "Okafor", "dob": "1979-11-02",
         "zip": "60614"},
    ]})
}

/// A census of `n` employees.
fn big_census(n: usize) -> Value {
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
fn empty() -> Value {
    json!({"enrollments": [], "count": 0, "next_cursor": null})
}

/// The one-item enrollment list (broker style).
fn one(e: &Value) -> Value {
    json!({"enrollments": [e], "count": 1, "next_cursor": null})
}

fn enrollments(gid: &str) -> String {
    format!("/v1/groups/{gid}/enrollments")
}

fn enrollment(id: &str) -> String {
    format!("/v1/enrollments/{id}")
}

/// Asserts every field of the object `want` in `got`.
fn has(got: &Value, want: &Value) {
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
fn refused(a: &Answer, status: u16, code: &str, message: &str) {
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
struct Want<'a> {
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

crate::http_on_both!(a_hosted_enrollment_enrolls_the_group);
async fn a_hosted_enrollment_enrolls_the_group(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (p, key) = app.broker().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    assert_eq!(api.list(&key, &gid).await, empty());

    let a = api.enroll(&key, &gid, &body(&qid)).await;
    let id = Want::hosted(&gid, &qid).check(&a);
    assert_eq!(a.body["created_at"], "2026-11-21T13:14:00Z");
    api.state(&key, &gid, "enrolled", json!("sandbox")).await;
    let read = api.get(&enrollment(&id), &key).await;
    assert_eq!((read.status.as_u16(), &read.body), (200, &a.body));
    assert_eq!(api.list(&key, &gid).await, one(&a.body));
    let limited = api
        .get(&format!("{}?limit=1", enrollments(&gid)), &key)
        .await;
    assert_eq!(limited.body, one(&a.body));

    let created = api.events(&p, Mode::Test, CREATED).await;
    let data = json!({"enrollmentId": id, "groupId": gid, "quoteId": qid, "startDate": "2026-12-01",
                      "companyDomain": "acme-mfg.com", "onboardingMode": "hosted"});
    assert_eq!(created, vec![data]);
}

crate::http_on_both!(an_embedded_enrollment_has_no_portal_and_takes_the_sent_start);
async fn an_embedded_enrollment_has_no_portal_and_takes_the_sent_start(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (p, key) = app.broker().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    // A broker may send camelCase too.
    let b = json!({"quoteId": qid, "signatory": {"name": "Dana Lee", "email": "dana@acme-mfg.com"},
                   "onboardingMode": "embedded", "startDate": "2027-01-01"});
    let a = api.enroll(&key, &gid, &b).await;
    let hosted = Want::hosted(&gid, &qid).start("2027-01-01");
    let id = Want {
        onboarding: "embedded",
        ..hosted
    }
    .check(&a);
    assert!(a.body.get("employer_portal").is_none(), "{}", a.body);
    assert_eq!(api.get(&enrollment(&id), &key).await.body, a.body);
    let data = api.events(&p, Mode::Test, CREATED).await;
    assert_eq!(data.len(), 1);
    has!(data[0], {"startDate": "2027-01-01", "onboardingMode": "embedded"});
}

crate::http_on_both!(live_mode_enrolls_without_suppressing_the_invitation_and_is_isolated);
async fn live_mode_enrolls_without_suppressing_the_invitation_and_is_isolated(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let p = app.partner("Live Brokers", PartnerKind::Broker, true).await;
    let test = app.key(&p, Mode::Test).await;
    let live = app.key(&p, Mode::Live).await;
    // The same domain enrolled in both modes: the modes do not share domains.
    let (tg, tq) = api.quoted(&test, "acme-mfg.com").await;
    let (lg, lq) = api.quoted(&live, "acme-mfg.com").await;
    let t = api.enroll(&test, &tg, &body(&tq)).await;
    let tid = Want::hosted(&tg, &tq).check(&t);
    let l = api.enroll(&live, &lg, &body(&lq)).await;
    let lid = Want {
        mode: "live",
        ..Want::hosted(&lg, &lq)
    }
    .check(&l);
    let (tp, lp) = (&t.body["employer_portal"], &l.body["employer_portal"]);
    assert_eq!(lp["invite_suppressed"], false);
    assert_ne!(lp["set_password_url"], tp["set_password_url"]);

    for (id, gid, owner, other) in [(&lid, &lg, &live, &test), (&tid, &tg, &test, &live)] {
        assert_eq!(api.get(&enrollment(id), owner).await.status, 200);
        assert_error(&api.get(&enrollment(id), other).await, 404, "not_found");
        assert_error(&api.get(&enrollments(gid), other).await, 404, "not_found");
        assert_error(&api.enroll(other, gid, &body(&tq)).await, 404, "not_found");
    }
    // The test helper does not exist for a live key, even for its own group.
    assert_error(&api.go_live(&live, &lg).await, 404, "not_found");
    api.state(&live, &lg, "enrolled", json!("sandbox")).await;
    assert_eq!(api.events(&p, Mode::Test, CREATED).await.len(), 1);
    assert_eq!(api.events(&p, Mode::Live, CREATED).await.len(), 1);
}

crate::http_on_both!(going_live_makes_the_group_active_in_prod);
async fn going_live_makes_the_group_active_in_prod(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (p, key) = app.broker().await;
    let fresh = api.post("/v1/groups", &key, &group_body("fresh.com")).await;
    let fresh = fresh.body["id"].as_str().unwrap();
    let early = "the group has no provisioned company yet; create its enrollment first";
    refused(&api.go_live(&key, fresh).await, 409, "conflict", early);
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    refused(&api.go_live(&key, &gid).await, 409, "conflict", early);
    api.unchanged(&key, &gid).await;

    let created = api.enroll(&key, &gid, &body(&qid)).await;
    let id = Want::hosted(&gid, &qid).check(&created);
    app.clock.advance(60);
    let live = api.go_live(&key, &gid).await;
    assert_eq!(live.status, 200, "{}", live.body);
    has!(live.body, {"id": gid, "status": "active", "company_state": "prod",
                     "updated_at": "2026-11-21T13:15:00Z"});
    let read = api.state(&key, &gid, "active", json!("prod")).await;
    assert_eq!(read, live.body);

    // A forced go-live: the company is prod and the enrollment active, no
    // step completed.
    let mut want = created.body.clone();
    want["company_state"] = json!("prod");
    want["status"] = json!("active");
    assert_eq!(api.get(&enrollment(&id), &key).await.body, want);
    assert_eq!(api.list(&key, &gid).await, one(&want));

    let again = api.go_live(&key, &gid).await;
    refused(&again, 409, "conflict", "the group is already live");
    let (_, other) = app.hr_platform().await;
    let g = gid.as_str();
    for (g, k) in [("grp_000000000000", &key), ("grp_x", &key), (g, &other)] {
        assert_error(&api.go_live(k, g).await, 404, "not_found");
    }
    let changed = api
        .events(&p, Mode::Test, EventType::GroupStateChanged)
        .await;
    // No step was completed: the go-live was forced.
    let data = json!({"groupId": gid, "companyDomain": "acme-mfg.com",
                      "previousState": "sandbox", "state": "prod", "forced": true});
    assert_eq!(changed, vec![data]);
}

crate::http_on_both!(bad_bodies_are_refused_naming_the_field_and_change_nothing);
async fn bad_bodies_are_refused_naming_the_field_and_change_nothing(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (p, key) = app.broker().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let (_, sibling) = api.quoted(&key, "other.com").await;
    let (_, skey) = app.broker().await;
    let (_, foreign) = api.quoted(&skey, "foreign.com").await;
    let (not_ours, long) = ("is not a quote of this group", "x".repeat(201));
    // [changes to a valid body (null removes), the field named, its message]
    let cases = json!([
        [{"quote_id": null}, "quote_id", "is required"],
        [{"quote_id": "qt_xyz"}, "quote_id", "must be a quote id (qt_ and 12 hex characters)"],
        [{"quote_id": gid}, "quote_id", null],
        [{"quote_id": 7}, "quote_id", null],
        [{"quote_id": sibling}, "quote_id", not_ours],
        [{"quote_id": foreign}, "quote_id", not_ours],
        [{"quote_id": "qt_000000000000"}, "quote_id", not_ours],
        [{"signatory": null}, "signatory", "is required"],
        [{"signatory": "Dana"}, "signatory", null],
        [{"signatory": {"name": "Dana"}}, "signatory.email", "is required"],
        [{"signatory": {"name": "D", "email": "d.acme"}}, "signatory.email", null],
        [{"signatory": {"name": "", "email": "d@a.com"}}, "signatory.name", null],
        [{"signatory": {"name": " ", "email": "d@a.com"}}, "signatory.name", null],
        [{"signatory": {"name": long, "email": "d@a.com"}}, "signatory.name", null],
        [{"signatory": {"name": "D", "email": "d@a.com", "ph": 1}}, "signatory.ph", null],
        [{"onboarding_mode": "x"}, "onboarding_mode", "must be hosted or embedded"],
        [{"start_date": "2026-13-01"}, "start_date", "must be a date (YYYY-MM-DD)"],
        [{"plan": "diamond"}, "plan", "is not a known field"],
        [{"quoteId": qid}, "quote_id", null],
    ]);
    for case in cases.as_array().unwrap() {
        let mut b = body(&qid);
        for (k, v) in case[0].as_object().unwrap() {
            b[k] = v.clone();
        }
        b.as_object_mut().unwrap().retain(|_, v| !v.is_null());
        let a = api.enroll(&key, &gid, &b).await;
        assert_error(&a, 400, "invalid_request");
        assert_eq!(
            a.fields(),
            vec![case[1].as_str().unwrap()],
            "{b} -> {}",
            a.body
        );
        if let Some(m) = case[2].as_str() {
            assert_eq!(a.body["details"][0]["message"], m, "{b}");
        }
    }
    let form = TestRequest::post().uri(&enrollments(&gid));
    let form = authed(form.set_payload("quote_id=x"), &key);
    assert_error(&send(&svc, form).await, 400, "invalid_request");
    api.unchanged(&key, &gid).await;
    assert!(api.events(&p, Mode::Test, CREATED).await.is_empty());
    Want::hosted(&gid, &qid).check(&api.enroll(&key, &gid, &body(&qid)).await);
}

crate::http_on_both!(unknown_foreign_or_other_mode_resources_are_not_found);
async fn unknown_foreign_or_other_mode_resources_are_not_found(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let owner = app.partner("Owner", PartnerKind::Broker, true).await;
    let key = app.key(&owner, Mode::Test).await;
    let live = app.key(&owner, Mode::Live).await;
    let (_, other) = app.broker().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let (b, g) = (body(&qid), gid.as_str());
    let groups = [
        ("grp_000000000000", &key),
        ("grp_XYZ", &key),
        (g, &other),
        (g, &live),
    ];
    for (g, k) in groups {
        let a = api.enroll(k, g, &b).await;
        refused(&a, 404, "not_found", "no such group in this mode");
        assert_error(&api.get(&enrollments(g), k).await, 404, "not_found");
    }
    api.unchanged(&key, &gid).await;
    let id = Want::hosted(&gid, &qid).check(&api.enroll(&key, &gid, &b).await);
    let unknown = api.get("/v1/enrollments/enr_000000000000", &key).await;
    refused(
        &unknown,
        404,
        "not_found",
        "no such enrollment in this mode",
    );
    let path = enrollment(&id);
    let (grp, longer) = (path.replace("enr_", "grp_"), format!("{path}0"));
    let paths = [
        (&path, &other),
        (&path, &live),
        (&grp, &key),
        (&longer, &key),
    ];
    for (path, k) in paths {
        let r = api.get(path, k).await;
        assert_error(&r, 404, "not_found");
        assert_eq!(r.body, unknown.body, "{path}");
    }
}

crate::http_on_both!(a_second_enrollment_of_the_group_is_a_conflict);
async fn a_second_enrollment_of_the_group_is_a_conflict(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (p, key) = app.broker().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let first = api.enroll(&key, &gid, &body(&qid)).await;
    Want::hosted(&gid, &qid).check(&first);
    let newer = api.quote(&key, &gid).await;
    let mut embedded = body(newer["id"].as_str().unwrap());
    embedded["onboarding_mode"] = json!("embedded");
    for b in [body(&qid), embedded] {
        let a = api.enroll(&key, &gid, &b).await;
        refused(&a, 409, "conflict", "the group already has an enrollment");
    }
    assert_eq!(api.list(&key, &gid).await, one(&first.body));
    assert_eq!(api.events(&p, Mode::Test, CREATED).await.len(), 1);
}

crate::http_on_both!(an_in_review_quote_is_a_conflict_until_finalized);
async fn an_in_review_quote_is_a_conflict_until_finalized(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.broker().await;
    let (gid, q) = api.setup(&key, "acme-mfg.com", &big_census(201)).await;
    assert_eq!(
        (&q["status"], &q["census"]["employees"]),
        (&json!("in_review"), &json!(201))
    );
    let qid = q["id"].as_str().unwrap();
    let a = api.enroll(&key, &gid, &body(qid)).await;
    let message = "the quote is in review; it must be finalized first";
    refused(&a, 409, "conflict", message);
    api.unchanged(&key, &gid).await;
    let finalize = format!("/v1/test_helpers/quotes/{qid}/finalize");
    let f = api.post(&finalize, &key, &json!({})).await;
    assert_eq!(f.body["status"], "ready", "{}", f.body);
    Want::hosted(&gid, qid).check(&api.enroll(&key, &gid, &body(qid)).await);
}

crate::http_on_both!(an_enrolled_domain_blocks_other_groups_of_the_mode);
async fn an_enrolled_domain_blocks_other_groups_of_the_mode(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.broker().await;
    let (rival_p, rival) = app.hr_platform().await;
    // All three exist before any enrolls; then only the first may enroll.
    let (own_g, own_q) = api.quoted(&key, "shared.com").await;
    let (same_g, same_q) = api.quoted(&key, "shared.com").await;
    let (rival_g, rival_q) = api.quoted(&rival, "shared.com").await;
    let a = api.enroll(&key, &own_g, &body(&own_q)).await;
    Want::hosted(&own_g, &own_q).domain("shared.com").check(&a);
    let message = "an enrolled group already exists for this domain";
    for (g, q, k) in [(&same_g, &same_q, &key), (&rival_g, &rival_q, &rival)] {
        refused(&api.enroll(k, g, &body(q)).await, 409, "conflict", message);
        api.unchanged(k, g).await;
    }
    // Still held once the first group is live.
    assert_eq!(api.go_live(&key, &own_g).await.status, 200);
    let r = api.enroll(&rival, &rival_g, &body(&rival_q)).await;
    refused(&r, 409, "conflict", message);
    api.unchanged(&rival, &rival_g).await;
    assert!(api.events(&rival_p, Mode::Test, CREATED).await.is_empty());
}

crate::http_on_both!(an_expired_quote_is_gone_and_a_new_quote_enrolls);
async fn an_expired_quote_is_gone_and_a_new_quote_enrolls(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.broker().await;
    let (early_g, early_q) = api.quoted(&key, "early.com").await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    // One second before `expires_at` (2026-12-21T13:14:00Z) a quote still holds.
    app.clock.advance(30 * 86400 - 1);
    let a = api.enroll(&key, &early_g, &body(&early_q)).await;
    let want = Want::hosted(&early_g, &early_q).domain("early.com");
    want.check(&a);
    assert_eq!(a.body["created_at"], "2026-12-21T13:13:59Z");
    app.clock.advance(1);
    let a = api.enroll(&key, &gid, &body(&qid)).await;
    let message = "the quote has expired; create a new quote and retry";
    refused(&a, 410, "quote_expired", message);
    api.unchanged(&key, &gid).await;
    let q = api.quote(&key, &gid).await;
    assert_eq!(q["plan_year_start_date"], "2027-01-01");
    let new_q = q["id"].as_str().unwrap();
    let a = api.enroll(&key, &gid, &body(new_q)).await;
    Want::hosted(&gid, new_q).start("2027-01-01").check(&a);
}

crate::http_on_both!(a_census_change_of_rating_inputs_makes_the_quote_stale);
async fn a_census_change_of_rating_inputs_makes_the_quote_stale(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.broker().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let mut moved = census();
    moved["members"][1]["zip"] = json!("60615");
    api.census(&key, &gid, &moved).await;
    let a = api.enroll(&key, &gid, &body(&qid)).await;
    let message = "the census changed since this quote; re-quote";
    refused(&a, 410, "quote_expired", message);
    api.unchanged(&key, &gid).await;
    let q = api.quote(&key, &gid).await;
    let new_q = q["id"].as_str().unwrap();
    Want::hosted(&gid, new_q).check(&api.enroll(&key, &gid, &body(new_q)).await);
}

crate::http_on_both!(a_census_change_of_names_only_keeps_the_quote_current);
async fn a_census_change_of_names_only_keeps_the_quote_current(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.broker().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let mut renamed = census();
    renamed["members"][0]["last_name"] = json!("Diaz-Ruiz");
    renamed["members"][1]["first_name"] = json!("Benjamin");
    renamed["members"][0]["dependents"][0]["name"] = json!("Leonardo");
    api.census(&key, &gid, &renamed).await;
    api.unchanged(&key, &gid).await;
    Want::hosted(&gid, &qid).check(&api.enroll(&key, &gid, &body(&qid)).await);
}

crate::http_on_both!(the_list_checks_its_page_parameters);
async fn the_list_checks_its_page_parameters(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.broker().await;
    let (gid, _) = api.quoted(&key, "acme-mfg.com").await;
    let list = enrollments(&gid);
    for query in ["limit=0", "limit=201", "limit=x", "cursor=!"] {
        let a = api.get(&format!("{list}?{query}"), &key).await;
        assert_error(&a, 400, "invalid_request");
        let field = query.split('=').next().unwrap();
        assert_eq!(a.fields(), vec![field], "{query}");
    }
    let a = api.get(&format!("{list}?limit=200"), &key).await;
    assert_eq!(a.body, empty());
}

crate::http_on_both!(an_hr_platform_speaks_camel_case);
async fn an_hr_platform_speaks_camel_case(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.hr_platform().await;
    let (gid, q) = api.setup(&key, "payroll-client.com", &census()).await;
    has!(q, {"status": "ready", "planYearStartDate": "2026-12-01"});
    let qid = q["id"].as_str().unwrap();
    let sig = json!({"name": "Dana Lee", "email": "dana@payroll-client.com"});
    let a = api.enroll(&key, &gid, &json!({"signatory": sig})).await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), vec!["quoteId"]);

    let b = json!({"quoteId": qid, "signatory": sig, "onboardingMode": "hosted"});
    let a = api.enroll(&key, &gid, &b).await;
    assert_eq!(a.status, 201, "{}", a.body);
    let e = &a.body;
    has!(e, {"groupId": gid, "quoteId": qid, "mode": "test", "status": "onboarding",
             "startDate": "2026-12-01", "companyDomain": "payroll-client.com",
             "companyState": "sandbox", "onboardingMode": "hosted"});
    has!(e["onboarding"], {"percentComplete": 0, "blockingRemaining": 4});
    assert_eq!(
        e["onboarding"]["steps"][0]["requirements"],
        json!([
            "legalName",
            "ein",
            "entityType",
            "address",
            "phone",
            "signatoryTitle"
        ]),
        "requirements are field names in the key's field style"
    );
    let named = [
        "id",
        "nextSteps",
        "createdAt",
        "employerPortal",
        "onboarding",
    ];
    assert!(named.iter().all(|k| e.get(k).is_some()), "{e}");
    assert_eq!(e.as_object().unwrap().len(), 13, "{e}");
    let portal = &e["employerPortal"];
    has!(portal, {"provisioned": true, "inviteSuppressed": true});
    let named = ["signinUrl", "setPasswordUrl"];
    assert!(named.iter().all(|k| portal[k].is_string()), "{portal}");
    let listed = json!({"enrollments": [e], "count": 1, "nextCursor": null});
    assert_eq!(api.get(&enrollments(&gid), &key).await.body, listed);
    let live = api.go_live(&key, &gid).await;
    has!(live.body, {"status": "active", "companyState": "prod"});
    let read = api.get(&enrollment(e["id"].as_str().unwrap()), &key).await;
    assert_eq!(read.body["companyState"], "prod");
}

crate::http_on_both!(an_idempotent_retry_replays_the_enrollment);
async fn an_idempotent_retry_replays_the_enrollment(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (p, key) = app.broker().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let keyed = |k: &str| {
        let req = post(&enrollments(&gid), &key, &body(&qid));
        req.insert_header(("idempotency-key", k.to_owned()))
    };
    let first = send(&svc, keyed("enroll-1")).await;
    Want::hosted(&gid, &qid).check(&first);
    assert_eq!(first.header("idempotent-replay"), None);
    app.clock.advance(3600);
    let second = send(&svc, keyed("enroll-1")).await;
    assert_eq!((second.status.as_u16(), &second.raw), (201, &first.raw));
    assert_eq!(second.header("idempotent-replay"), Some("true"));
    assert_eq!(second.header("location"), first.header("location"));
    assert_eq!(api.events(&p, Mode::Test, CREATED).await.len(), 1);
    // Another key executes again, and the group already has its enrollment.
    assert_error(&send(&svc, keyed("enroll-2")).await, 409, "conflict");
}

crate::http_on_both!(every_bad_field_is_named_at_once_and_a_start_is_not_past);
async fn every_bad_field_is_named_at_once_and_a_start_is_not_past(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.broker().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let bad = json!({"signatory": {"name": " ", "email": "dana"}, "start_date": "x"});
    let a = api.enroll(&key, &gid, &bad).await;
    assert_error(&a, 400, "invalid_request");
    let mut fields: Vec<&str> = a.body["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "quote_id",
            "signatory.email",
            "signatory.name",
            "start_date"
        ]
    );
    let mut past = body(&qid);
    past["start_date"] = json!("2026-11-20");
    let a = api.enroll(&key, &gid, &past).await;
    refused(
        &a,
        400,
        "invalid_request",
        "start_date: must not be in the past",
    );
    api.unchanged(&key, &gid).await;
}

crate::http_on_both!(what_changes_a_price_makes_the_quote_stale);
async fn what_changes_a_price_makes_the_quote_stale(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.broker().await;
    // Reassigned external ids: the same people draw other claims streams.
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let mut swapped = census();
    let members = swapped["members"].as_array_mut().unwrap();
    let (first, second) = (
        members[0]["external_id"].clone(),
        members[1]["external_id"].clone(),
    );
    members[0]["external_id"] = second;
    members[1]["external_id"] = first;
    api.census(&key, &gid, &swapped).await;
    let a = api.enroll(&key, &gid, &body(&qid)).await;
    assert_error(&a, 410, "quote_expired");

    // The group's address ZIP rates members whose own ZIP is not priced.
    let (gid, qid) = api.quoted(&key, "beta-mfg.com").await;
    let patch = json!({"address": {"line1": "1 Main St", "city": "Anchorage", "state": "AK", "zip": "99501"}});
    let path = format!("/v1/groups/{gid}");
    let p = send(
        &svc,
        authed(TestRequest::patch().uri(&path).set_json(&patch), &key),
    )
    .await;
    assert_eq!(p.status, 200, "{}", p.body);
    let a = api.enroll(&key, &gid, &body(&qid)).await;
    assert_error(&a, 410, "quote_expired");
    // A new quote on the same census and address enrolls.
    let q = api.quote(&key, &gid).await;
    let a = api
        .enroll(&key, &gid, &body(q["id"].as_str().unwrap()))
        .await;
    assert_eq!(a.status, 201, "{}", a.body);
}

crate::http_on_both!(a_live_hosted_enrollment_emails_the_portal_invitation);
async fn a_live_hosted_enrollment_emails_the_portal_invitation(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    // Test mode: provisioned, nothing sent.
    let (_, test_key) = app.broker().await;
    let (gid, qid) = api.quoted(&test_key, "test-mode.com").await;
    assert_eq!(api.enroll(&test_key, &gid, &body(&qid)).await.status, 201);
    assert!(app.mail.sent().is_empty());
    // Live mode: the signatory gets the set-password link.
    let live = app.partner("Live Brokers", PartnerKind::Broker, true).await;
    let key = app.key(&live, Mode::Live).await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let a = api.enroll(&key, &gid, &body(&qid)).await;
    assert_eq!(a.status, 201, "{}", a.body);
    // The invitation waits in the job queue: the request never waits on
    // the mail server.
    assert!(app.mail.sent().is_empty());
    app.run_jobs().await;
    let sent = app.mail.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].to, "dana@acme-mfg.com");
    let link = a.body["employer_portal"]["set_password_url"]
        .as_str()
        .unwrap();
    assert!(sent[0].text.contains(link), "{}", sent[0].text);
    assert!(sent[0].html.contains(link), "{}", sent[0].html);
    // Embedded mode provisions no portal admin and sends nothing.
    let (gid, qid) = api.quoted(&key, "embedded.com").await;
    let mut embedded = body(&qid);
    embedded["onboarding_mode"] = json!("embedded");
    assert_eq!(api.enroll(&key, &gid, &embedded).await.status, 201);
    app.run_jobs().await;
    assert_eq!(app.mail.sent().len(), 1);
}

/// The token of a set-password URL under the default `public_base_url`.
fn token_of(url: &str) -> String {
    let token = url
        .strip_prefix("http://127.0.0.1:8080/portal/set-password?token=")
        .unwrap_or_else(|| panic!("not a set-password URL: {url}"));
    assert_eq!(token.len(), 64, "{url}");
    token.to_owned()
}

crate::http_on_both!(portal_links_replace_the_link_and_a_used_link_is_never_shown);
async fn portal_links_replace_the_link_and_a_used_link_is_never_shown(db: TestDb) {
    use domain::portal::LinkState;
    use domain::services::portal::NewPassword;

    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.broker().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let e = api.enroll(&key, &gid, &body(&qid)).await;
    assert_eq!(e.status, 201, "{}", e.body);
    let eid = e.body["id"].as_str().unwrap().to_owned();
    let portal = &e.body["employer_portal"];
    assert_eq!(portal["signin_url"], "http://127.0.0.1:8080/portal/sign-in");
    let first = token_of(portal["set_password_url"].as_str().unwrap());
    // The enrollment shows the same link when read again.
    let read = api.get(&format!("/v1/enrollments/{eid}"), &key).await;
    assert_eq!(read.body["employer_portal"], e.body["employer_portal"]);

    let issued = api
        .post(
            &format!("/v1/enrollments/{eid}/portal_links"),
            &key,
            &json!({}),
        )
        .await;
    assert_eq!(issued.status, 201, "{}", issued.body);
    let fields: Vec<_> = issued.body.as_object().unwrap().keys().cloned().collect();
    assert_eq!(fields, ["expires_at", "set_password_url", "signin_url"]);
    let second = token_of(issued.body["set_password_url"].as_str().unwrap());
    assert_ne!(first, second);
    let created = time::OffsetDateTime::from_unix_timestamp(app.clock.secs()).unwrap();
    let expires = time::OffsetDateTime::parse(
        issued.body["expires_at"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    assert_eq!(expires - created, time::Duration::days(7));
    let read = api.get(&format!("/v1/enrollments/{eid}"), &key).await;
    assert_eq!(
        read.body["employer_portal"]["set_password_url"],
        issued.body["set_password_url"]
    );
    // The older link stopped working; test mode emailed nothing.
    let portal_svc = app
        .services()
        .portal(domain::rate_limit::Policy::failed_auth(30));
    assert_eq!(portal_svc.link(&first).await.unwrap().0, LinkState::Used);
    assert_eq!(portal_svc.link(&second).await.unwrap().0, LinkState::Usable);
    app.run_jobs().await;
    assert!(app.mail.sent().is_empty());

    // Once used, the enrollment shows no link at all.
    let password = "a long enough passphrase";
    portal_svc
        .set_password(
            None,
            NewPassword {
                token: &second,
                password,
                confirmation: password,
            },
        )
        .await
        .unwrap();
    let read = api.get(&format!("/v1/enrollments/{eid}"), &key).await;
    assert_eq!(
        read.body["employer_portal"]["set_password_url"],
        Value::Null
    );
    assert_eq!(portal_svc.link(&second).await.unwrap().0, LinkState::Used);

    // An embedded enrollment has no portal; another partner's is not found.
    let (gid, qid) = api.quoted(&key, "embedded.com").await;
    let mut embedded = body(&qid);
    embedded["onboarding_mode"] = json!("embedded");
    let emb = api.enroll(&key, &gid, &embedded).await;
    let emb_id = emb.body["id"].as_str().unwrap();
    let refused = api
        .post(
            &format!("/v1/enrollments/{emb_id}/portal_links"),
            &key,
            &json!({}),
        )
        .await;
    assert_error(&refused, 409, "conflict");
    let (_, other) = app.hr_platform().await;
    let hidden = api
        .post(
            &format!("/v1/enrollments/{eid}/portal_links"),
            &other,
            &json!({}),
        )
        .await;
    assert_error(&hidden, 404, "not_found");
}

crate::http_on_both!(a_live_portal_link_is_emailed_to_the_signatory);
async fn a_live_portal_link_is_emailed_to_the_signatory(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let live = app.partner("Live Brokers", PartnerKind::Broker, true).await;
    let key = app.key(&live, Mode::Live).await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let e = api.enroll(&key, &gid, &body(&qid)).await;
    let eid = e.body["id"].as_str().unwrap();
    let issued = api
        .post(
            &format!("/v1/enrollments/{eid}/portal_links"),
            &key,
            &json!({}),
        )
        .await;
    assert_eq!(issued.status, 201, "{}", issued.body);
    app.run_jobs().await;
    let sent = app.mail.sent();
    assert_eq!(sent.len(), 2, "the invitation, then the new link");
    assert_eq!(sent[1].kind, domain::email::EmailKind::PortalLink);
    assert_eq!(sent[1].to, "dana@acme-mfg.com");
    let url = issued.body["set_password_url"].as_str().unwrap();
    assert!(sent[1].text.contains(url), "{}", sent[1].text);
    assert!(
        !sent[0].text.contains(url),
        "the invitation's link is another"
    );
}
