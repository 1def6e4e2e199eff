//! ctxkit's token estimator: a single pass over the text that mimics how cl100k-style BPE
//! tokenizers split it (words, digit groups, punctuation runs, whitespace pieces, CJK characters,
//! other scripts, emoji) and weighs each piece with weights fitted on `testdata/tokens`.
//!
//! It needs no vocabulary, allocates nothing, and stays within 10% of cl100k on English prose,
//! code and logs, and CJK-heavy text (see `docs/benchmarks.md`, "Tokens").

/// The features the estimator counts; weights are per feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub(crate) enum Feature {
    /// A run of ASCII letters (a word or identifier part).
    Word,
    /// Letters of a word beyond `LONG_WORD`: long and rare words split into several tokens.
    LongWordLetter,
    /// A lower-to-upper case change inside a word (`camelCase`, base64).
    CaseChange,
    /// A group of up to three digits (cl100k and o200k split numbers that way).
    DigitGroup,
    /// A run of ASCII punctuation.
    PunctRun,
    /// Punctuation characters of a run beyond its first.
    PunctExtra,
    /// One punctuation character glued to the word after it (`.method`, `_name`, `(self`).
    PunctAttached,
    /// A whitespace piece ending in a line break.
    NewlinePiece,
    /// A piece of spaces or tabs that no following word or symbol absorbs (indentation).
    SpacePiece,
    /// A CJK ideograph that cl100k encodes as one token on its own.
    Han1,
    /// A CJK ideograph that cl100k encodes as two tokens on its own.
    Han2,
    /// A CJK ideograph that cl100k encodes as three or more tokens on its own.
    Han3,
    /// Tokens of hiragana and katakana characters on their own.
    KanaCost,
    /// Tokens of Hangul syllables and jamo on their own.
    HangulCost,
    /// Tokens of CJK punctuation and full-width forms (`。`, `、`, `「`, `（`) on their own.
    CjkPunctCost,
    /// An accented Latin letter (two UTF-8 bytes).
    LatinAccented,
    /// Another letter encoded in two UTF-8 bytes (Greek, Cyrillic, Hebrew, Arabic).
    Letter2,
    /// Another letter encoded in three UTF-8 bytes (Indic, Thai, …).
    Letter3,
    /// A non-letter character encoded in two UTF-8 bytes (`°`, `±`, `×`).
    Symbol2,
    /// A non-letter character encoded in three UTF-8 bytes (`—`, `→`, `…`, box drawing).
    Symbol3,
    /// A character encoded in four UTF-8 bytes (emoji, rare ideographs).
    Symbol4,
    /// Zero-width joiners, variation selectors and combining marks.
    Joiner,
}

/// Number of features.
pub(crate) const FEATURES: usize = Feature::Joiner as usize + 1;

/// Feature counts of one text.
pub(crate) type FeatureCounts = [u32; FEATURES];

/// Words up to this many letters are counted as one token.
const LONG_WORD: u32 = 6;

/// Fitted weights (tokens per feature), in `Feature` order: least squares over the lines of
/// `testdata/tokens` against cl100k, relative error weighted; sparse features hand-set.
const WEIGHTS: [f64; FEATURES] = [
    1.028, // Word
    0.010, // LongWordLetter
    1.198, // CaseChange
    1.000, // DigitGroup
    1.009, // PunctRun
    0.045, // PunctExtra
    0.186, // PunctAttached
    1.053, // NewlinePiece
    0.926, // SpacePiece
    0.755, // Han1
    2.342, // Han2
    3.742, // Han3
    0.858, // KanaCost
    0.870, // HangulCost
    0.930, // CjkPunctCost
    1.278, // LatinAccented
    0.654, // Letter2
    2.000, // Letter3
    2.000, // Symbol2
    0.442, // Symbol3
    2.355, // Symbol4
    1.500, // Joiner
];

/// ASCII character classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Lower,
    Upper,
    Digit,
    /// Space, tab, vertical tab, form feed.
    Space,
    /// `\r` or `\n`.
    Newline,
    Punct,
}

const fn ascii_class(byte: u8) -> Class {
    match byte {
        b'a'..=b'z' => Class::Lower,
        b'A'..=b'Z' => Class::Upper,
        b'0'..=b'9' => Class::Digit,
        b' ' | b'\t' | 0x0b | 0x0c => Class::Space,
        b'\r' | b'\n' => Class::Newline,
        _ => Class::Punct,
    }
}

const CLASSES: [Class; 128] = {
    let mut table = [Class::Punct; 128];
    let mut byte = 0;
    while byte < 128 {
        table[byte] = ascii_class(byte as u8);
        byte += 1;
    }
    table
};

/// What follows a run, as far as the pre-tokenizer cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    Letter,
    Digit,
    Symbol,
    End,
}

/// Tokens cl100k gives each character of the CJK ranges below on its own, two bits per character
/// (generated from the tokenizer; the test `cjk_cost_table_matches_cl100k` keeps it in step).
static CJK_COSTS: &[u8; 8168] = include_bytes!("cjk_cl100k.bin");

/// Ranges of `CJK_COSTS`, in table order: CJK punctuation and kana, unified ideographs, Hangul
/// syllables, full-width forms.
pub(crate) const CJK_RANGES: [(u32, u32); 4] = [
    (0x3000, 0x30FF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xFF00, 0xFFEF),
];

/// The table cost of `code`, or `None` outside the table's ranges.
fn cjk_cost(code: u32) -> Option<u32> {
    let mut offset = 0;
    for (low, high) in CJK_RANGES {
        if (low..=high).contains(&code) {
            let index = (offset + code - low) as usize;
            let byte = CJK_COSTS.get(index / 4)?;
            return Some(u32::from((byte >> ((index % 4) * 2)) & 0b11));
        }
        offset += high - low + 1;
    }
    None
}

/// How a non-ASCII character is counted: the feature, how many of it, and what the pre-tokenizer
/// sees it as.
fn classify_non_ascii(c: char) -> (Feature, u32, Next) {
    let code = u32::from(c);
    match code {
        0x4E00..=0x9FFF => {
            let feature = match cjk_cost(code) {
                Some(1) => Feature::Han1,
                Some(2) => Feature::Han2,
                Some(_) | None => Feature::Han3,
            };
            (feature, 1, Next::Letter)
        }
        0x3400..=0x4DBF | 0xF900..=0xFAFF | 0x20000..=0x3FFFF => (Feature::Han3, 1, Next::Letter),
        0x3040..=0x30FF => (Feature::KanaCost, cjk_cost(code).unwrap_or(2), Next::Letter),
        0x31F0..=0x31FF | 0xFF66..=0xFF9F => (Feature::KanaCost, 2, Next::Letter),
        0xAC00..=0xD7AF => (
            Feature::HangulCost,
            cjk_cost(code).unwrap_or(2),
            Next::Letter,
        ),
        0x1100..=0x11FF | 0x3130..=0x318F => (Feature::HangulCost, 2, Next::Letter),
        0x3000..=0x303F | 0xFF00..=0xFF65 | 0xFFA0..=0xFFEF => (
            Feature::CjkPunctCost,
            cjk_cost(code).unwrap_or(2),
            Next::Symbol,
        ),
        0x200D | 0xFE00..=0xFE0F | 0x0300..=0x036F | 0x1F3FB..=0x1F3FF | 0xE0020..=0xE007F => {
            (Feature::Joiner, 1, Next::Symbol)
        }
        0x00C0..=0x024F if c.is_alphabetic() => (Feature::LatinAccented, 1, Next::Letter),
        _ => {
            let letter = c.is_alphabetic();
            let feature = match (c.len_utf8(), letter) {
                (2, true) => Feature::Letter2,
                (3, true) => Feature::Letter3,
                (2, false) => Feature::Symbol2,
                (3, false) => Feature::Symbol3,
                _ => Feature::Symbol4,
            };
            (feature, 1, if letter { Next::Letter } else { Next::Symbol })
        }
    }
}

/// Counts the features of `text` in one pass.
pub(crate) fn features(text: &str) -> FeatureCounts {
    let mut counts = [0_u32; FEATURES];
    let bytes = text.as_bytes();
    let mut index = 0;
    // Whether the run that ended just before `index` was spaces, which a punctuation run absorbs.
    let mut after_space = false;
    while index < bytes.len() {
        let byte = bytes[index];
        if byte >= 0x80 {
            let Some(c) = text[index..].chars().next() else {
                break;
            };
            let (feature, amount, _) = classify_non_ascii(c);
            counts[feature as usize] += amount;
            index += c.len_utf8();
            after_space = false;
            continue;
        }
        let start = index;
        match CLASSES[usize::from(byte)] {
            Class::Lower | Class::Upper => {
                let mut letters = 0_u32;
                let mut previous_lower = false;
                while index < bytes.len() {
                    let class = CLASSES[usize::from(bytes[index] & 0x7f)];
                    if bytes[index] >= 0x80 {
                        break;
                    }
                    match class {
                        Class::Lower => previous_lower = true,
                        Class::Upper => {
                            if previous_lower {
                                counts[Feature::CaseChange as usize] += 1;
                            }
                            previous_lower = false;
                        }
                        Class::Digit | Class::Space | Class::Newline | Class::Punct => break,
                    }
                    letters += 1;
                    index += 1;
                }
                counts[Feature::Word as usize] += 1;
                counts[Feature::LongWordLetter as usize] += letters.saturating_sub(LONG_WORD);
                after_space = false;
            }
            Class::Digit => {
                while index < bytes.len() && bytes[index].is_ascii_digit() {
                    index += 1;
                }
                let digits = (index - start) as u32;
                counts[Feature::DigitGroup as usize] += digits.div_ceil(3);
                after_space = false;
            }
            Class::Punct => {
                while index < bytes.len()
                    && bytes[index] < 0x80
                    && CLASSES[usize::from(bytes[index])] == Class::Punct
                {
                    index += 1;
                }
                let length = (index - start) as u32;
                let next = next_kind(text, index);
                if length == 1 && !after_space && next == Next::Letter {
                    counts[Feature::PunctAttached as usize] += 1;
                } else {
                    counts[Feature::PunctRun as usize] += 1;
                    counts[Feature::PunctExtra as usize] += length - 1;
                }
                // `[\r\n]*` after punctuation belongs to the punctuation piece.
                while index < bytes.len() && matches!(bytes[index], b'\r' | b'\n') {
                    index += 1;
                }
                after_space = false;
            }
            Class::Space | Class::Newline => {
                let mut last_newline = None;
                while index < bytes.len() && bytes[index] < 0x80 {
                    match CLASSES[usize::from(bytes[index])] {
                        Class::Newline => last_newline = Some(index),
                        Class::Space => {}
                        Class::Lower | Class::Upper | Class::Digit | Class::Punct => break,
                    }
                    index += 1;
                }
                let horizontal = match last_newline {
                    Some(position) => {
                        counts[Feature::NewlinePiece as usize] += 1;
                        (index - position - 1) as u32
                    }
                    None => (index - start) as u32,
                };
                let pieces = match next_kind(text, index) {
                    Next::Letter | Next::Symbol => u32::from(horizontal > 1),
                    Next::Digit => horizontal.min(2),
                    Next::End => u32::from(horizontal > 0),
                };
                counts[Feature::SpacePiece as usize] += pieces;
                after_space = horizontal > 0;
            }
        }
    }
    counts
}

fn next_kind(text: &str, index: usize) -> Next {
    let Some(&byte) = text.as_bytes().get(index) else {
        return Next::End;
    };
    if byte < 0x80 {
        return match CLASSES[usize::from(byte)] {
            Class::Lower | Class::Upper => Next::Letter,
            Class::Digit => Next::Digit,
            Class::Space | Class::Newline | Class::Punct => Next::Symbol,
        };
    }
    match text[index..].chars().next() {
        Some(c) => classify_non_ascii(c).2,
        None => Next::End,
    }
}

/// Tokens for feature counts under the fitted weights.
pub(crate) fn weigh(counts: &FeatureCounts) -> f64 {
    counts
        .iter()
        .zip(WEIGHTS.iter())
        .map(|(&count, &weight)| f64::from(count) * weight)
        .sum()
}

/// ctxkit's estimate of the cl100k token count of `text` (no tokenizer involved).
pub fn estimate_text_tokens(text: &str) -> u64 {
    let tokens = weigh(&features(text)).round();
    // Non-negative and far below 2^53 for any text that fits in memory.
    tokens as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::Encoding;
    use std::collections::BTreeMap;
    use std::path::Path;

    fn count(text: &str, feature: Feature) -> u32 {
        features(text)[feature as usize]
    }

    #[test]
    fn splits_like_the_pre_tokenizer() {
        assert_eq!(count("hello world", Feature::Word), 2);
        assert_eq!(count("hello world", Feature::SpacePiece), 0);
        assert_eq!(count("estimateContextTokens", Feature::CaseChange), 2);
        assert_eq!(count("1234567", Feature::DigitGroup), 3);
        assert_eq!(count("x = 42", Feature::SpacePiece), 1);
        assert_eq!(count("self.items", Feature::PunctAttached), 1);
        assert_eq!(count("a => b", Feature::PunctRun), 1);
        assert_eq!(count("a => b", Feature::PunctExtra), 1);
        assert_eq!(count("{\n    x", Feature::NewlinePiece), 0);
        assert_eq!(count("{\n    x", Feature::SpacePiece), 1);
        assert_eq!(count("a\n\nb", Feature::NewlinePiece), 1);
        assert_eq!(count("trailing  ", Feature::SpacePiece), 1);
        assert_eq!(
            count("中文", Feature::Han1) + count("中文", Feature::Han2),
            2
        );
        assert!(count("カタカナ", Feature::KanaCost) >= 4);
        assert!(count("한국어", Feature::HangulCost) >= 3);
        assert_eq!(count("Привет", Feature::Letter2), 6);
        assert_eq!(count("café", Feature::LatinAccented), 1);
        assert_eq!(count("👍", Feature::Symbol4), 1);
        assert_eq!(count("👩\u{200d}💻", Feature::Joiner), 1);
        assert_eq!(count("→", Feature::Symbol3), 1);
    }

    #[test]
    fn estimates_small_texts() {
        assert_eq!(estimate_text_tokens(""), 0);
        assert_eq!(estimate_text_tokens("hello world"), 2);
        assert_eq!(
            estimate_text_tokens("The quick brown fox jumps over the lazy dog."),
            10
        );
    }

    #[test]
    fn cjk_cost_table_matches_cl100k() {
        let encoding = Encoding::Cl100kBase;
        for (low, high) in CJK_RANGES {
            for code in low..=high {
                let Some(c) = char::from_u32(code) else {
                    continue;
                };
                let expected = encoding.count(c.encode_utf8(&mut [0; 4])).clamp(1, 3);
                assert_eq!(
                    cjk_cost(code).map(u64::from),
                    Some(expected),
                    "U+{code:04X}; regenerate `cjk_cl100k.bin`"
                );
            }
        }
    }

    /// Data-driven accuracy check: mean absolute relative error against cl100k over every sample
    /// of each category of `testdata/tokens` stays under 10%.
    #[test]
    fn accuracy_against_cl100k_per_category() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/tokens");
        let mut errors: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
        for category in std::fs::read_dir(&root).unwrap() {
            let category = category.unwrap().path();
            let name = category.file_name().unwrap().to_string_lossy().into_owned();
            for sample in std::fs::read_dir(&category).unwrap() {
                let text = std::fs::read_to_string(sample.unwrap().path()).unwrap();
                let exact = Encoding::Cl100kBase.count(&text) as f64;
                let ours = estimate_text_tokens(&text) as f64;
                let pi = crate::estimate::utf16_len(&text).div_ceil(4) as f64;
                errors
                    .entry(name.clone())
                    .or_default()
                    .push(((ours - exact).abs() / exact, (pi - exact).abs() / exact));
            }
        }
        let expected = ["cjk", "code", "logs", "mixed", "prose"];
        assert_eq!(
            errors.keys().map(String::as_str).collect::<Vec<_>>(),
            expected
        );
        for (category, samples) in &errors {
            assert!(samples.len() >= 6, "{category}: too few samples");
            let count = samples.len() as f64;
            let ours = samples.iter().map(|(ours, _)| ours).sum::<f64>() / count;
            let pi = samples.iter().map(|(_, pi)| pi).sum::<f64>() / count;
            assert!(ours < 0.10, "{category}: ctxkit MAE {ours:.3} (pi {pi:.3})");
            assert!(
                ours < pi,
                "{category}: ctxkit MAE {ours:.3} not below pi {pi:.3}"
            );
        }
    }
}
