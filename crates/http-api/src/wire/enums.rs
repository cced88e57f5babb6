//! The closed sets of values answers carry and list filters take, as the
//! document lists them (the wire fields stay strings; these only describe
//! them). Values are the same in both field styles: only keys are
//! re-cased.

use utoipa::ToSchema;
use utoipa::openapi::schema::{Object, ObjectBuilder, Type};

use domain::event::EventType;

/// An event type: every value of [`EventType::ALL`].
#[must_use]
pub fn event_type() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(EventType::ALL.iter().map(|t| t.as_str())))
        .build()
}

/// `test` or `live`.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum Mode {
    /// Sandbox.
    Test,
    /// Production.
    Live,
}

/// The provisioned company's state.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum CompanyState {
    /// Until the group goes live.
    Sandbox,
    /// Live.
    Prod,
}

/// An enrollment's status.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum EnrollmentStatus {
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
pub enum OnboardingMode {
    /// The hosted employer portal.
    Hosted,
    /// The partner's product, through the API.
    Embedded,
}

/// An onboarding step's status.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum StepStatus {
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
pub enum MemberStatus {
    /// Employed.
    Active,
    /// Terminated.
    Terminated,
}

/// A member's enrollment status on the roster.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum MemberEnrollmentStatus {
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
pub enum InvitationStatus {
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
pub enum DeliveryState {
    /// An attempt is due.
    Pending,
    /// An endpoint answered 2xx.
    Delivered,
    /// The first attempt and 3 retries failed.
    Failed,
    /// No endpoint was registered when it was due.
    NoEndpoint,
}

/// A quote's status (`pricing` and `unavailable` are price-on-plan's).
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum QuoteStatus {
    /// Usable for an enrollment.
    Ready,
    /// Waiting for underwriting.
    InReview,
    /// Price-on-plan: nothing could be built.
    Unavailable,
    /// Price-on-plan: still pricing.
    Pricing,
}

/// A market-rate quote's status.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum MarketQuoteStatus {
    /// Usable for an enrollment.
    Ready,
    /// Above the rate card's in-review threshold; underwriting finalizes it.
    InReview,
}

/// A terminated member's COBRA continuation status.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum CobraStatus {
    /// May elect continuation until the deadline.
    Eligible,
}

/// A quote's type.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum QuoteType {
    /// `POST /groups/{groupId}/quotes`.
    Quote,
    /// `POST /price-on-plan`.
    PriceOnPlan,
}

/// One of the two versions the service prices.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum VersionId {
    /// The richer version (lower member maxima).
    Diamond,
    /// The leaner version.
    Value,
}

/// A price-on-plan answer's or version's status once priced.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum PricedStatus {
    /// Usable.
    Ready,
    /// Waiting for underwriting.
    InReview,
    /// Nothing could be built (`reason` says why).
    Unavailable,
}

/// A price-on-plan quote still pricing.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum PricingStatus {
    /// Send the same body again, or poll `GET /quotes/{id}`.
    Pricing,
}

/// How a version was priced.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum PricingMethod {
    /// Simulated over the census's plan years.
    Engine,
    /// The base premium plus the service's cost.
    CostPlus,
}

/// Where a plan came from.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum PlanSource {
    /// The request's `plan`.
    PartnerPlan,
    /// Chosen among the request's `market_plans`.
    MarketPlans,
    /// The rate card's local benchmark.
    RateCard,
}

/// What a plan's premium was computed from.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum RateBasis {
    /// Each member's own rate.
    MemberRates,
    /// One per-member-per-month rate.
    Pmpm,
    /// Monthly rates by household tier.
    MonthlyRates,
    /// The rate card.
    RateCard,
}

/// What a pending price-on-plan quote waits on.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum WaitingOn {
    /// The simulated plan years.
    Simulation,
}
