//! The census rules that span rows (pricing model section 2): repeated
//! external ids and emails, and employees born after the plan-year start.

use std::borrow::Cow;

use time::Date;

use crate::census::CensusMember;
use crate::error::FieldError;

/// Which rule a row breaks, in the order a row reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rule {
    /// A repeated `external_id`; the row it repeats.
    RepeatedId(usize),
    /// A repeated email (case-insensitive); the row it repeats.
    RepeatedEmail(usize),
    /// Born after the plan-year start.
    BornAfterStart,
}

/// Rules across rows: a repeated `external_id` or email (case-insensitive)
/// is an error on the later row (naming the closest earlier row with that
/// value), and an employee born after the plan-year start cannot be priced.
/// Errors come in row order, each row's in the order id, email, dob.
#[cfg(test)]
pub(super) fn census_wide_errors(members: &[CensusMember], start: Date) -> Vec<FieldError> {
    let mut rules = WideRules::new(members);
    for (i, m) in members.iter().enumerate() {
        rules.add(i, m, start);
    }
    match rules.finish(start) {
        Ok(_) => Vec::new(),
        Err(errors) => errors,
    }
}

/// The rules across rows, gathered row by row (in the same pass as the
/// rules of each row) and checked at the end with one sort per value
/// rather than a hash set. Rows that come in order of their ids (each
/// non-empty and greater than the row before's, as payroll exports often
/// are) cannot repeat one, and need neither.
#[derive(Debug)]
pub(super) struct WideRules<'a> {
    members: &'a [CensusMember],
    /// While the rows come in order of their ids: the last id, with its
    /// [`head`].
    last: Option<(u64, &'a str)>,
    in_order: bool,
    /// Once they do not: every `external_id` so far, with its [`head`] (to
    /// sort by), and its row.
    ids: Vec<((u64, &'a str), usize)>,
    emails: Vec<(Cow<'a, str>, usize)>,
    late: Vec<usize>,
}

/// The order of the rows' ids when no row breaks the rules across rows.
#[derive(Debug)]
pub(super) enum IdOrder<'a> {
    /// Every row has a non-empty `external_id`, greater than the row
    /// before's: the rows are in household-key order.
    Rows,
    /// Otherwise.
    Sorted(DistinctIds<'a>),
}

/// The rows' `external_id`s, sorted, no two equal.
#[derive(Debug)]
pub(super) struct DistinctIds<'a>(pub(super) Vec<(&'a str, usize)>);

impl<'a> WideRules<'a> {
    /// The rules over `members`, whose rows [`WideRules::add`] then notes
    /// one by one, in order.
    pub(super) fn new(members: &'a [CensusMember]) -> Self {
        Self {
            members,
            last: None,
            in_order: true,
            ids: Vec::new(),
            emails: Vec::new(),
            late: Vec::new(),
        }
    }

    /// Notes row `i`, `m`. Returns its `external_id` while the rows so far
    /// are in order of their ids.
    pub(super) fn add(&mut self, i: usize, m: &'a CensusMember, start: Date) -> Option<&'a str> {
        let id = m.external_id.as_deref();
        let mut in_order = None;
        if self.in_order {
            match id.filter(|id| !id.is_empty()).map(keyed) {
                Some(key) if self.last.is_none_or(|last| last < key) => {
                    self.last = Some(key);
                    in_order = Some(key.1);
                }
                _ => {
                    // Every earlier row has an id.
                    self.in_order = false;
                    self.ids.reserve(self.members.len());
                    self.ids.extend(
                        self.members
                            .iter()
                            .take(i)
                            .enumerate()
                            .filter_map(|(row, m)| Some((keyed(m.external_id.as_deref()?), row))),
                    );
                }
            }
        }
        if !self.in_order
            && let Some(id) = id
        {
            self.ids.push((keyed(id), i));
        }
        if let Some(email) = m.email.as_deref() {
            self.emails.push((lowercase(email), i));
        }
        if m.dob.is_some_and(|d| d > start) {
            self.late.push(i);
        }
        in_order
    }

    /// The errors in row order, or the order of the ids when there are
    /// none.
    pub(super) fn finish(mut self, start: Date) -> Result<IdOrder<'a>, Vec<FieldError>> {
        let mut broken: Vec<(usize, Rule)> = Vec::new();
        if !self.in_order {
            repeats(&mut self.ids, &mut broken, Rule::RepeatedId);
        }
        repeats(&mut self.emails, &mut broken, Rule::RepeatedEmail);
        broken.extend(self.late.iter().map(|&i| (i, Rule::BornAfterStart)));
        if broken.is_empty() {
            return Ok(if self.in_order {
                IdOrder::Rows
            } else {
                IdOrder::Sorted(DistinctIds(
                    self.ids
                        .into_iter()
                        .map(|((_, id), row)| (id, row))
                        .collect(),
                ))
            });
        }
        broken.sort_unstable();
        Err(broken
            .into_iter()
            .map(|(i, rule)| match rule {
                Rule::RepeatedId(first) => FieldError::at(
                    i,
                    format!("census[{i}].external_id"),
                    format!("duplicates row {first}"),
                ),
                Rule::RepeatedEmail(first) => FieldError::at(
                    i,
                    format!("census[{i}].email"),
                    format!("duplicates row {first}"),
                ),
                Rule::BornAfterStart => FieldError::at(
                    i,
                    format!("census[{i}].dob"),
                    format!(
                        "is after the plan-year start ({})",
                        crate::census::date_opt::format(start)
                    ),
                ),
            })
            .collect())
    }
}

/// A string with its [`head`]: such pairs order as the strings do, most by
/// their heads alone.
fn keyed(s: &str) -> (u64, &str) {
    (head(s.as_bytes()), s)
}

/// The first eight bytes of `s`, big-endian, padded with zeros: heads order
/// as the strings do whenever they differ (a string that ends first is a
/// prefix of the other).
fn head(s: &[u8]) -> u64 {
    if let Some(first) = s.first_chunk::<8>() {
        return u64::from_be_bytes(*first);
    }
    let n = s.len();
    if let (Some(first), Some(last)) = (s.first_chunk::<4>(), s.last_chunk::<4>()) {
        // Bytes 0..4 and n-4..n (overlapping when n < 8), each at its place.
        return (u64::from(u32::from_be_bytes(*first)) << 32)
            | (u64::from(u32::from_be_bytes(*last)) << (8 * (8 - n)));
    }
    s.iter()
        .zip([56, 48, 40])
        .fold(0, |v, (&b, shift)| v | u64::from(b) << shift)
}

/// Sorts `(value, row)` pairs and records, for every row whose value an
/// earlier row has, the closest such earlier row.
fn repeats<K: Ord>(
    values: &mut [(K, usize)],
    broken: &mut Vec<(usize, Rule)>,
    rule: fn(usize) -> Rule,
) {
    // Values often come in increasing order: one comparison per pair then
    // shows them sorted and distinct.
    let increasing = values.windows(2).all(|pair| match pair {
        [(a, _), (b, _)] => a < b,
        _ => true,
    });
    if increasing {
        return;
    }
    values.sort_unstable();
    for pair in values.windows(2) {
        if let [(a, first), (b, row)] = pair
            && a == b
        {
            broken.push((*row, rule(*first)));
        }
    }
}

/// `text.to_lowercase()`, borrowed when that changes nothing (ASCII
/// without capitals).
pub(super) fn lowercase(text: &str) -> Cow<'_, str> {
    if text
        .bytes()
        .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
    {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(text.to_lowercase())
    }
}

#[cfg(test)]
mod tests {
    use time::macros::date;

    use super::*;

    fn row(id: Option<&str>, email: Option<&str>) -> CensusMember {
        let mut m = CensusMember::new("x", date!(1980 - 01 - 01), "94103");
        m.external_id = id.map(str::to_owned);
        m.email = email.map(str::to_owned);
        m
    }

    fn errors(rows: &[CensusMember]) -> Vec<(String, String)> {
        census_wide_errors(rows, date!(2026 - 01 - 01))
            .into_iter()
            .map(|e| (e.field, e.message))
            .collect()
    }

    #[test]
    fn repeats_name_the_closest_earlier_row_in_row_order() {
        let rows = [
            row(Some("B"), Some("a@x.org")),
            row(Some("A"), None),
            row(Some("B"), Some("A@X.org")),
            row(Some("A"), Some("b@x.org")),
            row(Some("B"), Some("a@x.ORG")),
            row(Some(""), Some("B@x.org")),
            row(Some(""), None),
            row(Some("b"), None),
        ];
        let expect = [
            ("census[2].external_id", "duplicates row 0"),
            ("census[2].email", "duplicates row 0"),
            ("census[3].external_id", "duplicates row 1"),
            ("census[4].external_id", "duplicates row 2"),
            ("census[4].email", "duplicates row 2"),
            ("census[5].email", "duplicates row 3"),
            ("census[6].external_id", "duplicates row 5"),
        ];
        let expect: Vec<(String, String)> = expect
            .iter()
            .map(|(f, m)| ((*f).to_owned(), (*m).to_owned()))
            .collect();
        assert_eq!(errors(&rows), expect);
    }

    #[test]
    fn heads_order_strings_as_bytes_do() {
        let words = [
            "",
            "\u{0}",
            "a",
            "a\u{0}",
            "a\u{0}\u{0}",
            "ab",
            "abc",
            "abcd",
            "abce",
            "abcd\u{0}",
            "abcde",
            "abcdf",
            "abcdef",
            "abcdefg",
            "abcdefgh",
            "abcdefgh\u{0}",
            "abcdefghi",
            "abcdefgi",
            "abcdefh",
            "b",
            "E-00001",
            "E-00002",
            "E-000010",
            "\u{e9}",
            "\u{ff}\u{ff}",
            "zzzzzzzzzzzz",
        ];
        for a in words {
            for b in words {
                assert_eq!(keyed(a) < keyed(b), a < b, "{a:?} < {b:?}");
                assert_eq!(keyed(a) == keyed(b), a == b, "{a:?} == {b:?}");
                let (ha, hb) = (head(a.as_bytes()), head(b.as_bytes()));
                if ha != hb {
                    assert_eq!(ha < hb, a < b, "{a:?} < {b:?}");
                }
            }
        }
    }

    #[test]
    fn rows_in_order_of_their_ids_are_noted_as_such() {
        let start = date!(2026 - 01 - 01);
        let order = |ids: &[Option<&str>]| -> (Vec<bool>, Option<Vec<(String, usize)>>) {
            let rows: Vec<CensusMember> = ids.iter().map(|id| row(*id, None)).collect();
            let mut rules = WideRules::new(&rows);
            let noted = rows
                .iter()
                .enumerate()
                .map(|(i, m)| rules.add(i, m, start).is_some())
                .collect();
            let sorted = match rules.finish(start) {
                Ok(IdOrder::Rows) => None,
                Ok(IdOrder::Sorted(DistinctIds(ids))) => Some(
                    ids.into_iter()
                        .map(|(id, row)| (id.to_owned(), row))
                        .collect(),
                ),
                Err(e) => panic!("{e:?}"),
            };
            (noted, sorted)
        };
        assert_eq!(
            order(&[Some("E-1"), Some("E-2"), Some("F")]),
            (vec![true, true, true], None)
        );
        let owned = |v: &[(&str, usize)]| -> Option<Vec<(String, usize)>> {
            Some(v.iter().map(|(id, r)| ((*id).to_owned(), *r)).collect())
        };
        assert_eq!(
            order(&[Some("E-1"), Some("E-3"), Some("E-2"), Some("E-4")]),
            (
                vec![true, true, false, false],
                owned(&[("E-1", 0), ("E-2", 2), ("E-3", 1), ("E-4", 3)])
            )
        );
        assert_eq!(
            order(&[Some("E-1"), None, Some("E-2")]),
            (vec![true, false, false], owned(&[("E-1", 0), ("E-2", 2)]))
        );
        // An empty id is not a key.
        assert_eq!(order(&[Some(""), Some("E-2")]).0, vec![false, false]);
    }

    #[test]
    fn emails_compare_by_their_unicode_lowercase() {
        let rows = [
            row(None, Some("\u{dc}ber@x.org")),
            row(None, Some("\u{fc}ber@x.org")),
            row(None, Some("\u{fc}BER@x.org")),
        ];
        assert_eq!(
            errors(&rows),
            [
                ("census[1].email".to_owned(), "duplicates row 0".to_owned()),
                ("census[2].email".to_owned(), "duplicates row 1".to_owned()),
            ]
        );
        assert_eq!(lowercase("a.b@x.org"), Cow::Borrowed("a.b@x.org"));
        assert_eq!(lowercase("A@X.org"), "a@x.org");
        assert_eq!(lowercase("\u{c9}@x.org"), "\u{e9}@x.org");
    }

    #[test]
    fn a_row_reports_id_then_email_then_dob() {
        let mut late = row(Some("A"), Some("a@x.org"));
        late.dob = Some(date!(2026 - 01 - 02));
        let rows = [row(Some("A"), Some("a@x.org")), late];
        let fields: Vec<String> = errors(&rows).into_iter().map(|(f, _)| f).collect();
        assert_eq!(
            fields,
            ["census[1].external_id", "census[1].email", "census[1].dob"]
        );
    }
}
