//! The partner's side of a browser test: plain blocking HTTP/1.1 calls to
//! a running `serve` (one socket per call, `Connection: close`), and the
//! group → census → quote sequence most journeys start with.

use std::io::{Read as _, Write as _};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::serve_process::Served;

/// One request with `key` over a plain socket; returns (status, JSON body
/// or null).
pub fn call(
    server: &Served,
    key: &str,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    let mut s = std::net::TcpStream::connect(&server.addr).unwrap();
    let body = body.map(Value::to_string).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        server.addr,
        body.len()
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text)
        .unwrap_or_else(|e| panic!("{method} {path}: {e}; read so far: {text:?}"));
    let status = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, serde_json::from_str(body).unwrap_or_default())
}

/// The three employees (one with a child) of the groups these tests
/// quote.
pub fn census() -> Value {
    json!({"members": [
        {"external_id": "E1", "first_name": "Ana", "last_name": "Diaz", "dob": "1988-04-12",
         "zip": "60601", "dependents": [{"relationship": "child", "name": "Leo", "dob": "2016-09-30"}]},
        {"external_id": "E2", "first_name": "Ben", "last_name": "Okafor", "dob": "1979-11-02", "zip": "60614"},
        {"external_id": "E3", "first_name": "Cy", "last_name": "Moss", "dob": "1992-01-20", "zip": "60601"},
    ]})
}

/// Creates a group of `company` at `domain` in Chicago with `key`
/// (snake_case); returns its id.
pub fn created_group(server: &Served, key: &str, company: &str, domain: &str) -> String {
    let (status, group) = call(
        server,
        key,
        "POST",
        "/v1/groups",
        Some(&json!({"company_name": company, "domain": domain,
            "address": {"line1": "1 Main St", "city": "Chicago", "state": "IL", "zip": "60601"}})),
    );
    assert_eq!(status, 201, "{group}");
    group["id"].as_str().unwrap().to_owned()
}

/// Creates a group of `company` at `domain` with `key` (snake_case),
/// sends [`census`] and creates a quote, retried while the server's
/// worker prices the market comparison; returns (group id, quote).
pub fn quoted_group(server: &Served, key: &str, company: &str, domain: &str) -> (String, Value) {
    let gid = created_group(server, key, company, domain);
    let (status, body) = call(
        server,
        key,
        "PUT",
        &format!("/v1/groups/{gid}/census"),
        Some(&census()),
    );
    assert_eq!(status, 200, "{body}");
    let started = Instant::now();
    loop {
        let (status, body) = call(
            server,
            key,
            "POST",
            &format!("/v1/groups/{gid}/quotes"),
            Some(&json!({})),
        );
        if status == 201 {
            return (gid, body);
        }
        assert_eq!(
            (status, &body["error"]),
            (409, &json!("rates_pending")),
            "{body}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "rates still pending after 120 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}
