//! Embedded onboarding over HTTP (onboarding §4): an HR platform takes an
//! employer from enrollment to `prod` through the API alone — a verifier
//! refusal and its recovery, wrong micro-deposits, the signature, the
//! go-live — with every `enrollment.updated` and the `group.state_changed`
//! received on a real local endpoint and verified; a hosted enrollment's
//! steps refused; bad input changing nothing; retries replayed.

use serde_json::{Value, json};
use testkit::db::TestDb;

use super::enrollments::{Api, body};
use super::webhooks::{Receiver, assert_verifies, register};
use crate::http::{Answer, TestApp, assert_error, get, post, put, send};

const REFUSED_EIN: &str = "11-1111111";
const ACCOUNT_NUMBER: &str = "000123456789";

fn onboarding(id: &str) -> String {
    format!("/v1/enrollments/{id}/onboarding")
}

fn step(id: &str, name: &str) -> String {
    format!("/v1/enrollments/{id}/onboarding/{name}")
}

/// A complete company profile (camelCase) with `ein`.
fn profile(ein: &str) -> Value {
    json!({
        "legalName": "Acme Manufacturing LLC", "ein": ein, "entityType": "llc",
        "address": {"line1": "100 Main St", "city": "Chicago", "state": "IL", "zip": "60601"},
        "phone": "(312) 555-0100", "signatoryTitle": "CFO"
    })
}

/// The statuses of the five steps, in order.
fn statuses(read: &Value) -> Vec<String> {
    read["onboarding"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["status"].as_str().unwrap().to_owned())
        .collect()
}

#[track_caller]
fn ok(a: &Answer) -> &Value {
    assert_eq!(a.status, 200, "{}", a.body);
    &a.body
}

#[track_caller]
fn conflict(a: &Answer, message: &str) {
    assert_error(a, 409, "conflict");
    assert_eq!(a.body["message"], message, "{}", a.body);
}

crate::http_on_both!(an_hr_platform_takes_an_embedded_employer_to_prod_through_the_api);
async fn an_hr_platform_takes_an_embedded_employer_to_prod_through_the_api(db: TestDb) {
    let app = TestApp::with_webhooks(db, 1.0);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.hr_platform().await;
    let rx = Receiver::answering(204);
    let secret = register(&svc, &key, rx.url()).await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let mut enroll = body(&qid);
    enroll["onboardingMode"] = json!("embedded");
    let e = api.enroll(&key, &gid, &enroll).await;
    assert_eq!(e.status, 201, "{}", e.body);
    assert!(e.body.get("employerPortal").is_none(), "{}", e.body);
    let id = e.body["id"].as_str().unwrap().to_owned();
    let put_ = |name: &str, b: Value| send(&svc, put(&step(&id, name), &key, &b));
    let post_ = |name: &str, b: Value| send(&svc, post(&step(&id, name), &key, &b));

    // The checklist as the enrollment shows it, in camelCase.
    let read = ok(&api.get(&onboarding(&id), &key).await).clone();
    assert_eq!(read["enrollmentId"], id.as_str());
    assert_eq!(read["status"], "onboarding");
    assert_eq!(read["companyState"], "sandbox");
    assert_eq!(
        (
            &read["onboarding"]["percentComplete"],
            &read["onboarding"]["blockingRemaining"]
        ),
        (&json!(0), &json!(4))
    );
    assert_eq!(statuses(&read), ["not_started"; 5]);
    assert_eq!(
        read["nextSteps"][0],
        "Send the company profile: PUT /v1/enrollments/{id}/onboarding/company_profile."
    );
    assert_eq!(read["onboarding"], e.body["onboarding"]);

    // Prerequisites first.
    conflict(
        &post_("business_verification", json!({})).await,
        "business_verification can start once company_profile is completed",
    );
    conflict(
        &put_("plan_setup", json!({})).await,
        "plan_setup can start once banking is completed",
    );

    // Every bad field at once, named in camelCase; nothing saved.
    let bad = json!({"legalName": "", "ein": "07-1234567", "entityType": "corp",
                     "address": {"line1": "1 Main", "city": "Chicago", "state": "IL", "zip": "606"},
                     "phone": "12", "signatoryTitle": "CFO"});
    let a = put_("company_profile", bad).await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(
        a.fields(),
        ["legalName", "ein", "entityType", "address.zip", "phone"]
    );
    let unknown = put_(
        "company_profile",
        json!({"legalName": "Acme", "taxId": "1"}),
    )
    .await;
    assert_error(&unknown, 400, "invalid_request");
    assert_eq!(unknown.fields(), ["taxId"]);
    assert_eq!(
        ok(&api.get(&onboarding(&id), &key).await)["onboarding"],
        read["onboarding"]
    );

    // A partial profile is in progress with what is missing.
    let s = ok(&put_(
        "company_profile",
        json!({"legalName": "Acme Manufacturing LLC"}),
    )
    .await)
    .clone();
    assert_eq!(s["status"], "in_progress");
    assert_eq!(
        s["requirements"],
        json!(["ein", "entityType", "address", "phone", "signatoryTitle"])
    );

    // The sandbox verifier refuses 11-1111111: the step's status, not an
    // HTTP error.
    let s = ok(&put_("company_profile", profile(REFUSED_EIN)).await).clone();
    assert_eq!(s["status"], "completed");
    assert_eq!(s["data"]["phone"], "+13125550100");
    assert_eq!(s["data"]["ein"], REFUSED_EIN);
    assert_eq!(s["data"]["signatoryTitle"], "CFO");
    let s = ok(&post_("business_verification", json!({})).await).clone();
    assert_eq!(s["status"], "action_required");
    assert_eq!(
        s["errors"],
        json!([{"field": "ein", "code": "verification_failed",
                "message": "The EIN does not match the legal name"}])
    );

    // Recovery: correct the profile, ask again.
    let s = ok(&put_("company_profile", profile("12-3456789")).await).clone();
    assert_eq!(s["status"], "completed");
    let s = ok(&post_("business_verification", json!({})).await).clone();
    assert_eq!(
        (&s["status"], &s["errors"]),
        (&json!("completed"), &json!([]))
    );

    // Banking: a bad account changes nothing; the number never comes back.
    let bank = json!({"routingNumber": "021000021", "accountNumber": ACCOUNT_NUMBER,
                      "accountType": "checking", "holderName": "Acme Manufacturing LLC"});
    let mut wrong = bank.clone();
    wrong["routingNumber"] = json!("021000022");
    let a = put_("banking", wrong).await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["routingNumber"]);
    let s = ok(&put_("banking", bank).await).clone();
    assert_eq!(s["status"], "pending");
    assert_eq!(s["data"]["last4"], "6789");
    assert!(!s.to_string().contains(ACCOUNT_NUMBER), "{s}");
    let a = post_("banking/verify", json!({"amountsCents": [32]})).await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["amountsCents"]);
    let s = ok(&post_("banking/verify", json!({"amountsCents": [45, 33]})).await).clone();
    assert_eq!(s["status"], "pending", "one wrong answer of three");
    let s = ok(&post_("banking/verify", json!({"amountsCents": [45, 32]})).await).clone();
    assert_eq!(s["status"], "completed");

    // Plan setup: defaults, then the signatory's signature.
    let s = ok(&put_("plan_setup", json!({"minHoursPerWeek": 25})).await).clone();
    assert_eq!(s["status"], "in_progress");
    assert_eq!(s["data"]["minHoursPerWeek"], 25);
    assert_eq!(s["data"]["waitingPeriod"], "first_of_month_after_hire");
    let a = post_(
        "plan_setup/sign",
        json!({"signerName": "Someone Else", "accepted": true}),
    )
    .await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["signerName"]);
    let s = ok(&post_(
        "plan_setup/sign",
        json!({"signerName": "dana  LEE", "accepted": true}),
    )
    .await)
    .clone();
    assert_eq!(s["status"], "completed");

    // Test mode: the completed checklist takes the company to prod.
    let read = ok(&api.get(&onboarding(&id), &key).await).clone();
    assert_eq!(
        (&read["status"], &read["companyState"]),
        (&json!("active"), &json!("prod"))
    );
    assert_eq!(
        (
            &read["onboarding"]["percentComplete"],
            &read["onboarding"]["blockingRemaining"]
        ),
        (&json!(100), &json!(0))
    );
    assert_eq!(
        read["nextSteps"],
        json!([
            "Invite the employees: POST /v1/enrollments/{id}/onboarding/employee_invitations (optional)."
        ])
    );
    let g = ok(&send(&svc, get(&format!("/v1/groups/{gid}"), &key)).await).clone();
    assert_eq!(g["companyState"], "prod", "{g}");
    conflict(
        &put_("company_profile", profile("12-3456789")).await,
        "the company is live",
    );
    let s = ok(&post_("employee_invitations", json!({})).await).clone();
    assert_eq!(
        (&s["status"], &s["data"]["suppressed"]),
        (&json!("completed"), &json!(true))
    );
    assert_eq!(
        statuses(ok(&api.get(&onboarding(&id), &key).await)),
        ["completed"; 5]
    );

    // The events, on a real endpoint, verified, in camelCase.
    while app.deliver().await > 0 {}
    let now = app.clock.secs();
    let got = rx.received();
    for r in &got {
        assert_verifies(&secret, r, now);
    }
    let events: Vec<Value> = got.iter().map(|r| r.json()).collect();
    let of = |t: &str| events.iter().filter(|e| e["type"] == t).collect::<Vec<_>>();
    let updates = of("enrollment.updated");
    let moved: Vec<(String, String)> = updates
        .iter()
        .map(|e| {
            let s = &e["data"]["step"];
            (
                s["id"].as_str().unwrap().into(),
                s["status"].as_str().unwrap().into(),
            )
        })
        .collect();
    let expect = [
        ("company_profile", "in_progress"),
        ("company_profile", "completed"),
        ("business_verification", "action_required"),
        ("business_verification", "completed"),
        ("banking", "pending"),
        ("banking", "completed"),
        ("plan_setup", "in_progress"),
        ("plan_setup", "completed"),
        ("employee_invitations", "completed"),
    ];
    for (id_, status) in expect {
        assert!(
            moved.iter().any(|(i, s)| i == id_ && s == status),
            "no enrollment.updated for {id_} {status}: {moved:?}"
        );
    }
    assert_eq!(updates[0]["data"]["enrollmentId"], id.as_str());
    let live = of("group.state_changed");
    assert_eq!(live.len(), 1, "{live:?}");
    assert_eq!(
        live[0]["data"],
        json!({"groupId": gid, "companyDomain": "acme-mfg.com", "previousState": "sandbox",
               "state": "prod"}),
        "a go-live by the completed checklist is not forced"
    );
}

crate::http_on_both!(a_hosted_enrollment_reads_its_onboarding_but_its_steps_run_in_the_portal);
async fn a_hosted_enrollment_reads_its_onboarding_but_its_steps_run_in_the_portal(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.broker().await;
    let (_, other) = app.hr_platform().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let e = api.enroll(&key, &gid, &body(&qid)).await;
    assert_eq!(e.status, 201, "{}", e.body);
    let id = e.body["id"].as_str().unwrap().to_owned();

    let read = ok(&api.get(&onboarding(&id), &key).await).clone();
    assert_eq!(
        (
            &read["enrollment_id"],
            &read["onboarding_mode"],
            &read["status"]
        ),
        (&json!(id), &json!("hosted"), &json!("onboarding"))
    );
    assert_eq!(
        read["next_steps"][0],
        "The employer enters the company profile in the employer portal."
    );
    let writes = [
        ("PUT", "company_profile"),
        ("POST", "business_verification"),
        ("PUT", "banking"),
        ("POST", "banking/verify"),
        ("PUT", "plan_setup"),
        ("POST", "plan_setup/sign"),
        ("POST", "employee_invitations"),
    ];
    for (method, name) in writes {
        let path = step(&id, name);
        let b = json!({});
        let a = if method == "PUT" {
            send(&svc, put(&path, &key, &b)).await
        } else {
            api.post(&path, &key, &b).await
        };
        conflict(&a, "onboarding runs in the employer portal");
        // Another partner does not learn that the enrollment exists.
        let a = if method == "PUT" {
            send(&svc, put(&path, &other, &b)).await
        } else {
            api.post(&path, &other, &b).await
        };
        assert_error(&a, 404, "not_found");
    }
    assert_error(&api.get(&onboarding(&id), &other).await, 404, "not_found");
    assert_error(
        &api.get(&onboarding("enr_nothere"), &key).await,
        404,
        "not_found",
    );
    assert_eq!(
        statuses(ok(&api.get(&onboarding(&id), &key).await)),
        ["not_started"; 5]
    );
}

crate::http_on_both!(a_retried_step_is_replayed_and_counts_once);
async fn a_retried_step_is_replayed_and_counts_once(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.broker().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let mut enroll = body(&qid);
    enroll["onboarding_mode"] = json!("embedded");
    let e = api.enroll(&key, &gid, &enroll).await;
    let id = e.body["id"].as_str().unwrap().to_owned();
    let mut p = json!({"legal_name": "Acme Manufacturing LLC", "ein": "123456789",
                       "entity_type": "c_corporation", "phone": "+1 312 555 0100",
                       "signatory_title": "CFO",
                       "address": {"line1": "1 Main St", "city": "Chicago", "state": "IL", "zip": "60601"}});
    ok(&send(&svc, put(&step(&id, "company_profile"), &key, &p)).await);
    ok(&api
        .post(&step(&id, "business_verification"), &key, &json!({}))
        .await);
    let bank = json!({"routing_number": "011000015", "account_number": "12345678",
                      "account_type": "savings", "holder_name": "Acme"});
    let s = ok(&send(&svc, put(&step(&id, "banking"), &key, &bank)).await).clone();
    assert_eq!(
        s["data"]["account_type"], "savings",
        "snake_case for a broker"
    );

    // The same wrong answer retried with its key counts once: two more
    // wrong answers are allowed before the account is void.
    let wrong = |k: &str| {
        post(
            &step(&id, "banking/verify"),
            &key,
            &json!({"amounts_cents": [1, 2]}),
        )
        .insert_header(("Idempotency-Key", k.to_owned()))
    };
    let first = send(&svc, wrong("verify-1")).await;
    let again = send(&svc, wrong("verify-1")).await;
    assert_eq!((first.status, &first.body), (again.status, &again.body));
    assert_eq!(again.header("idempotent-replay"), Some("true"));
    let s = ok(&send(&svc, wrong("verify-2")).await).clone();
    assert_eq!(s["status"], "pending");
    let s = ok(&send(&svc, wrong("verify-3")).await).clone();
    assert_eq!(s["status"], "action_required");
    assert_eq!(s["errors"][0]["field"], "amounts_cents");
    assert_eq!(s["errors"][0]["code"], "verification_failed");

    // Editing a verified profile sends verification back to the start.
    p["signatory_title"] = json!("CEO");
    ok(&send(&svc, put(&step(&id, "company_profile"), &key, &p)).await);
    let read = ok(&api.get(&onboarding(&id), &key).await).clone();
    assert_eq!(
        statuses(&read)[..3],
        ["completed", "not_started", "action_required"]
    );
}
