//! Go-live readiness: what the service has seen of step (a) of the
//! specification's go-live sequence (Authentication rule 7) — the core
//! flow in test mode (a group, its census, a quote, an enrollment) with
//! webhook signatures verified (an endpoint answered a signed `ping`) —
//! and whether step (b)'s agreements are recorded (`enable-live`).

use domain::partner::{Activity, Partner};

/// One item of step (a) and how often test mode has seen it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Item {
    /// Stable snake_case name (the `missing` list of `--json`).
    pub(crate) name: &'static str,
    /// Label of the text answer.
    pub(crate) label: &'static str,
    /// What the count counts, after the count.
    pub(crate) counted: &'static str,
    /// What the partner has not done yet when the count is zero.
    pub(crate) not_yet: &'static str,
    /// How many were seen in test mode.
    pub(crate) count: u64,
}

impl Item {
    /// Whether test mode has seen it at least once.
    pub(crate) const fn seen(&self) -> bool {
        self.count > 0
    }
}

/// A partner's readiness for live mode.
#[derive(Debug, Clone)]
pub(crate) struct Readiness {
    /// The partner (its `live_enabled` records step (b)'s agreements).
    pub(crate) partner: Partner,
    /// What it has done in test mode.
    pub(crate) test_mode: Activity,
}

impl Readiness {
    /// Step (a)'s items, in the order of the sequence.
    pub(crate) const fn items(&self) -> [Item; 5] {
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
    pub(crate) fn missing(&self) -> Vec<Item> {
        self.items().into_iter().filter(|i| !i.seen()).collect()
    }

    /// Whether every item of step (a) was seen: `enable-live` then needs
    /// no `--force`.
    pub(crate) fn ready(&self) -> bool {
        self.items().iter().all(Item::seen)
    }

    /// Whether step (b)'s agreements are recorded (live mode enabled).
    pub(crate) const fn agreements_recorded(&self) -> bool {
        self.partner.live_enabled
    }

    /// Why `enable-live` refuses, when it does: one line naming what the
    /// partner has not done yet in test mode.
    pub(crate) fn refusal(&self) -> Option<String> {
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
