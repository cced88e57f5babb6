//! Outbound email (onboarding §6): the messages the service sends (the
//! employer portal invitation, a new portal link, a password reset, a
//! lockout notice, a member's benefits login), each with a text and an
//! HTML part, the rule that test mode never sends, and the [`MailError`]
//! of the [`crate::ports::Mailer`] port.
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
    /// The partner asked for a new set-password link (`portal_links`).
    PortalLink,
    /// The admin asked to reset a forgotten password.
    PasswordReset,
    /// Too many failed sign-ins locked the admin's account.
    Lockout,
    /// An employee is invited to the company's new plan.
    EmployeeInvite,
    /// The offer iframe's verification code.
    EmbedCode,
    /// A live webhook endpoint failed for days and was disabled (to the
    /// partner's portal admins).
    EndpointDisabled,
}

impl EmailKind {
    /// A stable name for logs and metrics (`portal_invite`,
    /// `member_login`).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::PortalInvite => "portal_invite",
            Self::MemberLogin => "member_login",
            Self::PortalLink => "portal_link",
            Self::PasswordReset => "password_reset",
            Self::Lockout => "lockout",
            Self::EmployeeInvite => "employee_invite",
            Self::EmbedCode => "embed_code",
            Self::EndpointDisabled => "endpoint_disabled",
        }
    }

    /// Parses [`EmailKind::as_str`].
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::PortalInvite,
            Self::MemberLogin,
            Self::PortalLink,
            Self::PasswordReset,
            Self::Lockout,
            Self::EmployeeInvite,
            Self::EmbedCode,
            Self::EndpointDisabled,
        ]
        .into_iter()
        .find(|k| k.as_str() == text)
    }
}

impl fmt::Display for EmailKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One message to one recipient, with a plain-text and an HTML part.
#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OutboundEmail {
    /// The recipient's address.
    pub to: String,
    /// The subject line.
    pub subject: String,
    /// The plain-text body.
    pub text: String,
    /// The HTML body (the same words, a link that can be clicked).
    #[serde(default)]
    pub html: String,
    /// Why it is sent.
    #[serde(with = "kind_str")]
    pub kind: EmailKind,
}

mod kind_str {
    //! [`super::EmailKind`] as its stable name.
    use serde::{Deserialize as _, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(k: &super::EmailKind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(k.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<super::EmailKind, D::Error> {
        let text = String::deserialize(d)?;
        super::EmailKind::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown email kind {text}")))
    }
}

/// `text` with `&`, `<`, `>`, `"` and `'` escaped for HTML.
#[must_use]
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A message of `kind`: paragraphs of text, then a link (text and HTML
/// parts say the same).
fn message(
    kind: EmailKind,
    to: &str,
    subject: String,
    before: &[String],
    link: Option<(&str, &str)>,
    after: &[&str],
) -> OutboundEmail {
    let mut text = String::new();
    let mut html = String::from("<!doctype html><html><body>");
    for p in before {
        text.push_str(p);
        text.push_str("\n\n");
        html.push_str(&format!("<p>{}</p>", escape_html(p)));
    }
    if let Some((label, url)) = link {
        text.push_str(&format!("{label}:\n{url}\n"));
        let url = escape_html(url);
        html.push_str(&format!(
            "<p><a href=\"{url}\">{}</a></p>",
            escape_html(label)
        ));
    }
    for p in after {
        text.push('\n');
        text.push_str(p);
        text.push('\n');
        html.push_str(&format!("<p>{}</p>", escape_html(p)));
    }
    html.push_str("</body></html>");
    OutboundEmail {
        to: to.to_owned(),
        subject,
        text,
        html,
        kind,
    }
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
    message(
        EmailKind::PortalInvite,
        to,
        format!("Set up your {SERVICE_NAME} employer portal"),
        &[format!(
            "You have been made an administrator of your company's {SERVICE_NAME} \
             employer portal."
        )],
        Some(("Set your password here", set_password_url)),
        &["If you did not expect this email, you can ignore it."],
    )
}

/// A new set-password link the partner asked for.
#[must_use]
pub fn portal_link(to: &str, set_password_url: &str) -> OutboundEmail {
    message(
        EmailKind::PortalLink,
        to,
        format!("Your new {SERVICE_NAME} employer portal link"),
        &[format!(
            "Here is a new link to set the password of your company's {SERVICE_NAME} \
             employer portal. Earlier links no longer work; this one works once, \
             for 7 days."
        )],
        Some(("Set your password here", set_password_url)),
        &["If you did not expect this email, you can ignore it."],
    )
}

/// A password reset the admin asked for.
#[must_use]
pub fn password_reset(to: &str, set_password_url: &str) -> OutboundEmail {
    message(
        EmailKind::PasswordReset,
        to,
        format!("Reset your {SERVICE_NAME} employer portal password"),
        &[
            "Someone asked to reset the password of this employer portal account. \
           The link works once, for 7 days."
                .to_owned(),
        ],
        Some(("Choose a new password here", set_password_url)),
        &["If you did not ask for it, you can ignore this email: your password is unchanged."],
    )
}

/// The notice that failed sign-ins locked the account for 15 minutes.
#[must_use]
pub fn lockout(to: &str, signin_url: &str) -> OutboundEmail {
    message(
        EmailKind::Lockout,
        to,
        format!("Your {SERVICE_NAME} employer portal account is locked for 15 minutes"),
        &[
            "There were 5 failed sign-ins to your employer portal account in 15 minutes, \
           so it is locked for 15 minutes."
                .to_owned(),
        ],
        Some(("Sign in again after that here", signin_url)),
        &["If these sign-ins were not yours, reset your password from the sign-in page."],
    )
}

/// The notice that failed sign-ins locked a partner portal account for
/// 15 minutes.
#[must_use]
pub fn partner_lockout(to: &str, signin_url: &str) -> OutboundEmail {
    message(
        EmailKind::Lockout,
        to,
        format!("Your {SERVICE_NAME} partner portal account is locked for 15 minutes"),
        &[
            "There were 5 failed sign-ins or two-factor codes for your partner portal account in 15 minutes, \
           so it is locked for 15 minutes."
                .to_owned(),
        ],
        Some(("Sign in again after that here", signin_url)),
        &["If these attempts were not yours, ask an admin of your team for a new set-password link."],
    )
}

/// The notice to a partner's portal admin that its live webhook endpoint
/// failed every attempt for `hours` hours and was disabled.
#[must_use]
pub fn endpoint_disabled(
    to: &str,
    endpoint: &str,
    hours: f64,
    webhooks_url: &str,
) -> OutboundEmail {
    message(
        EmailKind::EndpointDisabled,
        to,
        format!("Your {SERVICE_NAME} live webhook endpoint was disabled"),
        &[
            format!(
                "Every delivery to {endpoint} failed for {hours} hours, so the endpoint is disabled and nothing is sent to it."
            ),
            "Events are kept 30 days: once the receiver works again, re-enable the endpoint (register the same URL) and replay the window it missed."
                .to_owned(),
        ],
        Some(("See the delivery log and re-enable it here", webhooks_url)),
        &["You receive this as an admin of your partner portal."],
    )
}

/// An employee's invitation to the company's new plan (the employer
/// portal's last step, live mode). It names the company and the start
/// date, and no health data.
#[must_use]
pub fn employee_invite(to: &str, company: &str, start_date: &str) -> OutboundEmail {
    message(
        EmailKind::EmployeeInvite,
        to,
        format!("{company} offers you a new benefits plan with {SERVICE_NAME}"),
        &[
            format!(
                "{company} has set up a health savings plan with {SERVICE_NAME}. \
                 Coverage starts on {start_date}."
            ),
            "Your HR team will tell you how to make your elections before then.".to_owned(),
        ],
        None,
        &["If you do not work for this company, you can ignore this email."],
    )
}

/// The offer iframe's verification code, valid 10 minutes.
#[must_use]
pub fn embed_code(to: &str, code: &str, company: &str) -> OutboundEmail {
    message(
        EmailKind::EmbedCode,
        to,
        format!("Your {SERVICE_NAME} verification code: {code}"),
        &[
            format!("Enter {code} to see and accept the benefits offer for {company}."),
            "The code works for 10 minutes.".to_owned(),
        ],
        None,
        &["If you did not ask for this code, you can ignore this email."],
    )
}

/// An enrolled member's login: the text names only the service and, when
/// the service knows where members sign in (`members.login_url`), the
/// link; never a link that leads nowhere.
#[must_use]
pub fn member_login(to: &str, login_url: Option<&str>) -> OutboundEmail {
    let mut lines = vec![format!("Your {SERVICE_NAME} benefits account is ready.")];
    if login_url.is_none() {
        lines.push("Your employer's benefits team will tell you where to sign in.".to_owned());
    }
    message(
        EmailKind::MemberLogin,
        to,
        format!("Your {SERVICE_NAME} benefits login"),
        &lines,
        login_url.map(|url| ("Sign in here", url)),
        &[],
    )
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
            &member_login(
                "pat@acme.example",
                Some("https://members.benefits.example/x"),
            ),
            EmailKind::MemberLogin,
            "Your Service benefits login",
            "Your Service benefits account is ready.\n\nSign in here:\nhttps://members.benefits.example/x\n",
        );
        // Without a configured sign-in page there is no link at all.
        check(
            &member_login("pat@acme.example", None),
            EmailKind::MemberLogin,
            "Your Service benefits login",
            "Your Service benefits account is ready.\n\nYour employer's benefits team will tell you where to sign in.\n\n",
        );
    }

    #[test]
    fn the_member_login_names_only_the_service_and_the_link() {
        let link = "https://members.benefits.example/m/1";
        let m = member_login("pat@acme.example", Some(link));
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
        let m = member_login(
            "pat@acme.example",
            Some("https://members.benefits.example/secret"),
        );
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
        let login = member_login("pat@acme.example", Some("https://l.example/"));
        assert!(matches!(
            mailer.send(&login).await,
            Err(MailError::Rejected { code: 550 })
        ));
    }
}
