//! The closed sets of values answers carry, as the document lists them
//! (the wire fields stay strings; these only describe them). Values are
//! the same in both field styles: only keys are re-cased.

use utoipa::ToSchema;

/// `test` or `live`.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum ModeOut {
    /// Sandbox.
    Test,
    /// Production.
    Live,
}

/// A group's status.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum GroupStatusOut {
    /// No census yet.
    Created,
    /// A census was accepted.
    CensusReceived,
    /// Quoted.
    Quoted,
    /// Enrolled.
    Enrolled,
    /// The company is in production.
    Active,
}

/// The provisioned company's state.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum CompanyStateOut {
    /// Until the group goes live.
    Sandbox,
    /// Live.
    Prod,
}

/// An enrollment's status.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum EnrollmentStatusOut {
    /// Onboarding runs.
    Onboarding,
    /// Live mode, every required step done: underwriting reviews.
    InReview,
    /// The company is `prod`.
    Active,
}

/// Where onboarding runs.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum OnboardingModeOut {
    /// The hosted employer portal.
    Hosted,
    /// The partner's product, through the API.
    Embedded,
}

/// An onboarding step's status.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum StepStatusOut {
    /// Not started.
    NotStarted,
    /// Started.
    InProgress,
    /// Waiting on a verification.
    Pending,
    /// Something must be corrected.
    ActionRequired,
    /// Done.
    Completed,
}

/// A member's census status.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum MemberStatusOut {
    /// Employed.
    Active,
    /// Terminated.
    Terminated,
}

/// A member's enrollment status on the roster.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum RosterEnrollmentOut {
    /// No election yet.
    Pending,
    /// Elected coverage.
    Enrolled,
    /// Waived coverage.
    Waived,
}

/// A member's invitation status on the roster.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum InvitationStatusOut {
    /// Not sent yet.
    NotSent,
    /// Test mode: recorded, never sent.
    Suppressed,
    /// Sent.
    Sent,
}

/// Where an event's webhook delivery stands.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum DeliveryStateOut {
    /// An attempt is due.
    Pending,
    /// An endpoint answered 2xx.
    Delivered,
    /// The first attempt and 3 retries failed.
    Failed,
    /// No endpoint was registered when it was due.
    NoEndpoint,
}
