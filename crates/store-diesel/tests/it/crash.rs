//! Crash safety of a census replace: a child process
//! (the `census-crash-writer` example, which `cargo test` and nextest build
//! with the tests; it is an example rather than a binary so `cargo run` keeps
//! one binary to run) replacing a 10,000-member census is
//! killed with SIGKILL at a random point, 24 times per backend; after each
//! kill the stored census is exactly the old one or the new one.
//!
//! The writer prints `ready <fingerprint> <job-id> <n>` just before the
//! replace starts (the fingerprint is SHA-256 over the members' JSON, in
//! order) and `done <µs>` once it committed. Three uninterrupted runs come
//! first: generation 0 fills the census, generations 1 and 2 (full
//! replaces of partly overlapping censuses) measure a replace; `T` is the
//! slower of the two. Trial `k` of `N` then kills its writer at a delay
//! drawn from the `k`-th of `N` equal slices of `[0, 2 T]` (xorshift
//! jitter, seeded per trial), so the kill points span the whole write
//! including its commit even when a replace runs slower than measured.
//!
//! After each kill (and, on PostgreSQL, once the server has ended the dead
//! writer's session, so a `COMMIT` already on the wire cannot land after
//! the check) the test reads the census back and requires: its
//! fingerprint is the old or the new census's; the group's member count
//! and rating digest match it; the open market-comparison job is the one
//! written with it; and a writer that printed `done` left the new census.
//! Both outcomes must occur across the trials.

use std::io::{BufRead as _, BufReader, Lines};
use std::os::unix::process::ExitStatusExt as _;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use diesel::sql_types::BigInt;
use diesel_async::{AsyncConnection as _, AsyncPgConnection, RunQueryDsl as _};
use domain::census::rating_digest;
use domain::ids::{GroupId, JobId, PartnerId};
use domain::job::JobKind;
use domain::scope::Scope;
use pricing_core::census::CensusMember;
use store_diesel::{Database, Stores};

use crate::groups::group;
use crate::harness::{TestDb, partner};
use crate::on_both;

/// The writer: `target/<profile>/examples/census-crash-writer`, beside the
/// `deps/` directory this test binary runs from.
fn writer() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(std::path::Path::parent).unwrap();
    let path = profile_dir.join("examples").join("census-crash-writer");
    assert!(
        path.exists(),
        "{} is missing: build it with `cargo build -p store-diesel --examples`",
        path.display()
    );
    path
}
/// The writer's PostgreSQL `application_name`, to find its session.
const APP: &str = "census-crash-writer";
const TRIALS: u32 = 24;
const SIGKILL: i32 = 9;

/// What a writer announced on its `ready` line.
struct Announced {
    fingerprint: String,
    job: JobId,
    members: usize,
}

/// A running writer.
struct Writer {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
    announced: Announced,
}

impl Writer {
    /// Starts a writer for `generation` and waits for its `ready` line.
    fn start(url: &str, partner: &PartnerId, group: &GroupId, generation: u32) -> Self {
        let mut child = Command::new(writer())
            .args([
                url,
                partner.as_str(),
                group.as_str(),
                &generation.to_string(),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let line = match lines.next() {
            Some(Ok(line)) => line,
            other => {
                let status = child.wait().unwrap();
                panic!("writer {generation} gave no ready line ({other:?}, {status})");
            }
        };
        let words: Vec<&str> = line.split(' ').collect();
        let ["ready", fingerprint, job, members] = words.as_slice() else {
            panic!("unexpected line from the writer: {line:?}");
        };
        let announced = Announced {
            fingerprint: (*fingerprint).to_owned(),
            job: JobId::parse(job).unwrap(),
            members: members.parse().unwrap(),
        };
        Self {
            child,
            lines,
            announced,
        }
    }

    /// Lets the write finish; returns the replace's duration.
    fn finish(mut self) -> (Announced, Duration) {
        let line = self.lines.next().unwrap().unwrap();
        let micros = line
            .strip_prefix("done ")
            .unwrap_or_else(|| panic!("unexpected line from the writer: {line:?}"));
        drop(self.child.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "writer: {status}");
        (
            self.announced,
            Duration::from_micros(micros.parse().unwrap()),
        )
    }

    /// SIGKILLs the writer; returns the replace's duration if it had
    /// printed `done`.
    fn kill(mut self) -> (Announced, Option<Duration>) {
        self.child.kill().unwrap();
        let status = self.child.wait().unwrap();
        assert_eq!(
            status.signal(),
            Some(SIGKILL),
            "the writer ended on its own: {status}"
        );
        let done = self.lines.find_map(|l| {
            l.ok()?
                .strip_prefix("done ")
                .map(|m| Duration::from_micros(m.parse().unwrap()))
        });
        (self.announced, done)
    }
}

/// The URL the writer gets: the test database's, with an application name
/// on PostgreSQL.
fn writer_url(db: &Database) -> String {
    match db {
        Database::Sqlite { path } => format!("sqlite://{path}"),
        Database::Postgres { url } => {
            let sep = if url.contains('?') { '&' } else { '?' };
            format!("{url}{sep}application_name={APP}")
        }
    }
}

/// On PostgreSQL, waits until the server has ended every writer session:
/// a killed client's transaction is finished (rolled back, or committed if
/// its `COMMIT` was already sent) only then.
async fn settle(db: &Database) {
    let Database::Postgres { url } = db else {
        return;
    };
    let mut c = AsyncPgConnection::establish(url).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let left: i64 = diesel::select(diesel::dsl::sql::<BigInt>(&format!(
            "(SELECT count(*) FROM pg_stat_activity \
             WHERE datname = current_database() AND application_name = '{APP}')"
        )))
        .get_result(&mut c)
        .await
        .unwrap();
        if left == 0 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "a killed writer's session is still open"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// SHA-256 (hex) of the members as JSON, one per line, in order: the
/// writer's `ready` fingerprint.
fn fingerprint(rows: &[CensusMember]) -> String {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    for m in rows {
        ctx.update(serde_json::to_string(m).unwrap().as_bytes());
        ctx.update(b"\n");
    }
    hex::encode(ctx.finish().as_ref())
}

/// What is stored for the group.
#[derive(Debug, PartialEq, Eq)]
struct Stored {
    fingerprint: String,
    job: Option<JobId>,
}

/// Reads the census back, checks that the group agrees with it, and
/// fingerprints it.
async fn stored(s: &Stores, sc: &Scope, g: &GroupId) -> Stored {
    let census = s.census.census(sc, g).await.unwrap();
    assert!(
        census
            .iter()
            .enumerate()
            .all(|(i, m)| usize::try_from(m.position).unwrap() == i),
        "positions are 0..n"
    );
    let rows: Vec<CensusMember> = census.into_iter().map(|m| m.member).collect();
    let grp = s.groups.group(sc, g).await.unwrap();
    assert_eq!(
        usize::try_from(grp.census_member_count).unwrap(),
        rows.len()
    );
    assert_eq!(grp.rating_digest, Some(rating_digest(&rows)));
    let job = s
        .jobs
        .open_job(sc, g, JobKind::MarketComparison)
        .await
        .unwrap()
        .map(|j| j.job.id);
    Stored {
        fingerprint: fingerprint(&rows),
        job,
    }
}

/// The xorshift64 step.
fn xorshift(mut x: u64) -> u64 {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
}

async fn a_killed_census_replace_leaves_the_old_or_the_new_census(t: TestDb) {
    let started = Instant::now();
    let s = &t.stores;
    let backend = t.db.backend();
    let (p, sc) = partner(s, 1).await;
    let g = group(1, &sc, "acme.com", 100);
    s.groups.insert_group(&g).await.unwrap();
    let url = writer_url(&t.db);
    let expect = |a: &Announced| Stored {
        fingerprint: a.fingerprint.clone(),
        job: Some(a.job.clone()),
    };

    // Uninterrupted writes: the first fills the census, the next two (real
    // replaces) measure one.
    let (first, fill) = Writer::start(&url, &p.id, &g.id, 0).finish();
    assert_eq!(first.members, 10_000);
    assert_eq!(stored(s, &sc, &g.id).await, expect(&first));
    let mut replaces = Vec::new();
    for generation in 1..=2 {
        let (written, took) = Writer::start(&url, &p.id, &g.id, generation).finish();
        assert_eq!(stored(s, &sc, &g.id).await, expect(&written));
        replaces.push(took);
    }
    let mut old = stored(s, &sc, &g.id).await;
    let replace = replaces.iter().max().copied().unwrap();
    eprintln!("{backend}: first write {fill:?}, replaces {replaces:?}");

    let span = u64::try_from(replace.as_micros()).unwrap() * 2;
    let slice = (span / u64::from(TRIALS)).max(1);
    let (mut olds, mut news, mut news_done) = (0u32, 0u32, 0u32);
    for k in 0..TRIALS {
        let generation = k + 3;
        let mut rng = xorshift(0x9e37_79b9_7f4a_7c15 ^ u64::from(generation));
        rng = xorshift(rng);
        let delay = Duration::from_micros(slice * u64::from(k) + rng % slice);
        let (announced, done) = tokio::task::spawn_blocking({
            let (url, partner, group) = (url.clone(), p.id.clone(), g.id.clone());
            move || {
                let w = Writer::start(&url, &partner, &group, generation);
                std::thread::sleep(delay);
                w.kill()
            }
        })
        .await
        .unwrap();
        assert_ne!(announced.fingerprint, old.fingerprint);
        settle(&t.db).await;
        let now = stored(s, &sc, &g.id).await;
        let new = expect(&announced);
        if now == old {
            assert!(
                done.is_none(),
                "trial {k}: the writer printed done, yet the old census is stored"
            );
            olds += 1;
        } else if now == new {
            news += 1;
            news_done += u32::from(done.is_some());
        } else {
            panic!(
                "trial {k} (kill after {delay:?}): the census is neither the old nor the new one"
            );
        }
        eprintln!(
            "{backend}: trial {k}: kill after {delay:?}: {} (done: {done:?})",
            if now == old { "old" } else { "new" }
        );
        old = now;
    }
    eprintln!(
        "{backend}: {TRIALS} kills within {:?}: {olds} old, {news} new ({news_done} after done); {:?} in all",
        Duration::from_micros(span),
        started.elapsed()
    );
    assert!(
        olds > 0 && news > 0,
        "the kill points did not span the commit"
    );
}
on_both!(a_killed_census_replace_leaves_the_old_or_the_new_census);
