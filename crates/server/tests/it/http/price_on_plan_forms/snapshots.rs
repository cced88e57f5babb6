//! Snapshots pinning both answer forms and both pending forms.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::TestApp;
use crate::http::price_on_plan::{census, examples, is_id, market_plans, price_ok};

// ---------------------------------------------------------- snapshots --

/// Where snapshot `name` is kept.
fn snapshot_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/http/snapshots")
        .join(format!("{name}.json"))
}

/// Whether `s` is an RFC 3339 UTC timestamp of second precision.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 20
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

/// Masks ids and timestamps.
fn mask(v: &mut Value) {
    match v {
        Value::String(s) if is_id(s, "qt_") => *s = "qt_<id>".to_owned(),
        Value::String(s) if is_id(s, "grp_") => *s = "grp_<id>".to_owned(),
        Value::String(s) if is_timestamp(s) => *s = "<timestamp>".to_owned(),
        Value::Array(items) => items.iter_mut().for_each(mask),
        Value::Object(map) => map.values_mut().for_each(mask),
        _ => {}
    }
}

/// Compares `body` (masked, pretty-printed) with snapshot `name`, or
/// rewrites the snapshot when `UPDATE_SNAPSHOTS=1`.
fn snapshot(name: &str, body: &Value) {
    let mut masked = body.clone();
    mask(&mut masked);
    let got = format!("{}\n", serde_json::to_string_pretty(&masked).unwrap());
    let path = snapshot_path(name);
    if std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with UPDATE_SNAPSHOTS=1 to write it",
            path.display()
        )
    });
    if want != got {
        let line = want
            .lines()
            .zip(got.lines())
            .position(|(w, g)| w != g)
            .unwrap_or_else(|| want.lines().count().min(got.lines().count()));
        let around = |s: &str| {
            s.lines()
                .skip(line.saturating_sub(3))
                .take(7)
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!(
            "snapshot {name} differs at line {} (UPDATE_SNAPSHOTS=1 rewrites it)\n--- want\n{}\n--- got\n{}",
            line + 1,
            around(&want),
            around(&got)
        );
    }
}

crate::http_on_both!(snapshots_pin_both_answer_forms);
async fn snapshots_pin_both_answer_forms(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, broker) = app.broker().await;
    let (_, hr) = app.hr_platform().await;
    let a = price_ok(&svc, &broker, &examples(), 201).await;
    snapshot("price_on_plan_broker", &a.body);
    let a = price_ok(&svc, &hr, &examples(), 201).await;
    snapshot("price_on_plan_hr", &a.body);
    let market = json!({"census": census(), "marketPlans": market_plans()});
    let a = price_ok(&svc, &hr, &market, 201).await;
    snapshot("price_on_plan_hr_base_from_market", &a.body);
}

crate::http_on_both!(snapshots_pin_both_pending_forms);
async fn snapshots_pin_both_pending_forms(db: TestDb) {
    let app = TestApp::with_wait_budget(db, Duration::ZERO);
    let svc = app.service().await;
    let (_, broker) = app.broker().await;
    let (_, hr) = app.hr_platform().await;
    let a = price_ok(&svc, &broker, &examples(), 202).await;
    snapshot("price_on_plan_pending_broker", &a.body);
    let a = price_ok(&svc, &hr, &examples(), 202).await;
    snapshot("price_on_plan_pending_hr", &a.body);
}
