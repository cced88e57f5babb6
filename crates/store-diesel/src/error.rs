//! Translation of diesel and pool errors into the storage port's errors, at
//! the adapter boundary: no diesel type crosses into a port signature.

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use domain::store::{Conflict, StoreError};

/// The error type inside a transaction: a database error, or a rule the
/// transaction found broken (which rolls it back).
#[derive(Debug)]
pub(crate) enum TxError {
    /// From diesel.
    Db(DieselError),
    /// A port-level outcome decided inside the transaction.
    Store(StoreError),
}

impl From<DieselError> for TxError {
    fn from(e: DieselError) -> Self {
        Self::Db(e)
    }
}

impl From<StoreError> for TxError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

impl From<TxError> for StoreError {
    fn from(e: TxError) -> Self {
        match e {
            TxError::Db(e) => db(e),
            TxError::Store(e) => e,
        }
    }
}

/// Maps a diesel error: a missing row is `NotFound`, a unique violation a
/// conflict (an id collision unless a known index names another rule), a
/// closed connection `Unavailable`, anything else `Internal`.
pub(crate) fn db(e: DieselError) -> StoreError {
    match e {
        DieselError::NotFound => StoreError::NotFound,
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
            let text = format!(
                "{} {}",
                info.constraint_name().unwrap_or_default(),
                info.message()
            );
            if text.contains("groups_domain_held") || text.contains("groups.mode, groups.domain") {
                StoreError::Conflict(Conflict::DomainTaken)
            } else if text.contains("api_keys_one_live") || text.contains("api_keys.partner_id") {
                StoreError::Conflict(Conflict::LiveKeyActive)
            } else if text.contains("enrollments_group_id") || text.contains("enrollments.group_id")
            {
                StoreError::Conflict(Conflict::AlreadyEnrolled)
            } else if text.contains("partner_users_email") || text.contains("partner_users.email") {
                StoreError::Conflict(Conflict::UserTaken)
            } else {
                StoreError::Conflict(Conflict::IdTaken)
            }
        }
        // diesel-async reports a PostgreSQL connection lost mid-query as
        // `UnableToSendCommand`; a server shutting down as 57P01.
        DieselError::DatabaseError(
            DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
            _,
        )
        | DieselError::BrokenTransactionManager => StoreError::Unavailable(Box::new(e)),
        DieselError::DatabaseError(_, ref info)
            if info.message().starts_with("terminating connection") =>
        {
            StoreError::Unavailable(Box::new(e))
        }
        other => StoreError::Internal(Box::new(other)),
    }
}

/// What a write of one row answers from the count `n` of rows it changed:
/// `NotFound` when there was no row to change.
pub(crate) fn found(n: usize) -> Result<(), StoreError> {
    if n == 0 {
        Err(StoreError::NotFound)
    } else {
        Ok(())
    }
}

/// A value read back from the database that the domain does not accept
/// (a corrupt row).
pub(crate) fn corrupt(what: &str, value: &str) -> StoreError {
    StoreError::Internal(format!("corrupt {what} in the database: {value:?}").into())
}

/// Maps a pool error: the database could not be reached.
pub(crate) fn pool<E: std::error::Error + Send + Sync + 'static>(e: E) -> StoreError {
    StoreError::Unavailable(Box::new(e))
}

/// Maps a failed health query: the database is unavailable.
pub(crate) fn unavailable(e: DieselError) -> StoreError {
    StoreError::Unavailable(Box::new(e))
}
