//! `group import-claims`: the claims CSV
//! (`month,category,amount_cents,member_count`).

use domain::account::ClaimsAggregate;
use domain::error::Code;

use crate::operator::OpError;

/// Reads a claims CSV: `month,category,amount_cents,member_count`.
pub(crate) fn claims_csv(path: &std::path::Path) -> Result<Vec<ClaimsAggregate>, OpError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        OpError::new(
            Code::InvalidRequest,
            format!("cannot read {}: {e}", path.display()),
        )
    })?;
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .collect();
    if header != ["month", "category", "amount_cents", "member_count"] {
        return Err(OpError::new(
            Code::InvalidRequest,
            "the header must be month,category,amount_cents,member_count",
        ));
    }
    lines
        .enumerate()
        .map(|(i, line)| {
            let cells: Vec<&str> = line.split(',').map(str::trim).collect();
            let bad = || {
                OpError::new(
                    Code::InvalidRequest,
                    format!(
                        "data row {i}: {line:?} is not month,category,amount_cents,member_count"
                    ),
                )
            };
            match cells.as_slice() {
                [month, category, amount, members] => Ok(ClaimsAggregate {
                    month: (*month).to_owned(),
                    category: (*category).to_owned(),
                    amount_cents: amount.parse().map_err(|_| bad())?,
                    member_count: members.parse().map_err(|_| bad())?,
                }),
                _ => Err(bad()),
            }
        })
        .collect()
}
