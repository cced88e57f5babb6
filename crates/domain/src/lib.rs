//! Domain layer of the Partner Benefits Pricing and Enrollment API.
//!
//! This crate holds the rules that do not depend on storage or transport:
//! typed identifiers, modes, API keys, partners and their capabilities, and
//! the state machines of groups, provisioned companies and quotes, with the
//! validation rules of the specification and the contract.
//!
//! The clock and entropy ports are here, with `mockall` mocks and the
//! minting of ids and keys on top of them.
//!
//! Still to come (with the persistence work): the remaining entities
//! (census members, enrollments, elections, webhook endpoints, events,
//! idempotency records, rate-limit windows, jobs), the storage and outbox
//! ports and the use-case services.

pub mod api_key;
pub mod error;
pub mod group;
pub mod ids;
pub mod mode;
pub mod partner;
pub mod ports;
pub mod quote;

pub use error::{DomainError, FieldError};
pub use mode::Mode;
