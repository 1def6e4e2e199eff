//! A path asked for in one Unicode normalization and stored in the other: macOS writes file names
//! decomposed (NFD: `Cafe\u{301}`), a git checkout or an unpacked archive may keep them so, and a
//! model writes them composed (NFC: `Café`). Both look the same, and Pi 1.6.0's tools try the
//! other form when the first is not there; so does every path the jail opens.

use std::borrow::Cow;
use std::path::Path;

use unicode_normalization::UnicodeNormalization as _;

use crate::{Jail, beneath};

impl Jail {
    /// `relative` (beneath the root) as it is stored: itself when something is there or its name
    /// is plain ASCII; else its NFC, then its NFD spelling, the first of them that names something
    /// beneath the root (looked up beneath the root, as every open is: a spelling that leads out
    /// of it names nothing). Whatever is then opened by the spelling found is opened and judged as
    /// the first spelling would have been, so the retry gains no reach.
    pub(crate) fn stored_spelling<'a>(&self, relative: &'a Path) -> Cow<'a, Path> {
        let Some(text) = relative.to_str() else {
            return Cow::Borrowed(relative);
        };
        if text.is_ascii() || self.names_something(relative) {
            return Cow::Borrowed(relative);
        }
        let composed: String = text.nfc().collect();
        let decomposed: String = text.nfd().collect();
        [composed, decomposed]
            .into_iter()
            .filter(|spelling| spelling != text)
            .find(|spelling| self.names_something(Path::new(spelling)))
            .map_or(Cow::Borrowed(relative), |spelling| {
                Cow::Owned(spelling.into())
            })
    }

    /// Whether `relative` names anything beneath the root (a symlink counts as itself).
    fn names_something(&self, relative: &Path) -> bool {
        self.dir.symlink_metadata(beneath(relative)).is_ok()
    }
}
