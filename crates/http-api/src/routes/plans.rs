//! `GET /plans`: static metadata of the `diamond` and `value` versions.

use actix_web::{get, web};

use crate::auth::Caller;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::routes::CommonErrors;
use crate::state::AppState;
use crate::wire::plans::Plans;

/// List the plan catalogue.
#[utoipa::path(
    tag = "Plans",
    operation_id = "list_plans",
    responses((status = 200, description = "Both versions", body = Plans), CommonErrors),
    security(("bearer" = []))
)]
#[get("/plans")]
pub async fn list_plans(state: web::Data<AppState>, _caller: Caller) -> Result<Reply, ApiError> {
    Reply::ok(&Plans {
        plans: state.plans.as_ref().clone(),
    })
}
