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
