//! The storage suite: one behavioural test per guarantee, run against
//! SQLite always and PostgreSQL when `PARTNER_API_TEST_POSTGRES_URL` is set.
//!
//! The behaviour functions run under a macro-generated `#[test]` per
//! backend, so clippy does not see them as tests.

#![expect(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "test code fails loudly on a broken expectation"
)]

mod harness;

mod census;
mod crash;
mod documents;
mod filters;
mod groups;
mod idempotency;
mod jobs;
mod lookups;
mod migrations;
mod onboarding;
mod outbox;
mod partner_users;
mod partners;
mod portal;
mod rate_limits;
mod recorded;
