//! A minimal HTTP/1.1 client over plain sockets, and a webhook receiver.
//!
//! The suite needs byte-level control (invalid UTF-8, bodies cut short,
//! duplicate JSON keys), so it speaks HTTP itself: one connection per
//! request, `Connection: close`, `Content-Length` or chunked answers.

use std::collections::BTreeMap;
use std::io::{self, BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use serde_json::Value;

/// How long a request may take before the client gives up.
const TIMEOUT: Duration = Duration::from_secs(60);

/// One answer.
#[derive(Debug, Clone)]
pub(crate) struct Response {
    /// The status code.
    pub status: u16,
    /// Header fields, names in lowercase.
    pub headers: Vec<(String, String)>,
    /// The decoded body.
    pub body: Vec<u8>,
}

impl Response {
    /// The body as JSON, if it is.
    pub(crate) fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// The first value of header `name` (lowercase).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The string at a JSON pointer of the body.
    pub(crate) fn text(&self, pointer: &str) -> Option<String> {
        self.json()?
            .pointer(pointer)?
            .as_str()
            .map(ToOwned::to_owned)
    }

    /// Whether the body is the error envelope `{error, message, details?}`
    /// and nothing else.
    pub(crate) fn is_envelope(&self) -> bool {
        self.json().is_some_and(|v| is_envelope(&v))
    }

    /// Whether this is `status` with the envelope and a `details` entry
    /// whose field is `field`.
    pub(crate) fn names_field(&self, status: u16, field: &str) -> bool {
        self.status == status
            && self.is_envelope()
            && self.detail_fields().iter().any(|f| f == field)
    }

    /// The `details[].field` values of an envelope (or `errors[].field`
    /// of a census or elections answer).
    pub(crate) fn detail_fields(&self) -> Vec<String> {
        let Some(v) = self.json() else {
            return Vec::new();
        };
        ["/details", "/errors"]
            .iter()
            .filter_map(|p| v.pointer(p).and_then(Value::as_array))
            .flatten()
            .filter_map(|d| d.get("field").and_then(Value::as_str))
            .map(ToOwned::to_owned)
            .collect()
    }

    /// A short description for a failure note: status, error code and
    /// the fields named (never the body's values).
    pub(crate) fn brief(&self) -> String {
        let code = self.text("/error").unwrap_or_default();
        let fields = self.detail_fields();
        if fields.is_empty() {
            format!("{} {code}", self.status)
        } else {
            format!("{} {code} [{}]", self.status, fields.join(", "))
        }
    }
}

/// Whether `v` is exactly `{error: string, message: string, details?:
/// [{field: string, message: string, index?: integer}]}`.
pub(crate) fn is_envelope(v: &Value) -> bool {
    let Some(map) = v.as_object() else {
        return false;
    };
    let known = map
        .keys()
        .all(|k| matches!(k.as_str(), "error" | "message" | "details"));
    let details_ok = match map.get("details") {
        None => true,
        Some(Value::Array(items)) => items.iter().all(|d| {
            d.get("field").is_some_and(Value::is_string)
                && d.get("message").is_some_and(Value::is_string)
                && d.get("index").is_none_or(Value::is_u64)
        }),
        Some(_) => false,
    };
    known
        && map.get("error").is_some_and(Value::is_string)
        && map.get("message").is_some_and(Value::is_string)
        && details_ok
}

/// A client of one server address with one API key.
#[derive(Debug, Clone)]
pub(crate) struct Client {
    /// The server.
    pub addr: SocketAddr,
    /// The bearer key (may be empty).
    pub key: String,
}

impl Client {
    /// A client of `addr` sending `key`.
    pub(crate) fn new(addr: SocketAddr, key: &str) -> Self {
        Self {
            addr,
            key: key.to_owned(),
        }
    }

    /// `GET path`.
    pub(crate) fn get(&self, path: &str) -> io::Result<Response> {
        self.send("GET", path, &[], None)
    }

    /// `METHOD path` with a JSON body and extra headers.
    pub(crate) fn json(
        &self,
        method: &str,
        path: &str,
        body: &Value,
        headers: &[(&str, &str)],
    ) -> io::Result<Response> {
        let bytes = body.to_string().into_bytes();
        self.send(method, path, headers, Some(("application/json", &bytes)))
    }

    /// `METHOD path` with raw body bytes of `content_type`.
    pub(crate) fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<(&str, &[u8])>,
    ) -> io::Result<Response> {
        let mut stream = self.connect()?;
        let mut head = self.head(method, path, headers);
        if let Some((content_type, bytes)) = body {
            head.push_str(&format!(
                "Content-Type: {content_type}\r\nContent-Length: {}\r\n",
                bytes.len()
            ));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes())?;
        if let Some((_, bytes)) = body {
            stream.write_all(bytes)?;
        }
        stream.flush()?;
        read_response(&mut stream)
    }

    /// A connected socket with the client's timeouts.
    pub(crate) fn connect(&self) -> io::Result<TcpStream> {
        let stream = TcpStream::connect_timeout(&self.addr, Duration::from_secs(5))?;
        stream.set_read_timeout(Some(TIMEOUT))?;
        stream.set_write_timeout(Some(TIMEOUT))?;
        Ok(stream)
    }

    /// The request line and common headers, without the final blank line.
    pub(crate) fn head(&self, method: &str, path: &str, headers: &[(&str, &str)]) -> String {
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nAccept: application/json\r\n",
            self.addr
        );
        if !self.key.is_empty() {
            head.push_str(&format!("Authorization: Bearer {}\r\n", self.key));
        }
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head
    }
}

/// Reads one answer from `stream` (which the server closes after it).
pub(crate) fn read_response(stream: &mut TcpStream) -> io::Result<Response> {
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    parse_response(&raw)
}

/// Parses a whole HTTP/1.1 answer.
pub(crate) fn parse_response(raw: &[u8]) -> io::Result<Response> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("no end of head"))?;
    let head = String::from_utf8_lossy(raw.get(..split).unwrap_or_default()).into_owned();
    let rest = raw.get(split.saturating_add(4)..).unwrap_or_default();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("no status line"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.to_ascii_lowercase().contains("chunked"));
    let length = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok());
    let body = if chunked {
        dechunk(rest)?
    } else if let Some(n) = length {
        rest.get(..n).unwrap_or(rest).to_vec()
    } else {
        rest.to_vec()
    };
    Ok(Response {
        status,
        headers,
        body,
    })
}

fn dechunk(mut rest: &[u8]) -> io::Result<Vec<u8>> {
    let bad = || io::Error::new(io::ErrorKind::InvalidData, "bad chunked body");
    let mut out = Vec::new();
    loop {
        let line_end = rest.windows(2).position(|w| w == b"\r\n").ok_or_else(bad)?;
        let size_text = String::from_utf8_lossy(rest.get(..line_end).unwrap_or_default());
        let size_hex = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_hex, 16).map_err(|_| bad())?;
        let start = line_end.saturating_add(2);
        if size == 0 {
            return Ok(out);
        }
        let end = start.saturating_add(size);
        out.extend_from_slice(rest.get(start..end).ok_or_else(bad)?);
        rest = rest.get(end.saturating_add(2)..).ok_or_else(bad)?;
    }
}

/// One webhook delivery as received.
#[derive(Debug, Clone)]
pub(crate) struct Delivery {
    /// The request path.
    pub path: String,
    /// The `webhook-id` header.
    pub id: String,
}

/// A local HTTP endpoint that answers 200 to every POST and records it.
pub(crate) struct Receiver {
    /// Where it listens.
    pub addr: SocketAddr,
    deliveries: Arc<Mutex<Vec<Delivery>>>,
    stop: Arc<AtomicBool>,
}

impl Receiver {
    /// Starts listening on a free loopback port.
    pub(crate) fn start() -> io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let deliveries = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (seen, halt) = (Arc::clone(&deliveries), Arc::clone(&stop));
        thread::Builder::new()
            .name("webhook-receiver".to_owned())
            .spawn(move || {
                for conn in listener.incoming() {
                    if halt.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let seen = Arc::clone(&seen);
                    let _ = thread::Builder::new().spawn(move || {
                        let _ = receive(conn, &seen);
                    });
                }
            })?;
        Ok(Self {
            addr,
            deliveries,
            stop,
        })
    }

    /// The endpoint URL to register.
    pub(crate) fn url(&self) -> String {
        format!("http://{}/hooks", self.addr)
    }

    /// Every `webhook-id` received so far.
    pub(crate) fn ids(&self) -> BTreeMap<String, usize> {
        let mut ids = BTreeMap::new();
        for d in self
            .deliveries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            *ids.entry(d.id.clone()).or_insert(0) += 1;
        }
        ids
    }

    /// The paths of every delivery with `webhook-id` `id`.
    pub(crate) fn paths_of(&self, id: &str) -> Vec<String> {
        self.deliveries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|d| d.id == id)
            .map(|d| d.path.clone())
            .collect()
    }

    /// How many deliveries arrived.
    pub(crate) fn count(&self) -> usize {
        self.deliveries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
    }
}

/// Reads one request from `conn`, records it, answers 200 and closes.
fn receive(conn: TcpStream, seen: &Mutex<Vec<Delivery>>) -> io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(15)))?;
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut id = String::new();
    let mut length = 0usize;
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let path = line
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        if let Some((k, v)) = trimmed.split_once(':') {
            match k.trim().to_ascii_lowercase().as_str() {
                "webhook-id" => v.trim().clone_into(&mut id),
                "content-length" => length = v.trim().parse().unwrap_or(0),
                _ => {}
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    seen.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(Delivery { path, id });
    let mut conn = conn;
    conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")?;
    conn.flush()
}
