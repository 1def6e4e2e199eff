//! Pieces of a known secret: a key split by a line break (an `edit` that put one after its public
//! prefix), cut by a column limit or quoted in part is still the key, and no whole-key match finds
//! it. Every run of at least [`FRAGMENT_BYTES`] characters of a secret is found in one pass (an
//! Aho-Corasick automaton over the secrets' windows of that length) and replaced, with the run's
//! neighbours that continue it, by `<redacted>`.

use std::ops::Range;

use aho_corasick::AhoCorasick;

/// The shortest piece of a secret taken for the secret. Shorter than any provider key's secret
/// part, longer than the public prefixes keys share (`sk-ant-api03-`, 13), so a text naming a
/// key's kind is left alone.
pub(crate) const FRAGMENT_BYTES: usize = 16;

/// `text` with every run of [`FRAGMENT_BYTES`] or more characters of one of `secrets` replaced by
/// `<redacted>`. A secret of that length or less is matched whole only (by the caller); a secret
/// with a non-ASCII character likewise (its windows could cut a character in two).
pub(crate) fn redact_fragments(text: &str, secrets: &[&str]) -> String {
    let mut windows: Vec<&[u8]> = secrets
        .iter()
        .filter(|secret| secret.len() > FRAGMENT_BYTES && secret.is_ascii())
        .flat_map(|secret| secret.as_bytes().windows(FRAGMENT_BYTES))
        .collect();
    windows.sort_unstable();
    windows.dedup();
    if windows.is_empty() || text.len() < FRAGMENT_BYTES {
        return text.to_owned();
    }
    let ranges = match AhoCorasick::new(&windows) {
        Ok(automaton) => merged(
            automaton
                .find_overlapping_iter(text)
                .map(|found| found.range()),
        ),
        // Never for a few hundred patterns of 16 bytes; a slower scan then, never no scan.
        Err(_) => merged(
            (0..=text.len() - FRAGMENT_BYTES)
                .filter(|&start| {
                    windows
                        .binary_search(&&text.as_bytes()[start..start + FRAGMENT_BYTES])
                        .is_ok()
                })
                .map(|start| start..start + FRAGMENT_BYTES),
        ),
    };
    let mut redacted = String::with_capacity(text.len());
    let mut kept = 0;
    for range in ranges {
        // A window is ASCII, so its ends are character boundaries.
        redacted.push_str(&text[kept..range.start]);
        redacted.push_str("<redacted>");
        kept = range.end;
    }
    redacted.push_str(&text[kept..]);
    redacted
}

/// Ranges in order of their start, overlapping or touching ones joined.
fn merged(ranges: impl Iterator<Item = Range<usize>>) -> Vec<Range<usize>> {
    let mut joined: Vec<Range<usize>> = Vec::new();
    for range in ranges {
        match joined.last_mut() {
            Some(last) if range.start <= last.end => last.end = last.end.max(range.end),
            _ => joined.push(range),
        }
    }
    joined
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-ant-api03-VerySecretAnthropicKey0123456789";

    #[test]
    fn a_key_split_after_its_prefix_is_redacted_where_it_stands() {
        let text = format!("ANTHROPIC_API_KEY=sk-ant-\n{}\nNEXT=1", &KEY[7..]);
        assert_eq!(
            redact_fragments(&text, &[KEY]),
            "ANTHROPIC_API_KEY=sk-ant-\n<redacted>\nNEXT=1"
        );
        let quoted = format!("the key ends in {} and more", &KEY[KEY.len() - 20..]);
        assert_eq!(
            redact_fragments(&quoted, &[KEY]),
            "the key ends in <redacted> and more"
        );
    }

    #[test]
    fn short_pieces_prefixes_and_short_secrets_are_left_alone() {
        let text = "keys look like sk-ant-api03-… and 0123456789 is a number";
        assert_eq!(redact_fragments(text, &[KEY]), text);
        assert_eq!(
            redact_fragments("password hunter2hunter2", &["hunter2hunter2"]),
            "password hunter2hunter2"
        );
    }

    #[test]
    fn overlapping_and_repeated_pieces_are_one_run_each() {
        let piece = &KEY[13..40];
        let text = format!("{piece}{piece} x {piece}");
        assert_eq!(redact_fragments(&text, &[KEY]), "<redacted> x <redacted>");
    }
}
