//! Go-live readiness: what the service has seen of step (a) of the
//! specification's go-live sequence (Authentication rule 7) — the core
//! flow in test mode (a group, its census, a quote, an enrollment) with
//! webhook signatures verified (an endpoint answered a signed `ping`) —
//! and whether step (b)'s agreements are recorded (`enable-live`).
//!
//! `partner readiness` prints it; the partner portal's go-live checklist
//! ([`GoLive`]) is built on it, so both read the same facts.

use crate::partner::{Activity, Partner};

/// One item of step (a) and how often test mode has seen it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    /// Stable snake_case name (the `missing` list of `--json`).
    pub name: &'static str,
    /// Label of the text answer.
    pub label: &'static str,
    /// What the count counts, after the count.
    pub counted: &'static str,
    /// What the partner has not done yet when the count is zero.
    pub not_yet: &'static str,
    /// How many were seen in test mode.
    pub count: u64,
}

impl Item {
    /// Whether test mode has seen it at least once.
    pub const fn seen(&self) -> bool {
        self.count > 0
    }
}

/// A partner's readiness for live mode.
#[derive(Debug, Clone)]
pub struct Readiness {
    /// The partner (its `live_enabled` records step (b)'s agreements).
    pub partner: Partner,
    /// What it has done in test mode.
    pub test_mode: Activity,
}

impl Readiness {
    /// Step (a)'s items, in the order of the sequence.
    pub const fn items(&self) -> [Item; 5] {
        let a = &self.test_mode;
        [
            Item {
                name: "group",
                label: "group",
                counted: "created",
                not_yet: "created a group",
                count: a.groups,
            },
            Item {
                name: "census",
                label: "census",
                counted: "groups with a census",
                not_yet: "sent a census",
                count: a.groups_with_census,
            },
            Item {
                name: "quote",
                label: "quote",
                counted: "created",
                not_yet: "created a quote",
                count: a.quotes,
            },
            Item {
                name: "enrollment",
                label: "enrollment",
                counted: "created",
                not_yet: "created an enrollment",
                count: a.enrollments,
            },
            Item {
                name: "webhook_ping",
                label: "webhook ping",
                counted: "signed pings delivered",
                not_yet: "had a webhook endpoint answer a signed ping",
                count: a.pings_delivered,
            },
        ]
    }

    /// Step (a)'s items not seen yet.
    pub fn missing(&self) -> Vec<Item> {
        self.items().into_iter().filter(|i| !i.seen()).collect()
    }

    /// Whether every item of step (a) was seen: `enable-live` then needs
    /// no `--force`.
    pub fn ready(&self) -> bool {
        self.items().iter().all(Item::seen)
    }

    /// Whether step (b)'s agreements are recorded (live mode enabled).
    pub const fn agreements_recorded(&self) -> bool {
        self.partner.live_enabled
    }

    /// Why `enable-live` refuses, when it does: one line naming what the
    /// partner has not done yet in test mode.
    pub fn refusal(&self) -> Option<String> {
        let missing = self.missing();
        if missing.is_empty() {
            return None;
        }
        let not_yet = missing.iter().map(|i| i.not_yet).collect::<Vec<_>>();
        Some(format!(
            "cannot enable live mode: the partner has not yet, in test mode: {} (pass --force to enable anyway)",
            not_yet.join(", ")
        ))
    }
}

/// The partner portal's go-live checklist (partner-portal §2): five
/// items, each derived from facts, never ticked by hand.
#[derive(Debug, Clone)]
pub struct GoLive {
    /// Step (a) and (b): test mode's flow and the agreements.
    pub readiness: Readiness,
    /// Whether an active live key exists.
    pub live_key: bool,
    /// Groups created in live mode.
    pub live_groups: u64,
}

/// One item of the go-live checklist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Its letter in the sequence, `a` to `e`.
    pub letter: char,
    /// What it asks for.
    pub label: &'static str,
    /// Whether the facts show it done.
    pub done: bool,
    /// What is missing or who acts, when it is not done.
    pub todo: String,
}

impl GoLive {
    /// The five steps, in order.
    #[must_use]
    pub fn steps(&self) -> [Step; 5] {
        let r = &self.readiness;
        let missing: Vec<&str> = r.missing().iter().map(|i| i.not_yet).collect();
        let live = r.agreements_recorded();
        [
            Step {
                letter: 'a',
                label: "In test mode, a group went through census, quote and enrollment, and a webhook ping was answered with 2xx",
                done: r.ready(),
                todo: format!("Not yet in test mode: {}.", missing.join(", ")),
            },
            Step {
                letter: 'b',
                label: "Business associate and data processing agreements executed",
                done: live,
                todo: "Recorded by us when the agreements are signed (live mode is then enabled)."
                    .to_owned(),
            },
            Step {
                letter: 'c',
                label: "Commercial and operational agreements completed",
                done: r.partner.commercial_done,
                todo: "Recorded by us when the agreements are completed.".to_owned(),
            },
            Step {
                letter: 'd',
                label: "Live mode enabled and a live key minted",
                done: live && self.live_key,
                todo: if live {
                    "Mint the live key on the API keys page.".to_owned()
                } else {
                    "Live mode is enabled with step (b); then mint the live key.".to_owned()
                },
            },
            Step {
                letter: 'e',
                label: "The first live group created",
                done: self.live_groups > 0,
                todo: "Create a group with the live key.".to_owned(),
            },
        ]
    }

    /// How many steps are done.
    #[must_use]
    pub fn done(&self) -> usize {
        self.steps().iter().filter(|s| s.done).count()
    }
}
