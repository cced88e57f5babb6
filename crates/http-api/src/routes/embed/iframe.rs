//! The offer iframe's own JSON endpoints (onboarding §5), outside `/v1`
//! and not partner-callable: the URL's token is the credential. Bodies
//! and answers are camelCase; errors use the API's envelope
//! (`email_not_allowed`, `verification_failed` with `attemptsRemaining`,
//! 410 `session_expired`, 429 `rate_limited` for a sixth code within the
//! hour). No CORS header is ever sent: only the offer page itself, on
//! this origin, calls them.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, post, web};

use crate::body;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::routes::not_found_as;
use crate::state::AppState;
use crate::wire::embed::{
    AcceptInput, AcceptanceOut, CodeInput, CodeSentOut, DocumentOut, DocumentsOut, EmailInput,
    VerifiedOut,
};
use crate::wire::timestamp;

const NO_OFFER: &str = "no such offer";

/// Registers the endpoints.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(send_code)
        .service(verify_code)
        .service(list_documents)
        .service(download_document)
        .service(accept_offer);
}

fn refused(e: domain::services::ServiceError) -> ApiError {
    not_found_as(e, NO_OFFER)
}

/// Sends a 6-digit code to an address at the group's domain.
#[post("/embed/{token}/email")]
pub async fn send_code(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    bytes: web::Bytes,
) -> Result<Reply, ApiError> {
    let input: EmailInput = body::parse(&req, &bytes, &[])?;
    let email = input.email.unwrap_or_default();
    let masked = state
        .embed_sessions
        .send_code(&path, &email)
        .await
        .map_err(refused)?;
    Reply::new(
        actix_web::http::StatusCode::ACCEPTED,
        &CodeSentOut {
            code_sent_to: masked,
        },
    )
}

/// Checks the code.
#[post("/embed/{token}/verify")]
pub async fn verify_code(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    bytes: web::Bytes,
) -> Result<Reply, ApiError> {
    let input: CodeInput = body::parse(&req, &bytes, &[])?;
    state
        .embed_sessions
        .verify(&path, &input.code.unwrap_or_default())
        .await
        .map_err(refused)?;
    Reply::ok(&VerifiedOut { verified: true })
}

/// The plan documents of the offer (after verification).
#[get("/embed/{token}/documents")]
pub async fn list_documents(
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<Reply, ApiError> {
    let docs = state
        .embed_sessions
        .documents(&path)
        .await
        .map_err(refused)?;
    Reply::ok(&DocumentsOut {
        documents: docs
            .iter()
            .map(|d| DocumentOut {
                name: d.name.to_owned(),
                title: d.title.to_owned(),
                sha256: d.sha256(),
                url: format!("/embed/{}/documents/{}", path.as_str(), d.name),
            })
            .collect(),
    })
}

/// One plan document as a plain-text download.
#[get("/embed/{token}/documents/{name}")]
pub async fn download_document(
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (token, name) = path.into_inner();
    let docs = state
        .embed_sessions
        .documents(&token)
        .await
        .map_err(refused)?;
    let doc = docs
        .into_iter()
        .find(|d| d.name == name)
        .ok_or_else(|| ApiError::not_found("no such document"))?;
    Ok(HttpResponse::Ok()
        .content_type("text/plain; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{}.txt\"", doc.name),
        ))
        .body(doc.text))
}

/// Accepts the offer in the verified address's name.
#[post("/embed/{token}/accept")]
pub async fn accept_offer(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    bytes: web::Bytes,
) -> Result<Reply, ApiError> {
    let input: AcceptInput = body::parse(&req, &bytes, &[])?;
    let a = state
        .embed_sessions
        .accept(&path, &input.name.unwrap_or_default())
        .await
        .map_err(refused)?;
    Reply::ok(&AcceptanceOut {
        name: a.name,
        email: a.email,
        accepted_at: timestamp(a.accepted_at),
    })
}
