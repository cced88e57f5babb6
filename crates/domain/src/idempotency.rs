//! Idempotency records (contract section 4).
//!
//! One record per (partner, mode, key); it remembers the method and route
//! it was first used on, so the same key on another endpoint is detected.
//! A record is `in_flight` while the first request executes (a concurrent
//! duplicate gets 409 `conflict` with `Retry-After: 1`; if the executing
//! process dies, see [`IN_FLIGHT_LEASE_SECS`]), then holds the
//! stored response for 24 hours. Responses with status 500, 503 or 429 are
//! not stored: the record is released and a retry executes again.

use sha2::{Digest, Sha256};

/// How long a stored response is replayed, in seconds.
pub const REPLAY_WINDOW_SECS: i64 = 24 * 60 * 60;

/// How long an `in_flight` record blocks duplicates at most, in seconds.
///
/// A record names the process executing it, and a dead owner's records
/// free long before this lease: at once when SQLite's one process
/// restarts, and within 10 seconds on PostgreSQL, where owners keep a
/// heartbeat (see [`crate::store::process`]). The lease bounds the rest: a
/// live process whose request hangs, and a record written without an owner.
pub const IN_FLIGHT_LEASE_SECS: i64 = 5 * 60;

/// Longest key, in characters.
pub const MAX_KEY_CHARS: usize = 255;

/// Why an `Idempotency-Key` header is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("Idempotency-Key must be 1 to 255 characters")]
pub struct BadIdempotencyKey;

/// Checks the header value: non-empty, at most 255 characters.
///
/// # Errors
/// [`BadIdempotencyKey`].
pub fn check_key(key: &str) -> Result<(), BadIdempotencyKey> {
    let n = key.chars().count();
    if n == 0 || n > MAX_KEY_CHARS {
        Err(BadIdempotencyKey)
    } else {
        Ok(())
    }
}

/// The digest of a request's canonical body (hex SHA-256). The HTTP adapter
/// canonicalises the body first (sorted keys, one field style), so the same
/// request sent with its fields in another order or style matches.
#[must_use]
pub fn request_digest(canonical_body: &[u8]) -> String {
    hex::encode(Sha256::digest(canonical_body))
}

/// A request that carries an `Idempotency-Key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotentRequest {
    /// The header value.
    pub key: String,
    /// HTTP method.
    pub method: String,
    /// Route template, e.g. `/v1/groups/{groupId}/census`, with the path
    /// parameters filled in (so a key reused on another group mismatches).
    pub route: String,
    /// [`request_digest`] of the canonical body.
    pub digest: String,
    /// A token this attempt drew
    /// ([`Minter::idempotency_attempt`](crate::ports::Minter::idempotency_attempt)), unique to it: the
    /// in-flight record it begins names it, and completing or releasing
    /// touches that record only. So an attempt whose `begin` failed without
    /// knowing whether its record was committed (the connection dropped on
    /// the commit) can release it, and never another attempt's record.
    pub attempt: String,
}

/// A stored response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    /// HTTP status.
    pub status: u16,
    /// Headers to replay (name, value), e.g. `Location`.
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
}

/// An executed request's response, to store in the in-flight record its
/// attempt began ([`IdempotencyStore::complete`](crate::store::IdempotencyStore::complete)).
#[derive(Debug, Clone, Copy)]
pub struct Completion<'a> {
    /// The request, naming the key and the attempt.
    pub request: &'a IdempotentRequest,
    /// What to replay.
    pub response: &'a StoredResponse,
    /// When it was answered (Unix seconds): the replay window starts here.
    pub now: i64,
}

/// What beginning an idempotent request found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Begin {
    /// No live record: this request executes (the record is now in flight).
    Execute,
    /// A finished record for the same request: replay it.
    Replay(StoredResponse),
    /// The key was used with another body, method or route (400).
    Mismatch,
    /// The first request with this key is still executing (409).
    InFlight,
}

/// Whether a response with `status` is stored for replay.
#[must_use]
pub fn is_stored(status: u16) -> bool {
    !matches!(status, 429 | 500 | 503) && status < 500
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_one_to_255_characters() {
        assert!(check_key("a").is_ok());
        assert!(check_key(&"é".repeat(255)).is_ok());
        assert!(check_key("").is_err());
        assert!(check_key(&"a".repeat(256)).is_err());
    }

    #[test]
    fn five_hundreds_and_429_are_not_stored() {
        for s in [200, 201, 400, 404, 409, 410, 422] {
            assert!(is_stored(s), "{s}");
        }
        for s in [429, 500, 502, 503] {
            assert!(!is_stored(s), "{s}");
        }
        assert_eq!(request_digest(b"{}").len(), 64);
        assert_ne!(request_digest(b"{}"), request_digest(b"[]"));
    }
}
