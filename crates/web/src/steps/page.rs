//! A step page from the onboarding view: what is saved, the step's
//! verifier errors, and the forms the step's status allows — filled with
//! the saved values, or with a refused submission and its messages.

use askama::Template;
use domain::error::FieldError;
use domain::group::CompanyState;
use domain::onboarding::documents::PlanDocument;
use domain::onboarding::{StepData, StepId, StepStatus, StepView};
use domain::services::onboarding::OnboardingView;

use crate::company::status_label;
use crate::view::{Chrome, Field, FormView, place_errors};

/// A refused submission: which form, what was typed, and why.
#[derive(Debug, Clone, Default)]
pub struct Submitted {
    form: &'static str,
    values: Vec<(&'static str, String)>,
    errors: Vec<FieldError>,
    notice: Option<String>,
}

impl Submitted {
    /// The values typed into `form`.
    #[must_use]
    pub fn values(form: &'static str, values: &[(&'static str, &str)]) -> Self {
        Self {
            form,
            values: values.iter().map(|(k, v)| (*k, (*v).to_owned())).collect(),
            ..Self::default()
        }
    }

    /// With the fields' messages.
    #[must_use]
    pub fn with_errors(mut self, errors: Vec<FieldError>) -> Self {
        self.errors = errors;
        self
    }

    /// With a message about the whole step.
    #[must_use]
    pub fn with_notice(mut self, notice: String) -> Self {
        self.notice = Some(notice);
        self
    }
}

/// The step page.
#[derive(Template)]
#[template(path = "step.html")]
pub struct StepPage {
    chrome: Chrome,
    status: &'static str,
    status_label: &'static str,
    intro: Vec<String>,
    notice: Option<String>,
    errors: Vec<String>,
    saved: Vec<(String, String)>,
    documents: Vec<(String, String)>,
    forms: Vec<FormView>,
}

const ENTITY_TYPES: &[(&str, &str)] = &[
    ("", "Choose one"),
    ("c_corporation", "C corporation"),
    ("s_corporation", "S corporation"),
    ("llc", "LLC"),
    ("partnership", "Partnership"),
    ("sole_proprietorship", "Sole proprietorship"),
    ("nonprofit", "Nonprofit"),
];
const ACCOUNT_TYPES: &[(&str, &str)] = &[("checking", "Checking"), ("savings", "Savings")];
const PLANS: &[(&str, &str)] = &[("diamond", "Diamond"), ("value", "Value")];
const WAITING_PERIODS: &[(&str, &str)] = &[
    ("first_of_month_after_hire", "First of the month after hire"),
    ("none", "None"),
    ("30_days", "30 days"),
    ("60_days", "60 days"),
];

fn label_of(options: &[(&str, &'static str)], value: &str) -> String {
    options
        .iter()
        .find(|(v, _)| *v == value)
        .map_or_else(|| value.to_owned(), |(_, l)| (*l).to_owned())
}

fn fact(label: &str, value: impl Into<String>) -> (String, String) {
    (label.to_owned(), value.into())
}

/// Builds the forms of a step and places a refused submission on its form.
struct Forms<'a> {
    submitted: Option<&'a Submitted>,
    forms: Vec<FormView>,
    rest: Vec<String>,
}

impl Forms<'_> {
    fn add(&mut self, key: &'static str, mut form: FormView) {
        if let Some(s) = self.submitted.filter(|s| s.form == key) {
            for f in &mut form.fields {
                if let Some((_, v)) = s.values.iter().find(|(k, _)| *k == f.name) {
                    f.value.clone_from(v);
                }
            }
            self.rest.extend(place_errors(&mut form.fields, &s.errors));
        }
        self.forms.push(form);
    }
}

fn profile_form(data: Option<&StepData>) -> FormView {
    let (mut legal, mut ein, mut kind, mut phone, mut title) = (
        String::new(),
        String::new(),
        "",
        String::new(),
        String::new(),
    );
    let (mut line1, mut line2, mut city, mut state, mut zip) = Default::default();
    if let Some(StepData::CompanyProfile {
        legal_name,
        ein: e,
        entity_type,
        address,
        phone: p,
        signatory_title,
    }) = data
    {
        legal = legal_name.clone().unwrap_or_default();
        ein = e.clone().unwrap_or_default();
        kind = entity_type.unwrap_or_default();
        phone = p.clone().unwrap_or_default();
        title = signatory_title.clone().unwrap_or_default();
        if let Some(a) = address {
            (line1, city, state, zip) = (
                a.line1.clone(),
                a.city.clone(),
                a.state.clone(),
                a.zip.clone(),
            );
            line2 = a.line2.clone().unwrap_or_default();
        }
    }
    FormView {
        heading: "Company details",
        action: "/portal/steps/company-profile".to_owned(),
        submit: "Save company profile",
        fields: vec![
            Field::new("legal_name", "Legal name", "text", &legal).autocomplete("organization"),
            Field::new("ein", "EIN", "text", &ein)
                .hint("9 digits, written NN-NNNNNNN or without the dash."),
            Field::new("entity_type", "Entity type", "select", kind).select(ENTITY_TYPES),
            Field::new("line1", "Street address", "text", &line1).autocomplete("address-line1"),
            Field::new("line2", "Suite or unit (optional)", "text", &line2)
                .optional()
                .autocomplete("address-line2"),
            Field::new("city", "City", "text", &city).autocomplete("address-level2"),
            Field::new("state", "State", "text", &state)
                .hint("2 letters, like IL.")
                .autocomplete("address-level1"),
            Field::new("zip", "ZIP code", "text", &zip)
                .hint("5 digits.")
                .autocomplete("postal-code"),
            Field::new("phone", "Phone", "tel", &phone)
                .hint("A US number of 10 digits.")
                .autocomplete("tel"),
            Field::new("signatory_title", "Your title", "text", &title)
                .autocomplete("organization-title"),
        ],
    }
}

fn bank_form(heading: &'static str) -> FormView {
    FormView {
        heading,
        action: "/portal/steps/banking/account".to_owned(),
        submit: "Save bank account",
        fields: vec![
            Field::new("routing_number", "Routing number", "text", "").hint("9 digits."),
            Field::new("account_number", "Account number", "text", "")
                .hint("4 to 17 digits. It is stored encrypted and never shown again.")
                .autocomplete("off"),
            Field::new("account_type", "Account type", "select", "checking").select(ACCOUNT_TYPES),
            Field::new("holder_name", "Account holder", "text", "").autocomplete("organization"),
        ],
    }
}

fn plan_form(data: Option<&StepData>) -> FormView {
    let (plan, pct, wait, hours) = match data {
        Some(StepData::PlanSetup {
            plan_id,
            employer_contribution_pct,
            waiting_period,
            min_hours_per_week,
            ..
        }) => (
            *plan_id,
            employer_contribution_pct.to_string(),
            *waiting_period,
            min_hours_per_week.to_string(),
        ),
        _ => (
            "diamond",
            String::new(),
            "first_of_month_after_hire",
            "30".to_owned(),
        ),
    };
    FormView {
        heading: "Plan choices",
        action: "/portal/steps/plan-setup/choices".to_owned(),
        submit: "Save plan choices",
        fields: vec![
            Field::new("plan_id", "Plan", "select", plan).select(PLANS),
            Field::new(
                "employer_contribution_pct",
                "Employer contribution, percent",
                "number",
                &pct,
            )
            .optional()
            .hint("0 to 100. Leave empty to keep your quote's."),
            Field::new("waiting_period", "Waiting period", "select", wait).select(WAITING_PERIODS),
            Field::new(
                "min_hours_per_week",
                "Minimum hours per week",
                "number",
                &hours,
            )
            .hint("20 to 40."),
        ],
    }
}

fn step_of(view: &OnboardingView, id: StepId) -> StepView {
    view.enrollment.onboarding.step(id)
}

impl StepPage {
    /// Adds a flash line.
    pub fn flash(&mut self, text: &str) {
        self.chrome.flash = Some(text.to_owned());
    }
}

/// The page of `id`.
#[must_use]
pub fn step_page(
    view: &OnboardingView,
    id: StepId,
    csrf: &str,
    documents: &[PlanDocument],
    submitted: Option<Submitted>,
) -> StepPage {
    let step = step_of(view, id);
    let refusal = submitted.as_ref().and_then(|s| s.notice.clone());
    let mut forms = Forms {
        submitted: submitted.as_ref(),
        forms: Vec::new(),
        rest: Vec::new(),
    };
    let mut intro = Vec::new();
    let mut notice = None;
    let mut saved = Vec::new();
    let mut docs = Vec::new();
    let live = view.group.company_state == Some(CompanyState::Prod);
    let blocked = view.enrollment.onboarding.blocked_by(id);
    if let Some(needs) = blocked {
        notice = Some(format!(
            "This step opens once {} is completed.",
            needs.title()
        ));
    } else if live && id.required() {
        notice = Some("Your company is live, so this step is closed.".to_owned());
    }
    let open = blocked.is_none() && !(live && id.required());
    match id {
        StepId::CompanyProfile => {
            intro.push(
                "Tell us about your company. We verify these details in the next step.".to_owned(),
            );
            if open {
                forms.add("profile", profile_form(step.data.as_ref()));
            }
        }
        StepId::BusinessVerification => {
            intro.push(
                "We check that your EIN matches the legal name in your company profile.".to_owned(),
            );
            if let Some(StepData::BusinessVerification {
                ein,
                legal_name,
                requested_at,
            }) = &step.data
            {
                saved = vec![
                    fact("Legal name", legal_name.clone()),
                    fact("EIN", ein.clone()),
                    fact("Asked", requested_at.clone()),
                ];
            }
            match step.status {
                StepStatus::Pending => {
                    notice.get_or_insert_with(|| "We are verifying your business. Refresh this page in a minute to see the answer.".to_owned());
                }
                StepStatus::Completed => {
                    notice.get_or_insert_with(|| "Your business is verified.".to_owned());
                }
                _ if open => forms.add(
                    "verify",
                    FormView {
                        heading: "Verify",
                        action: "/portal/steps/business-verification".to_owned(),
                        submit: "Verify my business",
                        fields: Vec::new(),
                    },
                ),
                _ => {}
            }
        }
        StepId::Banking => {
            intro.push(
                "Your plan is funded from this account. We confirm it with two small deposits."
                    .to_owned(),
            );
            if let Some(StepData::Banking {
                routing_number,
                last4,
                account_type,
                holder_name,
            }) = &step.data
            {
                saved = vec![
                    fact("Account holder", holder_name.clone()),
                    fact("Routing number", routing_number.clone()),
                    fact(
                        "Account",
                        format!(
                            "{} ending in {last4}",
                            label_of(ACCOUNT_TYPES, account_type)
                        ),
                    ),
                ];
                if step.status == StepStatus::Pending && open {
                    intro.push(format!(
                        "We sent two deposits of less than $1 to the account ending in {last4}. Enter the two amounts, in cents. Test mode always sends 32 and 45 cents."
                    ));
                    forms.add(
                        "deposits",
                        FormView {
                            heading: "Confirm the deposits",
                            action: "/portal/steps/banking/deposits".to_owned(),
                            submit: "Confirm deposits",
                            fields: vec![
                                Field::new("first_amount", "First deposit, in cents", "number", ""),
                                Field::new(
                                    "second_amount",
                                    "Second deposit, in cents",
                                    "number",
                                    "",
                                ),
                            ],
                        },
                    );
                }
            }
            if open {
                let heading = if step.data.is_some() {
                    "Use another account"
                } else {
                    "Bank account"
                };
                forms.add("bank", bank_form(heading));
            }
        }
        StepId::PlanSetup => {
            intro.push(
                "Choose how the plan works for your employees, then sign the plan documents."
                    .to_owned(),
            );
            let signed = match &step.data {
                Some(StepData::PlanSetup {
                    plan_id,
                    employer_contribution_pct,
                    waiting_period,
                    min_hours_per_week,
                    signed_by,
                    signed_at,
                }) => {
                    saved = vec![
                        fact("Plan", label_of(PLANS, plan_id)),
                        fact(
                            "Employer contribution",
                            format!("{employer_contribution_pct}%"),
                        ),
                        fact("Waiting period", label_of(WAITING_PERIODS, waiting_period)),
                        fact("Minimum hours per week", min_hours_per_week.to_string()),
                    ];
                    if let (Some(by), Some(at)) = (signed_by, signed_at) {
                        saved.push(fact("Signed", format!("by {by} on {at}")));
                        true
                    } else {
                        false
                    }
                }
                _ => false,
            };
            if open {
                forms.add("plan", plan_form(step.data.as_ref()));
                if !documents.is_empty() && !signed {
                    docs = documents
                        .iter()
                        .map(|d| (d.title.to_owned(), d.text.clone()))
                        .collect();
                    let name = view
                        .enrollment
                        .body
                        .signatory
                        .as_ref()
                        .map(|s| s.name.clone())
                        .unwrap_or_default();
                    let mut sign = FormView {
                        heading: "Sign the plan documents",
                        action: "/portal/steps/plan-setup/sign".to_owned(),
                        submit: "Sign",
                        fields: vec![
                            Field::new("signer_name", "Your full name", "text", "")
                                .autocomplete("name"),
                            Field::new(
                                "accepted",
                                "I have read and accept the plan summary, the service agreement and the privacy notice.",
                                "checkbox",
                                "",
                            ),
                        ],
                    };
                    if !name.is_empty() {
                        if let Some(f) = sign.fields.first_mut() {
                            f.hint = Some("Type the signatory's name as the enrollment names it.");
                        }
                        intro.push(format!("The signatory is {name}."));
                    }
                    forms.add("sign", sign);
                }
            }
        }
        StepId::EmployeeInvitations => {
            intro.push("We invite each employee on the roster to enroll. Test mode sends no email and records the invitations.".to_owned());
            if let Some(StepData::EmployeeInvitations {
                sent_at,
                suppressed,
                count,
            }) = &step.data
            {
                saved = vec![
                    fact("When", sent_at.clone()),
                    fact("Employees", count.to_string()),
                    fact(
                        "Email",
                        if *suppressed {
                            "Not sent (test mode)"
                        } else {
                            "Sent"
                        },
                    ),
                ];
            } else if open {
                forms.add(
                    "invite",
                    FormView {
                        heading: "Invite your employees",
                        action: "/portal/steps/employee-invitations".to_owned(),
                        submit: "Send invitations",
                        fields: Vec::new(),
                    },
                );
            }
        }
    }
    let mut errors: Vec<String> = step.errors.iter().map(|e| e.message.clone()).collect();
    errors.extend(forms.rest);
    if let Some(n) = refusal {
        notice = Some(n);
    }
    StepPage {
        chrome: Chrome::new(step.title, csrf, true),
        status: step.status.as_str(),
        status_label: status_label(step.status),
        intro,
        notice,
        errors,
        saved,
        documents: docs,
        forms: forms.forms,
    }
}
