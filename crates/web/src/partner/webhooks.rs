//! The Webhooks page (the endpoint of the mode shown, registering,
//! pinging, rotating, removing, replaying, and the delivery log with
//! resend) and the Events pages, over the same webhook services as the
//! API.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, get, post, web};
use askama::Template;
use domain::event::EventType;
use domain::ids::EventId;
use domain::page::encode_cursor;
use domain::webhook::attempt::{AttemptFilter, AttemptOutcome, DeliveryAttempt};
use serde::Deserialize;
use time::PrimitiveDateTime;
use time::macros::format_description;

use super::pages::{CursorQuery, failed, page_of};
use super::{Frame, Member, PartnerState, render, see_other, when};
use crate::errors::PageError;
use crate::forms::CsrfForm;

struct EndpointView {
    url: String,
    state: &'static str,
    failing_since: String,
    rotation: String,
}

struct AttemptView {
    at: String,
    event_id: String,
    event_type: &'static str,
    attempt: u32,
    outcome: String,
    status: String,
    latency: String,
    body: String,
    failed: bool,
}

impl AttemptView {
    fn of(a: DeliveryAttempt) -> Self {
        let outcome = match a.failure_reason {
            Some(r) => format!("{} ({})", a.outcome.as_str(), r.as_str()),
            None => a.outcome.as_str().to_owned(),
        };
        Self {
            at: domain::ports::rfc3339(a.at_ms.div_euclid(1000)),
            event_id: a.event_id.to_string(),
            event_type: a.event_type.as_str(),
            attempt: a.attempt,
            failed: a.outcome == AttemptOutcome::Failed,
            outcome,
            status: a.status_code.map(|s| s.to_string()).unwrap_or_default(),
            latency: format!("{} ms", a.latency_ms),
            body: a.response_body.unwrap_or_default(),
        }
    }
}

/// Offers Resend once per event, on its newest failed attempt.
fn one_resend_per_event(mut rows: Vec<AttemptView>) -> Vec<AttemptView> {
    let mut seen = std::collections::HashSet::new();
    for row in &mut rows {
        row.failed = row.failed && seen.insert(row.event_id.clone());
    }
    rows
}

#[derive(Template)]
#[template(path = "partner/webhooks.html")]
struct Webhooks {
    frame: Frame,
    admin: bool,
    endpoint: Option<EndpointView>,
    url_value: String,
    /// (heading, secret, note).
    secret: Option<(String, String, String)>,
    deliveries: Vec<AttemptView>,
    filtered: bool,
    next: Option<String>,
}

/// What the page shows besides the endpoint and the log.
#[derive(Default)]
struct Extra {
    secret: Option<(String, String, String)>,
    error: Option<String>,
    flash: Option<String>,
    url: Option<String>,
}

async fn webhooks_page(
    state: &PartnerState,
    member: &Member,
    status: StatusCode,
    cursor: Option<&str>,
    extra: Extra,
) -> Result<HttpResponse, PageError> {
    let endpoint = state.console.endpoint(&member.actor).await?;
    let page = page_of("deliveries", cursor);
    let log = state
        .console
        .deliveries(&member.actor, &AttemptFilter::default(), &page)
        .await?;
    let url_value = extra
        .url
        .or_else(|| endpoint.as_ref().map(|e| e.url.clone()))
        .unwrap_or_default();
    let page = Webhooks {
        frame: Frame::of(member, "Webhooks", "/partner/webhooks")
            .error(extra.error)
            .flash(extra.flash),
        admin: member.admin(),
        endpoint: endpoint.map(|e| EndpointView {
            url: e.url,
            state: e.state.as_str(),
            failing_since: e
                .failing_since_ms
                .map_or_else(|| "—".to_owned(), |t| when(t.div_euclid(1000))),
            rotation: e.previous_secret.map_or_else(
                || "none".to_owned(),
                |p| format!("also signing until {}", when(p.expires_at)),
            ),
        }),
        url_value,
        secret: extra.secret,
        deliveries: one_resend_per_event(log.items.into_iter().map(AttemptView::of).collect()),
        filtered: cursor.is_some(),
        next: log.next.map(|c| encode_cursor("deliveries", &c)),
    };
    Ok(render(status, &page))
}

/// The Webhooks page.
#[get("/webhooks")]
pub(super) async fn index(
    state: web::Data<PartnerState>,
    member: Member,
    query: web::Query<CursorQuery>,
) -> Result<HttpResponse, PageError> {
    let extra = Extra::default();
    webhooks_page(
        &state,
        &member,
        StatusCode::OK,
        query.cursor.as_deref(),
        extra,
    )
    .await
}

async fn refused(
    state: &PartnerState,
    member: &Member,
    e: domain::services::ServiceError,
    url: Option<String>,
) -> Result<HttpResponse, PageError> {
    let (status, text) = failed(e)?;
    let extra = Extra {
        error: Some(text),
        url,
        ..Extra::default()
    };
    webhooks_page(state, member, status, None, extra).await
}

#[derive(Deserialize)]
struct EndpointForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    url: String,
}

/// Registers or changes the endpoint; a new secret is shown once.
#[post("/webhooks/endpoint")]
pub(super) async fn save_endpoint(
    state: web::Data<PartnerState>,
    member: Member,
    form: web::Form<EndpointForm>,
) -> Result<HttpResponse, PageError> {
    member.check(&form.csrf, "/partner/webhooks")?;
    match state
        .console
        .register_endpoint(&member.actor, form.url.trim())
        .await
    {
        Ok(r) => {
            let extra = Extra {
                secret: Some((
                    "The endpoint's signing secret".to_owned(),
                    r.secret.clone(),
                    "Verify every delivery's webhook-signature with it. It is shown only now; an endpoint re-enabled with its own URL keeps its secret.".to_owned(),
                )),
                ..Extra::default()
            };
            webhooks_page(&state, &member, StatusCode::OK, None, extra).await
        }
        Err(e) => refused(&state, &member, e, Some(form.url.clone())).await,
    }
}

/// Removes the endpoint.
#[post("/webhooks/delete")]
pub(super) async fn remove_endpoint(
    state: web::Data<PartnerState>,
    member: Member,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    member.check(&form.csrf, "/partner/webhooks")?;
    match state.console.remove_endpoint(&member.actor).await {
        Ok(()) => Ok(see_other("/partner/webhooks")),
        Err(e) => refused(&state, &member, e, None).await,
    }
}

/// Sends a test ping.
#[post("/webhooks/ping")]
pub(super) async fn ping(
    state: web::Data<PartnerState>,
    member: Member,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    member.check(&form.csrf, "/partner/webhooks")?;
    match state.console.ping(&member.actor).await {
        Ok(sent) => {
            let flash = match (sent.delivered, sent.status_code) {
                (true, Some(s)) => format!("The ping {} was answered {s}.", sent.id),
                (false, Some(s)) => {
                    format!("The ping {} was answered {s}; it will be retried.", sent.id)
                }
                _ => format!(
                    "The ping {} got no answer; it will be retried. See the delivery log.",
                    sent.id
                ),
            };
            let extra = Extra {
                flash: Some(flash),
                ..Extra::default()
            };
            webhooks_page(&state, &member, StatusCode::OK, None, extra).await
        }
        Err(e) => refused(&state, &member, e, None).await,
    }
}

#[derive(Deserialize)]
struct RotateForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    grace_period_hours: String,
}

/// Rotates the signing secret; the new one is shown once.
#[post("/webhooks/rotate")]
pub(super) async fn rotate(
    state: web::Data<PartnerState>,
    member: Member,
    form: web::Form<RotateForm>,
) -> Result<HttpResponse, PageError> {
    member.check(&form.csrf, "/partner/webhooks")?;
    // Anything but a whole number is out of range (the service says so).
    let grace = form
        .grace_period_hours
        .trim()
        .parse::<u32>()
        .unwrap_or(u32::MAX);
    match state
        .console
        .rotate_secret(&member.actor, Some(grace))
        .await
    {
        Ok(r) => {
            let note = r.previous_expires_at.map_or_else(
                || "The old secret stopped working at once.".to_owned(),
                |t| format!("Deliveries carry both signatures until {}.", when(t)),
            );
            let extra = Extra {
                secret: Some(("The new signing secret".to_owned(), r.secret.clone(), note)),
                ..Extra::default()
            };
            webhooks_page(&state, &member, StatusCode::OK, None, extra).await
        }
        Err(e) => refused(&state, &member, e, None).await,
    }
}

#[derive(Deserialize)]
struct ReplayForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    since: String,
    #[serde(default)]
    until: String,
}

/// A `datetime-local` value (UTC) as Unix seconds.
fn local_time(text: &str) -> Option<i64> {
    let text = text.trim();
    let with_secs = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]");
    let without = format_description!("[year]-[month]-[day]T[hour]:[minute]");
    PrimitiveDateTime::parse(text, with_secs)
        .or_else(|_| PrimitiveDateTime::parse(text, without))
        .ok()
        .map(|t| t.assume_utc().unix_timestamp())
}

/// Replays a window of events.
#[post("/webhooks/replay")]
pub(super) async fn replay(
    state: web::Data<PartnerState>,
    member: Member,
    form: web::Form<ReplayForm>,
) -> Result<HttpResponse, PageError> {
    member.check(&form.csrf, "/partner/webhooks")?;
    let Some(since) = local_time(&form.since) else {
        let extra = Extra {
            error: Some("From: enter a date and time.".to_owned()),
            ..Extra::default()
        };
        return webhooks_page(
            &state,
            &member,
            StatusCode::UNPROCESSABLE_ENTITY,
            None,
            extra,
        )
        .await;
    };
    let until = local_time(&form.until);
    match state
        .console
        .replay(&member.actor, since, until, Vec::new())
        .await
    {
        Ok(count) => {
            let extra = Extra {
                flash: Some(format!(
                    "{count} events scheduled for delivery, oldest first."
                )),
                ..Extra::default()
            };
            webhooks_page(&state, &member, StatusCode::OK, None, extra).await
        }
        Err(e) => refused(&state, &member, e, None).await,
    }
}

/// Resends one event (same `webhook-id`).
#[post("/events/{id}/resend")]
pub(super) async fn resend(
    state: web::Data<PartnerState>,
    member: Member,
    path: web::Path<String>,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    member.check(&form.csrf, "/partner/webhooks")?;
    let id = EventId::parse(&path).map_err(|_| PageError::NotFound)?;
    match state.console.resend(&member.actor, &id).await {
        Ok(()) => {
            let extra = Extra {
                flash: Some(format!(
                    "{id} is being delivered again, with the same webhook-id."
                )),
                ..Extra::default()
            };
            webhooks_page(&state, &member, StatusCode::OK, None, extra).await
        }
        Err(e) => refused(&state, &member, e, None).await,
    }
}

#[derive(Template)]
#[template(path = "partner/events.html")]
struct Events {
    frame: Frame,
    types: Vec<&'static str>,
    type_value: String,
    since_value: String,
    /// (id, created, type).
    events: Vec<(String, String, &'static str)>,
    /// The query of the next page.
    next: Option<String>,
}

#[derive(Deserialize)]
struct EventsQuery {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    since: String,
    cursor: Option<String>,
}

/// The events of the mode shown, newest first, by type and date.
#[get("/events")]
pub(super) async fn events(
    state: web::Data<PartnerState>,
    member: Member,
    query: web::Query<EventsQuery>,
) -> Result<HttpResponse, PageError> {
    let types: Vec<EventType> = EventType::parse(&query.kind).into_iter().collect();
    let since = time::Date::parse(&query.since, format_description!("[year]-[month]-[day]"))
        .ok()
        .map_or(0, |d| d.midnight().assume_utc().unix_timestamp());
    let page = page_of("events", query.cursor.as_deref());
    let found = state
        .console
        .events(&member.actor, since, &types, &page)
        .await?;
    let next = found.next.map(|c| {
        format!(
            "type={}&since={}&cursor={}",
            types.first().map_or("", |t| t.as_str()),
            if since > 0 { query.since.as_str() } else { "" },
            encode_cursor("events", &c)
        )
    });
    let page = Events {
        frame: Frame::of(&member, "Events", "/partner/events"),
        types: EventType::ALL.iter().map(|t| t.as_str()).collect(),
        type_value: types.first().map_or("", |t| t.as_str()).to_owned(),
        since_value: if since > 0 {
            query.since.clone()
        } else {
            String::new()
        },
        events: found
            .items
            .into_iter()
            .map(|e| {
                (
                    e.event.id.to_string(),
                    when(e.event.created_at),
                    e.event.event_type().as_str(),
                )
            })
            .collect(),
        next,
    };
    Ok(render(StatusCode::OK, &page))
}

#[derive(Template)]
#[template(path = "partner/event.html")]
struct EventPage {
    frame: Frame,
    admin: bool,
    id: String,
    kind: &'static str,
    created: String,
    payload: String,
    attempts: Vec<AttemptView>,
}

/// One event: its payload and its delivery attempts.
#[get("/events/{id}")]
pub(super) async fn event(
    state: web::Data<PartnerState>,
    member: Member,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let id = EventId::parse(&path).map_err(|_| PageError::NotFound)?;
    let e = state.console.event(&member.actor, &id).await?;
    let filter = AttemptFilter {
        event_id: Some(id.clone()),
        outcome: None,
    };
    let attempts = state
        .console
        .deliveries(&member.actor, &filter, &page_of("deliveries", None))
        .await?;
    let payload = serde_json::to_string_pretty(&e.event.envelope()).unwrap_or_default();
    let page = EventPage {
        frame: Frame::of(&member, "Event", "/partner/events"),
        admin: member.admin(),
        id: id.to_string(),
        kind: e.event.event_type().as_str(),
        created: when(e.event.created_at),
        payload,
        attempts: attempts.items.into_iter().map(AttemptView::of).collect(),
    };
    Ok(render(StatusCode::OK, &page))
}
