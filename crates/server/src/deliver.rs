//! The webhook deliverer: the `Deliverer` port over actix's HTTP client
//! (`awc`), TLS by rustls on ring with the webpki roots. The client is not
//! `Send`, so it lives on a thread of its own running an actix system;
//! callers on any runtime hand it a delivery and await the result.
//!
//! Each attempt is one POST: redirects are not followed, the endpoint has
//! `webhooks.attempt_timeout_ms` (10 s by default, connection included)
//! to answer, any 2xx is a success. The report classifies a failure
//! (timeout, refused connection, DNS, TLS, status, blocked address) and
//! keeps the first 1 KiB of an answer.
//!
//! Unless insecure endpoints are allowed, deliveries reach public addresses
//! only (`address` says which addresses are internal). A host is checked
//! when it is registered (so the partner gets a field error); at each
//! attempt the client resolves names through the same check (`resolve`),
//! so it connects only to the addresses that were checked: a name
//! re-pointed at an internal address after registration (DNS rebinding)
//! is refused, with one lookup per attempt. One internal address among a
//! name's addresses refuses the host. An address literal in the URL, which
//! the client connects to without resolving, is judged before the attempt.

mod address;

use std::future::Future;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs as _};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use async_trait::async_trait;
use domain::ports::{Deliverer, Delivery};
use domain::webhook::attempt::{AttemptReport, FailureReason, RESPONSE_BODY_LIMIT};
use tokio::sync::{mpsc, oneshot};

pub use self::address::is_internal;

type Request = (Delivery, oneshot::Sender<AttemptReport>);

/// How names are looked up: the system resolver in production; tests
/// give names of their own (a name that moves to an internal address).
pub type Names = Arc<dyn Fn(&str, u16) -> std::io::Result<Vec<SocketAddr>> + Send + Sync>;

/// The system resolver.
#[must_use]
pub fn system_names() -> Names {
    Arc::new(|name, port| (name, port).to_socket_addrs().map(Iterator::collect))
}

/// The HTTP deliverer.
#[derive(Clone)]
pub struct HttpDeliverer {
    requests: mpsc::UnboundedSender<Request>,
    allow_insecure: bool,
    names: Names,
}

impl std::fmt::Debug for HttpDeliverer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpDeliverer")
            .field("allow_insecure", &self.allow_insecure)
            .finish_non_exhaustive()
    }
}

impl HttpDeliverer {
    /// Starts the client thread.
    ///
    /// # Errors
    /// When the thread or the TLS configuration cannot be set up.
    pub fn start(allow_insecure: bool, timeout: Duration) -> anyhow::Result<Self> {
        Self::start_with_names(allow_insecure, timeout, system_names())
    }

    /// [`HttpDeliverer::start`] looking names up with `names`.
    ///
    /// # Errors
    /// As [`HttpDeliverer::start`].
    pub fn start_with_names(
        allow_insecure: bool,
        timeout: Duration,
        names: Names,
    ) -> anyhow::Result<Self> {
        let client_names = Arc::clone(&names);
        let tls = Arc::new(tls_config()?);
        let (requests, mut incoming) = mpsc::unbounded_channel::<Request>();
        std::thread::Builder::new()
            .name("webhook-client".to_owned())
            .spawn(move || {
                actix_web::rt::System::new().block_on(async move {
                    let tcp = actix_tls::connect::Connector::new(
                        actix_tls::connect::Resolver::custom(CheckedResolver {
                            allow_insecure,
                            names: client_names,
                        }),
                    )
                    .service();
                    let client = awc::Client::builder()
                        .connector(
                            awc::Connector::new()
                                .connector(tcp)
                                .rustls_0_23(tls)
                                .timeout(timeout),
                        )
                        .timeout(timeout)
                        .disable_redirects()
                        .finish();
                    while let Some((delivery, reply)) = incoming.recv().await {
                        let client = client.clone();
                        actix_web::rt::spawn(async move {
                            let _ = reply.send(post(&client, delivery).await);
                        });
                    }
                });
            })
            .context("cannot start the webhook client thread")?;
        Ok(Self {
            requests,
            allow_insecure,
            names,
        })
    }

    /// Hands `delivery` to the client thread (which resolves and connects
    /// through [`CheckedResolver`]) and awaits its result.
    async fn attempt(&self, delivery: Delivery) -> AttemptReport {
        let (reply, result) = oneshot::channel();
        // The client thread is gone only if it panicked: no connection
        // could be made.
        let gone = AttemptReport::failed(FailureReason::ConnectionRefused, 0);
        if self.requests.send((delivery, reply)).is_err() {
            return gone;
        }
        result.await.unwrap_or(gone)
    }
}

/// rustls on ring with the webpki roots.
fn tls_config() -> anyhow::Result<rustls::ClientConfig> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    Ok(rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .context("TLS protocol versions")?
    .with_root_certificates(roots)
    .with_no_client_auth())
}

/// One POST.
async fn post(client: &awc::Client, d: Delivery) -> AttemptReport {
    let started = std::time::Instant::now();
    let elapsed = || u32::try_from(started.elapsed().as_millis()).unwrap_or(u32::MAX);
    let mut request = client.post(&d.url);
    for (name, value) in d.headers {
        request = request.insert_header((name, value));
    }
    match request.send_body(d.body).await {
        Ok(mut response) => {
            let status = response.status().as_u16();
            // The first 1 KiB of the answer, read within what is left of
            // the attempt's time; an answer that stops early keeps what
            // came.
            let mut kept = Vec::new();
            while kept.len() < RESPONSE_BODY_LIMIT {
                match futures_util::StreamExt::next(&mut response).await {
                    Some(Ok(chunk)) => kept.extend_from_slice(&chunk),
                    Some(Err(_)) | None => break,
                }
            }
            AttemptReport::answered(status, &kept, elapsed())
        }
        Err(e) => AttemptReport::failed(classify(&e), elapsed()),
    }
}

/// Why a request got no answer.
fn classify(e: &awc::error::SendRequestError) -> FailureReason {
    use awc::error::{ConnectError, SendRequestError};
    match e {
        SendRequestError::Timeout | SendRequestError::Connect(ConnectError::Timeout) => {
            FailureReason::Timeout
        }
        SendRequestError::Connect(ConnectError::Resolver(inner)) => {
            match inner.downcast_ref::<Refused>() {
                Some(Refused::Internal) => FailureReason::BlockedAddress,
                Some(Refused::NoHost | Refused::Unresolved) | None => FailureReason::DnsError,
            }
        }
        SendRequestError::Connect(ConnectError::Unresolved | ConnectError::NoRecords) => {
            FailureReason::DnsError
        }
        SendRequestError::Connect(ConnectError::SslIsNotSupported) => FailureReason::TlsError,
        SendRequestError::Connect(ConnectError::Io(io)) => match io.kind() {
            std::io::ErrorKind::TimedOut => FailureReason::Timeout,
            _ if io
                .get_ref()
                .is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some()) =>
            {
                FailureReason::TlsError
            }
            _ => FailureReason::ConnectionRefused,
        },
        // Refused, reset or closed before an answer, or an answer that is
        // not HTTP: the connection failed.
        _ => FailureReason::ConnectionRefused,
    }
}

/// Why a host is refused.
#[derive(Debug, thiserror::Error)]
enum Refused {
    /// The URL does not parse or has no host.
    #[error("is not a valid URL with a host")]
    NoHost,
    /// The name has no address.
    #[error("has a host that does not resolve")]
    Unresolved,
    /// One of the host's addresses is internal.
    #[error(
        "has a host that resolves to a loopback, private, link-local, unique-local or other non-public address"
    )]
    Internal,
}

/// Resolves `host` (a name, or an address literal, IPv6 in brackets or
/// not) to its addresses at `port`. Unless `allow_insecure`, a host with
/// any internal address is refused.
///
/// # Errors
/// When the host has no address, or (unless `allow_insecure`) an internal
/// one.
async fn resolve(
    host: &str,
    port: u16,
    allow_insecure: bool,
    names: &Names,
) -> Result<Vec<SocketAddr>, Refused> {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let addrs: Vec<SocketAddr> = if let Ok(ip) = bare.parse::<IpAddr>() {
        vec![SocketAddr::new(ip, port)]
    } else {
        let name = bare.to_owned();
        let names = Arc::clone(names);
        tokio::task::spawn_blocking(move || names(name.as_str(), port))
            .await
            .map_err(|_| Refused::Unresolved)?
            .map_err(|_| Refused::Unresolved)?
    };
    if addrs.is_empty() {
        return Err(Refused::Unresolved);
    }
    if !allow_insecure && addrs.iter().any(|a| is_internal(a.ip())) {
        return Err(Refused::Internal);
    }
    Ok(addrs)
}

/// Whether `url` names an internal address literally. The client resolves
/// names through [`CheckedResolver`] but connects to a literal directly,
/// so a literal is the one thing to judge before an attempt.
fn is_internal_literal(url: &str) -> bool {
    let host = url::Url::parse(url).ok().and_then(|u| match u.host() {
        Some(url::Host::Ipv4(a)) => Some(IpAddr::V4(a)),
        Some(url::Host::Ipv6(a)) => Some(IpAddr::V6(a)),
        Some(url::Host::Domain(_)) | None => None,
    });
    host.is_some_and(is_internal)
}

/// Resolves `url`'s host and refuses internal addresses.
async fn check_public(url: &str, names: &Names) -> Result<(), Refused> {
    let parsed = url::Url::parse(url).map_err(|_| Refused::NoHost)?;
    let host = parsed.host_str().ok_or(Refused::NoHost)?;
    let port = parsed.port_or_known_default().unwrap_or(443);
    resolve(host, port, false, names).await.map(|_| ())
}

/// What [`actix_tls::connect::Resolve::lookup`] returns.
type Lookup<'a> =
    Pin<Box<dyn Future<Output = Result<Vec<SocketAddr>, Box<dyn std::error::Error>>> + 'a>>;

/// The client's name resolution: [`resolve`], so that the client connects
/// only to addresses that passed the check.
struct CheckedResolver {
    allow_insecure: bool,
    names: Names,
}

impl actix_tls::connect::Resolve for CheckedResolver {
    fn lookup<'a>(&'a self, host: &'a str, port: u16) -> Lookup<'a> {
        Box::pin(async move { Ok(resolve(host, port, self.allow_insecure, &self.names).await?) })
    }
}
#[async_trait]
impl Deliverer for HttpDeliverer {
    async fn deliver(&self, delivery: Delivery) -> AttemptReport {
        // A name is checked when the client resolves it; a literal here.
        if !self.allow_insecure && is_internal_literal(&delivery.url) {
            return AttemptReport::failed(FailureReason::BlockedAddress, 0);
        }
        self.attempt(delivery).await
    }

    async fn check_host(&self, url: &str) -> Result<(), String> {
        if self.allow_insecure {
            return Ok(());
        }
        check_public(url, &self.names)
            .await
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use std::io::{ErrorKind, Read as _, Write as _};
    use std::net::TcpListener;

    use actix_tls::connect::Resolve as _;
    use domain::event::AttemptResult;

    use super::*;

    const TIMEOUT: Duration = Duration::from_secs(10);

    #[actix_web::test]
    async fn loopback_hosts_are_refused_unless_allowed() {
        let strict = HttpDeliverer::start(false, TIMEOUT).unwrap();
        let err = strict
            .check_host("https://127.0.0.1:9/hook")
            .await
            .unwrap_err();
        assert!(err.contains("loopback"), "{err}");
        for url in [
            "https://localhost/hook",
            "https://[::1]/hook",
            "https://[64:ff9b::7f00:1]/hook",
            "https://127.1/hook",
            "https://0x7f000001/hook",
        ] {
            assert!(strict.check_host(url).await.is_err(), "{url}");
        }
        for url in [
            "https://93.184.216.34/hook",
            "https://[2002:808:808::1]/hook",
        ] {
            assert_eq!(strict.check_host(url).await, Ok(()), "{url}");
        }
        let lax = HttpDeliverer::start(true, TIMEOUT).unwrap();
        assert!(lax.check_host("http://127.0.0.1:9/hook").await.is_ok());
    }

    #[actix_web::test]
    async fn the_resolver_refuses_names_of_internal_addresses_unless_allowed() {
        let strict = CheckedResolver {
            allow_insecure: false,
            names: system_names(),
        };
        let err = strict.lookup("localhost", 8443).await.unwrap_err();
        assert!(err.to_string().contains("loopback"), "{err}");
        for literal in ["[::1]", "::1", "127.0.0.1", "[::ffff:127.0.0.1]"] {
            assert!(strict.lookup(literal, 8443).await.is_err(), "{literal}");
        }
        assert!(strict.lookup("name.invalid", 8443).await.is_err());
        assert_eq!(
            strict.lookup("[2606:4700::1111]", 443).await.unwrap(),
            ["[2606:4700::1111]:443".parse::<SocketAddr>().unwrap()]
        );

        let lax = CheckedResolver {
            allow_insecure: true,
            names: system_names(),
        };
        let addrs = lax.lookup("localhost", 8443).await.unwrap();
        assert!(
            addrs.contains(&"127.0.0.1:8443".parse().unwrap()),
            "{addrs:?}"
        );
        assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
    }

    /// A POST of `{}` to `url`.
    fn delivery(url: String) -> Delivery {
        Delivery {
            url,
            headers: vec![("content-type".to_owned(), "application/json".to_owned())],
            body: b"{}".to_vec(),
        }
    }

    /// Accepts one connection on `listener`, reads one request with a
    /// two-byte body and answers 204.
    fn answer_once(listener: TcpListener) -> std::thread::JoinHandle<()> {
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut seen = Vec::new();
            let mut buf = [0_u8; 1024];
            loop {
                let n = stream.read(&mut buf).unwrap();
                seen.extend_from_slice(&buf[..n]);
                let head_end = seen.windows(4).position(|w| w == b"\r\n\r\n");
                if n == 0 || head_end.is_some_and(|at| seen.len() >= at + 4 + 2) {
                    break;
                }
            }
            stream
                .write_all(b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n")
                .unwrap();
        })
    }

    #[actix_web::test]
    async fn a_name_resolving_to_loopback_is_refused_at_connect_time() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let url = format!("http://localhost:{port}/hook");

        // Past the check before the attempt (as when a name is re-pointed
        // after it), the client's resolver still refuses the name.
        let strict = HttpDeliverer::start(false, TIMEOUT).unwrap();
        let refused = strict.attempt(delivery(url.clone())).await;
        assert_eq!(
            (refused.result, refused.failure),
            (
                AttemptResult::Failed { status: None },
                Some(FailureReason::BlockedAddress)
            )
        );
        listener.set_nonblocking(true).unwrap();
        let err = listener.accept().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::WouldBlock, "a connection was made");

        // The same attempt with insecure endpoints allowed connects.
        listener.set_nonblocking(false).unwrap();
        let receiver = answer_once(listener);
        let lax = HttpDeliverer::start(true, TIMEOUT).unwrap();
        assert_eq!(
            lax.attempt(delivery(url)).await.result,
            AttemptResult::Delivered { status: 204 }
        );
        receiver.join().unwrap();
    }
}
