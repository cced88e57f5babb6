//! Creating an embed session: the quote it shows (the one named, or the
//! group's newest usable one) and a fresh opaque token, of which only the
//! SHA-256 is stored.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::{EmbedSessions, is_stale};
use crate::embed::{EmbedSession, EmbedState, StoredEmbed};
use crate::error::FieldError;
use crate::ids::{GroupId, QuoteId};
use crate::page::{GroupQuery, PageRequest};
use crate::ports::Minter;
use crate::quote::{Quote, QuoteKind, QuoteStatus};
use crate::scope::Scope;
use crate::services::{EmbedRefusal, ServiceError, with_fresh_id};
use crate::store::StoreError;

/// Pages of a group's quotes searched for the newest usable one.
const MAX_PAGES: u32 = 50;
/// Random bytes of a token (256 bits, 43 URL-safe characters).
const TOKEN_BYTES: usize = 32;

/// A created session and the token of its URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    /// The session.
    pub session: EmbedSession,
    /// The opaque token (URL-safe); shown once, stored only as a digest.
    pub token: String,
    /// The offer page: `{public_base_url}/embed/{token}`.
    pub url: String,
}

impl EmbedSessions {
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
        let now = self.now();
        let quote = match quote_id {
            // The group must exist in the scope before its quote is judged.
            Some(id) => {
                self.ports
                    .quotes
                    .quotes(scope, GroupQuery::all(group, &PageRequest::first(1)))
                    .await?;
                self.named(scope, group, id, now).await?
            }
            None => self.newest_ready(scope, group, now).await?,
        };
        with_fresh_id(async || {
            let minter = Minter::new(self.ports.entropy.as_ref());
            let mut bytes = [0u8; TOKEN_BYTES];
            self.ports.entropy.fill(&mut bytes);
            let token = URL_SAFE_NO_PAD.encode(bytes);
            let session = EmbedSession {
                id: minter.embed_session_id(),
                scope: scope.clone(),
                group_id: group.clone(),
                quote_id: quote.id.clone(),
                created_at: now,
                expires_at: now.saturating_add(self.lifetime_secs),
            };
            let stored = StoredEmbed {
                session: session.clone(),
                token_hash: crate::portal::digest(&token),
                state: EmbedState::default(),
                version: 0,
            };
            self.ports.store.insert_embed(&stored).await?;
            let url = format!(
                "{}/embed/{token}",
                self.ports.public_base_url.trim_end_matches('/')
            );
            Ok(Created {
                session,
                token,
                url,
            })
        })
        .await
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
        let quote = match self.ports.quotes.quote(scope, id).await {
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
        if is_stale(&quote, &self.ports.groups.group(scope, group).await?) {
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
            let found = self
                .ports
                .quotes
                .quotes(scope, GroupQuery::all(group, &page))
                .await?;
            let next = found.next.clone();
            let mut usable = found.items.into_iter().filter(|q| {
                q.kind == QuoteKind::Quote && q.status == QuoteStatus::Ready && q.expires_at > now
            });
            if let Some(first) = usable.next() {
                let current = self.ports.groups.group(scope, group).await?;
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
}
