//! Embed sessions (contract section 3): a signed, self-contained token for
//! the offer page of one quote, valid 30 minutes. Nothing is stored: the
//! token carries the session id, the scope, the group, the quote and the
//! expiry, signed with an HMAC-SHA256 key derived from the sealing key
//! ([`Sealer::sign`]). The page reads the quote's numbers when it is shown,
//! and shows none once the quote expired or went stale (the census changed
//! its rating inputs since): a session is made only on a current quote, and
//! an open page is refused the moment its quote stops being current.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::embed::EmbedSession;
use crate::enrollment::QuoteUse;
use crate::error::FieldError;
use crate::group::Group;
use crate::ids::{EmbedSessionId, GroupId, PartnerId, QuoteId};
use crate::mode::Mode;
use crate::page::PageRequest;
use crate::ports::{Clock, Entropy, Minter, Sealer, now_secs};
use crate::quote::{Quote, QuoteKind, QuoteStatus};
use crate::scope::Scope;
use crate::services::quotes::group_pricing_digest;
use crate::services::{EmbedRefusal, ServiceError};
use crate::store::{GroupStore, QuoteStore, StoreError};

/// The purpose the token's MAC key is derived for.
const PURPOSE: &[u8] = b"embed-session";
/// The token format's version, the payload's first field.
const VERSION: &str = "v1";
/// Longest token looked at (a real one is about 150 characters).
const MAX_TOKEN_LEN: usize = 512;
/// Pages of a group's quotes searched for the newest usable one.
const MAX_PAGES: u32 = 50;

/// A created session and the token of its URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    /// The session.
    pub session: EmbedSession,
    /// The signed token (URL-safe).
    pub token: String,
}

/// Why an offer page is not shown.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The token is malformed, tampered with, or names no quote (404).
    #[error("no such offer")]
    NotFound,
    /// The session is past its expiry (410).
    #[error("the offer link expired")]
    Expired,
    /// The quote expired, or the census changed its rating inputs since
    /// (410): its numbers are not shown.
    #[error("{0}")]
    Outdated(QuoteUse),
    /// The store failed.
    #[error(transparent)]
    Service(#[from] ServiceError),
}

/// The embed-sessions service.
#[derive(Clone)]
pub struct EmbedSessions {
    groups: Arc<dyn GroupStore>,
    quotes: Arc<dyn QuoteStore>,
    sealer: Arc<dyn Sealer>,
    clock: Arc<dyn Clock>,
    entropy: Arc<dyn Entropy>,
}

impl EmbedSessions {
    /// The service over its ports.
    #[must_use]
    pub fn new(
        groups: Arc<dyn GroupStore>,
        quotes: Arc<dyn QuoteStore>,
        sealer: Arc<dyn Sealer>,
        clock: Arc<dyn Clock>,
        entropy: Arc<dyn Entropy>,
    ) -> Self {
        Self {
            groups,
            quotes,
            sealer,
            clock,
            entropy,
        }
    }

    /// Creates a session for `quote_id`, or by default for the group's
    /// newest `ready`, unexpired quote priced on the current census.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] outside the scope; `Invalid` (`quote_id`)
    /// for a quote that is not one of this group's; `Conflict` without a
    /// ready quote (or for a named quote that is not `ready`);
    /// `QuoteExpired` for a named quote past its expiry, and for a named
    /// quote the census changed since (stale) or, by default, when every
    /// ready, unexpired quote is stale.
    pub async fn create(
        &self,
        scope: &Scope,
        group: &GroupId,
        quote_id: Option<&QuoteId>,
    ) -> Result<Created, ServiceError> {
        let now = now_secs(self.clock.as_ref());
        let quote = match quote_id {
            // The group must exist in the scope before its quote is judged.
            Some(id) => {
                self.quotes
                    .quotes(scope, group, &PageRequest::first(1))
                    .await?;
                self.named(scope, group, id, now).await?
            }
            None => self.newest_ready(scope, group, now).await?,
        };
        let id = Minter::new(self.entropy.as_ref()).embed_session_id();
        let session = EmbedSession::new(id, scope.clone(), group.clone(), quote.id, now);
        let token = self.token(&session);
        Ok(Created { session, token })
    }

    /// The session of `token` and the quote it shows.
    ///
    /// # Errors
    /// [`OpenError::NotFound`] for a bad token or a quote that is gone;
    /// [`OpenError::Expired`] after the session's 30 minutes;
    /// [`OpenError::Outdated`] once the quote expired or went stale.
    pub async fn open(&self, token: &str) -> Result<(EmbedSession, Quote), OpenError> {
        let session = self.verify(token).ok_or(OpenError::NotFound)?;
        let now = now_secs(self.clock.as_ref());
        if !session.is_live(now) {
            return Err(OpenError::Expired);
        }
        let gone = |e: StoreError| match e {
            StoreError::NotFound => OpenError::NotFound,
            e => OpenError::Service(e.into()),
        };
        let quote = self
            .quotes
            .quote(&session.scope, &session.quote_id)
            .await
            .map_err(gone)?;
        if quote.group_id != session.group_id {
            return Err(OpenError::NotFound);
        }
        if quote.expires_at <= now {
            return Err(OpenError::Outdated(QuoteUse::Expired));
        }
        let group = self
            .groups
            .group(&session.scope, &session.group_id)
            .await
            .map_err(gone)?;
        if is_stale(&quote, &group) {
            return Err(OpenError::Outdated(QuoteUse::Stale));
        }
        Ok((session, quote))
    }

    async fn named(
        &self,
        scope: &Scope,
        group: &GroupId,
        id: &QuoteId,
        now: i64,
    ) -> Result<Quote, ServiceError> {
        let foreign = || {
            ServiceError::Invalid(vec![FieldError::new(
                "quote_id",
                "is not a quote of this group",
            )])
        };
        let quote = match self.quotes.quote(scope, id).await {
            Ok(q) => q,
            Err(StoreError::NotFound) => return Err(foreign()),
            Err(e) => return Err(e.into()),
        };
        if &quote.group_id != group {
            return Err(foreign());
        }
        if quote.kind != QuoteKind::Quote {
            return Err(EmbedRefusal::PriceOnPlanQuote.into());
        }
        if quote.status != QuoteStatus::Ready {
            return Err(EmbedRefusal::NotReady {
                status: quote.status,
            }
            .into());
        }
        if quote.expires_at <= now {
            return Err(EmbedRefusal::Expired.into());
        }
        if is_stale(&quote, &self.groups.group(scope, group).await?) {
            return Err(EmbedRefusal::Stale.into());
        }
        Ok(quote)
    }

    async fn newest_ready(
        &self,
        scope: &Scope,
        group: &GroupId,
        now: i64,
    ) -> Result<Quote, ServiceError> {
        let mut page = PageRequest::first(crate::page::MAX_LIMIT);
        let mut stale = false;
        for _ in 0..MAX_PAGES {
            let found = self.quotes.quotes(scope, group, &page).await?;
            let next = found.next.clone();
            let mut usable = found.items.into_iter().filter(|q| {
                q.kind == QuoteKind::Quote && q.status == QuoteStatus::Ready && q.expires_at > now
            });
            if let Some(first) = usable.next() {
                let current = self.groups.group(scope, group).await?;
                if let Some(q) = std::iter::once(first)
                    .chain(usable)
                    .find(|q| !is_stale(q, &current))
                {
                    return Ok(q);
                }
                stale = true;
            }
            match next {
                Some(after) => page.after = Some(after),
                None => break,
            }
        }
        if stale {
            return Err(EmbedRefusal::Stale.into());
        }
        Err(EmbedRefusal::NoReadyQuote.into())
    }

    /// `base64url(payload) "." base64url(tag)`.
    fn token(&self, s: &EmbedSession) -> String {
        let payload = [
            VERSION,
            s.id.as_str(),
            s.scope.partner.as_str(),
            s.scope.mode.as_str(),
            s.group_id.as_str(),
            s.quote_id.as_str(),
            &s.created_at.to_string(),
            &s.expires_at.to_string(),
        ]
        .join(".");
        let tag = self.sealer.sign(PURPOSE, payload.as_bytes());
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(payload),
            URL_SAFE_NO_PAD.encode(tag)
        )
    }

    /// The session a genuine token carries.
    fn verify(&self, token: &str) -> Option<EmbedSession> {
        if token.len() > MAX_TOKEN_LEN {
            return None;
        }
        let (payload, tag) = token.split_once('.')?;
        let payload = URL_SAFE_NO_PAD.decode(payload).ok()?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        if !self.sealer.verify(PURPOSE, &payload, &tag) {
            return None;
        }
        let text = String::from_utf8(payload).ok()?;
        let mut f = text.split('.');
        let version = f.next()?;
        let id = EmbedSessionId::parse(f.next()?).ok()?;
        let partner = PartnerId::parse(f.next()?).ok()?;
        let mode = match f.next()? {
            "test" => Mode::Test,
            "live" => Mode::Live,
            _ => return None,
        };
        let group_id = GroupId::parse(f.next()?).ok()?;
        let quote_id = QuoteId::parse(f.next()?).ok()?;
        let created_at = f.next()?.parse().ok()?;
        let expires_at = f.next()?.parse().ok()?;
        if version != VERSION || f.next().is_some() {
            return None;
        }
        Some(EmbedSession {
            id,
            scope: Scope::new(partner, mode),
            group_id,
            quote_id,
            created_at,
            expires_at,
        })
    }
}

/// Whether the census changed the quote's rating inputs since it was
/// priced (the rule an enrollment applies).
fn is_stale(quote: &Quote, group: &Group) -> bool {
    quote.rating_digest.as_deref() != group_pricing_digest(group).as_deref()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::{MockClock, MockEntropy, MockSealer};
    use crate::store::{MockGroupStore, MockQuoteStore};

    fn service(now_secs: i64) -> EmbedSessions {
        let mut clock = MockClock::new();
        clock.expect_now_ms().return_const(now_secs * 1000);
        let mut entropy = MockEntropy::new();
        entropy.expect_fill().returning(|b| b.fill(7));
        // A toy MAC: the message's bytes summed with the purpose's length.
        let mut sealer = MockSealer::new();
        let mac = |p: &[u8], m: &[u8]| {
            vec![
                m.iter()
                    .fold(u8::try_from(p.len()).unwrap(), |a, b| a.wrapping_add(*b)),
            ]
        };
        sealer.expect_sign().returning(move |p, m| mac(p, m));
        sealer
            .expect_verify()
            .returning(move |p, m, t| mac(p, m) == t);
        EmbedSessions::new(
            Arc::new(MockGroupStore::new()),
            Arc::new(MockQuoteStore::new()),
            Arc::new(sealer),
            Arc::new(clock),
            Arc::new(entropy),
        )
    }

    fn session() -> EmbedSession {
        EmbedSession::new(
            EmbedSessionId::from_bytes([1; 6]),
            Scope::new(PartnerId::from_bytes([2; 6]), Mode::Live),
            GroupId::from_bytes([3; 6]),
            QuoteId::from_bytes([4; 6]),
            1_000,
        )
    }

    #[test]
    fn a_token_round_trips_and_a_tampered_one_does_not() {
        let svc = service(1_000);
        let s = session();
        let token = svc.token(&s);
        assert!(
            token
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        );
        assert_eq!(svc.verify(&token), Some(s));
        let (payload, tag) = token.split_once('.').unwrap();
        let mut bytes = URL_SAFE_NO_PAD.decode(payload).unwrap();
        *bytes.last_mut().unwrap() ^= 1;
        let forged = format!("{}.{tag}", URL_SAFE_NO_PAD.encode(bytes));
        assert_eq!(svc.verify(&forged), None);
        for bad in ["", ".", "x.y", &"a".repeat(600)] {
            assert_eq!(svc.verify(bad), None, "{bad}");
        }
    }
}
