//! `POST /price-on-plan`: the `diamond` and `value` versions on one plan
//! the partner priced itself (specification, `POST /price-on-plan`;
//! contract, "Price-on-plan (the open rules)").

use std::time::Instant;

use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{HttpRequest, post, web};
use serde_json::Value;

use domain::error::FieldError;
use domain::partner::PartnerKind;
use domain::quote::{Quote, QuoteStatus};
use domain::services::price_on_plan::{Company, Document, PricingInput};
use pricing_core::{CensusMember, CensusRules};

use crate::auth::Caller;
use crate::body;
use crate::error::{ApiError, ErrorBody};
use crate::idempotency::canonical_value;
use crate::limits;
use crate::reply::Reply;
use crate::routes::CommonErrors;
use crate::routes::params::IdempotencyKey;
use crate::state::AppState;
use crate::wire::census::{DEPENDENT_FIELDS, MEMBER_FIELDS};
use crate::wire::price_on_plan::snake::{PlansAnswer, PlansPending};
use crate::wire::price_on_plan::{self as wire, Form, PriceOnPlanBody};

/// The answer form of a caller.
pub(crate) fn form_of(caller: &Caller) -> Form {
    match caller.principal.partner.kind {
        PartnerKind::Broker => Form::Snake,
        PartnerKind::HrPlatform => Form::Camel,
    }
}

/// Trimming asked for by a request.
#[derive(Debug, Default)]
struct Trim {
    fields: Option<Vec<String>>,
    exclude: Option<Vec<String>>,
}

/// The answer for a stored price-on-plan quote: 201 (or 200 when
/// `unavailable`) with the answer, or 202 with `Retry-After` while pricing;
/// each names the quote and its `Location`, where it can be polled.
/// `created` chooses 201 over 200 for a usable answer (a read is 200).
pub(crate) fn answer(
    state: &AppState,
    form: Form,
    quote: &Quote,
    created: bool,
    trim: Option<(&[String], &[String])>,
) -> Result<Reply, ApiError> {
    let doc = Document::of(quote).map_err(ApiError::from)?;
    if quote.status == QuoteStatus::Pricing || doc.answer.is_none() {
        let now = state.clock.now_ms().div_euclid(1000);
        let status = if created {
            StatusCode::ACCEPTED
        } else {
            StatusCode::OK
        };
        return Ok(
            Reply::verbatim(status, wire::pending(form, quote, &doc, now))
                .with_header(header::RETRY_AFTER, &doc.retry_after_secs(now).to_string())
                .with_header(header::LOCATION, &location(quote)),
        );
    }
    let mut body = wire::answer(form, quote, &doc);
    if let Some((fields, exclude)) = trim {
        let fields = (!fields.is_empty()).then_some(fields);
        wire::trim(&mut body, form, fields, Some(exclude));
    }
    let status = if created && quote.status != QuoteStatus::Unavailable {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(Reply::verbatim(status, body).with_header(header::LOCATION, &location(quote)))
}

/// Where the quote is read (and, while it prices, polled).
fn location(quote: &Quote) -> String {
    format!("/v1/quotes/{}", quote.id.as_str())
}

/// The request as the service takes it, every bad field named.
fn input(
    caller: &Caller,
    form: Form,
    body: PriceOnPlanBody,
) -> Result<(PricingInput, Trim), ApiError> {
    let broker = caller.principal.partner.kind == PartnerKind::Broker;
    let mut errors: Vec<FieldError> = Vec::new();
    for (name, list) in [("fields", &body.fields), ("exclude", &body.exclude)] {
        if let Some(list) = list {
            for i in wire::unknown_names(form, list) {
                errors.push(FieldError {
                    field: format!("{name}[{i}]"),
                    message: format!(
                        "is not a field of the answer (the fields of `{}` and of its items)",
                        form.container()
                    ),
                    index: Some(i),
                });
            }
        }
    }
    let census: Vec<CensusMember> = match body.census {
        None => {
            errors.push(FieldError::new("census", "is required"));
            Vec::new()
        }
        Some(rows) => body::rows::<CensusMember>(
            "census",
            rows,
            MEMBER_FIELDS,
            ("dependents", DEPENDENT_FIELDS),
        )
        .into_iter()
        .filter_map(|row| match row {
            Ok(m) => Some(m),
            Err(mut e) => {
                errors.append(&mut e);
                None
            }
        })
        .collect(),
    };
    if !errors.is_empty() {
        return Err(ApiError::invalid(errors));
    }
    Ok((
        PricingInput {
            census,
            plan: body.plan,
            market_plans: body.market_plans.unwrap_or_default(),
            company: body.company.map(|c| Company {
                name: c.name,
                domain: c.domain,
                external_id: c.external_id,
                zip: c.zip,
                state: c.state,
            }),
            rules: CensusRules {
                require_dob: broker,
            },
            plan_required: broker,
        },
        Trim {
            fields: body.fields,
            exclude: body.exclude,
        },
    ))
}

/// The canonical body a repeat is recognised by: `fields` and `exclude`
/// only trim the answer, so they are not part of it.
fn pricing_body(value: &Value) -> Vec<u8> {
    match value {
        Value::Object(map) if map.contains_key("fields") || map.contains_key("exclude") => {
            let mut map = map.clone();
            map.remove("fields");
            map.remove("exclude");
            canonical_value(&Value::Object(map))
        }
        other => canonical_value(other),
    }
}

/// Price the `diamond` and `value` versions on one partner plan.
///
/// The request waits for pricing up to the configured budget (10 s by
/// default), then answers 202 `pricing` with `Retry-After`: send the same
/// body again. A repeat of a body (same partner and mode, whatever the
/// field order or style) finds its quote — finished or still pricing — and
/// is not charged to the 60/hour limit; only a request that starts pricing
/// is. Broker keys get the snake_case form (`plans`), HR platform keys the
/// camelCase form (`versions`). The census is kept as a lead: a new group
/// with its census and this quote, readable through `GET /quotes/{id}`.
#[utoipa::path(
    tag = "Price on plan",
    operation_id = "price_on_plan",
    params(IdempotencyKey),
    request_body(content = PriceOnPlanBody, description = "`census` (required), `plan` (required for broker keys), `company`, `market_plans`, `fields`, `exclude`; snake_case or camelCase",
        example = json!({
            "census": [{"external_id": "E-001", "first_name": "Ana", "last_name": "Ruiz", "dob": "1985-04-02", "zip": "60601", "dependents": []}],
            "plan": {"carrier": "Acme Health", "plan_name": "Silver PPO HSA 3400", "plan_type": "PPO", "hsa_eligible": true,
                     "deductible_individual_cents": 340000, "oop_max_individual_cents": 750000, "pmpm_cents": 52000},
            "company": {"name": "Acme Robotics", "domain": "acme-robotics.example", "zip": "60601", "state": "IL"}
        })),
    responses(
        (status = 201, description = "Both versions (broker keys: `plans`; HR platform keys: `versions`, in the HR platform document)", body = PlansAnswer,
         example = json!({"quote_id": "qt_0193a1b2c3d4", "group_id": "grp_0193a1b2c3d5", "status": "ready", "reason": null,
            "plans": [{"id": "diamond", "plan_name": "Diamond", "status": "ready", "reason": null,
                "your_plan_pmpm_cents": 52000, "service_pmpm_cents": 9875, "pmpm_cents": 61875,
                "monthly_premium_cents": 61875, "service_monthly_cents": 9875, "deductible_cents": 340000,
                "oop_max_cents": 170000, "max_extra_cents": 0}],
            "assumptions": ["Plan year starts 2026-12-01 (the first day of next month)."], "ignored_plans": []})),
        (status = 200, description = "Nothing can be built on the plan: `status: unavailable` with `reason` and the ignored plans", body = PlansAnswer,
         example = json!({"quote_id": "qt_0193a1b2c3d4", "group_id": "grp_0193a1b2c3d5", "status": "unavailable",
            "reason": "no market plan qualifies as a base: an HSA-eligible PPO or EPO with a deductible is needed",
            "plans": [{"id": "diamond", "plan_name": "Diamond", "status": "unavailable", "reason": "no base plan",
                "your_plan_pmpm_cents": null, "service_pmpm_cents": null, "pmpm_cents": null, "monthly_premium_cents": null,
                "service_monthly_cents": null, "deductible_cents": null, "oop_max_cents": 300000, "max_extra_cents": null}],
            "assumptions": [], "ignored_plans": [{"index": 0, "reason": "an HMO cannot be built on", "carrier": null, "planName": null}]})),
        (status = 202, description = "Still pricing: `status: pricing`, the pending `quote_id`, `retry_after_seconds` (`Retry-After`); send the same body again, or poll `GET /quotes/{id}` (`Location`)", body = PlansPending,
         example = json!({"status": "pricing", "quote_id": "qt_0193a1b2c3d4", "group_id": "grp_0193a1b2c3d5", "retry_after_seconds": 2,
            "message": "Still pricing 10000 census members over 2000 simulated plan years; send the same body again in 2 s.", "ignored_plans": []})),
        (status = 400, description = "An invalid field: an HMO, a plan that is not HSA-eligible, a missing required field, an amount outside its range (monthly amounts 0 to 100000000 cents, annual plan amounts 0 to 1000000000), a bad census row", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "plan.plan_type: an HMO cannot be built on",
                          "details": [{"field": "plan.plan_type", "message": "an HMO cannot be built on"}]})),
        (status = 409, description = "An enrolled group holds `company.domain`, or a request with this Idempotency-Key is still executing", body = ErrorBody),
        (status = 422, description = "The plan cannot be priced: no quotable member (`census_required`), no rate-card market covers the census (`market_unavailable`), or an amount of the pricing does not fit (`amount_out_of_range`)", body = ErrorBody,
         example = json!({"error": "census_required", "message": "no quotable member: each counted employee needs a zip and a dob or age"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[post("/price-on-plan")]
pub async fn price_on_plan(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    bytes: web::Bytes,
) -> Result<Reply, ApiError> {
    let received = Instant::now();
    let form = form_of(&caller);
    // The body is read once: its canonical form finds a repeat, and the
    // same value is parsed into the request.
    let value = body::object(&req, &bytes)?;
    let canonical = pricing_body(&value);
    let parsed: PriceOnPlanBody = body::from_value(value, &[])?;
    let (input, trim) = input(&caller, form, parsed)?;
    let fields = trim.fields.unwrap_or_default();
    let exclude = trim.exclude.unwrap_or_default();
    // Only a request that starts pricing is charged.
    let quote = state
        .price_on_plan
        .price(&caller.scope(), &canonical, input, received, async || {
            limits::charge(&req, &state, &caller, state.config.limits.quote_creates()).await
        })
        .await?;
    answer(&state, form, &quote, true, Some((&fields, &exclude)))
}
