//! Exact decimal parsing and integer rounding for the rate-card figures.
//!
//! Every value in the public files has a handful of decimals, so it is read as
//! a scaled integer (never through `f64`) and every division rounds half away
//! from zero on `i128`.

use anyhow::{Context as _, bail, ensure};

/// Parses a non-negative decimal such as `613.00` or `1.3072` into an integer
/// scaled by `10^scale`, failing if it has more than `scale` decimals.
pub(crate) fn parse_scaled(text: &str, scale: u32) -> anyhow::Result<i128> {
    let text = text.trim();
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    ensure!(
        !whole.is_empty() && whole.bytes().all(|b| b.is_ascii_digit()),
        "invalid decimal {text:?}"
    );
    ensure!(
        fraction.bytes().all(|b| b.is_ascii_digit()),
        "invalid decimal {text:?}"
    );
    let digits = u32::try_from(fraction.len()).context("decimal fraction too long")?;
    if digits > scale {
        bail!("decimal {text:?} has more than {scale} decimals");
    }
    let padding = 10_i128
        .checked_pow(scale - digits)
        .context("decimal scale too large")?;
    let whole: i128 = whole
        .parse()
        .with_context(|| format!("invalid decimal {text:?}"))?;
    let fraction: i128 = if fraction.is_empty() {
        0
    } else {
        fraction
            .parse()
            .with_context(|| format!("invalid decimal {text:?}"))?
    };
    let unit = 10_i128
        .checked_pow(scale)
        .context("decimal scale too large")?;
    whole
        .checked_mul(unit)
        .and_then(|w| fraction.checked_mul(padding).and_then(|f| w.checked_add(f)))
        .with_context(|| format!("decimal {text:?} overflows"))
}

/// Divides `numerator` by `denominator`, rounding half away from zero.
pub(crate) fn div_round(numerator: i128, denominator: i128) -> anyhow::Result<i128> {
    ensure!(denominator != 0, "division by zero");
    let quotient = numerator / denominator;
    let remainder = numerator % denominator;
    let twice = remainder
        .checked_abs()
        .and_then(|r| r.checked_mul(2))
        .context("rounding overflows")?;
    let magnitude = denominator.checked_abs().context("rounding overflows")?;
    if twice >= magnitude {
        let away = if (numerator < 0) == (denominator < 0) {
            1
        } else {
            -1
        };
        Ok(quotient + away)
    } else {
        Ok(quotient)
    }
}

/// Multiplies the factors, failing on overflow.
pub(crate) fn product(factors: &[i128]) -> anyhow::Result<i128> {
    factors
        .iter()
        .try_fold(1_i128, |acc, &f| acc.checked_mul(f))
        .context("multiplication overflows")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_scaled_decimals_exactly() {
        assert_eq!(parse_scaled("613.00", 2).unwrap(), 61_300);
        assert_eq!(parse_scaled("613.5", 2).unwrap(), 61_350);
        assert_eq!(parse_scaled("613", 2).unwrap(), 61_300);
        assert_eq!(parse_scaled("1.3072", 4).unwrap(), 13_072);
        assert_eq!(parse_scaled("0.412", 4).unwrap(), 4_120);
        assert!(parse_scaled("1.23456", 4).is_err());
        assert!(parse_scaled("-1.0", 4).is_err());
        assert!(parse_scaled("1e3", 4).is_err());
        assert!(parse_scaled("", 4).is_err());
        assert!(parse_scaled(".5", 4).is_err());
    }

    #[test]
    fn rounds_half_away_from_zero() {
        assert_eq!(div_round(5, 2).unwrap(), 3);
        assert_eq!(div_round(-5, 2).unwrap(), -3);
        assert_eq!(div_round(7, 3).unwrap(), 2);
        assert_eq!(div_round(8, 3).unwrap(), 3);
        assert_eq!(div_round(-8, 3).unwrap(), -3);
        assert_eq!(div_round(6, -4).unwrap(), -2);
        assert_eq!(div_round(4, 2).unwrap(), 2);
        assert!(div_round(1, 0).is_err());
    }
}
