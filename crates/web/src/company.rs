//! The signed-in admin's own company: the dashboard (progress, the
//! checklist, the company state, the quote's headline figures) and the
//! read-only roster. The company is the session account's enrollment.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, get, web};
use askama::Template;
use domain::member::InvitationStatus;
use domain::onboarding::{StepData, StepId, StepStatus};
use serde::Deserialize;

use crate::PortalState;
use crate::errors::PageError;
use crate::session::Admin;
use crate::view::{Chrome, html};

/// A step's URL segment (`company-profile`).
#[must_use]
pub fn slug(step: StepId) -> String {
    step.as_str().replace('_', "-")
}

/// What a person reads for a step status.
#[must_use]
pub const fn status_label(status: StepStatus) -> &'static str {
    match status {
        StepStatus::NotStarted => "Not started",
        StepStatus::InProgress => "In progress",
        StepStatus::Pending => "Pending",
        StepStatus::ActionRequired => "Action required",
        StepStatus::Completed => "Completed",
    }
}

/// Cents as dollars (`$1,234.56`).
#[must_use]
pub fn money(cents: i64) -> String {
    domain::text::dollars(cents)
}

struct StepRow {
    slug: String,
    title: &'static str,
    required: bool,
    status: &'static str,
    status_label: &'static str,
}

#[derive(Template)]
#[template(path = "dashboard.html")]
struct Dashboard {
    chrome: Chrome,
    company: String,
    percent: u32,
    remaining: String,
    company_state: &'static str,
    status: &'static str,
    steps: Vec<StepRow>,
    quote: Vec<(String, String)>,
}

#[derive(Deserialize)]
struct DashboardFlags {
    saved: Option<String>,
    welcome: Option<String>,
}

/// The dashboard.
#[get("/dashboard")]
pub(crate) async fn dashboard(
    state: web::Data<PortalState>,
    admin: Admin,
    flags: web::Query<DashboardFlags>,
) -> Result<HttpResponse, PageError> {
    let a = &admin.account;
    let (view, quote) = state
        .onboarding
        .overview(&a.scope, &a.enrollment_id)
        .await?;
    let mut chrome = Chrome::new("Dashboard", &admin.csrf, true);
    chrome.flash = if flags.welcome.is_some() {
        Some("Your password is set. Welcome to the employer portal.".to_owned())
    } else {
        flags
            .saved
            .as_deref()
            .and_then(StepId::parse)
            .map(|s| format!("{} saved.", s.title()))
    };
    let company = view
        .enrollment
        .onboarding
        .company_profile
        .data
        .as_ref()
        .and_then(|p| p.legal_name.clone())
        .unwrap_or_else(|| view.group.company_name.clone());
    let remaining = match view.progress.blocking_remaining {
        0 => "Every required step is completed.".to_owned(),
        1 => "1 required step remains.".to_owned(),
        n => format!("{n} required steps remain."),
    };
    let mut figures = Vec::new();
    if let Some(m) = quote.body.market() {
        figures.push(("Plan".to_owned(), m.plan.name.clone()));
        figures.push(("Monthly total".to_owned(), money(m.monthly.total_cents)));
        figures.push((
            "Per employee per month".to_owned(),
            money(m.monthly.pepm_cents),
        ));
        figures.push(("Annual total".to_owned(), money(m.annual.total_cents)));
        figures.push((
            "Employer contribution".to_owned(),
            format!("{}%", m.employee_contribution.employer_contribution_pct),
        ));
        figures.push(("Employees".to_owned(), m.census.employees.to_string()));
        figures.push((
            "Coverage starts".to_owned(),
            view.enrollment.body.start_date.clone(),
        ));
    }
    let page = Dashboard {
        chrome,
        company,
        percent: view.progress.percent_complete,
        remaining,
        company_state: view.group.company_state.map_or("sandbox", |s| s.as_str()),
        status: view.status.as_str(),
        steps: view
            .steps
            .iter()
            .map(|s| StepRow {
                slug: slug(s.id),
                title: s.title,
                required: s.required,
                status: s.status.as_str(),
                status_label: status_label(s.status),
            })
            .collect(),
        quote: figures,
    };
    Ok(html(StatusCode::OK, &page))
}

#[derive(Template)]
#[template(path = "roster.html")]
struct Roster {
    chrome: Chrome,
    summary: String,
    rows: Vec<(String, String, String, String)>,
}

/// The roster: the census's employees and their invitation status.
#[get("/roster")]
pub(crate) async fn roster(
    state: web::Data<PortalState>,
    admin: Admin,
) -> Result<HttpResponse, PageError> {
    let a = &admin.account;
    let (view, members) = state.onboarding.roster(&a.scope, &a.enrollment_id).await?;
    let invitations = view.steps.iter().find_map(|s| match &s.data {
        Some(StepData::EmployeeInvitations {
            suppressed,
            sent_at,
            ..
        }) => Some((*suppressed, sent_at.clone())),
        _ => None,
    });
    let (summary, invited) = match &invitations {
        None => (
            "Invitations have not been sent yet: send them from the Employee invitations step once the plan is set up.".to_owned(),
            "Not sent",
        ),
        Some((true, at)) => (
            format!("Invitations were recorded on {at}; test mode sends no email."),
            "Recorded (test mode)",
        ),
        Some((false, at)) => (format!("Invitations were sent on {at}."), "Sent"),
    };
    let rows = members
        .iter()
        .map(|m| {
            let name = [&m.member.first_name, &m.member.last_name]
                .into_iter()
                .flatten()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(" ");
            let invitation = match m.state.invitation {
                InvitationStatus::Sent => "Sent",
                InvitationStatus::Suppressed => "Recorded (test mode)",
                InvitationStatus::NotSent => invited,
            };
            (
                name,
                m.member.external_id.clone().unwrap_or_default(),
                m.state.enrollment.as_str().replace('_', " "),
                invitation.to_owned(),
            )
        })
        .collect();
    let page = Roster {
        chrome: Chrome::new("Roster", &admin.csrf, true),
        summary,
        rows,
    };
    Ok(html(StatusCode::OK, &page))
}
