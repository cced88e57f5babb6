//! Elections: `POST /groups/{groupId}/elections` (specification rules 1–6;
//! contract section 9, dry run).

use actix_web::{HttpRequest, post, web};

use domain::election::ElectionRow;
use domain::error::FieldError;
use domain::ids::GroupId;
use domain::partner::Capability;
use domain::services::elections::{ROWS, RowInput};
use pricing_core::census::date_opt;

use crate::auth::Caller;
use crate::body;
use crate::error::{ApiError, ErrorBody};
use crate::extract::PathId;
use crate::reply::Reply;
use crate::routes::CommonErrors;
use crate::routes::census::dry_run_or_charge;
use crate::routes::params::{DryRun, GroupNotFound, GroupPath, IdempotencyKey};
use crate::state::AppState;
use crate::wire::elections::{
    DEPENDENT_FIELDS, ElectionInput, ElectionsInput, ElectionsOut, ROW_FIELDS,
};

/// A parsed row as the domain's, its date checked.
fn row(index: usize, input: ElectionInput) -> RowInput {
    let effective_date = match input.effective_date.as_deref().map(date_opt::parse) {
        None => None,
        Some(Ok(d)) => Some(d),
        Some(Err(_)) => {
            return Err(vec![FieldError::at(
                index,
                format!("{ROWS}[{index}].effective_date"),
                "must be a date (YYYY-MM-DD)",
            )]);
        }
    };
    Ok(ElectionRow {
        external_id: input.external_id,
        election: input.election,
        tier: input.tier,
        effective_date,
        waiver_reason: input.waiver_reason,
    })
}

/// Submit final elections for an enrolled group.
///
/// Valid rows are recorded on the census and invalid rows come back by
/// index. Enrolled members are emailed a login (never in test mode:
/// `invites_suppressed: "test-mode"`). A partner that runs benefits
/// administration gets one `deductions.changed` event per submission.
/// Needs the elections capability (broker keys have it). `?dry_run=true`
/// answers as the write would and changes nothing.
#[utoipa::path(
    tag = "Elections",
    operation_id = "submit_elections",
    params(GroupPath, DryRun, IdempotencyKey),
    request_body = ElectionsInput,
    responses(
        (status = 200, description = "Valid rows applied, invalid rows listed by index", body = ElectionsOut),
        (status = 400, description = "No row is valid (nothing applied), or the body is malformed", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "elections[0].effective_date: is required when election is enrolled",
                          "details": [{"field": "elections[0].effective_date", "message": "is required when election is enrolled", "index": 0}]})),
        (status = 403, description = "The key lacks the elections capability", body = ErrorBody,
         example = json!({"error": "forbidden", "message": "this key lacks the elections capability"})),
        GroupNotFound,
        (status = 409, description = "The group has no enrollment yet", body = ErrorBody,
         example = json!({"error": "conflict", "message": "the group has no enrollment yet; submit elections after it"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[post("/groups/{groupId}/elections")]
pub async fn submit_elections(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    gid: PathId<GroupId>,
    bytes: web::Bytes,
) -> Result<Reply, ApiError> {
    let dry = dry_run_or_charge(&req, &state, &caller).await?;
    let partner = &caller.principal.partner;
    if !partner.capabilities.contains(&Capability::Elections) {
        return Err(ApiError::forbidden(
            "this key lacks the elections capability",
        ));
    }
    let rows: Vec<RowInput> = body::rows::<ElectionInput>(
        ROWS,
        body::array_field(&req, &bytes, ROWS)?,
        ROW_FIELDS,
        ("dependents", DEPENDENT_FIELDS),
    )
    .into_iter()
    .enumerate()
    .map(|(i, r)| r.and_then(|input| row(i, input)))
    .collect();
    let result = state
        .elections
        .submit(partner, caller.principal.mode, &gid, rows, dry)
        .await
        .map_err(PathId::<GroupId>::missing)?;
    Reply::ok(&ElectionsOut::from(result))
}
