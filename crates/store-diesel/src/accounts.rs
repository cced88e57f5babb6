//! What the employer portal (`ops/portal.rs`) and the partner portal
//! (`ops/partner_users.rs`) do alike on their parallel tables: an account
//! table (an email, a password and a lockout a row), its set-password links
//! (keyed by `token_hash`, each naming an account) and its sessions (keyed
//! by `id_hash`, each naming an account or none). Each macro takes the
//! tables' `schema` modules and expands in a backend's query code, against
//! its `Conn` and `write_tx!` (shared by both backends).

/// The accounts of `$accounts` (rows read as `$Row`) with the address
/// `$email`, newest first, read on `$conn`; as the whole body of a method
/// returning `StoreResult<Vec<…>>`.
macro_rules! accounts_by_email {
    ($conn:expr, $accounts:ident, $Row:ident, $email:expr) => {{
        use diesel::{ExpressionMethods as _, QueryDsl as _, SelectableHelper as _};
        use diesel_async::RunQueryDsl as _;
        let rows: Vec<$Row> = $accounts::table
            .filter($accounts::email.eq($email))
            .order($accounts::created_at.desc())
            .select($Row::as_select())
            .load($conn)
            .await
            .map_err($crate::error::db)?;
        rows.into_iter().map($Row::into_domain).collect()
    }};
}

/// Inside a write transaction on `$c`: applies the `LinkUse` `$link` at
/// `$now`: uses its link of `$links` (whose column `$link_owner` names the
/// account), sets its password on that account of `$accounts` (clearing
/// its lockout) and ends the account's sessions of `$sessions` (whose
/// column `$session_owner` names the account) and the session it replaces.
/// Returns from the enclosing transaction with `NotFound` for an unknown
/// link and `Conflict::LinkUsed` for a used or superseded one.
macro_rules! use_link {
    (
        $c:expr,
        $links:ident . $link_owner:ident,
        $accounts:ident,
        $sessions:ident . $session_owner:ident,
        $link:expr,
        $now:expr
    ) => {{
        use diesel::{
            BoolExpressionMethods as _, ExpressionMethods as _, OptionalExtension as _,
            QueryDsl as _,
        };
        use diesel_async::RunQueryDsl as _;
        use domain::store::{Conflict, StoreError};
        let owner: Option<String> = $links::table
            .filter($links::token_hash.eq(&$link.token_hash))
            .select($links::$link_owner)
            .first($c)
            .await
            .optional()?;
        let Some(owner) = owner else {
            return Err($crate::error::TxError::Store(StoreError::NotFound));
        };
        // Only an unused, newest link: the update is the check.
        let used = diesel::update(
            $links::table
                .filter($links::token_hash.eq(&$link.token_hash))
                .filter($links::used_at.is_null())
                .filter($links::superseded_at.is_null()),
        )
        .set($links::used_at.eq($now))
        .execute($c)
        .await?;
        if used == 0 {
            return Err($crate::error::TxError::Store(StoreError::Conflict(
                Conflict::LinkUsed,
            )));
        }
        diesel::update($accounts::table.find(&owner))
            .set((
                $accounts::password_hash.eq(&$link.password_hash),
                $accounts::failures.eq(""),
                $accounts::locked_until.eq(None::<i64>),
            ))
            .execute($c)
            .await?;
        // A new password ends every session of the account.
        diesel::delete(
            $sessions::table.filter(
                $sessions::$session_owner
                    .eq(&owner)
                    .or($sessions::id_hash.eq($link.replaces.as_deref().unwrap_or_default())),
            ),
        )
        .execute($c)
        .await?;
    }};
}

/// Inside a write transaction on `$c`: stores `$lockout` (its failures
/// stored as `$failures`) on the account `$key` of `$accounts`; returns
/// from the enclosing transaction with `NotFound` when there is none.
macro_rules! save_lockout {
    ($c:expr, $accounts:ident, $key:expr, $lockout:expr, $failures:expr) => {{
        use diesel::{ExpressionMethods as _, QueryDsl as _};
        use diesel_async::RunQueryDsl as _;
        let n = diesel::update($accounts::table.find($key))
            .set((
                $accounts::failures.eq($failures),
                $accounts::locked_until.eq($lockout.locked_until),
            ))
            .execute($c)
            .await?;
        if n == 0 {
            return Err($crate::error::TxError::Store(
                domain::store::StoreError::NotFound,
            ));
        }
    }};
}

/// Inside a write transaction on `$c`: ends the session `$id_hash` of
/// `$sessions` (if it exists).
macro_rules! end_session {
    ($c:expr, $sessions:ident, $id_hash:expr) => {{
        use diesel::QueryDsl as _;
        use diesel_async::RunQueryDsl as _;
        diesel::delete($sessions::table.find($id_hash))
            .execute($c)
            .await?;
    }};
}

/// The session methods both stores share over their `$sessions` table,
/// each one write transaction of `$store`, as the whole body of the
/// method: `touch` marks the session `$id_hash` seen at `$now`, `end` ends
/// it, and `purge` ends the sessions idle since `$idle_before` or begun
/// before `$started_before`, answering how many.
macro_rules! sessions {
    (touch $store:expr, $sessions:ident, $id_hash:expr, $now:expr) => {{
        use diesel::{ExpressionMethods as _, QueryDsl as _};
        use diesel_async::RunQueryDsl as _;
        write_tx!($store, async |c: &mut Conn| {
            diesel::update($sessions::table.find($id_hash))
                .set($sessions::seen_at.eq($now))
                .execute(c)
                .await?;
            Ok::<_, $crate::error::TxError>(())
        })
        .await?;
        Ok(())
    }};
    (end $store:expr, $sessions:ident, $id_hash:expr) => {{
        write_tx!($store, async |c: &mut Conn| {
            end_session!(c, $sessions, $id_hash);
            Ok::<_, $crate::error::TxError>(())
        })
        .await?;
        Ok(())
    }};
    (purge $store:expr, $sessions:ident, $idle_before:expr, $started_before:expr) => {{
        use diesel::{BoolExpressionMethods as _, ExpressionMethods as _, QueryDsl as _};
        use diesel_async::RunQueryDsl as _;
        let n = write_tx!($store, async |c: &mut Conn| {
            let n = diesel::delete(
                $sessions::table.filter(
                    $sessions::seen_at
                        .lt($idle_before)
                        .or($sessions::created_at.lt($started_before)),
                ),
            )
            .execute(c)
            .await?;
            Ok::<_, $crate::error::TxError>(n)
        })
        .await?;
        Ok(u64::try_from(n).unwrap_or(u64::MAX))
    }};
}
