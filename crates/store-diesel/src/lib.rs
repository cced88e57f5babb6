//! Persistence adapter: implements the domain storage ports with `diesel` and
//! `diesel-async`, on embedded SQLite (the default) and PostgreSQL.
//!
//! Empty in this release; the storage ports it implements do not exist yet.
