//! Part 7: the server logs captured by every part, and a dump of every
//! database the parts used, scanned for what must not be there.
//!
//! - **Logs** (stdout and stderr of every `serve`): no API key
//!   (`psk_test_`/`psk_live_` and 32 hex characters, or any key the run
//!   minted), no webhook secret (`whsec_…`, or any secret answered), no
//!   password or key from the configuration (the PostgreSQL password, the
//!   sealing key), no bank account number the hostile part sent, and no
//!   personal data sent in a census (names, emails, dates of birth).
//! - **Dumps** (the SQLite file with its WAL, or `pg_dump`): the same,
//!   except personal data, which the census stores by design. A webhook
//!   secret is also looked for as the raw bytes of its HMAC key (and their
//!   hex, as `pg_dump` prints `bytea`).
//!
//! A finding names the file and the kind of value, never the value.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context as _, bail};

use crate::reliability::Figure;
use crate::reliability::harness::{Backend, Ctx, Kind, with_database};

/// Needles shorter than this are not looked for (none of the run's are).
const MIN_NEEDLE: usize = 8;

/// Runs the part on `backend`.
pub(crate) fn run(ctx: &Ctx, backend: Backend) -> anyhow::Result<Figure> {
    let watched = ctx.watched();
    let in_logs = Needles::new(&watched, false);
    let in_dumps = Needles::new(&watched, true);
    let mut figure = Figure::default();
    let logs = ctx.logs(backend);
    let mut log_bytes = 0usize;
    for path in &logs {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        log_bytes = log_bytes.saturating_add(bytes.len());
        let found = in_logs.scan(&bytes);
        figure.check(found.is_empty(), || {
            format!("{}: {}", name(path), describe(&found))
        });
    }
    let mut dump_bytes = 0usize;
    for db in ctx.dbs(backend) {
        let (label, bytes) = match backend {
            Backend::Sqlite => (name(&PathBuf::from(&db.name)), sqlite_bytes(&db.name)?),
            Backend::Postgres => (
                format!("pg_dump {}", db.name),
                pg_dump(&with_database(&ctx.postgres_admin, &db.name))?,
            ),
        };
        dump_bytes = dump_bytes.saturating_add(bytes.len());
        let found = in_dumps.scan(&bytes);
        figure.check(found.is_empty(), || {
            format!("{label}: {}", describe(&found))
        });
    }
    figure.note(format!(
        "{} log file(s) ({} KiB) and {} dump(s) ({} KiB) scanned for {} watched values and the key and secret patterns",
        logs.len(),
        log_bytes / 1024,
        ctx.dbs(backend).len(),
        dump_bytes / 1024,
        watched.len()
    ));
    Ok(figure)
}

fn name(path: &std::path::Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn describe(found: &BTreeMap<String, usize>) -> String {
    found
        .iter()
        .map(|(what, n)| format!("{n} × {what}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The SQLite file, its WAL and shared memory, concatenated.
fn sqlite_bytes(path: &str) -> anyhow::Result<Vec<u8>> {
    let mut all = std::fs::read(path).with_context(|| format!("cannot read {path}"))?;
    for suffix in ["-wal", "-shm", "-journal"] {
        if let Ok(more) = std::fs::read(format!("{path}{suffix}")) {
            all.extend(more);
        }
    }
    Ok(all)
}

/// `pg_dump` of the database at `url`.
fn pg_dump(url: &str) -> anyhow::Result<Vec<u8>> {
    let out = Command::new("pg_dump")
        .args(["--no-owner", "--no-privileges", "-d", url])
        .output()
        .context("cannot run pg_dump")?;
    if !out.status.success() {
        bail!(
            "pg_dump failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out.stdout)
}

/// The byte strings to look for, indexed by their first bytes.
struct Needles {
    list: Vec<(Vec<u8>, String)>,
    index: HashMap<[u8; MIN_NEEDLE], Vec<usize>>,
}

impl Needles {
    /// Needles for the watched values (in dumps: only secrets at rest).
    fn new(watched: &[(Kind, String)], dumps: bool) -> Self {
        let mut list = Vec::new();
        for (kind, value) in watched {
            if dumps && !kind.secret_at_rest() {
                continue;
            }
            let what = kind.to_string();
            list.push((value.as_bytes().to_vec(), what.clone()));
            let body = value
                .strip_prefix("psk_test_")
                .or_else(|| value.strip_prefix("psk_live_"))
                .or_else(|| value.strip_prefix("whsec_"));
            if let Some(body) = body {
                list.push((body.as_bytes().to_vec(), what.clone()));
            }
            if let Some(raw) = body
                .and_then(base64_decode)
                .filter(|_| *kind == Kind::WebhookSecret)
            {
                list.push((hex::encode(&raw).into_bytes(), what.clone()));
                list.push((raw, what));
            }
        }
        list.retain(|(n, _)| n.len() >= MIN_NEEDLE);
        let mut index: HashMap<[u8; MIN_NEEDLE], Vec<usize>> = HashMap::new();
        for (i, (needle, _)) in list.iter().enumerate() {
            if let Some(head) = needle.first_chunk::<MIN_NEEDLE>() {
                index.entry(*head).or_default().push(i);
            }
        }
        Self { list, index }
    }

    /// What `hay` holds: kind → occurrences.
    fn scan(&self, hay: &[u8]) -> BTreeMap<String, usize> {
        let mut found: BTreeMap<String, usize> = BTreeMap::new();
        for (i, window) in hay.windows(MIN_NEEDLE).enumerate() {
            let Some(head) = window.first_chunk::<MIN_NEEDLE>() else {
                continue;
            };
            if let Some(candidates) = self.index.get(head) {
                for &c in candidates {
                    if let Some((_, what)) = self.list.get(c).filter(|(needle, _)| {
                        hay.get(i..).is_some_and(|rest| rest.starts_with(needle))
                    }) {
                        *found.entry(what.clone()).or_insert(0) += 1;
                    }
                }
            }
        }
        for (marker, hex_len, what) in [
            (&b"psk_test_"[..], 32, "an API key (pattern)"),
            (&b"psk_live_"[..], 32, "an API key (pattern)"),
            (&b"whsec_"[..], 32, "a webhook secret (pattern)"),
        ] {
            let n = pattern_count(hay, marker, hex_len);
            if n > 0 {
                *found.entry(what.to_owned()).or_insert(0) += n;
            }
        }
        found
    }
}

/// Occurrences of `marker` followed by at least `len` hex digits.
fn pattern_count(hay: &[u8], marker: &[u8], len: usize) -> usize {
    hay.windows(marker.len())
        .enumerate()
        .filter(|(_, w)| *w == marker)
        .filter(|(i, _)| {
            hay.get(i.saturating_add(marker.len())..)
                .and_then(|rest| rest.get(..len))
                .is_some_and(|tail| tail.iter().all(u8::is_ascii_hexdigit))
        })
        .count()
}

/// Standard base64 (with or without padding); `None` if it is not.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.trim_end_matches('=').bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from((acc >> bits) & 0xff).ok()?);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_watched_values_and_patterns_without_naming_them() {
        let watched = vec![
            (Kind::Personal, "Quazorvel".to_owned()),
            (Kind::ApiKey, format!("psk_test_{}", "ab".repeat(16))),
        ];
        let logs = Needles::new(&watched, false);
        let found = logs.scan(b"x Quazorvel y psk_test_abababababababababababababababab z");
        assert_eq!(found.get("personal data"), Some(&1));
        assert_eq!(found.get("an API key"), Some(&2));
        assert_eq!(found.get("an API key (pattern)"), Some(&1));
        let dumps = Needles::new(&watched, true);
        assert!(dumps.scan(b"Quazorvel").is_empty());
        assert!(logs.scan(b"psk_test_abab only a prefix").is_empty());
    }

    #[test]
    fn base64_of_a_secret_body() {
        assert_eq!(base64_decode("AAEC"), Some(vec![0, 1, 2]));
        assert_eq!(base64_decode("a=="), Some(vec![]));
        assert_eq!(base64_decode("*"), None);
    }
}
