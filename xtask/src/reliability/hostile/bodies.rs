//! Rows about whole bodies: size, nesting, encoding, duplicate keys, row
//! counts, and clients that stall.

use std::io::{Read as _, Write as _};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::reliability::fixtures::{group_body, member};
use crate::reliability::harness::{BODY_TIMEOUT_SECS, Ctx, Kind};
use crate::reliability::hostile::{Fixtures, Row, refuses};
use crate::reliability::http::{Client, Response, parse_response};

/// The largest body the contract accepts (32 MiB).
const MAX_BODY: usize = 32 * 1024 * 1024;

/// Slack on top of a timeout before a stalled client counts as held.
const GRACE: Duration = Duration::from_secs(5);

/// Whether `r` is a 400 `invalid_request` in the envelope.
fn is_400(r: &Response) -> bool {
    r.status == 400 && r.is_envelope() && r.text("/error").as_deref() == Some("invalid_request")
}

/// Every body row but the slow ones.
pub(crate) fn rows(ctx: &Ctx, client: &Client, fx: &Fixtures) -> anyhow::Result<Vec<Row>> {
    let census = format!("/v1/groups/{}/census", fx.census_group);
    let json = "application/json";
    let mut rows = Vec::new();
    let mut raw =
        |name: &str, path: &str, content_type: &str, body: &[u8], ok: fn(&Response) -> bool| {
            let answer = client.send(
                if path.ends_with("/census") {
                    "PUT"
                } else {
                    "POST"
                },
                path,
                &[],
                Some((content_type, body)),
            );
            rows.push(Row::judge("body", name.to_owned(), &answer, ok));
        };

    let mut big = br#"{"company_name":""#.to_vec();
    big.resize(MAX_BODY.saturating_add(1024 * 1024), b'a');
    big.extend_from_slice(br#"","domain":"big.example"}"#);
    raw("33 MiB body", "/v1/groups", json, &big, |r| {
        r.status == 413 && r.is_envelope() && r.text("/error").as_deref() == Some("invalid_request")
    });
    drop(big);

    let deep = |open: &str, close: &str, n: usize| {
        format!(
            r#"{{"company_name":{}1{},"domain":"deep.example"}}"#,
            open.repeat(n),
            close.repeat(n)
        )
        .into_bytes()
    };
    raw(
        "100,000 nested arrays",
        "/v1/groups",
        json,
        &deep("[", "]", 100_000),
        is_400,
    );
    raw(
        "100,000 nested objects",
        "/v1/groups",
        json,
        &deep(r#"{"a":"#, "}", 100_000),
        is_400,
    );
    raw(
        "200 nested arrays in a census row",
        &census,
        json,
        format!(
            r#"{{"members":[{{"zip":"60601","dob":"1980-01-01","dependents":{}{}}}]}}"#,
            "[".repeat(200),
            "]".repeat(200)
        )
        .as_bytes(),
        |r| r.status == 400 && r.is_envelope(),
    );
    raw(
        "invalid UTF-8 in a JSON string",
        "/v1/groups",
        json,
        b"{\"company_name\":\"\xff\xfe\",\"domain\":\"utf.example\"}",
        is_400,
    );
    raw(
        "overlong UTF-8 (C0 AF)",
        "/v1/groups",
        json,
        b"{\"company_name\":\"a\xc0\xafb\",\"domain\":\"utf.example\"}",
        is_400,
    );
    raw(
        "lone surrogate escape \\ud800",
        "/v1/groups",
        json,
        br#"{"company_name":"a\ud800b","domain":"utf.example"}"#,
        is_400,
    );
    raw(
        "unescaped control byte in a JSON string",
        "/v1/groups",
        json,
        b"{\"company_name\":\"a\x01b\",\"domain\":\"utf.example\"}",
        is_400,
    );
    raw(
        "invalid UTF-8 in a CSV census",
        &census,
        "text/csv",
        b"external_id,first_name,dob,zip,relationship\nU-1,\xff\xfe,1980-01-01,60601,\n",
        is_400,
    );
    raw(
        "duplicate key",
        "/v1/groups",
        json,
        br#"{"company_name":"A","company_name":"B","domain":"dup.example"}"#,
        is_400,
    );
    raw(
        "duplicate nested key",
        "/v1/groups",
        json,
        br#"{"company_name":"A","domain":"dup.example","address":{"zip":"60601","zip":"10001"}}"#,
        is_400,
    );
    raw(
        "duplicate key in a census row",
        &census,
        json,
        br#"{"members":[{"external_id":"D-1","zip":"60601","zip":"10001","dob":"1980-01-01"}]}"#,
        is_400,
    );
    raw(
        "one field in both styles",
        "/v1/groups",
        json,
        br#"{"company_name":"A","companyName":"B","domain":"dup.example"}"#,
        is_400,
    );
    raw(
        "trailing bytes after the JSON value",
        "/v1/groups",
        json,
        br#"{"company_name":"A","domain":"t.example"} x"#,
        is_400,
    );
    raw("JSON array body", "/v1/groups", json, b"[]", is_400);

    // Row counts and nested arrays past their limits.
    let members: Vec<_> = (0..10_001)
        .map(|i| json!({"external_id": format!("M-{i}"), "zip": "60601", "dob": "1980-01-01"}))
        .collect();
    let answer = client.json("PUT", &census, &json!({ "members": members }), &[]);
    rows.push(Row::judge(
        "body",
        "10,001 census members".to_owned(),
        &answer,
        |r| refuses(r, "members"),
    ));
    let dependents: Vec<_> = (0..7)
        .map(|_| json!({"relationship": "child", "dob": "2015-01-01"}))
        .collect();
    let body = json!({"members": [
        {"external_id": "L-0", "zip": "60601", "dob": "1980-01-01"},
        {"external_id": "L-1", "zip": "60601", "dob": "1980-01-01", "dependents": dependents},
    ]});
    let answer = client.json("PUT", &census, &body, &[]);
    rows.push(Row::judge(
        "body",
        "7 dependents".to_owned(),
        &answer,
        |r| r.status == 200 && refuses(r, "members[1].dependents"),
    ));
    let answer = client.json(
        "POST",
        &format!("/v1/groups/{}/elections", fx.enrolled),
        &json!({"elections": []}),
        &[],
    );
    rows.push(Row::judge(
        "body",
        "0 election rows".to_owned(),
        &answer,
        |r| refuses(r, "elections"),
    ));

    // Headers.
    let answer = client.send(
        "POST",
        "/v1/groups",
        &[("Idempotency-Key", "k\u{ff}y")],
        Some((json, br#"{"company_name":"A","domain":"h.example"}"#)),
    );
    rows.push(Row::judge(
        "body",
        "non-ASCII Idempotency-Key".to_owned(),
        &answer,
        is_400,
    ));
    let long_key = "k".repeat(256);
    let answer = client.json(
        "POST",
        "/v1/groups",
        &json!({"company_name": "A", "domain": format!("{}.example", ctx.hex(4))}),
        &[("Idempotency-Key", &long_key)],
    );
    rows.push(Row::judge(
        "body",
        "256-character Idempotency-Key".to_owned(),
        &answer,
        |r| refuses(r, "Idempotency-Key"),
    ));
    rows.push(declared_oversize(client));

    // Bank details have no field in this API: refused, and (part 7)
    // never logged or stored.
    let account = format!(
        "{}{}",
        ctx.range(100_000, 999_999),
        ctx.range(100_000, 999_999)
    );
    ctx.watch(Kind::BankAccount, &account);
    let bank = json!({"routing_number": "021000021", "account_number": account});
    let mut group = group_body(ctx);
    if let Some(map) = group.as_object_mut() {
        map.insert("bank_account".to_owned(), bank.clone());
    }
    let answer = client.json("POST", "/v1/groups", &group, &[]);
    rows.push(Row::judge(
        "body",
        "bank details in a group".to_owned(),
        &answer,
        |r| refuses(r, "bank_account"),
    ));
    let mut row = member(ctx, "B-1");
    if let Some(map) = row.as_object_mut() {
        map.insert("bank_account".to_owned(), bank);
    }
    let answer = client.json("PUT", &census, &json!({"members": [row]}), &[]);
    rows.push(Row::judge(
        "body",
        "bank details in a census row".to_owned(),
        &answer,
        |r| refuses(r, "members[0].bank_account"),
    ));
    Ok(rows)
}

/// A `Content-Length` past the limit is refused before the body is sent.
fn declared_oversize(client: &Client) -> Row {
    let name = "Content-Length past 32 MiB, body not sent";
    let result = (|| -> std::io::Result<Response> {
        let mut stream = client.connect()?;
        stream.set_read_timeout(Some(
            Duration::from_secs(BODY_TIMEOUT_SECS).saturating_add(GRACE),
        ))?;
        let mut head = client.head("POST", "/v1/groups", &[]);
        head.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            MAX_BODY.saturating_mul(2)
        ));
        stream.write_all(head.as_bytes())?;
        let mut raw = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => raw.extend_from_slice(buf.get(..n).unwrap_or_default()),
                Err(e) if raw.is_empty() => return Err(e),
                Err(_) => break,
            }
        }
        parse_response(&raw)
    })();
    Row::judge("body", name.to_owned(), &result, |r| {
        r.status == 413 && r.is_envelope()
    })
}

/// Two clients that stall, run while the other rows do: half a body (the
/// server answers 408 in the envelope, or closes, within its body
/// timeout), and half a request head (closed within the same bound).
pub(crate) fn slow_probes<'scope>(
    s: &'scope Scope<'scope, '_>,
    client: &'scope Client,
) -> Vec<ScopedJoinHandle<'scope, Row>> {
    vec![
        s.spawn(move || {
            stall(
                client,
                "slow body (half sent, then stalled)",
                true,
                |head| {
                    head.push_str("Content-Type: application/json\r\nContent-Length: 200\r\n\r\n");
                    head.push_str(&format!(r#"{{"company_name":"{}"#, "s".repeat(80)));
                },
            )
        }),
        s.spawn(move || {
            stall(
                client,
                "slow head (half sent, then stalled)",
                false,
                |head| {
                    head.truncate(head.len().saturating_sub(10));
                },
            )
        }),
    ]
}

/// Sends a request cut short by `cut`, then waits for the server to give
/// up: by closing, or by answering 408 — in the envelope when
/// `envelope` (a handler saw the request; a stalled head never reaches
/// one, and the HTTP layer's bare 408 is all it can get).
fn stall(client: &Client, name: &str, envelope: bool, cut: impl FnOnce(&mut String)) -> Row {
    let limit = Duration::from_secs(BODY_TIMEOUT_SECS).saturating_add(GRACE);
    let started = Instant::now();
    let outcome = (|| -> std::io::Result<(Vec<u8>, bool)> {
        let mut stream = client.connect()?;
        stream.set_read_timeout(Some(limit))?;
        let mut head = client.head("POST", "/v1/groups", &[]);
        cut(&mut head);
        stream.write_all(head.as_bytes())?;
        let mut raw = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf) {
                Ok(0) => return Ok((raw, true)),
                Ok(n) => raw.extend_from_slice(buf.get(..n).unwrap_or_default()),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return Ok((raw, false));
                }
                Err(_) => return Ok((raw, true)),
            }
        }
    })();
    let took = started.elapsed();
    let name = name.to_owned();
    match outcome {
        Ok((raw, closed)) => {
            let answer = (!raw.is_empty())
                .then(|| parse_response(&raw).ok())
                .flatten();
            let answered_408 = answer
                .as_ref()
                .is_some_and(|r| r.status == 408 && (r.is_envelope() || !envelope));
            let gave_up = (closed || answered_408) && took <= limit;
            let got = match &answer {
                Some(r) => format!("got {} after {:.1} s", r.brief(), took.as_secs_f64()),
                None if closed => {
                    format!("closed without an answer after {:.1} s", took.as_secs_f64())
                }
                None => format!(
                    "still waiting after {:.1} s (body timeout set to {BODY_TIMEOUT_SECS} s)",
                    took.as_secs_f64()
                ),
            };
            let held = gave_up && (answer.is_none() || answered_408);
            Row {
                name,
                kind: "slow".to_owned(),
                held,
                got,
            }
        }
        Err(e) => Row::failed(&name, &format!("no connection: {e}")),
    }
}
