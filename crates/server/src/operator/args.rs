//! The operator commands' arguments, parsed by clap.

use clap::{Args, Subcommand, ValueEnum};

/// `partner …`: partner accounts.
#[derive(Debug, Subcommand)]
pub enum PartnerCommand {
    /// Create a partner and print its `prt_` id.
    Create(CreatePartner),
    /// Enable live mode: records that the business associate and data
    /// processing agreements are executed. Refused while `partner
    /// readiness` shows the test-mode flow incomplete, unless `--force`.
    EnableLive {
        /// The partner (`prt_…`).
        #[arg(value_name = "PRT_ID")]
        id: String,
        /// Enable even though test mode has not yet seen every step of
        /// the core flow (group, census, quote, enrollment, webhook ping).
        #[arg(long)]
        force: bool,
    },
    /// Disable live mode (live keys then answer 403 `live_mode_disabled`).
    DisableLive {
        /// The partner (`prt_…`).
        #[arg(value_name = "PRT_ID")]
        id: String,
    },
    /// Set the origins whose pages may frame the offer iframe
    /// (`Content-Security-Policy: frame-ancestors`), replacing the list;
    /// without an origin, show it. With none set, test-mode offers may be
    /// framed anywhere and live-mode offers nowhere.
    EmbedOrigins {
        /// The partner (`prt_…`).
        #[arg(value_name = "PRT_ID")]
        id: String,
        /// Origins such as `https://app.example.com` (scheme, host,
        /// optional port; no path).
        #[arg(value_name = "URL")]
        origins: Vec<String>,
        /// Clear the list.
        #[arg(long, conflicts_with = "origins")]
        none: bool,
    },
    /// List every partner, oldest first.
    List,
    /// Show one partner.
    Show {
        /// The partner (`prt_…`).
        #[arg(value_name = "PRT_ID")]
        id: String,
    },
    /// Partner portal users: `add` prints a single-use set-password link
    /// (7 days) under `public_base_url`.
    #[command(subcommand)]
    User(UserCommand),
    /// Record the commercial and operational agreements (go-live step
    /// (c) of the partner portal's checklist).
    Agreements {
        /// The partner (`prt_…`).
        #[arg(value_name = "PRT_ID")]
        id: String,
        /// `done` once they are completed, `pending` to take it back.
        #[arg(long, value_enum)]
        commercial: AgreementArg,
    },
    /// Go-live readiness: what test mode has seen of the core flow (a
    /// group, a census, a quote, an enrollment, a webhook endpoint that
    /// answered a signed ping) and whether the agreements are recorded.
    Readiness {
        /// The partner (`prt_…`).
        #[arg(value_name = "PRT_ID")]
        id: String,
    },
}

/// `partner user …`: partner portal users.
#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Add a user and print its set-password link (single use, 7 days).
    Add {
        /// The partner (`prt_…`).
        #[arg(long, value_name = "PRT_ID")]
        partner: String,
        /// The user's email address.
        #[arg(long, value_name = "EMAIL")]
        email: String,
        /// `admin` acts; `viewer` reads everything except secrets.
        #[arg(long, value_enum)]
        role: RoleArg,
    },
    /// List a partner's users, oldest first.
    List {
        /// The partner (`prt_…`).
        #[arg(long, value_name = "PRT_ID")]
        partner: String,
    },
    /// Remove a user (its sessions end at once).
    Remove {
        /// The partner (`prt_…`).
        #[arg(long, value_name = "PRT_ID")]
        partner: String,
        /// The user: its `usr_` id or its email address.
        #[arg(value_name = "USER")]
        user: String,
    },
}

/// A partner portal role.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RoleArg {
    /// Reads and acts.
    Admin,
    /// Reads everything except secrets.
    Viewer,
}

/// The state of the commercial and operational agreements.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AgreementArg {
    /// Completed.
    Done,
    /// Not completed.
    Pending,
}

/// `quote …`: underwriting.
#[derive(Debug, Subcommand)]
pub enum QuoteCommand {
    /// Finalize an `in_review` quote of any partner and mode: it becomes
    /// `ready` and `quote.finalized` is sent.
    Finalize {
        /// The quote (`qt_…`).
        #[arg(value_name = "QT_ID")]
        id: String,
    },
}

/// `group …`: employer groups.
#[derive(Debug, Subcommand)]
pub enum GroupCommand {
    /// Take an enrolled group's provisioned company live (`sandbox` →
    /// `prod`): the group becomes `active` and `group.state_changed` is
    /// sent.
    GoLive {
        /// The group (`grp_…`).
        #[arg(value_name = "GRP_ID")]
        id: String,
    },
    /// Import aggregate claims into the group's ledger (account spend):
    /// a CSV with the header `month,category,amount_cents,member_count`,
    /// one row per month and category. A row for a month and category
    /// already imported replaces it. Every row is checked first; a bad row
    /// imports nothing.
    ImportClaims {
        /// The group (`grp_…`).
        #[arg(value_name = "GRP_ID")]
        id: String,
        /// The CSV file.
        #[arg(long, value_name = "FILE")]
        file: std::path::PathBuf,
    },
}

/// `company …`: the provisioned company's onboarding, for underwriting.
#[derive(Debug, Subcommand)]
pub enum CompanyCommand {
    /// Verify the business of a live enrollment waiting for review: its
    /// `business_verification` step becomes `completed`.
    Verify {
        /// The group (`grp_…`).
        #[arg(value_name = "GRP_ID")]
        id: String,
    },
    /// Refuse the business of a live enrollment waiting for review: its
    /// `business_verification` step becomes `action_required` with the
    /// reason, which the employer reads.
    Reject {
        /// The group (`grp_…`).
        #[arg(value_name = "GRP_ID")]
        id: String,
        /// What the employer reads (1 to 500 characters).
        #[arg(long)]
        reason: String,
    },
    /// Show the two micro-deposit amounts, in cents, of the group's bank
    /// account (for the payments provider that makes them).
    Deposits {
        /// The group (`grp_…`).
        #[arg(value_name = "GRP_ID")]
        id: String,
    },
}

/// Arguments of `partner create`.
#[derive(Debug, Args)]
pub struct CreatePartner {
    /// Display name (1 to 200 characters).
    #[arg(long)]
    pub name: String,
    /// Broker or HR platform partner.
    #[arg(long, value_enum)]
    pub kind: KindArg,
    /// Who runs benefits administration (default: `partner` for brokers,
    /// `service` for HR platforms).
    #[arg(long, value_enum)]
    pub benefits_admin: Option<AdminArg>,
}

/// `--kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KindArg {
    /// A broker (snake_case responses, elections by default).
    #[value(name = "broker")]
    Broker,
    /// An HR or payroll platform (camelCase responses).
    #[value(name = "hr_platform")]
    HrPlatform,
}

/// `--benefits-admin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AdminArg {
    /// The partner administers benefits.
    Partner,
    /// The service administers benefits.
    Service,
}

/// `key …`: API keys.
#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Create a key and print it once (the key alone on the first line).
    Create {
        /// The partner (`prt_…`).
        #[arg(long, value_name = "PRT_ID")]
        partner: String,
        /// Test (sandbox) or live.
        #[arg(long, value_enum)]
        mode: ModeArg,
        /// Revoke the active live key in the same transaction (one live
        /// key is active at a time).
        #[arg(long)]
        rotate: bool,
    },
    /// List a partner's keys, newest first (never the key itself).
    List {
        /// The partner (`prt_…`).
        #[arg(long, value_name = "PRT_ID")]
        partner: String,
    },
    /// Revoke a key.
    Revoke {
        /// The key record (`key_…`).
        #[arg(value_name = "KEY_ID")]
        id: String,
    },
    /// Re-display an active test key (live keys cannot be shown again).
    Show {
        /// The key record (`key_…`).
        #[arg(value_name = "KEY_ID")]
        id: String,
    },
}

/// `--mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Sandbox.
    Test,
    /// Live.
    Live,
}

/// `From` each of these arguments to the domain's value of the same name.
macro_rules! into_domain {
    ($($arg:ident => $ty:ty { $($v:ident),+ })+) => {$(
        impl From<$arg> for $ty {
            fn from(arg: $arg) -> Self {
                match arg { $($arg::$v => Self::$v),+ }
            }
        }
    )+};
}

into_domain! {
    KindArg => domain::partner::PartnerKind { Broker, HrPlatform }
    AdminArg => domain::partner::BenefitsAdmin { Partner, Service }
    ModeArg => domain::mode::Mode { Test, Live }
    RoleArg => domain::partner_user::Role { Admin, Viewer }
}
