//! Domain errors, in the specification's vocabulary.

use serde::Serialize;

/// One failing field, in the specification's `details` shape. `field` is a
/// snake_case path; adapters re-case it for camelCase callers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    /// Path of the failing field.
    pub field: String,
    /// Human-readable reason, lowercase.
    pub message: String,
}

impl FieldError {
    /// A field error.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

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
