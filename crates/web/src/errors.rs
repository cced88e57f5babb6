//! How a portal request ends when it cannot show its page: a redirect
//! (to sign-in, or after a form), or an HTML error page — never the JSON
//! envelope of the API.

use std::fmt;

use actix_web::http::StatusCode;
use actix_web::http::header::LOCATION;
use actix_web::{HttpResponse, ResponseError};
use domain::services::ServiceError;

use crate::view::{Chrome, Message, html};

/// Why a portal request did not render its page.
#[derive(Debug)]
pub enum PageError {
    /// Go elsewhere (303).
    Redirect(String),
    /// A page that is not there (404).
    NotFound,
    /// The service failed; nothing was saved (500, or 503 when the
    /// database is away).
    Failed(ServiceError),
}

impl fmt::Display for PageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Redirect(to) => write!(f, "redirect to {to}"),
            Self::NotFound => f.write_str("not found"),
            Self::Failed(e) => write!(f, "{e}"),
        }
    }
}

impl From<ServiceError> for PageError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::NotFound => Self::NotFound,
            e => Self::Failed(e),
        }
    }
}

impl ResponseError for PageError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::Redirect(_) => StatusCode::SEE_OTHER,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::Failed(ServiceError::Unavailable(_)) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Failed(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let (title, text) = match self {
            Self::Redirect(to) => {
                return HttpResponse::SeeOther()
                    .insert_header((LOCATION, to.as_str()))
                    .finish();
            }
            Self::NotFound => (
                "Page not found",
                "There is no such page in the employer portal.",
            ),
            Self::Failed(e) => {
                tracing::error!(error = %e, "a portal page failed");
                (
                    "Something went wrong",
                    "The page could not be shown and nothing was saved. Please try again in a moment.",
                )
            }
        };
        html(
            self.status_code(),
            &Message {
                chrome: Chrome::new(title, "", false),
                paragraphs: vec![text.to_owned()],
                link: Some((
                    "/portal/dashboard".to_owned(),
                    "Go to the dashboard".to_owned(),
                )),
            },
        )
    }
}
