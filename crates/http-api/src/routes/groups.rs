//! Employer groups: `POST /groups`, `GET /groups`, `GET /groups/{groupId}`
//! and `PATCH /groups/{groupId}` (contract section 3, Groups).

use actix_web::{HttpRequest, get, patch, post, web};
use utoipa::IntoParams;

use domain::group::{GroupFilter, GroupStatus};
use domain::ids::GroupId;

use crate::auth::Caller;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{Body, PathId, Writable};
use crate::page;
use crate::query::{self, Query, kept};
use crate::reply::Reply;
use crate::routes::CommonErrors;
use crate::routes::params::{GroupNotFound, GroupPath};
use crate::state::AppState;
use crate::wire::groups::{GroupInput, GroupList, GroupOut};

/// The list name bound into this list's cursors.
const LIST: &str = "groups";

/// Pagination query parameters (documentation: the query itself is
/// parsed by [`crate::page`]).
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageParams {
    /// Page size, 1 to 200 (default 50).
    #[param(minimum = 1, maximum = 200, default = 50, example = 50)]
    pub limit: Option<u32>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// Filters of the group list (each an exact match; together, all must
/// hold).
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct GroupFilters {
    /// Only the group with this `external_id` (the partner's own id).
    #[param(example = "acme-0042")]
    pub external_id: Option<String>,
    /// Only the groups of this company domain (compared in lowercase).
    #[param(example = "acme-mfg.com")]
    pub domain: Option<String>,
    /// Only the groups in this status.
    #[param(inline)]
    pub status: Option<GroupStatus>,
}

/// The group filters of `req`'s query.
fn group_filters(req: &HttpRequest) -> Result<GroupFilter, ApiError> {
    let q = Query::of(req);
    query::filters(|errors| GroupFilter {
        external_id: q.text("external_id").map(str::to_owned),
        domain: q.text("domain").map(|d| d.trim().to_ascii_lowercase()),
        status: kept(
            errors,
            q.value(
                "status",
                "must be created, census_received, quoted, enrolled or active",
                GroupStatus::parse,
            ),
        ),
    })
}

/// Create an employer group.
#[utoipa::path(
    tag = "Groups",
    operation_id = "create_group",
    request_body = GroupInput,
    params(("Idempotency-Key" = Option<String>, Header, description = "Makes a retry safe: the same key and body within 24 hours replays the first answer")),
    responses(
        (status = 201, description = "The group", body = GroupOut),
        (status = 400, description = "A field is invalid, or the Idempotency-Key was used with another body, method or path", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "domain: must be a lowercase domain name such as example.com",
                          "details": [{"field": "domain", "message": "must be a lowercase domain name such as example.com"}]})),
        (status = 409, description = "An enrolled or active group of this mode holds the domain, or a request with this Idempotency-Key is still executing (`Retry-After: 1`)", body = ErrorBody,
         example = json!({"error": "conflict", "message": "an enrolled group already exists for this domain"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[post("/groups")]
pub async fn create_group(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    Body(input, ..): Body<GroupInput, Writable>,
) -> Result<Reply, ApiError> {
    // The key (already checked by the idempotency layer) travels with the
    // write, so a re-execution after a crash finds the group it made.
    let key = req
        .headers()
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok());
    let group = state
        .groups
        .create_once(&caller.scope(), input.into(), key)
        .await?;
    Reply::created(
        &GroupOut::from(&group),
        &format!("/v1/groups/{}", group.id.as_str()),
    )
}

/// List the caller's groups of the key's mode, newest first; the filters
/// find a group by the partner's own `external_id`, its domain or status.
#[utoipa::path(
    tag = "Groups",
    operation_id = "list_groups",
    params(GroupFilters, PageParams),
    responses(
        (status = 200, description = "A page of groups", body = GroupList),
        (status = 400, description = "A bad `limit`, `cursor` or filter, or a query parameter this list does not take", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "status: must be created, census_received, quoted, enrolled or active",
                          "details": [{"field": "status", "message": "must be created, census_received, quoted, enrolled or active"}]})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[get("/groups")]
pub async fn list_groups(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
) -> Result<Reply, ApiError> {
    let filter = group_filters(&req)?;
    let request = page::request(&req, LIST)?;
    let page = state
        .groups
        .list(&caller.scope(), &filter, &request)
        .await?;
    Reply::ok(&GroupList {
        next_cursor: page::next_cursor(LIST, &page),
        groups: page.items.iter().map(GroupOut::from).collect(),
    })
}

/// Read a group.
#[utoipa::path(
    tag = "Groups",
    operation_id = "get_group",
    params(GroupPath),
    responses(
        (status = 200, description = "The group", body = GroupOut),
        GroupNotFound,
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[get("/groups/{groupId}")]
pub async fn get_group(
    state: web::Data<AppState>,
    caller: Caller,
    id: PathId<GroupId>,
) -> Result<Reply, ApiError> {
    let group = state
        .groups
        .get(&caller.scope(), &id)
        .await
        .map_err(PathId::<GroupId>::missing)?;
    Reply::ok(&GroupOut::from(&group))
}

/// Update a group's writable fields.
#[utoipa::path(
    tag = "Groups",
    operation_id = "update_group",
    params(GroupPath),
    request_body = GroupInput,
    responses(
        (status = 200, description = "The updated group", body = GroupOut),
        (status = 400, description = "A field is invalid or read-only", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "status: is read-only",
                          "details": [{"field": "status", "message": "is read-only"}]})),
        GroupNotFound,
        (status = 409, description = "An enrolled or active group of this mode holds the new domain", body = ErrorBody,
         example = json!({"error": "conflict", "message": "an enrolled group already exists for this domain"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[patch("/groups/{groupId}")]
pub async fn update_group(
    state: web::Data<AppState>,
    caller: Caller,
    id: PathId<GroupId>,
    Body(input, ..): Body<GroupInput, Writable>,
) -> Result<Reply, ApiError> {
    let group = state
        .groups
        .patch(&caller.scope(), &id, input.into())
        .await
        .map_err(PathId::<GroupId>::missing)?;
    Reply::ok(&GroupOut::from(&group))
}
