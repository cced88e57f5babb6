//! Enrollments: `POST /groups/{groupId}/enrollments`, `GET
//! /groups/{groupId}/enrollments`, `GET /enrollments/{id}` (contract
//! section 3, Enrollments) and `POST /enrollments/{id}/portal_links`
//! (onboarding §3).

use actix_web::{HttpRequest, get, post, web};

use domain::enrollment::OnboardingMode;
use domain::error::FieldError;
use domain::ids::{EnrollmentId, GroupId, QuoteId};
use domain::services::enrollments::{EnrollmentInput as DomainInput, Signatory, signatory_errors};
use pricing_core::census::date_opt;

use crate::auth::Caller;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{Body, PathId};
use crate::page;
use crate::reply::Reply;
use crate::routes::CommonErrors;
use crate::routes::params::{
    EnrollmentNotFound, EnrollmentPath, GroupNotFound, GroupPath, IdempotencyKey,
};
use crate::state::AppState;
use crate::wire::enrollments::{EnrollmentInput, EnrollmentList, EnrollmentOut, PortalLinkOut};

/// The domain's input from the wire's, every bad field named.
fn input(wire: EnrollmentInput) -> Result<DomainInput, ApiError> {
    let mut errors = Vec::new();
    let quote_id = match wire.quote_id.as_deref() {
        None => {
            errors.push(FieldError::new("quote_id", "is required"));
            None
        }
        Some(raw) => match QuoteId::parse(raw) {
            Ok(id) => Some(id),
            Err(_) => {
                errors.push(FieldError::new(
                    "quote_id",
                    "must be a quote id (qt_ and 12 hex characters)",
                ));
                None
            }
        },
    };
    let signatory = match wire.signatory {
        None => {
            errors.push(FieldError::new("signatory", "is required"));
            None
        }
        Some(s) => {
            if s.name.is_none() {
                errors.push(FieldError::new("signatory.name", "is required"));
            }
            if s.email.is_none() {
                errors.push(FieldError::new("signatory.email", "is required"));
            }
            // Every bad field at once: the domain's own checks run here too.
            errors.extend(signatory_errors(s.name.as_deref(), s.email.as_deref()));
            match (s.name, s.email) {
                (Some(name), Some(email)) => Some(Signatory { name, email }),
                _ => None,
            }
        }
    };
    let onboarding_mode = match wire.onboarding_mode.as_deref() {
        None | Some("hosted") => OnboardingMode::Hosted,
        Some("embedded") => OnboardingMode::Embedded,
        Some(_) => {
            errors.push(FieldError::new(
                "onboarding_mode",
                "must be hosted or embedded",
            ));
            OnboardingMode::Hosted
        }
    };
    let start_date = match wire.start_date.as_deref().map(date_opt::parse) {
        None => None,
        Some(Ok(d)) => Some(d),
        Some(Err(_)) => {
            errors.push(FieldError::new("start_date", "must be a date (YYYY-MM-DD)"));
            None
        }
    };
    match (quote_id, signatory) {
        (Some(quote_id), Some(signatory)) if errors.is_empty() => Ok(DomainInput {
            quote_id,
            signatory,
            onboarding_mode,
            start_date,
        }),
        _ => Err(ApiError::invalid(errors)),
    }
}

/// Create the group's enrollment from a ready, unexpired, current quote.
///
/// The group becomes `enrolled` with company state `sandbox`, and
/// `enrollment.created` is sent. In hosted mode the signatory is
/// provisioned as employer-portal admin (`employer_portal`; no invitation
/// email in test mode).
#[utoipa::path(
    tag = "Enrollments",
    operation_id = "create_enrollment",
    params(GroupPath, IdempotencyKey),
    request_body = EnrollmentInput,
    responses(
        (status = 201, description = "The enrollment", body = EnrollmentOut),
        (status = 400, description = "A field is invalid, or `quote_id` is not a quote of this group", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "quote_id: is required",
                          "details": [{"field": "quote_id", "message": "is required"}]})),
        GroupNotFound,
        (status = 409, description = "The group already has an enrollment, the quote is `in_review`, or an enrolled group of this mode holds the domain", body = ErrorBody,
         example = json!({"error": "conflict", "message": "the group already has an enrollment"})),
        (status = 410, description = "The quote passed its `expires_at`, or the census changed since it was priced: create a new quote and retry", body = ErrorBody,
         example = json!({"error": "quote_expired", "message": "the census changed since this quote; re-quote"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[post("/groups/{groupId}/enrollments")]
pub async fn create_enrollment(
    state: web::Data<AppState>,
    caller: Caller,
    id: PathId<GroupId>,
    Body(input, ..): Body<EnrollmentInput>,
) -> Result<Reply, ApiError> {
    let input = self::input(input)?;
    let view = state
        .enrollments
        .create(&caller.scope(), &id, input)
        .await
        .map_err(PathId::<GroupId>::missing)?;
    Reply::created(
        &EnrollmentOut::of(&view, caller.style)?,
        &format!("/v1/enrollments/{}", view.enrollment.id.as_str()),
    )
}

/// List the group's enrollments: zero or one.
#[utoipa::path(
    tag = "Enrollments",
    operation_id = "list_enrollments",
    params(GroupPath, crate::routes::groups::PageParams),
    responses(
        (status = 200, description = "Zero or one enrollment", body = EnrollmentList),
        (status = 400, description = "A bad `limit` or `cursor`", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "limit: must be an integer from 1 to 200",
                          "details": [{"field": "limit", "message": "must be an integer from 1 to 200"}]})),
        GroupNotFound,
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[get("/groups/{groupId}/enrollments")]
pub async fn list_enrollments(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    id: PathId<GroupId>,
) -> Result<Reply, ApiError> {
    // The one page there is; `limit` and `cursor` are still checked.
    let request = page::request(&req, &format!("enrollments:{}", id.as_str()))?;
    let view = state
        .enrollments
        .of_group(&caller.scope(), &id)
        .await
        .map_err(PathId::<GroupId>::missing)?;
    let enrollments = match view {
        // A cursor can only come from a page that had a next one, and this
        // list never has: past the first page there is nothing.
        Some(v) if request.after.is_none() => vec![EnrollmentOut::of(&v, caller.style)?],
        _ => Vec::new(),
    };
    Reply::ok(&EnrollmentList {
        count: u64::try_from(enrollments.len()).unwrap_or(0),
        enrollments,
        next_cursor: None,
    })
}

/// Read one enrollment of the caller's partner and mode.
#[utoipa::path(
    tag = "Enrollments",
    operation_id = "get_enrollment",
    params(EnrollmentPath),
    responses(
        (status = 200, description = "The enrollment", body = EnrollmentOut),
        EnrollmentNotFound,
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[get("/enrollments/{id}")]
pub async fn get_enrollment(
    state: web::Data<AppState>,
    caller: Caller,
    id: PathId<EnrollmentId>,
) -> Result<Reply, ApiError> {
    let view = state
        .enrollments
        .get(&caller.scope(), &id)
        .await
        .map_err(PathId::<EnrollmentId>::missing)?;
    Reply::ok(&EnrollmentOut::of(&view, caller.style)?)
}

/// Create a fresh set-password link of the employer portal (hosted mode).
///
/// The link works once, for 7 days; the enrollment's older unused links
/// stop working, and `employer_portal.set_password_url` shows the new one.
/// In live mode it is also emailed to the signatory (test mode sends no
/// email).
#[utoipa::path(
    tag = "Enrollments",
    operation_id = "create_portal_link",
    params(EnrollmentPath, IdempotencyKey),
    responses(
        (status = 201, description = "The new link", body = PortalLinkOut),
        (status = 400, description = "The Idempotency-Key was already used with another request", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "Idempotency-Key: was already used with another body, method or path",
                          "details": [{"field": "Idempotency-Key", "message": "was already used with another body, method or path"}]})),
        EnrollmentNotFound,
        (status = 409, description = "An embedded enrollment has no employer portal", body = ErrorBody,
         example = json!({"error": "conflict", "message": "an embedded enrollment has no employer portal; its onboarding runs through the API"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[post("/enrollments/{id}/portal_links")]
pub async fn create_portal_link(
    state: web::Data<AppState>,
    caller: Caller,
    id: PathId<EnrollmentId>,
) -> Result<Reply, ApiError> {
    let link = state
        .portal
        .new_link(&caller.scope(), &id)
        .await
        .map_err(PathId::<EnrollmentId>::missing)?;
    Reply::created(
        &PortalLinkOut::of(&link),
        &format!("/v1/enrollments/{}", id.as_str()),
    )
}
