//! Domain layer of the Partner Benefits Pricing and Enrollment API.
//!
//! This crate holds the rules that do not depend on storage or transport:
//! typed identifiers, modes and scopes, the entities (partners, API keys,
//! groups, census members, quotes, enrollments, elections, embed sessions,
//! webhook endpoints, events, idempotency records, rate-limit windows and
//! background jobs), their state machines and validation rules, the port
//! traits the outside world implements ([`ports`], [`store`]) and the
//! use-case services the HTTP adapter and the CLI call ([`services`]).
//!
//! **Architecture invariant:** nothing here performs I/O or names a
//! database, HTTP or runtime type; services reach the world only through
//! the ports, which carry `mockall` mocks (feature `mock`).

pub mod account;
pub mod api_key;
pub mod census;
pub mod document;
pub mod election;
pub mod email;
pub mod embed;
pub mod enrollment;
pub mod error;
pub mod event;
pub mod group;
pub mod idempotency;
pub mod ids;
pub mod job;
pub mod member;
pub mod mode;
pub mod onboarding;
pub mod page;
pub mod partner;
pub mod partner_user;
pub mod plans;
pub mod portal;
pub mod ports;
pub mod quote;
pub mod rate_limit;
pub mod scope;
pub mod services;
pub mod store;
pub mod text;
pub mod webhook;

pub use error::{DomainError, FieldError};
pub use mode::Mode;
pub use scope::Scope;
