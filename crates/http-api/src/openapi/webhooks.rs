//! The document's `webhooks` section: one POST per event type, the signed
//! envelope a partner's endpoint receives with that type's `data`.

use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::path::{OperationBuilder, ParameterBuilder, ParameterIn};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Ref, SchemaFormat, Type};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{HttpMethod, PathItem, PathsBuilder, RefOr, Required, Schema};
use utoipa::{Modify, OpenApi};

use domain::document::event::{
    CensusProcessed, Deduction, DeductionsChanged, EnrollmentCreated, EnrollmentUpdated,
    GroupStateChanged, OnboardingCounts, QuoteAccepted, QuoteFinalized, StepChange,
};
use domain::event::EventType;

/// The payload schemas, registered under their `…Event` names.
#[derive(OpenApi)]
#[openapi(components(schemas(
    QuoteFinalized,
    QuoteAccepted,
    EnrollmentCreated,
    OnboardingCounts,
    StepChange,
    EnrollmentUpdated,
    GroupStateChanged,
    CensusProcessed,
    Deduction,
    DeductionsChanged
)))]
struct Payloads;

/// An event type's payload schema (none for `ping`'s empty object) and
/// when it is sent.
const fn payload(t: EventType) -> (Option<&'static str>, &'static str) {
    match t {
        EventType::Ping => (None, "A test event (`POST /webhook/test`); `data` is empty"),
        EventType::QuoteFinalized => (
            Some("QuoteFinalizedEvent"),
            "Underwriting finalized an `in_review` quote",
        ),
        EventType::QuoteAccepted => (
            Some("QuoteAcceptedEvent"),
            "The employer accepted the offer in its iframe",
        ),
        EventType::EnrollmentCreated => (
            Some("EnrollmentCreatedEvent"),
            "An enrollment was created for one of the partner's groups",
        ),
        EventType::EnrollmentUpdated => (
            Some("EnrollmentUpdatedEvent"),
            "An onboarding step's status changed",
        ),
        EventType::GroupStateChanged => (
            Some("GroupStateChangedEvent"),
            "The provisioned company moved from `sandbox` to `prod`",
        ),
        EventType::CensusProcessed => {
            (Some("CensusProcessedEvent"), "A census write was processed")
        }
        EventType::DeductionsChanged => (
            Some("DeductionsChangedEvent"),
            "Elections changed members' payroll deductions",
        ),
    }
}

/// The security scheme of a delivery: its signature.
const SIGNATURE: &str = "webhookSignature";

/// Adds the `webhooks` section, its payload schemas and the signature's
/// security scheme.
pub struct Webhooks;

impl Modify for Webhooks {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let payloads = Payloads::openapi();
        if let Some(theirs) = payloads.components {
            let ours = openapi
                .components
                .get_or_insert_with(utoipa::openapi::Components::new);
            ours.schemas.extend(theirs.schemas);
        }
        let mut paths = PathsBuilder::new();
        for t in EventType::ALL {
            let (schema, summary) = payload(t);
            let name = t.as_str();
            paths = paths.path(
                name,
                PathItem::new(HttpMethod::Post, operation(name, schema, summary)),
            );
        }
        openapi.webhooks = Some(paths.build());
        openapi
            .components
            .get_or_insert_with(utoipa::openapi::Components::new)
            .add_security_scheme(
                SIGNATURE,
                SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                    "webhook-signature",
                    "Standard Webhooks: `v1,<base64 HMAC-SHA256>` of `{webhook-id}.{webhook-timestamp}.{body}` under the endpoint's secret (`whsec_…`); verify it before trusting the body.",
                ))),
            );
    }
}

/// A string property described by `description`.
fn text(description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(description))
}

/// The delivery of an event of type `name`.
fn operation(name: &str, payload: Option<&str>, summary: &str) -> utoipa::openapi::path::Operation {
    let data: RefOr<Schema> = match payload {
        Some(schema) => Ref::from_schema_name(schema).into(),
        None => ObjectBuilder::new()
            .description(Some("Empty."))
            .max_properties(Some(0))
            .into(),
    };
    let envelope = ObjectBuilder::new()
        .description(Some(
            "The envelope (HR platform partners receive its fields, and `data`'s, in camelCase).",
        ))
        .property("id", text("`evt_` id; also the `webhook-id` header"))
        .required("id")
        .property("type", text("The event type.").enum_values(Some([name])))
        .required("type")
        .property(
            "created_at",
            text("When the change happened.")
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime))),
        )
        .required("created_at")
        .property(
            "mode",
            text("`test` or `live`.").enum_values(Some(["test", "live"])),
        )
        .required("mode")
        .property("data", data)
        .required("data");
    let header = |header: &str, description: &str| {
        ParameterBuilder::new()
            .name(header)
            .parameter_in(ParameterIn::Header)
            .required(Required::True)
            .description(Some(description))
            .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
            .build()
    };
    OperationBuilder::new()
        .security(SecurityRequirement::new(
            SIGNATURE,
            Vec::<String>::new(),
        ))
        .summary(Some(summary))
        .operation_id(Some(format!("webhook_{}", name.replace('.', "_"))))
        .tag("Webhooks")
        .parameter(header(
            "webhook-id",
            "The event's id: the same on every attempt, so a receiver can drop repeats.",
        ))
        .parameter(header(
            "webhook-timestamp",
            "Unix seconds of this attempt; refuse one more than 5 minutes away.",
        ))
        .parameter(header(
            "webhook-signature",
            "`v1,<base64 HMAC-SHA256>` of `{webhook-id}.{webhook-timestamp}.{body}` under the endpoint's secret (Standard Webhooks); two signatures, space-separated, while a rotated secret's grace period runs.",
        ))
        .request_body(Some(
            RequestBodyBuilder::new()
                .content(
                    "application/json",
                    ContentBuilder::new().schema(Some(envelope)).build(),
                )
                .required(Some(Required::True))
                .build(),
        ))
        .response(
            "200",
            ResponseBuilder::new().description(
                "Any 2xx within 10 s acknowledges the delivery; anything else is retried after 1 s, 5 s and 25 s.",
            ),
        )
        .build()
}
