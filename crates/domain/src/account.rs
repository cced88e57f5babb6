//! A group's account data (`GET /groups/{id}/account`): funding, premium,
//! spend by category from the claims-aggregate ledger, savings, and the
//! enrolled and waived counts. Aggregate and de-identified: the ledger
//! holds amounts and member counts per category and month, never a member,
//! a diagnosis or an individual's amount; and when any category of the
//! period draws on fewer than 11 members every category is suppressed (the
//! CMS small-cell rule).

use sha2::{Digest, Sha256};

use crate::error::FieldError;
use crate::ids::GroupId;

/// Fewest members a spend category may draw on before the categories are
/// suppressed.
pub const SMALL_CELL: u32 = 11;

/// The spend categories a ledger row may name.
pub const CATEGORIES: [&str; 7] = [
    "primary_care",
    "specialist",
    "pharmacy",
    "outpatient",
    "inpatient",
    "emergency",
    "mental_health",
];

/// One ledger row: a category's claims of one month.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimsAggregate {
    /// `YYYY-MM`.
    pub month: String,
    /// One of [`CATEGORIES`].
    pub category: String,
    /// Claims paid, cents.
    pub amount_cents: i64,
    /// Distinct members with a claim in the category that month.
    pub member_count: u32,
}

/// Whether `month` is a `YYYY-MM` month.
#[must_use]
pub fn is_month(month: &str) -> bool {
    let b = month.as_bytes();
    b.len() == 7
        && b.get(4) == Some(&b'-')
        && month
            .char_indices()
            .all(|(i, c)| i == 4 || c.is_ascii_digit())
        && month
            .get(5..7)
            .and_then(|m| m.parse::<u8>().ok())
            .is_some_and(|m| (1..=12).contains(&m))
}

/// Checks one imported row (`index` is its data row, 0-based).
#[must_use]
pub fn check_row(index: usize, row: &ClaimsAggregate) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if !is_month(&row.month) {
        errs.push(FieldError::at(index, "month", "must be a month (YYYY-MM)"));
    }
    if !CATEGORIES.contains(&row.category.as_str()) {
        errs.push(FieldError::at(
            index,
            "category",
            format!("must be one of {}", CATEGORIES.join(", ")),
        ));
    }
    if row.amount_cents < 0 {
        errs.push(FieldError::at(index, "amount_cents", "must be 0 or more"));
    }
    errs
}

/// Spend of one period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spend {
    /// `YYYY-MM`, or `None` without ledger rows.
    pub period: Option<String>,
    /// Whether the categories are withheld (small cells).
    pub suppressed: bool,
    /// All categories together.
    pub total_cents: i64,
    /// `(category, amount)`, in [`CATEGORIES`] order; empty when suppressed.
    pub categories: Vec<(String, i64)>,
}

/// The spend of the ledger's latest month, suppressed when any of its
/// categories draws on fewer than [`SMALL_CELL`] members.
#[must_use]
pub fn spend(ledger: &[ClaimsAggregate]) -> Spend {
    let period = ledger.iter().map(|r| r.month.clone()).max();
    let rows: Vec<&ClaimsAggregate> = ledger
        .iter()
        .filter(|r| Some(&r.month) == period.as_ref())
        .collect();
    let total_cents = rows.iter().map(|r| r.amount_cents).sum();
    let suppressed = rows.iter().any(|r| r.member_count < SMALL_CELL);
    let categories = if suppressed {
        Vec::new()
    } else {
        CATEGORIES
            .iter()
            .filter_map(|c| {
                let amount: i64 = rows
                    .iter()
                    .filter(|r| r.category == *c)
                    .map(|r| r.amount_cents)
                    .sum();
                rows.iter()
                    .any(|r| r.category == *c)
                    .then(|| ((*c).to_owned(), amount))
            })
            .collect()
    };
    Spend {
        period,
        suppressed,
        total_cents,
        categories,
    }
}

/// Shares of expected claims per category, basis points (sum 10,000).
const CATEGORY_SHARE_BP: [i64; 7] = [1_800, 1_600, 2_200, 1_500, 1_700, 600, 600];

/// Share of the members with a claim in a category in a month, percent.
const CATEGORY_REACH_PCT: [u32; 7] = [45, 25, 60, 15, 3, 6, 10];

/// The test-mode ledger of a group: `months` of aggregate claims around
/// `expected_monthly_cents`, for `members` covered members, varied by a
/// hash of the group id so every group differs and each is stable.
#[must_use]
pub fn test_ledger(
    group: &GroupId,
    members: u32,
    expected_monthly_cents: i64,
    months: &[String],
) -> Vec<ClaimsAggregate> {
    let mut out = Vec::new();
    for month in months {
        for ((category, share), reach) in CATEGORIES
            .iter()
            .zip(CATEGORY_SHARE_BP)
            .zip(CATEGORY_REACH_PCT)
        {
            let seed = Sha256::digest(format!("{}|{month}|{category}", group.as_str()));
            let wobble = seed.first().map_or(0, |b| i64::from(*b)) - 128; // ±128
            // ±12.8% around the category's share of expected claims.
            let base = expected_monthly_cents.saturating_mul(share) / 10_000;
            let amount = base.saturating_add(base.saturating_mul(wobble) / 1_000);
            out.push(ClaimsAggregate {
                month: month.clone(),
                category: (*category).to_owned(),
                amount_cents: amount.max(0),
                member_count: members.saturating_mul(reach) / 100,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(month: &str, category: &str, amount: i64, members: u32) -> ClaimsAggregate {
        ClaimsAggregate {
            month: month.to_owned(),
            category: category.to_owned(),
            amount_cents: amount,
            member_count: members,
        }
    }

    #[test]
    fn months_and_rows_are_checked() {
        assert!(
            is_month("2026-11")
                && !is_month("2026-13")
                && !is_month("2026-1")
                && !is_month("26-11-01")
        );
        assert!(check_row(0, &row("2026-11", "pharmacy", 1, 11)).is_empty());
        let errs = check_row(4, &row("x", "dental", -1, 0));
        assert_eq!(
            errs.iter().map(|e| e.field.as_str()).collect::<Vec<_>>(),
            ["month", "category", "amount_cents"]
        );
        assert!(errs.iter().all(|e| e.index == Some(4)));
    }

    #[test]
    fn the_latest_month_is_reported_and_small_cells_suppress_every_category() {
        let ledger = [
            row("2026-10", "pharmacy", 999, 50),
            row("2026-11", "pharmacy", 100, 11),
            row("2026-11", "inpatient", 900, 11),
        ];
        let s = spend(&ledger);
        assert_eq!(s.period.as_deref(), Some("2026-11"));
        assert_eq!(
            (s.suppressed, s.total_cents, s.categories.clone()),
            (
                false,
                1_000,
                vec![("pharmacy".to_owned(), 100), ("inpatient".to_owned(), 900)]
            )
        );
        let small = [
            row("2026-11", "pharmacy", 100, 11),
            row("2026-11", "inpatient", 900, 10),
        ];
        let s = spend(&small);
        assert!(s.suppressed && s.categories.is_empty());
        assert_eq!(s.total_cents, 1_000);
        assert_eq!(spend(&[]).period, None);
    }

    #[test]
    fn the_test_ledger_is_stable_per_group_and_sized_to_it() {
        let g = GroupId::from_bytes([1; 6]);
        let months = ["2026-10".to_owned(), "2026-11".to_owned()];
        let a = test_ledger(&g, 400, 1_000_000, &months);
        assert_eq!(a, test_ledger(&g, 400, 1_000_000, &months));
        assert_eq!(a.len(), 14);
        assert!(
            !spend(&a).suppressed,
            "400 members reach 11 in every category"
        );
        assert!(spend(&test_ledger(&g, 20, 1_000_000, &months)).suppressed);
        assert_ne!(
            a,
            test_ledger(&GroupId::from_bytes([2; 6]), 400, 1_000_000, &months)
        );
    }
}
