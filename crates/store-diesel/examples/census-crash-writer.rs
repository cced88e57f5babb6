//! Child process of the census crash test (`tests/it/crash.rs`): writes one
//! deterministic 10,000-member census to a group and is killed with SIGKILL
//! by the test at a random moment.
//!
//! Usage: `census-crash-writer <database-url> <partner-id> <group-id> <generation>`
//! (test mode). The census of generation `g` holds external ids
//! `E{2500g}` to `E{2500g + 9999}`, so consecutive generations share three
//! quarters of their members, and its emails, ZIPs and ages depend on `g`.
//!
//! Protocol on stdout, one line each:
//! - `ready <fingerprint> <job-id> <members>` once the census is built and a
//!   pooled connection is open, just before the replace starts;
//! - `done <microseconds>` after the replace committed, with its duration.
//!
//! It then waits for stdin to close and exits, so a parent that dies
//! leaves no writer behind. On an error it prints one line on stderr and
//! exits with status 1.

use std::io::{Read as _, Write as _};
use std::process::ExitCode;
use std::time::Instant;

use domain::census::{CensusWrite, rating_digest};
use domain::document::JobPayload;
use domain::document::job::CensusCounts;
use domain::ids::{GroupId, JobId, MemberId, PartnerId};
use domain::job::NewJob;
use domain::mode::Mode;
use domain::scope::Scope;
use pricing_core::census::CensusMember;
use store_diesel::{Database, Stores};

/// Members per census.
const MEMBERS: u32 = 10_000;
/// How far the external ids of consecutive generations move.
const STEP: u32 = 2_500;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("census-crash-writer: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, partner, group, generation] = args.as_slice() else {
        return Err(
            "usage: census-crash-writer <database-url> <partner-id> <group-id> <generation>"
                .to_owned(),
        );
    };
    let db = Database::parse(url).map_err(|e| e.to_string())?;
    let scope = Scope::new(
        PartnerId::parse(partner).map_err(|e| e.to_string())?,
        Mode::Test,
    );
    let group = GroupId::parse(group).map_err(|e| e.to_string())?;
    let generation: u32 = generation
        .parse()
        .map_err(|e| format!("generation {generation:?}: {e}"))?;
    let write = census_write(&scope, &group, generation)?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("runtime: {e}"))?;
    runtime.block_on(async {
        let stores = Stores::open(&db, 2).map_err(|e| e.to_string())?;
        // Open the connection now, so the replace starts right after `ready`.
        stores.health.ping().await.map_err(|e| e.to_string())?;
        let job = write.job.as_ref().map_or("-", |j| j.id.as_str());
        say(&format!(
            "ready {} {job} {}",
            fingerprint(&write.rows)?,
            write.rows.len()
        ))?;
        let started = Instant::now();
        stores
            .census
            .replace_census(&scope, &write)
            .await
            .map_err(|e| format!("replace_census: {e}"))?;
        say(&format!("done {}", started.elapsed().as_micros()))
    })?;
    drop(runtime);
    // Wait to be killed, or for the parent to go away.
    let mut sink = Vec::new();
    std::io::stdin()
        .read_to_end(&mut sink)
        .map_err(|e| format!("stdin: {e}"))?;
    Ok(())
}

/// Prints one line and flushes it.
fn say(line: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")
        .and_then(|()| out.flush())
        .map_err(|e| format!("stdout: {e}"))
}

/// The census write of `generation`: members, fresh ids and the job all
/// derived from it, so every generation's ids are distinct.
fn census_write(scope: &Scope, group: &GroupId, generation: u32) -> Result<CensusWrite, String> {
    let [top, g2, g1, g0] = generation.to_be_bytes();
    if top != 0 {
        return Err(format!("generation {generation} is too large"));
    }
    let first = generation
        .checked_mul(STEP)
        .ok_or_else(|| format!("generation {generation} is too large"))?;
    let rows: Vec<CensusMember> = (0..MEMBERS)
        .map(|k| member(first.saturating_add(k), generation))
        .collect();
    let fresh_ids = (0..MEMBERS)
        .map(|k| {
            let [_, _, k1, k0] = k.to_be_bytes();
            MemberId::from_bytes([0xc0, g2, g1, g0, k1, k0])
        })
        .collect();
    let now = 1_700_000_000_i64.saturating_add(i64::from(generation));
    Ok(CensusWrite {
        group_id: group.clone(),
        rating_digest: rating_digest(&rows),
        rows,
        fresh_ids,
        job: Some(NewJob {
            id: JobId::from_bytes([0xc1, g2, g1, g0, 0, 1]),
            scope: scope.clone(),
            group_id: Some(group.clone()),
            payload: JobPayload::MarketComparison(CensusCounts::default()),
            run_after_ms: now.saturating_mul(1000),
        }),
        now,
    })
}

/// Member `i` as generation `generation` sends it.
fn member(i: u32, generation: u32) -> CensusMember {
    let mix = i.wrapping_mul(7).wrapping_add(generation.wrapping_mul(13));
    CensusMember {
        external_id: Some(format!("E{i}")),
        first_name: Some(format!("Member{i}")),
        last_name: Some(format!("Gen{generation}")),
        email: Some(format!("m{i}.g{generation}@crash.example")),
        dob: None,
        age: Some(21 + mix % 44),
        zip: format!("{:05}", 60_000 + mix % 1_000),
        sex_at_birth: None,
        employment_type: None,
        hire_date: None,
        status: None,
        dependents: Some(Vec::new()),
    }
}

/// SHA-256 (hex) of the members as JSON, one per line, in order. The crash
/// test computes the same over the census it reads back.
fn fingerprint(rows: &[CensusMember]) -> Result<String, String> {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    for m in rows {
        let json = serde_json::to_string(m).map_err(|e| format!("member JSON: {e}"))?;
        ctx.update(json.as_bytes());
        ctx.update(b"\n");
    }
    Ok(hex::encode(ctx.finish().as_ref()))
}
