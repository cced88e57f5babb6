//! Benchmarks (written below).
fn main() {}
