//! How operator answers look: a human text and a JSON value for each.
//! Timestamps are RFC 3339 UTC with second precision; a key's plaintext
//! appears only in the answers of `key create` and `key show`.

use domain::onboarding::StepView;
use serde::Serialize;
use serde_json::{Value, json};

use domain::api_key::{ApiKey, KeyRecord};
use domain::group::Group;
use domain::ids::{GroupId, KeyId};
use domain::partner::Partner;
use domain::partner_user::PartnerUser;
use domain::quote::Quote;
use domain::services::partner_portal::AddedUser;
use domain::services::partners::MintedKey;
use http_api::wire::timestamp;

use domain::partner::readiness::Readiness;

/// One command's answer.
#[derive(Debug)]
pub(crate) struct Output {
    human: String,
    json: Value,
    /// Lines for the person at the terminal, on stderr, so that stdout
    /// holds only the answer a script captures (`KEY=$(… key create …)`).
    aside: Vec<String>,
}

impl Output {
    /// Prints the answer on stdout: the JSON on one line, or the text
    /// (and the aside on stderr).
    pub(crate) fn print(&self, json: bool) {
        if json {
            println!("{}", self.json);
            return;
        }
        if !self.human.is_empty() {
            println!("{}", self.human);
        }
        for line in &self.aside {
            eprintln!("{line}");
        }
    }
}

/// A wire value (`broker`, `hr_platform`, `test`) as text.
fn wire<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// Unix seconds as RFC 3339 UTC (`2026-11-21T13:14:00Z`).
fn partner_json(p: &Partner) -> Value {
    serde_json::to_value(p).unwrap_or(Value::Null)
}

/// `partner create`: the id alone.
pub(crate) fn created_partner(p: &Partner) -> Output {
    Output {
        human: p.id.to_string(),
        json: partner_json(p),
        aside: Vec::new(),
    }
}

/// `partner enable-live`: `forced` names the step-(a) items `--force`
/// went past (empty when none was missing). The JSON is the partner with
/// `forced` and `missing`.
pub(crate) fn live_enabled(p: &Partner, forced: &[&str]) -> Output {
    let mut out = live_changed(p);
    if !forced.is_empty() {
        out.human = format!(
            "{} (forced: not yet seen in test mode: {})",
            out.human,
            forced.join(", ")
        );
    }
    if let Value::Object(map) = &mut out.json {
        map.insert("forced".to_owned(), Value::Bool(!forced.is_empty()));
        map.insert("missing".to_owned(), json!(forced));
    }
    out
}

/// `partner readiness`: one line per step-(a) item with a check mark or a
/// cross and its count, the agreements, and the verdict.
pub(crate) fn readiness(r: &Readiness) -> Output {
    let mark = |yes: bool| if yes { "\u{2713}" } else { "\u{2717}" };
    let p = &r.partner;
    let mut lines = vec![format!(
        "go-live readiness of {} ({}), as seen in test mode:",
        p.id, p.name
    )];
    lines.extend(r.items().iter().map(|i| {
        format!(
            "{} {:<13} {} {}",
            mark(i.seen()),
            i.label,
            i.count,
            i.counted
        )
    }));
    let agreements = if r.agreements_recorded() {
        "recorded (live mode enabled)"
    } else {
        "not recorded (partner enable-live records them)"
    };
    lines.push(format!(
        "{} {:<13} {agreements}",
        mark(r.agreements_recorded()),
        "agreements"
    ));
    let missing: Vec<&str> = r.missing().iter().map(|i| i.name).collect();
    lines.push(if missing.is_empty() {
        "ready for live: yes".to_owned()
    } else {
        format!("ready for live: no (missing: {})", missing.join(", "))
    });
    let a = &r.test_mode;
    Output {
        human: lines.join("\n"),
        json: json!({
            "partner": partner_json(p),
            "test_mode": {
                "groups": a.groups,
                "groups_with_census": a.groups_with_census,
                "quotes": a.quotes,
                "enrollments": a.enrollments,
                "webhook_pings_delivered": a.pings_delivered,
            },
            "agreements_recorded": r.agreements_recorded(),
            "missing": missing,
            "ready": r.ready(),
        }),
        aside: Vec::new(),
    }
}

/// `quote finalize`.
pub(crate) fn finalized(q: &Quote) -> Output {
    Output {
        human: format!(
            "{}: {} (group {}, {} mode)",
            q.id,
            q.status.as_str(),
            q.group_id,
            q.scope.mode.as_str()
        ),
        json: json!({
            "id": q.id.as_str(),
            "group_id": q.group_id.as_str(),
            "mode": q.scope.mode.as_str(),
            "status": q.status.as_str(),
        }),
        aside: Vec::new(),
    }
}

/// `group go-live`.
pub(crate) fn went_live(g: &Group) -> Output {
    let state = g.company_state.map(|c| c.as_str());
    Output {
        human: format!(
            "{}: company state {}, group {} ({} mode)",
            g.id,
            state.unwrap_or("none"),
            g.status.as_str(),
            g.mode.as_str()
        ),
        json: json!({
            "id": g.id.as_str(),
            "mode": g.mode.as_str(),
            "status": g.status.as_str(),
            "company_state": state,
        }),
        aside: Vec::new(),
    }
}

/// `company verify|reject`.
pub(crate) fn reviewed(id: &GroupId, step: &StepView) -> Output {
    let reason = step.errors.first().map(|e| e.message.as_str());
    Output {
        human: match reason {
            Some(r) => format!("{id}: business verification {} ({r})", step.status.as_str()),
            None => format!("{id}: business verification {}", step.status.as_str()),
        },
        json: json!({
            "group_id": id.as_str(),
            "step": step.id.as_str(),
            "status": step.status.as_str(),
            "reason": reason,
        }),
        aside: Vec::new(),
    }
}

/// `company deposits`.
pub(crate) fn deposits(id: &GroupId, amounts: [u32; 2]) -> Output {
    let [a, b] = amounts;
    Output {
        human: format!("{id}: micro-deposits of {a} and {b} cents"),
        json: json!({"amounts_cents": [a, b]}),
        aside: Vec::new(),
    }
}

/// `group import-claims`.
pub(crate) fn claims_imported(id: &GroupId, n: u32) -> Output {
    Output {
        human: format!("{id}: {n} claims rows imported"),
        json: json!({"group_id": id.as_str(), "imported": n}),
        aside: Vec::new(),
    }
}

/// `partner disable-live` (and the base of `enable-live`).
pub(crate) fn live_changed(p: &Partner) -> Output {
    let state = if p.live_enabled {
        "enabled"
    } else {
        "disabled"
    };
    Output {
        human: format!("{}: live mode {state}", p.id),
        json: partner_json(p),
        aside: Vec::new(),
    }
}

/// `partner embed-origins`: one origin a line, or what applies without
/// any.
pub(crate) fn embed_origins(p: &Partner) -> Output {
    let human = if p.embed_origins.is_empty() {
        format!(
            "{}: no embed origins (test-mode offers may be framed anywhere, live-mode offers nowhere)",
            p.id
        )
    } else {
        p.embed_origins.join("\n")
    };
    Output {
        human,
        json: json!({"partner_id": p.id.as_str(), "embed_origins": p.embed_origins}),
        aside: Vec::new(),
    }
}

/// `partner show`: one `field  value` line each.
pub(crate) fn partner(p: &Partner) -> Output {
    let capabilities = p.capabilities.iter().map(wire).collect::<Vec<_>>();
    let lines = [
        ("id", p.id.to_string()),
        ("name", p.name.clone()),
        ("kind", wire(&p.kind)),
        ("benefits_admin", wire(&p.benefits_admin)),
        ("live_enabled", p.live_enabled.to_string()),
        ("capabilities", capabilities.join(", ")),
        ("embed_origins", p.embed_origins.join(" ")),
    ];
    Output {
        human: lines
            .iter()
            .map(|(k, v)| format!("{k:<15} {v}"))
            .collect::<Vec<_>>()
            .join("\n"),
        json: partner_json(p),
        aside: Vec::new(),
    }
}

/// `partner list`: a table, oldest first.
pub(crate) fn partner_list(partners: &[Partner]) -> Output {
    let human = if partners.is_empty() {
        "no partners".to_owned()
    } else {
        let mut lines = vec![format!(
            "{:<16}  {:<11}  {:<14}  {:<5}  NAME",
            "ID", "KIND", "BENEFITS_ADMIN", "LIVE"
        )];
        lines.extend(partners.iter().map(|p| {
            format!(
                "{:<16}  {:<11}  {:<14}  {:<5}  {}",
                p.id.as_str(),
                wire(&p.kind),
                wire(&p.benefits_admin),
                p.live_enabled,
                p.name
            )
        }));
        lines.join("\n")
    };
    Output {
        human,
        json: Value::Array(partners.iter().map(partner_json).collect()),
        aside: Vec::new(),
    }
}

fn key_json(k: &KeyRecord) -> Value {
    json!({
        "id": k.id.as_str(),
        "partner_id": k.partner_id.as_str(),
        "mode": k.mode.as_str(),
        "prefix": k.prefix,
        "created_at": timestamp(k.created_at),
        "revoked": !k.is_active(),
        "revoked_at": k.revoked_at.map(timestamp),
    })
}

/// `key create`: the key alone on stdout, its record on stderr.
pub(crate) fn minted(m: &MintedKey) -> Output {
    let r = &m.record;
    let mut aside = vec![format!(
        "{} {} key for {}",
        r.id,
        r.mode.as_str(),
        r.partner_id
    )];
    aside.extend(m.revoked.iter().map(|id| format!("revoked {id}")));
    if r.mode == domain::mode::Mode::Live {
        aside.push("store it now: live keys cannot be shown again".to_owned());
    }
    let mut json = key_json(r);
    if let Value::Object(map) = &mut json {
        map.insert("key".to_owned(), Value::String(m.key.expose().to_owned()));
        map.insert(
            "revoked_keys".to_owned(),
            Value::Array(
                m.revoked
                    .iter()
                    .map(|id| Value::String(id.to_string()))
                    .collect(),
            ),
        );
    }
    Output {
        human: m.key.expose().to_owned(),
        json,
        aside,
    }
}

/// `key list`: a table, newest first, never the key.
pub(crate) fn key_list(keys: &[KeyRecord]) -> Output {
    let human = if keys.is_empty() {
        "no keys".to_owned()
    } else {
        let mut lines = vec![format!(
            "{:<16}  {:<14}  {:<4}  {:<20}  REVOKED",
            "ID", "PREFIX", "MODE", "CREATED"
        )];
        lines.extend(keys.iter().map(|k| {
            format!(
                "{:<16}  {:<14}  {:<4}  {:<20}  {}",
                k.id.as_str(),
                k.prefix,
                k.mode.as_str(),
                timestamp(k.created_at),
                k.revoked_at.map_or_else(|| "-".to_owned(), timestamp)
            )
        }));
        lines.join("\n")
    };
    Output {
        human,
        json: Value::Array(keys.iter().map(key_json).collect()),
        aside: Vec::new(),
    }
}

/// `key revoke`.
pub(crate) fn revoked(id: &KeyId) -> Output {
    Output {
        human: format!("revoked {id}"),
        json: json!({ "id": id.as_str(), "revoked": true }),
        aside: Vec::new(),
    }
}

/// `key show`: the key alone.
pub(crate) fn shown(id: &KeyId, key: &ApiKey) -> Output {
    Output {
        human: key.expose().to_owned(),
        json: json!({ "id": id.as_str(), "mode": key.mode().as_str(), "key": key.expose() }),
        aside: Vec::new(),
    }
}

/// `partner agreements`: the partner's step (c).
pub(crate) fn agreements(p: &Partner) -> Output {
    let state = if p.commercial_done {
        "completed"
    } else {
        "pending"
    };
    Output {
        human: format!(
            "commercial and operational agreements of {} ({}): {state}",
            p.id, p.name
        ),
        json: partner_json(p),
        aside: Vec::new(),
    }
}

fn user_json(u: &PartnerUser) -> Value {
    json!({
        "id": u.id,
        "partner_id": u.partner,
        "email": u.email,
        "role": u.role.as_str(),
        "password_set": u.password_hash.is_some(),
        "two_factor": u.two_factor(),
        "created_at": timestamp(u.created_at),
    })
}

/// `partner user add`: the set-password link alone on the first line.
pub(crate) fn user_added(a: &AddedUser) -> Output {
    let mut json = user_json(&a.user);
    if let Value::Object(map) = &mut json {
        map.insert("set_password_url".to_owned(), json!(a.set_password_url));
        map.insert("expires_at".to_owned(), json!(timestamp(a.expires_at)));
    }
    Output {
        human: format!(
            "{}\n{} {} ({}); single-use link, expires {}",
            a.set_password_url,
            a.user.id,
            a.user.email,
            a.user.role.as_str(),
            timestamp(a.expires_at)
        ),
        json,
        aside: Vec::new(),
    }
}

/// `partner user list`: one line per user.
pub(crate) fn user_list(users: &[PartnerUser]) -> Output {
    let human = users
        .iter()
        .map(|u| {
            format!(
                "{}  {:<6}  {}  password {}  two-factor {}",
                u.id,
                u.role.as_str(),
                u.email,
                if u.password_hash.is_some() {
                    "set"
                } else {
                    "not set"
                },
                if u.two_factor() { "on" } else { "off" }
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    Output {
        human,
        json: Value::Array(users.iter().map(user_json).collect()),
        aside: Vec::new(),
    }
}

/// `partner user remove`.
pub(crate) fn user_removed(u: &PartnerUser) -> Output {
    Output {
        human: format!("removed {} {}", u.id, u.email),
        json: user_json(u),
        aside: Vec::new(),
    }
}
