//! Webhook endpoints (shared by both backends): one row per partner and
//! mode, replaced by each registration.

use async_trait::async_trait;
use diesel::{ExpressionMethods, OptionalExtension, QueryDsl, SelectableHelper};
use diesel_async::RunQueryDsl;
use domain::scope::Scope;
use domain::store::{StoreResult, WebhookStore};
use domain::webhook::WebhookEndpoint;

use super::{Conn, Store};
use crate::error::{TxError, db};
use crate::rows::WebhookRow;
use crate::schema::webhook_endpoints as endpoints;

#[async_trait]
impl WebhookStore for Store {
    async fn put_endpoint(&self, endpoint: &WebhookEndpoint) -> StoreResult<()> {
        let row = WebhookRow::new(endpoint);
        let mut conn = self.conn().await?;
        let conn: &mut Conn = &mut conn;
        write_tx!(self, conn, async |c: &mut Conn| {
            diesel::delete(
                endpoints::table
                    .filter(endpoints::partner_id.eq(&row.partner_id))
                    .filter(endpoints::mode.eq(&row.mode)),
            )
            .execute(c)
            .await?;
            diesel::insert_into(endpoints::table)
                .values(&row)
                .execute(c)
                .await?;
            Ok::<_, TxError>(())
        })
        .await?;
        Ok(())
    }

    async fn endpoint(&self, scope: &Scope) -> StoreResult<Option<WebhookEndpoint>> {
        let mut conn = self.conn().await?;
        endpoints::table
            .filter(endpoints::partner_id.eq(scope.partner.as_str()))
            .filter(endpoints::mode.eq(scope.mode.as_str()))
            .select(WebhookRow::as_select())
            .first(&mut *conn)
            .await
            .optional()
            .map_err(db)?
            .map(WebhookRow::into_domain)
            .transpose()
    }
}
