//! Isolation (contract section 2): a group of another partner or of the
//! other mode is a 404 exactly like an unknown one, on reads, writes and
//! lists.

use domain::mode::Mode;
use domain::partner::PartnerKind;
use serde_json::json;
use testkit::db::TestDb;

use crate::http::{TestApp, assert_error, create_group, get, group_body, patch, send};

/// Keys of three scopes: partner A's test and live modes, partner B's
/// test mode.
struct Keys {
    a_test: String,
    a_live: String,
    b_test: String,
}

impl Keys {
    async fn new(app: &TestApp) -> Self {
        let a = app.partner("Partner A", PartnerKind::Broker, true).await;
        let b = app.partner("Partner B", PartnerKind::Broker, false).await;
        Self {
            a_test: app.key(&a, Mode::Test).await,
            a_live: app.key(&a, Mode::Live).await,
            b_test: app.key(&b, Mode::Test).await,
        }
    }
}

crate::http_on_both!(another_partner_or_mode_cannot_see_a_group);
async fn another_partner_or_mode_cannot_see_a_group(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let Keys {
        a_test,
        a_live,
        b_test,
    } = Keys::new(&app).await;

    let group = create_group(&svc, &a_test, &group_body("isolated.com")).await;
    let id = group["id"].as_str().unwrap();
    let path = format!("/v1/groups/{id}");
    let unknown = send(&svc, get("/v1/groups/grp_000000000000", &b_test)).await;
    assert_error(&unknown, 404, "not_found");

    for key in [&b_test, &a_live] {
        let r = send(&svc, get(&path, key)).await;
        assert_error(&r, 404, "not_found");
        // Indistinguishable from a group that does not exist.
        assert_eq!(r.body, unknown.body);
        let w = send(&svc, patch(&path, key, &json!({"company_name": "Stolen"}))).await;
        assert_error(&w, 404, "not_found");
        assert_eq!(w.body, unknown.body);
        let list = send(&svc, get("/v1/groups", key)).await;
        assert_eq!(list.status, 200, "{}", list.body);
        assert_eq!(list.body["groups"], json!([]), "{}", list.body);
        assert_eq!(list.body["next_cursor"], json!(null));
    }

    // The owner still sees it unchanged.
    let own = send(&svc, get(&path, &a_test)).await;
    assert_eq!(own.status, 200, "{}", own.body);
    assert_eq!(own.body, group);
    let list = send(&svc, get("/v1/groups", &a_test)).await;
    assert_eq!(list.body["groups"], json!([group]));
}

crate::http_on_both!(concurrent_reads_of_one_group_keep_their_scopes);
/// The owner and two others read one group at once: on PostgreSQL the
/// reads go out together in one statement, which finds the row by id, and
/// each answer still holds to its own key's partner and mode.
async fn concurrent_reads_of_one_group_keep_their_scopes(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let Keys {
        a_test,
        a_live,
        b_test,
    } = Keys::new(&app).await;
    let group = create_group(&svc, &a_test, &group_body("together.com")).await;
    let path = format!("/v1/groups/{}", group["id"].as_str().unwrap());

    let keys = [&a_test, &b_test, &a_live].repeat(8);
    let reads = keys.iter().map(|key| send(&svc, get(&path, key)));
    let answers = futures_util::future::join_all(reads).await;
    for (key, r) in keys.iter().zip(&answers) {
        if *key == &a_test {
            assert_eq!(r.status, 200, "{}", r.body);
            assert_eq!(r.body, group);
        } else {
            assert_error(r, 404, "not_found");
        }
    }
}

crate::http_on_both!(unknown_or_malformed_group_ids_are_not_found);
async fn unknown_or_malformed_group_ids_are_not_found(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    for id in [
        "grp_000000000000",
        "grp_ffffffffffff",
        "grp_XYZ",
        "GRP_000000000000",
        "qt_000000000000",
        "grp_0000000000000",
        "nope",
        "%20",
    ] {
        let path = format!("/v1/groups/{id}");
        let a = send(&svc, get(&path, &key)).await;
        assert_error(&a, 404, "not_found");
        let a = send(&svc, patch(&path, &key, &json!({"company_name": "X"}))).await;
        assert_error(&a, 404, "not_found");
    }
}
