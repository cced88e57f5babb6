//! The offer page of an embed session (onboarding §5), `GET
//! /embed/{token}`: the quote's figures, its chart against the prior cost
//! and, through this service's own small script, the steps to accept it.
//! The page is meant for an iframe in the partner's product: it may be
//! framed only by the partner's embed origins, sets no cookie and is never
//! cached. Its JSON endpoints (`/embed/{token}/email` and the rest) belong
//! to the API adapter; this module renders and serves its assets.

pub mod view;

use actix_web::http::StatusCode;
use actix_web::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
};
use actix_web::{HttpResponse, web};
use askama::Template;
use domain::enrollment::QuoteUse;
use domain::services::embed::{EmbedSessions, OpenError};

use self::view::OfferView;

/// The page's script, embedded in the binary.
const SCRIPT: &str = include_str!("../assets/offer.js");
/// The page's stylesheet, embedded in the binary.
const STYLESHEET: &str = include_str!("../assets/offer.css");

/// The offer.
#[derive(Template)]
#[template(path = "offer/offer.html")]
struct OfferPage {
    /// The document title.
    title: String,
    /// What the page shows.
    offer: OfferView,
    /// When the link stops working, `HH:MM UTC`.
    expires: String,
}

/// A page saying why no offer is shown.
#[derive(Template)]
#[template(path = "offer/gone.html")]
struct Gone {
    /// The document title.
    title: &'static str,
    /// The heading.
    heading: &'static str,
    /// What happened and what to do.
    text: &'static str,
}

/// Registers the page and its assets on the application.
pub fn configure(sessions: EmbedSessions) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        cfg.app_data(web::Data::new(sessions))
            .route("/embed/assets/offer.js", web::get().to(script))
            .route("/embed/assets/offer.css", web::get().to(stylesheet))
            .route("/embed/{token}", web::get().to(show));
    }
}

/// An asset of the page, cached briefly.
fn asset(content_type: &'static str, body: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((CONTENT_TYPE, content_type))
        .insert_header((CACHE_CONTROL, "public, max-age=300"))
        .insert_header((X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .body(body)
}

async fn script() -> HttpResponse {
    asset("text/javascript; charset=utf-8", SCRIPT)
}

async fn stylesheet() -> HttpResponse {
    asset("text/css; charset=utf-8", STYLESHEET)
}

/// `HH:MM UTC` of Unix seconds `at`.
fn clock(at: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(at).map_or_else(
        |_| "its expiry".to_owned(),
        |t| format!("{:02}:{:02} UTC", t.hour(), t.minute()),
    )
}

/// The offer page, or the page saying why there is none: 404 for an
/// unknown token, 410 for an expired link or an outdated quote (no price
/// of it is shown).
async fn show(sessions: web::Data<EmbedSessions>, token: web::Path<String>) -> HttpResponse {
    match sessions.open(&token).await {
        Ok(offer) => match offer.quote.body.market() {
            Some(figures) => {
                let view = OfferView::of(figures);
                let page = OfferPage {
                    title: format!("{} offer", view.plan),
                    offer: view,
                    expires: clock(offer.stored.session.expires_at),
                };
                answer(StatusCode::OK, &page, &offer.frame_ancestors)
            }
            None => {
                tracing::error!("an embed session's quote has no market figures");
                answer(StatusCode::INTERNAL_SERVER_ERROR, &UNAVAILABLE, "*")
            }
        },
        Err(OpenError::NotFound) => answer(StatusCode::NOT_FOUND, &NOT_FOUND, "*"),
        Err(OpenError::Expired { frame_ancestors }) => {
            answer(StatusCode::GONE, &EXPIRED, &frame_ancestors)
        }
        Err(OpenError::Outdated {
            why,
            frame_ancestors,
        }) => {
            let page = if why == QuoteUse::Stale {
                &STALE
            } else {
                &QUOTE_EXPIRED
            };
            answer(StatusCode::GONE, page, &frame_ancestors)
        }
        Err(OpenError::Service(e)) => {
            tracing::error!(error = %e, "an offer page failed");
            answer(StatusCode::SERVICE_UNAVAILABLE, &UNAVAILABLE, "*")
        }
    }
}

const NOT_FOUND: Gone = Gone {
    title: "Offer not found",
    heading: "Offer not found",
    text: "This offer link is not valid. Open the offer again from your benefits platform.",
};

const EXPIRED: Gone = Gone {
    title: "Offer link expired",
    heading: "This offer link expired",
    text: "Offer links work for a short time only. Open the offer again from your benefits \
platform.",
};

const STALE: Gone = Gone {
    title: "Offer out of date",
    heading: "This offer is out of date",
    text: "The company's census changed after this offer was priced, so its prices no longer \
apply. Open the offer again from your benefits platform to see current prices.",
};

const QUOTE_EXPIRED: Gone = Gone {
    title: "Offer out of date",
    heading: "This offer is out of date",
    text: "The quote behind this offer has expired, so its prices no longer apply. Open the \
offer again from your benefits platform to see current prices.",
};

const UNAVAILABLE: Gone = Gone {
    title: "Offer unavailable",
    heading: "The offer cannot be shown right now",
    text: "Try again in a minute.",
};

/// The page, which pages of `frame_ancestors` may frame; never cached,
/// no cookie, no referrer (the URL holds the token), and a policy that
/// allows only this origin's script, stylesheet and JSON endpoints.
fn answer(status: StatusCode, page: &impl Template, frame_ancestors: &str) -> HttpResponse {
    let mut res = crate::view::html(status, page);
    let headers = res.headers_mut();
    for (name, value) in [
        (CACHE_CONTROL, "no-store".to_owned()),
        (
            CONTENT_SECURITY_POLICY,
            format!(
                "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self'; \
connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors {frame_ancestors}"
            ),
        ),
        (X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
        (REFERRER_POLICY, "no-referrer".to_owned()),
    ] {
        if let Ok(value) = value.parse() {
            headers.insert(name, value);
        }
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expiry_reads_as_a_time_of_day() {
        assert_eq!(clock(1_764_306_000), "05:00 UTC");
        assert_eq!(clock(i64::MAX), "its expiry");
    }

    #[test]
    fn text_is_escaped() {
        let page = Gone {
            title: "<t>",
            heading: "<script>alert(1)</script>",
            text: "a & b",
        };
        let html = page.render().unwrap();
        assert!(!html.contains("<script>"), "{html}");
        assert!(!html.contains("a & b"), "{html}");
        assert!(html.contains("alert(1)"), "{html}");
    }
}
