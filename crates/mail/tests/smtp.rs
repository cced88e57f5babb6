//! `SmtpMailer` against a real SMTP listener started in the test: a small
//! tokio TCP server speaking enough SMTP (EHLO, MAIL, RCPT, DATA, QUIT) over
//! plain TCP (`smtp://`, no TLS) that records the envelope and the DATA.

#![expect(
    clippy::unwrap_used,
    reason = "test code fails loudly on a broken expectation"
)]

use std::time::Duration;

use domain::email::{MailError, member_login, portal_invite};
use domain::ports::Mailer;
use mail::{FromAddress, MailUrl, SmtpMailer};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// What the listener saw of one session.
#[derive(Debug, Default)]
struct Transcript {
    commands: Vec<String>,
    mail_from: Vec<String>,
    rcpt_to: Vec<String>,
    data: Vec<String>,
}

/// Starts a listener on a free loopback port that serves one session,
/// answering `RCPT` with `rcpt_reply`, and returns its port and the
/// session's transcript.
async fn smtp_server(rcpt_reply: &'static str) -> (u16, JoinHandle<Transcript>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let session = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let (read, mut write) = stream.into_split();
        let mut lines = BufReader::new(read).lines();
        let mut t = Transcript::default();
        write
            .write_all(b"220 test.local ESMTP ready\r\n")
            .await
            .unwrap();
        while let Some(line) = lines.next_line().await.unwrap() {
            t.commands.push(line.clone());
            let upper = line.to_ascii_uppercase();
            let reply: &str = if upper.starts_with("EHLO") || upper.starts_with("HELO") {
                "250-test.local greets you\r\n250 8BITMIME\r\n"
            } else if let Some(rest) = upper.strip_prefix("MAIL FROM:") {
                t.mail_from
                    .push(line.get(line.len() - rest.len()..).unwrap().to_owned());
                "250 2.1.0 ok\r\n"
            } else if let Some(rest) = upper.strip_prefix("RCPT TO:") {
                t.rcpt_to
                    .push(line.get(line.len() - rest.len()..).unwrap().to_owned());
                rcpt_reply
            } else if upper == "DATA" {
                write
                    .write_all(b"354 end with <CRLF>.<CRLF>\r\n")
                    .await
                    .unwrap();
                while let Some(data) = lines.next_line().await.unwrap() {
                    if data == "." {
                        break;
                    }
                    t.data.push(data);
                }
                "250 2.0.0 queued\r\n"
            } else if upper == "QUIT" {
                write.write_all(b"221 2.0.0 bye\r\n").await.unwrap();
                break;
            } else {
                "250 ok\r\n"
            };
            write.write_all(reply.as_bytes()).await.unwrap();
        }
        t
    });
    (port, session)
}

fn mailer(port: u16) -> SmtpMailer {
    let MailUrl::Smtp(url) = MailUrl::parse(&format!("smtp://127.0.0.1:{port}")).unwrap() else {
        panic!("not an smtp url");
    };
    let from = FromAddress::parse("Service <no-reply@service.example>").unwrap();
    SmtpMailer::new(&url, &from).unwrap()
}

async fn transcript(session: JoinHandle<Transcript>) -> Transcript {
    tokio::time::timeout(Duration::from_secs(10), session)
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn the_message_arrives_with_to_subject_and_body() {
    let (port, session) = smtp_server("250 2.1.5 ok\r\n").await;
    let link = "https://login.service.example/m/7f3a";
    let message = member_login("pat.doe@acme.example", Some(link));
    mailer(port).send(&message).await.unwrap();

    let t = transcript(session).await;
    assert!(t.commands.first().unwrap().starts_with("EHLO "), "{t:?}");
    assert_eq!(t.mail_from, ["<no-reply@service.example>"], "{t:?}");
    assert_eq!(t.rcpt_to, ["<pat.doe@acme.example>"], "{t:?}");
    assert_eq!(t.commands.last().map(String::as_str), Some("QUIT"));

    let blank = t.data.iter().position(String::is_empty).unwrap();
    let (headers, body) = t.data.split_at(blank);
    let header = |name: &str| {
        headers
            .iter()
            .find_map(|h| h.strip_prefix(&format!("{name}: ")))
            .unwrap_or_else(|| panic!("no {name} header in {headers:?}"))
    };
    assert_eq!(header("To"), "pat.doe@acme.example");
    assert_eq!(header("From"), "Service <no-reply@service.example>");
    assert_eq!(header("Subject"), "Your Service benefits login");
    assert!(
        header("Content-Type").starts_with("text/plain"),
        "{headers:?}"
    );
    let body = body.get(1..).unwrap().join("\n");
    assert_eq!(body.trim_end(), message.text.trim_end());
    assert!(body.contains(link));
}

#[tokio::test]
async fn a_long_invite_survives_transfer_encoding() {
    let (port, session) = smtp_server("250 ok\r\n").await;
    let link = format!(
        "http://127.0.0.1:8080/portal/set-password?token={}",
        "ab".repeat(32)
    );
    mailer(port)
        .send(&portal_invite("hr@acme.example", &link))
        .await
        .unwrap();
    let t = transcript(session).await;
    // Quoted-printable may wrap long lines with a trailing `=`; undo it.
    let data = t.data.join("\n").replace("=\n", "").replace("=3D", "=");
    assert!(
        data.contains("Subject: Set up your Service employer portal"),
        "{data}"
    );
    assert!(data.contains(&link), "{data}");
    assert!(data.contains("administrator of your company's Service employer portal"));
}

#[tokio::test]
async fn a_permanent_refusal_is_rejected_without_the_address() {
    let (port, session) =
        smtp_server("550 5.1.1 <gone@acme.example>: Recipient address rejected\r\n").await;
    let err = mailer(port)
        .send(&member_login(
            "gone@acme.example",
            Some("https://l.example/"),
        ))
        .await
        .unwrap_err();
    assert!(matches!(err, MailError::Rejected { code: 550 }), "{err:?}");
    assert!(!err.is_transient());
    assert!(!format!("{err} {err:?}").contains('@'), "{err:?}");
    let t = transcript(session).await;
    assert!(t.data.is_empty(), "no DATA after a refused recipient");
}

#[tokio::test]
async fn a_temporary_refusal_is_unavailable_without_the_reply_text() {
    let (port, _session) =
        smtp_server("451 4.7.1 <slow@acme.example>: greylisted, try later\r\n").await;
    let err = mailer(port)
        .send(&member_login(
            "slow@acme.example",
            Some("https://l.example/"),
        ))
        .await
        .unwrap_err();
    assert!(err.is_transient(), "{err:?}");
    let source = std::error::Error::source(&err).unwrap().to_string();
    assert_eq!(source, "smtp 451");
    assert!(!format!("{err:?}").contains("greylisted"));
}

#[tokio::test]
async fn an_unreachable_server_is_unavailable() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        listener.local_addr().unwrap().port()
    };
    let err = mailer(port)
        .send(&member_login(
            "pat@acme.example",
            Some("https://l.example/"),
        ))
        .await
        .unwrap_err();
    assert!(err.is_transient(), "{err:?}");
    let source = std::error::Error::source(&err).unwrap().to_string();
    assert!(source.starts_with("connection failed"), "{source}");
}

#[tokio::test]
async fn an_invalid_recipient_is_refused_before_connecting() {
    // Nothing listens: the address is checked first.
    let err = mailer(9)
        .send(&member_login("not an address", Some("https://l.example/")))
        .await
        .unwrap_err();
    assert!(matches!(err, MailError::InvalidAddress), "{err:?}");
}

#[test]
fn building_needs_no_runtime_and_debug_hides_credentials() {
    let MailUrl::Smtp(url) = MailUrl::parse("smtps://alice:hunter2@mail.example.com").unwrap()
    else {
        panic!("not an smtp url");
    };
    let from = FromAddress::parse("no-reply@service.example").unwrap();
    let mailer = SmtpMailer::new(&url, &from).unwrap();
    let debug = format!("{mailer:?}");
    assert!(
        !debug.contains("alice") && !debug.contains("hunter2"),
        "{debug}"
    );
    assert!(debug.contains("smtps mail.example.com:465"), "{debug}");
}
