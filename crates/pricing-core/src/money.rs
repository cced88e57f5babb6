//! Money as integer cents, and the one rounding rule of the engine.
//!
//! Every amount that leaves the engine is a [`Cents`]. Inside a formula the
//! engine works on exact integer rationals (`i128` numerators over a known
//! denominator) and rounds once, half away from zero, with [`div_round`] or
//! [`round_f64`].

use serde::{Deserialize, Serialize};

use crate::error::{FieldError, Overflow};

/// The largest monthly amount a partner may send, in cents ($1,000,000):
/// PEPM, PMPM, tier and member rates.
pub const MAX_MONTHLY_CENTS: i64 = 100_000_000;

/// The largest annual or per-service plan amount a partner may send, in
/// cents ($10,000,000): deductibles, out-of-pocket maxima, the drug
/// deductible and copays.
pub const MAX_ANNUAL_CENTS: i64 = 1_000_000_000;

/// What an amount a partner sends measures, which sets its maximum. Every
/// money field of a request is checked with [`Amount::check`], so the
/// engine only ever sees amounts it prices without overflow (a property
/// test prices 10,000 members with every amount at its maximum).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Amount {
    /// A monthly amount, at most [`MAX_MONTHLY_CENTS`].
    Monthly,
    /// An annual (or per-service) plan amount, at most [`MAX_ANNUAL_CENTS`].
    Annual,
}

impl Amount {
    /// The largest amount accepted, in cents.
    #[must_use]
    pub const fn max_cents(self) -> i64 {
        match self {
            Self::Monthly => MAX_MONTHLY_CENTS,
            Self::Annual => MAX_ANNUAL_CENTS,
        }
    }

    /// Whether `cents` is accepted: from 0 to [`Amount::max_cents`].
    #[must_use]
    pub const fn accepts(self, cents: i64) -> bool {
        0 <= cents && cents <= self.max_cents()
    }

    /// The message of an amount outside the range.
    #[must_use]
    pub fn range_message(self) -> String {
        format!("must be an integer of cents from 0 to {}", self.max_cents())
    }

    /// The field error of `cents` at `field` (on row `index` of an array
    /// payload), when it is outside the range.
    #[must_use]
    pub fn check(self, field: &str, index: Option<usize>, cents: i64) -> Option<FieldError> {
        (!self.accepts(cents)).then(|| FieldError {
            field: field.to_owned(),
            message: self.range_message(),
            index,
        })
    }
}

/// An amount of money in integer US cents. Signed, because savings and
/// headroom can be negative; the engine never produces a negative price.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Cents(i64);

impl Cents {
    /// Zero cents.
    pub const ZERO: Self = Self(0);

    /// Wraps a number of cents.
    #[must_use]
    pub const fn new(cents: i64) -> Self {
        Self(cents)
    }

    /// The number of cents.
    #[must_use]
    pub const fn get(self) -> i64 {
        self.0
    }

    /// Converts an exact `i128` amount, failing when it does not fit in `i64`.
    ///
    /// # Errors
    /// [`Overflow`] when the amount is outside the `i64` range.
    pub fn from_i128(cents: i128) -> Result<Self, Overflow> {
        i64::try_from(cents).map(Self).map_err(|_| Overflow)
    }

    /// Checked addition.
    ///
    /// # Errors
    /// [`Overflow`] when the sum is outside the `i64` range.
    pub fn checked_add(self, other: Self) -> Result<Self, Overflow> {
        self.0.checked_add(other.0).map(Self).ok_or(Overflow)
    }

    /// Checked subtraction.
    ///
    /// # Errors
    /// [`Overflow`] when the difference is outside the `i64` range.
    pub fn checked_sub(self, other: Self) -> Result<Self, Overflow> {
        self.0.checked_sub(other.0).map(Self).ok_or(Overflow)
    }

    /// Checked multiplication by a whole number.
    ///
    /// # Errors
    /// [`Overflow`] when the product is outside the `i64` range.
    pub fn checked_mul(self, factor: i64) -> Result<Self, Overflow> {
        self.0.checked_mul(factor).map(Self).ok_or(Overflow)
    }
}

impl std::fmt::Display for Cents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        let dollars = abs / 100;
        let mut grouped = String::new();
        let digits = dollars.to_string();
        for (i, ch) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                grouped.push(',');
            }
            grouped.push(ch);
        }
        let rest = abs % 100;
        if rest == 0 {
            write!(f, "{sign}${grouped}")
        } else {
            write!(f, "{sign}${grouped}.{rest:02}")
        }
    }
}

/// `num / den` rounded half away from zero. `den` must be positive.
///
/// # Errors
/// [`Overflow`] when `den` is not positive.
pub fn div_round(num: i128, den: i128) -> Result<i128, Overflow> {
    if den <= 0 {
        return Err(Overflow);
    }
    let q = num / den;
    let r = num % den;
    // |r| * 2 >= den means the remainder is at least half: move away from zero.
    let twice = r
        .checked_abs()
        .and_then(|a| a.checked_mul(2))
        .ok_or(Overflow)?;
    if twice >= den {
        Ok(if num < 0 { q - 1 } else { q + 1 })
    } else {
        Ok(q)
    }
}

/// [`div_round`] into [`Cents`].
///
/// # Errors
/// [`Overflow`] when the result does not fit or `den` is not positive.
pub fn div_round_cents(num: i128, den: i128) -> Result<Cents, Overflow> {
    Cents::from_i128(div_round(num, den)?)
}

/// Rounds a float half away from zero to a whole number of cents.
///
/// # Errors
/// [`Overflow`] for a non-finite value or one outside ±2^53 (beyond which a
/// float no longer holds every whole cent).
pub fn round_f64(x: f64) -> Result<i64, Overflow> {
    const LIMIT: f64 = 9_007_199_254_740_992.0; // 2^53
    let r = libm::round(x);
    if !r.is_finite() || r.abs() > LIMIT {
        return Err(Overflow);
    }
    #[expect(
        clippy::as_conversions,
        reason = "range-checked above: a whole float within ±2^53 converts exactly"
    )]
    Ok(r as i64)
}

/// Converts a count or amount to `f64` exactly (values the engine produces
/// stay far below 2^53).
#[must_use]
pub fn to_f64(x: i64) -> f64 {
    #[expect(
        clippy::as_conversions,
        reason = "engine amounts stay below 2^53, where the conversion is exact"
    )]
    let f = x as f64;
    f
}

/// A whole percent, rounded half away from zero, of `part / whole`.
/// Returns 0 when `whole` is zero.
///
/// # Errors
/// [`Overflow`] when the intermediate product does not fit.
pub fn percent_of(part: i64, whole: i64) -> Result<i64, Overflow> {
    if whole == 0 {
        return Ok(0);
    }
    let num = i128::from(part).checked_mul(100).ok_or(Overflow)?;
    let den = i128::from(whole);
    let (num, den) = if den < 0 { (-num, -den) } else { (num, den) };
    i64::try_from(div_round(num, den)?).map_err(|_| Overflow)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(num: i128, den: i128, expect: i128) {
        assert_eq!(div_round(num, den).unwrap(), expect, "{num}/{den}");
    }

    #[test]
    fn div_round_is_half_away_from_zero() {
        check(5, 2, 3);
        check(-5, 2, -3);
        check(4, 3, 1);
        check(-4, 3, -1);
        check(7, 7, 1);
        check(0, 9, 0);
        check(149, 100, 1);
        check(150, 100, 2);
        check(-150, 100, -2);
        assert!(div_round(1, 0).is_err());
    }

    #[test]
    fn round_f64_is_half_away_from_zero() {
        assert_eq!(round_f64(2.5).unwrap(), 3);
        assert_eq!(round_f64(-2.5).unwrap(), -3);
        assert_eq!(round_f64(2.4999).unwrap(), 2);
        assert!(round_f64(f64::NAN).is_err());
        assert!(round_f64(1e300).is_err());
    }

    #[test]
    fn percent_rounds_and_keeps_sign() {
        assert_eq!(percent_of(1, 3).unwrap(), 33);
        assert_eq!(percent_of(1, 200).unwrap(), 1);
        assert_eq!(percent_of(-1, 200).unwrap(), -1);
        assert_eq!(percent_of(5, 0).unwrap(), 0);
    }

    #[test]
    fn cents_display_groups_dollars() {
        assert_eq!(Cents::new(170_000).to_string(), "$1,700");
        assert_eq!(Cents::new(12_345_678).to_string(), "$123,456.78");
        assert_eq!(Cents::new(-5).to_string(), "-$0.05");
    }

    #[test]
    fn amounts_are_bounded_on_both_sides() {
        for (kind, max) in [
            (Amount::Monthly, 100_000_000),
            (Amount::Annual, 1_000_000_000),
        ] {
            assert!(kind.check("x", None, 0).is_none());
            assert!(kind.check("x", None, max).is_none());
            for bad in [-1, max + 1, i64::MAX, i64::MIN] {
                let e = kind.check("plan.x", Some(2), bad).unwrap();
                assert_eq!((e.field.as_str(), e.index), ("plan.x", Some(2)));
                assert_eq!(
                    e.message,
                    format!("must be an integer of cents from 0 to {max}")
                );
            }
        }
    }

    #[test]
    fn checked_ops_report_overflow() {
        assert!(Cents::new(i64::MAX).checked_add(Cents::new(1)).is_err());
        assert!(Cents::new(i64::MIN).checked_sub(Cents::new(1)).is_err());
        assert!(Cents::new(i64::MAX).checked_mul(2).is_err());
        assert_eq!(Cents::new(3).checked_mul(4).unwrap(), Cents::new(12));
    }
}
