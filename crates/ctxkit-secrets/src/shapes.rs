//! Keys recognised by their shape, whoever's they are: provider API keys (`sk-…`, `AIza…`), GitHub
//! and Slack tokens, AWS access key ids, bearer values and private key blocks. Text meant to be
//! kept apart from its source or shown to others (a summary, a shared page) leaves them out; tool
//! output does not (the model edits files that hold such strings, and an edit must match them).

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// The shapes, one alternation.
const SHAPES: &[&str] = &[
    r"\bsk-[A-Za-z0-9_\-]{16,}",
    r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}",
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",
    r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",
    r"\bAKIA[0-9A-Z]{16}\b",
    r"\bAIza[0-9A-Za-z_\-]{35}",
    r"(?i)\bbearer\s+[A-Za-z0-9._\-]{20,}",
    // To its END line, or to the end of the text (a clipped block).
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\z)",
];

/// Compiled once; `None` only if a constant above were not a valid pattern (a unit test holds).
static SHAPE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(&SHAPES.join("|")).ok());

/// `text` with every key of a known shape replaced by `<redacted>`.
pub fn redact_key_shapes(text: &str) -> Cow<'_, str> {
    match SHAPE.as_ref() {
        Some(shape) => shape.replace_all(text, "<redacted>"),
        None => Cow::Borrowed(text),
    }
}

/// [`crate::redact`] with no known secret, then [`redact_key_shapes`]: for text kept apart from its
/// source (a summary, a verbatim checkpoint) or shown to others.
pub fn redact_for_keeping(text: &str) -> String {
    redact_key_shapes(&crate::redact(text, std::iter::empty())).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shapes_compile_and_each_is_redacted() {
        assert!(SHAPE.is_some());
        let text = "sk-ant-api03-abcdefghijklmnopqrstuv ghp_abcdefghijklmnopqrstuvwxyz1234 \
                    AKIAABCDEFGHIJKLMNOP xoxb-1234567890-abcdef \
                    -----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- tail";
        let redacted = redact_key_shapes(text);
        for gone in ["sk-ant", "ghp_", "AKIAABCD", "xoxb-", "MIIE"] {
            assert!(!redacted.contains(gone), "{gone}: {redacted}");
        }
        assert!(redacted.ends_with(" tail"), "{redacted}");
    }

    #[test]
    fn ordinary_text_is_left_as_it_is() {
        let text = "the sk-learn docs, task-1234 and skeleton keys";
        assert!(matches!(redact_key_shapes(text), Cow::Borrowed(_)));
        assert_eq!(
            redact_for_keeping("Authorization: Bearer abcDEF123456789xyz0"),
            "Authorization: Bearer <redacted>"
        );
    }
}
