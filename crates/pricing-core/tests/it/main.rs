//! Integration tests of `pricing-core`: the invariants of the pricing model
//! (section 9 of `pricing-model.md`) as property tests, the determinism of
//! the engine (sections 1 and 5), and the worked example of
//! `docs/pricing.md` reproduced to the cent, and pricing at the money
//! maxima without overflow.

mod determinism;
mod generators;
mod invariants;
mod money_limits;
mod support;
mod worked_example;
