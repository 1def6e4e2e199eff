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

/// Where `recall`'s query word `word` (lower case) is found in `lowered` (a text in lower case),
/// by byte offset. A word of letters only is found at the start of a word, so its forms count
/// (`port` finds `ports` and `porting`, not `report` or `import`); any other word (an identifier,
/// a number, a path: `secret_1_2`, `8431`, `worker-3`) only whole, not inside a longer name
/// (`secret_1_20`). QA r101: an identifier's query returned its neighbours.
pub(crate) fn query_word_places(lowered: &str, word: &str) -> Vec<usize> {
    let Some(first) = word.chars().next() else {
        return Vec::new();
    };
    let forms_count = word.chars().all(char::is_alphabetic);
    let bytes = lowered.as_bytes();
    let mut places = Vec::new();
    let mut from = 0;
    while let Some(found) = lowered.get(from..).and_then(|rest| rest.find(word)) {
        let start = from + found;
        let found = if forms_count {
            // Only the start is checked: the byte before the word.
            !starts_inside_a_word(bytes, start)
        } else {
            whole_word(bytes, start, start + word.len())
        };
        if found {
            places.push(start);
        }
        from = start + first.len_utf8();
    }
    places
}

/// Whether the bytes `start..end` of `bytes` are not inside a longer word.
fn whole_word(bytes: &[u8], start: usize, end: usize) -> bool {
    !starts_inside_a_word(bytes, start) && !bytes.get(end).is_some_and(is_word_byte)
}

/// Whether a word byte comes just before `start`.
fn starts_inside_a_word(bytes: &[u8], start: usize) -> bool {
    let before = start.checked_sub(1).and_then(|index| bytes.get(index));
    before.is_some_and(is_word_byte)
}

/// Letters, digits and `_` (ASCII): what continues a word.
fn is_word_byte(byte: &u8) -> bool {
    byte.is_ascii_alphanumeric() || *byte == b'_'
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

    #[test]
    fn a_query_word_of_letters_finds_its_forms_and_any_other_only_itself() {
        let line = "secret_1_2 = a; secret_1_20 = b; reported ports, port";
        assert_eq!(query_word_places(line, "secret_1_2"), vec![0]);
        assert_eq!(query_word_places(line, "secret").len(), 2);
        assert_eq!(query_word_places(line, "port"), vec![42, 49]);
        assert_eq!(query_word_places("worker-3 worker-30", "worker-3"), vec![0]);
        assert_eq!(query_word_places("port 84310 8431", "8431"), vec![11]);
        assert!(query_word_places("anything", "").is_empty());
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
