//! Members: `POST /groups/{groupId}/members` (new hire), `PATCH
//! /groups/{groupId}/members/{memberId}` (updates, terminations) and the
//! roster `GET /groups/{groupId}/members` (contract section 3).

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, get, patch, post, web};
use serde_json::{Map, Value};
use time::Date;

use domain::error::FieldError;
use domain::ids::{GroupId, MemberId};
use domain::member::{EnrollmentStatus, MemberFilter};
use domain::services::ServiceError;
use pricing_core::census::{CensusMember, MemberStatus, date_opt};

use crate::auth::Caller;
use crate::body;
use crate::error::{ApiError, ErrorBody};
use crate::extract::PathId;
use crate::limits;
use crate::page;
use crate::query::{self, Query, kept};
use crate::reply::Reply;
use crate::routes::census::rules;
use crate::routes::params::{GroupNotFound, GroupPath, IdempotencyKey};
use crate::routes::{CommonErrors, not_found_as};
use crate::state::AppState;
use crate::wire::census::{DEPENDENT_FIELDS, MEMBER_FIELDS, MemberInput, MemberPatch};
use crate::wire::members::{MemberOut, RosterOut, RosterPage};

/// The one not-found of a member (or its group).
const NO_MEMBER: &str = "no such member of this group in this mode";

/// The termination date field, beside the census fields.
const TERMINATION: &str = "termination_date";

/// Takes `termination_date` out of a member object.
fn termination(map: &mut Map<String, Value>) -> Result<Option<Date>, FieldError> {
    match map.remove(TERMINATION) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => date_opt::parse(&s)
            .map(Some)
            .map_err(|_| FieldError::new(TERMINATION, "must be a date (YYYY-MM-DD)")),
        Some(_) => Err(FieldError::new(TERMINATION, "must be a date (YYYY-MM-DD)")),
    }
}

/// Parses one member object; field paths are the member's own (`zip`,
/// `dependents[0].dob`).
fn member(map: Map<String, Value>) -> Result<CensusMember, Vec<FieldError>> {
    let parsed = body::rows::<CensusMember>(
        "m",
        vec![Value::Object(map)],
        MEMBER_FIELDS,
        ("dependents", DEPENDENT_FIELDS),
    );
    match parsed.into_iter().next() {
        Some(Ok(m)) => Ok(m),
        Some(Err(errors)) => Err(errors
            .into_iter()
            .map(|e| FieldError::new(e.field.trim_start_matches("m[0].").to_owned(), e.message))
            .collect()),
        None => Err(vec![FieldError::new("body", "must be a member object")]),
    }
}

/// The body as an object with `id` refused as read-only.
fn object(req: &HttpRequest, bytes: &[u8]) -> Result<Map<String, Value>, ApiError> {
    let Value::Object(mut map) = body::object(req, bytes)? else {
        return Err(ApiError::invalid_field("body", "must be a JSON object"));
    };
    if map.remove("id").is_some() {
        return Err(ApiError::invalid_field("id", "is read-only"));
    }
    Ok(map)
}

/// Every error of a member body at once: its fields and its
/// `termination_date`.
fn fields(mut map: Map<String, Value>) -> Result<(CensusMember, Option<Date>), Vec<FieldError>> {
    let date = termination(&mut map);
    match (member(map), date) {
        (Ok(m), Ok(d)) => Ok((m, d)),
        (m, d) => {
            let mut errors = m.err().unwrap_or_default();
            errors.extend(d.err());
            Err(errors)
        }
    }
}

/// [`fields`] as the API's error.
fn parse(map: Map<String, Value>) -> Result<(CensusMember, Option<Date>), ApiError> {
    fields(map).map_err(ApiError::invalid)
}

/// Add a new hire to the group's census.
///
/// After the enrollment the new hire is on the live census (and the
/// roster). The change starts the group's market comparison again and
/// counts as a census write.
#[utoipa::path(
    tag = "Members",
    operation_id = "add_member",
    params(GroupPath, IdempotencyKey),
    request_body(content = MemberInput, description = "A census member; a `terminated` one also needs `termination_date`"),
    responses(
        (status = 201, description = "The member", body = MemberOut),
        (status = 400, description = "A field is invalid", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "zip: must be 5 digits (pattern ^[0-9]{5}$)",
                          "details": [{"field": "zip", "message": "must be 5 digits (pattern ^[0-9]{5}$)"}]})),
        GroupNotFound,
        (status = 409, description = "Another member of the group has this external_id or email", body = ErrorBody,
         example = json!({"error": "conflict", "message": "another member of the group has this external_id or email"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[post("/groups/{groupId}/members")]
pub async fn add_member(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    gid: PathId<GroupId>,
    bytes: web::Bytes,
) -> Result<Reply, ApiError> {
    let map = object(&req, &bytes)?;
    let (member, date) = parse(map)?;
    limits::charge(&req, &state, &caller, state.config.limits.census_writes()).await?;
    let stored = state
        .members
        .add(&caller.scope(), &gid, member, date, rules(&caller))
        .await
        .map_err(PathId::<GroupId>::missing)?;
    Reply::new(StatusCode::CREATED, &MemberOut::of(&stored)?)
}

/// Update a member: any census field, or a termination.
///
/// Fields sent replace the stored ones; `null` or absent fields are kept.
/// `status: "terminated"` needs a `termination_date`; after the group's
/// enrollment the member becomes COBRA-eligible until that date + 60 days.
#[utoipa::path(
    tag = "Members",
    operation_id = "update_member",
    params(
        ("groupId" = String, Path, description = "`grp_` id", example = "grp_8c1e4a2f9b3d"),
        ("memberId" = String, Path, description = "`mem_` id", example = "mem_3f9a1c2b7d40")
    ),
    request_body(content = MemberPatch, description = "The fields to change, and `termination_date`"),
    responses(
        (status = 200, description = "The member", body = MemberOut),
        (status = 400, description = "A field is invalid, or a termination without its date", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "termination_date: is required when status is terminated",
                          "details": [{"field": "termination_date", "message": "is required when status is terminated"}]})),
        (status = 404, description = "No such member of this group for this partner and mode", body = ErrorBody,
         example = json!({"error": "not_found", "message": "no such member of this group in this mode"})),
        (status = 409, description = "Another member of the group has this external_id or email", body = ErrorBody,
         example = json!({"error": "conflict", "message": "another member of the group has this external_id or email"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[patch("/groups/{groupId}/members/{memberId}")]
pub async fn update_member(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> Result<Reply, ApiError> {
    let (raw_group, raw_member) = path.into_inner();
    let missing = || ApiError::not_found(NO_MEMBER);
    let gid = GroupId::parse(&raw_group).map_err(|_| missing())?;
    let id = MemberId::parse(&raw_member).map_err(|_| missing())?;
    let patch = object(&req, &bytes)?;
    limits::charge(&req, &state, &caller, state.config.limits.census_writes()).await?;
    // The stored member with the sent fields laid over it; `null` keeps a
    // field.
    let merge = move |current: &CensusMember| {
        let mut merged = match serde_json::to_value(current) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        merged.extend(patch.into_iter().filter(|(_, v)| !v.is_null()));
        fields(merged)
    };
    let stored = state
        .members
        .update(&caller.scope(), &gid, &id, Box::new(merge), rules(&caller))
        .await
        .map_err(|e| not_found_as(e, NO_MEMBER))?;
    Reply::ok(&MemberOut::of(&stored)?)
}

/// Filters of the roster (together, all must hold).
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MemberFilters {
    /// Only active or only terminated members.
    #[param(inline)]
    pub status: Option<crate::wire::enums::MemberStatus>,
    /// Only members of this enrollment status.
    #[param(inline)]
    pub enrollment_status: Option<crate::wire::enums::MemberEnrollmentStatus>,
}

/// The roster filters of `req`'s query.
fn member_filters(req: &HttpRequest) -> Result<MemberFilter, ApiError> {
    let q = Query::of(req);
    query::filters(|errors| MemberFilter {
        status: kept(
            errors,
            q.value("status", "must be active or terminated", |v| match v {
                "active" => Some(MemberStatus::Active),
                "terminated" => Some(MemberStatus::Terminated),
                _ => None,
            }),
        ),
        enrollment_status: kept(
            errors,
            q.value(
                "enrollment_status",
                "must be pending, enrolled or waived",
                EnrollmentStatus::parse,
            ),
        ),
    })
}

/// The enrollment roster: enrollment and invitation status and a dependent
/// count per member, never a dependent's identity. 404 until the group's
/// enrollment. The filters pick members by status and enrollment status.
#[utoipa::path(
    tag = "Members",
    operation_id = "list_roster",
    params(GroupPath, MemberFilters, crate::routes::groups::PageParams),
    responses(
        (status = 200, description = "A page of the roster", body = RosterPage),
        (status = 400, description = "A bad `limit`, `cursor` or filter, or a query parameter this list does not take", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "enrollment_status: must be pending, enrolled or waived",
                          "details": [{"field": "enrollment_status", "message": "must be pending, enrolled or waived"}]})),
        (status = 404, description = "No such group for this partner and mode, or no enrollment yet", body = ErrorBody,
         example = json!({"error": "not_found", "message": "the group has no roster until its enrollment"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[get("/groups/{groupId}/members")]
pub async fn list_roster(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    gid: PathId<GroupId>,
) -> Result<Reply, ApiError> {
    let filter = member_filters(&req)?;
    // The roster pages over the census, so it shares the census's cursors.
    let list = format!("census:{}", gid.as_str());
    let request = page::request(&req, &list)?;
    let page = match state
        .members
        .roster(&caller.scope(), &gid, &filter, &request)
        .await
    {
        Ok(page) => page,
        // An unknown group and one without an enrollment say different
        // things.
        Err(e @ ServiceError::Member(_)) => return Err(e.into()),
        Err(e) => return Err(PathId::<GroupId>::missing(e)),
    };
    Reply::ok(&RosterPage {
        next_cursor: page::next_cursor(&list, &page),
        members: page.items.iter().map(RosterOut::from).collect(),
    })
}
