//! Outbound member email: the messages the service sends (an employer
//! portal invitation, a member's benefits login), the rule that test mode
//! never sends, and the [`MailError`] of the [`crate::ports::Mailer`] port.
//!
//! Messages carry no health data: a subject, and a text that names only
//! the service and a link. Their `Debug` form hides the recipient and the
//! text, so a logged message never shows an address or a login link.

use std::fmt;

use crate::mode::Mode;

/// The name messages use for the service (the specification writes
/// `service` where the operator's name would otherwise be).
pub const SERVICE_NAME: &str = "Service";

/// Why a message is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EmailKind {
    /// The enrollment signatory, provisioned as an employer-portal admin,
    /// is invited to set a password.
    PortalInvite,
    /// An enrolled member gets a login (after elections).
    MemberLogin,
}

impl EmailKind {
    /// A stable name for logs and metrics (`portal_invite`,
    /// `member_login`).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::PortalInvite => "portal_invite",
            Self::MemberLogin => "member_login",
        }
    }
}

impl fmt::Display for EmailKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One plain-text message to one recipient.
#[derive(Clone, PartialEq, Eq)]
pub struct OutboundEmail {
    /// The recipient's address.
    pub to: String,
    /// The subject line.
    pub subject: String,
    /// The plain-text body.
    pub text: String,
    /// Why it is sent.
    pub kind: EmailKind,
}

impl fmt::Debug for OutboundEmail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The address and the text (which holds a login link) stay out of
        // any log that prints a message.
        f.debug_struct("OutboundEmail")
            .field("kind", &self.kind)
            .field("subject", &self.subject)
            .finish_non_exhaustive()
    }
}

/// Why a message was not sent.
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    /// The recipient is not a valid email address; retrying cannot help.
    #[error("the recipient is not a valid email address")]
    InvalidAddress,
    /// The message cannot be written as an email (an invalid sender or
    /// header); retrying cannot help.
    #[error("the message cannot be built")]
    InvalidMessage,
    /// The mail server refused the message for good (an SMTP 5xx reply).
    #[error("the mail server refused the message (smtp {code})")]
    Rejected {
        /// The SMTP reply code, e.g. 550.
        code: u16,
    },
    /// The mail server cannot be reached, timed out or refused for now (an
    /// SMTP 4xx reply, a network or TLS failure); a later retry may work.
    /// The source never holds an address or the server's reply text.
    #[error("the mail server is unavailable")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl MailError {
    /// Whether a later retry of the same message may succeed.
    #[must_use]
    pub const fn is_transient(&self) -> bool {
        matches!(self, Self::Unavailable(_))
    }
}

/// Whether email of a resource in `mode` may leave the service: never in
/// test mode (portal accounts are still provisioned, and the answer reports
/// the invite as suppressed).
#[must_use]
pub const fn deliverable(mode: Mode) -> bool {
    match mode {
        Mode::Test => false,
        Mode::Live => true,
    }
}

/// The invitation of an enrollment signatory, provisioned as an
/// employer-portal admin, to set a password at `set_password_url`.
#[must_use]
pub fn portal_invite(to: &str, set_password_url: &str) -> OutboundEmail {
    OutboundEmail {
        to: to.to_owned(),
        subject: format!("Set up your {SERVICE_NAME} employer portal"),
        text: format!(
            "You have been made an administrator of your company's {SERVICE_NAME} \
             employer portal.\n\
             \n\
             Set your password here:\n\
             {set_password_url}\n\
             \n\
             If you did not expect this email, you can ignore it.\n"
        ),
        kind: EmailKind::PortalInvite,
    }
}

/// An enrolled member's login: the text names only the service and the
/// link.
#[must_use]
pub fn member_login(to: &str, login_url: &str) -> OutboundEmail {
    OutboundEmail {
        to: to.to_owned(),
        subject: format!("Your {SERVICE_NAME} benefits login"),
        text: format!(
            "Your {SERVICE_NAME} benefits account is ready.\n\
             \n\
             Sign in here:\n\
             {login_url}\n"
        ),
        kind: EmailKind::MemberLogin,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::{Mailer, MockMailer};

    #[test]
    fn only_live_mode_delivers() {
        for (mode, want) in [(Mode::Test, false), (Mode::Live, true)] {
            assert_eq!(deliverable(mode), want, "{mode:?}");
        }
    }

    fn check(message: &OutboundEmail, kind: EmailKind, subject: &str, text: &str) {
        assert_eq!(message.kind, kind);
        assert_eq!(message.subject, subject);
        assert_eq!(message.text, text);
    }

    #[test]
    fn builders_write_subject_and_text() {
        check(
            &portal_invite(
                "hr@acme.example",
                "http://127.0.0.1:8080/portal/set-password?token=ab",
            ),
            EmailKind::PortalInvite,
            "Set up your Service employer portal",
            "You have been made an administrator of your company's Service employer portal.\n\
             \n\
             Set your password here:\n\
             http://127.0.0.1:8080/portal/set-password?token=ab\n\
             \n\
             If you did not expect this email, you can ignore it.\n",
        );
        check(
            &member_login("pat@acme.example", "https://login.service.example/x"),
            EmailKind::MemberLogin,
            "Your Service benefits login",
            "Your Service benefits account is ready.\n\nSign in here:\nhttps://login.service.example/x\n",
        );
    }

    #[test]
    fn the_member_login_names_only_the_service_and_the_link() {
        let link = "https://login.service.example/m/1";
        let m = member_login("pat@acme.example", link);
        assert_eq!(m.to, "pat@acme.example");
        let rest = m.text.replace(link, "").replace(SERVICE_NAME, "");
        assert_eq!(
            rest,
            "Your  benefits account is ready.\n\nSign in here:\n\n"
        );
        assert!(!m.text.contains("pat@acme.example"));
    }

    #[test]
    fn debug_hides_the_address_and_the_text() {
        let m = member_login("pat@acme.example", "https://login.service.example/secret");
        let debug = format!("{m:?}");
        assert!(!debug.contains('@'), "{debug}");
        assert!(!debug.contains("secret"), "{debug}");
        assert!(debug.contains("MemberLogin"), "{debug}");
    }

    #[test]
    fn only_unavailability_is_transient() {
        assert!(MailError::Unavailable("timed out".into()).is_transient());
        assert!(!MailError::Rejected { code: 550 }.is_transient());
        assert!(!MailError::InvalidAddress.is_transient());
        assert!(!MailError::InvalidMessage.is_transient());
        assert_eq!(
            MailError::Rejected { code: 550 }.to_string(),
            "the mail server refused the message (smtp 550)"
        );
    }

    #[tokio::test]
    async fn the_mailer_is_a_port() {
        let mut mock = MockMailer::new();
        mock.expect_send()
            .withf(|m| m.kind == EmailKind::PortalInvite && m.to == "hr@acme.example")
            .times(1)
            .returning(|_| Ok(()));
        mock.expect_send()
            .withf(|m| m.kind == EmailKind::MemberLogin)
            .returning(|_| Err(MailError::Rejected { code: 550 }));
        let mailer: &dyn Mailer = &mock;
        let invite = portal_invite("hr@acme.example", "https://p.example/s");
        assert!(mailer.send(&invite).await.is_ok());
        let login = member_login("pat@acme.example", "https://l.example/");
        assert!(matches!(
            mailer.send(&login).await,
            Err(MailError::Rejected { code: 550 })
        ));
    }
}
