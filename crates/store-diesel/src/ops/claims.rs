//! The claims-aggregate ledger (shared by both backends).

use async_trait::async_trait;
use diesel::{ExpressionMethods, QueryDsl};
use diesel_async::RunQueryDsl;
use domain::account::ClaimsAggregate;
use domain::ids::GroupId;
use domain::scope::Scope;
use domain::store::{ClaimsStore, StoreResult};

use super::groups::{load_group, lock_group};
use super::{Conn, Store};
use crate::error::{TxError, db};
use crate::rows::{count, int};
use crate::schema::claims_aggregates as claims;

#[async_trait]
impl ClaimsStore for Store {
    async fn import_claims(
        &self,
        scope: &Scope,
        group: &GroupId,
        rows: &[ClaimsAggregate],
    ) -> StoreResult<u32> {
                let gid = group.to_string();
        Ok(write_tx!(self, async |c: &mut Conn| {
            lock_group(c, scope, &gid).await?;
            for r in rows {
                // Replace the month's category, whatever was there.
                diesel::delete(
                    claims::table
                        .filter(claims::group_id.eq(&gid))
                        .filter(claims::month.eq(&r.month))
                        .filter(claims::category.eq(&r.category)),
                )
                .execute(c)
                .await?;
                diesel::insert_into(claims::table)
                    .values((
                        claims::group_id.eq(&gid),
                        claims::partner_id.eq(scope.partner.as_str()),
                        claims::mode.eq(scope.mode.as_str()),
                        claims::month.eq(&r.month),
                        claims::category.eq(&r.category),
                        claims::amount_cents.eq(r.amount_cents),
                        claims::member_count.eq(int(r.member_count)),
                    ))
                    .execute(c)
                    .await?;
            }
            Ok::<_, TxError>(u32::try_from(rows.len()).unwrap_or(u32::MAX))
        })
        .await?)
    }

    async fn claims(&self, scope: &Scope, group: &GroupId) -> StoreResult<Vec<ClaimsAggregate>> {
        let mut conn = self.conn().await?;
        load_group(&mut conn, scope, group.as_str()).await?;
        let rows: Vec<(String, String, i64, i32)> = claims::table
            .filter(claims::group_id.eq(group.as_str()))
            .filter(claims::partner_id.eq(scope.partner.as_str()))
            .filter(claims::mode.eq(scope.mode.as_str()))
            .order((claims::month.asc(), claims::category.asc()))
            .select((
                claims::month,
                claims::category,
                claims::amount_cents,
                claims::member_count,
            ))
            .load(&mut *conn)
            .await
            .map_err(db)?;
        Ok(rows
            .into_iter()
            .map(|(month, category, amount_cents, n)| ClaimsAggregate {
                month,
                category,
                amount_cents,
                member_count: count(n),
            })
            .collect())
    }
}
