//! Authentication and the per-key request limit, in the order of contract
//! section 2: key present and well-formed → known and not revoked (else
//! 401, or 429 once the source IP has failed 30 times in the minute) →
//! live-mode gate (403) → the per-key limit for all requests (429). The
//! caller is then available to handlers as [`Caller`].

use std::future::{Ready, ready};
use std::net::IpAddr;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::{FromRequest, HttpMessage as _, HttpRequest, web};

use domain::ports::now_secs;
use domain::rate_limit::Policy;
use domain::scope::Scope;
use domain::services::partners::{AuthError, Principal};
use domain::store::{DeferredHit, HitOutcome, defer_hit};

use crate::casing::Style;
use crate::error::ApiError;
use crate::limits;
use crate::state::{AppState, HttpConfig};

/// An authenticated caller.
#[derive(Debug, Clone)]
pub struct Caller {
    /// Key, partner and mode.
    pub principal: Principal,
    /// Field style of the key's kind.
    pub style: Style,
}

impl Caller {
    /// The partner and mode the caller's data lives in.
    #[must_use]
    pub fn scope(&self) -> Scope {
        self.principal.scope()
    }
}

impl FromRequest for Caller {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(
            req.extensions()
                .get::<Self>()
                .cloned()
                .ok_or_else(ApiError::unauthorized),
        )
    }
}

/// The bearer token of `Authorization`, if any.
fn bearer(req: &ServiceRequest) -> Option<&str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// The source IP: the peer, or — when the peer is a trusted proxy — the
/// nearest untrusted address of `X-Forwarded-For`.
#[must_use]
pub fn source_ip(req: &HttpRequest, config: &HttpConfig) -> Option<IpAddr> {
    let peer = req.peer_addr().map(|a| a.ip())?;
    if !config.trusted_proxies.contains(&peer) {
        return Some(peer);
    }
    let forwarded: Vec<IpAddr> = req
        .headers()
        .get_all("x-forwarded-for")
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    Some(
        forwarded
            .into_iter()
            .rev()
            .find(|ip| !config.trusted_proxies.contains(ip))
            .unwrap_or(peer),
    )
}

/// The authentication middleware of the `/v1` scope.
///
/// # Errors
/// Never: refusals are answers.
pub async fn authenticate(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let Some(state) = req.app_data::<web::Data<AppState>>().cloned() else {
        return Ok(ApiError::internal("application state missing").answer(req));
    };
    let principal = match state.partners.authenticate(bearer(&req)).await {
        Ok(p) => p,
        Err(AuthError::Unauthorized) => {
            let e = failed_auth(&state, req.request()).await;
            return Ok(e.answer(req));
        }
        Err(AuthError::LiveModeDisabled) => {
            return Ok(ApiError::live_mode_disabled().answer(req));
        }
        Err(AuthError::Store(e)) => return Ok(ApiError::from(e).answer(req)),
    };
    let caller = Caller {
        style: Style::of(principal.partner.kind),
        principal,
    };
    req.extensions_mut().insert(caller.clone());
    let policy = state.config.limits.requests();
    if is_group_read(&req) && state.rate_limits.folds_hits_into_reads() {
        return read_with_deferred_hit(req, next, &state, &caller, policy).await;
    }
    if let Err(e) = limits::charge(req.request(), &state, &caller, policy).await {
        let mut res = e.answer(req);
        limits::add_headers(&mut res);
        return Ok(res);
    }
    let mut res = next.call(req).await?.map_into_boxed_body();
    limits::add_headers(&mut res);
    Ok(res)
}

/// Whether `req` is `GET /v1/groups/{groupId}`: a read that changes
/// nothing and whose first statement is the group's read, so the
/// request's hit can ride on it ([`defer_hit`]).
fn is_group_read(req: &ServiceRequest) -> bool {
    req.method() == actix_web::http::Method::GET
        && req
            .path()
            .strip_prefix("/v1/groups/")
            .is_some_and(|id| !id.is_empty() && !id.contains('/'))
}

/// Runs a read with the caller's hit of `policy` deferred to its first
/// statement, then decides the limit as [`limits::charge`] would have
/// before it: a refused hit answers 429 and the read's answer is
/// dropped. A hit the read did not make (it failed before its
/// statement, or found no group) is made now.
async fn read_with_deferred_hit(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
    state: &AppState,
    caller: &Caller,
    policy: Policy,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let now = now_secs(state.clock.as_ref());
    let hit = DeferredHit {
        bucket: policy.bucket(caller.principal.key_id.as_str()),
        window_start: policy.window_start(now),
        limit: policy.limit,
    };
    let (res, outcome) = defer_hit(hit, next.call(req)).await;
    let res = res?.map_into_boxed_body();
    let count = match outcome {
        HitOutcome::Made(count) => count,
        HitOutcome::NotMade(hit) => state.rate_limits.hit(&policy, &hit.bucket, now).await,
    };
    let mut res = match limits::record(res.request(), policy, count, now) {
        Ok(()) => res,
        Err(e) => res.error_response(e),
    };
    limits::add_headers(&mut res);
    Ok(res)
}

/// Counts a failed authentication against the source IP: 401 while the
/// IP is under its limit, 429 once it is over.
async fn failed_auth(state: &AppState, req: &HttpRequest) -> ApiError {
    let Some(ip) = source_ip(req, &state.config) else {
        return ApiError::unauthorized();
    };
    let policy = state.config.limits.failed_auth();
    let now = now_secs(state.clock.as_ref());
    match state
        .rate_limits
        .hit(&policy, &policy.bucket(&ip.to_string()), now)
        .await
    {
        Ok(count) => {
            let d = policy.decide(count, now);
            if d.allowed {
                ApiError::unauthorized()
            } else {
                ApiError::rate_limited(policy.name, d.reset_secs)
            }
        }
        Err(e) => ApiError::from(domain::services::ServiceError::from(e)),
    }
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    #[test]
    fn forwarded_for_is_believed_only_from_trusted_proxies() {
        let proxy: IpAddr = [10, 0, 0, 1].into();
        let config = HttpConfig {
            trusted_proxies: vec![proxy],
            body_timeout: std::time::Duration::from_secs(60),
            ..HttpConfig::default()
        };
        let via_proxy = TestRequest::default()
            .peer_addr("10.0.0.1:5000".parse().unwrap())
            .insert_header(("x-forwarded-for", "203.0.113.9, 10.0.0.1"))
            .to_http_request();
        assert_eq!(
            source_ip(&via_proxy, &config),
            Some([203, 0, 113, 9].into())
        );
        let direct = TestRequest::default()
            .peer_addr("198.51.100.7:5000".parse().unwrap())
            .insert_header(("x-forwarded-for", "203.0.113.9"))
            .to_http_request();
        assert_eq!(source_ip(&direct, &config), Some([198, 51, 100, 7].into()));
    }
}
