//! Unit tests of the census service against the port mocks: the scoped group check, per-row validation and the broker date-of-birth rule, in-write duplicates, the all-invalid and size limits, dry runs, and the single store write with its fresh ids, rating digest and market-comparison job.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use mockall::Sequence;
use pricing_core::census::{Dependent, Relationship};
use time::macros::date;

use super::*;
use crate::census::{CensusOutcome, rating_digest};
use crate::document::JobPayload;
use crate::group::{Group, GroupStatus};
use crate::ids::{JobId, MemberId, PartnerId};
use crate::mode::Mode;
use crate::ports::{JobWaker, MockClock, MockEntropy, MockJobWaker, NoWorker};
use crate::store::{MockCensusStore, MockGroupStore, MockJobStore, MockQuoteStore, StoreError};

pub(super) const NOW_MS: i64 = 1_795_000_789_321;
pub(super) const NOW: i64 = 1_795_000_789;

pub(super) const ANY: CensusRules = CensusRules { require_dob: false };
pub(super) const BROKER: CensusRules = CensusRules { require_dob: true };

pub(super) fn clock() -> MockClock {
    let mut c = MockClock::new();
    c.expect_now_ms().return_const(NOW_MS);
    c
}

/// Entropy that fills each buffer with a big-endian counter starting at 1,
/// so ids are `…000000000001`, `…000000000002`, … and never repeat.
pub(super) fn sequential_entropy() -> MockEntropy {
    let mut e = MockEntropy::new();
    let mut n = 0u64;
    e.expect_fill().returning(move |buf| {
        n += 1;
        buf.fill(0);
        let bytes = n.to_be_bytes();
        let len = buf.len().min(bytes.len());
        let start = buf.len() - len;
        buf[start..].copy_from_slice(&bytes[bytes.len() - len..]);
    });
    e
}

pub(super) fn scope() -> Scope {
    Scope::new(PartnerId::from_bytes([0xaa; 6]), Mode::Test)
}

pub(super) fn group_id() -> GroupId {
    GroupId::from_bytes([0x42; 6])
}

pub(super) fn group() -> Group {
    Group {
        id: group_id(),
        partner_id: scope().partner,
        mode: scope().mode,
        status: GroupStatus::Created,
        company_name: "Acme".to_owned(),
        domain: "acme.com".to_owned(),
        external_id: None,
        address: None,
        contact: None,
        current_coverage: None,
        census_member_count: 0,
        rating_digest: None,
        company_state: None,
        created_at: NOW - 3_600,
        updated_at: NOW - 3_600,
    }
}

/// A group store where the scope holds the group, read exactly once.
pub(super) fn groups_with_group() -> MockGroupStore {
    let mut g = MockGroupStore::new();
    g.expect_group()
        .withf(|s, id| *s == scope() && *id == group_id())
        .times(1)
        .returning(|_, _| Ok(group()));
    g
}

/// A valid member.
pub(super) fn member(ext: &str) -> CensusMember {
    CensusMember::new(ext, date!(1980 - 01 - 01), "60601")
}

pub(super) fn with_email(ext: &str, email: &str) -> CensusMember {
    let mut m = member(ext);
    m.email = Some(email.to_owned());
    m
}

pub(super) fn with_zip(ext: &str, zip: &str) -> CensusMember {
    let mut m = member(ext);
    zip.clone_into(&mut m.zip);
    m
}

/// A member who sends an age instead of a date of birth.
pub(super) fn age_only(ext: &str) -> CensusMember {
    let mut m = member(ext);
    m.dob = None;
    m.age = Some(44);
    m
}

pub(super) fn outcome(member_count: u32) -> CensusOutcome {
    CensusOutcome { member_count }
}

pub(super) fn service(
    census: MockCensusStore,
    groups: MockGroupStore,
    clock: MockClock,
    entropy: MockEntropy,
) -> Census {
    over(census, groups, clock, entropy, NoWorker)
}

/// The service over these ports (no quote or job is touched).
pub(super) fn over(
    census: MockCensusStore,
    groups: MockGroupStore,
    clock: MockClock,
    entropy: MockEntropy,
    waker: impl JobWaker + 'static,
) -> Census {
    Census::new(RecordPorts {
        groups: Arc::new(groups),
        census: Arc::new(census),
        quotes: Arc::new(MockQuoteStore::new()),
        jobs: Arc::new(MockJobStore::new()),
        clock: Arc::new(clock),
        entropy: Arc::new(entropy),
        waker: Arc::new(waker),
    })
}

/// A census store expecting exactly one write in `scope()`, recording it
/// and answering `member_count`.
pub(super) fn recording_census(
    member_count: u32,
) -> (MockCensusStore, Arc<Mutex<Vec<CensusWrite>>>) {
    let writes: Arc<Mutex<Vec<CensusWrite>>> = Arc::default();
    let sink = Arc::clone(&writes);
    let mut c = MockCensusStore::new();
    c.expect_replace_census()
        .withf(|s, _| *s == scope())
        .times(1)
        .returning(move |_, w| {
            sink.lock().unwrap().push(w.clone());
            Ok(outcome(member_count))
        });
    (c, writes)
}

/// A census store that must not be written.
pub(super) fn untouched_census() -> MockCensusStore {
    let mut c = MockCensusStore::new();
    c.expect_replace_census().never();
    c
}

pub(super) fn only_write(writes: &Arc<Mutex<Vec<CensusWrite>>>) -> CensusWrite {
    let writes = writes.lock().unwrap();
    assert_eq!(writes.len(), 1, "exactly one store write");
    writes[0].clone()
}

pub(super) fn payload(write: &CensusWrite) -> serde_json::Value {
    match &write.job.as_ref().unwrap().payload {
        JobPayload::MarketComparison(counts) => serde_json::to_value(counts).unwrap(),
        other => panic!("not a market comparison: {other:?}"),
    }
}

pub(super) fn fields(errors: &[FieldError]) -> Vec<&str> {
    errors.iter().map(|e| e.field.as_str()).collect()
}

pub(super) fn ok_rows(members: &[CensusMember]) -> Vec<RowInput> {
    members.iter().cloned().map(Ok).collect()
}

pub(super) fn down() -> StoreError {
    StoreError::Unavailable(Box::new(std::io::Error::other("connection refused")))
}

mod limits_and_retries;
mod rows;
mod writes;
