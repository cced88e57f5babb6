//! Rows per field: control characters in every string field, and money
//! at and past its maximum in every `_cents` field.

use serde_json::{Value, json};

use crate::reliability::fixtures::{group_body, member};
use crate::reliability::harness::Ctx;
use crate::reliability::hostile::schema::{Leaf, LeafType, Operation, Seg, set};
use crate::reliability::hostile::{Fixtures, Row, refuses};
use crate::reliability::http::Client;

/// Every refused control character.
fn controls() -> Vec<char> {
    ('\u{0}'..='\u{1f}').chain('\u{7f}'..='\u{9f}').collect()
}

/// The largest monthly amount, in cents.
const MONTHLY_MAX: i64 = 100_000_000;

/// The largest deductible or out-of-pocket maximum, in cents.
const DEDUCTIBLE_MAX: i64 = 1_000_000_000;

/// A valid request for `op`: its path with the fixtures' ids, its body,
/// and the index rows use inside arrays (a census keeps a valid row 0).
struct Base {
    path: String,
    body: Value,
    index: usize,
    census: bool,
}

/// The base request of `op`; `None` for operations the table skips.
fn base(ctx: &Ctx, doc: &Value, op: &Operation, fx: &Fixtures) -> Option<Base> {
    let shape = op
        .path
        .split('/')
        .map(|s| if s.starts_with('{') { "{}" } else { s })
        .collect::<Vec<_>>()
        .join("/");
    let group = if shape.ends_with("/elections") {
        &fx.enrolled
    } else if shape.ends_with("/census") {
        &fx.census_group
    } else if shape.contains("/members") {
        &fx.roster_group
    } else {
        &fx.group
    };
    let mut path = String::new();
    let mut previous = "";
    for seg in op.path.split('/').filter(|s| !s.is_empty()) {
        let value = if seg.starts_with('{') {
            match previous {
                "groups" => group.as_str(),
                "members" => fx.member.as_str(),
                "quotes" => fx.quote.as_str(),
                _ => return None,
            }
        } else {
            seg
        };
        path.push('/');
        path.push_str(value);
        previous = seg;
    }
    let signatory = json!({"name": "Dana Lee", "email": "dana@hostile.example"});
    let (body, index, census) = match (op.method.as_str(), shape.as_str()) {
        ("POST", "/v1/groups") | ("PATCH", "/v1/groups/{}") => (group_body(ctx), 0, false),
        ("PUT", "/v1/groups/{}/census") => {
            let members = vec![
                member(ctx, &format!("HX-{}", ctx.hex(3))),
                member(ctx, &format!("HX-{}", ctx.hex(3))),
            ];
            (json!({ "members": members }), 1, true)
        }
        ("POST", "/v1/groups/{}/members") | ("PATCH", "/v1/groups/{}/members/{}") => {
            (member(ctx, &format!("HN-{}", ctx.hex(3))), 0, false)
        }
        ("POST", "/v1/groups/{}/quotes") => (
            json!({"plan_id": "diamond", "plan_year_start_date": "2027-01-01", "employer_contribution_pct": 100}),
            0,
            false,
        ),
        ("POST", "/v1/groups/{}/enrollments") => (
            json!({"quote_id": fx.quote, "signatory": signatory, "onboarding_mode": "hosted", "start_date": "2027-01-01"}),
            0,
            false,
        ),
        ("POST", "/v1/groups/{}/elections") => (
            json!({"elections": [{"external_id": "HE-0", "election": "enrolled", "tier": "employeeOnly",
                                  "dependents": [{"relationship": "spouse"}], "effective_date": "2027-01-01",
                                  "waiver_reason": "other_employer_group"}]}),
            0,
            false,
        ),
        ("POST", "/v1/groups/{}/embed-sessions") => (json!({"quote_id": fx.quote}), 0, false),
        ("PUT", "/v1/webhook") => (
            json!({"url": "https://hooks.example.com/partner"}),
            0,
            false,
        ),
        ("POST", "/v1/price-on-plan") => (price_on_plan(ctx), 0, false),
        _ => (example(doc, op)?, 0, false),
    };
    Some(Base {
        path,
        body,
        index,
        census,
    })
}

/// A price-on-plan body with every field the contract lists (the
/// document gives this body no schema).
fn price_on_plan(ctx: &Ctx) -> Value {
    let rates = json!({"employee_only": 52_000, "employee_spouse": 104_000, "employee_children": 98_000, "family": 150_000});
    let copays = json!({"primary_care": 2_500, "specialist": 5_000, "urgent_care": 7_500, "emergency_room": 25_000,
                        "rx_generic": 1_000, "rx_preferred": 3_500, "rx_specialty": 10_000});
    json!({
        "census": [member(ctx, "PP-0")],
        "company": {"name": "Acme Robotics", "domain": "acme-robotics.example", "external_id": "crm-77", "zip": "60601", "state": "IL"},
        "plan": {
            "carrier": "Acme Health", "plan_name": "Silver PPO HSA 3400", "plan_type": "PPO", "network": "Broad PPO",
            "hsa_eligible": true, "deductible_individual_cents": 340_000, "deductible_family_cents": 680_000,
            "oop_max_individual_cents": 750_000, "oop_max_family_cents": 1_500_000, "coinsurance_pct": 20,
            "pmpm_cents": 52_000, "monthly_rates_cents": rates,
            "member_rates_cents": [{"external_id": "PP-0", "monthly_cents": 52_000}],
        },
        "market_plans": [{
            "carrier": "Blue Plan", "plan_name": "Platinum PPO 500", "plan_type": "PPO", "metal_tier": "Platinum",
            "hsa_eligible": false, "deductible_individual_cents": 50_000, "deductible_family_cents": 100_000,
            "oop_max_individual_cents": 300_000, "oop_max_family_cents": 600_000, "network": "Broad PPO",
            "funding_type": "fully_insured", "monthly_rates_cents": rates, "pmpm_cents": 90_000,
            "member_rates_cents": [{"external_id": "PP-0", "monthly_cents": 90_000}],
            "carrier_plan_id": "BP-500", "effective_date": "2027-01-01", "rating_zip": "60601",
            "embedded_deductible": true, "coinsurance_pct": 10, "copays_cents": copays, "rx_deductible_cents": 0,
            "referral_required": false, "hsa_deductible_required": false, "sbc_url": "https://blue.example/sbc.pdf",
            "doctor_search_url": "https://blue.example/find", "carrier_logo_url": "https://blue.example/logo.png",
        }],
        "fields": ["plans"],
        "exclude": ["assumptions"],
    })
}

/// The leaves of a body that the document leaves without a schema.
fn leaves_of(value: &Value, prefix: &mut Vec<Seg>, out: &mut Vec<Leaf>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                prefix.push(Seg::Key(k.clone()));
                leaves_of(v, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(items) => {
            if let Some(first) = items.first() {
                prefix.push(Seg::Item);
                leaves_of(first, prefix, out);
                prefix.pop();
            }
        }
        Value::String(_) => out.push(Leaf {
            path: prefix.clone(),
            ty: LeafType::Text,
        }),
        Value::Number(n) if n.is_i64() => out.push(Leaf {
            path: prefix.clone(),
            ty: LeafType::Integer {
                maximum: None,
                minimum: None,
            },
        }),
        _ => {}
    }
}

/// The operation's leaves: the document's, or the base body's when the
/// document gives none.
fn leaves(op: &Operation, b: &Base) -> Vec<Leaf> {
    if op.leaves.is_empty() {
        let mut out = Vec::new();
        leaves_of(&b.body, &mut Vec::new(), &mut out);
        out
    } else {
        op.leaves.clone()
    }
}

/// The document's example body of `op`.
fn example(doc: &Value, op: &Operation) -> Option<Value> {
    let media = doc
        .get("paths")?
        .get(&op.path)?
        .get(op.method.to_ascii_lowercase())?
        .pointer("/requestBody/content/application~1json")?;
    if let Some(e) = media.get("example") {
        return Some(e.clone());
    }
    let schema = media.get("schema")?;
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => doc.pointer(r.strip_prefix('#')?)?,
        None => schema,
    };
    schema.get("example").cloned()
}

/// A control character in every string field of every body.
pub(crate) fn control_rows(
    ctx: &Ctx,
    client: &Client,
    doc: &Value,
    ops: &[Operation],
    fx: &Fixtures,
) -> anyhow::Result<Vec<Row>> {
    let all = controls();
    let mut rows = Vec::new();
    let mut turn = 0usize;
    for op in ops {
        let Some(b) = base(ctx, doc, op, fx) else {
            continue;
        };
        for leaf in leaves(op, &b).iter().filter(|l| l.ty == LeafType::Text) {
            // Every character in every field locally; in CI one per field
            // in turn, and every character in the first field.
            let chars: Vec<char> = if !ctx.ci || (rows.is_empty() && turn == 0) {
                all.clone()
            } else {
                turn = turn.saturating_add(1);
                all.get(turn % all.len()).copied().into_iter().collect()
            };
            for c in chars {
                rows.push(control_row(client, op, &b, leaf, c));
            }
        }
    }
    rows.extend(csv_rows(ctx, client, fx));
    Ok(rows)
}

fn control_row(client: &Client, op: &Operation, b: &Base, leaf: &Leaf, c: char) -> Row {
    let mut body = b.body.clone();
    set(&mut body, &leaf.path, b.index, json!(format!("a{c}b")));
    let field = leaf.field(b.index);
    let name = format!("{} {} {field} U+{:04X}", op.method, op.path, u32::from(c));
    let answer = client.json(&op.method, &b.path, &body, &[]);
    Row::judge("control", name, &answer, |r| {
        if b.census {
            r.status == 200 && refuses(r, &field)
        } else {
            refuses(r, &field)
        }
    })
}

/// Control characters in CSV census cells: a row error naming the cell.
fn csv_rows(ctx: &Ctx, client: &Client, fx: &Fixtures) -> Vec<Row> {
    let path = format!("/v1/groups/{}/census", fx.census_group);
    let chars = if ctx.ci {
        vec!['\u{0}', '\u{1b}', '\u{85}']
    } else {
        controls()
    };
    let mut rows = Vec::new();
    for (i, c) in chars.into_iter().enumerate() {
        let (column, field) = if i % 2 == 0 {
            (1, "first_name")
        } else {
            (2, "last_name")
        };
        let mut cells = vec!["HC-2", "Ann", "Lee", "1980-01-01", "60601", ""]
            .into_iter()
            .map(ToOwned::to_owned)
            .collect::<Vec<_>>();
        // Quoted (RFC 4180), so a line break stays inside its cell.
        if let Some(cell) = cells.get_mut(column) {
            *cell = format!("\"A{c}n\"");
        }
        let csv = format!(
            "external_id,first_name,last_name,dob,zip,relationship\nHC-1,Bo,Ray,1979-02-02,60601,\n{}\n",
            cells.join(",")
        );
        let want = format!("members[1].{field}");
        let answer = client.send("PUT", &path, &[], Some(("text/csv", csv.as_bytes())));
        let name = format!("PUT census (CSV) {want} U+{:04X}", u32::from(c));
        rows.push(Row::judge("control", name, &answer, |r| {
            r.status == 200 && refuses(r, &want)
        }));
    }
    rows
}

/// The message a refusal gives `field`, digits left out (so a range's
/// message reads the same for every value).
fn message_for(r: &crate::reliability::http::Response, field: &str) -> Option<String> {
    let v = r.json()?;
    ["/details", "/errors"]
        .iter()
        .filter_map(|p| v.pointer(p).and_then(Value::as_array))
        .flatten()
        .find(|d| d.get("field").and_then(Value::as_str) == Some(field))
        .and_then(|d| d.get("message").and_then(Value::as_str))
        .map(|m| m.chars().filter(|c| !c.is_ascii_digit()).collect())
}

/// The maximum the contract gives a money field.
fn money_max(leaf: &Leaf) -> i64 {
    let name = leaf.name();
    if name.contains("deductible") || name.contains("oop_max") {
        DEDUCTIBLE_MAX
    } else {
        MONTHLY_MAX
    }
}

/// Every `_cents` field at its maximum (accepted), one past it, past
/// `i64`, negative and fractional (each 400 naming it).
pub(crate) fn money_rows(
    ctx: &Ctx,
    client: &Client,
    doc: &Value,
    ops: &[Operation],
    fx: &Fixtures,
) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for op in ops {
        let Some(b) = base(ctx, doc, op, fx) else {
            continue;
        };
        for leaf in &leaves(op, &b) {
            let LeafType::Integer { maximum, minimum } = leaf.ty else {
                continue;
            };
            if !leaf.name().ends_with("_cents") {
                continue;
            }
            let max = money_max(leaf);
            let field = leaf.field(b.index);
            let label = format!("{} {} {field}", op.method, op.path);
            if let Some(documented) = maximum.filter(|m| *m != max) {
                rows.push(Row::failed(
                    &format!("{label} maximum"),
                    &format!("the document says maximum {documented}, the contract {max}"),
                ));
            }
            // One past the maximum first: its message is the range's, which
            // the value at the maximum must not get.
            let values: Vec<(Value, bool, String)> = vec![
                (
                    json!(max.saturating_add(1)),
                    false,
                    format!("{} (one past the maximum)", max.saturating_add(1)),
                ),
                (json!(max), true, format!("at maximum {max}")),
                (
                    serde_json::from_str("9223372036854775808").unwrap_or(Value::Null),
                    false,
                    "2^63 (past i64)".to_owned(),
                ),
                (json!(1.5), false, "1.5 (not an integer)".to_owned()),
            ];
            let negative = minimum
                .is_some_and(|m| m >= 0)
                .then(|| (json!(-1), false, "-1 (below the minimum)".to_owned()));
            let mut range_message = None;
            for (value, accepted, what) in values.into_iter().chain(negative) {
                let mut body = b.body.clone();
                if accepted && max == DEDUCTIBLE_MAX {
                    // Deductibles stay at or below out-of-pocket maxima,
                    // individual at or below family: raise them together.
                    for sibling in leaves(op, &b).iter().filter(|l| {
                        l.path.len() == leaf.path.len()
                            && l.path.split_last().map(|(_, p)| p)
                                == leaf.path.split_last().map(|(_, p)| p)
                            && money_max(l) == DEDUCTIBLE_MAX
                    }) {
                        set(&mut body, &sibling.path, b.index, json!(max));
                    }
                }
                set(&mut body, &leaf.path, b.index, value);
                let answer = client.json(&op.method, &b.path, &body, &[]);
                if !accepted && range_message.is_none() {
                    range_message = answer.as_ref().ok().and_then(|r| message_for(r, &field));
                }
                rows.push(Row::judge(
                    "money",
                    format!("{label} {what}"),
                    &answer,
                    |r| {
                        if accepted {
                            // Refused by another rule (an HSA plan's IRS
                            // out-of-pocket limit) is not refused for range.
                            r.status < 500
                                && (!refuses(r, &field) || message_for(r, &field) != range_message)
                        } else {
                            refuses(r, &field)
                        }
                    },
                ));
            }
        }
    }
    Ok(rows)
}
