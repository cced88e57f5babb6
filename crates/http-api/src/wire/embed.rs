//! Embed sessions: `POST /groups/{groupId}/embed-sessions` (contract
//! section 3, Embed sessions).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The body of `POST /groups/{groupId}/embed-sessions` (may be empty).
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[schema(example = json!({"quote_id": "qt_1a2b3c4d5e6f"}))]
pub struct EmbedSessionInput {
    /// A `ready`, unexpired quote of this group; default the group's newest
    /// such quote.
    #[schema(example = "qt_1a2b3c4d5e6f")]
    pub quote_id: Option<String>,
}

/// An embed session: the iframe URL of the offer page and its expiry.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "emb_5d1f0a7c3e92",
    "url": "http://127.0.0.1:8080/embed/Xq3vJ0c8kP2mT5wYbR7nLd1sFh9gA4eUoZ6iC0yN2t8",
    "expires_at": "2026-11-21T13:44:00Z"
}))]
pub struct EmbedSessionOut {
    /// `emb_` id.
    #[schema(example = "emb_5d1f0a7c3e92")]
    pub id: String,
    /// The offer page, outside `/v1` and unauthenticated; frame it.
    pub url: String,
    /// 30 minutes after creation; afterwards the page answers 410.
    #[schema(format = DateTime)]
    pub expires_at: String,
}

/// The body of `POST /embed/{token}/email`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct EmailInput {
    /// An address at the group's domain (or a subdomain).
    pub email: Option<String>,
}

/// The answer of `POST /embed/{token}/email` (camelCase: the iframe's
/// own endpoints).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CodeSentOut {
    /// The address, masked (`j•••@acme.com`).
    pub code_sent_to: String,
}

/// The body of `POST /embed/{token}/verify`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct CodeInput {
    /// The 6-digit code.
    pub code: Option<String>,
}

/// The answer of `POST /embed/{token}/verify`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifiedOut {
    /// Always true.
    pub verified: bool,
}

/// One plan document of the offer.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DocumentOut {
    /// `plan_summary`, `service_agreement` or `privacy_notice`.
    pub name: String,
    /// Title.
    pub title: String,
    /// Hex SHA-256 of the text.
    pub sha256: String,
    /// Where to download it (plain text).
    pub url: String,
}

/// The answer of `GET /embed/{token}/documents`.
#[derive(Debug, Clone, Serialize)]
pub struct DocumentsOut {
    /// The three documents, in reading order.
    pub documents: Vec<DocumentOut>,
}

/// The body of `POST /embed/{token}/accept`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct AcceptInput {
    /// The accepting person's full name.
    pub name: Option<String>,
}

/// The answer of `POST /embed/{token}/accept`: `quote.acceptance`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AcceptanceOut {
    /// The name typed.
    pub name: String,
    /// The verified address.
    pub email: String,
    /// When (RFC 3339).
    pub accepted_at: String,
}
