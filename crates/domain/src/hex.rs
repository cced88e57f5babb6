//! Lowercase hex, as used by ids, keys, digests and secrets.

use std::fmt::Write as _;

/// The lowercase hex of `bytes`.
#[must_use]
pub fn encode(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// Exactly `N` bytes from `2 × N` hex characters (either case), or `None`.
#[must_use]
pub fn decode<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != N * 2 {
        return None;
    }
    let mut out = [0u8; N];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(text.get(i * 2..i * 2 + 2)?, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_bad_text() {
        assert_eq!(encode(&[0x00, 0x0f, 0xab]), "000fab");
        assert_eq!(decode::<3>("000fab"), Some([0x00, 0x0f, 0xab]));
        assert_eq!(decode::<3>("000FAB"), Some([0x00, 0x0f, 0xab]));
        for bad in ["000fa", "000fab00", "000fag", "é0fab"] {
            assert_eq!(decode::<3>(bad), None, "{bad}");
        }
    }
}
