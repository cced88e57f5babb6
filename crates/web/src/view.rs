//! What templates are given: the page chrome, form fields, and the one
//! way a template becomes an answer ([`html`]).

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use askama::Template;

/// What every page's layout shows.
#[derive(Debug, Clone, Default)]
pub struct Chrome {
    /// The page title (and the heading of simple pages).
    pub title: String,
    /// Whether the navigation and the sign-out button show.
    pub signed_in: bool,
    /// The session's CSRF token, for the forms.
    pub csrf: String,
    /// A one-line confirmation after a redirect.
    pub flash: Option<String>,
}

impl Chrome {
    /// The chrome of a page titled `title`.
    #[must_use]
    pub fn new(title: &str, csrf: &str, signed_in: bool) -> Self {
        Self {
            title: title.to_owned(),
            signed_in,
            csrf: csrf.to_owned(),
            flash: None,
        }
    }
}

/// One form field, rendered with its label, hint and message.
#[derive(Debug, Clone, Default)]
pub struct Field {
    /// The input's `name` and `id`.
    pub name: &'static str,
    /// The visible label.
    pub label: &'static str,
    /// `text`, `email`, `password`, `number`, `tel`, `select` or
    /// `checkbox`.
    pub kind: &'static str,
    /// The value to show (the submitted one after an error).
    pub value: String,
    /// The field's message after a refused submission.
    pub error: Option<String>,
    /// A hint under the label.
    pub hint: Option<&'static str>,
    /// `autocomplete`.
    pub autocomplete: Option<&'static str>,
    /// The choices of a `select`: (value, label).
    pub options: Vec<(&'static str, &'static str)>,
    /// `required`.
    pub required: bool,
}

impl Field {
    /// A required field of `kind`.
    #[must_use]
    pub fn new(name: &'static str, label: &'static str, kind: &'static str, value: &str) -> Self {
        Self {
            name,
            label,
            kind,
            value: value.to_owned(),
            required: true,
            ..Self::default()
        }
    }

    /// Not required.
    #[must_use]
    pub fn optional(mut self) -> Self {
        self.required = false;
        self
    }

    /// With a hint.
    #[must_use]
    pub const fn hint(mut self, hint: &'static str) -> Self {
        self.hint = Some(hint);
        self
    }

    /// With an `autocomplete` token.
    #[must_use]
    pub const fn autocomplete(mut self, token: &'static str) -> Self {
        self.autocomplete = Some(token);
        self
    }

    /// A `select` of `options`.
    #[must_use]
    pub fn select(mut self, options: &[(&'static str, &'static str)]) -> Self {
        self.kind = "select";
        self.options = options.to_vec();
        self
    }
}

/// Puts each refused field's message on its field; returns the messages
/// no field shows.
pub fn place_errors(fields: &mut [Field], errors: &[domain::error::FieldError]) -> Vec<String> {
    let mut rest = Vec::new();
    for e in errors {
        // `address.zip` is shown on the `zip` field.
        let name = e.field.rsplit('.').next().unwrap_or(&e.field);
        match fields
            .iter_mut()
            .find(|f| f.name == name || f.name == e.field)
        {
            Some(f) if f.error.is_none() => f.error = Some(format!("{} {}", f.label, e.message)),
            Some(_) => {}
            None => rest.push(format!("{}: {}", e.field, e.message)),
        }
    }
    rest
}

/// One form of a step page.
#[derive(Debug, Clone, Default)]
pub struct FormView {
    /// Its heading.
    pub heading: &'static str,
    /// Where it posts.
    pub action: String,
    /// The button.
    pub submit: &'static str,
    /// Its fields.
    pub fields: Vec<Field>,
}

/// A message as a sentence: capitalized, with a full stop.
#[must_use]
pub fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    let mut out: String = chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default();
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}

/// The answer for a rendered template.
#[must_use]
pub fn html(status: StatusCode, page: &impl Template) -> HttpResponse {
    match page.render() {
        Ok(body) => HttpResponse::build(status)
            .content_type("text/html; charset=utf-8")
            .body(body),
        Err(e) => {
            tracing::error!(error = %e, "a portal template failed to render");
            HttpResponse::InternalServerError()
                .content_type("text/html; charset=utf-8")
                .body("<!doctype html><title>Error</title><p>The page could not be shown.</p>")
        }
    }
}

/// A page of a heading, paragraphs and a link.
#[derive(Template)]
#[template(path = "message.html")]
pub struct Message {
    /// Layout.
    pub chrome: Chrome,
    /// What the page says.
    pub paragraphs: Vec<String>,
    /// (href, text).
    pub link: Option<(String, String)>,
}
