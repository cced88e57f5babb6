//! Webhook endpoints that would reach internal addresses (server-side
//! request forgery): with insecure endpoints off (the default), `PUT
//! /v1/webhook` refuses every URL whose host is, embeds or resolves to a
//! non-public address, in whatever IPv6 or IPv4 spelling, with 400
//! `invalid_request` on `url`; and nothing is registered.

use serde_json::json;
use testkit::db::TestDb;

use crate::http::webhooks::{ping, register};
use crate::http::{TestApp, assert_error, put, send};

crate::http_on_both!(every_spelling_of_an_internal_address_is_refused);
async fn every_spelling_of_an_internal_address_is_refused(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    for url in [
        // IPv4-compatible, NAT64 (well-known and local-use), 6to4, Teredo
        // and IPv4-mapped forms of 127.0.0.1.
        "https://[::127.0.0.1]/h",
        "https://[64:ff9b::7f00:1]/h",
        "https://[64:ff9b:1::7f00:1]/h",
        "https://[2002:7f00:1::1]/h",
        "https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/h",
        "https://[::ffff:127.0.0.1]/h",
        // Site-local, documentation, discard-only.
        "https://[fec0::1]/h",
        "https://[2001:db8::1]/h",
        "https://[100::1]/h",
        // Short and hexadecimal IPv4 spellings, and a name.
        "https://127.1/h",
        "https://0x7f000001/h",
        "https://localhost/h",
        // IPv4 ranges beyond the private ones.
        "https://192.0.0.1/h",
        "https://192.88.99.1/h",
        "https://198.18.0.1/h",
        "https://240.0.0.1/h",
        "https://255.255.255.255/h",
    ] {
        let a = send(&svc, put("/v1/webhook", &key, &json!({"url": url}))).await;
        assert_error(&a, 400, "invalid_request");
        assert_eq!(a.fields(), ["url"], "{url}: {}", a.body);
    }
    // Nothing was registered by the refusals.
    assert_error(&ping(&svc, &key).await, 404, "not_found");

    // 6to4 and NAT64 forms of a public address are public.
    for url in [
        "https://[2002:808:808::1]/h",
        "https://[64:ff9b::808:808]/h",
    ] {
        register(&svc, &key, url).await;
    }
}
