//! [`RecordingMailer`], the default mailer: it sends nothing and keeps what
//! would have been sent, for tests and for deployments without an SMTP
//! server.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;
use domain::email::{MailError, OutboundEmail};
use domain::ports::Mailer;

/// How many messages a [`RecordingMailer::new`] keeps: the most recent
/// ones, so that a long-running server without SMTP does not grow without
/// bound (elections email every enrolled member).
pub const DEFAULT_KEEP: usize = 10_000;

/// Records every message instead of sending it, keeping the most recent
/// ones in memory, and logs one line per message with its kind only
/// (never the address, the subject or the text).
#[derive(Debug)]
pub struct RecordingMailer {
    keep: usize,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    kept: VecDeque<OutboundEmail>,
    recorded: u64,
}

impl RecordingMailer {
    /// A mailer keeping the last [`DEFAULT_KEEP`] messages.
    #[must_use]
    pub fn new() -> Self {
        Self::keeping(DEFAULT_KEEP)
    }

    /// A mailer keeping the last `keep` messages (at least one).
    #[must_use]
    pub fn keeping(keep: usize) -> Self {
        Self {
            keep: keep.max(1),
            state: Mutex::default(),
        }
    }

    /// The messages kept, oldest first.
    #[must_use]
    pub fn sent(&self) -> Vec<OutboundEmail> {
        self.lock().kept.iter().cloned().collect()
    }

    /// How many messages were recorded since the start, including those no
    /// longer kept.
    #[must_use]
    pub fn recorded(&self) -> u64 {
        self.lock().recorded
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the queue half
        // written, so a poisoned lock is still good.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for RecordingMailer {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Mailer for RecordingMailer {
    async fn send(&self, message: &OutboundEmail) -> Result<(), MailError> {
        if message.to.trim().parse::<lettre::Address>().is_err() {
            return Err(MailError::InvalidAddress);
        }
        let recorded = {
            let mut state = self.lock();
            if state.kept.len() >= self.keep {
                state.kept.pop_front();
            }
            state.kept.push_back(message.clone());
            state.recorded = state.recorded.saturating_add(1);
            state.recorded
        };
        tracing::info!(
            kind = message.kind.as_str(),
            recorded,
            "email recorded, not sent"
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use domain::email::{EmailKind, member_login, portal_invite};

    use super::*;

    #[tokio::test]
    async fn keeps_what_would_be_sent_in_order() {
        let mailer = RecordingMailer::new();
        assert!(mailer.sent().is_empty());
        let invite = portal_invite("hr@acme.example", "https://p.example/set");
        let login = member_login("pat@acme.example", Some("https://l.example/in"));
        mailer.send(&invite).await.unwrap();
        mailer.send(&login).await.unwrap();
        assert_eq!(mailer.sent(), vec![invite, login]);
        assert_eq!(mailer.recorded(), 2);
    }

    #[tokio::test]
    async fn keeps_only_the_most_recent() {
        let mailer = RecordingMailer::keeping(2);
        for n in 0..5 {
            let m = member_login(&format!("m{n}@acme.example"), Some("https://l.example/"));
            mailer.send(&m).await.unwrap();
        }
        let to: Vec<String> = mailer.sent().into_iter().map(|m| m.to).collect();
        assert_eq!(to, ["m3@acme.example", "m4@acme.example"]);
        assert_eq!(mailer.recorded(), 5);
        assert_eq!(RecordingMailer::keeping(0).keep, 1);
    }

    #[tokio::test]
    async fn refuses_what_is_not_an_address() {
        let mailer = RecordingMailer::default();
        for bad in ["", "pat", "pat@", "Pat <pat@acme.example>"] {
            let m = member_login(bad, Some("https://l.example/"));
            assert!(
                matches!(mailer.send(&m).await, Err(MailError::InvalidAddress)),
                "{bad:?}"
            );
        }
        assert!(mailer.sent().is_empty());
        assert_eq!(mailer.recorded(), 0);
    }

    /// A `tracing` writer into a shared buffer.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn logs_one_line_per_message_without_address_or_text() {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);

        let mailer = RecordingMailer::new();
        let link = "http://127.0.0.1:8080/portal/set-password?token=cafe";
        mailer
            .send(&portal_invite("hr.admin@acme.example", link))
            .await
            .unwrap();
        mailer
            .send(&member_login(
                "pat@acme.example",
                Some("https://l.example/x"),
            ))
            .await
            .unwrap();

        let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(lines.len(), 2, "{log}");
        assert!(
            lines.first().unwrap().contains("kind=\"portal_invite\""),
            "{log}"
        );
        assert!(
            lines.get(1).unwrap().contains("kind=\"member_login\""),
            "{log}"
        );
        assert!(!log.contains('@'), "an address reached the log: {log}");
        assert!(!log.contains("token") && !log.contains("https://"), "{log}");
        assert!(!log.contains("Set up your"), "{log}");
        assert_eq!(
            mailer.sent().first().map(|m| m.kind),
            Some(EmailKind::PortalInvite)
        );
    }
}
