//! Test data the parts share: people (whose personal data the leak scan
//! then looks for), groups, censuses, quotes and enrollments.

use std::time::Duration;

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

use crate::reliability::harness::{Ctx, Kind, wait_for};
use crate::reliability::http::Client;

/// A ZIP inside the rate card's markets.
pub(crate) const ZIP: &str = "60601";

/// Syllables for names nobody else uses, so a leak is unmistakable.
const SYLLABLES: [&str; 16] = [
    "qua", "zor", "vel", "mik", "tan", "bri", "osk", "lur", "fen", "dax", "ril", "gow", "yst",
    "pel", "nud", "hab",
];

/// A made-up name of three syllables, capitalised.
fn name(ctx: &Ctx) -> String {
    let mut s: String = (0..3)
        .map(|_| {
            let i = usize::try_from(ctx.range(0, 16)).unwrap_or(0);
            SYLLABLES.get(i).copied().unwrap_or("qua")
        })
        .collect();
    if let Some(first) = s.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    s
}

/// A date of birth between 1950 and 1999.
fn dob(ctx: &Ctx) -> String {
    format!(
        "{}-{:02}-{:02}",
        ctx.range(1950, 2000),
        ctx.range(1, 13),
        ctx.range(1, 29)
    )
}

/// One employee with every census field, its personal data watched.
pub(crate) fn member(ctx: &Ctx, external_id: &str) -> Value {
    let (first, last, child) = (name(ctx), name(ctx), name(ctx));
    let email = format!(
        "{}.{}@{}.example",
        first.to_ascii_lowercase(),
        last.to_ascii_lowercase(),
        ctx.hex(3)
    );
    let (born, child_born) = (
        dob(ctx),
        format!(
            "20{:02}-0{}-1{}",
            ctx.range(10, 20),
            ctx.range(1, 10),
            ctx.range(0, 10)
        ),
    );
    for value in [&first, &last, &child, &email, &born, &child_born] {
        ctx.watch(Kind::Personal, value);
    }
    json!({
        "external_id": external_id,
        "first_name": first,
        "last_name": last,
        "email": email,
        "dob": born,
        "zip": ZIP,
        "sex_at_birth": "female",
        "employment_type": "full_time",
        "hire_date": "2020-03-01",
        "status": "active",
        "dependents": [{"relationship": "child", "name": child, "dob": child_born, "sex_at_birth": "male"}],
    })
}

/// A group body with every field, on a fresh domain.
pub(crate) fn group_body(ctx: &Ctx) -> Value {
    let contact = name(ctx);
    ctx.watch(Kind::Personal, &contact);
    json!({
        "company_name": format!("{} Works", name(ctx)),
        "domain": format!("{}.example", ctx.hex(6)),
        "external_id": format!("crm-{}", ctx.hex(3)),
        "address": {"line1": "1 Main St", "city": "Chicago", "state": "IL", "zip": ZIP},
        "contact": {"name": contact, "email": format!("hr@{}.example", ctx.hex(4)), "title": "HR Director"},
        "current_coverage": {"plan_type": "fully_insured", "carrier": "Blue Plan", "pepm_cents": 78_000, "renewal_date": "2027-01-01"},
    })
}

/// The `id` of a created resource, or why there is none.
pub(crate) fn created_id(
    what: &str,
    response: &crate::reliability::http::Response,
) -> anyhow::Result<String> {
    if !(200..300).contains(&response.status) {
        bail!("{what} answered {}", response.brief());
    }
    response
        .text("/id")
        .with_context(|| format!("{what} answered without an id"))
}

/// Creates a group and returns its id.
pub(crate) fn group(ctx: &Ctx, client: &Client) -> anyhow::Result<String> {
    let response = client.json("POST", "/v1/groups", &group_body(ctx), &[])?;
    created_id("POST /v1/groups", &response)
}

/// Writes a census of `n` fresh members (external ids `<prefix>-<i>`).
pub(crate) fn census(
    ctx: &Ctx,
    client: &Client,
    group: &str,
    prefix: &str,
    n: usize,
) -> anyhow::Result<()> {
    let members: Vec<Value> = (0..n)
        .map(|i| member(ctx, &format!("{prefix}-{i}")))
        .collect();
    let response = client.json(
        "PUT",
        &format!("/v1/groups/{group}/census"),
        &json!({ "members": members }),
        &[],
    )?;
    if response.status != 200 {
        bail!("PUT census answered {}", response.brief());
    }
    Ok(())
}

/// Creates a quote once the market comparison is done; returns its id.
pub(crate) fn quote(client: &Client, group: &str) -> anyhow::Result<String> {
    let path = format!("/v1/groups/{group}/quotes");
    let mut last = String::new();
    let id = wait_for(Duration::from_secs(90), || {
        match client.json("POST", &path, &json!({}), &[]) {
            Ok(r) if r.status == 201 => r.text("/id"),
            Ok(r) => {
                last = r.brief();
                std::thread::sleep(Duration::from_millis(300));
                None
            }
            Err(e) => {
                last = e.to_string();
                None
            }
        }
    });
    id.with_context(|| format!("no quote within 90 s (last answer: {last})"))
}

/// A group with a census of `n` members and a ready quote: (group, quote).
pub(crate) fn quoted_group(
    ctx: &Ctx,
    client: &Client,
    prefix: &str,
    n: usize,
) -> anyhow::Result<(String, String)> {
    let group = group(ctx, client)?;
    census(ctx, client, &group, prefix, n)?;
    let quote = quote(client, &group)?;
    Ok((group, quote))
}

/// Enrolls `group` on `quote`; returns the enrollment id.
pub(crate) fn enroll(
    ctx: &Ctx,
    client: &Client,
    group: &str,
    quote: &str,
) -> anyhow::Result<String> {
    let signatory = name(ctx);
    ctx.watch(Kind::Personal, &signatory);
    let response = client.json(
        "POST",
        &format!("/v1/groups/{group}/enrollments"),
        &json!({"quote_id": quote, "signatory": {"name": signatory, "email": format!("cfo@{}.example", ctx.hex(4))}}),
        &[],
    )?;
    created_id("POST enrollments", &response)
}

/// The ids of every item of a paginated list (`field` holds the items).
pub(crate) fn list_all(
    client: &Client,
    path: &str,
    field: &str,
    key: &str,
) -> anyhow::Result<Vec<Value>> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    let sep = if path.contains('?') { '&' } else { '?' };
    for _ in 0..10_000 {
        let url = match &cursor {
            Some(c) => format!("{path}{sep}limit=200&cursor={}", encode(c)),
            None => format!("{path}{sep}limit=200"),
        };
        let response = client.get(&url)?;
        if response.status != 200 {
            bail!("GET {path} answered {}", response.brief());
        }
        let body = response.json().context("list answer is not JSON")?;
        items.extend(
            body.get(field)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(|v| v.get(key).cloned().unwrap_or(v)),
        );
        cursor = body
            .get("next_cursor")
            .and_then(Value::as_str)
            .map(ToOwned::to_owned);
        if cursor.is_none() {
            return Ok(items);
        }
    }
    bail!("GET {path}: too many pages")
}

/// Percent-encodes a query value.
pub(crate) fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
