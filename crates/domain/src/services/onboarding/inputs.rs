//! The bodies of the step changes as the adapters parsed them, and their
//! validation into the checklist's stored values: every bad field named
//! at once, in the snake_case paths the API uses.

use pricing_core::VersionId;

use crate::error::FieldError;
use crate::onboarding::fields::{
    self, AccountType, AddressInput, EntityType, WaitingPeriod, account_number, contribution,
    min_hours, phone, routing_number, text,
};
use crate::onboarding::{CompanyProfile, PlanChoices};

/// The company profile as sent; a field left out stays missing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProfileInput {
    /// Legal name.
    pub legal_name: Option<String>,
    /// `NN-NNNNNNN` or 9 digits.
    pub ein: Option<String>,
    /// An entity type.
    pub entity_type: Option<String>,
    /// The address.
    pub address: Option<AddressInput>,
    /// A US phone number.
    pub phone: Option<String>,
    /// The signatory's title.
    pub signatory_title: Option<String>,
}

/// A bank account as sent; every field is required.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct BankInput {
    /// ABA routing number.
    pub routing_number: Option<String>,
    /// 4 to 17 digits.
    pub account_number: Option<String>,
    /// `checking` or `savings`.
    pub account_type: Option<String>,
    /// The account holder.
    pub holder_name: Option<String>,
}

impl std::fmt::Debug for BankInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BankInput")
            .field("routing_number", &self.routing_number)
            .field("account_number", &"[redacted]")
            .field("account_type", &self.account_type)
            .field("holder_name", &self.holder_name)
            .finish()
    }
}

/// A bank account that passed the field rules.
pub(super) struct ValidBank {
    pub routing_number: String,
    pub account_number: String,
    pub account_type: AccountType,
    pub holder_name: String,
}

/// Plan choices as sent; a field left out takes its default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanInput {
    /// `diamond` or `value`; default the quote's.
    pub plan_id: Option<String>,
    /// 0 to 100; default the quote's.
    pub employer_contribution_pct: Option<i64>,
    /// Default `first_of_month_after_hire`.
    pub waiting_period: Option<String>,
    /// 20 to 40; default 30.
    pub min_hours_per_week: Option<i64>,
}

/// The signatory's signature as sent, with where it came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SignInput {
    /// The full name typed.
    pub signer_name: Option<String>,
    /// Whether the documents were accepted.
    pub accepted: Option<bool>,
    /// The signer's IP address.
    pub ip: Option<String>,
    /// The signer's browser.
    pub user_agent: Option<String>,
}

fn required(field: &str, errors: &mut Vec<FieldError>) {
    errors.push(FieldError::new(field, "is required"));
}

/// Keeps a parsed value or records its error.
fn keep<T>(result: Result<T, FieldError>, errors: &mut Vec<FieldError>) -> Option<T> {
    result.map_err(|e| errors.push(e)).ok()
}

impl ProfileInput {
    /// The profile to save.
    ///
    /// # Errors
    /// Every invalid field sent.
    pub fn validate(&self) -> Result<CompanyProfile, Vec<FieldError>> {
        let mut errors = Vec::new();
        let legal_name = self
            .legal_name
            .as_deref()
            .and_then(|v| keep(text("legal_name", v, 200), &mut errors));
        let ein = self
            .ein
            .as_deref()
            .and_then(|v| keep(fields::ein("ein", v), &mut errors));
        let entity_type = self
            .entity_type
            .as_deref()
            .and_then(|v| keep(EntityType::parse("entity_type", v), &mut errors));
        let address = match self.address.as_ref().map(fields::address) {
            None => None,
            Some(Ok(address)) => address,
            Some(Err(bad)) => {
                errors.extend(bad);
                None
            }
        };
        let phone = self
            .phone
            .as_deref()
            .and_then(|v| keep(phone("phone", v), &mut errors));
        let signatory_title = self
            .signatory_title
            .as_deref()
            .and_then(|v| keep(text("signatory_title", v, 100), &mut errors));
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(CompanyProfile {
            legal_name,
            ein,
            entity_type,
            address,
            phone,
            signatory_title,
        })
    }
}

impl BankInput {
    /// The account to save.
    ///
    /// # Errors
    /// Every missing or invalid field.
    pub(super) fn validate(&self) -> Result<ValidBank, Vec<FieldError>> {
        fn check<T>(
            name: &str,
            value: Option<&str>,
            rule: impl Fn(&str, &str) -> Result<T, FieldError>,
            errors: &mut Vec<FieldError>,
        ) -> Option<T> {
            match value {
                None => {
                    required(name, errors);
                    None
                }
                Some(v) => keep(rule(name, v), errors),
            }
        }
        let mut errors = Vec::new();
        let e = &mut errors;
        let routing = check(
            "routing_number",
            self.routing_number.as_deref(),
            routing_number,
            e,
        );
        let account = check(
            "account_number",
            self.account_number.as_deref(),
            account_number,
            e,
        );
        let kind = check(
            "account_type",
            self.account_type.as_deref(),
            AccountType::parse,
            e,
        );
        let holder = check(
            "holder_name",
            self.holder_name.as_deref(),
            |n, v| text(n, v, 100),
            e,
        );
        match (routing, account, kind, holder) {
            (Some(routing_number), Some(account_number), Some(account_type), Some(holder_name)) => {
                Ok(ValidBank {
                    routing_number,
                    account_number,
                    account_type,
                    holder_name,
                })
            }
            _ => Err(errors),
        }
    }
}

impl PlanInput {
    /// The choices to save, defaults taken from the quote enrolled on.
    ///
    /// # Errors
    /// Every invalid field.
    pub fn validate(
        &self,
        quote_plan: VersionId,
        quote_contribution: u32,
    ) -> Result<PlanChoices, Vec<FieldError>> {
        let mut errors = Vec::new();
        let plan_id = match self.plan_id.as_deref() {
            None => Some(quote_plan),
            Some("diamond") => Some(VersionId::Diamond),
            Some("value") => Some(VersionId::Value),
            Some(_) => {
                errors.push(FieldError::new("plan_id", "must be diamond or value"));
                None
            }
        };
        let pct = match self.employer_contribution_pct {
            None => Some(quote_contribution),
            Some(p) => keep(contribution("employer_contribution_pct", p), &mut errors),
        };
        let waiting = match self.waiting_period.as_deref() {
            None => Some(WaitingPeriod::FirstOfMonthAfterHire),
            Some(w) => keep(WaitingPeriod::parse("waiting_period", w), &mut errors),
        };
        let hours = match self.min_hours_per_week {
            None => Some(30),
            Some(h) => keep(min_hours("min_hours_per_week", h), &mut errors),
        };
        match (plan_id, pct, waiting, hours) {
            (Some(plan_id), Some(pct), Some(waiting_period), Some(min_hours_per_week)) => {
                Ok(PlanChoices {
                    plan_id,
                    employer_contribution_pct: pct,
                    waiting_period,
                    min_hours_per_week,
                    signature: None,
                })
            }
            _ => Err(errors),
        }
    }
}

impl SignInput {
    /// Checks the signature against the enrollment's signatory name.
    ///
    /// # Errors
    /// `signer_name` not the signatory's, `accepted` not true.
    pub fn validate(&self, signatory: &str) -> Result<String, Vec<FieldError>> {
        let mut errors = Vec::new();
        let name = match self.signer_name.as_deref().map(str::trim) {
            None | Some("") => {
                required("signer_name", &mut errors);
                None
            }
            Some(n) if fields::same_name(n, signatory) => Some(n.to_owned()),
            Some(_) => {
                errors.push(FieldError::new(
                    "signer_name",
                    "must be the signatory's full name as given on the enrollment",
                ));
                None
            }
        };
        if self.accepted != Some(true) {
            errors.push(FieldError::new(
                "accepted",
                "must be true to sign the plan documents",
            ));
        }
        match name {
            Some(n) if errors.is_empty() => Ok(n),
            _ => Err(errors),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(errors: Vec<FieldError>) -> Vec<String> {
        errors.into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn a_profile_names_every_bad_field_and_keeps_what_was_left_out_missing() {
        let bad = ProfileInput {
            legal_name: Some(" ".into()),
            ein: Some("00-1234567".into()),
            entity_type: Some("corp".into()),
            address: Some(AddressInput {
                zip: Some("1".into()),
                ..AddressInput::default()
            }),
            phone: Some("555".into()),
            signatory_title: None,
        };
        assert_eq!(
            names(bad.validate().unwrap_err()),
            ["legal_name", "ein", "entity_type", "address.zip", "phone"]
        );
        let partial = ProfileInput {
            legal_name: Some("Acme LLC".into()),
            ..ProfileInput::default()
        };
        let saved = partial.validate().unwrap();
        assert_eq!(
            saved.missing(),
            ["ein", "entity_type", "address", "phone", "signatory_title"]
        );
    }

    #[test]
    fn a_bank_account_needs_every_field_and_its_debug_hides_the_number() {
        let empty = BankInput::default();
        assert_eq!(
            names(empty.validate().map(|_| ()).unwrap_err()),
            [
                "routing_number",
                "account_number",
                "account_type",
                "holder_name"
            ]
        );
        let input = BankInput {
            routing_number: Some("011000015".into()),
            account_number: Some("000123456789".into()),
            account_type: Some("checking".into()),
            holder_name: Some("Acme LLC".into()),
        };
        let ok = input.validate().map_err(names).unwrap();
        assert_eq!(ok.account_number, "000123456789");
        assert!(!format!("{input:?}").contains("123456789"));
    }

    #[test]
    fn plan_choices_default_to_the_quote_and_the_rules() {
        let c = PlanInput::default().validate(VersionId::Value, 75).unwrap();
        assert_eq!(
            (
                c.plan_id,
                c.employer_contribution_pct,
                c.waiting_period,
                c.min_hours_per_week
            ),
            (
                VersionId::Value,
                75,
                WaitingPeriod::FirstOfMonthAfterHire,
                30
            )
        );
        let bad = PlanInput {
            plan_id: Some("gold".into()),
            employer_contribution_pct: Some(101),
            waiting_period: Some("90_days".into()),
            min_hours_per_week: Some(10),
        };
        assert_eq!(
            names(bad.validate(VersionId::Diamond, 100).unwrap_err()),
            [
                "plan_id",
                "employer_contribution_pct",
                "waiting_period",
                "min_hours_per_week"
            ]
        );
    }

    #[test]
    fn a_signature_is_the_signatory_accepting() {
        let ok = SignInput {
            signer_name: Some("dana  kim".into()),
            accepted: Some(true),
            ..SignInput::default()
        };
        assert_eq!(ok.validate("Dana Kim").unwrap(), "dana  kim");
        let bad = SignInput {
            signer_name: Some("Someone Else".into()),
            accepted: Some(false),
            ..SignInput::default()
        };
        assert_eq!(
            names(bad.validate("Dana Kim").unwrap_err()),
            ["signer_name", "accepted"]
        );
    }
}
