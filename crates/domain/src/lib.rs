//! Domain layer of the Partner Benefits Pricing and Enrollment API.
//!
//! This crate will hold the entities (partner, API key, group, census member,
//! quote, enrollment, election, webhook endpoint, event), their state machines,
//! the validation rules of the specification and the use-case services, together
//! with the port traits (storage, notifier, clock, ids) that adapters implement.
//!
//! It is intentionally empty in this release: the pricing engine
//! (`pricing-core`) is the first capability; the domain layer arrives with the
//! persistence work and nothing here pretends to work before then.
