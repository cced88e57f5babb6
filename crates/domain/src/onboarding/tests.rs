//! The checklist's rules: order, prerequisites, derived fields, the
//! transitions and what a step shows.

use super::*;

use super::fixtures::{NOW, account, asked, choices, completed as complete, profile, signature};

#[test]
fn a_new_checklist_has_five_steps_in_order_and_four_blocking() {
    let c = Checklist::default();
    let ids: Vec<&str> = c.steps().iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "company_profile",
            "business_verification",
            "banking",
            "plan_setup",
            "employee_invitations"
        ]
    );
    assert_eq!(
        c.progress(),
        Progress {
            percent_complete: 0,
            blocking_remaining: 4
        }
    );
    assert!(
        c.steps()
            .iter()
            .all(|s| s.status == StepStatus::NotStarted && s.data.is_none())
    );
    assert!(!c.steps()[4].required);
    let hosted = c.next_steps(OnboardingMode::Hosted);
    assert_eq!(hosted.len(), 5);
    assert!(hosted[0].contains("company profile"), "{hosted:?}");
    assert!(hosted[4].contains("optional"), "{hosted:?}");
    let embedded = c.next_steps(OnboardingMode::Embedded);
    assert!(embedded[0].contains("PUT /v1/enrollments/{id}/onboarding/company_profile"));
}

#[test]
fn prerequisites_follow_the_table() {
    let mut c = Checklist::default();
    assert_eq!(c.blocked_by(StepId::CompanyProfile), None);
    assert_eq!(c.blocked_by(StepId::Banking), None);
    assert_eq!(
        c.blocked_by(StepId::BusinessVerification),
        Some(StepId::CompanyProfile)
    );
    assert_eq!(c.blocked_by(StepId::PlanSetup), Some(StepId::Banking));
    assert_eq!(
        c.blocked_by(StepId::EmployeeInvitations),
        Some(StepId::PlanSetup)
    );
    c.save_profile(profile(), NOW);
    assert_eq!(c.blocked_by(StepId::BusinessVerification), None);
}

#[test]
fn a_partial_profile_is_in_progress_with_its_requirements() {
    let mut c = Checklist::default();
    let mut p = profile();
    p.address = None;
    p.phone = None;
    c.save_profile(p, NOW);
    let step = c.step(StepId::CompanyProfile);
    assert_eq!(step.status, StepStatus::InProgress);
    assert_eq!(step.requirements, ["address", "phone"]);
    assert_eq!(step.completed_at, None);
    c.save_profile(profile(), NOW + 5);
    let step = c.step(StepId::CompanyProfile);
    assert_eq!(step.status, StepStatus::Completed);
    assert!(step.requirements.is_empty());
    assert_eq!(step.completed_at.as_deref(), Some("2026-11-21T13:14:05Z"));
    assert_eq!(c.progress().percent_complete, 25);
}

#[test]
fn editing_a_verified_profile_resets_the_verification_but_saving_it_unchanged_does_not() {
    let mut c = Checklist::default();
    c.save_profile(profile(), NOW);
    c.start_verification(asked(), VerifierAnswer::Verified, NOW);
    assert_eq!(c.progress().percent_complete, 50);
    c.save_profile(profile(), NOW);
    assert_eq!(
        c.status(StepId::BusinessVerification),
        StepStatus::Completed
    );
    let mut p = profile();
    p.legal_name = Some("Acme Holdings LLC".into());
    c.save_profile(p, NOW);
    assert_eq!(
        c.status(StepId::BusinessVerification),
        StepStatus::NotStarted
    );
    assert_eq!(c.step(StepId::BusinessVerification).data, None);
}

#[test]
fn a_refusal_is_action_required_with_a_verification_failed_error_on_the_ein() {
    let mut c = Checklist::default();
    c.save_profile(profile(), NOW);
    c.start_verification(
        asked(),
        VerifierAnswer::Refused("The EIN does not match the legal name".into()),
        NOW,
    );
    let step = c.step(StepId::BusinessVerification);
    assert_eq!(step.status, StepStatus::ActionRequired);
    assert_eq!(
        step.errors,
        [StepError {
            field: "ein".into(),
            code: "verification_failed".into(),
            message: "The EIN does not match the legal name".into()
        }]
    );
    // Asking again with good facts clears it.
    c.start_verification(asked(), VerifierAnswer::Verified, NOW);
    assert!(c.step(StepId::BusinessVerification).errors.is_empty());
}

#[test]
fn a_pending_verification_settles_only_for_the_same_ein() {
    let mut c = Checklist::default();
    c.save_profile(profile(), NOW);
    c.start_verification(
        asked(),
        VerifierAnswer::Pending {
            due_at: Some(NOW + 60),
        },
        NOW,
    );
    assert_eq!(c.status(StepId::BusinessVerification), StepStatus::Pending);
    assert_eq!(
        c.business_verification.data.as_ref().unwrap().due_at,
        Some(NOW + 60)
    );
    assert!(!c.settle_verification(Some(("987654321", NOW)), VerifierAnswer::Verified, NOW + 60));
    assert!(c.settle_verification(Some(("123456789", NOW)), VerifierAnswer::Verified, NOW + 60));
    assert_eq!(
        c.status(StepId::BusinessVerification),
        StepStatus::Completed
    );
    // A settled one is not settled again.
    assert!(!c.settle_verification(None, VerifierAnswer::Refused("x".into()), NOW));
}

#[test]
fn three_wrong_deposit_answers_void_the_account() {
    let mut c = Checklist::default();
    assert_eq!(c.check_deposits([32, 45], NOW), None, "no account yet");
    c.save_bank(account(), NOW);
    assert_eq!(c.status(StepId::Banking), StepStatus::Pending);
    assert_eq!(
        c.check_deposits([1, 2], NOW),
        Some(DepositCheck::Wrong {
            attempts_remaining: 2
        })
    );
    assert_eq!(c.step(StepId::Banking).errors[0].field, "amounts_cents");
    assert_eq!(
        c.check_deposits([1, 2], NOW),
        Some(DepositCheck::Wrong {
            attempts_remaining: 1
        })
    );
    assert_eq!(c.check_deposits([32, 46], NOW), Some(DepositCheck::Void));
    assert_eq!(c.status(StepId::Banking), StepStatus::ActionRequired);
    assert_eq!(
        c.check_deposits([32, 45], NOW),
        None,
        "the account must be entered again"
    );
    c.save_bank(account(), NOW);
    assert_eq!(
        c.check_deposits([32, 45], NOW),
        Some(DepositCheck::Verified)
    );
    assert!(c.step(StepId::Banking).errors.is_empty());
}

#[test]
fn the_banking_step_never_shows_the_account_number_or_the_deposits() {
    let mut c = Checklist::default();
    c.save_bank(account(), NOW);
    let shown = serde_json::to_string(&c.step(StepId::Banking)).unwrap();
    assert!(shown.contains("\"last4\":\"6789\""), "{shown}");
    for hidden in ["c2VhbGVk", "deposits", "32", "45", "sealed"] {
        assert!(!shown.contains(hidden), "{hidden} in {shown}");
    }
}

#[test]
fn changing_signed_plan_choices_needs_a_new_signature() {
    let mut c = complete();
    assert!(c.complete());
    assert_eq!(c.progress().percent_complete, 100);
    c.save_plan(choices(), NOW);
    assert_eq!(
        c.status(StepId::PlanSetup),
        StepStatus::Completed,
        "same choices keep it"
    );
    let mut other = choices();
    other.employer_contribution_pct = 50;
    c.save_plan(other, NOW);
    assert_eq!(c.status(StepId::PlanSetup), StepStatus::InProgress);
    assert_eq!(c.step(StepId::PlanSetup).requirements, ["signature"]);
    assert_eq!(c.progress().blocking_remaining, 1);
    assert!(c.sign_plan(signature(), NOW));
    assert!(c.complete());
}

#[test]
fn signing_needs_saved_choices() {
    let mut c = Checklist::default();
    assert!(!c.sign_plan(signature(), NOW));
    assert_eq!(c.status(StepId::PlanSetup), StepStatus::NotStarted);
}

#[test]
fn the_enrollment_status_follows_the_mode_and_the_company_state() {
    use crate::group::CompanyState::{Prod, Sandbox};
    use crate::mode::Mode::{Live, Test};
    let open = Checklist::default();
    let done = complete();
    assert_eq!(
        enrollment_status(&open, Test, Some(Sandbox)),
        EnrollmentStatus::Onboarding
    );
    assert_eq!(
        enrollment_status(&done, Live, Some(Sandbox)),
        EnrollmentStatus::InReview
    );
    assert_eq!(
        enrollment_status(&done, Test, Some(Prod)),
        EnrollmentStatus::Active
    );
    // A forced go-live is active whatever the checklist says.
    assert_eq!(
        enrollment_status(&open, Live, Some(Prod)),
        EnrollmentStatus::Active
    );
    assert_eq!(
        done.next_steps(OnboardingMode::Hosted).len(),
        1,
        "only the optional step"
    );
}

#[test]
fn the_stored_checklist_reads_back_and_an_empty_document_is_a_new_checklist() {
    let c = complete();
    let text = serde_json::to_string(&c).unwrap();
    assert_eq!(serde_json::from_str::<Checklist>(&text).unwrap(), c);
    assert_eq!(
        serde_json::from_str::<Checklist>("{}").unwrap(),
        Checklist::default()
    );
}
