//! Quotes: `POST /groups/{groupId}/quotes`, `GET /groups/{groupId}/quotes`
//! and `GET /quotes/{id}` (contract section 3, Quotes).

use actix_web::{HttpRequest, get, post, web};

use domain::ids::{GroupId, QuoteId};
use domain::quote::{Quote, QuoteFilter, QuoteKind, QuoteStatus};
use domain::services::quotes::QuoteBody;

use crate::auth::Caller;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{Body, Optional, PathId};
use crate::limits;
use crate::page;
use crate::query::{self, Query, kept};
use crate::reply::Reply;
use crate::routes::CommonErrors;
use crate::routes::params::{GroupNotFound, GroupPath, IdempotencyKey, QuotePath};
use crate::routes::price_on_plan::form_of;
use crate::state::AppState;
use crate::wire::quotes::{QuoteInput, QuoteItem, QuoteList, QuoteOut, QuoteRead};

/// Create a quote from the group's stored census.
///
/// Synchronous and deterministic: the same census, rate card and body give
/// the same numbers. Answers 409 `rates_pending` (with `Retry-After`) while
/// the market comparison a census write started is still running.
#[utoipa::path(
    tag = "Quotes",
    operation_id = "create_quote",
    params(GroupPath, IdempotencyKey),
    request_body(content = QuoteInput, description = "Every field is optional; an empty body or `{}` quotes `diamond` from next month"),
    responses(
        (status = 201, description = "The quote (`in_review` above the rate card's threshold)", body = QuoteOut),
        (status = 400, description = "A field is invalid, or a member's date of birth is after the plan-year start", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "plan_id: must be diamond or value",
                          "details": [{"field": "plan_id", "message": "must be diamond or value"}]})),
        GroupNotFound,
        (status = 409, description = "The census's market comparison is still running (`rates_pending`, `Retry-After`), or a request with this Idempotency-Key is still executing", body = ErrorBody,
         example = json!({"error": "rates_pending", "message": "the market comparison of the census is still running; retry in 1 s"})),
        (status = 422, description = "No quotable member (`census_required`), no rate-card market covers the census (`market_unavailable`), or an amount of the pricing does not fit (`amount_out_of_range`)", body = ErrorBody,
         example = json!({"error": "census_required", "message": "no quotable member: each counted employee needs a zip and a dob or age"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[post("/groups/{groupId}/quotes")]
pub async fn create_quote(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    id: PathId<GroupId>,
    // An empty body is `{}`: every field is optional.
    Body(wire, ..): Body<QuoteInput, Optional>,
) -> Result<Reply, ApiError> {
    // Only a request that can start pricing is charged to the quote
    // limit: not a bad body, not one for another partner's group, nor a
    // `rates_pending` answer a caller is told to retry.
    let quote = state
        .quotes
        .request(
            &caller.scope(),
            &id,
            QuoteBody {
                plan_id: wire.plan_id,
                plan_year_start_date: wire.plan_year_start_date,
                employer_contribution_pct: wire.employer_contribution_pct,
            },
            async || {
                limits::charge(&req, &state, &caller, state.config.limits.quote_creates()).await
            },
        )
        .await
        .map_err(PathId::<GroupId>::missing)?;
    Reply::created(
        &QuoteOut::of(&quote)?,
        &format!("/v1/quotes/{}", quote.id.as_str()),
    )
}

/// Filters of a group's quote list (exact match; together, all must hold).
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct QuoteFilters {
    /// Only quotes in this status (`pricing` and `unavailable` are
    /// price-on-plan's).
    #[param(inline)]
    pub status: Option<crate::wire::enums::QuoteStatus>,
    /// Only market-rate quotes (`quote`) or price-on-plan quotes.
    #[param(inline, rename = "type")]
    pub kind: Option<crate::wire::enums::QuoteType>,
}

/// The quote filters of `req`'s query.
fn quote_filters(req: &HttpRequest) -> Result<QuoteFilter, ApiError> {
    let q = Query::of(req);
    query::filters(|errors| QuoteFilter {
        status: kept(
            errors,
            q.value(
                "status",
                "must be ready, in_review, unavailable or pricing",
                QuoteStatus::parse,
            ),
        ),
        kind: kept(
            errors,
            q.value("type", "must be quote or price_on_plan", QuoteKind::parse),
        ),
    })
}

/// List the group's quotes, newest first.
#[utoipa::path(
    tag = "Quotes",
    operation_id = "list_quotes",
    params(GroupPath, QuoteFilters, crate::routes::groups::PageParams),
    responses(
        (status = 200, description = "A page of quotes", body = QuoteList),
        (status = 400, description = "A bad `limit`, `cursor` or filter, or a query parameter this list does not take", body = ErrorBody,
         example = json!({"error": "invalid_request", "message": "type: must be quote or price_on_plan",
                          "details": [{"field": "type", "message": "must be quote or price_on_plan"}]})),
        GroupNotFound,
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[get("/groups/{groupId}/quotes")]
pub async fn list_quotes(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    id: PathId<GroupId>,
) -> Result<Reply, ApiError> {
    let filter = quote_filters(&req)?;
    let list = format!("quotes:{}", id.as_str());
    let request = page::request(&req, &list)?;
    let page = state
        .quotes
        .list(&caller.scope(), &id, &filter, &request)
        .await
        .map_err(PathId::<GroupId>::missing)?;
    Reply::ok(&QuoteList {
        next_cursor: page::next_cursor(&list, &page),
        quotes: page
            .items
            .iter()
            .map(QuoteItem::of)
            .collect::<Result<_, _>>()?,
    })
}

/// Read one quote of the caller's partner and mode.
///
/// Reading an expired quote still answers it; using one (an enrollment)
/// answers 410 `quote_expired`.
#[utoipa::path(
    tag = "Quotes",
    operation_id = "get_quote",
    params(QuotePath),
    responses(
        (status = 200, description = "The quote: a market-rate quote, or a price-on-plan quote's stored answer (the shape `POST /price-on-plan` answered)", body = QuoteRead),
        (status = 404, description = "No such quote for this partner and mode", body = ErrorBody,
         example = json!({"error": "not_found", "message": "no such quote in this mode"})),
        CommonErrors
    ),
    security(("bearer" = []))
)]
#[get("/quotes/{id}")]
pub async fn get_quote(
    state: web::Data<AppState>,
    caller: Caller,
    id: PathId<QuoteId>,
) -> Result<Reply, ApiError> {
    let quote = state
        .quotes
        .get(&caller.scope(), &id)
        .await
        .map_err(PathId::<QuoteId>::missing)?;
    quote_reply(&state, &caller, &quote)
}

/// A stored quote as read: the Quote resource, or a price-on-plan quote's
/// stored answer, whole, in the caller's form.
pub(crate) fn quote_reply(
    state: &AppState,
    caller: &Caller,
    quote: &Quote,
) -> Result<Reply, ApiError> {
    match quote.kind {
        QuoteKind::Quote => Reply::ok(&QuoteOut::of(quote)?),
        QuoteKind::PriceOnPlan => {
            crate::routes::price_on_plan::answer(state, form_of(caller), quote, false, None)
        }
    }
}
