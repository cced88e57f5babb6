//! Account data: `GET /groups/{groupId}/account` (contract section 3).

use actix_web::{get, web};

use domain::ids::GroupId;

use crate::auth::Caller;
use crate::error::{ApiError, ErrorBody};
use crate::reply::Reply;
use crate::routes::{CommonErrors, not_found_as};
use crate::state::AppState;
use crate::wire::account::AccountOut;

/// Read the group's aggregate, de-identified account data.
///
/// Funding and premium of the enrolled plan, spend by category from the
/// claims ledger (every category suppressed when any draws on fewer than
/// 11 members), savings, and enrolled and waived counts. Never a name, a
/// diagnosis or an individual's amount. 404 until the enrollment.
#[utoipa::path(
    tag = "Account",
    operation_id = "get_account",
    params(("groupId" = String, Path, description = "`grp_` id", example = "grp_8c1e4a2f9b3d")),
    responses(
        (status = 200, description = "The account", body = AccountOut),
        (status = 404, description = "No such group for this partner and mode, or no enrollment yet", body = ErrorBody,
         example = json!({"error": "not_found", "message": "no such group in this mode, or it has no enrollment yet"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[get("/groups/{groupId}/account")]
pub async fn get_account(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<Reply, ApiError> {
    const MISSING: &str = "no such group in this mode, or it has no enrollment yet";
    let gid = GroupId::parse(&path).map_err(|_| ApiError::not_found(MISSING))?;
    let account = state
        .accounts
        .account(&caller.scope(), &gid)
        .await
        .map_err(|e| not_found_as(e, MISSING))?;
    Reply::ok(&AccountOut::from(&account))
}
