//! `finalize` and `finalize_any` of an `in_review` quote against the port mocks.

use super::*;

// ---------------------------------------------------------------------------
// finalize
// ---------------------------------------------------------------------------

fn stored_quote(sc: &Scope, status: QuoteStatus) -> Quote {
    Quote {
        acceptance: None,
        kind: QuoteKind::Quote,
        request_digest: None,
        id: quote_id(),
        scope: sc.clone(),
        group_id: group_id(),
        status,
        rating_digest: Some("d1".to_owned()),
        expires_at: NOW + 86_400,
        body: crate::document::fixtures::market_document(),
        created_at: NOW - 60,
    }
}

/// A quote store holding `quote` in its scope that expects one update to
/// `ready` with exactly one `quote.finalized` event.
fn finalizing_store(quote: Quote) -> MockQuoteStore {
    let mut store = MockQuoteStore::new();
    let (sc, q) = (quote.scope.clone(), quote.clone());
    store
        .expect_quote()
        .withf(move |s, id| *s == sc && *id == quote_id())
        .times(1)
        .return_once(move |_, _| Ok(q));
    let sc = quote.scope.clone();
    store
        .expect_update_quote()
        .withf(move |s, id, status, body, events| {
            *s == sc
                && *id == quote_id()
                && *status == QuoteStatus::Ready
                && *body == quote.body
                && events.len() == 1
                && events[0].event_type() == EventType::QuoteFinalized
                && events[0].scope == sc
                && events[0].created_at == NOW
                && events[0].data.data()
                    == serde_json::json!({
                        "quote_id": quote_id().as_str(),
                        "group_id": group_id().as_str(),
                        "status": "ready",
                    })
        })
        .times(1)
        .returning(|_, _, _, _, _| Ok(()));
    store
}

fn quotes_only(store: MockQuoteStore) -> Quotes {
    service(
        MockGroupStore::new(),
        MockCensusStore::new(),
        store,
        MockJobStore::new(),
    )
}

#[tokio::test]
async fn finalize_makes_an_in_review_quote_ready_with_one_event() {
    let store = finalizing_store(stored_quote(&scope(), QuoteStatus::InReview));
    let q = quotes_only(store)
        .finalize(&scope(), &quote_id())
        .await
        .unwrap();
    assert_eq!(q.status, QuoteStatus::Ready);
    assert_eq!(q.id, quote_id());
}

#[tokio::test]
async fn only_an_in_review_quote_can_be_finalized() {
    let mut store = MockQuoteStore::new();
    store
        .expect_quote()
        .times(1)
        .returning(|_, _| Ok(stored_quote(&scope(), QuoteStatus::Ready)));
    store.expect_update_quote().never();
    match quotes_only(store).finalize(&scope(), &quote_id()).await {
        Err(e @ ServiceError::Quote(QuoteRefusal::NotInReview { .. })) => {
            assert_eq!(e.code(), Code::Conflict);
            assert!(e.message().contains("the quote is ready"), "{e}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn finalize_any_works_in_the_scope_of_the_quote_found() {
    let live = Scope::new(PartnerId::from_bytes([0xcc; 6]), Mode::Live);
    let found = stored_quote(&live, QuoteStatus::InReview);
    let mut store = finalizing_store(found.clone());
    store
        .expect_find_quote()
        .withf(|id| *id == quote_id())
        .times(1)
        .return_once(move |_| Ok(found));
    let q = quotes_only(store).finalize_any(&quote_id()).await.unwrap();
    assert_eq!((q.scope, q.status), (live, QuoteStatus::Ready));

    let mut store = MockQuoteStore::new();
    store
        .expect_find_quote()
        .times(1)
        .returning(|_| Err(StoreError::NotFound));
    store.expect_quote().never();
    store.expect_update_quote().never();
    let err = quotes_only(store)
        .finalize_any(&quote_id())
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::NotFound), "{err:?}");
}
