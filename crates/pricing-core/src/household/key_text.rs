//! [`HouseholdKey`]: the text of a household's stream key, kept inline when
//! short so that normalising a census allocates nothing per household for
//! typical ids (`E-00042#0`).

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

use serde::{Serialize, Serializer};

/// Longest key stored without an allocation, in bytes.
const INLINE: usize = 22;

/// A household's stream key, `{key}#{occurrence}` (pricing model section
/// 5). It behaves as the `str` it holds: it dereferences to it, compares,
/// hashes, prints and serialises as it.
#[derive(Clone)]
pub struct HouseholdKey(Repr);

#[derive(Clone)]
enum Repr {
    /// Up to [`INLINE`] bytes of UTF-8, in place.
    Inline { len: u8, bytes: [u8; INLINE] },
    /// Longer keys.
    Heap(Box<str>),
}

impl HouseholdKey {
    /// `{base}#{occurrence}`.
    pub(crate) fn compose(base: &str, occurrence: usize) -> Self {
        let mut digits = [0u8; 20];
        let digits = decimal(occurrence, &mut digits);
        let len = base.len() + 1 + digits.len();
        if let Ok(short) = u8::try_from(len)
            && len <= INLINE
        {
            let mut bytes = [0u8; INLINE];
            if let Some((head, tail)) = bytes.split_at_mut_checked(base.len())
                && let Some((hash, rest)) = tail.split_first_mut()
                && let Some(d) = rest.get_mut(..digits.len())
            {
                head.copy_from_slice(base.as_bytes());
                *hash = b'#';
                d.copy_from_slice(digits);
                return Self(Repr::Inline { len: short, bytes });
            }
        }
        let mut text = String::with_capacity(len);
        text.push_str(base);
        text.push('#');
        text.extend(digits.iter().map(|&d| char::from(d)));
        Self(Repr::Heap(text.into_boxed_str()))
    }

    /// An empty key, to be set with [`HouseholdKey::set`].
    pub(crate) const EMPTY: Self = Self(Repr::Inline {
        len: 0,
        bytes: [0; INLINE],
    });

    /// Makes this key `{base}#{occurrence}`, writing a short one in place.
    pub(crate) fn set(&mut self, base: &str, occurrence: usize) {
        let Repr::Inline { len: old, bytes } = &mut self.0 else {
            *self = Self::compose(base, occurrence);
            return;
        };
        // Nearly every key is its base's only occurrence, `#0`.
        let b = base.len();
        let digit = u8::try_from(occurrence).ok().filter(|d| *d < 10);
        match (digit, u8::try_from(b + 2)) {
            (Some(d), Ok(len)) if b + 2 <= INLINE => {
                copy_small(bytes, base.as_bytes());
                if let Some([hash, digit]) = bytes.get_mut(b..b + 2) {
                    *hash = b'#';
                    *digit = b'0' + d;
                }
                *old = len;
            }
            _ => *self = Self::compose(base, occurrence),
        }
    }

    /// The key.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // Always the bytes of a `str` (see `compose`).
            Repr::Inline { len, bytes } => bytes
                .get(..usize::from(*len))
                .and_then(|b| std::str::from_utf8(b).ok())
                .unwrap_or_default(),
            Repr::Heap(text) => text,
        }
    }
}

/// Copies `from` (at most [`INLINE`] bytes) to the start of `to` with two
/// fixed-size, overlapping moves rather than a call to `memcpy`.
fn copy_small(to: &mut [u8; INLINE], from: &[u8]) {
    fn put<const W: usize>(to: &mut [u8], from: &[u8], at: usize) {
        if let (Some(t), Some(f)) = (to.get_mut(at..at + W), from.get(at..at + W)) {
            t.copy_from_slice(f);
        }
    }
    let n = from.len();
    if n >= 16 {
        put::<16>(to, from, 0);
        put::<16>(to, from, n - 16);
    } else if n >= 8 {
        put::<8>(to, from, 0);
        put::<8>(to, from, n - 8);
    } else if n >= 4 {
        put::<4>(to, from, 0);
        put::<4>(to, from, n - 4);
    } else {
        for (t, f) in to.iter_mut().zip(from) {
            *t = *f;
        }
    }
}

/// The decimal digits of `n`, written at the end of `buf`.
fn decimal(mut n: usize, buf: &mut [u8; 20]) -> &[u8] {
    let mut start = buf.len();
    for slot in buf.iter_mut().rev() {
        *slot = b'0' + u8::try_from(n % 10).unwrap_or(0);
        start -= 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.get(start..).unwrap_or_default()
}

impl From<&str> for HouseholdKey {
    /// A key from its full text (`{key}#{occurrence}`).
    fn from(text: &str) -> Self {
        match u8::try_from(text.len()) {
            Ok(len) if text.len() <= INLINE => {
                let mut bytes = [0u8; INLINE];
                if let Some(head) = bytes.get_mut(..text.len()) {
                    head.copy_from_slice(text.as_bytes());
                }
                Self(Repr::Inline { len, bytes })
            }
            _ => Self(Repr::Heap(text.into())),
        }
    }
}

impl From<HouseholdKey> for String {
    fn from(key: HouseholdKey) -> Self {
        match key.0 {
            Repr::Heap(text) => text.into_string(),
            Repr::Inline { .. } => key.as_str().to_owned(),
        }
    }
}

impl Deref for HouseholdKey {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for HouseholdKey {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for HouseholdKey {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for HouseholdKey {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for HouseholdKey {}

impl PartialEq<str> for HouseholdKey {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for HouseholdKey {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for HouseholdKey {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialOrd for HouseholdKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for HouseholdKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for HouseholdKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for HouseholdKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for HouseholdKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for HouseholdKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn keys_hold_their_text_inline_or_not() {
        for (base, n) in [
            ("E1", 0),
            ("E-00042", 7),
            ("", 12),
            ("a".repeat(19).as_str(), 9),
            ("a".repeat(19).as_str(), 10),
            ("a".repeat(20).as_str(), 0),
            ("ada.lovelace@example.com", 3),
            ("\u{e9}t\u{e9}\u{1f600}", 1),
            ("\u{e9}".repeat(10).as_str(), 0),
            (&"f".repeat(64), usize::MAX),
        ] {
            let text = format!("{base}#{n}");
            let key = HouseholdKey::compose(base, n);
            assert_eq!(key.as_str(), text);
            for mut reused in [
                HouseholdKey::EMPTY,
                HouseholdKey::from("x".repeat(40).as_str()),
                HouseholdKey::from("a-longer-key#12"),
            ] {
                reused.set(base, n);
                assert_eq!(reused.as_str(), text);
            }
            assert_eq!(key, HouseholdKey::from(text.as_str()));
            assert_eq!(
                matches!(key.0, Repr::Inline { .. }),
                text.len() <= INLINE,
                "{text}"
            );
            assert_eq!(format!("{key:?}"), format!("{text:?}"));
            assert_eq!(key.to_string(), text);
            assert_eq!(String::from(key.clone()), text);
            assert_eq!(
                serde_json::to_string(&key).unwrap(),
                serde_json::to_string(&text).unwrap()
            );
            assert_eq!(key.rsplit_once('#').map(|(b, _)| b), Some(base));
        }
    }

    #[test]
    fn keys_of_every_length_are_set_in_place_or_not() {
        let alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
        for n in 0..=30 {
            let base = &alphabet[..n];
            for occurrence in [0, 1, 9, 10, 99, 123_456] {
                let text = format!("{base}#{occurrence}");
                let mut key = HouseholdKey::from("z".repeat(21).as_str());
                key.set(base, occurrence);
                assert_eq!(key.as_str(), text);
                assert_eq!(HouseholdKey::compose(base, occurrence).as_str(), text);
            }
        }
    }

    #[test]
    fn keys_order_as_their_text() {
        let texts = ["b#0", "a#10", "a#9", "ab#0", &"z".repeat(30)];
        let keys: BTreeSet<HouseholdKey> = texts.iter().map(|t| HouseholdKey::from(*t)).collect();
        let mut sorted = texts.to_vec();
        sorted.sort_unstable();
        let order: Vec<&str> = keys.iter().map(HouseholdKey::as_str).collect();
        assert_eq!(order, sorted);
        assert_eq!(size_of::<HouseholdKey>(), size_of::<String>());
    }
}
