//! Household keys: the stream identity of each census row (pricing model
//! section 5), and the canonical JSON it is built from.

use std::borrow::Cow;

use sha2::{Digest, Sha256};

use crate::canonical;
use crate::census::CensusMember;
use crate::household::HouseholdKey;
use crate::household::rules::{DistinctIds, IdOrder, lowercase};

/// Household keys `{key}#{occurrence}` for every row (pricing model section 5).
///
/// The key is the `external_id` when present, else the lowercased email,
/// else the hex SHA-256 of the canonical JSON of the record's non-rating
/// fields. Records sharing a key are numbered in the order of their whole
/// canonical JSON, so row order never matters.
#[must_use]
pub fn household_keys(members: &[CensusMember]) -> Vec<String> {
    let mut out = vec![String::new(); members.len()];
    for keyed in keyed_rows(members) {
        if let Some(slot) = out.get_mut(keyed.row) {
            *slot = keyed.key().into();
        }
    }
    out
}

/// One row's household key, not yet written out: the base key (borrowed
/// from the row when it is the `external_id` or an already lowercase
/// email) and the occurrence number.
#[derive(Debug)]
pub(crate) struct KeyedRow<'a> {
    base: Cow<'a, str>,
    /// Row index in the census.
    pub(crate) row: usize,
    occurrence: usize,
}

impl KeyedRow<'_> {
    /// The key, `{base}#{occurrence}`.
    pub(crate) fn key(&self) -> HouseholdKey {
        HouseholdKey::compose(&self.base, self.occurrence)
    }
}

/// A row in canonical household-key order: its index, and its key.
pub(crate) trait Keyed {
    /// Row index in the census.
    fn row(&self) -> usize;
    /// Writes the row's key into `key`, in place.
    fn write_key(&self, key: &mut HouseholdKey);
}

impl Keyed for KeyedRow<'_> {
    fn row(&self) -> usize {
        self.row
    }

    fn write_key(&self, key: &mut HouseholdKey) {
        key.set(&self.base, self.occurrence);
    }
}

/// A row keyed by its `external_id`, the only one with that id.
impl Keyed for (&str, usize) {
    fn row(&self) -> usize {
        self.1
    }

    fn write_key(&self, key: &mut HouseholdKey) {
        key.set(self.0, 0);
    }
}

/// Every row in canonical household-key order.
#[derive(Debug)]
pub(crate) enum Order<'a> {
    /// Every row has a distinct non-empty `external_id`: the rows and their
    /// ids, sorted.
    Ids(Vec<(&'a str, usize)>),
    /// Any census: [`keyed_rows`].
    Keyed(Vec<KeyedRow<'a>>),
}

/// Every row with its household key, in canonical order: by base key, then
/// occurrence. One sort; no row order leaks into the result.
pub(crate) fn keyed_rows(members: &[CensusMember]) -> Vec<KeyedRow<'_>> {
    let mut rows: Vec<KeyedRow<'_>> = members
        .iter()
        .zip(0..)
        .map(|(m, row)| KeyedRow {
            base: base_key(m),
            row,
            occurrence: 0,
        })
        .collect();
    rows.sort_unstable_by(|a, b| a.base.cmp(&b.base));
    for group in rows.chunk_by_mut(|a, b| a.base == b.base) {
        if group.len() > 1 {
            group.sort_by_cached_key(|k| {
                (
                    members.get(k.row).map(canonical_json).unwrap_or_default(),
                    k.row,
                )
            });
            for (n, k) in group.iter_mut().enumerate() {
                k.occurrence = n;
            }
        }
    }
    rows
}

/// [`keyed_rows`] when the rules across rows passed: if every row has a
/// non-empty `external_id`, the sorted distinct ids already are the
/// canonical order (every key is its id, each once), and nothing is sorted
/// or compared again.
pub(crate) fn keyed_rows_after<'a>(members: &'a [CensusMember], ids: IdOrder<'a>) -> Order<'a> {
    match ids {
        IdOrder::Rows => Order::Ids(
            members
                .iter()
                .enumerate()
                .filter_map(|(row, m)| Some((m.external_id.as_deref()?, row)))
                .collect(),
        ),
        IdOrder::Sorted(DistinctIds(ids))
            if ids.len() == members.len() && ids.iter().all(|(id, _)| !id.is_empty()) =>
        {
            Order::Ids(ids)
        }
        IdOrder::Sorted(_) => Order::Keyed(keyed_rows(members)),
    }
}

fn base_key(m: &CensusMember) -> Cow<'_, str> {
    if let Some(id) = m.external_id.as_deref().filter(|s| !s.is_empty()) {
        return Cow::Borrowed(id);
    }
    if let Some(email) = m.email.as_deref().filter(|s| !s.is_empty()) {
        return lowercase(email);
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
    Cow::Owned(hex::encode(Sha256::digest(
        canonical::to_string(&value).as_bytes(),
    )))
}

/// Canonical JSON of a record: snake_case keys, absent fields omitted, keys
/// sorted, no whitespace.
#[must_use]
pub fn canonical_json(m: &CensusMember) -> String {
    serde_json::to_value(m)
        .map(|v| canonical::to_string(&v))
        .unwrap_or_default()
}
