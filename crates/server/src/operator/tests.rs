//! Unit tests of the operator commands' error mapping: the same codes and
//! messages as the API, with not-founds named and fields said as flags.

use domain::error::FieldError;
use domain::services::{EnrollmentRefusal, PartnerRefusal, ServiceError};
use domain::store::Conflict;

use super::*;

fn check(e: ServiceError, code: Code, message: &str) {
    let op = service_error(e, &|| "no such partner prt_x".to_owned());
    assert_eq!((op.code, op.message.as_str()), (code, message));
}

#[test]
fn service_errors_keep_the_apis_codes_and_messages() {
    check(
        EnrollmentRefusal::AlreadyLive.into(),
        Code::Conflict,
        "the group is already live",
    );
    check(
        PartnerRefusal::Revoked.into(),
        Code::Conflict,
        "the key is revoked",
    );
    check(
        ServiceError::Conflict(Conflict::DomainTaken),
        Code::Conflict,
        "an enrolled group already exists for this domain",
    );
    check(
        ServiceError::CensusRequired,
        Code::CensusRequired,
        "no quotable member: each counted employee needs a zip and a dob or age",
    );
    check(
        ServiceError::NotFound,
        Code::NotFound,
        "no such partner prt_x",
    );
    check(
        ServiceError::Invalid(vec![
            FieldError::new("benefits_admin", "is required"),
            FieldError::new("name", "is too long"),
        ]),
        Code::InvalidRequest,
        "--benefits-admin is required; --name is too long",
    );
    check(
        ServiceError::Unavailable("connection refused".into()),
        Code::NotConfigured,
        "database unavailable: connection refused",
    );
    check(
        ServiceError::Internal("boom".into()),
        Code::ServerError,
        "internal error: boom",
    );
}

#[test]
fn a_refused_conflict_names_what_was_refused() {
    let op = refused(
        service_error(EnrollmentRefusal::AlreadyLive.into(), &String::new),
        || "cannot take grp_x live".to_owned(),
    );
    assert_eq!(op.code.as_str(), "conflict");
    assert_eq!(
        op.message,
        "cannot take grp_x live: the group is already live"
    );
}
