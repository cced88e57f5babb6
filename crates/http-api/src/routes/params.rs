//! The parameters and answers many operations share, written once for the
//! OpenAPI document: the path ids, the `Idempotency-Key` header, the
//! `dry_run` flag and the not-found answers of a group, an enrollment and
//! an event.
//! They document; the handlers parse the request themselves.

use utoipa::{IntoParams, IntoResponses};

use crate::error::ErrorBody;

/// The group of the path (`/groups/{groupId}/…`).
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
pub struct GroupPath {
    /// `grp_` id
    #[param(rename = "groupId", example = "grp_8c1e4a2f9b3d")]
    pub group_id: String,
}

/// The enrollment of the path (`/enrollments/{id}/…`).
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
pub struct EnrollmentPath {
    /// `enr_` id
    #[param(example = "enr_0b7d2c9e4a11")]
    pub id: String,
}

/// The quote of the path (`/quotes/{id}`).
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
pub struct QuotePath {
    /// `qt_` id
    #[param(example = "qt_1a2b3c4d5e6f")]
    pub id: String,
}

/// The event of the path (`/events/{id}`).
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
pub struct EventPath {
    /// `evt_` id
    #[param(example = "evt_5d1c0a9b3e27")]
    pub id: String,
}

/// The `Idempotency-Key` header of a write.
#[derive(IntoParams)]
#[into_params(parameter_in = Header)]
pub struct IdempotencyKey {
    /// Makes a retry safe
    #[param(rename = "Idempotency-Key")]
    pub key: Option<String>,
}

/// The `dry_run` flag of a bulk write.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DryRun {
    /// Validate and answer as a real write would, changing nothing
    pub dry_run: Option<bool>,
}

/// The answer when the group of the path is not the caller's.
#[derive(IntoResponses)]
pub enum GroupNotFound {
    /// No such group for this partner and mode
    #[response(status = 404, example = json!({"error": "not_found", "message": "no such group in this mode"}))]
    NotFound(ErrorBody),
}

/// The answer when the enrollment of the path is not the caller's.
#[derive(IntoResponses)]
pub enum EnrollmentNotFound {
    /// No such enrollment for this partner and mode
    #[response(status = 404, example = json!({"error": "not_found", "message": "no such enrollment in this mode"}))]
    NotFound(ErrorBody),
}

/// The answer when the event of the path is not the caller's.
#[derive(IntoResponses)]
pub enum EventNotFound {
    /// No such event for this partner and mode, or older than 30 days
    #[response(status = 404, example = json!({"error": "not_found", "message": "no such event in this mode (events are kept for 30 days)"}))]
    NotFound(ErrorBody),
}
