//! The uuids of a transcript (and the reply ids of its assistant records) as small numbers: each
//! text is interned once into a table keyed by 17 bytes (a canonical uuid's 16 bytes, parsed; any
//! other text's SHA-256, truncated, tagged apart so no text can pose as a uuid), and what linking
//! needs per uuid is kept in arrays indexed by that number. A million records' uuids, their
//! parents and their last entries' ids took about 400 bytes a record as `String`s in maps; here
//! they take about 40.

use std::collections::HashMap;
use std::num::NonZeroU32;

use sha2::{Digest, Sha256};

/// A text met in the transcript (a uuid, a parent uuid, a reply's `message.id`), by number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Sym(NonZeroU32);

impl Sym {
    /// The position of this text in the per-text arrays.
    pub(super) fn index(self) -> usize {
        usize::try_from(self.0.get() - 1).unwrap_or(usize::MAX)
    }
}

/// The interned texts and, per text, the id of the last entry of the record with that uuid.
#[derive(Debug, Default)]
pub(super) struct Uuids {
    by_key: HashMap<[u8; 17], Sym>,
    /// Per text: the last entry of its record (`Tail`); none for texts that are not a record's.
    tails: Vec<Tail>,
    /// Entry ids that are not 8 hex digits, which `Tail::Long` points into.
    long_ids: Vec<Box<str>>,
    /// The texts of parents that no record gave an entry to (yet): the only texts an issue may
    /// still name.
    parent_texts: HashMap<Sym, Box<str>>,
}

/// An entry id in 8 bytes: 8 hex digits as their value, or a place in `long_ids`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tail {
    None,
    Short(u32),
    Long(u32),
}

impl Uuids {
    /// The number of `text`, the same for the same text.
    pub(super) fn intern(&mut self, text: &str) -> Sym {
        let key = key_of(text);
        if let Some(sym) = self.by_key.get(&key) {
            return *sym;
        }
        let next = u32::try_from(self.tails.len() + 1)
            .ok()
            .and_then(NonZeroU32::new)
            .unwrap_or(NonZeroU32::MAX);
        let sym = Sym(next);
        self.tails.push(Tail::None);
        self.by_key.insert(key, sym);
        sym
    }

    /// A new number for a uuid a record writes again: `text` means the later record from here on,
    /// so a parent written after it is that record, and one written before it stays the earlier
    /// (old Claude Code versions write every session's local-command caveat under one uuid).
    pub(super) fn intern_again(&mut self, text: &str) -> Sym {
        self.by_key.remove(&key_of(text));
        self.intern(text)
    }

    /// The number of a parent uuid; its text is kept while no record with that uuid has entries
    /// (an issue names a missing parent by its text).
    pub(super) fn intern_parent(&mut self, text: &str) -> Sym {
        let sym = self.intern(text);
        if self.tail(sym).is_none() && !self.parent_texts.contains_key(&sym) {
            self.parent_texts.insert(sym, text.into());
        }
        sym
    }

    /// How many texts were interned: the length of per-text arrays.
    pub(super) fn len(&self) -> usize {
        self.tails.len()
    }

    /// The text of a parent no record gave an entry to.
    pub(super) fn parent_text(&self, sym: Sym) -> String {
        self.parent_texts
            .get(&sym)
            .map(|text| text.to_string())
            .unwrap_or_default()
    }

    /// Whether a record with this uuid gave an entry.
    pub(super) fn has_tail(&self, sym: Sym) -> bool {
        self.tails
            .get(sym.index())
            .is_some_and(|tail| *tail != Tail::None)
    }

    /// The id of the last entry of the record with this uuid.
    pub(super) fn tail(&self, sym: Sym) -> Option<String> {
        match self.tails.get(sym.index())? {
            Tail::None => None,
            Tail::Short(value) => Some(format!("{value:08x}")),
            Tail::Long(at) => self
                .long_ids
                .get(usize::try_from(*at).ok()?)
                .map(|id| id.to_string()),
        }
    }

    /// Records `id` as the last entry of the record with this uuid.
    pub(super) fn set_tail(&mut self, sym: Sym, id: &str) {
        let tail = match short_value(id) {
            Some(value) => Tail::Short(value),
            None => {
                self.long_ids.push(id.into());
                Tail::Long(u32::try_from(self.long_ids.len() - 1).unwrap_or(u32::MAX))
            }
        };
        if let Some(slot) = self.tails.get_mut(sym.index()) {
            *slot = tail;
        }
        self.parent_texts.remove(&sym);
    }
}

/// The table's key of a text: `0` and a canonical uuid's 16 bytes, or `1` and the first 16 bytes
/// of the text's SHA-256.
fn key_of(text: &str) -> [u8; 17] {
    let mut key = [0_u8; 17];
    if let Some(bytes) = uuid_bytes(text) {
        key[1..].copy_from_slice(&bytes);
        return key;
    }
    key[0] = 1;
    key[1..].copy_from_slice(&Sha256::digest(text.as_bytes())[..16]);
    key
}

/// The 16 bytes of a uuid written as Claude Code writes them: 8-4-4-4-12 lowercase hex digits.
/// Any other spelling (capitals, no dashes) is another text and is hashed.
fn uuid_bytes(text: &str) -> Option<[u8; 16]> {
    let raw = text.as_bytes();
    if raw.len() != 36 {
        return None;
    }
    let mut bytes = [0_u8; 16];
    let mut nibbles = 0;
    for (position, &character) in raw.iter().enumerate() {
        if matches!(position, 8 | 13 | 18 | 23) {
            if character != b'-' {
                return None;
            }
            continue;
        }
        let value = match character {
            b'0'..=b'9' => character - b'0',
            b'a'..=b'f' => character - b'a' + 10,
            _ => return None,
        };
        let byte = bytes.get_mut(nibbles / 2)?;
        *byte = (*byte << 4) | value;
        nibbles += 1;
    }
    Some(bytes)
}

/// The value of an entry id of exactly 8 lowercase hex digits, as `format!("{:08x}")` writes it.
fn short_value(id: &str) -> Option<u32> {
    let hex = id
        .bytes()
        .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte));
    (id.len() == 8 && hex)
        .then(|| u32::from_str_radix(id, 16).ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_text_is_the_same_number_and_no_other_text_is() {
        let mut uuids = Uuids::default();
        let texts = [
            "00000000-0000-4000-8000-000000000001",
            "00000000-0000-4000-8000-000000000002",
            "00000000-0000-4000-8000-00000000000A",
            "00000000000040008000000000000001",
            "u1",
            "",
            "msg_01",
        ];
        let syms: Vec<Sym> = texts.iter().map(|text| uuids.intern(text)).collect();
        for (index, text) in texts.iter().enumerate() {
            assert_eq!(uuids.intern(text), syms[index], "{text}");
            for (other, sym) in syms.iter().enumerate() {
                assert_eq!(other == index, *sym == syms[index], "{text}");
            }
        }
        assert_eq!(uuids.len(), texts.len());
        // A hashed text never takes a uuid's key, whatever its hash.
        let hashed = key_of("u1");
        let mut posing = [0_u8; 16];
        posing.copy_from_slice(&hashed[1..]);
        let spelled: String = posing.iter().map(|byte| format!("{byte:02x}")).collect();
        let posing_uuid = format!(
            "{}-{}-{}-{}-{}",
            &spelled[..8],
            &spelled[8..12],
            &spelled[12..16],
            &spelled[16..20],
            &spelled[20..]
        );
        assert_ne!(uuids.intern(&posing_uuid), syms[4]);
    }

    #[test]
    fn tails_keep_any_id_and_parents_keep_their_text_until_they_have_one() {
        let mut uuids = Uuids::default();
        let parent = uuids.intern_parent("gone");
        assert_eq!(uuids.parent_text(parent), "gone");
        assert_eq!(uuids.tail(parent), None);
        uuids.set_tail(parent, "0000abcd");
        assert_eq!(uuids.tail(parent).as_deref(), Some("0000abcd"));
        assert!(uuids.has_tail(parent));
        assert_eq!(uuids.parent_text(parent), "");
        let other = uuids.intern("x");
        for id in ["0123456789ab", "ABCDEF01", "00000001"] {
            uuids.set_tail(other, id);
            assert_eq!(uuids.tail(other).as_deref(), Some(id));
        }
        let known = uuids.intern_parent("x");
        assert_eq!(uuids.parent_text(known), "");
    }
}
