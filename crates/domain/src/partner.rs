//! Partners: brokers and HR platform partners, their benefits-administration
//! role, live-mode enablement and capabilities (contract section 2).

pub mod readiness;

use serde::{Deserialize, Serialize};

use crate::ids::PartnerId;
use crate::mode::Mode;

/// Broker or HR platform partner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartnerKind {
    /// Broker: snake_case responses, elections by default.
    Broker,
    /// HR or payroll platform: camelCase responses.
    HrPlatform,
}

/// Who runs benefits administration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BenefitsAdmin {
    /// The partner (sends elections; receives `deductions.changed`).
    Partner,
    /// The service.
    Service,
}

/// A capability a key may lack (403 `forbidden`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    /// `POST /groups/{id}/elections`.
    Elections,
}

/// A partner account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partner {
    /// `prt_` id.
    pub id: PartnerId,
    /// Display name.
    pub name: String,
    /// Kind.
    pub kind: PartnerKind,
    /// Benefits administration.
    pub benefits_admin: BenefitsAdmin,
    /// Whether the agreements are executed and live mode is enabled.
    pub live_enabled: bool,
    /// Whether the commercial and operational agreements are completed
    /// (go-live step (c), `partner agreements --commercial done`).
    #[serde(default)]
    pub commercial_done: bool,
    /// Capabilities.
    pub capabilities: Vec<Capability>,
    /// The origins whose pages may frame the offer iframe
    /// (`https://host[:port]`); see [`crate::embed::frame_ancestors`].
    pub embed_origins: Vec<String>,
}

/// Why a partner's key may not proceed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AccessError {
    /// A live key before live mode is enabled (403 `live_mode_disabled`).
    #[error("live mode is not enabled for this partner")]
    LiveModeDisabled,
    /// The key lacks a capability (403 `forbidden`).
    #[error("this key may not use this capability")]
    Forbidden,
}

impl Partner {
    /// A new partner with the defaults of its kind: brokers run benefits
    /// administration and have the elections capability; HR platforms
    /// leave administration to the service and do not.
    #[must_use]
    pub fn new(
        id: PartnerId,
        name: String,
        kind: PartnerKind,
        benefits_admin: Option<BenefitsAdmin>,
    ) -> Self {
        let (default_admin, capabilities) = match kind {
            PartnerKind::Broker => (BenefitsAdmin::Partner, vec![Capability::Elections]),
            PartnerKind::HrPlatform => (BenefitsAdmin::Service, Vec::new()),
        };
        Self {
            id,
            name,
            kind,
            benefits_admin: benefits_admin.unwrap_or(default_admin),
            live_enabled: false,
            commercial_done: false,
            capabilities,
            embed_origins: Vec::new(),
        }
    }

    /// Checks the mode gate (after authentication, before limits).
    ///
    /// # Errors
    /// [`AccessError::LiveModeDisabled`] for a live key of a partner without live mode.
    pub fn check_mode(&self, mode: Mode) -> Result<(), AccessError> {
        if mode == Mode::Live && !self.live_enabled {
            Err(AccessError::LiveModeDisabled)
        } else {
            Ok(())
        }
    }

    /// Checks a capability.
    ///
    /// # Errors
    /// [`AccessError::Forbidden`] when the partner lacks it.
    pub fn require(&self, capability: Capability) -> Result<(), AccessError> {
        if self.capabilities.contains(&capability) {
            Ok(())
        } else {
            Err(AccessError::Forbidden)
        }
    }
}

/// What a partner has done in one mode: the evidence of go-live step (a)
/// (specification, Authentication rule 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Activity {
    /// Groups created.
    pub groups: u64,
    /// Groups with a census of at least one member.
    pub groups_with_census: u64,
    /// Quotes created.
    pub quotes: u64,
    /// Enrollments created.
    pub enrollments: u64,
    /// Signed `ping` events that an endpoint answered with 2xx.
    pub pings_delivered: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn partner(kind: PartnerKind) -> Partner {
        Partner::new(PartnerId::from_bytes([1; 6]), "P".to_owned(), kind, None)
    }

    #[test]
    fn kinds_have_their_defaults() {
        let b = partner(PartnerKind::Broker);
        assert_eq!(b.benefits_admin, BenefitsAdmin::Partner);
        assert_eq!(b.require(Capability::Elections), Ok(()));
        let h = partner(PartnerKind::HrPlatform);
        assert_eq!(h.benefits_admin, BenefitsAdmin::Service);
        assert_eq!(
            h.require(Capability::Elections),
            Err(AccessError::Forbidden)
        );
        let h = Partner::new(
            PartnerId::from_bytes([2; 6]),
            "H".to_owned(),
            PartnerKind::HrPlatform,
            Some(BenefitsAdmin::Partner),
        );
        assert_eq!(h.benefits_admin, BenefitsAdmin::Partner);
    }

    #[test]
    fn live_keys_need_live_mode() {
        let mut p = partner(PartnerKind::Broker);
        assert_eq!(p.check_mode(Mode::Test), Ok(()));
        assert_eq!(p.check_mode(Mode::Live), Err(AccessError::LiveModeDisabled));
        p.live_enabled = true;
        assert_eq!(p.check_mode(Mode::Live), Ok(()));
    }
}
