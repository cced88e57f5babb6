//! Partners and API keys (shared by both backends).

use async_trait::async_trait;
use diesel::{ExpressionMethods, OptionalExtension, QueryDsl, SelectableHelper};
use diesel_async::RunQueryDsl;
use domain::api_key::{KeyDigest, KeyRecord};
use domain::event::{DeliveryState, EventType};
use domain::ids::{KeyId, PartnerId};
use domain::mode::Mode;
use domain::partner::{Activity, Partner};
use domain::store::{Conflict, PartnerStore, StoreError, StoreResult};

use super::{Conn, Store};
use crate::error::{TxError, db, found};
use crate::rows::{KeyRow, PartnerRow};
use crate::schema::{api_keys, enrollments, events, groups, partners, quotes};

/// Sets `$changes` on the partner `$id` of `$store` (`NotFound` when there
/// is none).
macro_rules! set_partner {
    ($store:expr, $id:expr, $changes:expr) => {{
        let n = autocommit!($store, async |c: &mut Conn| {
            Ok(diesel::update(partners::table.find($id.as_str()))
                .set($changes)
                .execute(c)
                .await?)
        })
        .await?;
        found(n)
    }};
}

async fn load_partner(conn: &mut Conn, id: &str) -> Result<Partner, TxError> {
    let row = partners::table
        .find(id)
        .select(PartnerRow::as_select())
        .first(conn)
        .await
        .optional()?
        .ok_or(StoreError::NotFound)?;
    Ok(row.into_domain()?)
}

#[async_trait]
impl PartnerStore for Store {
    async fn insert_partner(&self, partner: &Partner, now: i64) -> StoreResult<()> {
        let row = PartnerRow::new(partner, now);
        autocommit!(self, async |c: &mut Conn| {
            Ok(diesel::insert_into(partners::table).values(&row).execute(c).await?)
        })
        .await?;
        Ok(())
    }

    async fn partner(&self, id: &PartnerId) -> StoreResult<Partner> {
        let mut conn = self.conn().await?;
        Ok(load_partner(&mut conn, id.as_str()).await?)
    }

    async fn partners(&self) -> StoreResult<Vec<Partner>> {
        let mut conn = self.conn().await?;
        partners::table
            .order((partners::created_at.asc(), partners::id.asc()))
            .select(PartnerRow::as_select())
            .load(&mut *conn)
            .await
            .map_err(db)?
            .into_iter()
            .map(PartnerRow::into_domain)
            .collect()
    }

    async fn activity(&self, id: &PartnerId, mode: Mode) -> StoreResult<Activity> {
        let mut conn = self.conn().await?;
        let c: &mut Conn = &mut conn;
        load_partner(c, id.as_str()).await?;
        let (p, m) = (id.as_str(), mode.as_str());
        // How many rows of `$table` the partner has in the mode, after
        // any further filters.
        macro_rules! count {
            ($table:ident $(, $filter:expr)*) => {{
                let n: i64 = $table::table
                    .filter($table::partner_id.eq(p))
                    .filter($table::mode.eq(m))
                    $(.filter($filter))*
                    .count()
                    .get_result(c)
                    .await
                    .map_err(db)?;
                u64::try_from(n).unwrap_or(0)
            }};
        }
        let groups_n = count!(groups);
        let census_n = count!(groups, groups::census_member_count.gt(0));
        let quotes_n = count!(quotes);
        let enrollments_n = count!(enrollments);
        let pings_n = count!(
            events,
            events::event_type.eq(EventType::Ping.as_str()),
            events::state.eq(DeliveryState::Delivered.as_str())
        );
        Ok(Activity {
            groups: groups_n,
            groups_with_census: census_n,
            quotes: quotes_n,
            enrollments: enrollments_n,
            pings_delivered: pings_n,
        })
    }

    async fn set_live_enabled(&self, id: &PartnerId, enabled: bool, now: i64) -> StoreResult<()> {
        set_partner!(
            self,
            id,
            (
                partners::live_enabled.eq(enabled),
                partners::live_changed_at.eq(Some(now)),
            )
        )
    }

    async fn set_commercial_done(&self, id: &PartnerId, done: bool, now: i64) -> StoreResult<()> {
        set_partner!(
            self,
            id,
            partners::commercial_done_at.eq(done.then_some(now))
        )
    }

    async fn set_embed_origins(&self, id: &PartnerId, origins: &[String]) -> StoreResult<()> {
        let text = crate::rows::stored(serde_json::to_string(origins))?;
        set_partner!(self, id, partners::embed_origins.eq(text))
    }

    async fn insert_key(&self, key: &KeyRecord, rotate: bool, now: i64) -> StoreResult<Vec<KeyId>> {
                let row = KeyRow::new(key);
        let partner = key.partner_id.to_string();
        let live = key.mode == Mode::Live;
        let revoked = write_tx!(self, async |c: &mut Conn| {
            load_partner(c, &partner).await?;
            let mut revoked = Vec::new();
            if live {
                let active: Vec<String> = api_keys::table
                    .filter(api_keys::partner_id.eq(&partner))
                    .filter(api_keys::mode.eq("live"))
                    .filter(api_keys::revoked_at.is_null())
                    .select(api_keys::id)
                    .load(c)
                    .await?;
                if !active.is_empty() && !rotate {
                    return Err(TxError::Store(StoreError::Conflict(
                        Conflict::LiveKeyActive,
                    )));
                }
                diesel::update(
                    api_keys::table
                        .filter(api_keys::id.eq_any(&active))
                        .filter(api_keys::revoked_at.is_null()),
                )
                .set(api_keys::revoked_at.eq(Some(now)))
                .execute(c)
                .await?;
                revoked = active;
            }
            diesel::insert_into(api_keys::table)
                .values(&row)
                .execute(c)
                .await?;
            Ok::<_, TxError>(revoked)
        })
        .await?;
        revoked
            .iter()
            .map(|id| KeyId::parse(id).map_err(|_| crate::error::corrupt("key id", id)))
            .collect()
    }

    async fn key_by_digest(&self, digest: &KeyDigest) -> StoreResult<(KeyRecord, Partner)> {
        let mut conn = self.conn().await?;
        let row = api_keys::table
            .filter(api_keys::digest.eq(hex::encode(digest.as_bytes())))
            .select(KeyRow::as_select())
            .first(&mut *conn)
            .await
            .map_err(db)?;
        let key = row.into_domain()?;
        let partner = load_partner(&mut conn, key.partner_id.as_str()).await?;
        Ok((key, partner))
    }

    async fn key(&self, id: &KeyId) -> StoreResult<KeyRecord> {
        let mut conn = self.conn().await?;
        api_keys::table
            .find(id.as_str())
            .select(KeyRow::as_select())
            .first(&mut *conn)
            .await
            .map_err(db)?
            .into_domain()
    }

    async fn keys(&self, partner: &PartnerId) -> StoreResult<Vec<KeyRecord>> {
        let mut conn = self.conn().await?;
        load_partner(&mut conn, partner.as_str()).await?;
        api_keys::table
            .filter(api_keys::partner_id.eq(partner.as_str()))
            .order((api_keys::created_at.desc(), api_keys::id.desc()))
            .select(KeyRow::as_select())
            .load(&mut *conn)
            .await
            .map_err(db)?
            .into_iter()
            .map(KeyRow::into_domain)
            .collect()
    }

    async fn revoke_key(&self, id: &KeyId, now: i64) -> StoreResult<()> {
                write_tx!(self, async |c: &mut Conn| {
            let revoked: Option<Option<i64>> = api_keys::table
                .find(id.as_str())
                .select(api_keys::revoked_at)
                .first(c)
                .await
                .optional()?;
            match revoked {
                None => Err(TxError::Store(StoreError::NotFound)),
                Some(Some(_)) => Ok(()),
                Some(None) => {
                    diesel::update(api_keys::table.find(id.as_str()))
                        .set(api_keys::revoked_at.eq(Some(now)))
                        .execute(c)
                        .await?;
                    Ok(())
                }
            }
        })
        .await?;
        Ok(())
    }
}
