//! The field rules of the onboarding steps (onboarding §1, Field rules):
//! EIN, entity type, address, phone, bank account, plan choices and the
//! signature. Each rule turns what was sent into the stored value or a
//! [`FieldError`] named by the field's snake_case path; the portal and the
//! embedded endpoints both call them, so the messages are the same.

use serde::{Deserialize, Serialize};

use crate::error::FieldError;
use crate::group::{check_state, check_zip};

/// EIN prefixes the IRS does not assign.
const UNASSIGNED_EIN_PREFIXES: [&str; 17] = [
    "00", "07", "08", "09", "17", "18", "19", "28", "29", "49", "69", "70", "78", "79", "89", "96",
    "97",
];

/// An EIN as stored: 9 digits, from `NN-NNNNNNN` or 9 digits, with a prefix
/// the IRS assigns.
///
/// # Errors
/// A [`FieldError`] on `field`.
pub fn ein(field: &str, text: &str) -> Result<String, FieldError> {
    let text = text.trim();
    let digits: String = match text.split_once('-') {
        Some((a, b)) if a.len() == 2 && b.len() == 7 => format!("{a}{b}"),
        Some(_) => String::new(),
        None => text.to_owned(),
    };
    if digits.len() != 9 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(FieldError::new(
            field,
            "must be an EIN: NN-NNNNNNN or 9 digits",
        ));
    }
    if UNASSIGNED_EIN_PREFIXES.contains(&digits.get(..2).unwrap_or_default()) {
        return Err(FieldError::new(
            field,
            "must start with a prefix the IRS assigns",
        ));
    }
    Ok(digits)
}

/// An EIN of 9 digits shown as `NN-NNNNNNN`.
#[must_use]
pub fn ein_display(digits: &str) -> String {
    match (digits.get(..2), digits.get(2..)) {
        (Some(a), Some(b)) => format!("{a}-{b}"),
        _ => digits.to_owned(),
    }
}

/// The legal form of the company.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntityType {
    /// C corporation.
    CCorporation,
    /// S corporation.
    SCorporation,
    /// Limited liability company.
    Llc,
    /// Partnership.
    Partnership,
    /// Sole proprietorship.
    SoleProprietorship,
    /// Nonprofit.
    Nonprofit,
}

impl EntityType {
    /// Every entity type, in the specification's order.
    pub const ALL: [Self; 6] = [
        Self::CCorporation,
        Self::SCorporation,
        Self::Llc,
        Self::Partnership,
        Self::SoleProprietorship,
        Self::Nonprofit,
    ];

    /// Wire value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::CCorporation => "c_corporation",
            Self::SCorporation => "s_corporation",
            Self::Llc => "llc",
            Self::Partnership => "partnership",
            Self::SoleProprietorship => "sole_proprietorship",
            Self::Nonprofit => "nonprofit",
        }
    }

    /// What a person reads.
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::CCorporation => "C corporation",
            Self::SCorporation => "S corporation",
            Self::Llc => "LLC",
            Self::Partnership => "Partnership",
            Self::SoleProprietorship => "Sole proprietorship",
            Self::Nonprofit => "Nonprofit",
        }
    }

    /// Parses a wire value.
    ///
    /// # Errors
    /// A [`FieldError`] on `field` listing the values.
    pub fn parse(field: &str, text: &str) -> Result<Self, FieldError> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == text)
            .ok_or_else(|| {
                FieldError::new(
                    field,
                    "must be one of c_corporation, s_corporation, llc, partnership, sole_proprietorship, nonprofit",
                )
            })
    }
}

/// A street address (every part required but `line2`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreetAddress {
    /// Street line.
    pub line1: String,
    /// Suite, unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line2: Option<String>,
    /// City.
    pub city: String,
    /// Two-letter state.
    pub state: String,
    /// Five-digit ZIP.
    pub zip: String,
}

/// An address as sent: any part may be missing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressInput {
    /// Street line.
    pub line1: Option<String>,
    /// Suite, unit.
    pub line2: Option<String>,
    /// City.
    pub city: Option<String>,
    /// Two-letter state.
    pub state: Option<String>,
    /// Five-digit ZIP.
    pub zip: Option<String>,
}

/// A text of 1 to `max` characters after trimming.
///
/// # Errors
/// A [`FieldError`] on `field`.
pub fn text(field: &str, value: &str, max: usize) -> Result<String, FieldError> {
    let value = value.trim();
    if value.is_empty() || value.chars().count() > max {
        return Err(FieldError::new(
            field,
            format!("must be 1 to {max} characters"),
        ));
    }
    Ok(value.to_owned())
}

/// The address, when every required part was sent and valid; `Ok(None)`
/// when a part is missing (the step lists `address` in its requirements).
///
/// # Errors
/// Every invalid part, as `address.<part>`.
pub fn address(input: &AddressInput) -> Result<Option<StreetAddress>, Vec<FieldError>> {
    let mut errors = Vec::new();
    let mut part = |name: &str, value: &Option<String>, max: usize| -> Option<String> {
        let value = value.as_deref()?;
        match text(&format!("address.{name}"), value, max) {
            Ok(v) => Some(v),
            Err(e) => {
                errors.push(e);
                None
            }
        }
    };
    let line1 = part("line1", &input.line1, 200);
    let line2 = part("line2", &input.line2, 200);
    let city = part("city", &input.city, 100);
    let state = input.state.as_deref().map(str::trim);
    let zip = input.zip.as_deref().map(str::trim);
    errors.extend(state.and_then(|s| check_state("address.state", s)));
    errors.extend(zip.and_then(|z| check_zip("address.zip", z)));
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(match (line1, city, state, zip) {
        (Some(line1), Some(city), Some(state), Some(zip)) => Some(StreetAddress {
            line1,
            line2,
            city,
            state: state.to_owned(),
            zip: zip.to_owned(),
        }),
        _ => None,
    })
}

/// A US phone number as E.164 (`+1XXXXXXXXXX`): any formatting that leaves
/// 10 digits, with an optional leading `+1` or `1`.
///
/// # Errors
/// A [`FieldError`] on `field`.
pub fn phone(field: &str, text: &str) -> Result<String, FieldError> {
    let bad = || FieldError::new(field, "must be a US phone number of 10 digits");
    let text = text.trim();
    let allowed = |c: char| c.is_ascii_digit() || " ()-.+".contains(c);
    if !text.chars().all(allowed) || text.chars().skip(1).any(|c| c == '+') {
        return Err(bad());
    }
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    let national = match digits.len() {
        10 if !text.starts_with('+') => digits,
        11 if digits.starts_with('1') => digits.get(1..).unwrap_or_default().to_owned(),
        _ => return Err(bad()),
    };
    Ok(format!("+1{national}"))
}

/// A routing number: 9 digits passing the ABA checksum.
///
/// # Errors
/// A [`FieldError`] on `field`.
pub fn routing_number(field: &str, text: &str) -> Result<String, FieldError> {
    let text = text.trim();
    let digits: Vec<u32> = text.chars().filter_map(|c| c.to_digit(10)).collect();
    let weights = [3, 7, 1, 3, 7, 1, 3, 7, 1];
    let ok = text.len() == 9
        && digits.len() == 9
        && digits
            .iter()
            .zip(weights)
            .map(|(d, w)| d * w)
            .sum::<u32>()
            .is_multiple_of(10);
    if ok {
        Ok(text.to_owned())
    } else {
        Err(FieldError::new(
            field,
            "must be a 9-digit ABA routing number",
        ))
    }
}

/// An account number: 4 to 17 digits.
///
/// # Errors
/// A [`FieldError`] on `field` (which never repeats the number).
pub fn account_number(field: &str, text: &str) -> Result<String, FieldError> {
    let text = text.trim();
    if (4..=17).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit()) {
        Ok(text.to_owned())
    } else {
        Err(FieldError::new(field, "must be 4 to 17 digits"))
    }
}

/// `checking` or `savings`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccountType {
    /// A checking account.
    Checking,
    /// A savings account.
    Savings,
}

impl AccountType {
    /// Wire value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Checking => "checking",
            Self::Savings => "savings",
        }
    }

    /// Parses a wire value.
    ///
    /// # Errors
    /// A [`FieldError`] on `field`.
    pub fn parse(field: &str, text: &str) -> Result<Self, FieldError> {
        match text {
            "checking" => Ok(Self::Checking),
            "savings" => Ok(Self::Savings),
            _ => Err(FieldError::new(field, "must be checking or savings")),
        }
    }
}

/// When coverage starts for a new hire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WaitingPeriod {
    /// From the hire date.
    #[serde(rename = "none")]
    None,
    /// The first of the month after the hire date.
    #[serde(rename = "first_of_month_after_hire")]
    FirstOfMonthAfterHire,
    /// 30 days after the hire date.
    #[serde(rename = "30_days")]
    Days30,
    /// 60 days after the hire date.
    #[serde(rename = "60_days")]
    Days60,
}

impl WaitingPeriod {
    /// Every waiting period, in the specification's order.
    pub const ALL: [Self; 4] = [
        Self::None,
        Self::FirstOfMonthAfterHire,
        Self::Days30,
        Self::Days60,
    ];

    /// Wire value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::FirstOfMonthAfterHire => "first_of_month_after_hire",
            Self::Days30 => "30_days",
            Self::Days60 => "60_days",
        }
    }

    /// What a person reads.
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::None => "None: coverage starts on the hire date",
            Self::FirstOfMonthAfterHire => "First of the month after hire",
            Self::Days30 => "30 days after hire",
            Self::Days60 => "60 days after hire",
        }
    }

    /// Parses a wire value.
    ///
    /// # Errors
    /// A [`FieldError`] on `field`.
    pub fn parse(field: &str, text: &str) -> Result<Self, FieldError> {
        Self::ALL
            .into_iter()
            .find(|w| w.as_str() == text)
            .ok_or_else(|| {
                FieldError::new(
                    field,
                    "must be one of none, first_of_month_after_hire, 30_days, 60_days",
                )
            })
    }
}

/// Minimum weekly hours for eligibility: 20 to 40.
///
/// # Errors
/// A [`FieldError`] on `field`.
pub fn min_hours(field: &str, hours: i64) -> Result<u32, FieldError> {
    u32::try_from(hours)
        .ok()
        .filter(|h| (20..=40).contains(h))
        .ok_or_else(|| FieldError::new(field, "must be an integer from 20 to 40"))
}

/// An employer contribution: 0 to 100 percent.
///
/// # Errors
/// A [`FieldError`] on `field`.
pub fn contribution(field: &str, pct: i64) -> Result<u32, FieldError> {
    u32::try_from(pct)
        .ok()
        .filter(|p| *p <= 100)
        .ok_or_else(|| FieldError::new(field, "must be an integer from 0 to 100"))
}

/// Whether a typed name is the signatory's: equal ignoring case and
/// spacing.
#[must_use]
pub fn same_name(typed: &str, signatory: &str) -> bool {
    let fold = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    !typed.trim().is_empty() && fold(typed) == fold(signatory)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eins_take_both_forms_and_refuse_unassigned_prefixes() {
        assert_eq!(ein("ein", "12-3456789").unwrap(), "123456789");
        assert_eq!(ein("ein", " 123456789 ").unwrap(), "123456789");
        assert_eq!(ein("ein", "11-1111111").unwrap(), "111111111");
        for bad in ["1-23456789", "12345678", "12-345678a", "", "123-456789"] {
            assert_eq!(ein("ein", bad).unwrap_err().field, "ein", "{bad}");
        }
        for prefix in UNASSIGNED_EIN_PREFIXES {
            let e = ein("ein", &format!("{prefix}-1234567")).unwrap_err();
            assert!(e.message.contains("prefix"), "{prefix}");
        }
        assert_eq!(ein_display("123456789"), "12-3456789");
    }

    #[test]
    fn phones_become_e164() {
        for ok in [
            "(312) 555-0142",
            "312.555.0142",
            "+1 312 555 0142",
            "1-312-555-0142",
            "3125550142",
        ] {
            assert_eq!(phone("phone", ok).unwrap(), "+13125550142", "{ok}");
        }
        for bad in [
            "555-0142",
            "+44 20 7946 0958",
            "312555014x",
            "+13125550142+",
            "23125550142",
        ] {
            assert!(phone("phone", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn routing_numbers_pass_the_aba_checksum() {
        for ok in ["011000015", "021000021", "111000025"] {
            assert!(routing_number("routing_number", ok).is_ok(), "{ok}");
        }
        for bad in ["011000016", "12345678", "0110000150", "01100001a"] {
            assert!(routing_number("routing_number", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn account_numbers_are_4_to_17_digits_and_errors_never_repeat_them() {
        assert!(account_number("account_number", "0001").is_ok());
        assert!(account_number("account_number", "12345678901234567").is_ok());
        for bad in ["123", "123456789012345678", "12 34"] {
            let e = account_number("account_number", bad).unwrap_err();
            assert!(!e.message.contains(bad), "{e:?}");
        }
    }

    #[test]
    fn addresses_need_every_part_but_line2() {
        let mut input = AddressInput {
            line1: Some("1 Main St".into()),
            line2: None,
            city: Some("Chicago".into()),
            state: Some("IL".into()),
            zip: Some("60601".into()),
        };
        assert_eq!(address(&input).unwrap().unwrap().zip, "60601");
        input.city = None;
        assert_eq!(address(&input).unwrap(), None);
        input.zip = Some("6060".into());
        input.state = Some("il".into());
        let fields: Vec<String> = address(&input)
            .unwrap_err()
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(fields, ["address.state", "address.zip"]);
    }

    #[test]
    fn closed_sets_parse_their_wire_values() {
        for t in EntityType::ALL {
            assert_eq!(EntityType::parse("entity_type", t.as_str()).unwrap(), t);
        }
        assert!(EntityType::parse("entity_type", "corp").is_err());
        for w in WaitingPeriod::ALL {
            assert_eq!(
                WaitingPeriod::parse("waiting_period", w.as_str()).unwrap(),
                w
            );
            let json = serde_json::to_string(&w).unwrap();
            assert_eq!(json, format!("\"{}\"", w.as_str()));
        }
        assert_eq!(
            AccountType::parse("account_type", "savings").unwrap(),
            AccountType::Savings
        );
        assert!(AccountType::parse("account_type", "brokerage").is_err());
        assert_eq!(min_hours("h", 20).unwrap(), 20);
        assert!(min_hours("h", 19).is_err() && min_hours("h", 41).is_err());
        assert!(contribution("c", 101).is_err() && contribution("c", -1).is_err());
    }

    #[test]
    fn a_signature_matches_the_signatory_ignoring_case_and_spacing() {
        assert!(same_name("  dana   KIM ", "Dana Kim"));
        assert!(!same_name("Dana Kimball", "Dana Kim"));
        assert!(!same_name(" ", ""));
    }
}
