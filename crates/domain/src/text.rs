//! Text every string field obeys, whatever carries it (JSON, CSV, forms).
//!
//! No string a partner or an employer sends may hold a control character:
//! the C0 range U+0000–U+001F (NUL, tab, line breaks included), DEL
//! U+007F and the C1 range U+0080–U+009F. They have no place in a name, an
//! id, an address or an email, PostgreSQL refuses U+0000 in text outright,
//! and the rest turn into log and CSV injection. Both databases therefore
//! see the same refusal, before anything is stored.

/// The message a field with a control character gets.
pub const CONTROL_MESSAGE: &str =
    "must not contain control characters (U+0000–U+001F, U+007F–U+009F)";

/// Whether `c` is a control character this service refuses.
#[must_use]
pub const fn is_refused_control(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
}

/// Whether `s` holds a refused control character.
#[must_use]
pub fn has_control(s: &str) -> bool {
    s.chars().any(is_refused_control)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c0_del_and_c1_are_refused_and_nothing_else() {
        for s in [
            "a\u{0}b",
            "\t",
            "line\nbreak",
            "\r",
            "\u{1b}[31m",
            "\u{7f}",
            "\u{85}",
            "\u{9f}",
        ] {
            assert!(has_control(s), "{s:?}");
        }
        for s in [
            "",
            "Ana Díaz",
            "O'Brien & Sons",
            "\u{a0}",
            "東京",
            "emoji 🎉",
            "\u{200b}",
        ] {
            assert!(!has_control(s), "{s:?}");
        }
    }
}

/// Integer cents as a person reads dollars: two decimals and thousands
/// separators (`123456` → `$1,234.56`, `-5` → `-$0.05`). The offer page
/// and the employer portal show amounts this way.
#[must_use]
pub fn dollars(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    let whole = (abs / 100).to_string();
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{sign}${grouped}.{:02}", abs % 100)
}

#[cfg(test)]
mod dollars_tests {
    use super::dollars;

    #[test]
    fn cents_read_as_dollars() {
        assert_eq!(dollars(0), "$0.00");
        assert_eq!(dollars(123_456_789), "$1,234,567.89");
        assert_eq!(dollars(-5), "-$0.05");
    }
}
