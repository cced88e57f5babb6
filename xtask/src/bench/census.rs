//! The census row of `cargo xtask bench http`: `PUT
//! /v1/groups/{id}/census` of 10,000 members (every field, one dependent
//! each), against a raw bulk insert of the same rows — the rows the server
//! stored, dumped and written back in one transaction that first deletes
//! them, as one multi-row `INSERT` with `sqlite3`, or with `COPY` through
//! `psql`. The raw side pays a client process's start; the server's side
//! pays HTTP, JSON, validation and the census's normalisation. Each side's
//! median of [`ROUNDS`]; between two `PUT`s the run waits for the market
//! comparison the previous one started, so it does not share the cores.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

use super::sql;
use crate::reliability::fixtures;
use crate::reliability::harness::{Backend, Ctx, Db};
use crate::reliability::http::Client;

/// Timed runs of each side.
const ROUNDS: usize = 3;

/// The medians of both sides.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Census {
    /// Members per write.
    pub members: usize,
    /// `PUT /v1/groups/{id}/census`.
    pub put: Duration,
    /// The raw bulk insert.
    pub raw: Duration,
}

/// Measures both sides on `db`.
pub(crate) fn measure(
    ctx: &Ctx,
    db: &Db,
    client: &Client,
    members: usize,
) -> anyhow::Result<Census> {
    let group = fixtures::group(ctx, client)?;
    let path = format!("/v1/groups/{group}/census");
    let mut puts = Vec::with_capacity(ROUNDS);
    for round in 0..ROUNDS {
        // Fresh external ids each round: every member is replaced.
        let list: Vec<Value> = (0..members)
            .map(|i| fixtures::member(ctx, &format!("r{round}-{i}")))
            .collect();
        let body = json!({ "members": list }).to_string().into_bytes();
        let started = Instant::now();
        let answer = client.send("PUT", &path, &[], Some(("application/json", &body)))?;
        puts.push(started.elapsed());
        if answer.status != 200 {
            bail!("PUT census answered {}", answer.brief());
        }
        // The comparison it started, finished before the next write.
        fixtures::quote(client, &group)?;
    }
    let scratch = ctx.dir.join(format!("census-{}", db.backend));
    std::fs::create_dir_all(&scratch)?;
    let script = raw_script(db, &group, &scratch)?;
    let mut raws = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        raws.push(run_raw(db, &script)?);
    }
    Ok(Census {
        members,
        put: median(puts),
        raw: median(raws),
    })
}

/// Dumps the group's stored members and writes the script that deletes
/// and inserts them back in one transaction.
fn raw_script(db: &Db, group: &str, scratch: &Path) -> anyhow::Result<std::path::PathBuf> {
    let script = scratch.join("raw.sql");
    let delete = format!("DELETE FROM members WHERE group_id = '{group}';");
    match db.backend {
        Backend::Sqlite => {
            let out = Command::new("sqlite3")
                .args(["-cmd", ".mode quote"])
                .arg(&db.name)
                .arg(format!(
                    "SELECT * FROM members WHERE group_id = '{group}' ORDER BY position"
                ))
                .output()
                .context("cannot run sqlite3 (apt-get install sqlite3)")?;
            if !out.status.success() {
                bail!("sqlite3 failed: {}", String::from_utf8_lossy(&out.stderr));
            }
            let rows: Vec<String> = String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(|l| format!("({l})"))
                .collect();
            std::fs::write(
                &script,
                format!(
                    "BEGIN IMMEDIATE;\n{delete}\nINSERT INTO members VALUES\n{};\nCOMMIT;\n",
                    rows.join(",\n")
                ),
            )?;
        }
        Backend::Postgres => {
            let data = scratch.join("members.copy");
            sql(
                db,
                &format!(
                    "\\copy (SELECT * FROM members WHERE group_id = '{group}' ORDER BY position) TO '{}'",
                    data.display()
                ),
            )?;
            std::fs::write(
                &script,
                format!("{delete}\n\\copy members FROM '{}'\n", data.display()),
            )?;
        }
    }
    Ok(script)
}

/// Runs the raw script once; its wall time.
fn run_raw(db: &Db, script: &Path) -> anyhow::Result<Duration> {
    let mut cmd = match db.backend {
        Backend::Sqlite => {
            let mut c = Command::new("sqlite3");
            c.args(["-bail", "-cmd", ".timeout 30000"])
                .arg(&db.name)
                .arg(format!(".read {}", script.display()));
            c
        }
        Backend::Postgres => {
            let mut c = Command::new("psql");
            // `-1`: the whole file in one transaction.
            c.args([
                "-X",
                "-q",
                "-1",
                "-v",
                "ON_ERROR_STOP=1",
                "-d",
                &db.url,
                "-f",
            ])
            .arg(script);
            c
        }
    };
    let started = Instant::now();
    let out = cmd.output().context("cannot run the raw insert")?;
    let took = started.elapsed();
    if !out.status.success() {
        bail!(
            "the raw insert failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(took)
}

/// The median of a few durations.
fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values.get(values.len() / 2).copied().unwrap_or_default()
}
