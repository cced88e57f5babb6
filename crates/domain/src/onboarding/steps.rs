//! What each step stores, and the transitions of the checklist. A
//! transition assumes the onboarding service already checked that it may
//! run (prerequisites, a live company's closed steps); it changes the
//! step's state and, where a rule says so, the steps after it.

use pricing_core::VersionId;
use serde::{Deserialize, Serialize};

use super::fields::{AccountType, EntityType, StreetAddress, WaitingPeriod};
use super::{Checklist, StepError, StepStatus};

/// Wrong micro-deposit answers before the account must be entered again.
pub const DEPOSIT_ATTEMPTS: u32 = 3;

/// The saved company profile; a field not yet sent is `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompanyProfile {
    /// Legal name.
    pub legal_name: Option<String>,
    /// EIN, 9 digits.
    pub ein: Option<String>,
    /// Legal form.
    pub entity_type: Option<EntityType>,
    /// Street address.
    pub address: Option<StreetAddress>,
    /// Phone, E.164.
    pub phone: Option<String>,
    /// The signatory's title.
    pub signatory_title: Option<String>,
}

impl CompanyProfile {
    /// The top-level fields still missing, in the specification's order.
    #[must_use]
    pub fn missing(&self) -> Vec<&'static str> {
        [
            ("legal_name", self.legal_name.is_none()),
            ("ein", self.ein.is_none()),
            ("entity_type", self.entity_type.is_none()),
            ("address", self.address.is_none()),
            ("phone", self.phone.is_none()),
            ("signatory_title", self.signatory_title.is_none()),
        ]
        .into_iter()
        .filter_map(|(name, missing)| missing.then_some(name))
        .collect()
    }

    fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// A business verification asked for: the facts sent to the verifier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verification {
    /// The EIN verified, 9 digits.
    pub ein: String,
    /// The legal name verified.
    pub legal_name: String,
    /// When it was asked for, Unix seconds.
    pub requested_at: i64,
    /// When a pending sandbox answer is due, Unix seconds.
    #[serde(default)]
    pub due_at: Option<i64>,
}

/// What the business verifier answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifierAnswer {
    /// The business is verified.
    Verified,
    /// Refused, with the reason shown to the employer (on `ein`).
    Refused(String),
    /// The answer comes later; a sandbox answer is due at `due_at`.
    Pending {
        /// Unix seconds, for the sandbox's delayed answer.
        due_at: Option<i64>,
    },
}

/// The saved bank account. The account number is sealed; only its last
/// four digits are ever shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BankAccount {
    /// ABA routing number.
    pub routing_number: String,
    /// The account number's last four digits.
    pub last4: String,
    /// `checking` or `savings`.
    pub account_type: AccountType,
    /// The account holder.
    pub holder_name: String,
    /// The account number sealed by the `Sealer` port (AEAD), base64.
    pub account_number_sealed: String,
    /// The two micro-deposits, in cents.
    pub deposits_cents: [u32; 2],
    /// Wrong answers so far.
    #[serde(default)]
    pub wrong_attempts: u32,
}

/// The plan choices, and the signature on the plan documents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanChoices {
    /// `diamond` or `value`.
    pub plan_id: VersionId,
    /// Employer share of the premium, 0 to 100.
    pub employer_contribution_pct: u32,
    /// When coverage starts for a new hire.
    pub waiting_period: WaitingPeriod,
    /// Minimum weekly hours for eligibility, 20 to 40.
    pub min_hours_per_week: u32,
    /// Present once the signatory signed.
    #[serde(default)]
    pub signature: Option<Signature>,
}

impl PlanChoices {
    /// Whether two saves choose the same plan settings (signature aside).
    #[must_use]
    pub fn same_choices(&self, other: &Self) -> bool {
        (
            self.plan_id,
            self.employer_contribution_pct,
            self.waiting_period,
            self.min_hours_per_week,
        ) == (
            other.plan_id,
            other.employer_contribution_pct,
            other.waiting_period,
            other.min_hours_per_week,
        )
    }
}

/// The signatory's signature on the plan documents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    /// The name typed.
    pub name: String,
    /// The signatory's email.
    pub email: String,
    /// When, Unix seconds.
    pub signed_at: i64,
    /// From which address.
    pub ip: Option<String>,
    /// With which browser.
    pub user_agent: Option<String>,
    /// Each document signed.
    pub documents: Vec<SignedDocument>,
}

/// One signed document and the SHA-256 of what was shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedDocument {
    /// `plan_summary`, `service_agreement` or `privacy_notice`.
    pub name: String,
    /// Hex SHA-256 of the rendered document.
    pub sha256: String,
}

/// The employee invitations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Invitations {
    /// When they were sent or recorded, Unix seconds.
    pub sent_at: i64,
    /// Test mode: recorded, not sent.
    pub suppressed: bool,
    /// Employees invited.
    pub count: u32,
}

/// What a micro-deposit answer came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepositCheck {
    /// The amounts match: the account is verified.
    Verified,
    /// Wrong; this many answers remain.
    Wrong {
        /// Answers left before the account must be entered again.
        attempts_remaining: u32,
    },
    /// The last allowed answer was wrong: the account must be entered
    /// again.
    Void,
}

impl Checklist {
    /// Saves the profile (replacing the saved one). It is completed when
    /// every field is there. A changed profile resets a started business
    /// verification: the verified facts changed.
    pub fn save_profile(&mut self, profile: CompanyProfile, now: i64) {
        let changed = self.company_profile.data.as_ref() != Some(&profile);
        let status = if profile.missing().is_empty() {
            StepStatus::Completed
        } else if profile.is_empty() {
            StepStatus::NotStarted
        } else {
            StepStatus::InProgress
        };
        self.company_profile.data = Some(profile);
        self.company_profile.errors.clear();
        self.company_profile.set(status, now);
        if changed && self.business_verification.status != StepStatus::NotStarted {
            self.business_verification = super::StepState::default();
        }
    }

    /// Records a verification asked for and the verifier's answer.
    pub fn start_verification(&mut self, asked: Verification, answer: VerifierAnswer, now: i64) {
        let step = &mut self.business_verification;
        let mut asked = asked;
        asked.due_at = match &answer {
            VerifierAnswer::Pending { due_at } => *due_at,
            _ => None,
        };
        step.data = Some(asked);
        Self::answer(step, answer, now);
    }

    /// Applies a later answer to the pending verification: the sandbox's
    /// delayed one names the request it answers (`(ein, requested_at)`),
    /// the operator's review answers whatever is pending (`None`). Returns
    /// whether it applied: an answer for a request since replaced is
    /// dropped.
    pub fn settle_verification(
        &mut self,
        request: Option<(&str, i64)>,
        answer: VerifierAnswer,
        now: i64,
    ) -> bool {
        let step = &mut self.business_verification;
        let pending = step.status == StepStatus::Pending
            && step.data.as_ref().is_some_and(|v| {
                request.is_none_or(|(ein, at)| v.ein == ein && v.requested_at == at)
            });
        if !pending {
            return false;
        }
        if let Some(v) = step.data.as_mut() {
            v.due_at = None;
        }
        Self::answer(step, answer, now);
        true
    }

    fn answer(step: &mut super::StepState<Verification>, answer: VerifierAnswer, now: i64) {
        step.errors.clear();
        match answer {
            VerifierAnswer::Verified => step.set(StepStatus::Completed, now),
            VerifierAnswer::Refused(reason) => {
                step.errors
                    .push(StepError::verification_failed("ein", reason));
                step.set(StepStatus::ActionRequired, now);
            }
            VerifierAnswer::Pending { .. } => step.set(StepStatus::Pending, now),
        }
    }

    /// Saves a bank account, replacing any earlier one: it waits for its
    /// micro-deposits to be confirmed.
    pub fn save_bank(&mut self, account: BankAccount, now: i64) {
        self.banking.data = Some(BankAccount {
            wrong_attempts: 0,
            ..account
        });
        self.banking.errors.clear();
        self.banking.set(StepStatus::Pending, now);
    }

    /// Checks the two amounts the employer read on the statement, in any
    /// order. `None` when no account waits for its deposits.
    pub fn check_deposits(&mut self, amounts: [u32; 2], now: i64) -> Option<DepositCheck> {
        let step = &mut self.banking;
        if step.status != StepStatus::Pending {
            return None;
        }
        let account = step.data.as_mut()?;
        let sorted = |mut a: [u32; 2]| {
            a.sort_unstable();
            a
        };
        step.errors.clear();
        if sorted(amounts) == sorted(account.deposits_cents) {
            step.set(StepStatus::Completed, now);
            return Some(DepositCheck::Verified);
        }
        account.wrong_attempts = account.wrong_attempts.saturating_add(1);
        let remaining = DEPOSIT_ATTEMPTS.saturating_sub(account.wrong_attempts);
        if remaining == 0 {
            step.errors.push(StepError::verification_failed(
                "amounts_cents",
                "The amounts did not match the micro-deposits three times; enter the bank account again",
            ));
            step.set(StepStatus::ActionRequired, now);
            Some(DepositCheck::Void)
        } else {
            step.errors.push(StepError::verification_failed(
                "amounts_cents",
                format!(
                    "The amounts do not match the micro-deposits; {remaining} attempt{} remaining",
                    if remaining == 1 { "" } else { "s" }
                ),
            ));
            Some(DepositCheck::Wrong {
                attempts_remaining: remaining,
            })
        }
    }

    /// Saves the plan choices. The same choices keep a signature; other
    /// choices need signing again.
    pub fn save_plan(&mut self, choices: PlanChoices, now: i64) {
        let step = &mut self.plan_setup;
        let keep = step
            .data
            .as_ref()
            .filter(|saved| saved.same_choices(&choices))
            .and_then(|saved| saved.signature.clone());
        let status = if keep.is_some() {
            StepStatus::Completed
        } else {
            StepStatus::InProgress
        };
        step.data = Some(PlanChoices {
            signature: keep,
            ..choices
        });
        step.set(status, now);
    }

    /// Records the signature on the saved plan choices. Returns whether
    /// there were choices to sign.
    pub fn sign_plan(&mut self, signature: Signature, now: i64) -> bool {
        let step = &mut self.plan_setup;
        let Some(choices) = step.data.as_mut() else {
            return false;
        };
        choices.signature = Some(signature);
        step.set(StepStatus::Completed, now);
        true
    }

    /// Records the employee invitations.
    pub fn record_invitations(&mut self, invitations: Invitations, now: i64) {
        self.employee_invitations.data = Some(invitations);
        self.employee_invitations.set(StepStatus::Completed, now);
    }
}
