//! Integration tests of the `partner-api` binary: each test runs the real
//! executable with `std::process::Command` on JSON files and checks its exit
//! code, its one-line errors and the invariants of the JSON it prints.

#![expect(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "test code fails loudly on a broken expectation"
)]

mod browser;
mod cli;
mod cli_users;
mod common;
mod dead_process;
mod embed_browser;
mod errors;
mod http;
mod partner_browser;
mod portal_browser;
mod price_on_plan;
mod purge;
mod quote;
mod scale;
mod sdk;
mod serve;
mod webhooks_serve;
mod wire;
