//! A real local webhook receiver for the tests that run `serve`: an
//! HTTP/1.1 endpoint on 127.0.0.1 that records every request and answers
//! scripted statuses, and the independent verifier (the PyPI
//! `standardwebhooks` package) that checks each delivery's signature.

use std::collections::VecDeque;
use std::io::{Read as _, Write as _};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

// ---------------------------------------------------------------------
// The receiver
// ---------------------------------------------------------------------

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Arrival {
    pub method: String,
    pub target: String,
    /// Names lowercased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The exact body bytes.
    pub body: Vec<u8>,
    /// When the whole request had been read.
    pub at: Instant,
    /// The status the receiver answered.
    pub answered: u16,
}

impl Arrival {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("no {name} header in {self:?}"))
    }

    pub fn id(&self) -> &str {
        self.header("webhook-id")
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "a delivery body is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }
}

/// What the receiver answers and what it got.
pub struct Inbox {
    /// Statuses for the next requests, in order.
    pub script: VecDeque<u16>,
    /// The status once the script is used up.
    pub otherwise: u16,
    pub arrivals: Vec<Arrival>,
}

/// A real HTTP/1.1 endpoint on 127.0.0.1: one thread accepting, one per
/// connection, every answer `Connection: close`.
pub struct Receiver {
    pub addr: SocketAddr,
    pub inbox: Arc<Mutex<Inbox>>,
}

impl Receiver {
    /// Answers `script` in order, then `otherwise` for ever.
    pub fn start(script: &[u16], otherwise: u16) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let inbox = Arc::new(Mutex::new(Inbox {
            script: script.iter().copied().collect(),
            otherwise,
            arrivals: Vec::new(),
        }));
        let shared = Arc::clone(&inbox);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let inbox = Arc::clone(&shared);
                std::thread::spawn(move || answer(stream, &inbox));
            }
        });
        Self { addr, inbox }
    }

    pub fn url(&self) -> String {
        format!("http://{}/hooks/benefits?via=test", self.addr)
    }

    pub fn arrivals(&self) -> Vec<Arrival> {
        self.inbox.lock().unwrap().arrivals.clone()
    }

    pub fn count(&self) -> usize {
        self.inbox.lock().unwrap().arrivals.len()
    }

    /// The arrivals of one event id.
    pub fn of(&self, id: &str) -> Vec<Arrival> {
        self.arrivals()
            .into_iter()
            .filter(|a| a.id() == id)
            .collect()
    }
}

/// Reads one request, records it, answers the next scripted status.
pub fn answer(mut stream: TcpStream, inbox: &Mutex<Inbox>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
    let Some((method, target, headers, body)) = read_request(&mut stream) else {
        return;
    };
    let at = Instant::now();
    let status = {
        let mut inbox = inbox.lock().unwrap();
        let status = inbox.script.pop_front().unwrap_or(inbox.otherwise);
        inbox.arrivals.push(Arrival {
            method,
            target,
            headers,
            body,
            at,
            answered: status,
        });
        status
    };
    let reason = match status {
        200 => "OK",
        204 => "No Content",
        500 => "Internal Server Error",
        _ => "Status",
    };
    // A 204 carries no Content-Length (RFC 9110 section 8.6).
    let length = if status == 204 {
        ""
    } else {
        "Content-Length: 0\r\n"
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\n{length}Connection: close\r\n\r\n"
    );
    let _ = stream.flush();
    let _ = stream.shutdown(Shutdown::Both);
}

type Request = (String, String, Vec<(String, String)>, Vec<u8>);

/// One HTTP/1.1 request: request line, headers, and the body by
/// `Content-Length` or chunked transfer coding. `None` when the peer went
/// away first.
pub fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::new();
    let mut chunk = [0_u8; 8192];
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i;
        }
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(chunk.get(..n)?);
    };
    let head = String::from_utf8(buf.get(..head_end)?.to_vec()).ok()?;
    let mut rest = buf.get(head_end + 4..)?.to_vec();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let target = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let value = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let chunked = value("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    let body = if chunked {
        loop {
            if let Some(body) = dechunk(&rest) {
                break body;
            }
            let n = stream.read(&mut chunk).ok()?;
            if n == 0 {
                return None;
            }
            rest.extend_from_slice(chunk.get(..n)?);
        }
    } else {
        let length: usize = value("content-length").map_or(Some(0), |v| v.parse().ok())?;
        while rest.len() < length {
            let n = stream.read(&mut chunk).ok()?;
            if n == 0 {
                return None;
            }
            rest.extend_from_slice(chunk.get(..n)?);
        }
        rest.truncate(length);
        rest
    };
    Some((method, target, headers, body))
}

pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The body of a complete chunked message, `None` while incomplete.
pub fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = find(data, b"\r\n")?;
        let line = std::str::from_utf8(data.get(..line_end)?).ok()?;
        let size = usize::from_str_radix(line.split(';').next()?.trim(), 16).ok()?;
        data = data.get(line_end + 2..)?;
        if size == 0 {
            // Trailers end with an empty line.
            find(data, b"\r\n")?;
            return Some(body);
        }
        body.extend_from_slice(data.get(..size)?);
        data = data.get(size + 2..)?;
    }
}

// ---------------------------------------------------------------------
// The independent verifier
// ---------------------------------------------------------------------

/// `crates/webhooks/tests/verify_standardwebhooks.py` (the PyPI
/// `standardwebhooks` 1.1.0 package).
pub struct Verifier {
    pub script: PathBuf,
}

impl Verifier {
    /// The verifier, or `None` (after saying `skipped: …`) when python3
    /// or the package is missing; under `CI` that is a failure.
    pub fn find() -> Option<Self> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("webhooks")
            .join("tests")
            .join("verify_standardwebhooks.py");
        let problem = match Command::new("python3").arg(&script).arg("--check").output() {
            Ok(out) if out.status.success() => return Some(Self { script }),
            Ok(out) => format!(
                "python3 verify_standardwebhooks.py --check exited with {} ({}); install with \
                 `python3 -m pip install --target target/webhook-verifiers/python standardwebhooks==1.1.0`",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            Err(e) => format!("cannot run python3: {e}"),
        };
        let under_ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
        assert!(!under_ci, "CI is set, so this must run: {problem}");
        let _ = writeln!(std::io::stderr(), "skipped: {problem}");
        None
    }

    /// Whether the library accepts `arrival`'s headers over `body` with
    /// `secret`: `Err` carries its refusal.
    pub fn verify(&self, secret: &str, arrival: &Arrival, body: &[u8]) -> Result<(), String> {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(body).unwrap();
        file.flush().unwrap();
        let out = Command::new("python3")
            .arg(&self.script)
            .args([
                secret,
                arrival.header("webhook-id"),
                arrival.header("webhook-timestamp"),
                arrival.header("webhook-signature"),
            ])
            .arg(file.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        match out.status.code() {
            Some(0) => Ok(()),
            Some(1) => Err(stderr),
            other => panic!("verify_standardwebhooks.py exited with {other:?}: {stderr}"),
        }
    }

    /// `arrival` verifies with `secret`, and does not once its body is
    /// altered by one byte.
    pub fn check(&self, secret: &str, arrival: &Arrival) {
        if let Err(why) = self.verify(secret, arrival, &arrival.body) {
            panic!(
                "the standardwebhooks package refuses {} ({why}): {}",
                arrival.id(),
                String::from_utf8_lossy(&arrival.body)
            );
        }
        let mut tampered = arrival.body.clone();
        let last = tampered.len() - 1;
        tampered.insert(last, b' ');
        assert!(
            self.verify(secret, arrival, &tampered).is_err(),
            "a tampered body of {} verifies",
            arrival.id()
        );
    }
}
