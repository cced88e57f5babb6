//! An event's payload (`data`), one variant per event type. Stored in
//! snake_case; the envelope re-cases it for HR platforms when it is
//! answered or delivered.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{DocumentError, Legacy, stored_value, to_stored};
use crate::event::EventType;
use crate::ids::{EnrollmentId, GroupId, MemberId, QuoteId};

/// `quote.finalized`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = QuoteFinalizedEvent))]
pub struct QuoteFinalized {
    /// The quote.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub quote_id: QuoteId,
    /// Its group.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub group_id: GroupId,
    /// Its status now (`ready`).
    pub status: String,
}

/// `quote.accepted`: the employer accepted the offer in its iframe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = QuoteAcceptedEvent))]
pub struct QuoteAccepted {
    /// The quote.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub quote_id: QuoteId,
    /// Its group.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub group_id: GroupId,
    /// The name typed.
    pub name: String,
    /// The verified address.
    pub email: String,
    /// When (RFC 3339).
    pub accepted_at: String,
}

/// `enrollment.created`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = EnrollmentCreatedEvent))]
pub struct EnrollmentCreated {
    /// The enrollment.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub enrollment_id: EnrollmentId,
    /// Its group.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub group_id: GroupId,
    /// The quote it was made from.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub quote_id: QuoteId,
    /// Coverage start (`YYYY-MM-DD`).
    pub start_date: String,
    /// The group's domain.
    pub company_domain: String,
    /// `hosted` or `embedded`.
    pub onboarding_mode: String,
}

/// `onboarding` in `enrollment.updated`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = OnboardingCountsEvent))]
pub struct OnboardingCounts {
    /// ⌊100 × completed required steps ÷ 4⌋.
    pub percent_complete: u32,
    /// Required steps not completed.
    pub blocking_remaining: u32,
}

/// `step` in `enrollment.updated`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = StepChangeEvent))]
pub struct StepChange {
    /// The step's id.
    pub id: String,
    /// Its status after the change.
    pub status: String,
}

/// `enrollment.updated`: a step changed status; the state after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = EnrollmentUpdatedEvent))]
pub struct EnrollmentUpdated {
    /// The enrollment.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub enrollment_id: EnrollmentId,
    /// Its group.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub group_id: GroupId,
    /// The enrollment's status after the change.
    pub status: String,
    /// Progress after the change.
    pub onboarding: OnboardingCounts,
    /// The step that changed.
    pub step: StepChange,
}

/// `group.state_changed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = GroupStateChangedEvent))]
pub struct GroupStateChanged {
    /// The group.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub group_id: GroupId,
    /// Its domain.
    pub company_domain: String,
    /// The company state before.
    pub previous_state: String,
    /// The company state now.
    pub state: String,
    /// A go-live without a completed checklist (the test helper, the
    /// operator); absent otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub forced: bool,
}

/// `census.processed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = CensusProcessedEvent))]
pub struct CensusProcessed {
    /// The group.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub group_id: GroupId,
    /// Rows received by the write.
    pub received: u64,
    /// Rows accepted.
    pub accepted: u64,
    /// Members of the census now.
    pub member_count: u64,
    /// Rows refused.
    pub error_count: u64,
}

/// One member's deduction in `deductions.changed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = DeductionEvent))]
pub struct Deduction {
    /// The member.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub member_id: MemberId,
    /// The partner's id of the member.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub external_id: Option<String>,
    /// `enrolled` or `waived`.
    pub election: String,
    /// The tier, when enrolled.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub tier: Option<String>,
    /// Coverage start, when enrolled (`YYYY-MM-DD`).
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub effective_date: Option<String>,
    /// The employee's monthly share, cents.
    pub employee_monthly_cents: i64,
    /// The employer's monthly share, cents.
    pub employer_monthly_cents: i64,
}

/// `deductions.changed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = DeductionsChangedEvent))]
pub struct DeductionsChanged {
    /// The group.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub group_id: GroupId,
    /// Every member whose election was written.
    pub members: Vec<Deduction>,
}

/// An event's payload, by type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data")]
pub enum EventData {
    /// `ping`: an empty object.
    #[serde(rename = "ping")]
    Ping {},
    /// `quote.finalized`.
    #[serde(rename = "quote.finalized")]
    QuoteFinalized(QuoteFinalized),
    /// `quote.accepted`.
    #[serde(rename = "quote.accepted")]
    QuoteAccepted(QuoteAccepted),
    /// `enrollment.created`.
    #[serde(rename = "enrollment.created")]
    EnrollmentCreated(EnrollmentCreated),
    /// `enrollment.updated`.
    #[serde(rename = "enrollment.updated")]
    EnrollmentUpdated(EnrollmentUpdated),
    /// `group.state_changed`.
    #[serde(rename = "group.state_changed")]
    GroupStateChanged(GroupStateChanged),
    /// `census.processed`.
    #[serde(rename = "census.processed")]
    CensusProcessed(CensusProcessed),
    /// `deductions.changed`.
    #[serde(rename = "deductions.changed")]
    DeductionsChanged(DeductionsChanged),
}

impl EventData {
    /// The event type the payload belongs to.
    #[must_use]
    pub const fn event_type(&self) -> EventType {
        match self {
            Self::Ping {} => EventType::Ping,
            Self::QuoteFinalized(_) => EventType::QuoteFinalized,
            Self::QuoteAccepted(_) => EventType::QuoteAccepted,
            Self::EnrollmentCreated(_) => EventType::EnrollmentCreated,
            Self::EnrollmentUpdated(_) => EventType::EnrollmentUpdated,
            Self::GroupStateChanged(_) => EventType::GroupStateChanged,
            Self::CensusProcessed(_) => EventType::CensusProcessed,
            Self::DeductionsChanged(_) => EventType::DeductionsChanged,
        }
    }

    /// The payload alone, in snake_case (the envelope's `data`).
    #[must_use]
    pub fn data(&self) -> Value {
        match serde_json::to_value(self) {
            Ok(Value::Object(mut map)) => map.remove("data").unwrap_or(Value::Null),
            _ => Value::Null,
        }
    }

    /// The stored form of the payload (the type is stored beside it).
    ///
    /// # Errors
    /// When the payload does not serialize.
    pub fn to_stored(&self) -> Result<String, serde_json::Error> {
        to_stored(&self.data())
    }

    /// Reads the stored payload of an event of type `event_type` (current,
    /// or bare camelCase as the previous version wrote it).
    ///
    /// # Errors
    /// [`DocumentError`] when it does not read as that type's payload.
    pub fn from_stored(event_type: EventType, text: &str) -> Result<Self, DocumentError> {
        let data = stored_value(text, Legacy::Camel)?;
        Ok(serde_json::from_value(serde_json::json!({
            "type": event_type.as_str(),
            "data": data,
        }))?)
    }
}
