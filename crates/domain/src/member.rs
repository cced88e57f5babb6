//! A census member's roster state: what enrollment, elections and HR
//! changes record beside the fields the partner sent — enrollment and
//! invitation status, tier, coverage start, termination and COBRA. It
//! survives census replaces that keep the member's id.

use time::{Date, Duration};

use crate::error::FieldError;

/// Days a terminated member has to elect COBRA continuation.
pub const COBRA_ELECTION_DAYS: i64 = 60;

/// Whether the member enrolled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EnrollmentStatus {
    /// No election yet.
    #[default]
    Pending,
    /// Elected coverage.
    Enrolled,
    /// Waived coverage.
    Waived,
}

/// Whether the member was sent a login.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InvitationStatus {
    /// Not sent.
    #[default]
    NotSent,
    /// Would have been sent; test mode sends no email.
    Suppressed,
    /// Sent.
    Sent,
}

macro_rules! wire_enum {
    ($t:ty { $($v:ident => $s:literal),+ $(,)? }) => {
        impl $t {
            /// Wire and storage value.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self { $(Self::$v => $s),+ }
            }

            /// Parses a wire or storage value.
            #[must_use]
            pub fn parse(text: &str) -> Option<Self> {
                match text { $($s => Some(Self::$v),)+ _ => None }
            }
        }
    };
}

wire_enum!(EnrollmentStatus { Pending => "pending", Enrolled => "enrolled", Waived => "waived" });
wire_enum!(InvitationStatus { NotSent => "not_sent", Suppressed => "suppressed", Sent => "sent" });

/// The roster state of one member.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MemberState {
    /// Enrollment status.
    pub enrollment: EnrollmentStatus,
    /// Invitation status.
    pub invitation: InvitationStatus,
    /// Household tier elected (`employeeOnly` …), once elected.
    pub tier: Option<String>,
    /// Coverage start, once elected.
    pub effective_date: Option<Date>,
    /// Last day of employment, when terminated.
    pub termination_date: Option<Date>,
    /// Last day to elect COBRA: set when a member is terminated after the
    /// group's enrollment.
    pub cobra_deadline: Option<Date>,
}

impl MemberState {
    /// Records a termination on `date`. After the group's enrollment the
    /// member becomes COBRA-eligible until `date` + 60 days.
    pub fn terminate(&mut self, date: Date, group_enrolled: bool) {
        self.termination_date = Some(date);
        self.cobra_deadline =
            group_enrolled.then(|| date.saturating_add(Duration::days(COBRA_ELECTION_DAYS)));
    }

    /// Clears a termination (the member is active again).
    pub fn reinstate(&mut self) {
        self.termination_date = None;
        self.cobra_deadline = None;
    }
}

/// A termination needs its date; a date without a termination is refused.
///
/// # Errors
/// One [`FieldError`] on `termination_date`.
pub fn check_termination(terminated: bool, date: Option<Date>) -> Result<(), FieldError> {
    match (terminated, date) {
        (true, None) => Err(FieldError::new(
            "termination_date",
            "is required when status is terminated",
        )),
        (false, Some(_)) => Err(FieldError::new(
            "termination_date",
            "is only allowed when status is terminated",
        )),
        _ => Ok(()),
    }
}

/// Which members a roster page returns (none set: all).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemberFilter {
    /// `active` or `terminated` (the census record's status).
    pub status: Option<pricing_core::census::MemberStatus>,
    /// The roster's enrollment status.
    pub enrollment_status: Option<EnrollmentStatus>,
}

#[cfg(test)]
mod tests {
    use time::macros::date;

    use super::*;

    #[test]
    fn values_round_trip() {
        for s in [
            EnrollmentStatus::Pending,
            EnrollmentStatus::Enrolled,
            EnrollmentStatus::Waived,
        ] {
            assert_eq!(EnrollmentStatus::parse(s.as_str()), Some(s));
        }
        for s in [
            InvitationStatus::NotSent,
            InvitationStatus::Suppressed,
            InvitationStatus::Sent,
        ] {
            assert_eq!(InvitationStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(EnrollmentStatus::parse("x"), None);
    }

    #[test]
    fn a_termination_after_enrollment_opens_cobra_for_60_days() {
        let mut s = MemberState::default();
        s.terminate(date!(2026 - 12 - 15), true);
        assert_eq!(s.cobra_deadline, Some(date!(2027 - 02 - 13)));
        let mut before = MemberState::default();
        before.terminate(date!(2026 - 12 - 15), false);
        assert_eq!(before.termination_date, Some(date!(2026 - 12 - 15)));
        assert_eq!(before.cobra_deadline, None);
        s.reinstate();
        assert_eq!(s, MemberState::default());
    }

    #[test]
    fn a_termination_needs_its_date_and_only_then() {
        assert!(check_termination(true, Some(date!(2026 - 12 - 15))).is_ok());
        assert!(check_termination(false, None).is_ok());
        assert!(check_termination(true, None).is_err());
        assert!(check_termination(false, Some(date!(2026 - 12 - 15))).is_err());
    }
}
