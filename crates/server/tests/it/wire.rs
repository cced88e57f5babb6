//! What only a real socket shows: a client that sends part of a body and
//! stalls is answered 408 in the envelope once the body deadline passes
//! (`body_timeout_secs`, here 1 s), and the connection is then closed.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::common::scratch;
use crate::common::serve_process::{ServeDemo, Served};

/// Starts `serve --demo` over a fresh SQLite file with a 1 s body deadline.
fn start(test: &str) -> Served {
    let dir = scratch(test);
    let url = format!("sqlite://{}", dir.join("db.sqlite").display());
    ServeDemo::new(&dir, &url)
        .env("PARTNER_API_BODY_TIMEOUT_SECS", "1")
        .start()
}

/// Reads the whole answer (the server closes the connection).
fn answer(s: &mut TcpStream) -> (u16, serde_json::Value) {
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
    (status, serde_json::from_str(body).unwrap_or_default())
}

#[test]
fn a_stalled_body_is_408_in_the_envelope_after_the_deadline() {
    let server = start("wire_stalled_body");
    let key = server.demo_key();
    let mut s = TcpStream::connect(&server.addr).unwrap();
    let started = Instant::now();
    write!(
        s,
        "POST /v1/groups HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"company_name\":",
        server.addr, key
    )
    .unwrap();
    let (status, body) = answer(&mut s);
    let waited = started.elapsed();
    assert_eq!(status, 408, "{body}");
    assert_eq!(body["error"], "invalid_request", "{body}");
    assert_eq!(body["details"][0]["field"], "body", "{body}");
    assert!(waited >= Duration::from_millis(900), "{waited:?}");
    assert!(waited < Duration::from_secs(15), "{waited:?}");

    // A body that arrives in time, in pieces, is read as usual.
    let mut s = TcpStream::connect(&server.addr).unwrap();
    let body = r#"{"company_name":"Acme","domain":"acme.example","address":{"zip":"60601"}}"#;
    let (first, rest) = body.split_at(10);
    write!(
        s,
        "POST /v1/groups HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{first}",
        server.addr,
        key,
        body.len()
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    s.write_all(rest.as_bytes()).unwrap();
    let (status, created) = answer(&mut s);
    assert_eq!(status, 201, "{created}");
}

/// Sends `head` as-is and reads the answer.
fn raw(server: &Served, head: &[u8]) -> (u16, String, serde_json::Value) {
    let mut s = TcpStream::connect(&server.addr).unwrap();
    s.write_all(head).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut bytes = Vec::new();
    let _ = s.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .parse()
        .unwrap_or(0);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or_default();
    (
        status,
        head.to_owned(),
        serde_json::from_str(body).unwrap_or_default(),
    )
}

#[test]
fn protocol_level_errors_carry_the_envelope() {
    let server = start("wire_protocol_errors");
    let key = server.demo_key();
    let many: String = (0..100).map(|i| format!("X-H{i}: a\r\n")).collect();
    let huge = "a".repeat(140_000);
    let cases: [(&str, Vec<u8>, u16); 4] = [
        (
            "too many headers",
            format!("GET /v1/ping HTTP/1.1\r\nHost: x\r\n{many}\r\n").into_bytes(),
            431,
        ),
        (
            "a huge header",
            format!("GET /v1/ping HTTP/1.1\r\nHost: x\r\nX: {huge}\r\n\r\n").into_bytes(),
            431,
        ),
        (
            "a bad header name",
            b"GET /v1/ping HTTP/1.1\r\nHo st: x\r\n\r\n".to_vec(),
            400,
        ),
        ("not HTTP", b"GARBAGE\r\n\r\n".to_vec(), 400),
    ];
    for (what, head, want) in cases {
        let (status, head, body) = raw(&server, &head);
        assert_eq!(status, want, "{what}: {head}");
        assert_eq!(body["error"], "invalid_request", "{what}: {head} {body}");
        assert!(
            body["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{what}: {body}"
        );
        assert!(
            head.to_ascii_lowercase()
                .contains("content-type: application/json"),
            "{what}: {head}"
        );
        assert!(head.contains("request-id: req_"), "{what}: {head}");
    }

    // Two conflicting lengths are refused too, and a well-formed request
    // on a kept-alive connection is untouched.
    let (status, _, body) = raw(
        &server,
        b"POST /v1/groups HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
    );
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_request")),
        "{body}"
    );
    let ping = format!(
        "GET /v1/ping HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\r\n\
         GET /v1/ping HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n",
        key, key
    );
    let mut s = TcpStream::connect(&server.addr).unwrap();
    s.write_all(ping.as_bytes()).unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    assert_eq!(text.matches("HTTP/1.1 200 OK").count(), 2, "{text}");
}
