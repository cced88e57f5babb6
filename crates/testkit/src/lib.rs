//! Test kit: builders for census members, plans and rate cards, and harnesses
//! shared by the integration tests of the other crates.
//!
//! Empty in this release; `pricing-core` keeps its test helpers next to its
//! tests until a second crate needs them.
