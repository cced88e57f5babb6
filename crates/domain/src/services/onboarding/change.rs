//! One change of a checklist: read it, check that the step may change,
//! apply the transition, and store it with the events of every step whose
//! status moved (and the go-live when the checklist completes in test
//! mode); made again on the newer checklist when another change landed
//! first.

use super::{ATTEMPTS, Onboarding};
use crate::document::EventData;
use crate::document::event::{EnrollmentUpdated, GroupStateChanged, OnboardingCounts, StepChange};
use crate::enrollment::Enrollment;
use crate::event::NewEvent;
use crate::group::{CompanyState, Group};
use crate::ids::EnrollmentId;
use crate::job::NewJob;
use crate::mode::Mode;
use crate::onboarding::{Checklist, StepId, StepView, enrollment_status};
use crate::ports::Minter;
use crate::scope::Scope;
use crate::services::{OnboardingRefusal, ServiceError};
use crate::store::{Conflict, OnboardingWrite, StoreError};

/// What a change needs to know.
pub(super) struct Context<'a> {
    pub(super) enrollment: &'a Enrollment,
    pub(super) group: &'a Group,
    pub(super) now: i64,
    pub(super) minter: &'a Minter<'a>,
}

impl Onboarding {
    /// Makes one change: read, check, apply, store with its events; again
    /// on a newer checklist when another change landed first.
    pub(super) async fn change<F>(
        &self,
        scope: &Scope,
        id: &EnrollmentId,
        step: StepId,
        mut apply: F,
    ) -> Result<StepView, ServiceError>
    where
        F: FnMut(&mut Checklist, &Context<'_>) -> Result<Vec<NewJob>, ServiceError>,
    {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let enrollment = self.ports.quotes.enrollment(scope, id).await?;
            let group = self.ports.groups.group(scope, &enrollment.group_id).await?;
            if step.required() && group.company_state == Some(CompanyState::Prod) {
                return Err(OnboardingRefusal::CompanyLive.into());
            }
            if let Some(needs) = enrollment.onboarding.blocked_by(step) {
                return Err(OnboardingRefusal::Blocked { step, needs }.into());
            }
            let now = self.now();
            let minter = Minter::new(self.ports.entropy.as_ref());
            let cx = Context {
                enrollment: &enrollment,
                group: &group,
                now,
                minter: &minter,
            };
            let mut after = enrollment.onboarding.clone();
            let jobs = apply(&mut after, &cx)?;
            let write = self.write(&cx, after, jobs);
            let queued = !write.jobs.is_empty();
            match self.ports.store.save_onboarding(scope, &write).await {
                Ok(()) => {
                    if queued {
                        self.ports.waker.job_queued();
                    }
                    return Ok(write.checklist.step(step));
                }
                Err(StoreError::Conflict(Conflict::OnboardingMoved)) if attempt < ATTEMPTS => {}
                Err(StoreError::Conflict(Conflict::CompanyStateMoved)) => {
                    return Err(OnboardingRefusal::CompanyLive.into());
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The stored change: the events of every step whose status moved
    /// and, when the checklist completes in test mode, the go-live.
    fn write(&self, cx: &Context<'_>, after: Checklist, jobs: Vec<NewJob>) -> OnboardingWrite {
        let e = cx.enrollment;
        let before = &e.onboarding;
        let go_live = e.scope.mode == Mode::Test
            && after.complete()
            && cx.group.company_state == Some(CompanyState::Sandbox);
        let company = if go_live {
            Some(CompanyState::Prod)
        } else {
            cx.group.company_state
        };
        let status = enrollment_status(&after, e.scope.mode, company);
        let progress = after.progress();
        let event = |data| NewEvent {
            id: cx.minter.event_id(),
            scope: e.scope.clone(),
            created_at: cx.now,
            data,
        };
        let mut events: Vec<NewEvent> = StepId::ALL
            .into_iter()
            .filter(|s| before.status(*s) != after.status(*s))
            .map(|s| {
                event(EventData::EnrollmentUpdated(EnrollmentUpdated {
                    enrollment_id: e.id.clone(),
                    group_id: e.group_id.clone(),
                    status: status.as_str().to_owned(),
                    onboarding: OnboardingCounts {
                        percent_complete: progress.percent_complete,
                        blocking_remaining: progress.blocking_remaining,
                    },
                    step: StepChange {
                        id: s.as_str().to_owned(),
                        status: after.status(s).as_str().to_owned(),
                    },
                }))
            })
            .collect();
        if go_live {
            events.push(event(EventData::GroupStateChanged(GroupStateChanged {
                group_id: e.group_id.clone(),
                company_domain: cx.group.domain.clone(),
                previous_state: CompanyState::Sandbox.as_str().to_owned(),
                state: CompanyState::Prod.as_str().to_owned(),
                forced: false,
            })));
        }
        // Ids ascending in the order the events were made: events made
        // together are delivered and listed in that order.
        let mut ids: Vec<_> = events.iter().map(|e| e.id.clone()).collect();
        ids.sort();
        for (event, id) in events.iter_mut().zip(ids) {
            event.id = id;
        }
        OnboardingWrite {
            enrollment_id: e.id.clone(),
            group_id: e.group_id.clone(),
            revision: e.onboarding_revision,
            checklist: after,
            events,
            jobs,
            go_live,
            now: cx.now,
        }
    }
}

impl Context<'_> {
    /// The signatory's name and email.
    pub(super) fn group_signatory(&self) -> (String, String) {
        self.enrollment
            .body
            .signatory
            .as_ref()
            .map(|s| (s.name.clone(), s.email.clone()))
            .unwrap_or_default()
    }
}
