//! Domain layer of the Partner Benefits Pricing and Enrollment API.
//!
//! This crate holds the rules that do not depend on storage or transport:
//! typed identifiers, modes, API keys, partners and their capabilities, and
//! the state machines of groups, provisioned companies and quotes, with the
//! validation rules of the specification and the contract.
//!
//! Still to come (with the persistence work): the remaining entities
//! (census members, enrollments, elections, webhook endpoints, events,
//! idempotency records, rate-limit windows, jobs), the port traits
//! (storage with transactions, outbox, clock, ids) and the use-case services.

pub mod api_key;
pub mod error;
pub mod group;
pub mod ids;
pub mod mode;
pub mod partner;
pub mod quote;

pub use error::{DomainError, FieldError};
pub use mode::Mode;
