//! The outermost middleware: a `Request-Id` on every answer, the error
//! envelope on every error (framework-level ones included, so no default
//! body ever leaks), error field paths in the caller's style, the request
//! id named in every 500, and one structured log line per request — with
//! no key, secret, name, email, date of birth or body. It also puts the
//! request body under its deadline ([`deadline`]).

mod deadline;

use std::time::Instant;

use actix_web::body::{self, BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{HttpMessage as _, HttpResponse, web};

use domain::ports::Minter;

use crate::casing::{self, Style};
use crate::error::{ApiError, Enveloped, ErrorBody};
use crate::reply::style_of;
use crate::state::{AppState, DEFAULT_BODY_TIMEOUT};

/// The request id of the current request (`req_` + 12 hex).
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

/// The header naming the request id.
pub const HEADER: &str = "request-id";

/// The outer middleware.
///
/// # Errors
/// Never: every failure becomes an enveloped answer.
pub async fn observe(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let started = Instant::now();
    let id = req
        .app_data::<web::Data<AppState>>()
        .map(|s| {
            Minter::new(s.entropy.as_ref())
                .request_id()
                .as_str()
                .to_owned()
        })
        .unwrap_or_default();
    req.extensions_mut().insert(RequestId(id.clone()));
    let method = req.method().clone();
    let limit = req
        .app_data::<web::Data<AppState>>()
        .map_or(DEFAULT_BODY_TIMEOUT, |s| s.config.body_timeout);
    let (req, timed_out) = deadline::guard(req, limit);
    // Handlers' errors arrive here as answers; only a failure of the
    // framework itself is an `Err` (the request is gone by then, so it is
    // logged and passed on).
    let res = match next.call(req).await {
        Ok(res) => res.map_into_boxed_body(),
        Err(e) => {
            tracing::error!(request_id = %id, %method, cause = %e, "request failed in the framework");
            return Err(e);
        }
    };
    let res = if timed_out.get() {
        let (http_req, _) = res.into_parts();
        let late = ApiError::body_timeout(limit.as_secs());
        ServiceResponse::new(http_req, actix_web::ResponseError::error_response(&late))
    } else {
        res
    };
    let cause = res.status().is_server_error().then(|| cause_of(&res));
    let mut res = finish(res, &id).await;
    if let Ok(v) = HeaderValue::from_str(&id) {
        res.headers_mut().insert(HeaderName::from_static(HEADER), v);
    }
    // The line's fields are gathered only when it is written: the matched
    // route is looked up again and copied.
    let written = if cause.is_some() {
        tracing::enabled!(tracing::Level::ERROR)
    } else {
        tracing::enabled!(tracing::Level::INFO)
    };
    if written {
        log_line(&res, &id, &method, started, cause);
    }
    Ok(res)
}

/// The request's log line: the error chain of a 5xx at `error`, else at
/// `info`.
fn log_line(
    res: &ServiceResponse<BoxBody>,
    id: &str,
    method: &actix_web::http::Method,
    started: Instant,
    cause: Option<String>,
) {
    let status = res.status().as_u16();
    let route = res
        .request()
        .match_pattern()
        .unwrap_or_else(|| "(unmatched)".to_owned());
    let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    if let Some(cause) = cause {
        tracing::error!(request_id = %id, %method, %route, status, latency_ms, %cause, "request");
    } else {
        tracing::info!(request_id = %id, %method, %route, status, latency_ms, "request");
    }
}

/// The error chain behind a 5xx answer, for the log (never the caller).
fn cause_of(res: &ServiceResponse<BoxBody>) -> String {
    let Some(err) = res.response().error() else {
        return String::new();
    };
    let mut text = err.to_string();
    if let Some(api) = err.as_error::<ApiError>() {
        let mut source = std::error::Error::source(api);
        while let Some(s) = source {
            text.push_str(": ");
            text.push_str(&s.to_string());
            source = s.source();
        }
    }
    text
}

/// Puts the envelope on error answers that lack it (HTML pages aside),
/// names the request id in a 500 and re-cases `details[].field` for
/// camelCase callers.
async fn finish(res: ServiceResponse<BoxBody>, id: &str) -> ServiceResponse<BoxBody> {
    let status = res.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return res;
    }
    // An HTML page (the employer portal's) explains itself to a person.
    let html = res
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    if html {
        return res;
    }
    let style = style_of(res.request());
    let enveloped = res.response().extensions().get::<Enveloped>().is_some();
    if enveloped && status != StatusCode::INTERNAL_SERVER_ERROR && style == Style::Snake {
        return res;
    }
    let (http_req, response) = res.into_parts();
    let framework = response.error().map(ToString::to_string);
    let (head, body) = response.into_parts();
    let bytes = body::to_bytes(body).await.unwrap_or_default();
    let mut envelope = if enveloped {
        serde_json::from_slice::<ErrorBody>(&bytes)
            .ok()
            .unwrap_or_else(|| framework_error(status, framework.as_deref(), &http_req).body())
    } else {
        framework_error(status, framework.as_deref(), &http_req).body()
    };
    if status == StatusCode::INTERNAL_SERVER_ERROR {
        envelope.message =
            format!("the service failed; the request was not applied (request {id})");
    }
    if let Some(details) = envelope.details.as_mut() {
        for d in details.iter_mut() {
            let field = casing::path_to_style(&d.field, style);
            // A one-field message starts with the field's path: name it in
            // the caller's style there too.
            if let Some(rest) = envelope.message.strip_prefix(&format!("{}: ", d.field))
                && field != d.field
            {
                envelope.message = format!("{field}: {rest}");
            }
            d.field = field;
        }
    }
    let mut out = HttpResponse::build(status);
    for (name, value) in head.headers() {
        if name != actix_web::http::header::CONTENT_LENGTH
            && name != actix_web::http::header::CONTENT_TYPE
        {
            out.append_header((name.clone(), value.clone()));
        }
    }
    out.extensions_mut().insert(Enveloped);
    ServiceResponse::new(http_req, out.json(&envelope))
}

/// The envelope for an error the framework produced on its own.
fn framework_error(
    status: StatusCode,
    cause: Option<&str>,
    req: &actix_web::HttpRequest,
) -> ApiError {
    match status {
        StatusCode::NOT_FOUND => ApiError::not_found(format!("no route matches {}", req.path())),
        StatusCode::METHOD_NOT_ALLOWED => {
            ApiError::method_not_allowed(req.method().as_str(), req.path())
        }
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::too_large(crate::body::MAX_BODY_BYTES),
        StatusCode::UNAUTHORIZED => ApiError::unauthorized(),
        s if s.is_client_error() => ApiError::invalid_field(
            "body",
            &cause.map_or_else(|| "the request is invalid".to_owned(), str::to_lowercase),
        ),
        _ => ApiError::internal(cause.unwrap_or("unexpected error").to_owned()),
    }
}
