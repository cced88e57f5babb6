//! Household keys: the stream identity of each census row (pricing model
//! section 5), and the canonical JSON it is built from.

use sha2::{Digest, Sha256};

use crate::canonical;
use crate::census::CensusMember;

/// Household keys `{key}#{occurrence}` for every row (pricing model section 5).
///
/// The key is the `external_id` when present, else the lowercased email,
/// else the hex SHA-256 of the canonical JSON of the record's non-rating
/// fields. Records sharing a key are numbered in the order of their whole
/// canonical JSON, so row order never matters.
#[must_use]
pub fn household_keys(members: &[CensusMember]) -> Vec<String> {
    let mut out = vec![String::new(); members.len()];
    for (key, row) in keyed_rows(members) {
        if let Some(slot) = out.get_mut(row) {
            *slot = key;
        }
    }
    out
}

/// Every row with its household key, in canonical order: by base key, then
/// occurrence. One sort; no row order leaks into the result.
pub(crate) fn keyed_rows(members: &[CensusMember]) -> Vec<(String, usize)> {
    let mut rows: Vec<(String, usize)> = members.iter().map(base_key).zip(0..).collect();
    rows.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut start = 0;
    while start < rows.len() {
        let base = rows.get(start).map(|r| r.0.clone()).unwrap_or_default();
        let end = rows
            .iter()
            .skip(start)
            .position(|r| r.0 != base)
            .map_or(rows.len(), |n| start + n);
        if let Some(group) = rows.get_mut(start..end) {
            if group.len() > 1 {
                group.sort_by_cached_key(|(_, row)| {
                    (
                        members.get(*row).map(canonical_json).unwrap_or_default(),
                        *row,
                    )
                });
            }
            for (n, (key, _)) in group.iter_mut().enumerate() {
                key.push('#');
                key.push_str(&n.to_string());
            }
        }
        start = end;
    }
    rows
}

fn base_key(m: &CensusMember) -> String {
    if let Some(id) = m.external_id.as_deref().filter(|s| !s.is_empty()) {
        let mut key = String::with_capacity(id.len() + 3);
        key.push_str(id);
        return key;
    }
    if let Some(email) = m.email.as_deref().filter(|s| !s.is_empty()) {
        return email.to_lowercase();
    }
    // Names and employment fields only: never dob, age, ZIP, sex or dependents.
    let identity = CensusMember {
        external_id: None,
        first_name: m.first_name.clone(),
        last_name: m.last_name.clone(),
        email: None,
        dob: None,
        age: None,
        zip: String::new(),
        sex_at_birth: None,
        employment_type: m.employment_type,
        hire_date: m.hire_date,
        status: m.status,
        dependents: None,
    };
    let mut value = serde_json::to_value(&identity).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        map.remove("zip");
    }
    hex::encode(Sha256::digest(canonical::to_string(&value).as_bytes()))
}

/// Canonical JSON of a record: snake_case keys, absent fields omitted, keys
/// sorted, no whitespace.
#[must_use]
pub fn canonical_json(m: &CensusMember) -> String {
    serde_json::to_value(m)
        .map(|v| canonical::to_string(&v))
        .unwrap_or_default()
}
