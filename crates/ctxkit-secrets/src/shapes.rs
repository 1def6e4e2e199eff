//! Keys recognised by their shape, whoever's they are: provider API keys (`sk-…`, `AIza…`), GitHub,
//! Slack, npm, GitLab and Hugging Face tokens, Stripe keys, AWS access key ids, bearer values and
//! private key blocks. Text meant to be
//! kept apart from its source or shown to others (a summary, a shared page) leaves them out; tool
//! output does not (the model edits files that hold such strings, and an edit must match them).

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// The keys that start a word. A word starts after a word boundary, or right after a JSON escape
/// of a line break or a tab (`first\nsk-…`: text that is JSON, such as a tool's raw output or a
/// call's arguments as written, puts a letter before a key at the start of a line).
const WORD_SHAPES: &[&str] = &[
    r"sk-[A-Za-z0-9_\-]{16,}",
    r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}",
    r"github_pat_[A-Za-z0-9_]{20,}",
    r"xox[abposr]-[A-Za-z0-9\-]{10,}",
    r"AKIA[0-9A-Z]{16}\b",
    r"AIza[0-9A-Za-z_\-]{35}",
    r"(?i:bearer)\s+[A-Za-z0-9._\-]{20,}",
    // Stripe's secret and restricted keys, npm, GitLab and Hugging Face tokens.
    r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}",
    r"npm_[A-Za-z0-9]{36}",
    r"glpat-[A-Za-z0-9_\-]{20,}",
    r"hf_[A-Za-z0-9]{30,}",
];

/// A private key block, to its END line or to the end of the text (a clipped block).
const KEY_BLOCK: &str =
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\z)";

/// Compiled once; `None` only if a constant above were not a valid pattern (a unit test holds).
/// The escape before a key, if any, is group 1, kept when the key is replaced.
static SHAPE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let words = WORD_SHAPES.join("|");
    Regex::new(&format!(r"(?:(\\[bfnrt])|\b)(?:{words})|{KEY_BLOCK}")).ok()
});

/// `text` with every key of a known shape replaced by `<redacted>`.
pub fn redact_key_shapes(text: &str) -> Cow<'_, str> {
    match SHAPE.as_ref() {
        Some(shape) => shape.replace_all(text, |found: &regex::Captures<'_>| {
            let escape = found.get(1).map_or("", |escape| escape.as_str());
            format!("{escape}<redacted>")
        }),
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

    /// Keys of services a repository's `.env` often holds: a summary of a span that printed one
    /// repeated it (the shapes were provider and GitHub/Slack/AWS keys only).
    #[test]
    fn stripe_npm_gitlab_and_hugging_face_keys_are_redacted() {
        let text = "STRIPE_KEY=sk_live_51HabcdefghijklmnopqrstuvWXYZ rk_test_abcdefghijklmnopqrstuvwx \
                    //registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789 \
                    glpat-abcdefghij1234567890 HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEFGH";
        let redacted = redact_key_shapes(text);
        for gone in ["sk_live_", "rk_test_", "npm_abc", "glpat-", "hf_abc"] {
            assert!(!redacted.contains(gone), "{gone}: {redacted}");
        }
        let plain = "the npm_config docs, sk_live mode and hf_hub downloads";
        assert_eq!(redact_key_shapes(plain), plain);
    }

    /// Text that is JSON (a tool's raw output, a call's arguments as written) escapes a line break
    /// as `\n`: a key at the start of a line then follows a letter, with no word boundary before it.
    #[test]
    fn a_key_after_an_escaped_line_break_or_tab_is_redacted_and_the_escape_kept() {
        let json = r#"{"keys":"first\nsk-proj-abcdefghijklmnopqrstuv\tghp_abcdefghijklmnopqrstuvwxyz1234\rAKIAABCDEFGHIJKLMNOP"}"#;
        let redacted = redact_key_shapes(json);
        for gone in ["sk-proj", "ghp_", "AKIAABCD"] {
            assert!(!redacted.contains(gone), "{gone}: {redacted}");
        }
        assert_eq!(
            redacted,
            r#"{"keys":"first\n<redacted>\t<redacted>\r<redacted>"}"#
        );
        // A word that merely ends in `n` before `sk-` is not a line break.
        let plain = "the ask-questions-and-answers-list";
        assert_eq!(redact_key_shapes(plain), plain);
    }
}
