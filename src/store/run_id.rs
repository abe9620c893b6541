//! Run ids: short, sortable by creation time, typeable.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// Crockford's base32 alphabet, lowercase: no `i`, `l`, `o`, `u`.
const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// A run's id: 10 base32 digits of milliseconds since the Unix epoch, then 4 random digits
/// (14 characters, e.g. `01jq3v8m2k7xyz`). Ids sort by creation time as plain strings.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(String);

impl RunId {
    /// A fresh id for a run created now.
    #[must_use]
    pub fn generate() -> Self {
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_millis() as u64);
        Self::from_parts(millis, rand::random::<u32>())
    }

    /// The id for a creation time and a random number (20 bits of it are used).
    #[must_use]
    pub fn from_parts(millis: u64, random: u32) -> Self {
        let mut text = String::with_capacity(14);
        for shift in (0..10).rev() {
            text.push(digit(millis >> (shift * 5)));
        }
        for shift in (0..4).rev() {
            text.push(digit(u64::from(random) >> (shift * 5)));
        }
        Self(text)
    }

    /// Wraps an id read back from storage or typed by a person (not validated: lookups of
    /// an id that does not exist fail with [`StoreError::NotFound`](super::StoreError)).
    #[must_use]
    pub fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    /// The id's text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn digit(value: u64) -> char {
    char::from(ALPHABET[(value & 31) as usize])
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_sort_by_time() {
        let early = RunId::from_parts(1_700_000_000_000, 0xfffff);
        let late = RunId::from_parts(1_700_000_000_001, 0);
        assert!(early < late);
        assert_eq!(early.as_str().len(), 14);
    }

    #[test]
    fn ids_use_crockford_digits() {
        let id = RunId::generate();
        assert!(id.as_str().bytes().all(|b| ALPHABET.contains(&b)), "{id}");
        assert_ne!(RunId::generate(), RunId::from_parts(0, 0));
    }
}
