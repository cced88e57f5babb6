//! `GET /ping`.

use serde::Serialize;
use utoipa::ToSchema;

/// The partner a key belongs to.
#[derive(Debug, Serialize, ToSchema)]
pub struct PingPartner {
    /// `prt_` id.
    pub id: String,
    /// Name.
    pub name: String,
}

/// The answer of `GET /ping`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"ok": true, "partner": {"id": "prt_3f9a1c0d2b7e", "name": "Acme Benefits"}, "mode": "test"}))]
pub struct Ping {
    /// Always true for an accepted key.
    pub ok: bool,
    /// The key's partner.
    pub partner: PingPartner,
    /// `test` or `live`, from the key.
    #[schema(value_type = crate::wire::enums::Mode, example = "test")]
    pub mode: String,
}
