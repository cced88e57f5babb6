//! Webhooks over real HTTP (specification, Events and `PUT /webhook and
//! POST /webhook/test`; contract section 6): registration and rotation,
//! retries after 1 s, 5 s and 25 s, redirects not followed and the attempt
//! timeout. (The signed test `ping`, every event type, no delivery without
//! an endpoint, test and live endpoints kept apart and `GET /v1/events`
//! with its `delivery` are in `webhook_events.rs`.)
//!
//! Every delivery goes to a [`Receiver`]: a small HTTP/1.1 server on
//! 127.0.0.1 that records each request's method, path, headers and exact
//! body bytes and answers with a scripted sequence of statuses. Signatures
//! are checked by [`verify`], written here from the specification's four
//! verification steps (not by re-running the service's signing code).

mod registration;
mod retries;
mod transport;

use std::collections::VecDeque;
use std::io::{Read as _, Write as _};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::test::TestRequest;
use serde_json::{Value, json};

use crate::http::{Answer, TestApp, authed, create_group, get, group_body, put, send};

/// The service of a [`TestApp`].
pub trait Svc<B>:
    Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>
{
}
impl<T, B> Svc<B> for T where
    T: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>
{
}

// ---------------------------------------------------------------------------
// The receiver
// ---------------------------------------------------------------------------

/// One scripted answer of a [`Receiver`].
#[derive(Debug, Clone)]
pub struct Reply {
    /// The status line's code.
    status: u16,
    /// How long to wait (after reading the request) before answering.
    delay: Duration,
    /// A `Location` header.
    location: Option<String>,
    /// The body.
    body: String,
}

impl Reply {
    /// Answers `status` at once.
    pub fn status(status: u16) -> Self {
        Self {
            status,
            delay: Duration::ZERO,
            location: None,
            body: String::new(),
        }
    }

    /// Answers `302 Found` with `Location: to`.
    pub fn redirect(to: &str) -> Self {
        Self {
            location: Some(to.to_owned()),
            ..Self::status(302)
        }
    }

    /// The same answer, with `body`.
    pub fn with_body(self, body: &str) -> Self {
        Self {
            body: body.to_owned(),
            ..self
        }
    }

    /// The same answer, given after `delay`.
    pub fn after(self, delay: Duration) -> Self {
        Self { delay, ..self }
    }

    /// The raw HTTP/1.1 response.
    fn render(&self) -> String {
        let reason = match self.status {
            200 => "OK",
            204 => "No Content",
            302 => "Found",
            500 => "Internal Server Error",
            503 => "Service Unavailable",
            _ => "Status",
        };
        let mut out = format!("HTTP/1.1 {} {reason}\r\nConnection: close\r\n", self.status);
        if let Some(to) = &self.location {
            out.push_str(&format!("Location: {to}\r\n"));
        }
        if self.status != 204 {
            out.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        }
        out.push_str("\r\n");
        if self.status != 204 {
            out.push_str(&self.body);
        }
        out
    }
}

/// A request a [`Receiver`] got.
#[derive(Debug, Clone)]
pub struct Received {
    /// `POST`, …
    pub method: String,
    /// The request target.
    pub path: String,
    /// Header names (lowercase) and values, in order.
    pub headers: Vec<(String, String)>,
    /// The exact body bytes.
    pub body: Vec<u8>,
}

impl Received {
    /// A header's value (name case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

/// What the receiver's threads share.
#[derive(Debug)]
struct Shared {
    /// Answers still to give; the last one repeats.
    script: Mutex<VecDeque<Reply>>,
    /// Requests received, in order.
    seen: Mutex<Vec<Received>>,
}

impl Shared {
    fn next_reply(&self) -> Reply {
        let mut script = self.script.lock().unwrap();
        if script.len() > 1 {
            script.pop_front().unwrap()
        } else {
            script.front().cloned().unwrap()
        }
    }
}

/// A local HTTP/1.1 webhook receiver on 127.0.0.1 (a thread per
/// connection; each connection answers one request and is closed).
#[derive(Debug)]
pub struct Receiver {
    url: String,
    shared: Arc<Shared>,
}

impl Receiver {
    /// A receiver answering `script` in order, repeating its last answer.
    pub fn start(script: Vec<Reply>) -> Self {
        assert!(!script.is_empty());
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(Shared {
            script: Mutex::new(script.into()),
            seen: Mutex::new(Vec::new()),
        });
        let accepting = Arc::clone(&shared);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let shared = Arc::clone(&accepting);
                std::thread::spawn(move || handle(stream, &shared));
            }
        });
        Self {
            url: format!("http://127.0.0.1:{port}/hooks/benefits"),
            shared,
        }
    }

    /// A receiver that always answers `status`.
    pub fn answering(status: u16) -> Self {
        Self::start(vec![Reply::status(status)])
    }

    /// Its URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The requests received so far.
    pub fn received(&self) -> Vec<Received> {
        self.shared.seen.lock().unwrap().clone()
    }

    /// The last request received.
    pub fn last(&self) -> Received {
        self.received().pop().unwrap()
    }
}

/// Reads one request, records it, answers the next scripted reply and
/// closes the connection.
fn handle(mut stream: TcpStream, shared: &Shared) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let Some(request) = read_request(&mut stream) else {
        return;
    };
    let reply = shared.next_reply();
    shared.seen.lock().unwrap().push(request);
    std::thread::sleep(reply.delay);
    let _ = stream.write_all(reply.render().as_bytes());
    let _ = stream.flush();
    let _ = stream.shutdown(Shutdown::Both);
}

/// Reads a request head and then `Content-Length` bytes of body.
fn read_request(stream: &mut TcpStream) -> Option<Received> {
    let mut buf = Vec::new();
    let mut chunk = [0_u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(chunk.get(..n)?);
    };
    let head = std::str::from_utf8(buf.get(..head_end)?).ok()?;
    let mut lines = head.split("\r\n");
    let mut start = lines.next()?.split(' ');
    let method = start.next()?.to_owned();
    let path = start.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf.get(head_end + 4..)?.to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(chunk.get(..n)?);
    }
    body.truncate(length);
    Some(Received {
        method,
        path,
        headers,
        body,
    })
}

// ---------------------------------------------------------------------------
// Verification, from the specification's steps
// ---------------------------------------------------------------------------

/// Standard base64 decoding (padding optional); `None` on a character
/// outside the alphabet.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0_u32, 0_u32);
    for c in text.trim_end_matches('=').bytes() {
        let v = ALPHABET.iter().position(|&a| a == c)?;
        acc = ((acc << 6) | u32::try_from(v).ok()?) & 0xffff;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from((acc >> bits) & 0xff).ok()?);
        }
    }
    Some(out)
}

/// Verifies a delivery as the specification tells a receiver to: the key
/// is the base64 decoding of the secret after `whsec_`; the signed content
/// is `{webhook-id}.{webhook-timestamp}.{raw body}`; any `v1,<base64>`
/// candidate of `webhook-signature` must be its HMAC-SHA256 (compared in
/// constant time); the timestamp must be within 5 minutes of `now`.
pub fn verify(secret: &str, r: &Received, now: i64) -> Result<(), String> {
    let encoded = secret.strip_prefix("whsec_").ok_or("no whsec_ prefix")?;
    let key_bytes = base64_decode(encoded).ok_or("the secret is not base64")?;
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &key_bytes);
    let id = r.header("webhook-id").ok_or("no webhook-id")?;
    let timestamp = r
        .header("webhook-timestamp")
        .ok_or("no webhook-timestamp")?;
    let signatures = r
        .header("webhook-signature")
        .ok_or("no webhook-signature")?;
    let at: i64 = timestamp
        .parse()
        .map_err(|_| format!("bad timestamp {timestamp:?}"))?;
    if (now - at).abs() > 300 {
        return Err(format!("timestamp {at} is more than 5 minutes from {now}"));
    }
    let mut content = format!("{id}.{timestamp}.").into_bytes();
    content.extend_from_slice(&r.body);
    let matched = signatures
        .split(' ')
        .filter_map(|c| c.strip_prefix("v1,"))
        .filter_map(base64_decode)
        .any(|tag| ring::hmac::verify(&key, &content, &tag).is_ok());
    if matched {
        Ok(())
    } else {
        Err(format!("no v1 candidate of {signatures:?} matches"))
    }
}

/// Asserts `r` verifies with `secret` at `now`.
#[track_caller]
pub fn assert_verifies(secret: &str, r: &Received, now: i64) {
    if let Err(why) = verify(secret, r, now) {
        panic!("the delivery does not verify: {why}: {r:?}");
    }
}

/// Whether `s` matches `^whsec_[0-9a-f]{64}$`.
pub fn is_secret(s: &str) -> bool {
    s.strip_prefix("whsec_").is_some_and(|h| {
        h.len() == 64
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// The keys of a JSON object, sorted.
pub fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

/// `T0 + secs` (under a minute) as the API writes timestamps.
pub fn at(secs: i64) -> String {
    assert!((0..60).contains(&secs));
    format!("2026-11-21T13:14:{secs:02}Z")
}

// ---------------------------------------------------------------------------
// API helpers
// ---------------------------------------------------------------------------

/// `PUT /v1/webhook {url}` (asserting 200); the secret.
pub async fn register<B: MessageBody>(svc: &impl Svc<B>, key: &str, url: &str) -> String {
    let a = send(svc, put("/v1/webhook", key, &json!({"url": url}))).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["url"], url, "{}", a.body);
    let secret = a.body["secret"].as_str().unwrap().to_owned();
    assert!(is_secret(&secret), "{secret}");
    secret
}

/// `POST /v1/webhook/test` without a body.
pub async fn ping<B: MessageBody>(svc: &impl Svc<B>, key: &str) -> Answer {
    send(
        svc,
        authed(TestRequest::post().uri("/v1/webhook/test"), key),
    )
    .await
}

/// `GET /v1/events/{id}` (asserting 200).
pub async fn event<B: MessageBody>(svc: &impl Svc<B>, key: &str, id: &str) -> Value {
    let a = send(svc, get(&format!("/v1/events/{id}"), key)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    a.body
}

/// The `delivery` object of event `id`.
pub async fn delivery<B: MessageBody>(svc: &impl Svc<B>, key: &str, id: &str) -> Value {
    event(svc, key, id).await["delivery"].clone()
}

/// A broker group with a one-member census whose comparison has run: one
/// `census.processed` event; the group id.
pub async fn processed_census<B: MessageBody>(
    app: &TestApp,
    svc: &impl Svc<B>,
    key: &str,
    domain: &str,
) -> String {
    let g = create_group(svc, key, &group_body(domain)).await;
    let gid = g["id"].as_str().unwrap().to_owned();
    let census = json!({"members": [{"external_id": "E1", "dob": "1988-04-12", "zip": "60601"}]});
    let a = send(svc, put(&format!("/v1/groups/{gid}/census"), key, &census)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(app.run_jobs().await, 1);
    gid
}

/// The id of the newest event of `key`'s partner and mode.
pub async fn newest_event<B: MessageBody>(svc: &impl Svc<B>, key: &str) -> String {
    let a = send(svc, get("/v1/events?limit=1", key)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    a.body["events"][0]["id"].as_str().unwrap().to_owned()
}
