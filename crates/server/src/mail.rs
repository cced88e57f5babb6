//! The outbound email port from the settings: [`mailer`] builds the
//! `Mailer` the services send through, from `[email]`.

use std::sync::Arc;

use anyhow::Context as _;
use domain::ports::Mailer;
use mail::{MailUrl, RecordingMailer, SmtpMailer};

use crate::config::Settings;

/// The mailer `settings.email` asks for: a [`RecordingMailer`] for
/// `record:` (the default), else an [`SmtpMailer`]. Opens no connection
/// and needs no runtime; the first message connects. Logs where mail goes,
/// without credentials.
///
/// # Errors
/// When the SMTP transport cannot be set up (TLS parameters for the host).
pub fn mailer(settings: &Settings) -> anyhow::Result<Arc<dyn Mailer>> {
    let email = &settings.email;
    let mailer: Arc<dyn Mailer> = match &email.url {
        MailUrl::Record => Arc::new(RecordingMailer::new()),
        MailUrl::Smtp(url) => Arc::new(
            SmtpMailer::new(url, &email.from)
                .with_context(|| format!("cannot set up email.url ({url})"))?,
        ),
    };
    tracing::info!(email = %email.url, "mailer ready");
    Ok(mailer)
}

#[cfg(test)]
mod tests {
    use domain::email::member_login;

    use super::*;
    use crate::config::Overrides;

    fn settings(env: &[(&str, &str)]) -> Settings {
        let env = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned()));
        Settings::load(None, env, &Overrides::default()).unwrap()
    }

    #[tokio::test]
    async fn the_default_records_and_sends_nothing() {
        let mailer = mailer(&settings(&[])).unwrap();
        let m = member_login("pat@acme.example", Some("https://l.example/"));
        mailer.send(&m).await.unwrap();
    }

    #[test]
    fn an_smtp_url_builds_an_smtp_mailer_without_connecting() {
        let s = settings(&[
            (
                "PARTNER_API_EMAIL__URL",
                "smtps://apikey:S3cret@mail.example.com",
            ),
            ("PARTNER_API_EMAIL__FROM", "Service <hello@service.example>"),
        ]);
        assert!(mailer(&s).is_ok());
    }
}
