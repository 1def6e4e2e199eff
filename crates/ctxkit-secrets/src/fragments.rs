//! Pieces of a known secret: a key split by a line break (an `edit` that put one after its public
//! prefix), cut by a column limit or quoted in part is still the key, and no whole-key match finds
//! it. Every run of at least [`FRAGMENT_BYTES`] characters of a secret is found in one pass (an
//! Aho-Corasick automaton over the secrets' windows of that length) and replaced, with the run's
//! neighbours that continue it, by `<redacted>`.

use std::ops::Range;

use aho_corasick::{AhoCorasick, AhoCorasickKind};

/// The shortest piece of a secret taken for the secret. Shorter than any provider key's secret
/// part, longer than the public prefixes keys share (`sk-ant-api03-`, 13), so a text naming a
/// key's kind is left alone.
pub(crate) const FRAGMENT_BYTES: usize = 16;

/// The windows of [`FRAGMENT_BYTES`] of a set of secrets, and the automaton that finds them: built
/// once for a set, then run over any number of texts (`grep` redacts every file it searches).
#[derive(Debug, Clone, Default)]
pub(crate) struct Fragments {
    windows: Vec<Vec<u8>>,
    /// `None` when there is no window, or the automaton could not be built (never for a few
    /// hundred patterns of 16 bytes; a slower scan then, never no scan).
    automaton: Option<AhoCorasick>,
}

impl Fragments {
    /// The fragments of `secrets` and of their base64 and hex spellings. A secret of
    /// [`FRAGMENT_BYTES`] or less is matched whole only (by the caller), but for its spellings
    /// longer than that; a secret with a non-ASCII character likewise (its windows could cut a
    /// character in two).
    pub(crate) fn new(secrets: &[&str]) -> Self {
        // Each secret, and its base64 and hex spellings (`encoded`), whose pieces are as much the
        // secret as its own.
        let spellings: Vec<String> = secrets
            .iter()
            .filter(|secret| secret.is_ascii())
            .flat_map(|secret| {
                std::iter::once((*secret).to_owned()).chain(crate::encoded::encoded_forms(secret))
            })
            .collect();
        Self::of_spellings(&spellings)
    }

    /// The fragments of `texts` as they are, without their encoded spellings: for the skeletons
    /// of `spelled_out`, whose hex spelling is no spelling of the key (QA: the hex of a key's
    /// `12345678` is `3132333435363738`, which `seq 1 40` spells, and its whole output was
    /// withheld).
    pub(crate) fn plain(texts: &[&str]) -> Self {
        let spellings: Vec<String> = texts
            .iter()
            .filter(|text| text.is_ascii())
            .map(|text| (*text).to_owned())
            .collect();
        Self::of_spellings(&spellings)
    }

    fn of_spellings(spellings: &[String]) -> Self {
        let mut windows: Vec<Vec<u8>> = spellings
            .iter()
            .filter(|spelling| spelling.len() > FRAGMENT_BYTES)
            .flat_map(|spelling| spelling.as_bytes().windows(FRAGMENT_BYTES))
            .map(<[u8]>::to_vec)
            .collect();
        windows.sort_unstable();
        windows.dedup();
        let automaton = (!windows.is_empty())
            .then(|| {
                // A window starts at every character of a key, so a prefilter on first bytes
                // only slows the search down.
                AhoCorasick::builder()
                    .kind(Some(AhoCorasickKind::DFA))
                    .prefilter(false)
                    .build(&windows)
                    .or_else(|_| AhoCorasick::new(&windows))
                    .ok()
            })
            .flatten();
        Self { windows, automaton }
    }

    /// Whether `text` holds a run of [`FRAGMENT_BYTES`] characters of one of the secrets.
    pub(crate) fn finds(&self, text: &str) -> bool {
        if self.windows.is_empty() || text.len() < FRAGMENT_BYTES {
            return false;
        }
        match &self.automaton {
            Some(automaton) => automaton.is_match(text),
            None => text.as_bytes().windows(FRAGMENT_BYTES).any(|piece| {
                self.windows
                    .binary_search_by(|window| window.as_slice().cmp(piece))
                    .is_ok()
            }),
        }
    }

    /// `text` with every run of [`FRAGMENT_BYTES`] or more characters of one of the secrets
    /// replaced by `<redacted>`.
    pub(crate) fn redact(&self, text: &str) -> String {
        if self.windows.is_empty() || text.len() < FRAGMENT_BYTES {
            return text.to_owned();
        }
        let ranges = match &self.automaton {
            Some(automaton) => merged(every_window(automaton, text)),
            None => merged(
                (0..=text.len() - FRAGMENT_BYTES)
                    .filter(|&start| {
                        self.windows
                            .binary_search_by(|window| {
                                window
                                    .as_slice()
                                    .cmp(&text.as_bytes()[start..start + FRAGMENT_BYTES])
                            })
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
}

/// `text` with every run of [`FRAGMENT_BYTES`] or more characters of one of `secrets` replaced by
/// `<redacted>` ([`Fragments`], built for this text alone).
#[cfg(test)]
pub(crate) fn redact_fragments(text: &str, secrets: &[&str]) -> String {
    Fragments::new(secrets).redact(text)
}

/// Every place a window stands in `text`, overlapping ones too, in order of their start. Each is
/// the first match from just past the start of the one before: unlike an overlapping search,
/// `find` skips text holding no window's first bytes at memchr speed.
fn every_window(automaton: &AhoCorasick, text: &str) -> Vec<Range<usize>> {
    let mut found = Vec::new();
    let mut from = 0;
    while from < text.len() {
        let input = aho_corasick::Input::new(text).span(from..text.len());
        let Some(window) = automaton.find(input) else {
            break;
        };
        from = window.start() + 1;
        found.push(window.range());
    }
    found
}

/// Ranges in order of their start, overlapping or touching ones joined.
fn merged(ranges: impl IntoIterator<Item = Range<usize>>) -> Vec<Range<usize>> {
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

    /// QA r99: the key base64-encoded in a Kubernetes Secret, as docker's `auth` of `user:<key>`,
    /// and in hex reached the session and the provider.
    #[test]
    fn a_key_in_base64_or_hex_is_redacted() {
        use base64::Engine as _;
        use base64::engine::general_purpose::STANDARD;
        let secret = STANDARD.encode(KEY);
        let text = format!("  OPENAI_API_KEY: {secret}\n");
        let redacted = redact_fragments(&text, &[KEY]);
        assert!(redacted.contains("<redacted>"), "{redacted}");
        assert!(redacted.len() < text.len() - 40, "{redacted}");
        let docker = STANDARD.encode(format!("user:{KEY}"));
        let redacted = redact_fragments(&format!("{{\"auth\":\"{docker}\"}}"), &[KEY]);
        assert!(redacted.starts_with("{\"auth\":\"dXNlcjp"), "{redacted}");
        assert!(
            redacted.contains("<redacted>") && redacted.len() < 40,
            "{redacted}"
        );
        let hex: String = KEY.bytes().map(|byte| format!("{byte:02x}")).collect();
        assert_eq!(redact_fragments(&hex, &[KEY]), "<redacted>");
    }

    #[test]
    fn overlapping_and_repeated_pieces_are_one_run_each() {
        let piece = &KEY[13..40];
        let text = format!("{piece}{piece} x {piece}");
        assert_eq!(redact_fragments(&text, &[KEY]), "<redacted> x <redacted>");
    }
}
