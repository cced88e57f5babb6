//! The outbound email adapter: implementations of the domain's
//! [`domain::ports::Mailer`] port.
//!
//! - [`RecordingMailer`] (the default): keeps the messages in memory and
//!   sends nothing.
//! - [`SmtpMailer`]: sends through an SMTP server with `lettre` on tokio,
//!   TLS by rustls (no OpenSSL).
//!
//! [`MailUrl`] reads the `email.url` setting (`record:`, `smtp://…`,
//! `smtps://…`) and [`FromAddress`] the sender, both checked when the
//! settings load; their `Display` and `Debug` forms never show credentials.
//!
//! **Architecture invariant:** this crate depends on `domain` only, never
//! on another adapter. Neither mailer logs an address or a message's text.

pub mod config;
pub mod recording;
pub mod smtp;

pub use config::{AddressError, FromAddress, MailUrl, Security, SmtpUrl, UrlError};
pub use recording::RecordingMailer;
pub use smtp::{SetupError, SmtpMailer};
