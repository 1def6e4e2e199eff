//! Deterministic entry ids: the first hex digits of the SHA-256 of a source id, so importing the same
//! file twice gives the same ids.

use std::collections::HashSet;

use sha2::{Digest, Sha256};

/// Hands out ids derived from source ids, never the same one twice. Almost every id is its first
/// 8 hex digits, held as their value (4 bytes, not a `String` of 32): a million entries' ids take
/// about 10 MB instead of 80.
#[derive(Debug, Default)]
pub(crate) struct IdAllocator {
    /// Ids of 8 hex digits, as their value.
    short: HashSet<u32>,
    /// Longer ids (taken after a collision).
    long: HashSet<String>,
}

impl IdAllocator {
    /// The id for `source_id`: 8 hex digits, more when those are taken, and a salted hash when the
    /// whole digest is taken (the source id itself repeats).
    pub(crate) fn derive(&mut self, source_id: &str) -> String {
        let mut candidates = candidates(source_id);
        loop {
            let candidate = candidates.next_candidate();
            if self.take(&candidate) {
                return candidate;
            }
        }
    }

    /// Marks `candidate` (lowercase hex digits) taken; false when it already was.
    fn take(&mut self, candidate: &str) -> bool {
        match short_value(candidate) {
            Some(value) => self.short.insert(value),
            None if self.long.contains(candidate) => false,
            None => self.long.insert(candidate.to_owned()),
        }
    }
}

/// The ids derived from `source_id`, in the order they are tried: its digest's first 8, 12, 16,
/// 32 and 64 hex digits, then those of the salted digests (`<source id>#1`, …). Endless.
pub(crate) fn candidates(source_id: &str) -> Candidates<'_> {
    Candidates {
        source_id,
        salt: 0,
        digest: hex(&Sha256::digest(source_id.as_bytes())),
        length_index: 0,
    }
}

/// The ids [`candidates`] tries, one at a time.
pub(crate) struct Candidates<'source> {
    source_id: &'source str,
    salt: u32,
    digest: String,
    length_index: usize,
}

impl Candidates<'_> {
    const LENGTHS: [usize; 5] = [8, 12, 16, 32, 64];

    pub(crate) fn next_candidate(&mut self) -> String {
        if self.length_index == Self::LENGTHS.len() {
            self.salt += 1;
            self.length_index = 0;
            let salted = format!("{}#{}", self.source_id, self.salt);
            self.digest = hex(&Sha256::digest(salted.as_bytes()));
        }
        let length = Self::LENGTHS[self.length_index];
        self.length_index += 1;
        self.digest[..length].to_owned()
    }
}

/// The value of an id of exactly 8 lowercase hex digits (the form `hex` writes).
fn short_value(id: &str) -> Option<u32> {
    let lowercase = id
        .bytes()
        .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte));
    (id.len() == 8 && lowercase)
        .then(|| u32::from_str_radix(id, 16).ok())
        .flatten()
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        text.push(char::from(DIGITS[usize::from(byte >> 4)]));
        text.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_unique() {
        let mut first = IdAllocator::default();
        let mut second = IdAllocator::default();
        let a = first.derive("uuid-1");
        assert_eq!(a.len(), 8);
        assert_eq!(a, second.derive("uuid-1"));
        let again = first.derive("uuid-1");
        assert_ne!(a, again);
        assert_eq!(again.len(), 12);
        // The third time: 16 digits, the 12 being taken too.
        let third = first.derive("uuid-1");
        assert_eq!(third.len(), 16);
        assert!(third.starts_with(&again));
    }

    #[test]
    fn only_eight_lowercase_hex_digits_are_held_as_values() {
        assert_eq!(short_value("0000abcd"), Some(0xabcd));
        assert_eq!(short_value("ffffffff"), Some(u32::MAX));
        for other in ["0000ABCD", "abcd", "0000abcd0", "+000abcd", "0000abcg"] {
            assert_eq!(short_value(other), None, "{other}");
        }
        let mut ids = IdAllocator::default();
        assert!(ids.take("0000abcd"));
        assert!(!ids.take("0000abcd"));
        assert!(ids.take("0000abcd1234"));
        assert!(!ids.take("0000abcd1234"));
    }
}
