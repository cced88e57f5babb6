//! Unit tests of the events service: the 30-day window on lists and reads.

use super::*;
use crate::document::EventData;
use crate::event::{DeliveryState, EventType, NewEvent};
use crate::ids::PartnerId;
use crate::mode::Mode;
use crate::page::PageRequest;
use crate::ports::MockClock;
use crate::store::{MockOutboxStore, StoreError};

const NOW: i64 = 1_795_266_840;

fn scope() -> Scope {
    Scope::new(PartnerId::from_bytes([1; 6]), Mode::Test)
}

fn clock() -> Arc<MockClock> {
    let mut c = MockClock::new();
    c.expect_now_ms().returning(|| NOW * 1000);
    Arc::new(c)
}

fn stored(created_at: i64) -> Event {
    Event {
        event: NewEvent {
            id: EventId::from_bytes([2; 6]),
            scope: scope(),
                        created_at,
            data: EventData::from_stored(
                EventType::QuoteFinalized,
                r#"{"quoteId": "qt_020202020202", "groupId": "grp_020202020202", "status": "ready"}"#,
            )
            .unwrap(),
        },
        state: DeliveryState::Delivered,
        attempts: 1,
        next_attempt_at: None,
        last_status: Some(200),
        lease_until_ms: None,
    }
}

#[tokio::test]
async fn lists_ask_for_the_last_30_days() {
    let mut outbox = MockOutboxStore::new();
    outbox
        .expect_events()
        .withf(|s, f, p| {
            *s == scope() && *f == EventFilter::since(NOW - 30 * 86_400) && p.limit == 50
        })
        .times(1)
        .returning(|_, _, _| Ok(Page::from_rows(vec![stored(NOW)], 50, |_| unreachable!())));
    let page = Events::new(Arc::new(outbox), clock())
        .list(&scope(), &EventFilter::default(), &PageRequest::first(50))
        .await
        .unwrap();
    assert_eq!(page.items, vec![stored(NOW)]);
}

#[tokio::test]
async fn a_filter_keeps_its_window_and_types_within_the_30_days() {
    let asked = EventFilter {
        since: NOW - 3_600,
        until: Some(NOW - 60),
        types: vec![EventType::EnrollmentCreated],
    };
    let expected = asked.clone();
    let mut outbox = MockOutboxStore::new();
    outbox
        .expect_events()
        .withf(move |_, f, _| *f == expected)
        .times(1)
        .returning(|_, _, _| Ok(Page::from_rows(Vec::new(), 50, |_| unreachable!())));
    let events = Events::new(Arc::new(outbox), clock());
    events
        .list(&scope(), &asked, &PageRequest::first(50))
        .await
        .unwrap();
    // A window reaching further back than 30 days starts at the 30 days.
    let mut outbox = MockOutboxStore::new();
    outbox
        .expect_events()
        .withf(|_, f, _| f.since == NOW - 30 * 86_400 && f.until == Some(NOW))
        .times(1)
        .returning(|_, _, _| Ok(Page::from_rows(Vec::new(), 50, |_| unreachable!())));
    let old = EventFilter {
        since: 0,
        until: Some(NOW),
        types: Vec::new(),
    };
    Events::new(Arc::new(outbox), clock())
        .list(&scope(), &old, &PageRequest::first(50))
        .await
        .unwrap();
}

#[tokio::test]
async fn an_event_older_than_30_days_is_not_found() {
    for (created_at, found) in [(NOW - 30 * 86_400, true), (NOW - 30 * 86_400 - 1, false)] {
        let mut outbox = MockOutboxStore::new();
        outbox
            .expect_event()
            .returning(move |_, _| Ok(stored(created_at)));
        let got = Events::new(Arc::new(outbox), clock())
            .get(&scope(), &EventId::from_bytes([2; 6]))
            .await;
        assert_eq!(got.is_ok(), found, "{created_at}: {got:?}");
    }
    let mut outbox = MockOutboxStore::new();
    outbox
        .expect_event()
        .returning(|_, _| Err(StoreError::NotFound));
    let got = Events::new(Arc::new(outbox), clock())
        .get(&scope(), &EventId::from_bytes([2; 6]))
        .await;
    assert!(matches!(got, Err(ServiceError::NotFound)));
}
