//! Onboarding (onboarding §1, §2): the use cases behind the employer
//! portal, the embedded endpoints and the operator's commands. Each change
//! reads the enrollment's checklist, checks that the step may change
//! (prerequisites, a live company's closed steps), applies one pure
//! transition of [`crate::onboarding`], and stores the result with its
//! `enrollment.updated` events — and, when it completes the checklist in
//! test mode, the company's go-live and `group.state_changed` — in one
//! transaction. A change that lost a race with another is made again on
//! the new checklist.

mod change;
mod handler;
mod inputs;
mod roster;

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::document::JobPayload;
use crate::document::job::VerificationDue;
use crate::enrollment::{Enrollment, OnboardingMode};
use crate::group::Group;
use crate::ids::{EnrollmentId, GroupId};
use crate::job::NewJob;
use crate::mode::Mode;
use crate::onboarding::documents::{DocumentFacts, PlanDocument, plan_documents};
use crate::onboarding::{
    BankAccount, EnrollmentStatus, Invitations, Progress, Signature, StepId, StepStatus, StepView,
    Verification, VerifierAnswer, enrollment_status,
};
use crate::plans::PlanInfo;
use crate::ports::{
    BusinessVerifier, Clock, Entropy, JobWaker, MicroDeposits, Sealer, VerificationRequest,
};
use crate::scope::Scope;
use crate::services::{OnboardingRefusal, ServiceError};
use crate::store::{CensusStore, GroupStore, OnboardingStore, QuoteStore};

pub use handler::VerificationHandler;
pub use inputs::{BankInput, PlanInput, ProfileInput, SignInput};

/// How often a change is made again after losing a race.
const ATTEMPTS: u32 = 5;

/// The ports of the onboarding service.
#[derive(Clone)]
pub struct OnboardingPorts {
    /// Enrollments (read).
    pub quotes: Arc<dyn QuoteStore>,
    /// Groups (the company state).
    pub groups: Arc<dyn GroupStore>,
    /// Checklists (write).
    pub store: Arc<dyn OnboardingStore>,
    /// The clock.
    pub clock: Arc<dyn Clock>,
    /// Ids and amounts.
    pub entropy: Arc<dyn Entropy>,
    /// Seals account numbers.
    pub sealer: Arc<dyn Sealer>,
    /// The business verifier.
    pub verifier: Arc<dyn BusinessVerifier>,
    /// Micro-deposits.
    pub deposits: Arc<dyn MicroDeposits>,
    /// Hears of queued jobs.
    pub waker: Arc<dyn JobWaker>,
    /// The plan catalogue (the documents signed).
    pub plans: Arc<Vec<PlanInfo>>,
    /// The roster (the employees invited).
    pub census: Arc<dyn CensusStore>,
    /// Queues the employee invitations (live mode).
    pub mailbox: crate::services::mailbox::Mailbox,
}

/// The onboarding service.
#[derive(Clone)]
pub struct Onboarding {
    ports: OnboardingPorts,
    /// Changes only embedded enrollments (the API's service: a hosted
    /// enrollment's onboarding runs in the employer portal).
    embedded_only: bool,
}

/// An enrollment's onboarding as partners and the portal see it.
#[derive(Debug, Clone, PartialEq)]
pub struct OnboardingView {
    /// The enrollment (with its checklist).
    pub enrollment: Enrollment,
    /// The group.
    pub group: Group,
    /// Its status.
    pub status: EnrollmentStatus,
    /// Progress.
    pub progress: Progress,
    /// The five steps.
    pub steps: Vec<StepView>,
    /// One sentence per step not completed.
    pub next_steps: Vec<String>,
}

impl OnboardingView {
    /// The view of a stored enrollment and its group.
    #[must_use]
    pub fn of(enrollment: Enrollment, group: Group) -> Self {
        let c = &enrollment.onboarding;
        Self {
            status: enrollment_status(c, enrollment.scope.mode, group.company_state),
            progress: c.progress(),
            steps: c.steps(),
            next_steps: c.next_steps(enrollment.onboarding_mode),
            enrollment,
            group,
        }
    }
}

/// The operator's review of a business verification in live mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Review {
    /// `company verify`.
    Verify,
    /// `company reject --reason`.
    Reject(String),
}

impl Onboarding {
    /// The service over its ports.
    #[must_use]
    pub fn new(ports: OnboardingPorts) -> Self {
        Self {
            ports,
            embedded_only: false,
        }
    }

    /// The same service changing only embedded enrollments: the partner's
    /// API (onboarding §4). Its changes to a hosted enrollment answer
    /// [`OnboardingRefusal::HostedOnly`] before anything else is looked at.
    #[must_use]
    pub fn embedded_only(self) -> Self {
        Self {
            embedded_only: true,
            ..self
        }
    }

    /// Refuses a change this service may not make to the enrollment.
    async fn may_change(&self, scope: &Scope, id: &EnrollmentId) -> Result<(), ServiceError> {
        if self.embedded_only {
            let enrollment = self.ports.quotes.enrollment(scope, id).await?;
            if enrollment.onboarding_mode != OnboardingMode::Embedded {
                return Err(OnboardingRefusal::HostedOnly.into());
            }
        }
        Ok(())
    }

    fn now(&self) -> i64 {
        self.ports.clock.now_ms().div_euclid(1000)
    }

    /// An enrollment's onboarding.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] outside the scope.
    pub async fn view(
        &self,
        scope: &Scope,
        id: &EnrollmentId,
    ) -> Result<OnboardingView, ServiceError> {
        let enrollment = self.ports.quotes.enrollment(scope, id).await?;
        let group = self.ports.groups.group(scope, &enrollment.group_id).await?;
        Ok(OnboardingView::of(enrollment, group))
    }

    /// The plan documents the signatory signs for the saved choices.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] outside the scope;
    /// [`OnboardingRefusal::NothingToSign`] before the choices are saved.
    pub async fn documents(
        &self,
        scope: &Scope,
        id: &EnrollmentId,
    ) -> Result<Vec<PlanDocument>, ServiceError> {
        let enrollment = self.ports.quotes.enrollment(scope, id).await?;
        self.documents_of(&enrollment)
    }

    fn documents_of(&self, enrollment: &Enrollment) -> Result<Vec<PlanDocument>, ServiceError> {
        let c = &enrollment.onboarding;
        let choices = c
            .plan_setup
            .data
            .as_ref()
            .ok_or(OnboardingRefusal::NothingToSign)?;
        let plan = self
            .ports
            .plans
            .iter()
            .find(|p| p.id == choices.plan_id.as_str())
            .ok_or_else(|| ServiceError::Internal("the plan is not in the catalogue".into()))?;
        let company = c
            .company_profile
            .data
            .as_ref()
            .and_then(|p| p.legal_name.as_deref())
            .unwrap_or(&enrollment.body.company_domain);
        Ok(plan_documents(DocumentFacts {
            company,
            start_date: &enrollment.body.start_date,
            plan,
            choices,
        }))
    }

    /// Saves the company profile.
    ///
    /// # Errors
    /// [`ServiceError::Invalid`] naming every bad field;
    /// [`OnboardingRefusal::CompanyLive`] once the company is `prod`.
    pub async fn save_profile(
        &self,
        scope: &Scope,
        id: &EnrollmentId,
        input: ProfileInput,
    ) -> Result<StepView, ServiceError> {
        self.may_change(scope, id).await?;
        let profile = input.validate().map_err(ServiceError::Invalid)?;
        self.change(scope, id, StepId::CompanyProfile, |c, cx| {
            c.save_profile(profile.clone(), cx.now);
            Ok(Vec::new())
        })
        .await
    }

    /// Asks the business verifier about the saved profile.
    ///
    /// # Errors
    /// [`OnboardingRefusal::Blocked`] until the profile is completed.
    pub async fn request_verification(
        &self,
        scope: &Scope,
        id: &EnrollmentId,
    ) -> Result<StepView, ServiceError> {
        self.may_change(scope, id).await?;
        self.change(scope, id, StepId::BusinessVerification, |c, cx| {
            let profile = c.company_profile.data.clone().unwrap_or_default();
            let (Some(ein), Some(legal_name)) = (profile.ein, profile.legal_name) else {
                return Err(OnboardingRefusal::Blocked {
                    step: StepId::BusinessVerification,
                    needs: StepId::CompanyProfile,
                }
                .into());
            };
            let answer = self.ports.verifier.verify(&VerificationRequest {
                mode: cx.enrollment.scope.mode,
                ein: ein.clone(),
                legal_name: legal_name.clone(),
                now: cx.now,
            });
            let mut jobs = Vec::new();
            if let VerifierAnswer::Pending { due_at: Some(due) } = answer {
                jobs.push(NewJob {
                    id: cx.minter.job_id(),
                    scope: cx.enrollment.scope.clone(),
                    group_id: Some(cx.enrollment.group_id.clone()),
                    payload: JobPayload::BusinessVerification(VerificationDue {
                        enrollment_id: cx.enrollment.id.clone(),
                        ein: ein.clone(),
                        requested_at: cx.now,
                    }),
                    run_after_ms: due.saturating_mul(1000),
                });
            }
            let asked = Verification {
                ein,
                legal_name,
                requested_at: cx.now,
                due_at: None,
            };
            c.start_verification(asked, answer, cx.now);
            Ok(jobs)
        })
        .await
    }

    /// Saves a bank account (the number sealed) and sends its two
    /// micro-deposits.
    ///
    /// # Errors
    /// [`ServiceError::Invalid`] naming every bad field;
    /// [`OnboardingRefusal::CompanyLive`] once the company is `prod`.
    pub async fn save_bank(
        &self,
        scope: &Scope,
        id: &EnrollmentId,
        input: BankInput,
    ) -> Result<StepView, ServiceError> {
        self.may_change(scope, id).await?;
        let bank = input.validate().map_err(ServiceError::Invalid)?;
        let sealed = STANDARD.encode(
            self.ports
                .sealer
                .seal(bank.account_number.as_bytes(), &account_context(id)),
        );
        let deposits = self.ports.deposits.amounts(scope.mode);
        let last4 = bank
            .account_number
            .get(bank.account_number.len().saturating_sub(4)..)
            .unwrap_or_default()
            .to_owned();
        let account = BankAccount {
            routing_number: bank.routing_number,
            last4,
            account_type: bank.account_type,
            holder_name: bank.holder_name,
            account_number_sealed: sealed,
            deposits_cents: deposits,
            wrong_attempts: 0,
        };
        self.change(scope, id, StepId::Banking, |c, cx| {
            c.save_bank(account.clone(), cx.now);
            Ok(Vec::new())
        })
        .await
    }

    /// Checks the two micro-deposit amounts, in cents.
    ///
    /// # Errors
    /// [`ServiceError::Invalid`] unless two amounts of 1 to 99 cents;
    /// [`OnboardingRefusal::NoDepositsPending`] when no account waits.
    pub async fn confirm_deposits(
        &self,
        scope: &Scope,
        id: &EnrollmentId,
        amounts: &[i64],
    ) -> Result<StepView, ServiceError> {
        self.may_change(scope, id).await?;
        let amounts = deposit_amounts(amounts)?;
        self.change(scope, id, StepId::Banking, |c, cx| {
            // Right, wrong or void, the step says which.
            match c.check_deposits(amounts, cx.now) {
                None => Err(OnboardingRefusal::NoDepositsPending.into()),
                Some(_) => Ok(Vec::new()),
            }
        })
        .await
    }

    /// Saves the plan choices.
    ///
    /// # Errors
    /// [`ServiceError::Invalid`] naming every bad field;
    /// [`OnboardingRefusal::Blocked`] until banking is completed.
    pub async fn save_plan(
        &self,
        scope: &Scope,
        id: &EnrollmentId,
        input: PlanInput,
    ) -> Result<StepView, ServiceError> {
        self.may_change(scope, id).await?;
        let enrollment = self.ports.quotes.enrollment(scope, id).await?;
        if let Some(needs) = enrollment.onboarding.blocked_by(StepId::PlanSetup) {
            return Err(OnboardingRefusal::Blocked {
                step: StepId::PlanSetup,
                needs,
            }
            .into());
        }
        let quote = self.ports.quotes.quote(scope, &enrollment.quote_id).await?;
        let (plan, pct) = quote
            .body
            .market()
            .map(|m| {
                let plan = if m.plan.id == "value" {
                    pricing_core::VersionId::Value
                } else {
                    pricing_core::VersionId::Diamond
                };
                (plan, m.employee_contribution.employer_contribution_pct)
            })
            .unwrap_or((pricing_core::VersionId::Diamond, 100));
        let choices = input.validate(plan, pct).map_err(ServiceError::Invalid)?;
        self.change(scope, id, StepId::PlanSetup, |c, cx| {
            c.save_plan(choices.clone(), cx.now);
            Ok(Vec::new())
        })
        .await
    }

    /// Records the signatory's signature on the plan documents.
    ///
    /// # Errors
    /// [`ServiceError::Invalid`] for another name or no acceptance;
    /// [`OnboardingRefusal::NothingToSign`] before the choices are saved,
    /// [`OnboardingRefusal::AlreadySigned`] once signed.
    pub async fn sign_plan(
        &self,
        scope: &Scope,
        id: &EnrollmentId,
        input: SignInput,
    ) -> Result<StepView, ServiceError> {
        self.may_change(scope, id).await?;
        self.change(scope, id, StepId::PlanSetup, |c, cx| {
            if c.plan_setup.status == StepStatus::Completed {
                return Err(OnboardingRefusal::AlreadySigned.into());
            }
            let signatory = cx.group_signatory();
            let name = input
                .validate(&signatory.0)
                .map_err(ServiceError::Invalid)?;
            let documents = self.documents_of(cx.enrollment)?;
            let signature = Signature {
                name,
                email: signatory.1,
                signed_at: cx.now,
                ip: input.ip.clone(),
                user_agent: input.user_agent.clone(),
                documents: documents.iter().map(PlanDocument::signed).collect(),
            };
            if c.sign_plan(signature, cx.now) {
                Ok(Vec::new())
            } else {
                Err(OnboardingRefusal::NothingToSign.into())
            }
        })
        .await
    }

    /// Invites the employees — one email to each census member with an
    /// address, queued with the step in live mode — or records the
    /// invitations as suppressed (test mode sends no email).
    ///
    /// # Errors
    /// [`OnboardingRefusal::Blocked`] until the plan setup is completed.
    pub async fn send_invitations(
        &self,
        scope: &Scope,
        id: &EnrollmentId,
    ) -> Result<StepView, ServiceError> {
        self.may_change(scope, id).await?;
        let enrollment = self.ports.quotes.enrollment(scope, id).await?;
        let addresses = if crate::email::deliverable(scope.mode) {
            self.member_addresses(scope, &enrollment.group_id).await?
        } else {
            Vec::new()
        };
        self.change(scope, id, StepId::EmployeeInvitations, |c, cx| {
            let jobs = addresses
                .iter()
                .filter_map(|to| {
                    self.ports.mailbox.job(
                        cx.minter,
                        scope,
                        Some(&cx.enrollment.group_id),
                        &crate::email::employee_invite(
                            to,
                            &cx.group.company_name,
                            &cx.enrollment.body.start_date,
                        ),
                        cx.now.saturating_mul(1000),
                    )
                })
                .collect();
            c.record_invitations(
                Invitations {
                    sent_at: cx.now,
                    suppressed: cx.enrollment.scope.mode == Mode::Test,
                    count: cx.group.census_member_count,
                },
                cx.now,
            );
            Ok(jobs)
        })
        .await
    }

    /// The operator's review of a live business verification
    /// (`company verify|reject`).
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] for a group without an enrollment;
    /// [`OnboardingRefusal::NotInReview`] when no verification waits.
    pub async fn review(&self, group: &GroupId, review: Review) -> Result<StepView, ServiceError> {
        let enrollment = self.ports.store.find_enrollment(group).await?;
        let answer = match review {
            Review::Verify => VerifierAnswer::Verified,
            Review::Reject(reason) => VerifierAnswer::Refused(reason),
        };
        self.settle(&enrollment.scope, &enrollment.id, None, answer)
            .await?
            .ok_or_else(|| OnboardingRefusal::NotInReview.into())
    }

    /// The micro-deposit amounts of a group's bank account, for the
    /// operator (`company deposits`).
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] for a group without an enrollment or
    /// without a bank account.
    pub async fn deposits(&self, group: &GroupId) -> Result<[u32; 2], ServiceError> {
        let enrollment = self.ports.store.find_enrollment(group).await?;
        enrollment
            .onboarding
            .banking
            .data
            .map(|b| b.deposits_cents)
            .ok_or(ServiceError::NotFound)
    }

    /// Applies a later verifier answer to a pending verification (of
    /// `due`'s request when given). `None` when nothing was pending.
    async fn settle(
        &self,
        scope: &Scope,
        id: &EnrollmentId,
        due: Option<&VerificationDue>,
        answer: VerifierAnswer,
    ) -> Result<Option<StepView>, ServiceError> {
        let result = self
            .change(scope, id, StepId::BusinessVerification, |c, cx| {
                let request = due.map(|d| (d.ein.as_str(), d.requested_at));
                if c.settle_verification(request, answer.clone(), cx.now) {
                    Ok(Vec::new())
                } else {
                    Err(OnboardingRefusal::NotInReview.into())
                }
            })
            .await;
        match result {
            Ok(step) => Ok(Some(step)),
            // Nothing pending (or not even a profile to verify).
            Err(ServiceError::Onboarding(
                OnboardingRefusal::NotInReview | OnboardingRefusal::Blocked { .. },
            )) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// What binds a sealed account number to its enrollment.
fn account_context(id: &EnrollmentId) -> Vec<u8> {
    format!("bank_account:{}", id.as_str()).into_bytes()
}

/// Two amounts of 1 to 99 cents.
fn deposit_amounts(amounts: &[i64]) -> Result<[u32; 2], ServiceError> {
    let bad = || {
        ServiceError::Invalid(vec![crate::error::FieldError::new(
            "amounts_cents",
            "must be two amounts of 1 to 99 cents",
        )])
    };
    let [a, b] = amounts else {
        return Err(bad());
    };
    let cents = |v: i64| u32::try_from(v).ok().filter(|c| (1..=99).contains(c));
    match (cents(*a), cents(*b)) {
        (Some(a), Some(b)) => Ok([a, b]),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests;
