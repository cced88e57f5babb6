//! Census members as stored, and the rules of a census replace: rows match
//! existing members by `external_id`, else by email (case-insensitive), and
//! keep their `mem_` ids; members absent from the new census are removed; a
//! duplicate `external_id` or email inside one write is an error on the
//! later row (contract section 3, Census).

use std::collections::HashMap;

use pricing_core::census::{CensusMember, EmploymentType, MemberStatus, Relationship};
use sha2::{Digest, Sha256};

use crate::error::FieldError;
use crate::event::NewEvent;
use crate::ids::{GroupId, MemberId};
use crate::job::NewJob;
use crate::member::MemberState;

/// Most members in one census write.
pub const MAX_CENSUS_MEMBERS: usize = 10_000;

/// A census member as stored: its id, its position in the write that
/// last placed it, and the fields sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMember {
    /// `mem_` id, kept across writes that match the member.
    pub id: MemberId,
    /// Group.
    pub group_id: GroupId,
    /// The member as sent (validated).
    pub member: CensusMember,
    /// Zero-based row index in the last census write.
    pub position: u32,
    /// When the member first appeared, Unix seconds.
    pub created_at: i64,
    /// When the member was last written, Unix seconds.
    pub updated_at: i64,
    /// Roster state (enrollment, invitation, termination, COBRA).
    pub state: MemberState,
}

/// One member added or changed on its own (`POST` / `PATCH` members), as
/// the storage port applies it in one transaction: the member, its roster
/// state, and the market comparison the changed census needs.
#[derive(Debug, Clone, PartialEq)]
pub struct MemberWrite {
    /// Group.
    pub group_id: GroupId,
    /// The member's id (fresh for a new hire).
    pub id: MemberId,
    /// The member's fields, validated.
    pub member: CensusMember,
    /// Roster state.
    pub state: MemberState,
    /// The market comparison to enqueue (superseding an open one).
    pub job: NewJob,
    /// Write time, Unix seconds.
    pub now: i64,
}

/// Final elections, as the storage port records them in one transaction
/// under the group's lock: the members' new roster states, with the
/// events and jobs they cause.
#[derive(Debug, Clone, PartialEq)]
pub struct ElectionsWrite {
    /// Group.
    pub group_id: GroupId,
    /// Each elected member's new roster state.
    pub states: Vec<(MemberId, MemberState)>,
    /// `deductions.changed`, when the partner administers benefits.
    pub events: Vec<NewEvent>,
    /// The member logins' `email` jobs.
    pub jobs: Vec<NewJob>,
    /// Write time, Unix seconds.
    pub now: i64,
}

/// The keys an existing member is matched by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberKeys {
    /// Id.
    pub id: MemberId,
    /// `external_id`, if sent.
    pub external_id: Option<String>,
    /// Email, lowercased, if sent.
    pub email: Option<String>,
    /// First appearance, kept for matched members.
    pub created_at: i64,
}

/// Lowercases an email for matching.
#[must_use]
pub fn email_key(email: &str) -> String {
    email.trim().to_lowercase()
}

/// Where each row of a replace lands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// The row's member id: kept from a match, or fresh.
    pub id: MemberId,
    /// Its first-appearance time: kept from a match, or `now`.
    pub created_at: i64,
    /// Whether the row matched an existing member.
    pub kept: bool,
}

/// Assigns ids to the rows of a census replace. `fresh` supplies an id for
/// each row that matches nobody. A row matches an existing member by
/// `external_id` first, then by email; an existing member is matched at
/// most once.
pub fn assign_ids(
    existing: &[MemberKeys],
    rows: &[CensusMember],
    now: i64,
    mut fresh: impl FnMut() -> MemberId,
) -> Vec<Assignment> {
    let mut by_ext: HashMap<&str, usize> = HashMap::new();
    let mut by_email: HashMap<String, usize> = HashMap::new();
    for (i, m) in existing.iter().enumerate() {
        if let Some(e) = &m.external_id {
            by_ext.entry(e.as_str()).or_insert(i);
        }
        if let Some(e) = &m.email {
            by_email.entry(email_key(e)).or_insert(i);
        }
    }
    let mut taken = vec![false; existing.len()];
    rows.iter()
        .map(|row| {
            let by_id = row
                .external_id
                .as_deref()
                .and_then(|e| by_ext.get(e).copied());
            let by_mail = || {
                row.email
                    .as_deref()
                    .and_then(|e| by_email.get(&email_key(e)).copied())
            };
            let hit = by_id
                .or_else(by_mail)
                .filter(|&i| taken.get(i).is_some_and(|t| !t));
            match hit.and_then(|i| existing.get(i).map(|m| (i, m))) {
                Some((i, m)) => {
                    if let Some(t) = taken.get_mut(i) {
                        *t = true;
                    }
                    Assignment {
                        id: m.id.clone(),
                        created_at: m.created_at,
                        kept: true,
                    }
                }
                None => Assignment {
                    id: fresh(),
                    created_at: now,
                    kept: false,
                },
            }
        })
        .collect()
}

/// Row errors for duplicates inside one write: a repeated `external_id` or
/// email is an error on the later row. `prefix` is the array path.
#[must_use]
pub fn duplicate_errors(prefix: &str, rows: &[(usize, &CensusMember)]) -> Vec<FieldError> {
    let mut seen_ext: HashMap<&str, usize> = HashMap::new();
    let mut seen_email: HashMap<String, usize> = HashMap::new();
    let mut errs = Vec::new();
    for &(index, m) in rows {
        if let Some(first) = m.external_id.as_deref().and_then(|e| seen_ext.get(e)) {
            errs.push(FieldError::at(
                index,
                format!("{prefix}[{index}].external_id"),
                format!("duplicates the external_id of row {first}"),
            ));
            continue;
        }
        if let Some(first) = m
            .email
            .as_deref()
            .and_then(|e| seen_email.get(&email_key(e)))
        {
            errs.push(FieldError::at(
                index,
                format!("{prefix}[{index}].email"),
                format!("duplicates the email of row {first}"),
            ));
            continue;
        }
        if let Some(e) = m.external_id.as_deref() {
            seen_ext.insert(e, index);
        }
        if let Some(e) = m.email.as_deref() {
            seen_email.insert(email_key(e), index);
        }
    }
    errs
}

/// A digest of everything in a census that rating reads: which members are
/// counted, their dates of birth or ages, ZIPs, dependents, and each row's
/// household key (the identity of its random claims stream: the external
/// id, else the email, else the names). Quotes remember it; a census write
/// that changes it makes them stale (410 `quote_expired`). Row order does
/// not change it, nor do names or emails of members with an external id.
///
/// It is the hex SHA-256 of one [`rating_line`] per row, sorted, each
/// followed by `\n`. Groups and quotes store it, so its text is a
/// contract, pinned by the tests.
#[must_use]
pub fn rating_digest(rows: &[CensusMember]) -> String {
    let keys = pricing_core::household::household_keys(rows);
    let mut lines: Vec<String> = rows
        .iter()
        .zip(&keys)
        .map(|(m, key)| rating_line(key, m))
        .collect();
    lines.sort();
    let mut h = Sha256::new();
    for l in &lines {
        h.update(l.as_bytes());
        h.update(b"\n");
    }
    hex::encode(h.finalize())
}

/// One row's line of the rating digest, written field by field:
/// `key|counted|dob|age|zip|employment_type|status|dependents`.
///
/// The key is [`quoted`]; `counted` is `true` or `false`; an optional
/// field is `Some(…)` or `None`; a date is `YYYY-MM-DD`; an enum is its
/// variant name (`FullTime`, `Terminated`, `DomesticPartner`); the ZIP is
/// as sent. Dependents are `relationship/dob/age` each, sorted, joined by
/// `,` and [`quoted`]. This is the text the first version wrote (through
/// `Debug`), kept byte for byte so stored digests stay comparable.
fn rating_line(key: &str, m: &CensusMember) -> String {
    let deps = m.dependents.as_ref().map(|ds| {
        let mut d: Vec<String> = ds
            .iter()
            .map(|d| {
                format!(
                    "{}/{}/{}",
                    relationship_name(d.relationship),
                    optional(d.dob),
                    optional(d.age)
                )
            })
            .collect();
        d.sort();
        quoted(&d.join(","))
    });
    format!(
        "{}|{}|{}|{}|{}|{}|{}|{}",
        quoted(key),
        m.is_counted(),
        optional(m.dob),
        optional(m.age),
        m.zip,
        optional(m.employment_type.map(employment_name)),
        optional(m.status.map(status_name)),
        optional(deps),
    )
}

/// `Some(value)` or `None`.
fn optional<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "None".to_owned(), |v| format!("Some({v})"))
}

/// `text` in double quotes with Rust string-literal escapes: `\"`, `\\`,
/// `\t`, `\r`, `\n`, `\0`, and `\u{…}` for other control, unprintable or
/// combining characters; `'` stays as it is.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len().saturating_add(2));
    out.push('"');
    for c in text.chars() {
        if c == '\'' {
            out.push(c);
        } else {
            out.extend(c.escape_debug());
        }
    }
    out.push('"');
    out
}

const fn employment_name(t: EmploymentType) -> &'static str {
    match t {
        EmploymentType::FullTime => "FullTime",
        EmploymentType::PartTime => "PartTime",
        EmploymentType::Contractor => "Contractor",
    }
}

const fn status_name(s: MemberStatus) -> &'static str {
    match s {
        MemberStatus::Active => "Active",
        MemberStatus::Terminated => "Terminated",
    }
}

const fn relationship_name(r: Relationship) -> &'static str {
    match r {
        Relationship::Spouse => "Spouse",
        Relationship::DomesticPartner => "DomesticPartner",
        Relationship::Child => "Child",
        Relationship::Other => "Other",
    }
}

/// What a quote is priced on beyond its census: the group's address ZIP,
/// which rates members whose own ZIP has no priced area. A quote records
/// this digest; it is current while the group's is the same.
#[must_use]
pub fn pricing_digest(census_digest: &str, fallback_zip: Option<&str>) -> String {
    let mut h = Sha256::new();
    h.update(census_digest.as_bytes());
    h.update(b"|");
    h.update(fallback_zip.unwrap_or("-").as_bytes());
    hex::encode(h.finalize())
}

/// One census replace, as the storage port applies it in a single
/// transaction: the valid rows in order, fresh ids for rows that match no
/// one, the new rating digest and the market-comparison job to enqueue.
#[derive(Debug, Clone, PartialEq)]
pub struct CensusWrite {
    /// Group.
    pub group_id: GroupId,
    /// Valid rows, in the order sent.
    pub rows: Vec<CensusMember>,
    /// One fresh id per row (only those of unmatched rows are used).
    pub fresh_ids: Vec<MemberId>,
    /// [`rating_digest`] of `rows`.
    pub rating_digest: String,
    /// Job started by the write (the local market comparison).
    pub job: Option<NewJob>,
    /// Write time, Unix seconds.
    pub now: i64,
}

/// What a census replace did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CensusOutcome {
    /// Members in the census after the write.
    pub member_count: u32,
}

#[cfg(test)]
mod tests {
    use time::macros::date;

    use super::*;

    fn member(ext: Option<&str>, email: Option<&str>) -> CensusMember {
        let mut m = CensusMember::new("x", date!(1980 - 01 - 01), "60601");
        m.external_id = ext.map(str::to_owned);
        m.email = email.map(str::to_owned);
        m
    }

    fn keys(n: u8, ext: Option<&str>, email: Option<&str>) -> MemberKeys {
        MemberKeys {
            id: MemberId::from_bytes([n; 6]),
            external_id: ext.map(str::to_owned),
            email: email.map(str::to_owned),
            created_at: i64::from(n),
        }
    }

    #[test]
    fn rows_keep_ids_by_external_id_then_email() {
        let existing = [
            keys(1, Some("E1"), Some("a@x.com")),
            keys(2, None, Some("b@x.com")),
            keys(3, Some("E3"), None),
        ];
        let rows = [
            member(Some("E3"), None),
            member(None, Some("B@X.com")),
            member(Some("E9"), Some("a@x.com")),
            member(Some("E1"), None),
        ];
        let mut n = 100u8;
        let got = assign_ids(&existing, &rows, 50, || {
            n += 1;
            MemberId::from_bytes([n; 6])
        });
        let ids: Vec<(&str, bool)> = got.iter().map(|a| (a.id.as_str(), a.kept)).collect();
        assert_eq!(
            ids,
            vec![
                ("mem_030303030303", true),
                ("mem_020202020202", true),
                // matches member 1 by email, so row 3's E1 cannot take it again.
                ("mem_010101010101", true),
                ("mem_656565656565", false),
            ]
        );
        assert_eq!(got.get(3).map(|a| a.created_at), Some(50));
        assert_eq!(got.first().map(|a| a.created_at), Some(3));
    }

    #[test]
    fn duplicates_are_errors_on_the_later_row() {
        let a = member(Some("E1"), Some("a@x.com"));
        let b = member(Some("E1"), None);
        let c = member(Some("E2"), Some("A@x.com"));
        let d = member(Some("E3"), None);
        let errs = duplicate_errors("members", &[(0, &a), (1, &b), (2, &c), (3, &d)]);
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, vec!["members[1].external_id", "members[2].email"]);
        assert_eq!(errs.first().and_then(|e| e.index), Some(1));
    }

    #[test]
    fn the_rating_digest_ignores_names_and_order() {
        let mut a = member(Some("E1"), Some("a@x.com"));
        let b = member(Some("E2"), None);
        let d1 = rating_digest(&[a.clone(), b.clone()]);
        a.first_name = Some("Ana".to_owned());
        a.email = Some("other@x.com".to_owned());
        assert_eq!(rating_digest(&[b.clone(), a.clone()]), d1);
        a.zip = "94103".to_owned();
        assert_ne!(rating_digest(&[a.clone(), b.clone()]), d1);
    }

    #[test]
    fn the_rating_digest_follows_the_household_keys() {
        // The same people with their external ids swapped draw other
        // claims streams: another price, another digest.
        let a = member(Some("E1"), None);
        let mut b = member(Some("E2"), None);
        b.zip = "94103".to_owned();
        let d = rating_digest(&[a.clone(), b.clone()]);
        let (mut a2, mut b2) = (a, b);
        a2.external_id = Some("E2".to_owned());
        b2.external_id = Some("E1".to_owned());
        assert_ne!(rating_digest(&[a2.clone(), b2.clone()]), d);
        // Without an external id or an email, the names are the key.
        a2.external_id = None;
        let before = rating_digest(&[a2.clone(), b2.clone()]);
        a2.first_name = Some("Other".to_owned());
        assert_ne!(rating_digest(&[a2, b2]), before);
    }

    /// Rows that reach every field and every variant the rating digest
    /// reads, and household keys that need quoting.
    fn pinned_rows() -> Vec<Vec<CensusMember>> {
        use pricing_core::census::{Dependent, EmploymentType, MemberStatus, Relationship};
        let dep = |relationship, dob, age| Dependent {
            relationship,
            name: Some("ignored".to_owned()),
            dob,
            age,
            sex_at_birth: None,
        };
        let mut full = member(Some("E-1"), None);
        full.employment_type = Some(EmploymentType::FullTime);
        full.status = Some(MemberStatus::Active);
        full.dependents = Some(vec![
            dep(Relationship::Spouse, Some(date!(1981 - 02 - 03)), None),
            dep(Relationship::DomesticPartner, None, Some(40)),
            dep(Relationship::Child, Some(date!(2015 - 12 - 31)), None),
            dep(Relationship::Other, None, Some(0)),
        ]);
        let mut part = member(None, Some("Part.Time@Example.com"));
        part.employment_type = Some(EmploymentType::PartTime);
        part.status = Some(MemberStatus::Terminated);
        part.dob = None;
        part.age = Some(64);
        part.dependents = None;
        let mut contractor = member(None, None);
        contractor.first_name = Some("Ana".to_owned());
        contractor.last_name = Some("Lima".to_owned());
        contractor.employment_type = Some(EmploymentType::Contractor);
        contractor.zip = "99501".to_owned();
        contractor.dob = Some(date!(0999 - 01 - 09));
        let quoted = [
            "quote\"d",
            "back\\slash",
            "it's",
            "tab\tnew\nline\rret\u{0}nul\u{7f}del\u{1b}esc",
            "caf\u{e9} \u{1f600}",
            "\u{301}combining first, then e\u{301}",
            "zero\u{200b}width \u{a0}nbsp \u{2028}ls",
        ]
        .map(|ext| vec![member(Some(ext), None)]);
        let mut sets = vec![
            Vec::new(),
            vec![member(Some("E1"), None)],
            vec![full.clone(), part.clone(), contractor.clone()],
            vec![full, part, contractor.clone(), contractor],
        ];
        sets.extend(quoted);
        sets
    }

    /// The digests the first version stored for [`pinned_rows`]: groups
    /// and quotes keep them, and a fresh digest of the same census must
    /// compare equal or every quote of an unchanged census goes stale.
    #[test]
    fn the_rating_digest_is_pinned() {
        let want = [
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "0da87efde5c5af30af4b3577832d030c2f75947116f81afe1b77fe20a8bd242b",
            "9425cde0d0a3d8ec1cfacc32532684b61206f1e15ab762b22381aa90726be109",
            "f61fb0e0775a380c3168fe8791a5b95e8f3d8f8a3f15f92bc3573b96581ccc0b",
            "9205845fddb8a5bcb42eae84dc3945a0d8e48356dcaaeed032d0ed89a26166b6",
            "9ec83ca583afb18e0bd0489c3a40f1c36c0fc394ce6add42e23db56a40ba8590",
            "04f97bffd730ea7cf18d036b2b3dc642afff35e9bc1f2b19474043f37c1108df",
            "fd2c727c47575ea1182aa88547f6b464596f988717bc67ad2587d26e7cdf65cd",
            "3611aae4da8a1e7b9a32d5ed8bcc95903538fbd2ee2bc3277714f8cd88911a58",
            "5820a577bec6b6449b15d84c4b9b7d4c8471c694648fb4760a8dbef54a4e94cb",
            "3b47b675a10ee7c3d3a26801185539ece0c11ded49f0a9228d14a7249cf3f9aa",
        ];
        let got: Vec<String> = pinned_rows().iter().map(|r| rating_digest(r)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn rating_lines_are_written_field_by_field() {
        let mut m = member(Some("E-1"), None);
        m.age = Some(41);
        m.dependents = Some(vec![pricing_core::census::Dependent {
            relationship: pricing_core::census::Relationship::DomesticPartner,
            name: None,
            dob: None,
            age: Some(39),
            sex_at_birth: None,
        }]);
        assert_eq!(
            rating_line("E-1#0", &m),
            "\"E-1#0\"|true|Some(1980-01-01)|Some(41)|60601|None|None|Some(\"DomesticPartner/None/Some(39)\")"
        );
        assert_eq!(
            quoted("a\"b\\c'd\n\u{0}\u{7f}e\u{301}"),
            "\"a\\\"b\\\\c'd\\n\\0\\u{7f}e\\u{301}\""
        );
    }

    #[test]
    fn the_pricing_digest_covers_the_fallback_zip() {
        let d = pricing_digest("abc", Some("60601"));
        assert_eq!(d, pricing_digest("abc", Some("60601")));
        assert_ne!(d, pricing_digest("abc", Some("99501")));
        assert_ne!(d, pricing_digest("abc", None));
        assert_ne!(d, pricing_digest("abd", Some("60601")));
    }
}
