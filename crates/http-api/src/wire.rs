//! Wire types: the JSON shapes of requests and responses, in snake_case
//! (camelCase callers get them re-cased by [`crate::casing`]), each with
//! its OpenAPI schema and example. Domain types never reach the wire
//! directly.

pub mod account;
pub mod census;
pub mod elections;
pub mod embed;
pub mod enrollments;
pub mod enums;
pub mod events;
pub mod groups;
pub mod members;
pub mod onboarding;
pub mod ping;
pub mod plans;
pub mod price_on_plan;
pub mod quotes;
pub mod webhook;

/// RFC 3339 UTC with second precision (`2026-11-21T13:14:00Z`).
#[must_use]
pub fn timestamp(unix_secs: i64) -> String {
    domain::ports::rfc3339(unix_secs)
}

#[cfg(test)]
mod tests {
    #[test]
    fn timestamps_are_rfc3339_utc_seconds() {
        assert_eq!(super::timestamp(1_795_266_840), "2026-11-21T13:14:00Z");
    }
}
