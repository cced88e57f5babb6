//! The webhook deliverer: the `Deliverer` port over actix's HTTP client
//! (`awc`), TLS by rustls on ring with the webpki roots. The client is not
//! `Send`, so it lives on a thread of its own running an actix system;
//! callers on any runtime hand it a delivery and await the result.
//!
//! Each attempt is one POST: redirects are not followed, the endpoint has
//! 10 seconds (connection included) to answer, any 2xx is a success.
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
use domain::event::AttemptResult;
use domain::ports::{Deliverer, Delivery};
use tokio::sync::{mpsc, oneshot};

pub use self::address::is_internal;

/// How long an endpoint has to answer one attempt.
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);

type Request = (Delivery, oneshot::Sender<AttemptResult>);

/// The HTTP deliverer.
#[derive(Clone)]
pub struct HttpDeliverer {
    requests: mpsc::UnboundedSender<Request>,
    allow_insecure: bool,
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
    pub fn start(allow_insecure: bool) -> anyhow::Result<Self> {
        let tls = Arc::new(tls_config()?);
        let (requests, mut incoming) = mpsc::unbounded_channel::<Request>();
        std::thread::Builder::new()
            .name("webhook-client".to_owned())
            .spawn(move || {
                actix_web::rt::System::new().block_on(async move {
                    let tcp = actix_tls::connect::Connector::new(
                        actix_tls::connect::Resolver::custom(CheckedResolver { allow_insecure }),
                    )
                    .service();
                    let client = awc::Client::builder()
                        .connector(
                            awc::Connector::new()
                                .connector(tcp)
                                .rustls_0_23(tls)
                                .timeout(ATTEMPT_TIMEOUT),
                        )
                        .timeout(ATTEMPT_TIMEOUT)
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
        })
    }

    /// Hands `delivery` to the client thread (which resolves and connects
    /// through [`CheckedResolver`]) and awaits its result.
    async fn attempt(&self, delivery: Delivery) -> AttemptResult {
        let (reply, result) = oneshot::channel();
        if self.requests.send((delivery, reply)).is_err() {
            return AttemptResult::Failed { status: None };
        }
        result
            .await
            .unwrap_or(AttemptResult::Failed { status: None })
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
async fn post(client: &awc::Client, d: Delivery) -> AttemptResult {
    let mut request = client.post(&d.url);
    for (name, value) in d.headers {
        request = request.insert_header((name, value));
    }
    match request.send_body(d.body).await {
        Ok(response) if response.status().is_success() => AttemptResult::Delivered {
            status: response.status().as_u16(),
        },
        Ok(response) => AttemptResult::Failed {
            status: Some(response.status().as_u16()),
        },
        Err(_) => AttemptResult::Failed { status: None },
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
async fn resolve(host: &str, port: u16, allow_insecure: bool) -> Result<Vec<SocketAddr>, Refused> {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let addrs: Vec<SocketAddr> = if let Ok(ip) = bare.parse::<IpAddr>() {
        vec![SocketAddr::new(ip, port)]
    } else {
        let name = bare.to_owned();
        tokio::task::spawn_blocking(move || {
            (name.as_str(), port)
                .to_socket_addrs()
                .map(Iterator::collect)
        })
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
async fn check_public(url: &str) -> Result<(), Refused> {
    let parsed = url::Url::parse(url).map_err(|_| Refused::NoHost)?;
    let host = parsed.host_str().ok_or(Refused::NoHost)?;
    let port = parsed.port_or_known_default().unwrap_or(443);
    resolve(host, port, false).await.map(|_| ())
}

/// What [`actix_tls::connect::Resolve::lookup`] returns.
type Lookup<'a> =
    Pin<Box<dyn Future<Output = Result<Vec<SocketAddr>, Box<dyn std::error::Error>>> + 'a>>;

/// The client's name resolution: [`resolve`], so that the client connects
/// only to addresses that passed the check.
struct CheckedResolver {
    allow_insecure: bool,
}

impl actix_tls::connect::Resolve for CheckedResolver {
    fn lookup<'a>(&'a self, host: &'a str, port: u16) -> Lookup<'a> {
        Box::pin(async move { Ok(resolve(host, port, self.allow_insecure).await?) })
    }
}
#[async_trait]
impl Deliverer for HttpDeliverer {
    async fn deliver(&self, delivery: Delivery) -> AttemptResult {
        // A name is checked when the client resolves it; a literal here.
        if !self.allow_insecure && is_internal_literal(&delivery.url) {
            return AttemptResult::Failed { status: None };
        }
        self.attempt(delivery).await
    }

    async fn check_host(&self, url: &str) -> Result<(), String> {
        if self.allow_insecure {
            return Ok(());
        }
        check_public(url).await.map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use std::io::{ErrorKind, Read as _, Write as _};
    use std::net::TcpListener;

    use actix_tls::connect::Resolve as _;

    use super::*;

    #[actix_web::test]
    async fn loopback_hosts_are_refused_unless_allowed() {
        let strict = HttpDeliverer::start(false).unwrap();
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
        let lax = HttpDeliverer::start(true).unwrap();
        assert!(lax.check_host("http://127.0.0.1:9/hook").await.is_ok());
    }

    #[actix_web::test]
    async fn the_resolver_refuses_names_of_internal_addresses_unless_allowed() {
        let strict = CheckedResolver {
            allow_insecure: false,
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
        let strict = HttpDeliverer::start(false).unwrap();
        assert_eq!(
            strict.attempt(delivery(url.clone())).await,
            AttemptResult::Failed { status: None }
        );
        listener.set_nonblocking(true).unwrap();
        let err = listener.accept().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::WouldBlock, "a connection was made");

        // The same attempt with insecure endpoints allowed connects.
        listener.set_nonblocking(false).unwrap();
        let receiver = answer_once(listener);
        let lax = HttpDeliverer::start(true).unwrap();
        assert_eq!(
            lax.attempt(delivery(url)).await,
            AttemptResult::Delivered { status: 204 }
        );
        receiver.join().unwrap();
    }
}
