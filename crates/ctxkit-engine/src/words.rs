//! Whole-word search of names in a summary: a name counts where letters, digits and `_` do not
//! continue it on either side, as a reader would find it.

use std::collections::HashSet;

/// Whether `text` holds `name` as a whole word (not inside a longer word: letters, digits and `_`
/// around it), as a reader would find it: at any of its places, overlapping ones included.
pub(crate) fn holds_word(text: &str, name: &str) -> bool {
    let Some(first) = name.chars().next() else {
        return false;
    };
    let mut from = 0;
    while let Some(found) = text.get(from..).and_then(|rest| rest.find(name)) {
        let start = from + found;
        if whole_word(text.as_bytes(), start, start + name.len()) {
            return true;
        }
        from = start + first.len_utf8();
    }
    false
}

/// Of `names`, those `text` holds as whole words ([`holds_word`] of each), found in one pass over
/// `text` however many names there are (a summary of 100 KB checked against a thousand names
/// was a fifth of a replay's time).
pub(crate) fn words_held<'a>(text: &str, names: &[&'a str]) -> HashSet<&'a str> {
    let names: Vec<&str> = names
        .iter()
        .copied()
        .filter(|name| !name.is_empty())
        .collect();
    let Ok(automaton) = aho_corasick::AhoCorasick::new(&names) else {
        return names
            .into_iter()
            .filter(|name| holds_word(text, name))
            .collect();
    };
    let mut held = HashSet::new();
    for found in automaton.find_overlapping_iter(text) {
        let name = names[found.pattern().as_usize()];
        if whole_word(text.as_bytes(), found.start(), found.end()) {
            held.insert(name);
        }
    }
    held
}

/// Whether the bytes `start..end` of `bytes` are not inside a longer word.
fn whole_word(bytes: &[u8], start: usize, end: usize) -> bool {
    let is_word_byte = |byte: &u8| byte.is_ascii_alphanumeric() || *byte == b'_';
    let before = start.checked_sub(1).and_then(|index| bytes.get(index));
    !before.is_some_and(is_word_byte) && !bytes.get(end).is_some_and(is_word_byte)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_word_is_found_at_any_of_its_places() {
        assert!(holds_word("see `src/a.rs` here", "src/a.rs"));
        assert!(!holds_word("my_src/a.rs", "src/a.rs"));
        assert!(!holds_word("parse_args", "parse"));
        // The first place is inside a word, an overlapping later one is not.
        assert!(holds_word("xa-a-a ", "a-a"));
        assert!(holds_word("é-é", "é"));
        assert!(!holds_word("anything", ""));
        let names = ["a-a", "parse", "src/a.rs", "", "é"];
        let held = words_held("xa-a-a parse_args é", &names);
        assert_eq!(held, HashSet::from(["a-a", "é"]));
    }

    proptest! {
        /// The one pass finds what each name's own search finds, whatever the text.
        #[test]
        fn one_pass_finds_what_each_search_finds(
            text in "[ab_\\-. é]{0,40}",
            names in proptest::collection::vec("[ab_\\-.é]{0,4}", 0..12),
        ) {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let one_by_one: HashSet<&str> =
                names.iter().copied().filter(|name| holds_word(&text, name)).collect();
            prop_assert_eq!(words_held(&text, &names), one_by_one);
        }
    }
}
