//! The adapter's settings: where mail goes ([`MailUrl`], from `email.url`)
//! and who sends it ([`FromAddress`], from `email.from`).
//!
//! `email.url` takes lettre's URL form,
//! `scheme://[user:password@]host[:port][/ehlo-name][?tls=…]`:
//!
//! | URL | Transport | Default port |
//! |---|---|---|
//! | `record:` (or empty) | [`crate::RecordingMailer`], nothing sent | |
//! | `smtps://host` | TLS from the first byte | 465 |
//! | `smtp://host?tls=required` | STARTTLS, refused without it | 587 |
//! | `smtp://host?tls=opportunistic` | STARTTLS when offered | 587 |
//! | `smtp://host` | unencrypted (a local relay) | 25 |
//!
//! User and password are percent-encoded. Credentials are refused unless
//! the connection is encrypted for sure (`smtps://` or `tls=required`), so
//! a password never crosses the network in clear. Unknown query parameters
//! are refused, so a misspelt `tls` cannot silently mean "no TLS". Error
//! messages never repeat the URL, which may hold a password.

use std::fmt;
use std::str::FromStr as _;

use lettre::Address;
use lettre::message::Mailbox;
use secrecy::{ExposeSecret as _, SecretString};
use url::{Host, Url};

/// Where messages go: the `email.url` setting, parsed.
#[derive(Clone, Default)]
pub enum MailUrl {
    /// `record:` or no URL: keep messages in memory, send nothing.
    #[default]
    Record,
    /// An SMTP server.
    Smtp(SmtpUrl),
}

/// How the SMTP connection is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Security {
    /// `smtps://`: TLS from the first byte.
    Tls,
    /// `smtp://…?tls=required`: STARTTLS, and the connection fails
    /// without it.
    StartTls,
    /// `smtp://…?tls=opportunistic`: STARTTLS when the server offers it.
    Opportunistic,
    /// `smtp://` without `tls`: no encryption at all.
    Plain,
}

impl Security {
    /// The port used when the URL names none.
    #[must_use]
    pub const fn default_port(self) -> u16 {
        match self {
            Self::Tls => 465,
            Self::StartTls | Self::Opportunistic => 587,
            Self::Plain => 25,
        }
    }

    /// Whether credentials can only ever travel encrypted.
    #[must_use]
    pub const fn always_encrypted(self) -> bool {
        matches!(self, Self::Tls | Self::StartTls)
    }
}

/// An SMTP server: `smtp://…` or `smtps://…`, checked.
#[derive(Clone)]
pub struct SmtpUrl {
    host: String,
    port: u16,
    security: Security,
    hello_name: Option<String>,
    credentials: Option<(String, SecretString)>,
}

impl SmtpUrl {
    /// The host name or IP address (without brackets).
    #[must_use]
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port, explicit or the scheme's default.
    #[must_use]
    pub const fn port(&self) -> u16 {
        self.port
    }

    /// How the connection is protected.
    #[must_use]
    pub const fn security(&self) -> Security {
        self.security
    }

    /// The name sent with `EHLO`, when the URL has a path.
    #[must_use]
    pub fn hello_name(&self) -> Option<&str> {
        self.hello_name.as_deref()
    }

    /// Whether the URL carries a user and a password.
    #[must_use]
    pub const fn authenticated(&self) -> bool {
        self.credentials.is_some()
    }

    /// The user name and password, decoded, for the transport.
    pub(crate) fn credentials(&self) -> Option<(&str, &str)> {
        self.credentials
            .as_ref()
            .map(|(user, password)| (user.as_str(), password.expose_secret()))
    }
}

/// Why `email.url` is refused. Each message completes `email.url …` and
/// never repeats the URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Not a URL at all.
    #[error("is not a valid url (percent-encode special characters in the user and password)")]
    Syntax,
    /// Neither `record:`, `smtp` nor `smtps`.
    #[error("must be record:, smtp://… or smtps://…, got a {0}: URL")]
    Scheme(String),
    /// `record:` followed by something.
    #[error("must be exactly record: to record messages without sending them")]
    Record,
    /// No host.
    #[error("has no host")]
    NoHost,
    /// A `tls` value other than `required` or `opportunistic`.
    #[error("has tls={0:?}; tls must be required or opportunistic")]
    Tls(String),
    /// `tls` on `smtps://`, which is always TLS.
    #[error("takes no tls parameter with smtps://, which is always tls")]
    TlsOnSmtps,
    /// A query parameter other than `tls`.
    #[error("has an unknown parameter {0:?}; only tls is known")]
    Parameter(String),
    /// A user without a password, or a password without a user.
    #[error("must give both a user and a password, or neither")]
    HalfCredentials,
    /// Credentials over a connection that may be unencrypted.
    #[error("must not send credentials unencrypted: use smtps://… or smtp://…?tls=required")]
    PlainCredentials,
}

impl MailUrl {
    /// Parses an `email.url` value (surrounding whitespace ignored).
    ///
    /// # Errors
    /// [`UrlError`] for anything but `record:`, an empty value or a
    /// well-formed `smtp://` or `smtps://` URL as described in the module
    /// documentation.
    pub fn parse(text: &str) -> Result<Self, UrlError> {
        let text = text.trim();
        if text.is_empty() || text == "record:" {
            return Ok(Self::Record);
        }
        let url = Url::parse(text).map_err(|_| UrlError::Syntax)?;
        let mut security = match url.scheme() {
            "smtps" => Security::Tls,
            "smtp" => Security::Plain,
            "record" => return Err(UrlError::Record),
            other => return Err(UrlError::Scheme(other.to_owned())),
        };
        for (name, value) in url.query_pairs() {
            match (name.as_ref(), security) {
                ("tls", Security::Tls) => return Err(UrlError::TlsOnSmtps),
                ("tls", _) => {
                    security = match value.as_ref() {
                        "required" => Security::StartTls,
                        "opportunistic" => Security::Opportunistic,
                        other => return Err(UrlError::Tls(other.to_owned())),
                    };
                }
                (other, _) => return Err(UrlError::Parameter(other.to_owned())),
            }
        }
        let host = match url.host() {
            Some(Host::Domain(d)) if !d.is_empty() => d.to_owned(),
            Some(Host::Ipv4(ip)) => ip.to_string(),
            Some(Host::Ipv6(ip)) => ip.to_string(),
            Some(Host::Domain(_)) | None => return Err(UrlError::NoHost),
        };
        let credentials = match (url.username(), url.password()) {
            ("", None) => None,
            ("", Some(_)) | (_, None) => return Err(UrlError::HalfCredentials),
            (user, Some(password)) => Some((decode(user)?, SecretString::from(decode(password)?))),
        };
        if credentials.is_some() && !security.always_encrypted() {
            return Err(UrlError::PlainCredentials);
        }
        let path = url.path().trim_matches('/');
        let hello_name = if path.is_empty() {
            None
        } else {
            Some(decode(path)?)
        };
        Ok(Self::Smtp(SmtpUrl {
            host,
            port: url.port().unwrap_or(security.default_port()),
            security,
            hello_name,
            credentials,
        }))
    }
}

fn decode(text: &str) -> Result<String, UrlError> {
    percent_encoding::percent_decode_str(text)
        .decode_utf8()
        .map(std::borrow::Cow::into_owned)
        .map_err(|_| UrlError::Syntax)
}

impl fmt::Display for MailUrl {
    /// Where mail goes, without user or password: `record`,
    /// `smtps mail.example.com:465 (authenticated)`,
    /// `smtp localhost:25 (unencrypted)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Record => f.write_str("record (nothing is sent)"),
            Self::Smtp(url) => fmt::Display::fmt(url, f),
        }
    }
}

impl fmt::Display for SmtpUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.security == Security::Tls {
            "smtps"
        } else {
            "smtp"
        };
        if self.host.contains(':') {
            write!(f, "{scheme} [{}]:{}", self.host, self.port)?;
        } else {
            write!(f, "{scheme} {}:{}", self.host, self.port)?;
        }
        let mut notes = Vec::new();
        match self.security {
            Security::Tls => {}
            Security::StartTls => notes.push("starttls"),
            Security::Opportunistic => notes.push("opportunistic starttls"),
            Security::Plain => notes.push("unencrypted"),
        }
        if self.credentials.is_some() {
            notes.push("authenticated");
        }
        if notes.is_empty() {
            Ok(())
        } else {
            write!(f, " ({})", notes.join(", "))
        }
    }
}

impl fmt::Debug for MailUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MailUrl({self})")
    }
}

impl fmt::Debug for SmtpUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SmtpUrl({self})")
    }
}

/// The sender of every message: the `email.from` setting, checked. Either
/// a bare address or `Name <address>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FromAddress(Mailbox);

/// Why `email.from` is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "must be an email address like no-reply@service.example or Name <no-reply@service.example>"
)]
pub struct AddressError;

impl FromAddress {
    /// Parses an `email.from` value (surrounding whitespace ignored).
    ///
    /// # Errors
    /// [`AddressError`] when it is not a mailbox.
    pub fn parse(text: &str) -> Result<Self, AddressError> {
        Mailbox::from_str(text.trim())
            .map(Self)
            .map_err(|_| AddressError)
    }

    /// The mailbox.
    #[must_use]
    pub const fn mailbox(&self) -> &Mailbox {
        &self.0
    }

    /// `no-reply@HOST`: the sender when `email.from` is not set, at the
    /// host of the service's public base URL, so that mail comes from the
    /// domain its links lead to. `None` when `host` is not a domain name
    /// mail can come from: an IP address, `localhost` or another name
    /// without a dot.
    #[must_use]
    pub fn no_reply_at(host: &str) -> Option<Self> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let labels: Vec<&str> = host.split('.').collect();
        let label_ok = |l: &&str| {
            (1..=63).contains(&l.len())
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        };
        let top_ok = labels
            .last()
            .is_some_and(|t| t.bytes().any(|b| b.is_ascii_alphabetic()));
        if labels.len() < 2 || !labels.iter().all(label_ok) || !top_ok {
            return None;
        }
        Address::new("no-reply", host)
            .ok()
            .map(|a| Self(Mailbox::new(None, a)))
    }
}

/// `no-reply@localhost`: the sender of a deployment whose public base URL
/// names no domain (see [`FromAddress::no_reply_at`]), where messages are
/// only recorded.
impl Default for FromAddress {
    fn default() -> Self {
        Self(Mailbox::new(
            None,
            Address::new_dangerous("no-reply", "localhost"),
        ))
    }
}

impl fmt::Display for FromAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `text` and renders the outcome as one line: the redacted
    /// description, or the error.
    fn check(text: &str, want: &str) {
        let got = match MailUrl::parse(text) {
            Ok(url) => url.to_string(),
            Err(e) => format!("error: {e}"),
        };
        assert_eq!(got, want, "{text}");
    }

    #[test]
    fn urls_parse_and_describe_without_credentials() {
        for (text, want) in [
            ("", "record (nothing is sent)"),
            ("  record:  ", "record (nothing is sent)"),
            ("smtps://mail.example.com", "smtps mail.example.com:465"),
            (
                "smtps://apikey:S3cret@mail.example.com:2465",
                "smtps mail.example.com:2465 (authenticated)",
            ),
            (
                "smtp://u:p%40ss@mail.example.com?tls=required",
                "smtp mail.example.com:587 (starttls, authenticated)",
            ),
            (
                "smtp://mail.example.com:2525?tls=opportunistic",
                "smtp mail.example.com:2525 (opportunistic starttls)",
            ),
            ("smtp://localhost", "smtp localhost:25 (unencrypted)"),
            ("smtp://127.0.0.1:1025", "smtp 127.0.0.1:1025 (unencrypted)"),
            ("smtp://[::1]:1025", "smtp [::1]:1025 (unencrypted)"),
            (
                "smtps://relay.example.com/app.example.com",
                "smtps relay.example.com:465",
            ),
        ] {
            check(text, want);
        }
    }

    #[test]
    fn bad_urls_are_refused_without_echoing_them() {
        for (text, want) in [
            (
                "mail.example.com",
                "error: is not a valid url (percent-encode special characters in the user and password)",
            ),
            (
                "smtps://u:pa#ss@mail.example.com",
                "error: is not a valid url (percent-encode special characters in the user and password)",
            ),
            (
                "smtp://u:p:x@mail.example.com:notaport",
                "error: is not a valid url (percent-encode special characters in the user and password)",
            ),
            (
                "https://mail.example.com",
                "error: must be record:, smtp://… or smtps://…, got a https: URL",
            ),
            (
                "record:/dev/null",
                "error: must be exactly record: to record messages without sending them",
            ),
            ("smtp://", "error: has no host"),
            (
                "smtp://mail.example.com?tls=yes",
                "error: has tls=\"yes\"; tls must be required or opportunistic",
            ),
            (
                "smtps://mail.example.com?tls=required",
                "error: takes no tls parameter with smtps://, which is always tls",
            ),
            (
                "smtp://mail.example.com?tsl=required",
                "error: has an unknown parameter \"tsl\"; only tls is known",
            ),
            (
                "smtps://user@mail.example.com",
                "error: must give both a user and a password, or neither",
            ),
            (
                "smtps://:pw@mail.example.com",
                "error: must give both a user and a password, or neither",
            ),
            (
                "smtp://u:S3cret@mail.example.com",
                "error: must not send credentials unencrypted: use smtps://… or smtp://…?tls=required",
            ),
            (
                "smtp://u:S3cret@mail.example.com?tls=opportunistic",
                "error: must not send credentials unencrypted: use smtps://… or smtp://…?tls=required",
            ),
            (
                "smtps://u:%FF@mail.example.com",
                "error: is not a valid url (percent-encode special characters in the user and password)",
            ),
        ] {
            check(text, want);
        }
    }

    #[test]
    fn parts_are_decoded() {
        let MailUrl::Smtp(url) =
            MailUrl::parse("smtps://api%2Bkey:p%40ss%20w@[2001:db8::1]:465/ehlo.example").unwrap()
        else {
            panic!("not smtp");
        };
        assert_eq!(url.host(), "2001:db8::1");
        assert_eq!(url.port(), 465);
        assert_eq!(url.security(), Security::Tls);
        assert_eq!(url.hello_name(), Some("ehlo.example"));
        assert_eq!(url.credentials(), Some(("api+key", "p@ss w")));
        assert_eq!(url.to_string(), "smtps [2001:db8::1]:465 (authenticated)");
    }

    #[test]
    fn debug_hides_user_and_password() {
        let url = MailUrl::parse("smtps://alice:hunter2@mail.example.com").unwrap();
        let debug = format!("{url:?}");
        assert_eq!(debug, "MailUrl(smtps mail.example.com:465 (authenticated))");
        assert!(!debug.contains("alice") && !debug.contains("hunter2"));
    }

    #[test]
    fn from_addresses_are_mailboxes() {
        let plain = FromAddress::parse(" no-reply@service.example ").unwrap();
        assert_eq!(plain.to_string(), "no-reply@service.example");
        let named = FromAddress::parse("Service <no-reply@service.example>").unwrap();
        assert_eq!(
            named.mailbox().email.to_string(),
            "no-reply@service.example"
        );
        assert_eq!(
            FromAddress::default(),
            FromAddress::parse("no-reply@localhost").unwrap()
        );
        for bad in ["", "no-reply", "@service.example", "a b@c"] {
            assert_eq!(FromAddress::parse(bad), Err(AddressError), "{bad:?}");
        }
    }

    #[test]
    fn the_default_sender_is_at_the_public_host_when_it_is_a_domain() {
        for (host, want) in [
            (
                "benefits.example.com",
                Some("no-reply@benefits.example.com"),
            ),
            (
                "Benefits.Example.COM.",
                Some("no-reply@benefits.example.com"),
            ),
            (
                "api-1.partner.example",
                Some("no-reply@api-1.partner.example"),
            ),
            ("127.0.0.1", None),
            ("[::1]", None),
            ("localhost", None),
            ("intranet", None),
            ("-bad.example", None),
            ("a..example", None),
            ("", None),
        ] {
            let got = FromAddress::no_reply_at(host).map(|f| f.to_string());
            assert_eq!(got.as_deref(), want, "{host:?}");
        }
    }
}
