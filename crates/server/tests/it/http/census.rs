//! `PUT /v1/groups/{id}/census` and `GET /v1/groups/{id}/census` (contract
//! section 3, Census; section 9, dry run): per-row errors by index, the
//! broker date-of-birth rule, upsert by external id then email, atomic
//! replace with its market-comparison job, the census-write limit.

use domain::ids::GroupId;
use domain::job::JobKind;
use domain::mode::Mode;
use http_api::Limits;
use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::{
    TestApp, assert_error, create_group, get, put, put_csv, row_errors, scope, send,
};

fn member(ext: &str, dob: &str, zip: &str) -> Value {
    json!({"external_id": ext, "first_name": "A", "last_name": ext, "dob": dob, "zip": zip})
}

fn census_path(g: &str) -> String {
    format!("/v1/groups/{g}/census")
}

crate::http_on_both!(a_census_write_reports_rows_and_starts_the_comparison);
async fn a_census_write_reports_rows_and_starts_the_comparison(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (partner, key) = app.broker().await;
    let g = create_group(&svc, &key, &json!({"company_name": "A", "domain": "a.com"})).await;
    let gid = g["id"].as_str().unwrap();
    let body = json!({"members": [
        member("E1", "1988-04-12", "60601"),
        {"external_id": "E2", "dob": "1979-11-02", "zip": "60614",
         "dependents": [{"relationship": "spouse", "dob": "1981-05-20", "nickname": "x"}]},
        {"external_id": "E3", "age": 40, "zip": "60614"},
        member("E4", "1980-01-01", "606"),
        {"external_id": "E5", "dob": "1980-01-01", "zip": "60601", "shoe_size": 9},
        member("E6", "1990-02-02", "60601"),
    ]});
    let a = send(&svc, put(&census_path(gid), &key, &body)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["group_id"], gid);
    assert_eq!(
        (
            a.body["received"].as_u64(),
            a.body["accepted"].as_u64(),
            a.body["member_count"].as_u64()
        ),
        (Some(6), Some(2), Some(2))
    );
    assert_eq!(a.body["rates"], "pending");
    let errors = row_errors(&a);
    assert_eq!(
        errors,
        [
            ("members[1].dependents[0].nickname".to_owned(), 1),
            ("members[2].dob".to_owned(), 2),
            ("members[3].zip".to_owned(), 3),
            ("members[4].shoe_size".to_owned(), 4),
        ]
    );
    let charged = a.header("ratelimit").unwrap();
    assert!(charged.contains("\"census_writes\";r=19"), "{charged}");

    let group = send(&svc, get(&format!("/v1/groups/{gid}"), &key)).await;
    assert_eq!(group.body["status"], "census_received");
    assert_eq!(group.body["census_member_count"], 2);
    let gid_typed = GroupId::parse(gid).unwrap();
    let job = app
        .db
        .stores
        .jobs
        .open_job(
            &scope(&partner, Mode::Test),
            &gid_typed,
            JobKind::MarketComparison,
        )
        .await
        .unwrap();
    assert!(job.is_some(), "the write enqueues the market comparison");

    let page = send(&svc, get(&census_path(gid), &key)).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.body["member_count"], 2);
    assert!(page.body["next_cursor"].is_null());
    let members = page.body["members"].as_array().unwrap();
    assert_eq!(members.len(), 2);
    for m in members {
        assert!(m["id"].as_str().unwrap().starts_with("mem_"), "{m}");
        assert!(m["external_id"] == "E1" || m["external_id"] == "E6", "{m}");
        assert_eq!(m["zip"], "60601");
    }
}

crate::http_on_both!(rewrites_keep_ids_by_external_id_then_email);
async fn rewrites_keep_ids_by_external_id_then_email(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let g = create_group(&svc, &key, &json!({"company_name": "A", "domain": "a.com"})).await;
    let gid = g["id"].as_str().unwrap();
    let first = json!({"members": [
        member("E1", "1988-04-12", "60601"),
        {"email": "Bo@Acme.com", "dob": "1979-11-02", "zip": "60614"},
        member("E3", "1990-02-02", "60601"),
    ]});
    assert_eq!(
        send(&svc, put(&census_path(gid), &key, &first))
            .await
            .status,
        200
    );
    let ids = |a: &crate::http::Answer| -> Vec<(String, String)> {
        a.body["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let k = m["external_id"]
                    .as_str()
                    .or(m["email"].as_str())
                    .unwrap()
                    .to_lowercase();
                (k, m["id"].as_str().unwrap().to_owned())
            })
            .collect()
    };
    let before = ids(&send(&svc, get(&census_path(gid), &key)).await);
    app.clock.advance(1);
    let second = json!({"members": [
        {"external_id": "E1", "dob": "1988-04-12", "zip": "60602"},
        {"email": "bo@acme.com", "dob": "1979-11-02", "zip": "60614"},
        member("E9", "1991-03-03", "60601"),
    ]});
    let a = send(&svc, put(&census_path(gid), &key, &second)).await;
    assert_eq!(a.body["member_count"], 3, "{}", a.body);
    let after = ids(&send(&svc, get(&census_path(gid), &key)).await);
    let id_of = |list: &[(String, String)], k: &str| {
        list.iter()
            .find(|(key, _)| key == k)
            .map(|(_, id)| id.clone())
    };
    assert_eq!(id_of(&after, "e1"), id_of(&before, "e1"));
    assert_eq!(id_of(&after, "bo@acme.com"), id_of(&before, "bo@acme.com"));
    assert!(id_of(&after, "e3").is_none(), "absent members are removed");
    assert!(id_of(&after, "e9").is_some());
}

crate::http_on_both!(no_valid_row_is_a_400_and_changes_nothing);
async fn no_valid_row_is_a_400_and_changes_nothing(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let g = create_group(&svc, &key, &json!({"company_name": "A", "domain": "a.com"})).await;
    let gid = g["id"].as_str().unwrap();
    let ok = json!({"members": [member("E1", "1988-04-12", "60601")]});
    assert_eq!(
        send(&svc, put(&census_path(gid), &key, &ok)).await.status,
        200
    );
    let bad = json!({"members": [{"external_id": "X1", "zip": "60601"}, {"external_id": "X2", "dob": "1990-01-01"}]});
    let a = send(&svc, put(&census_path(gid), &key, &bad)).await;
    assert_error(&a, 400, "invalid_request");
    let details = a.body["details"].as_array().unwrap();
    assert!(
        details
            .iter()
            .any(|d| d["field"] == "members[0].dob" && d["index"] == 0),
        "{}",
        a.body
    );
    assert!(
        details
            .iter()
            .any(|d| d["field"] == "members[1].zip" && d["index"] == 1),
        "{}",
        a.body
    );
    let group = send(&svc, get(&format!("/v1/groups/{gid}"), &key)).await;
    assert_eq!(group.body["census_member_count"], 1);

    // Seven dependents, a body without `members`, and members of the wrong type.
    let deps: Vec<Value> = (0..7)
        .map(|_| json!({"relationship": "child", "dob": "2015-01-01"}))
        .collect();
    let seven = json!({"members": [{"external_id": "E1", "dob": "1988-04-12", "zip": "60601", "dependents": deps}]});
    let a = send(&svc, put(&census_path(gid), &key, &seven)).await;
    assert_error(&a, 400, "invalid_request");
    assert!(
        a.fields()
            .iter()
            .any(|f| f.starts_with("members[0].dependents")),
        "{}",
        a.body
    );
    let a = send(&svc, put(&census_path(gid), &key, &json!({"rows": []}))).await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["rows", "members"]);
    let a = send(&svc, put(&census_path(gid), &key, &json!({"members": {}}))).await;
    assert_eq!(a.fields(), ["members"]);
}

crate::http_on_both!(a_dry_run_answers_the_same_and_changes_nothing);
async fn a_dry_run_answers_the_same_and_changes_nothing(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (partner, key) = app.broker().await;
    let g = create_group(&svc, &key, &json!({"company_name": "A", "domain": "a.com"})).await;
    let gid = g["id"].as_str().unwrap();
    let body =
        json!({"members": [member("E1", "1988-04-12", "60601"), member("E2", "x", "60601")]});
    let dry = send(
        &svc,
        put(&format!("{}?dry_run=true", census_path(gid)), &key, &body),
    )
    .await;
    assert_eq!(dry.status, 200, "{}", dry.body);
    assert!(!dry.header("ratelimit").unwrap().contains("census_writes"));
    let group = send(&svc, get(&format!("/v1/groups/{gid}"), &key)).await;
    assert_eq!(group.body["status"], "created");
    assert_eq!(group.body["census_member_count"], 0);
    let job = app
        .db
        .stores
        .jobs
        .open_job(
            &scope(&partner, Mode::Test),
            &GroupId::parse(gid).unwrap(),
            JobKind::MarketComparison,
        )
        .await
        .unwrap();
    assert!(job.is_none());
    let real = send(&svc, put(&census_path(gid), &key, &body)).await;
    assert_eq!(real.body, dry.body);
    let a = send(
        &svc,
        put(&format!("{}?dry_run=maybe", census_path(gid)), &key, &body),
    )
    .await;
    assert_eq!(a.fields(), ["dry_run"]);
}

crate::http_on_both!(hr_platforms_use_camel_case_and_may_send_ages);
async fn hr_platforms_use_camel_case_and_may_send_ages(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.hr_platform().await;
    let g = create_group(&svc, &key, &json!({"companyName": "A", "domain": "a.com"})).await;
    let gid = g["id"].as_str().unwrap();
    let body = json!({"members": [
        {"externalId": "E1", "firstName": "Ana", "age": 41, "zip": "60601", "sexAtBirth": "female"},
        {"externalId": "E2", "age": 30, "zip": "6060"},
    ]});
    let a = send(&svc, put(&census_path(gid), &key, &body)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["memberCount"], 1);
    assert_eq!(a.body["groupId"], gid);
    assert_eq!(a.body["errors"][0]["field"], "members[1].zip");
    let page = send(&svc, get(&census_path(gid), &key)).await;
    let m = &page.body["members"][0];
    assert_eq!(
        (m["externalId"].as_str(), m["sexAtBirth"].as_str()),
        (Some("E1"), Some("female"))
    );
    assert!(page.body.get("nextCursor").is_some());
}

crate::http_on_both!(census_writes_are_limited_and_scoped);
async fn census_writes_are_limited_and_scoped(db: TestDb) {
    let app = TestApp::with_limits(
        db,
        Limits {
            census_writes_per_minute: 2,
            ..Limits::default()
        },
    );
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let (_, other) = app.broker().await;
    let g = create_group(&svc, &key, &json!({"company_name": "A", "domain": "a.com"})).await;
    let gid = g["id"].as_str().unwrap();
    let body = json!({"members": [member("E1", "1988-04-12", "60601")]});
    for _ in 0..2 {
        assert_eq!(
            send(&svc, put(&census_path(gid), &key, &body)).await.status,
            200
        );
    }
    let a = send(&svc, put(&census_path(gid), &key, &body)).await;
    assert_error(&a, 429, "rate_limited");
    assert!(a.header("retry-after").unwrap().parse::<u32>().unwrap() >= 1);
    // Another partner sees no such group, on write and read.
    let a = send(&svc, put(&census_path(gid), &other, &body)).await;
    assert_error(&a, 404, "not_found");
    let a = send(&svc, get(&census_path(gid), &other)).await;
    assert_error(&a, 404, "not_found");
}

crate::http_on_both!(census_pages_walk_and_cursors_stay_with_their_group);
async fn census_pages_walk_and_cursors_stay_with_their_group(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let g1 = create_group(&svc, &key, &json!({"company_name": "A", "domain": "a.com"})).await;
    let g2 = create_group(&svc, &key, &json!({"company_name": "B", "domain": "b.com"})).await;
    let (g1, g2) = (g1["id"].as_str().unwrap(), g2["id"].as_str().unwrap());
    let members: Vec<Value> = (0..5)
        .map(|i| member(&format!("E{i}"), "1980-01-01", "60601"))
        .collect();
    let body = json!({"members": members});
    assert_eq!(
        send(&svc, put(&census_path(g1), &key, &body)).await.status,
        200
    );
    assert_eq!(
        send(&svc, put(&census_path(g2), &key, &body)).await.status,
        200
    );
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("{}?limit=2&cursor={c}", census_path(g1)),
            None => format!("{}?limit=2", census_path(g1)),
        };
        let a = send(&svc, get(&path, &key)).await;
        assert_eq!(a.status, 200, "{}", a.body);
        for m in a.body["members"].as_array().unwrap() {
            seen.push(m["id"].as_str().unwrap().to_owned());
        }
        match a.body["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 5);
    let first = send(&svc, get(&format!("{}?limit=2", census_path(g1)), &key)).await;
    let c = first.body["next_cursor"].as_str().unwrap();
    let a = send(&svc, get(&format!("{}?cursor={c}", census_path(g2)), &key)).await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["cursor"]);
}

crate::http_on_both!(a_csv_census_is_one_row_per_person_and_counts_employees);
async fn a_csv_census_is_one_row_per_person_and_counts_employees(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let g = create_group(&svc, &key, &json!({"company_name": "A", "domain": "a.com"})).await;
    let gid = g["id"].as_str().unwrap();
    let text = "external_id,first_name,last_name,dob,zip,relationship,employee_external_id\n\
                E1,Ana,Diaz,1988-04-12,60601,,\n\
                ,Leo,Diaz,2016-09-30,,child,E1\n\
                E2,Ben,Okafor,1979-11-02,60614,,\n";
    let a = send(&svc, put_csv(&census_path(gid), &key, text)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        (
            a.body["received"].as_u64(),
            a.body["accepted"].as_u64(),
            a.body["member_count"].as_u64()
        ),
        (Some(2), Some(2), Some(2))
    );
    // The event counts what the reply counts: employees.
    app.run_jobs().await;
    let events = send(&svc, get("/v1/events?limit=200", &key)).await;
    let processed = events.body["events"]
        .as_array()
        .and_then(|all| {
            all.iter()
                .find(|e| e["type"] == "census.processed" && e["data"]["group_id"] == gid)
        })
        .unwrap_or_else(|| panic!("no census.processed event: {}", events.body));
    assert_eq!(
        (
            &processed["data"]["received"],
            &processed["data"]["accepted"]
        ),
        (&json!(2), &json!(2)),
        "{processed}"
    );
    let page = send(&svc, get(&census_path(gid), &key)).await;
    let ana = page.body["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["external_id"] == "E1")
        .unwrap()
        .clone();
    assert_eq!(
        ana["dependents"],
        json!([{"relationship": "child", "name": "Leo Diaz", "dob": "2016-09-30"}])
    );

    // Errors point at CSV data rows (0-based).
    let text = "external_id,dob,zip,relationship,employee_external_id\n\
                E1,1988-04-12,60601,,\n\
                ,,,child,E1\n\
                E2,1979-11-02,606,,\n\
                ,2015-01-01,,child,E7\n\
                E3,1990-01-01,60601,,\n";
    let a = send(&svc, put_csv(&census_path(gid), &key, text)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let errors = row_errors(&a);
    assert_eq!(
        errors,
        [
            ("members[1].dob".to_owned(), 1),
            ("members[2].zip".to_owned(), 2),
            ("members[3].employee_external_id".to_owned(), 3),
        ]
    );
    assert_eq!(a.body["member_count"], 1, "{}", a.body);
    assert_eq!(
        (a.body["received"].as_u64(), a.body["accepted"].as_u64()),
        (Some(3), Some(1))
    );

    // An unknown column, and a CSV whose every row is invalid.
    let a = send(
        &svc,
        put_csv(&census_path(gid), &key, "external_id,shoe_size\nE1,9\n"),
    )
    .await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["shoe_size"]);
    let a = send(
        &svc,
        put_csv(
            &census_path(gid),
            &key,
            "external_id,dob,zip\nE1,1988-04-12,1\n",
        ),
    )
    .await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["members[0].zip"]);
    let group = send(&svc, get(&format!("/v1/groups/{gid}"), &key)).await;
    assert_eq!(group.body["census_member_count"], 1);
}
