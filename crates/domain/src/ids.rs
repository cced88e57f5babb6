//! Typed identifiers: a prefix plus 12 lowercase hex characters
//! (`grp_0123456789ab`). Each kind is its own type, so a quote id can never
//! be passed where a group id is expected.
//!
//! Ids are made from 6 random bytes supplied by the id port; 48 random bits
//! make a collision unlikely, and storage's unique constraints turn the rare
//! one into a retry.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why a string is not an id of the expected kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a valid {kind} id: expected `{prefix}` and 12 lowercase hex characters")]
pub struct IdError {
    /// Kind of id expected.
    pub kind: &'static str,
    /// Its prefix.
    pub prefix: &'static str,
}

/// Number of hex characters after the prefix.
pub const ID_HEX_LEN: usize = 12;

fn is_lower_hex(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $prefix:literal, $kind:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// The typed prefix.
            pub const PREFIX: &'static str = $prefix;

            /// An id from 6 random bytes.
            #[must_use]
            pub fn from_bytes(bytes: [u8; 6]) -> Self {
                Self(format!("{}{}", $prefix, hex::encode(bytes)))
            }

            /// Parses an id, checking its prefix and its 12 lowercase hex
            /// characters.
            ///
            /// # Errors
            /// [`IdError`] for anything else.
            pub fn parse(text: &str) -> Result<Self, IdError> {
                match text.strip_prefix($prefix) {
                    Some(rest) if rest.len() == ID_HEX_LEN && is_lower_hex(rest) => {
                        Ok(Self(text.to_owned()))
                    }
                    _ => Err(IdError { kind: $kind, prefix: $prefix }),
                }
            }

            /// The id as text.
            #[must_use]
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                Self::parse(&text).map_err(serde::de::Error::custom)
            }
        }
    };
}

id_type!(
    /// An employer group (`grp_`).
    GroupId, "grp_", "group"
);
id_type!(
    /// A census member (`mem_`).
    MemberId, "mem_", "member"
);
id_type!(
    /// A quote (`qt_`).
    QuoteId, "qt_", "quote"
);
id_type!(
    /// An enrollment (`enr_`).
    EnrollmentId, "enr_", "enrollment"
);
id_type!(
    /// An event (`evt_`).
    EventId, "evt_", "event"
);
id_type!(
    /// A partner (`prt_`).
    PartnerId, "prt_", "partner"
);
id_type!(
    /// An API key record (`key_`); never the key itself.
    KeyId, "key_", "key"
);
id_type!(
    /// A background job (`job_`).
    JobId, "job_", "job"
);
id_type!(
    /// An embed session (`emb_`).
    EmbedSessionId, "emb_", "embed session"
);
id_type!(
    /// A partner portal user (`usr_`).
    UserId, "usr_", "user"
);
id_type!(
    /// A request (`req_`), echoed in the `Request-Id` header.
    RequestId, "req_", "request"
);
id_type!(
    /// A serving process (`proc_`): the owner its in-flight idempotency
    /// records and job claims name (see [`crate::store::process`]).
    ProcessId, "proc_", "process"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_prefix_and_twelve_lowercase_hex() {
        let id = GroupId::from_bytes([0x01, 0x23, 0x45, 0x67, 0x89, 0xab]);
        assert_eq!(id.as_str(), "grp_0123456789ab");
        assert_eq!(GroupId::parse("grp_0123456789ab").unwrap(), id);
        for bad in [
            "grp_0123456789AB",
            "grp_0123456789a",
            "grp_0123456789abc",
            "qt_0123456789ab",
            "grp_0123456789ag",
            "",
        ] {
            assert!(GroupId::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(QuoteId::from_bytes([0xff; 6]).as_str(), "qt_ffffffffffff");
    }

    #[test]
    fn ids_round_trip_through_json_and_reject_other_kinds() {
        let id = PartnerId::from_bytes([9; 6]);
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, "\"prt_090909090909\"");
        assert_eq!(serde_json::from_str::<PartnerId>(&json).unwrap(), id);
        assert!(serde_json::from_str::<GroupId>(&json).is_err());
    }
}
