//! The census: `PUT /groups/{groupId}/census` (replace, per-row errors,
//! dry run) and `GET /groups/{groupId}/census` (paginated).

use actix_web::{HttpRequest, get, put, web};
use serde_json::Value;

use domain::census::StoredMember;
use domain::error::FieldError;
use domain::ids::GroupId;
use domain::partner::PartnerKind;
use domain::services::ServiceError;
use domain::services::census::{ROWS, RowInput};
use pricing_core::census::{CensusMember, CensusRules};

use crate::auth::Caller;
use crate::body;
use crate::census_csv;
use crate::error::{ApiError, Detail, ErrorBody};
use crate::extract::PathId;
use crate::limits;
use crate::page;
use crate::reply::Reply;
use crate::routes::CommonErrors;
use crate::routes::params::{DryRun, GroupNotFound, GroupPath, IdempotencyKey};
use crate::state::AppState;
use crate::wire::census::{CensusInput, CensusPage, CensusResult, DEPENDENT_FIELDS, MEMBER_FIELDS};
use crate::wire::timestamp;

/// Whether `?dry_run=true` was sent.
fn dry_run(req: &HttpRequest) -> Result<bool, ApiError> {
    let mut dry = false;
    for pair in req.query_string().split('&').filter(|p| !p.is_empty()) {
        if let Some(v) = pair.strip_prefix("dry_run=") {
            dry = match v {
                "true" => true,
                "false" => false,
                _ => {
                    return Err(ApiError::invalid_field("dry_run", "must be true or false"));
                }
            };
        }
    }
    Ok(dry)
}

/// Whether `?dry_run=true` was sent; a census write that is not a dry run
/// (a census replace, elections) is charged to the census-write limit.
///
/// # Errors
/// 400 for a `dry_run` other than `true` or `false`; the limit's 429 or
/// 503.
pub(crate) async fn dry_run_or_charge(
    req: &HttpRequest,
    state: &AppState,
    caller: &Caller,
) -> Result<bool, ApiError> {
    let dry = dry_run(req)?;
    if !dry {
        limits::charge(req, state, caller, state.config.limits.census_writes()).await?;
    }
    Ok(dry)
}

/// The census rules of the caller's partner: a broker sends every date of
/// birth.
pub(crate) fn rules(caller: &Caller) -> CensusRules {
    CensusRules {
        require_dob: caller.principal.partner.kind == PartnerKind::Broker,
    }
}

/// Whether the body is CSV.
fn is_csv(req: &HttpRequest) -> bool {
    req.headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("text/csv"))
}

fn json_rows(items: Vec<Value>) -> Vec<RowInput> {
    body::rows::<CensusMember>(ROWS, items, MEMBER_FIELDS, ("dependents", DEPENDENT_FIELDS))
}

/// Replace the group's census.
#[utoipa::path(
    tag = "Census",
    operation_id = "replace_census",
    params(GroupPath, DryRun, IdempotencyKey),
    request_body(content(
        (CensusInput = "application/json"),
        (String = "text/csv", example = "external_id,first_name,last_name,dob,zip,relationship,employee_external_id\nE-1001,Ana,Diaz,1988-04-12,60601,,\n,Leo,Diaz,2016-09-30,,child,E-1001\n")
    )),
    responses(
        (status = 200, description = "Valid rows applied, invalid rows listed by index", body = CensusResult),
        (status = 400, description = "No row is valid (nothing applied), or the body is malformed", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "members[0].zip: is required",
                          "details": [{"field": "members[0].zip", "message": "is required", "index": 0}]})),
        GroupNotFound,
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[put("/groups/{groupId}/census")]
pub async fn replace_census(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    id: PathId<GroupId>,
    bytes: web::Bytes,
) -> Result<Reply, ApiError> {
    let dry = dry_run_or_charge(&req, &state, &caller).await?;
    let (rows, csv) = if is_csv(&req) {
        let csv = census_csv::read(&bytes).map_err(|e| ApiError::invalid(vec![e]))?;
        if csv.errors.iter().any(|e| e.index.is_none())
            || (csv.members.is_empty() && !csv.errors.is_empty())
        {
            // The file is unreadable, or rows were sent and none is valid.
            return Err(ApiError::invalid(csv.errors));
        }
        (json_rows(csv.members.clone()), Some(csv))
    } else {
        (json_rows(body::array_field(&req, &bytes, ROWS)?), None)
    };
    // Errors are said in the terms of the body sent: CSV rows for CSV.
    let located = |errors: Vec<FieldError>| match &csv {
        Some(c) => c.errors_with(errors),
        None => errors,
    };
    let result = match state
        .census
        .replace(&caller.scope(), &id, rows, rules(&caller), dry)
        .await
    {
        Ok(r) => r,
        Err(ServiceError::Invalid(errors)) => return Err(ApiError::invalid(located(errors))),
        Err(e) => return Err(PathId::<GroupId>::missing(e)),
    };
    let errors = located(result.errors);
    Reply::ok(&CensusResult {
        group_id: result.group_id.as_str().to_owned(),
        // Employees, in both formats (a CSV dependent row is part of its
        // employee), as `census.processed` counts them.
        received: result.received,
        accepted: result.accepted,
        member_count: result.member_count,
        errors: errors.into_iter().map(Detail::from).collect(),
        rates: "pending".to_owned(),
    })
}

/// The member as the partner sent it, with its id.
fn member_json(m: &StoredMember) -> Result<Value, ApiError> {
    let mut v = serde_json::to_value(&m.member).map_err(ApiError::internal)?;
    if let Value::Object(map) = &mut v {
        map.insert("id".to_owned(), Value::String(m.id.as_str().to_owned()));
    }
    Ok(v)
}

/// Read the group's census, a page at a time.
#[utoipa::path(
    tag = "Census",
    operation_id = "get_census",
    params(GroupPath, crate::routes::groups::PageParams),
    responses(
        (status = 200, description = "A page of members", body = CensusPage),
        (status = 400, description = "A bad `limit` or `cursor`", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "cursor: is not a cursor of this list",
                          "details": [{"field": "cursor", "message": "is not a cursor of this list"}]})),
        GroupNotFound,
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[get("/groups/{groupId}/census")]
pub async fn get_census(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    id: PathId<GroupId>,
) -> Result<Reply, ApiError> {
    let list = format!("census:{}", id.as_str());
    let request = page::request(&req, &list)?;
    let domain::services::census::CensusPage { group, members } = state
        .census
        .page(&caller.scope(), &id, &request)
        .await
        .map_err(PathId::<GroupId>::missing)?;
    Reply::ok(&CensusPage {
        group_id: group.id.as_str().to_owned(),
        member_count: group.census_member_count,
        updated_at: timestamp(group.updated_at),
        next_cursor: page::next_cursor(&list, &members),
        members: members
            .items
            .iter()
            .map(member_json)
            .collect::<Result<_, _>>()?,
    })
}
