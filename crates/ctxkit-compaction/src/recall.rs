//! Measuring how many exact identifiers (paths, function names, error lines) of a summarized span a
//! summary keeps, against plain truncation of the same span to the same length.

use crate::extract::identifiers;
use crate::tokens::utf16_len;

/// Identifier recall of a summary and of two truncation baselines of equal length.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecallReport {
    /// Distinct identifiers in the span.
    pub identifiers: usize,
    /// Fraction kept verbatim by the summary.
    pub summary: f64,
    /// Fraction kept by the span's first `len(summary)` units.
    pub head_truncation: f64,
    /// Fraction kept by the span's last `len(summary)` units.
    pub tail_truncation: f64,
}

fn units_prefix(text: &str, units: usize) -> &str {
    let mut count = 0;
    for (offset, character) in text.char_indices() {
        count += character.len_utf16();
        if count > units {
            return &text[..offset];
        }
    }
    text
}

fn units_suffix(text: &str, units: usize) -> &str {
    let total = utf16_len(text);
    let skip = total.saturating_sub(units);
    let mut count = 0;
    for (offset, character) in text.char_indices() {
        if count >= skip {
            return &text[offset..];
        }
        count += character.len_utf16();
    }
    ""
}

/// Compares `summary` with truncations of `span` (the serialized conversation it summarizes).
pub fn identifier_recall(span: &str, summary: &str) -> RecallReport {
    let wanted = identifiers(span);
    let length = utf16_len(summary);
    let fraction = |text: &str| {
        if wanted.is_empty() {
            return 1.0;
        }
        wanted
            .iter()
            .filter(|identifier| text.contains(identifier.as_str()))
            .count() as f64
            / wanted.len() as f64
    };
    RecallReport {
        identifiers: wanted.len(),
        summary: fraction(summary),
        head_truncation: fraction(units_prefix(span, length)),
        tail_truncation: fraction(units_suffix(span, length)),
    }
}
