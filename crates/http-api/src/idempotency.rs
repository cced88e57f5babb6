//! `Idempotency-Key` on every POST and PUT (contract section 4).
//!
//! Records are per (partner, mode, key) and remember the method, the path
//! with its query, and a digest of the canonical body (keys in snake_case,
//! sorted, so field order and style do not matter). The first request
//! executes; answers below 500 except 429 are stored for 24 hours and
//! replayed with `Idempotent-Replay: true`; 500, 503 and 429 release the
//! key so a retry executes again. A duplicate while the first executes gets
//! 409 `conflict` with `Retry-After: 1`; the same key with another body,
//! method or path gets 400 (`field: "Idempotency-Key"`).

use actix_web::body::{self, BoxBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::Next;
use actix_web::{HttpMessage as _, HttpResponse, ResponseError as _, web};
use serde_json::Value;

use domain::idempotency::{
    Begin, Completion, IdempotentRequest, StoredResponse, check_key, is_stored, request_digest,
};
use domain::ports::{Minter, now_secs};
use domain::services::ServiceError;

use crate::auth::Caller;
use crate::body::MAX_BODY_BYTES;
use crate::casing;
use crate::error::ApiError;
use crate::openapi::RouteTable;
use crate::state::AppState;

/// The header.
pub const HEADER: &str = "idempotency-key";

/// Headers kept with a stored answer and replayed.
const REPLAYED: [HeaderName; 2] = [header::CONTENT_TYPE, header::LOCATION];

/// The canonical bytes of a body: JSON with snake_case keys sorted at every
/// level; anything that is not JSON is taken as is.
#[must_use]
pub fn canonical(bytes: &[u8]) -> Vec<u8> {
    match serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|v| casing::normalize(v).ok())
    {
        Some(v) => canonical_value(&v),
        None => bytes.to_vec(),
    }
}

/// The canonical bytes of a value whose keys are already snake_case
/// ([`casing::normalize`]): [`pricing_core::canonical`] JSON, keys sorted
/// at every level, no spaces.
#[must_use]
pub fn canonical_value(v: &Value) -> Vec<u8> {
    pricing_core::canonical::to_string(v).into_bytes()
}

/// The idempotency middleware of the `/v1` scope (inside authentication).
///
/// # Errors
/// Only what the wrapped service returns.
pub async fn idempotency(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    if !matches!(*req.method(), Method::POST | Method::PUT) {
        return Ok(next.call(req).await?.map_into_boxed_body());
    }
    // A method the path does not serve is 405 (404 for no path), whatever
    // its headers: only a real operation is held to its key.
    let served = req
        .app_data::<web::Data<RouteTable>>()
        .and_then(|t| t.allowed(req.path()))
        .is_some_and(|methods| {
            methods
                .iter()
                .any(|m| m.eq_ignore_ascii_case(req.method().as_str()))
        });
    if !served {
        return Ok(next.call(req).await?.map_into_boxed_body());
    }
    let Some(raw) = req.headers().get(HEADER).cloned() else {
        return Ok(next.call(req).await?.map_into_boxed_body());
    };
    let key = match raw.to_str() {
        Ok(k) if check_key(k).is_ok() => k.to_owned(),
        _ => {
            let e =
                ApiError::invalid_field("Idempotency-Key", "must be 1 to 255 printable characters");
            return Ok(e.answer(req));
        }
    };
    let (Some(state), Some(caller)) = (
        req.app_data::<web::Data<AppState>>().cloned(),
        req.extensions().get::<Caller>().cloned(),
    ) else {
        return Ok(ApiError::unauthorized().answer(req));
    };
    let bytes = match req.extract::<web::Bytes>().await {
        Ok(b) => b,
        Err(_) => return Ok(ApiError::too_large(MAX_BODY_BYTES).answer(req)),
    };
    let route = match req.query_string() {
        "" => req.path().to_owned(),
        q => format!("{}?{q}", req.path()),
    };
    let request = IdempotentRequest {
        key,
        method: req.method().as_str().to_owned(),
        route,
        digest: request_digest(&canonical(&bytes)),
        attempt: Minter::new(state.entropy.as_ref()).idempotency_attempt(),
    };
    let scope = caller.scope();
    let now = now_secs(state.clock.as_ref());
    let begin = match state.idempotency.begin(&scope, &request, now).await {
        Ok(b) => b,
        Err(e) => {
            // The begin may have committed before its connection failed
            // (the acknowledgement of a COMMIT lost in an outage): the
            // attempt's record, if it exists, must not hold the key until
            // its lease ends.
            release(&state, &scope, &request).await;
            return Ok(ApiError::from(ServiceError::from(e)).answer(req));
        }
    };
    match begin {
        Begin::Replay(stored) => Ok(req.into_response(replay(&stored))),
        Begin::Mismatch => Ok(ApiError::invalid_field(
            "Idempotency-Key",
            "was already used with another body, method or path",
        )
        .answer(req)),
        Begin::InFlight => Ok(ApiError::idempotency_in_flight().answer(req)),
        Begin::Execute => {
            req.set_payload(Payload::from(bytes));
            let res = match next.call(req).await {
                Ok(res) => res.map_into_boxed_body(),
                Err(e) => {
                    release(&state, &scope, &request).await;
                    return Err(e);
                }
            };
            let status = res.status().as_u16();
            // An answer that tells the caller to retry after a delay (429,
            // 409 `rates_pending`) describes a passing state: replaying it
            // for 24 hours would refuse the very retry it asks for.
            let retry_later = res.headers().contains_key(header::RETRY_AFTER);
            // An answer carrying a secret (`PUT /webhook`) is marked
            // `Cache-Control: no-store` and never kept at rest.
            let secret = res
                .headers()
                .get(header::CACHE_CONTROL)
                .is_some_and(|v| v.as_bytes() == b"no-store");
            if !is_stored(status) || retry_later || secret {
                release(&state, &scope, &request).await;
                return Ok(res);
            }
            let (http_req, response) = res.into_parts();
            let (head, body) = response.into_parts();
            let Ok(body) = body::to_bytes(body).await else {
                release(&state, &scope, &request).await;
                let e = ApiError::internal("response body could not be read");
                return Ok(ServiceResponse::new(http_req, e.error_response()));
            };
            let stored = StoredResponse {
                status,
                headers: REPLAYED
                    .iter()
                    .filter_map(|name| {
                        head.headers()
                            .get(name)
                            .and_then(|v| v.to_str().ok())
                            .map(|v| (name.as_str().to_owned(), v.to_owned()))
                    })
                    .collect(),
                body: body.to_vec(),
            };
            if let Err(e) = state
                .idempotency
                .complete(
                    &scope,
                    Completion {
                        request: &request,
                        response: &stored,
                        now,
                    },
                )
                .await
            {
                tracing::warn!(error = %e, "idempotent answer not stored; a retry executes again");
            }
            let response = head.set_body(BoxBody::new(body));
            Ok(ServiceResponse::new(http_req, response))
        }
    }
}

/// How often, and how far apart, a release the store refused is tried
/// again in the background.
const RELEASE_RETRIES: u32 = 120;
const RELEASE_RETRY_DELAY: std::time::Duration = std::time::Duration::from_millis(250);

/// Frees the key of a request that stored no answer, so that its retry
/// executes. When the store refuses (an outage, the very reason the
/// request failed), the release is tried again in the background for 30 s,
/// so the key frees as soon as the store is back rather than when its
/// lease ends; a retry meanwhile is told the request is in flight.
async fn release(state: &AppState, scope: &domain::scope::Scope, request: &IdempotentRequest) {
    if state.idempotency.release(scope, request).await.is_ok() {
        return;
    }
    let (store, scope, request) = (
        std::sync::Arc::clone(&state.idempotency),
        scope.clone(),
        request.clone(),
    );
    actix_web::rt::spawn(async move {
        for _ in 0..RELEASE_RETRIES {
            actix_web::rt::time::sleep(RELEASE_RETRY_DELAY).await;
            if store.release(&scope, &request).await.is_ok() {
                return;
            }
        }
        tracing::warn!("idempotency key not released; it frees when its lease ends");
    });
}

/// The stored answer, marked as a replay.
fn replay(stored: &StoredResponse) -> HttpResponse {
    let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::OK);
    let mut res = HttpResponse::build(status);
    for (name, value) in &stored.headers {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            res.insert_header((n, v));
        }
    }
    res.insert_header(("idempotent-replay", "true"));
    if status.is_client_error() {
        res.extensions_mut().insert(crate::error::Enveloped);
    }
    res.body(stored.body.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_bodies_ignore_order_and_style() {
        let a = canonical(br#"{"companyName":"A","address":{"zip":"1","city":"C"}}"#);
        let b = canonical(br#"{ "address": {"city":"C","zip":"1"}, "company_name": "A" }"#);
        assert_eq!(a, b);
        assert_ne!(a, canonical(br#"{"company_name":"B"}"#));
        assert_eq!(canonical(b"not json"), b"not json".to_vec());
    }

    /// The canonical bytes and the digest of one body, as the first
    /// version stored them: another canonical form would make every
    /// stored `Idempotency-Key` record answer 400 to its own retry.
    #[test]
    fn the_canonical_form_and_its_digest_are_pinned() {
        let body = "{ \"members\": [{\"firstName\": \"Zo\u{eb}\", \"dob\": \"1980-01-02\", \"age\": null}],\n  \"companyName\": \"Acme \\\"Holdings\\\" <&>\\n\", \"address\": {\"zip\": \"60601\", \"line1\": \"1 Main\"},\n  \"ratio\": 1.50, \"big\": 12345678901234567890, \"neg\": -3, \"flags\": [true, false, {}], \"emptyList\": [] }";
        let canon = canonical(body.as_bytes());
        assert_eq!(
            String::from_utf8(canon.clone()).unwrap(),
            r#"{"address":{"line1":"1 Main","zip":"60601"},"big":12345678901234567890,"company_name":"Acme \"Holdings\" <&>\n","empty_list":[],"flags":[true,false,{}],"members":[{"age":null,"dob":"1980-01-02","first_name":"Zoë"}],"neg":-3,"ratio":1.5}"#
        );
        // SHA-256 of the text above, computed independently.
        assert_eq!(
            request_digest(&canon),
            "131ed79634b8e907c39335dd3b736041aefca5f58a33c7f00893df226f30364a"
        );
    }
}
