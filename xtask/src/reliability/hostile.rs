//! Part 6: the hostile-input table. Each row is one request and the
//! answer the contract requires; the server runs with its defaults
//! (insecure webhook endpoints refused) and a short body timeout.
//!
//! - [`fields`]: a control character (U+0000–U+001F, U+007F–U+009F) in
//!   every string field of every JSON request body the OpenAPI document
//!   lists (and in the CSV census) → 400 `invalid_request` naming the
//!   field, or a row error naming it in a census; every money field at its
//!   maximum (accepted), past it, past `i64` and fractional (400 naming it);
//! - [`bodies`]: oversized, deeply nested, invalid UTF-8, duplicate keys,
//!   too many rows, slow bodies and slow heads;
//! - [`ssrf`]: webhook URLs that reach loopback, private, link-local or
//!   unique-local addresses in any spelling → 400 naming `url`.

mod bodies;
mod fields;
mod schema;
mod ssrf;

use std::collections::BTreeMap;
use std::thread;

use anyhow::Context as _;
use serde_json::Value;

use crate::reliability::Figure;
use crate::reliability::fixtures::{self, census, enroll, list_all, quoted_group};
use crate::reliability::harness::{Backend, Ctx, Server};
use crate::reliability::http::{Client, Response};

/// The resources the rows' paths and bodies refer to.
pub(crate) struct Fixtures {
    /// A group with a census and a ready quote, not enrolled.
    pub group: String,
    /// `group`'s ready quote.
    pub quote: String,
    /// A group whose census the census rows replace.
    pub census_group: String,
    /// A group for the member rows, and one of its members.
    pub roster_group: String,
    /// A member of `roster_group`.
    pub member: String,
    /// An enrolled group (for elections), members `HE-0`, `HE-1`.
    pub enrolled: String,
}

/// Runs the part on `backend`.
pub(crate) fn run(ctx: &Ctx, backend: Backend) -> anyhow::Result<Figure> {
    let db = ctx.fresh_db(backend, "hostile")?;
    let key = ctx.partner(&db, "broker", "Reliability Hostile Broker")?;
    // Price-on-plan rows at a maximum answer 202 at once and price in the
    // background instead of holding the table up.
    let env = vec![(
        "PARTNER_API_PRICING__WAIT_BUDGET_MS".to_owned(),
        "0".to_owned(),
    )];
    let mut server = Server::start(ctx, &db, "hostile", &env)?;
    let client = server.client(&key);
    let mut figure = Figure::default();

    // The slow clients hold their connections while the other rows run.
    let rows = thread::scope(|s| -> anyhow::Result<Vec<Row>> {
        let probes = bodies::slow_probes(s, &client);
        let fx = prepare(ctx, &client)?;
        let doc = client
            .get("/v1/openapi.json")?
            .json()
            .context("GET /v1/openapi.json is not JSON")?;
        let ops = schema::operations(&doc);
        let mut rows = Vec::new();
        rows.extend(fields::control_rows(ctx, &client, &doc, &ops, &fx)?);
        rows.extend(fields::money_rows(ctx, &client, &doc, &ops, &fx)?);
        rows.extend(bodies::rows(ctx, &client, &fx)?);
        rows.extend(ssrf::rows(&client)?);
        for probe in probes {
            rows.push(
                probe
                    .join()
                    .unwrap_or_else(|_| Row::failed("slow client", "the probe panicked")),
            );
        }
        Ok(rows)
    })?;
    // A field refused for no character is one note, not 65.
    let mut failing: BTreeMap<String, (usize, usize, String)> = BTreeMap::new();
    for row in &rows {
        let group = row.name.split(" U+").next().unwrap_or_default().to_owned();
        let entry = failing.entry(group).or_insert((0, 0, String::new()));
        entry.1 = entry.1.saturating_add(1);
        if !row.held {
            entry.0 = entry.0.saturating_add(1);
            if entry.2.is_empty() {
                entry.2 = format!("{}: {}", row.name, row.got);
            }
        }
    }
    let mut failed_by_kind: BTreeMap<String, usize> = BTreeMap::new();
    for row in &rows {
        figure.tried = figure.tried.saturating_add(1);
        if row.held {
            figure.held = figure.held.saturating_add(1);
        } else {
            figure.failed = figure.failed.saturating_add(1);
            *failed_by_kind.entry(row.kind.clone()).or_insert(0) += 1;
        }
    }
    for (group, (failed, of, example)) in &failing {
        if *failed == 1 && *of == 1 {
            figure.note(example.clone());
        } else if *failed > 0 {
            figure.note(format!(
                "{group}: {failed} of {of} rows failed, e.g. {example}"
            ));
        }
    }
    let alive = server.is_running() && client.get("/v1/ping").is_ok_and(|r| r.status == 200);
    figure.check(alive, || "the server did not survive the table".to_owned());
    if !failed_by_kind.is_empty() {
        figure.note(format!("failing rows by kind: {failed_by_kind:?}"));
    }
    server.kill();
    Ok(figure)
}

/// One row's outcome.
pub(crate) struct Row {
    /// What was sent, e.g. `POST /v1/groups company_name U+0000`.
    pub name: String,
    /// The row's kind, for the summary (`control`, `money`, …).
    pub kind: String,
    /// Whether the answer was the required one.
    pub held: bool,
    /// The answer (status, code, fields named) when it was not.
    pub got: String,
}

impl Row {
    /// A row judged from an answer.
    pub(crate) fn judge(
        kind: &str,
        name: String,
        answer: &std::io::Result<Response>,
        ok: impl FnOnce(&Response) -> bool,
    ) -> Self {
        match answer {
            Ok(r) => {
                let held = ok(r);
                Self {
                    name,
                    kind: kind.to_owned(),
                    held,
                    got: format!("got {}", r.brief()),
                }
            }
            Err(e) => Self {
                name,
                kind: kind.to_owned(),
                held: false,
                got: format!("no answer: {e}"),
            },
        }
    }

    /// A row that could not be run.
    pub(crate) fn failed(name: &str, why: &str) -> Self {
        Self {
            name: name.to_owned(),
            kind: "other".to_owned(),
            held: false,
            got: why.to_owned(),
        }
    }
}

/// Whether `r` refuses `field`: 400 in the envelope naming it, or a 2xx
/// whose row errors name it.
pub(crate) fn refuses(r: &Response, field: &str) -> bool {
    r.names_field(400, field)
        || ((200..300).contains(&r.status) && r.detail_fields().iter().any(|f| f == field))
}

/// Creates the fixtures.
fn prepare(ctx: &Ctx, client: &Client) -> anyhow::Result<Fixtures> {
    let (group, quote) = quoted_group(ctx, client, "HF", 2)?;
    let census_group = fixtures::group(ctx, client)?;
    let roster_group = fixtures::group(ctx, client)?;
    census(ctx, client, &roster_group, "HR", 2)?;
    let members = list_all(
        client,
        &format!("/v1/groups/{roster_group}/census"),
        "members",
        "id",
    )?;
    let member = members
        .first()
        .and_then(Value::as_str)
        .context("the fixture census has no member")?
        .to_owned();
    let (enrolled, enrolled_quote) = quoted_group(ctx, client, "HE", 2)?;
    enroll(ctx, client, &enrolled, &enrolled_quote)?;
    Ok(Fixtures {
        group,
        quote,
        census_group,
        roster_group,
        member,
        enrolled,
    })
}
