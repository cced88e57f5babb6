//! Part 1: schemathesis generates requests from the served OpenAPI
//! documents — `/v1/openapi.json` with a broker key, and the camelCase
//! `/v1/openapi.json?style=camel` with an HR platform key — and checks
//! every answer. Runs repeat with the next seed until the requests reach
//! the target. On top of schemathesis's own checks, the recorded HAR is
//! read back: no 5xx at all, and every error in the envelope `{error,
//! message, details?}`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};
use serde_json::Value;

use crate::reliability::Figure;
use crate::reliability::harness::{Backend, Ctx, Server};
use crate::reliability::http::is_envelope;

/// Checks turned off, each for the reason `docs/reliability.md` gives.
const EXCLUDED_CHECKS: &[&str] = &["positive_data_acceptance", "ensure_resource_availability"];

/// The schemathesis release the suite is checked with (`.ci/run` installs
/// the same).
const SCHEMATHESIS: &str = "4.32.5";

/// The Python that runs schemathesis's command line.
const SHIM: &str = "import sys; from schemathesis.cli import schemathesis; sys.argv[0] = 'st'; sys.exit(schemathesis())";

/// Runs the part on `backend` until `target` requests were sent.
pub(crate) fn run(ctx: &Ctx, backend: Backend, target: u64) -> anyhow::Result<Figure> {
    let python = python(&ctx.root)?;
    let db = ctx.fresh_db(backend, "fuzz")?;
    let broker = ctx.partner(&db, "broker", "Reliability Fuzz Broker")?;
    let platform = ctx.partner(&db, "hr_platform", "Reliability Fuzz Platform")?;
    let env = vec![(
        "PARTNER_API_PRICING__WAIT_BUDGET_MS".to_owned(),
        "0".to_owned(),
    )];
    let server = Server::start(ctx, &db, "fuzz", &env)?;
    let base = format!("http://{}", server.addr);

    // Two thirds of the requests with the broker's document, one third
    // with the HR platform's.
    let plans = [
        (
            "/v1/openapi.json",
            broker.as_str(),
            target.saturating_mul(2) / 3,
        ),
        (
            "/v1/openapi.json?style=camel",
            platform.as_str(),
            target.saturating_sub(target.saturating_mul(2) / 3),
        ),
    ];
    let mut figure = Figure::default();
    let mut seed = 1u64;
    for (doc, key, want) in plans {
        let mut sent = 0u64;
        let mut examples = 20u64;
        while sent < want {
            let har = ctx.dir.join(format!("fuzz-{backend}-{seed}.har"));
            let outcome = schemathesis(ctx, &python, &base, doc, key, examples, seed, &har)?;
            let requests = judge_har(&har, &mut figure)?;
            if !outcome.passed {
                figure.check(false, || {
                    format!(
                        "schemathesis ({doc}, seed {seed}) reported failures: {}",
                        outcome.summary
                    )
                });
            }
            if requests == 0 {
                bail!(
                    "schemathesis sent no request ({doc}, seed {seed}): {}",
                    outcome.summary
                );
            }
            sent = sent.saturating_add(requests);
            // Scale the next run to what is left.
            let left = want.saturating_sub(sent);
            examples = (examples.saturating_mul(left) / requests)
                .saturating_add(5)
                .clamp(5, 2_000);
            seed = seed.saturating_add(1);
        }
        figure.note(format!("{doc}: {sent} requests"));
    }
    Ok(figure)
}

/// The checks turned off for `doc`: the same for both documents, now
/// that `?style=camel` describes the camelCase answers HR platform keys
/// get.
fn excluded(_doc: &str) -> Vec<&'static str> {
    EXCLUDED_CHECKS.to_vec()
}

/// What one schemathesis run said.
struct Outcome {
    passed: bool,
    summary: String,
}

/// One `st run`.
#[expect(
    clippy::too_many_arguments,
    reason = "one call site, every value differs"
)]
fn schemathesis(
    ctx: &Ctx,
    python: &PythonCmd,
    base: &str,
    doc: &str,
    key: &str,
    examples: u64,
    seed: u64,
    har: &Path,
) -> anyhow::Result<Outcome> {
    let mut cmd = python.command();
    cmd.arg("run")
        .arg(format!("{base}{doc}"))
        .args(["--url", base])
        .args(["-H", &format!("Authorization: Bearer {key}")])
        .args(["-n", &examples.to_string()])
        .args(["--checks", "all"])
        .args(["--exclude-checks", &excluded(doc).join(",")])
        .args(["--seed", &seed.to_string()])
        // One worker: hypothesis's lambda descriptions are not thread-safe
        // on Python 3.11 ("AST constructor recursion depth mismatch").
        .args(["--workers", "1", "--no-color", "--request-timeout", "30"])
        .args(["--suppress-health-check", "all"])
        .args(["--report", "har", "--report-har-path"])
        .arg(har)
        .args(["--report-dir"])
        .arg(ctx.dir.join("schemathesis"))
        .current_dir(&ctx.dir)
        .stdin(Stdio::null());
    let out = cmd.output().context("cannot run schemathesis")?;
    let text = String::from_utf8_lossy(&out.stdout);
    let log = ctx.dir.join(format!("schemathesis-{}.txt", har_stem(har)));
    std::fs::write(&log, text.as_bytes())
        .with_context(|| format!("cannot write {}", log.display()))?;
    // The last lines hold the totals.
    let summary = text
        .lines()
        .rev()
        .find(|l| {
            l.starts_with("==")
                && ["passed", "failure", "error", "warning"]
                    .iter()
                    .any(|w| l.contains(w))
        })
        .unwrap_or("no summary")
        .trim_matches(|c: char| c == '=' || c.is_whitespace())
        .to_owned();
    Ok(Outcome {
        passed: out.status.success(),
        summary: format!("{summary} (see {})", log.display()),
    })
}

/// `fuzz-<db>-<seed>` of a HAR path.
fn har_stem(har: &Path) -> String {
    har.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Reads the HAR: counts requests, checks every answer; returns the count.
fn judge_har(har: &Path, figure: &mut Figure) -> anyhow::Result<u64> {
    let text =
        std::fs::read_to_string(har).with_context(|| format!("cannot read {}", har.display()))?;
    let doc: Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", har.display()))?;
    let entries = doc
        .pointer("/log/entries")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for e in &entries {
        let status = e
            .pointer("/response/status")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let method = e
            .pointer("/request/method")
            .and_then(Value::as_str)
            .unwrap_or("?");
        let url = e
            .pointer("/request/url")
            .and_then(Value::as_str)
            .unwrap_or("?");
        // The path without scheme, authority and query.
        let path = url
            .split_once("://")
            .map_or(url, |(_, rest)| {
                rest.find('/').and_then(|i| rest.get(i..)).unwrap_or("/")
            })
            .split('?')
            .next()
            .unwrap_or_default();
        let body = e
            .pointer("/response/content/text")
            .and_then(Value::as_str)
            .unwrap_or_default();
        // The envelope is the JSON API's; the offer page outside `/v1`
        // answers in HTML.
        let enveloped = status < 400
            || !path.starts_with("/v1/")
            || serde_json::from_str::<Value>(body).is_ok_and(|v| is_envelope(&v));
        figure.check((100..500).contains(&status) && enveloped, || {
            let shown: String = path.chars().take(80).collect();
            if status >= 500 || status == 0 {
                format!("{method} {shown} answered {status}")
            } else {
                format!("{method} {shown} answered {status} outside the error envelope")
            }
        });
    }
    Ok(u64::try_from(entries.len()).unwrap_or(u64::MAX))
}

/// How to start Python with schemathesis importable.
struct PythonCmd {
    program: PathBuf,
    path: Option<PathBuf>,
}

impl PythonCmd {
    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        if let Some(p) = &self.path {
            cmd.env("PYTHONPATH", p);
        }
        cmd.args(["-c", SHIM]);
        cmd
    }
}

/// Finds schemathesis: `pip install --target target/reliability/python`
/// (as `.ci/run` installs it), or the system's.
fn python(root: &Path) -> anyhow::Result<PythonCmd> {
    let dir = root.join("target").join("reliability");
    let candidates = [
        PythonCmd {
            program: PathBuf::from("python3"),
            path: Some(dir.join("python")),
        },
        PythonCmd {
            program: PathBuf::from("python3"),
            path: None,
        },
    ];
    for c in candidates {
        let mut probe = Command::new(&c.program);
        if let Some(p) = &c.path {
            probe.env("PYTHONPATH", p);
        }
        let found = probe
            .args(["-c", "import schemathesis"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if found {
            return Ok(c);
        }
    }
    bail!(
        "schemathesis is not installed: python3 -m pip install --target {} schemathesis=={SCHEMATHESIS}",
        dir.join("python").display()
    )
}
