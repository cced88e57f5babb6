//! The actix-web adapter: routing, authentication, field style,
//! idempotency, rate limits, the error envelope and the OpenAPI document.
//!
//! **API boundary:** the server builds an [`AppState`] from the domain's
//! services and ports and calls [`app`]; nothing here knows which database
//! is behind the ports.
//!
//! Every request passes, outermost first: [`observe::observe`] (request id,
//! envelope, log line) → for `/v1`, [`auth::authenticate`] (key, live-mode
//! gate, per-key limit) → [`idempotency::idempotency`] (POST and PUT) → the
//! handler, which parses its body with [`body::parse`] and answers with a
//! [`reply::Reply`] that is re-cased for the caller.
// The price-on-plan answer forms are large `json!` literals.
#![recursion_limit = "256"]

pub mod auth;
pub mod body;
pub mod casing;
pub mod census_csv;
pub mod error;
pub mod extract;
pub mod idempotency;
pub mod limits;
pub mod observe;
pub mod openapi;
pub mod page;
pub mod query;
pub mod reply;
pub mod routes;
pub mod state;
pub mod wire;

use std::sync::OnceLock;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::middleware::from_fn;
use actix_web::{App, guard, web};
use utoipa::OpenApi as _;
use utoipa_actix_web::{AppExt as _, UtoipaApp, scope};
use utoipa_swagger_ui::SwaggerUi;

pub use state::{AppState, HttpConfig, Limits};

use crate::openapi::RouteTable;

/// Registers every documented route on `app`.
fn routes<T>(app: UtoipaApp<T>) -> UtoipaApp<T>
where
    T: ServiceFactory<ServiceRequest, Config = (), Error = actix_web::Error, InitError = ()>,
{
    app.service(routes::health::healthz)
        .service(routes::health::readyz)
        .service(
            scope::scope("/v1")
                .wrap(from_fn(query::known_parameters))
                .wrap(from_fn(idempotency::idempotency))
                .wrap(from_fn(auth::authenticate))
                .service(routes::ping::ping)
                .service(routes::plans::list_plans)
                .service(routes::groups::create_group)
                .service(routes::groups::list_groups)
                .service(routes::groups::get_group)
                .service(routes::groups::update_group)
                .service(routes::census::replace_census)
                .service(routes::census::get_census)
                .service(routes::account::get_account)
                .service(routes::elections::submit_elections)
                .service(routes::embed::create_embed_session)
                .service(routes::members::add_member)
                .service(routes::members::update_member)
                .service(routes::members::list_roster)
                .service(routes::quotes::create_quote)
                .service(routes::quotes::list_quotes)
                .service(routes::quotes::get_quote)
                .service(routes::price_on_plan::price_on_plan)
                .service(routes::webhook::put_webhook)
                .service(routes::webhook::get_webhook)
                .service(routes::webhook::delete_webhook)
                .service(routes::webhook::test_webhook)
                .service(routes::webhook::list_deliveries)
                .service(routes::webhook::rotate_secret)
                .service(routes::webhook::replay)
                .service(routes::enrollments::create_enrollment)
                .service(routes::enrollments::list_enrollments)
                .service(routes::enrollments::get_enrollment)
                .service(routes::enrollments::create_portal_link)
                .service(routes::onboarding::get_onboarding)
                .service(routes::onboarding::put_company_profile)
                .service(routes::onboarding::request_business_verification)
                .service(routes::onboarding::put_banking)
                .service(routes::onboarding::verify_banking)
                .service(routes::onboarding::put_plan_setup)
                .service(routes::onboarding::sign_plan_setup)
                .service(routes::onboarding::send_employee_invitations)
                .service(routes::events::list_events)
                .service(routes::events::get_event)
                .service(routes::events::resend_event)
                .service(routes::test_helpers::finalize_quote)
                .service(routes::test_helpers::go_live),
        )
}

/// The OpenAPI document, built once from the registered handlers.
#[must_use]
pub fn openapi() -> &'static utoipa::openapi::OpenApi {
    static DOC: OnceLock<utoipa::openapi::OpenApi> = OnceLock::new();
    DOC.get_or_init(|| {
        let (_, mut doc) = routes(
            App::new()
                .into_utoipa_app()
                .openapi(openapi::ApiDoc::openapi()),
        )
        .split_for_parts();
        openapi::add_common_headers(&mut doc);
        doc
    })
}

/// The two served documents, with `public_base_url` as their server.
#[must_use]
pub fn documents(public_base_url: &str) -> openapi::Documents {
    let mut doc = openapi().clone();
    doc.servers = Some(vec![utoipa::openapi::Server::new(public_base_url)]);
    openapi::Documents::of(&doc)
}

/// The application over `state`.
pub fn app(
    state: AppState,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    let table = RouteTable::of(openapi());
    let documents = documents(&state.public_base_url);
    let urls = [
        utoipa_swagger_ui::Url::new("Broker keys (snake_case)", "/v1/openapi.json"),
        utoipa_swagger_ui::Url::new(
            "HR platform keys (camelCase)",
            "/v1/openapi.json?style=camel",
        ),
    ];
    let app = App::new()
        .app_data(web::Data::new(state))
        .app_data(web::Data::new(table))
        .app_data(web::Data::new(documents))
        .app_data(web::PayloadConfig::new(body::MAX_BODY_BYTES))
        // Registered before `/v1` so that the scope does not claim them.
        .service(
            web::resource("/v1/openapi.json")
                .guard(guard::Get())
                .to(openapi::serve),
        )
        .into_utoipa_app();
    // The API's own routes come before the pages' regex patterns (Swagger
    // UI's tail match, the iframe's `{token}` paths), which every API
    // request would otherwise try first; none of the paths overlap.
    routes(app)
        .into_app()
        .service(SwaggerUi::new("/docs/{_:.*}").config(utoipa_swagger_ui::Config::new(urls)))
        // The offer iframe's own endpoints: not part of the partner API.
        .configure(routes::embed::iframe::configure)
        // The contract names the page `/docs`; the UI lives under `/docs/`.
        .service(
            web::resource("/docs")
                .guard(guard::Get())
                .to(|| async { web::Redirect::to("/docs/").permanent() }),
        )
        .default_service(web::to(openapi::fallback))
        .wrap(from_fn(observe::observe))
}
