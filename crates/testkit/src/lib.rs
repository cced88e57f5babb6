//! Test kit: harnesses shared by the integration tests of the other crates.
//!
//! [`db`] gives each test an isolated, migrated database: a fresh SQLite
//! file, or a fresh PostgreSQL database (dropped afterwards) when
//! `PARTNER_API_TEST_POSTGRES_URL` names a server.

#![expect(
    clippy::expect_used,
    reason = "test support fails loudly on a broken environment"
)]

pub mod db;
