//! `GET /ping`: verifies the key; the first call of an integration.

use actix_web::get;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::routes::CommonErrors;
use crate::wire::ping::{Ping, PingPartner};

/// Verify the key.
#[utoipa::path(
    tag = "Integration",
    operation_id = "ping",
    responses((status = 200, description = "The key is valid", body = Ping), CommonErrors),
    security(("bearer" = []))
)]
#[get("/ping")]
pub async fn ping(caller: Caller) -> Result<Reply, ApiError> {
    let p = &caller.principal;
    Reply::ok(&Ping {
        ok: true,
        partner: PingPartner {
            id: p.partner.id.as_str().to_owned(),
            name: p.partner.name.clone(),
        },
        mode: p.mode.as_str().to_owned(),
    })
}
