//! The webhook deliverer: the `Deliverer` port over actix's HTTP client
//! (`awc`), TLS by rustls on ring with the webpki roots. The client is not
//! `Send`, so it lives on a thread of its own running an actix system;
//! callers on any runtime hand it a delivery and await the result.
//!
//! Each attempt is one POST: redirects are not followed, the endpoint has
//! 10 seconds (connection included) to answer, any 2xx is a success.
//! Unless insecure endpoints are allowed, a host must resolve to public
//! addresses only — checked at registration and again before every attempt
//! (a name may be re-pointed after it was registered).

use std::net::{IpAddr, ToSocketAddrs as _};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use async_trait::async_trait;
use domain::event::AttemptResult;
use domain::ports::{Deliverer, Delivery};
use tokio::sync::{mpsc, oneshot};

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
                    let client = awc::Client::builder()
                        .connector(
                            awc::Connector::new()
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

/// Whether an address is one deliveries must not reach: loopback,
/// private, link-local, unique-local, carrier-grade NAT, unspecified,
/// broadcast, multicast or documentation ranges (IPv4-mapped IPv6
/// addresses are judged as IPv4).
#[must_use]
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || (a == 100 && (64..128).contains(&b))
                || a == 0
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_internal(IpAddr::V4(v4));
            }
            let first = v6.segments().first().copied().unwrap_or(0);
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
        }
    }
}

/// Resolves `url`'s host and refuses internal addresses.
async fn check_public(url: &str) -> Result<(), String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("is not a valid URL ({e})"))?;
    let host = parsed
        .host_str()
        .ok_or_else(|| "has no host".to_owned())?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = parsed.port_or_known_default().unwrap_or(443);
    let addrs: Vec<IpAddr> = tokio::task::spawn_blocking(move || {
        (host.as_str(), port)
            .to_socket_addrs()
            .map(|a| a.map(|s| s.ip()).collect::<Vec<_>>())
    })
    .await
    .map_err(|_| "could not be resolved".to_owned())?
    .map_err(|_| "has a host that does not resolve".to_owned())?;
    if addrs.is_empty() {
        return Err("has a host that does not resolve".to_owned());
    }
    if addrs.iter().copied().any(is_internal) {
        return Err(
            "has a host that resolves to a loopback, private, link-local or unique-local address"
                .to_owned(),
        );
    }
    Ok(())
}

#[async_trait]
impl Deliverer for HttpDeliverer {
    async fn deliver(&self, delivery: Delivery) -> AttemptResult {
        if !self.allow_insecure && check_public(&delivery.url).await.is_err() {
            return AttemptResult::Failed { status: None };
        }
        let (reply, result) = oneshot::channel();
        if self.requests.send((delivery, reply)).is_err() {
            return AttemptResult::Failed { status: None };
        }
        result
            .await
            .unwrap_or(AttemptResult::Failed { status: None })
    }

    async fn check_host(&self, url: &str) -> Result<(), String> {
        if self.allow_insecure {
            return Ok(());
        }
        check_public(url).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses_are_recognised() {
        for internal in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "::ffff:10.0.0.1",
            "::ffff:127.0.0.1",
        ] {
            let ip: IpAddr = internal.parse().unwrap();
            assert!(is_internal(ip), "{internal}");
        }
        for public in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            let ip: IpAddr = public.parse().unwrap();
            assert!(!is_internal(ip), "{public}");
        }
    }

    #[actix_web::test]
    async fn loopback_hosts_are_refused_unless_allowed() {
        let strict = HttpDeliverer::start(false).unwrap();
        let err = strict
            .check_host("https://127.0.0.1:9/hook")
            .await
            .unwrap_err();
        assert!(err.contains("loopback"), "{err}");
        assert!(strict.check_host("https://localhost/hook").await.is_err());
        let lax = HttpDeliverer::start(true).unwrap();
        assert!(lax.check_host("http://127.0.0.1:9/hook").await.is_ok());
    }
}
