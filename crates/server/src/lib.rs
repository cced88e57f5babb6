//! The `partner-api` binary's library: configuration, the production
//! adapters of the domain's ports, and the subcommands. `main.rs` only
//! parses the command line and dispatches here; this crate is the one
//! place where every adapter meets (the composition root).
//!
//! - [`config`]: typed [`config::Settings`] from defaults, a TOML file,
//!   `PARTNER_API_*` variables and flags, validated at load.
//! - [`system`]: the system clock, OS entropy, the sealer of secrets at
//!   rest, and the services built over them.
//! - [`compose`]: the composition root — [`compose::Services`] builds
//!   every service, the HTTP application's state, the job worker and the
//!   webhook dispatcher, for `serve`, the operator commands and the tests.
//! - [`mail`]: the outbound email port from `[email]`.
//! - [`operator`]: `partner …`, `key …`, `quote finalize` and
//!   `group go-live`.
//! - [`listener`]: the HTTP/1.1 listener, whose protocol-level error
//!   answers carry the envelope too.
//! - [`migrate`], [`price`], [`serve`]: the other subcommands; [`heartbeat`]
//!   keeps a serving process registered as live, and [`purge`] deletes
//!   the idempotency keys past their replay window.

pub mod compose;
pub mod config;
pub mod deliver;
pub mod dispatch;
pub mod heartbeat;
pub mod jobs;
pub mod listener;
pub mod mail;
pub mod migrate;
pub mod operator;
pub mod price;
pub mod purge;
pub mod serve;
pub mod system;
pub mod verifiers;
