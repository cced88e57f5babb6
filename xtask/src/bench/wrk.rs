//! Runs `wrk` and reads its report.

use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, bail};

/// One load run.
pub(crate) struct Load<'a> {
    /// The URL.
    pub url: String,
    /// Connections (`wrk -t2` spreads them over two threads).
    pub connections: u32,
    /// Duration.
    pub seconds: u32,
    /// Extra header fields.
    pub headers: Vec<(&'a str, String)>,
    /// A Lua script (method, body, per-request headers).
    pub script: Option<&'a Path>,
}

/// What `wrk` reported.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Report {
    /// Requests per second.
    pub rps: f64,
    /// Requests completed.
    pub requests: u64,
    /// Median latency, ms.
    pub p50_ms: f64,
    /// 99th percentile latency, ms.
    pub p99_ms: f64,
}

/// Whether `wrk` can be run.
pub(crate) fn installed() -> bool {
    Command::new("wrk").arg("-v").output().is_ok()
}

/// Runs `load` and reads the report; any answer other than 2xx or 3xx,
/// or a socket error, fails the run.
pub(crate) fn run(load: &Load<'_>) -> anyhow::Result<Report> {
    let threads = load.connections.clamp(1, 2);
    let mut cmd = Command::new("wrk");
    cmd.arg(format!("-t{threads}"))
        .arg(format!("-c{}", load.connections))
        .arg(format!("-d{}s", load.seconds))
        // A slow answer is measured, not dropped as a timeout.
        .args(["--timeout", "30s"])
        .arg("--latency");
    for (name, value) in &load.headers {
        cmd.arg("-H").arg(format!("{name}: {value}"));
    }
    if let Some(script) = load.script {
        cmd.arg("-s").arg(script);
    }
    let out = cmd
        .arg(&load.url)
        .output()
        .context("cannot run wrk (apt-get install wrk)")?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        bail!("wrk failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    parse(&text).with_context(|| format!("unexpected wrk report for {}:\n{text}", load.url))
}

/// Reads a `wrk --latency` report.
fn parse(text: &str) -> anyhow::Result<Report> {
    let mut report = Report {
        rps: f64::NAN,
        requests: 0,
        p50_ms: f64::NAN,
        p99_ms: f64::NAN,
    };
    for line in text.lines().map(str::trim) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["Requests/sec:", rps] => report.rps = rps.parse()?,
            ["50%", latency] => report.p50_ms = millis(latency)?,
            ["99%", latency] => report.p99_ms = millis(latency)?,
            [n, "requests", "in", ..] => report.requests = n.parse()?,
            ["Non-2xx", "or", "3xx", "responses:", n] => {
                bail!("{n} answers were not 2xx or 3xx")
            }
            ["Socket", "errors:", ..] => bail!("{line}"),
            _ => {}
        }
    }
    if report.rps.is_nan() || report.p99_ms.is_nan() || report.requests == 0 {
        bail!("no throughput or latency in the report");
    }
    Ok(report)
}

/// `1.23ms`, `456.00us` or `1.02s` in milliseconds.
fn millis(text: &str) -> anyhow::Result<f64> {
    let split = text
        .find(|c: char| c.is_ascii_alphabetic())
        .context("a latency without a unit")?;
    let (number, unit) = text.split_at(split);
    let n: f64 = number.parse()?;
    Ok(match unit {
        "us" => n / 1000.0,
        "ms" => n,
        "s" => n * 1000.0,
        "m" => n * 60_000.0,
        other => bail!("unknown latency unit {other}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_report() {
        let text = "Running 10s test @ http://127.0.0.1:1/\n  2 threads and 32 connections\n  \
                    Latency Distribution\n     50%  612.00us\n     75%    1.10ms\n     90%    2.00ms\n     \
                    99%    1.02s\n  123456 requests in 10.00s, 12.34MB read\nRequests/sec:  12345.67\n";
        let r = parse(text).unwrap();
        assert_eq!(r.requests, 123_456);
        assert!((r.rps - 12_345.67).abs() < 1e-6);
        assert!((r.p50_ms - 0.612).abs() < 1e-9);
        assert!((r.p99_ms - 1020.0).abs() < 1e-9);
        assert!(parse(&format!("{text}  Non-2xx or 3xx responses: 3\n")).is_err());
    }
}
