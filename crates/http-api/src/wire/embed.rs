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
    "url": "https://api.service.example/embed/djEuZW1iXzVkMWYw…",
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
