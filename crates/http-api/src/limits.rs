//! Per-key rate limits and the IETF `RateLimit` / `RateLimit-Policy`
//! fields (draft-ietf-httpapi-ratelimit-headers, structured fields) on
//! every authenticated answer, for each limit that applied to it.

use actix_web::body::BoxBody;
use actix_web::dev::ServiceResponse;
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::{HttpMessage as _, HttpRequest};

use domain::ports::now_secs;
use domain::rate_limit::{Decision, Policy};
use domain::services::ServiceError;
use domain::store::StoreResult;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;

/// The limits that applied to one request, in the order they were charged.
#[derive(Debug, Clone, Default)]
struct Applied(Vec<(Policy, Decision)>);

/// Charges one hit of `policy` to the caller's key.
///
/// # Errors
/// 429 `rate_limited` (with `Retry-After`) when the window is exhausted;
/// 503 when the counter store cannot be reached.
pub async fn charge(
    req: &HttpRequest,
    state: &AppState,
    caller: &Caller,
    policy: Policy,
) -> Result<(), ApiError> {
    let now = now_secs(state.clock.as_ref());
    let bucket = policy.bucket(caller.principal.key_id.as_str());
    let count = state.rate_limits.hit(&policy, &bucket, now).await;
    record(req, policy, count, now)
}

/// Records the outcome of a hit of `policy` made at `now` for the
/// request's `RateLimit` fields.
///
/// # Errors
/// 429 `rate_limited` (with `Retry-After`) when the window is exhausted;
/// 503 when the counter store could not be reached.
pub fn record(
    req: &HttpRequest,
    policy: Policy,
    count: StoreResult<Option<u32>>,
    now: i64,
) -> Result<(), ApiError> {
    let count = count.map_err(|e| ApiError::from(ServiceError::from(e)))?;
    let decision = policy.decide(count, now);
    let name = policy.name;
    {
        let mut ext = req.extensions_mut();
        if let Some(applied) = ext.get_mut::<Applied>() {
            applied.0.push((policy, decision));
        } else {
            ext.insert(Applied(vec![(policy, decision)]));
        }
    }
    if decision.allowed {
        Ok(())
    } else {
        Err(ApiError::rate_limited(name, decision.reset_secs))
    }
}

/// `RateLimit-Policy` and `RateLimit` values for `applied`, written
/// straight into two strings: they are on every authenticated answer.
fn fields(applied: &[(Policy, Decision)]) -> (String, String) {
    let mut policy = String::with_capacity(48 * applied.len());
    let mut state = String::with_capacity(48 * applied.len());
    for (p, d) in applied {
        let (limit, remaining) = (i64::from(p.limit), i64::from(d.remaining));
        push_item(&mut policy, p.name, [("q", limit), ("w", p.window_secs)]);
        push_item(&mut state, p.name, [("r", remaining), ("t", d.reset_secs)]);
    }
    (policy, state)
}

/// Appends the item `"name";key=value;…` to the list in `out`.
fn push_item(out: &mut String, name: &str, params: [(&str, i64); 2]) {
    let mut digits = itoa::Buffer::new();
    if !out.is_empty() {
        out.push_str(", ");
    }
    out.push('"');
    out.push_str(name);
    out.push('"');
    for (key, value) in params {
        out.push(';');
        out.push_str(key);
        out.push('=');
        out.push_str(digits.format(value));
    }
}

/// Adds the fields for the limits charged to this request.
pub fn add_headers(res: &mut ServiceResponse<BoxBody>) {
    let fields = {
        let ext = res.request().extensions();
        match ext.get::<Applied>() {
            Some(Applied(applied)) if !applied.is_empty() => Some(fields(applied)),
            _ => None,
        }
    };
    let Some((policy, state)) = fields else {
        return;
    };
    for (name, value) in [("ratelimit-policy", policy), ("ratelimit", state)] {
        if let Ok(v) = HeaderValue::try_from(value) {
            res.headers_mut().insert(HeaderName::from_static(name), v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_follow_the_structured_field_syntax() {
        let requests = Policy::requests(120);
        let census = Policy::census_writes(20);
        let (p, s) = fields(&[
            (requests.clone(), requests.decide(Some(63), 29)),
            (census.clone(), census.decide(Some(1), 29)),
        ]);
        assert_eq!(p, "\"requests\";q=120;w=60, \"census_writes\";q=20;w=60");
        assert_eq!(s, "\"requests\";r=57;t=31, \"census_writes\";r=19;t=31");
    }
}
