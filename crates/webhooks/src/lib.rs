//! Webhooks: Standard Webhooks signing and verification, and the dispatcher
//! that delivers the durable event outbox.
//!
//! Empty in this release; no events are produced or delivered yet.
