//! A summary as ctxkit keeps it. A summary is sent again with every later request, exported,
//! shared as a page and outlives the tool output it came from once that is cut, so a credential
//! it shows by its shape (a key a model copied from a `.env` it read, a `Bearer` value, a URL's
//! password) is left out, whoever wrote it: a model, the offline summarizer or a provider's
//! compaction. Tool output keeps such strings (an edit must match the file); a summary is never
//! matched against anything.

/// `text` with every credential of a known shape replaced by `<redacted>`
/// (`ctxkit_secrets::redact_for_keeping`, the list the offline summary and the shared page use).
pub fn kept_summary(text: &str) -> String {
    ctxkit_secrets::redact_for_keeping(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_a_model_repeats_is_left_out_and_the_rest_kept() {
        let written = "## Goal\n- deploy with STRIPE_KEY=sk_live_abcdefghijklmnopqrstuvwx\n\
                       - token ghp_abcdefghijklmnopqrstuvwxyz1234 from `.env`";
        let kept = kept_summary(written);
        assert!(!kept.contains("sk_live_abc"), "{kept}");
        assert!(!kept.contains("ghp_abc"), "{kept}");
        assert!(
            kept.starts_with("## Goal\n- deploy with STRIPE_KEY=<redacted>"),
            "{kept}"
        );
        assert!(kept.ends_with("from `.env`"), "{kept}");
    }
}
