//! `GET /healthz` (liveness) and `GET /readyz` (the database answers),
//! outside `/v1` and unauthenticated.

use actix_web::{HttpResponse, get, web};
use serde::Serialize;
use utoipa::ToSchema;

use domain::services::ServiceError;

use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;

/// A health answer.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"status": "ok"}))]
pub struct Health {
    /// `ok` or `ready`.
    pub status: String,
}

/// Liveness: the process answers.
#[utoipa::path(
    tag = "Operations",
    operation_id = "healthz",
    responses((status = 200, description = "The process is alive", body = Health)),
    security(())
)]
#[get("/healthz")]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(Health {
        status: "ok".to_owned(),
    })
}

/// Readiness: the database can be reached.
#[utoipa::path(
    tag = "Operations",
    operation_id = "readyz",
    responses(
        (status = 200, description = "The database answers", body = Health, example = json!({"status": "ready"})),
        (status = 503, description = "The database cannot be reached", body = ErrorBody,
         example = json!({"error": "not_configured", "message": "the backing store is unavailable"}))
    ),
    security(())
)]
#[get("/readyz")]
pub async fn readyz(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    state
        .health
        .ping()
        .await
        .map_err(|e| ApiError::from(ServiceError::from(e)))?;
    Ok(HttpResponse::Ok().json(Health {
        status: "ready".to_owned(),
    }))
}
