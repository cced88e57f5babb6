//! The OpenAPI 3.1 document, generated from the handlers' annotations as
//! they are registered (never hand-written), and the route table derived
//! from it that tells a wrong method (405) from an unknown path (404).

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, ResponseError as _};
use utoipa::Modify;
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

use crate::error::{ApiError, Detail, ErrorBody};
use crate::wire::price_on_plan::camel::VersionsPending;
use crate::wire::price_on_plan::versions::VersionsAnswer;

pub mod camel;
mod webhooks;

use webhooks::Webhooks;

/// The document's fixed parts; paths and schemas are collected from the
/// registered handlers.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Partner Benefits Pricing and Enrollment API",
        version = "1.1.0",
        description = "Create employer groups, upload a census, get market-rate quotes, price the `diamond` and `value` versions on a partner's own HSA plan, enroll, submit elections, read de-identified account data and receive signed webhooks.\n\n**Field style.** This document shows snake_case, the style of broker keys; `/v1/openapi.json?style=camel` is the same API in camelCase, the style of HR platform keys (`company_name` → `companyName`), for generated clients. Requests are accepted in either style; the same field sent in both styles is a 400. Price-on-plan answers keep the keys the specification spells for each form. Query parameters are snake_case in both.\n\n**Authentication.** `Authorization: Bearer psk_test_…` (test mode) or `psk_live_…` (live mode).\n\n**Errors.** Every error uses the envelope `{ error, message, details? }`. Every response carries `Request-Id`; authenticated responses carry `RateLimit-Policy` and `RateLimit`.",
        license(name = "Apache-2.0", identifier = "Apache-2.0")
    ),
    modifiers(&Security, &Webhooks, &Tags),
    components(schemas(ErrorBody, Detail, VersionsAnswer, VersionsPending))
)]
pub struct ApiDoc;

/// The document's tags, in the order the docs page shows them: data,
/// kept in `openapi/tags.json`.
struct Tags;

impl Modify for Tags {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        // A unit test reads the file: it is always a list of tags.
        openapi.tags = serde_json::from_str(include_str!("openapi/tags.json")).ok();
    }
}

struct Security;

impl Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi
            .components
            .get_or_insert_with(utoipa::openapi::Components::new);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("psk_test_<32 hex> | psk_live_<32 hex>")
                    .build(),
            ),
        );
    }
}

/// Adds the response headers every answer shares to each operation of
/// `doc`: `Request-Id` everywhere; `RateLimit` and `RateLimit-Policy` on
/// the authenticated (`/v1`) answers; `Retry-After` on 429, on 202 (when
/// to poll) and on the in-flight 409 of a POST or PUT; `Location` on 201
/// and 202; `Idempotent-Replay` on the answers of POST and PUT.
pub fn add_common_headers(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::RefOr;
    use utoipa::openapi::header::HeaderBuilder;
    use utoipa::openapi::schema::{ObjectBuilder, Type};

    let header = |description: &str, example: serde_json::Value, kind: Type| -> RefOr<_> {
        HeaderBuilder::new()
            .schema(Some(ObjectBuilder::new().schema_type(kind)))
            .description(Some(description))
            .example(Some(example))
            .build()
            .into()
    };
    for (path, item) in &mut doc.paths.paths {
        let authenticated = path.starts_with("/v1/");
        let ops = [
            (false, item.get.as_mut()),
            (true, item.post.as_mut()),
            (true, item.put.as_mut()),
            (false, item.patch.as_mut()),
            (false, item.delete.as_mut()),
        ];
        for (keyed, op) in ops {
            let Some(op) = op else { continue };
            for (status, response) in &mut op.responses.responses {
                let RefOr::T(response) = response else {
                    continue;
                };
                let h = &mut response.headers;
                h.insert(
                    "Request-Id".to_owned(),
                    header(
                        "This request's id (`req_` + 12 hex); quote it to support.",
                        serde_json::json!("req_4be0a19c77d2"),
                        Type::String,
                    ),
                );
                if authenticated && status != "401" {
                    h.insert(
                        "RateLimit-Policy".to_owned(),
                        header(
                            "The limits charged to this request (IETF structured fields).",
                            serde_json::json!("\"requests\";q=120;w=60"),
                            Type::String,
                        ),
                    );
                    h.insert(
                        "RateLimit".to_owned(),
                        header(
                            "Remaining requests and seconds until each window ends.",
                            serde_json::json!("\"requests\";r=57;t=31"),
                            Type::String,
                        ),
                    );
                }
                if status == "429" || status == "202" || (keyed && status == "409") {
                    h.insert(
                        "Retry-After".to_owned(),
                        header(
                            "Seconds to wait before retrying (at least 1).",
                            serde_json::json!(31),
                            Type::Integer,
                        ),
                    );
                }
                if status == "201" || status == "202" {
                    h.insert(
                        "Location".to_owned(),
                        header(
                            "The created resource (on 202, where the pending one is polled).",
                            serde_json::json!("/v1/groups/grp_8c1e4a2f9b3d"),
                            Type::String,
                        ),
                    );
                }
                if keyed && !status.starts_with('5') && status != "429" {
                    h.insert(
                        "Idempotent-Replay".to_owned(),
                        header("`true` when this is the stored answer to an earlier request with the same Idempotency-Key.", serde_json::json!("true"), Type::String),
                    );
                }
            }
        }
    }
}

/// The templated paths of the document: their methods and the query
/// parameters their GET documents.
#[derive(Debug, Clone, Default)]
pub struct RouteTable(Vec<Route>);

/// One path of [`RouteTable`].
#[derive(Debug, Clone, Default)]
struct Route {
    segments: Vec<String>,
    methods: Vec<String>,
    /// `None` when GET is not documented (the served document's own paths).
    get_query: Option<Vec<String>>,
}

impl RouteTable {
    /// The table of `doc`, plus the routes that serve the document itself
    /// (`GET` only), which the document does not list.
    #[must_use]
    pub fn of(doc: &utoipa::openapi::OpenApi) -> Self {
        use utoipa::openapi::path::ParameterIn;

        let served = ["/v1/openapi.json", "/docs", "/docs/"].map(|path| Route {
            segments: path.split('/').map(str::to_owned).collect(),
            methods: vec!["GET".to_owned()],
            get_query: None,
        });
        Self(
            doc.paths
                .paths
                .iter()
                .map(|(path, item)| {
                    let segments = path.split('/').map(str::to_owned).collect();
                    let methods = [
                        ("GET", item.get.is_some()),
                        ("POST", item.post.is_some()),
                        ("PUT", item.put.is_some()),
                        ("PATCH", item.patch.is_some()),
                        ("DELETE", item.delete.is_some()),
                    ]
                    .into_iter()
                    .filter(|(_, on)| *on)
                    .map(|(m, _)| m.to_owned())
                    .collect();
                    let get_query = item.get.as_ref().map(|op| {
                        op.parameters
                            .iter()
                            .flatten()
                            .filter_map(|p| match p {
                                utoipa::openapi::RefOr::T(p) => Some(p),
                                utoipa::openapi::RefOr::Ref(_) => None,
                            })
                            .filter(|p| p.parameter_in == ParameterIn::Query)
                            .map(|p| p.name.clone())
                            .collect()
                    });
                    Route {
                        segments,
                        methods,
                        get_query,
                    }
                })
                .chain(served)
                .collect(),
        )
    }

    /// The query parameters the GET of `path` documents, if a template
    /// with a documented GET matches it.
    #[must_use]
    pub fn query_parameters(&self, path: &str) -> Option<&[String]> {
        self.route(path)?.get_query.as_deref()
    }

    fn route(&self, path: &str) -> Option<&Route> {
        let parts: Vec<&str> = path.split('/').collect();
        self.0.iter().find(|r| {
            r.segments.len() == parts.len()
                && r.segments.iter().zip(&parts).all(|(s, p)| {
                    (s.starts_with('{') && s.ends_with('}') && !p.is_empty()) || s == p
                })
        })
    }

    /// The methods allowed on `path`, if a template matches it.
    #[must_use]
    pub fn allowed(&self, path: &str) -> Option<&[String]> {
        self.route(path).map(|r| r.methods.as_slice())
    }
}

/// The two served documents, built once at start.
#[derive(Debug, Clone)]
pub struct Documents {
    snake: serde_json::Value,
    camel: serde_json::Value,
}

impl Documents {
    /// The broker's document and the HR platform's, made from `doc`.
    #[must_use]
    pub fn of(doc: &utoipa::openapi::OpenApi) -> Self {
        let full = serde_json::to_value(doc).unwrap_or_default();
        Self {
            snake: camel::broker(full.clone()),
            camel: camel::document(full),
        }
    }

    /// The broker's document (`style=snake`).
    #[must_use]
    pub const fn snake(&self) -> &serde_json::Value {
        &self.snake
    }

    /// The HR platform's document (`style=camel`).
    #[must_use]
    pub const fn camel(&self) -> &serde_json::Value {
        &self.camel
    }
}

/// `GET /v1/openapi.json`: the snake_case document (broker keys), or with
/// `?style=camel` the camelCase one (HR platform keys).
pub async fn serve(req: HttpRequest, documents: actix_web::web::Data<Documents>) -> HttpResponse {
    let query = crate::query::Query::of(&req);
    if let Err(e) = query.only(req.path(), &["style"]) {
        return e.error_response();
    }
    match query.text("style") {
        None | Some("snake") => HttpResponse::Ok().json(&documents.snake),
        Some("camel") => HttpResponse::Ok().json(&documents.camel),
        Some(_) => ApiError::invalid_field("style", "must be snake or camel").error_response(),
    }
}

/// The default service: 405 when the path exists under another method,
/// else 404, both in the envelope.
pub async fn fallback(req: HttpRequest, table: actix_web::web::Data<RouteTable>) -> HttpResponse {
    match table.allowed(req.path()) {
        Some(methods) => {
            let mut res =
                ApiError::method_not_allowed(req.method().as_str(), req.path()).error_response();
            if let Ok(v) = header::HeaderValue::from_str(&methods.join(", ")) {
                res.headers_mut().insert(header::ALLOW, v);
            }
            res
        }
        None => ApiError::not_found(format!("no route matches {}", req.path())).error_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_whole_segments() {
        let t = RouteTable(vec![Route {
            segments: "/v1/groups/{groupId}"
                .split('/')
                .map(str::to_owned)
                .collect(),
            methods: vec!["GET".to_owned(), "PATCH".to_owned()],
            get_query: Some(Vec::new()),
        }]);
        assert!(t.allowed("/v1/groups/grp_000000000000").is_some());
        assert!(t.allowed("/v1/groups/").is_none());
        assert!(t.allowed("/v1/groups/x/y").is_none());
        assert!(t.allowed("/v2/groups/x").is_none());
    }

    #[test]
    fn the_tags_file_is_a_list_of_described_tags() {
        let tags: Vec<utoipa::openapi::Tag> =
            serde_json::from_str(include_str!("openapi/tags.json")).unwrap();
        assert_eq!(tags.first().map(|t| t.name.as_str()), Some("Integration"));
        assert!(
            tags.iter()
                .all(|t| t.description.as_ref().is_some_and(|d| !d.is_empty()))
        );
        assert_eq!(ApiDoc::openapi().tags.map(|t| t.len()), Some(tags.len()));
    }
}
