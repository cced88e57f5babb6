//! Test and live mode. The mode comes from the API key; resources of one
//! mode are invisible to keys of the other.

use serde::{Deserialize, Serialize};

/// `test` or `live`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Sandbox traffic: no outbound email, full API.
    Test,
    /// Real traffic, after the agreements are executed.
    Live,
}

impl Mode {
    /// Wire value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Test => "test",
            Self::Live => "live",
        }
    }

    /// Parses a wire value.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "test" => Some(Self::Test),
            "live" => Some(Self::Live),
            _ => None,
        }
    }
}
