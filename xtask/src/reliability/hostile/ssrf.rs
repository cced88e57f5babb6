//! The SSRF table: with insecure endpoints refused (the default), `PUT
//! /webhook` refuses every URL whose host is, or resolves to, a loopback,
//! private, link-local, unique-local or otherwise internal address, in
//! any spelling: IPv4-compatible and IPv4-mapped IPv6, NAT64 (well-known
//! and local-use prefixes), 6to4, Teredo, and names. Each → 400 naming
//! `url`.

use serde_json::json;

use crate::reliability::hostile::{Row, refuses};
use crate::reliability::http::Client;

/// The URLs, each with what it reaches.
const TABLE: [(&str, &str); 13] = [
    ("https://[::127.0.0.1]/h", "IPv4-compatible loopback"),
    (
        "https://[64:ff9b::7f00:1]/h",
        "NAT64 well-known prefix to loopback",
    ),
    (
        "https://[64:ff9b:1::7f00:1]/h",
        "NAT64 local-use prefix to loopback",
    ),
    ("https://[2002:7f00:1::1]/h", "6to4 of loopback"),
    (
        "https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/h",
        "Teredo of loopback",
    ),
    ("https://[::ffff:127.0.0.1]/h", "IPv4-mapped loopback"),
    ("https://[fe80::1]/h", "IPv6 link-local"),
    ("https://[fc00::1]/h", "IPv6 unique-local"),
    ("https://127.0.0.1/h", "IPv4 loopback"),
    ("https://10.0.0.1/h", "IPv4 private"),
    ("https://169.254.169.254/h", "cloud metadata (link-local)"),
    ("https://localhost/h", "a name for loopback"),
    ("http://93.184.215.14/h", "plain http"),
];

/// One row per URL.
pub(crate) fn rows(client: &Client) -> anyhow::Result<Vec<Row>> {
    Ok(TABLE
        .iter()
        .map(|(url, what)| {
            let answer = client.json("PUT", "/v1/webhook", &json!({ "url": url }), &[]);
            Row::judge(
                "ssrf",
                format!("PUT /v1/webhook {url} ({what})"),
                &answer,
                |r| refuses(r, "url"),
            )
        })
        .collect())
}
