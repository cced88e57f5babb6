//! Deliveries a reference verifier accepts, and no delivery without an endpoint.

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::webhook_receiver::{Receiver, Verifier};
use crate::common::{BIN, scratch};
use crate::webhooks_serve::{
    PATIENCE, SEALING_KEY, assert_delivery_shape, serve, sqlite_url, wait_arrivals,
};

/// A ping and a `census.processed` reach a real endpoint, each verifying
/// with the reference library (a tampered body does not); after rotation
/// only the new secret verifies.
#[test]
fn deliveries_verify_with_the_standardwebhooks_package() {
    let Some(verifier) = Verifier::find() else {
        return;
    };
    let receiver = Receiver::start(&[], 204);
    let dir = scratch("webhooks_serve_verify");
    let server = serve(&dir, &sqlite_url(&dir), "1.0", "serve");
    let key = server.demo_key();
    let secret = server.register(&key, &receiver.url());

    let ping = server.ping(&key);
    assert_eq!(ping["delivered"], true, "{ping}");
    assert_eq!(ping["status_code"], 204, "{ping}");
    let ping_id = ping["id"].as_str().unwrap().to_owned();
    assert_eq!(
        receiver.of(&ping_id).len(),
        1,
        "the first attempt is made before answering"
    );

    // Go-live readiness now sees the delivered signed ping.
    let readiness = Command::new(BIN)
        .args(["partner", "readiness", &server.demo_partner(), "--json"])
        .args(["--database-url", &sqlite_url(&dir)])
        .current_dir(&dir)
        .env("PARTNER_API_SECRETS__SEALING_KEY", SEALING_KEY)
        .output()
        .unwrap();
    assert!(readiness.status.success(), "{readiness:?}");
    let readiness: Value = serde_json::from_slice(&readiness.stdout).unwrap();
    assert_eq!(
        readiness["test_mode"]["webhook_pings_delivered"], 1,
        "{readiness}"
    );
    assert!(
        !readiness["missing"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m == "webhook_ping"),
        "{readiness}"
    );

    let gid = server.group_with_census(&key, 1);
    let processed = server.census_processed(&key, &gid);
    let processed_id = processed["id"].as_str().unwrap().to_owned();
    let settled = server.settled(&key, &processed_id, PATIENCE);
    assert_eq!(settled["delivery"]["state"], "delivered", "{settled}");
    assert_eq!(settled["delivery"]["attempts"], 1, "{settled}");
    assert_eq!(settled["delivery"]["last_status_code"], 204, "{settled}");

    let arrivals = receiver.arrivals();
    let delivered = receiver.of(&processed_id);
    assert_eq!(delivered.len(), 1, "{arrivals:?}");
    let body = delivered[0].json();
    assert_eq!(body["type"], "census.processed", "{body}");
    assert_eq!(
        body["data"],
        json!({"group_id": gid, "received": 1, "accepted": 1, "member_count": 1, "error_count": 0}),
        "{body}"
    );
    // The delivered envelope is the one the API shows, minus `delivery`.
    let mut shown = settled.clone();
    shown.as_object_mut().unwrap().remove("delivery");
    assert_eq!(body, shown);
    assert_eq!(arrivals.len(), 2, "{arrivals:?}");
    for arrival in &arrivals {
        assert_delivery_shape(arrival);
        verifier.check(&secret, arrival);
    }

    // Rotation: a new secret signs from now on; the old one no longer verifies.
    let rotated = server.register(&key, &receiver.url());
    assert_ne!(rotated, secret);
    let again = server.ping(&key);
    assert_eq!(again["delivered"], true, "{again}");
    let after = receiver.of(again["id"].as_str().unwrap());
    assert_eq!(after.len(), 1);
    assert_delivery_shape(&after[0]);
    verifier.check(&rotated, &after[0]);
    assert!(
        verifier.verify(&secret, &after[0], &after[0].body).is_err(),
        "a delivery after rotation verifies with the old secret"
    );
}

/// Events due while no endpoint is registered end `no_endpoint`, and
/// registering later does not deliver them.
#[test]
fn no_endpoint_no_delivery() {
    let dir = scratch("webhooks_serve_no_endpoint");
    let receiver = Receiver::start(&[], 204);
    let server = serve(&dir, &sqlite_url(&dir), "0.05", "serve");
    let key = server.demo_key();

    let (status, body) = server.call("POST", "/v1/webhook/test", &key, None);
    assert_eq!(
        (status, body["error"].as_str()),
        (404, Some("not_found")),
        "{body}"
    );

    let gid = server.group_with_census(&key, 3);
    let processed = server.census_processed(&key, &gid);
    let id = processed["id"].as_str().unwrap().to_owned();
    let event = server.settled(&key, &id, PATIENCE);
    assert_eq!(event["delivery"]["state"], "no_endpoint", "{event}");
    assert_eq!(event["delivery"]["next_attempt_at"], Value::Null, "{event}");

    // Registering afterwards does not revive it.
    server.register(&key, &receiver.url());
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(receiver.count(), 0, "{:?}", receiver.arrivals());
    assert_eq!(server.event(&key, &id)["delivery"]["state"], "no_endpoint");
    for event in server.events(&key) {
        assert_eq!(event["delivery"]["state"], "no_endpoint", "{event}");
    }

    // The receiver does work: a ping now reaches it, and only the ping.
    let ping = server.ping(&key);
    assert_eq!(ping["delivered"], true, "{ping}");
    let arrivals = wait_arrivals(&receiver, 1, PATIENCE);
    assert_eq!(arrivals.len(), 1, "{arrivals:?}");
    assert_eq!(arrivals[0].id(), ping["id"].as_str().unwrap());
}
