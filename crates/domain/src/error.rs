//! Domain errors, in the specification's vocabulary.

/// One failing field, in the specification's `details` shape (shared with
/// the pricing engine). `field` is a snake_case path; adapters re-case it
/// for camelCase callers.
pub use pricing_core::error::FieldError;

/// Why a domain rule refused an operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DomainError {
    /// Input broke validation rules.
    #[error("invalid request: {} field(s) failed", .0.len())]
    Invalid(Vec<FieldError>),
    /// A state transition that the state machine does not allow.
    #[error("cannot move from {from} to {to}")]
    Transition {
        /// Current state.
        from: &'static str,
        /// Requested state.
        to: &'static str,
    },
}
