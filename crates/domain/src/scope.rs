//! The partner-and-mode scope every read and write of partner data carries.
//!
//! **Architecture invariant:** storage ports take a [`Scope`] on every
//! method that touches a partner's resources, so a query that forgets the
//! partner or the mode cannot be written against the port. A resource of
//! another partner or of the other mode is simply not found.

use crate::ids::PartnerId;
use crate::mode::Mode;

/// The caller's partner and the mode of its key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Scope {
    /// The partner the key belongs to.
    pub partner: PartnerId,
    /// The key's mode.
    pub mode: Mode,
}

impl Scope {
    /// A scope.
    #[must_use]
    pub fn new(partner: PartnerId, mode: Mode) -> Self {
        Self { partner, mode }
    }
}
