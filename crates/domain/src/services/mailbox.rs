//! Email through the job queue (onboarding §6): a use case that sends a
//! message stores an `email` job in the same transaction as its change,
//! so the request never waits on the mail server and a send that fails is
//! retried by the worker. The message is sealed to its job (AEAD, the
//! configured key) while it waits. Test mode never sends: no job is made,
//! and the caller reports the email as suppressed.

use std::sync::Arc;

use async_trait::async_trait;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::document::JobPayload;
use crate::document::job::EmailDue;
use crate::email::{OutboundEmail, deliverable};
use crate::ids::{GroupId, JobId};
use crate::job::{Job, NewJob};
use crate::ports::{Mailer, Minter, Sealer};
use crate::scope::Scope;
use crate::services::jobs::{JobHandler, JobOutput};

/// Makes `email` jobs.
#[derive(Clone)]
pub struct Mailbox {
    sealer: Arc<dyn Sealer>,
}

fn context(id: &JobId) -> Vec<u8> {
    format!("email:{}", id.as_str()).into_bytes()
}

impl Mailbox {
    /// A mailbox sealing with `sealer`.
    #[must_use]
    pub fn new(sealer: Arc<dyn Sealer>) -> Self {
        Self { sealer }
    }

    /// The job that sends `message` for `scope`, due at `now_ms`; `None` in
    /// test mode (suppressed).
    #[must_use]
    pub fn job(
        &self,
        minter: &Minter<'_>,
        scope: &Scope,
        group_id: Option<&GroupId>,
        message: &OutboundEmail,
        now_ms: i64,
    ) -> Option<NewJob> {
        if !deliverable(scope.mode) {
            return None;
        }
        let id = minter.job_id();
        // Serializing a struct of strings cannot fail.
        let plain = serde_json::to_vec(message).unwrap_or_default();
        let sealed = STANDARD.encode(self.sealer.seal(&plain, &context(&id)));
        Some(NewJob {
            id,
            scope: scope.clone(),
            group_id: group_id.cloned(),
            payload: JobPayload::Email(EmailDue {
                kind: message.kind.as_str().to_owned(),
                sealed,
            }),
            run_after_ms: now_ms,
        })
    }
}

/// Runs `email` jobs: opens the message and hands it to the mailer. A
/// message the server refused for good is dropped (retrying cannot help);
/// one that could not be sent for now is retried with the worker's
/// backoff.
#[derive(Clone)]
pub struct EmailHandler {
    sealer: Arc<dyn Sealer>,
    mailer: Arc<dyn Mailer>,
}

impl EmailHandler {
    /// The handler over its ports.
    #[must_use]
    pub fn new(sealer: Arc<dyn Sealer>, mailer: Arc<dyn Mailer>) -> Self {
        Self { sealer, mailer }
    }
}

#[async_trait]
impl JobHandler for EmailHandler {
    async fn run(&self, job: &Job) -> Result<JobOutput, String> {
        let JobPayload::Email(due) = &job.job.payload else {
            return Err("an email job needs its message".to_owned());
        };
        let sealed = STANDARD
            .decode(&due.sealed)
            .map_err(|_| "the sealed message is not base64".to_owned())?;
        let plain = self
            .sealer
            .open(&sealed, &context(&job.job.id))
            .map_err(|_| "the message does not open with the configured key".to_owned())?;
        let message: OutboundEmail = serde_json::from_slice(&plain)
            .map_err(|_| "the sealed message does not read".to_owned())?;
        match self.mailer.send(&message).await {
            Ok(()) => Ok(JobOutput::default()),
            Err(e) if e.is_transient() => Err(format!("{} not sent: {e}", due.kind)),
            // Refused for good: nothing a retry can change; the job ends.
            Err(e) => Ok(JobOutput {
                events: Vec::new(),
                result: Some(
                    serde_json::json!({"sent": false, "reason": e.to_string()}).to_string(),
                ),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::email::{EmailKind, MailError, portal_invite};
    use crate::ids::PartnerId;
    use crate::job::Job;
    use crate::mode::Mode;
    use crate::ports::{Entropy, MockMailer, MockSealer};

    struct Zero;
    impl Entropy for Zero {
        fn fill(&self, buf: &mut [u8]) {
            buf.fill(7);
        }
    }

    fn sealer() -> MockSealer {
        let mut s = MockSealer::new();
        s.expect_seal().returning(|p, c| [c, b"|", p].concat());
        s.expect_open().returning(|s, c| {
            s.strip_prefix(c)
                .and_then(|r| r.strip_prefix(b"|"))
                .map(<[u8]>::to_vec)
                .ok_or(crate::ports::Unseal)
        });
        s
    }

    fn scope(mode: Mode) -> Scope {
        Scope::new(PartnerId::parse("prt_0123456789ab").unwrap(), mode)
    }

    fn job_of(new: NewJob) -> Job {
        Job {
            job: new,
            state: crate::job::JobState::Running,
            attempts: 1,
            locked_until_ms: None,
        }
    }

    #[test]
    fn test_mode_makes_no_job() {
        let mailbox = Mailbox::new(Arc::new(sealer()));
        let m = portal_invite("hr@acme.example", "http://127.0.0.1:8080/portal/x");
        assert!(
            mailbox
                .job(&Minter::new(&Zero), &scope(Mode::Test), None, &m, 5)
                .is_none()
        );
    }

    #[tokio::test]
    async fn a_job_holds_the_message_sealed_and_the_handler_sends_it() {
        let mailbox = Mailbox::new(Arc::new(sealer()));
        let m = portal_invite("hr@acme.example", "http://127.0.0.1:8080/portal/x");
        let new = mailbox
            .job(&Minter::new(&Zero), &scope(Mode::Live), None, &m, 5)
            .unwrap();
        assert_eq!(new.run_after_ms, 5);
        let JobPayload::Email(due) = &new.payload else {
            panic!("{:?}", new.payload)
        };
        assert_eq!(due.kind, "portal_invite");
        assert!(!due.sealed.contains("hr@acme"));
        let mut mailer = MockMailer::new();
        let want = m.clone();
        mailer
            .expect_send()
            .withf(move |got| *got == want)
            .times(1)
            .returning(|_| Ok(()));
        let handler = EmailHandler::new(Arc::new(sealer()), Arc::new(mailer));
        assert!(handler.run(&job_of(new)).await.is_ok());
    }

    #[tokio::test]
    async fn an_unavailable_server_is_retried_and_a_refusal_is_not() {
        let mailbox = Mailbox::new(Arc::new(sealer()));
        let m = portal_invite("hr@acme.example", "http://127.0.0.1:8080/portal/x");
        let new = mailbox
            .job(&Minter::new(&Zero), &scope(Mode::Live), None, &m, 5)
            .unwrap();
        let mut mailer = MockMailer::new();
        mailer
            .expect_send()
            .times(1)
            .returning(|_| Err(MailError::Unavailable("down".into())));
        mailer
            .expect_send()
            .times(1)
            .returning(|_| Err(MailError::Rejected { code: 550 }));
        let handler = EmailHandler::new(Arc::new(sealer()), Arc::new(mailer));
        let job = job_of(new);
        assert!(handler.run(&job).await.is_err());
        assert!(handler.run(&job).await.is_ok());
        assert_eq!(EmailKind::parse("lockout"), Some(EmailKind::Lockout));
    }
}
