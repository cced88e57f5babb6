//! Embed sessions (shared by both backends): a session is found by its
//! token's digest; a change is one transaction — the state at the next
//! version, the code's email job, and the quote's acceptance (set once)
//! with its `quote.accepted` event.

use async_trait::async_trait;
use diesel::{ExpressionMethods, OptionalExtension, QueryDsl, Queryable, Selectable, SelectableHelper};
use diesel_async::RunQueryDsl;
use domain::embed::{EmbedSession, EmbedState, StoredEmbed};
use domain::ids::{EmbedSessionId, GroupId, QuoteId};
use domain::store::{Conflict, EmbedStore, EmbedWrite, StoreError, StoreResult};

use super::outbox::append_events;
use super::shared::{insert_jobs, job_rows};
use super::{Conn, Store};
use crate::error::{TxError, corrupt, db};
use crate::rows::{scope as row_scope, stored};
use crate::schema::{embed_sessions, quotes};

#[derive(Queryable, Selectable)]
#[diesel(table_name = embed_sessions)]
struct EmbedRow {
    id: String,
    token_hash: String,
    partner_id: String,
    mode: String,
    group_id: String,
    quote_id: String,
    state: String,
    version: i64,
    created_at: i64,
    expires_at: i64,
}

impl EmbedRow {
    fn into_domain(self) -> StoreResult<StoredEmbed> {
        Ok(StoredEmbed {
            session: EmbedSession {
                id: EmbedSessionId::parse(&self.id).map_err(|_| corrupt("embed id", &self.id))?,
                scope: row_scope(&self.partner_id, &self.mode)?,
                group_id: GroupId::parse(&self.group_id)
                    .map_err(|_| corrupt("group id", &self.group_id))?,
                quote_id: QuoteId::parse(&self.quote_id)
                    .map_err(|_| corrupt("quote id", &self.quote_id))?,
                created_at: self.created_at,
                expires_at: self.expires_at,
            },
            token_hash: self.token_hash,
            state: serde_json::from_str::<EmbedState>(&self.state)
                .map_err(|_| corrupt("embed state", &self.id))?,
            version: self.version,
        })
    }
}

#[async_trait]
impl EmbedStore for Store {
    async fn insert_embed(&self, e: &StoredEmbed) -> StoreResult<()> {
        let state = stored(serde_json::to_string(&e.state))?;
        let s = &e.session;
        autocommit!(self, async |c: &mut Conn| {
            Ok(diesel::insert_into(embed_sessions::table)
            .values((
                embed_sessions::id.eq(s.id.as_str()),
                embed_sessions::token_hash.eq(&e.token_hash),
                embed_sessions::partner_id.eq(s.scope.partner.as_str()),
                embed_sessions::mode.eq(s.scope.mode.as_str()),
                embed_sessions::group_id.eq(s.group_id.as_str()),
                embed_sessions::quote_id.eq(s.quote_id.as_str()),
                embed_sessions::state.eq(&state),
                embed_sessions::version.eq(e.version),
                embed_sessions::created_at.eq(s.created_at),
                embed_sessions::expires_at.eq(s.expires_at),
            ))
            .execute(c)
            .await?)
        })
        .await?;
        Ok(())
    }

    async fn embed(&self, token_hash: &str) -> StoreResult<Option<StoredEmbed>> {
        let mut conn = self.conn().await?;
        embed_sessions::table
            .filter(embed_sessions::token_hash.eq(token_hash))
            .select(EmbedRow::as_select())
            .first(&mut *conn)
            .await
            .optional()
            .map_err(db)?
            .map(EmbedRow::into_domain)
            .transpose()
    }

    async fn save_embed(&self, write: &EmbedWrite) -> StoreResult<()> {
        let state = stored(serde_json::to_string(&write.state))?;
        let acceptance = write
            .acceptance
            .as_ref()
            .map(|(q, a, e)| Ok::<_, StoreError>((q, stored(serde_json::to_string(a))?, e)))
            .transpose()?;
        let job_rows = job_rows(&write.jobs)?;
                outbox_tx!(self, async |c: &mut Conn| {
            let updated = diesel::update(
                embed_sessions::table
                    .filter(embed_sessions::id.eq(write.id.as_str()))
                    .filter(embed_sessions::version.eq(write.version)),
            )
            .set((
                embed_sessions::state.eq(&state),
                embed_sessions::version.eq(write.version.saturating_add(1)),
            ))
            .execute(c)
            .await?;
            if updated == 0 {
                return Err(TxError::Store(StoreError::Conflict(Conflict::EmbedMoved)));
            }
            if let Some((quote, text, event)) = &acceptance {
                let set = diesel::update(
                    quotes::table
                        .filter(quotes::id.eq(quote.as_str()))
                        .filter(quotes::partner_id.eq(event.scope.partner.as_str()))
                        .filter(quotes::mode.eq(event.scope.mode.as_str()))
                        .filter(quotes::acceptance.is_null()),
                )
                .set(quotes::acceptance.eq(Some(text.as_str())))
                .execute(c)
                .await?;
                if set == 0 {
                    return Err(TxError::Store(StoreError::Conflict(
                        Conflict::AlreadyAccepted,
                    )));
                }
                append_events(c, std::slice::from_ref(*event), write.now.saturating_mul(1000))
                    .await?;
            }
            insert_jobs(c, &job_rows).await?;
            Ok::<_, TxError>(())
        })
        .await?;
        Ok(())
    }

    async fn purge_embeds(&self, before: i64) -> StoreResult<u64> {
        let n = autocommit!(self, async |c: &mut Conn| {
            Ok(
                diesel::delete(embed_sessions::table.filter(embed_sessions::expires_at.lt(before)))
                    .execute(c)
                    .await?,
            )
        })
        .await?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}
