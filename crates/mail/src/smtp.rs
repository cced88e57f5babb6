//! [`SmtpMailer`]: sends through an SMTP server with `lettre` on tokio, TLS
//! by rustls. One connection per message (no pool, so the mailer works from
//! any tokio runtime, and building it needs none). lettre's errors are
//! translated here, keeping only their kind and SMTP code: a server's reply
//! text can repeat the recipient's address.

use std::fmt;

use async_trait::async_trait;
use domain::email::{MailError, OutboundEmail};
use domain::ports::Mailer;
use lettre::message::Mailbox;
use lettre::message::header::ContentType;
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::transport::smtp::extension::ClientId;
use lettre::{Address, AsyncSmtpTransport, AsyncTransport as _, Message, Tokio1Executor};

use crate::config::{FromAddress, Security, SmtpUrl};

/// Why an [`SmtpMailer`] cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The TLS configuration for the host cannot be made (for example a
    /// host name that is not a valid TLS server name).
    #[error("cannot set up tls for {0}")]
    Tls(String),
}

/// Sends each message through the configured SMTP server.
pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    server: String,
}

impl SmtpMailer {
    /// A mailer for `url`, sending as `from`. Opens no connection.
    ///
    /// # Errors
    /// [`SetupError::Tls`] when the TLS parameters for the host cannot be
    /// built.
    pub fn new(url: &SmtpUrl, from: &FromAddress) -> Result<Self, SetupError> {
        let host = url.host();
        let tls_for =
            || TlsParameters::new(host.to_owned()).map_err(|_| SetupError::Tls(url.to_string()));
        let tls = match url.security() {
            Security::Tls => Tls::Wrapper(tls_for()?),
            Security::StartTls => Tls::Required(tls_for()?),
            Security::Opportunistic => Tls::Opportunistic(tls_for()?),
            Security::Plain => Tls::None,
        };
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(host)
            .port(url.port())
            .tls(tls);
        if let Some(name) = url.hello_name() {
            builder = builder.hello_name(ClientId::Domain(name.to_owned()));
        }
        if let Some((user, password)) = url.credentials() {
            builder = builder.credentials(Credentials::new(user.to_owned(), password.to_owned()));
        }
        Ok(Self {
            transport: builder.build(),
            from: from.mailbox().clone(),
            server: url.to_string(),
        })
    }
}

impl fmt::Debug for SmtpMailer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SmtpMailer")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Mailer for SmtpMailer {
    async fn send(&self, message: &OutboundEmail) -> Result<(), MailError> {
        let to: Address = message
            .to
            .trim()
            .parse()
            .map_err(|_| MailError::InvalidAddress)?;
        let email = Message::builder()
            .from(self.from.clone())
            .to(Mailbox::new(None, to))
            .subject(message.subject.as_str())
            .header(ContentType::TEXT_PLAIN)
            .body(message.text.clone())
            .map_err(|_| MailError::InvalidMessage)?;
        match self.transport.send(email).await {
            Ok(_) => {
                tracing::info!(kind = message.kind.as_str(), "email sent");
                Ok(())
            }
            Err(e) => {
                let error = translate(&e);
                tracing::warn!(
                    kind = message.kind.as_str(),
                    error = %error,
                    cause = %Failure::of(&e),
                    "email not sent"
                );
                Err(error)
            }
        }
    }
}

/// SMTP replies that mean our login was refused (RFC 4954): the
/// configuration is at fault, not the message, so a retry after it is
/// fixed may succeed.
const AUTH_CODES: [u16; 4] = [530, 534, 535, 538];

fn translate(e: &lettre::transport::smtp::Error) -> MailError {
    match e.status().map(u16::from) {
        Some(code) if e.is_permanent() && !AUTH_CODES.contains(&code) => {
            MailError::Rejected { code }
        }
        _ => MailError::Unavailable(Box::new(Failure::of(e))),
    }
}

/// What went wrong with an SMTP exchange, without the server's reply text
/// or anything else that could hold an address.
#[derive(Debug)]
struct Failure(String);

impl Failure {
    fn of(e: &lettre::transport::smtp::Error) -> Self {
        let text = if let Some(code) = e.status() {
            let code = u16::from(code);
            if AUTH_CODES.contains(&code) {
                format!("authentication refused (smtp {code})")
            } else {
                format!("smtp {code}")
            }
        } else if e.is_timeout() {
            "timed out".to_owned()
        } else if e.is_tls() {
            "tls failed".to_owned()
        } else if let Some(kind) = io_kind(e) {
            format!("connection failed: {kind}")
        } else if e.is_response() {
            "unreadable server reply".to_owned()
        } else {
            "smtp exchange failed".to_owned()
        };
        Self(text)
    }
}

/// The kind of the first I/O error in `e`'s source chain.
fn io_kind(e: &lettre::transport::smtp::Error) -> Option<std::io::ErrorKind> {
    let mut source = std::error::Error::source(e);
    while let Some(err) = source {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        source = err.source();
    }
    None
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Failure {}
