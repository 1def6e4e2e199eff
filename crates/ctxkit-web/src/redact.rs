//! What the page may show of a string from the session: known secrets and credential-shaped
//! tokens redacted (the rules of tool output, `ctxkit_secrets::redact`, plus the shapes of common
//! keys, `ctxkit_secrets::redact_key_shapes`, since a page is made to be shared), the user's
//! `--redact` patterns, and a length limit.

use regex::Regex;

use crate::error::WebError;

/// Characters past a clipping limit that are still redacted with the kept text.
const CLIP_MARGIN: usize = 512;

/// The replacement of everything redacted.
pub const REDACTED: &str = "<redacted>";

/// The most values given to a secret's name a page redacts wherever they appear.
const MAX_VALUES: usize = 4096;

/// Redacts and limits the strings of a page. Built once per page.
#[derive(Debug, Clone)]
pub struct Redactor {
    /// The known secrets, prepared once: building the search for a secret's pieces (and their
    /// base64 and hex spellings) for each string of a page took minutes on a long session.
    secrets: ctxkit_secrets::Redactor,
    /// The values the session gives to a secret's name ([`Self::with_values`]), found as they
    /// are wherever else the page shows them.
    values: Option<std::sync::Arc<aho_corasick::AhoCorasick>>,
    patterns: Vec<Regex>,
    url_password: Regex,
}

impl Redactor {
    /// `secrets` are known values (the user's keys; shorter than 8 characters are ignored, as for
    /// tool output); `patterns` are the user's `--redact` regular expressions.
    pub fn new(secrets: Vec<String>, patterns: &[String]) -> Result<Self, WebError> {
        let mut compiled = Vec::new();
        for pattern in patterns {
            let regex = Regex::new(pattern).map_err(|error| WebError::Pattern {
                pattern: pattern.clone(),
                reason: one_line_reason(&error),
            })?;
            // Such a pattern would put the mark between every two characters of every string.
            if regex.is_match("") {
                return Err(WebError::Pattern {
                    pattern: pattern.clone(),
                    reason: "it matches the empty string, so it would redact between every two \
                             characters"
                        .to_owned(),
                });
            }
            compiled.push(regex);
        }
        let url_password = Regex::new(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@]+):[^\s/@]+@")
            .map_err(|error| WebError::Pattern {
                pattern: "url password".to_owned(),
                reason: error.to_string(),
            })?;
        Ok(Self {
            secrets: ctxkit_secrets::Redactor::new(secrets.iter().map(String::as_str)),
            values: None,
            patterns: compiled,
            url_password,
        })
    }

    /// This redactor, redacting `values` too wherever they appear, as they are (at most
    /// [`MAX_VALUES`]). Exact matches only: as known secrets they were searched in pieces and
    /// spellings, which took 41 s and 3.5 GB for a session of 2,500 page tokens and withheld
    /// whole replies that happened to spell `release 2024` (QA).
    pub fn with_values(&self, values: &[String]) -> Self {
        let mut redactor = self.clone();
        let values = &values[..values.len().min(MAX_VALUES)];
        if values.is_empty() {
            return redactor;
        }
        redactor.values = aho_corasick::AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::LeftmostLongest)
            .build(values)
            .ok()
            .map(std::sync::Arc::new);
        redactor
    }

    /// `text` with every secret, credential shape and user pattern replaced by [`REDACTED`]. A
    /// text whose markdown escapes or entities hide one (`ghp\_…`, `&#95;`) is shown as its
    /// markdown reads, redacted ([`Self::markdown_source`]): one rule for every string of a
    /// page, a session's name and a label as much as a message (QA 2026-12-07).
    pub fn clean(&self, text: &str) -> String {
        match self.markdown_source(text) {
            std::borrow::Cow::Owned(decoded) => self.clean_as_written(&decoded),
            std::borrow::Cow::Borrowed(text) => self.clean_as_written(text),
        }
    }

    /// [`Self::clean`] of `text` as written, its escapes left as they are.
    fn clean_as_written(&self, text: &str) -> String {
        // The keys of known shapes, then the known secrets (whole, and any run of 16 characters
        // of one) and the credentials of their shape (`Basic`/`Bearer` values, a URL's
        // `user:password@`): a page is made to be shared, so it leaves out what a summary leaves
        // out (`ctxkit_secrets::redact_for_keeping`) and more. Shapes go first: a pass over the
        // known secrets' pieces first cut another key sharing 16 characters with one into what
        // no longer had a key's shape, and the rest of it stayed on the page (QA r104).
        let shaped = ctxkit_secrets::redact_key_shapes(text);
        let mut cleaned = self.secrets.redact(&shaped);
        for pattern in &self.patterns {
            if pattern.is_match(&cleaned) {
                cleaned = pattern.replace_all(&cleaned, REDACTED).into_owned();
            }
        }
        // Its `\b` is Unicode's, which sends the regex engine to its slow search on any text
        // with a non-ASCII character: only a text holding `://` can match.
        if cleaned.contains("://") && self.url_password.is_match(&cleaned) {
            cleaned = self
                .url_password
                .replace_all(&cleaned, format!("$1:{REDACTED}@"))
                .into_owned();
        }
        if let Some(values) = &self.values
            && values.is_match(&cleaned)
        {
            let mut replaced = String::with_capacity(cleaned.len());
            values.replace_all_with(&cleaned, &mut replaced, |_, _, out| {
                out.push_str(REDACTED);
                true
            });
            cleaned = replaced;
        }
        cleaned
    }

    /// Markdown `text` as it is to be redacted: the text itself, or, when its escapes and entities
    /// hide a secret (`ghp\\_…`, `&#58;`), the text as its markdown reads, where the secret can
    /// be found ([`crate::markdown::plain_text`]). Every place that shows markdown's source
    /// (the tree's rows, the search, the compactions list) shows this.
    pub fn markdown_source<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        if !may_hide_by_escapes(text) {
            return std::borrow::Cow::Borrowed(text);
        }
        let decoded = crate::markdown::plain_text(text);
        if self.clean_as_written(&decoded) == decoded {
            return std::borrow::Cow::Borrowed(text);
        }
        std::borrow::Cow::Owned(decoded)
    }

    /// `value` as JSON text with each of its strings (keys too) [`Self::clean`]ed first: in the
    /// text a string's `"` and `\\` are escaped, so a secret holding one was not found there
    /// (QA 2026-12-07: a password `Pa\\ss"Word9` in an MCP tool's arguments stayed on the page).
    pub fn clean_json(&self, value: &serde_json::Value, pretty: bool) -> String {
        let cleaned = self.clean_value(value);
        let text = if pretty {
            serde_json::to_string_pretty(&cleaned)
        } else {
            serde_json::to_string(&cleaned)
        };
        text.unwrap_or_default()
    }

    /// `value` with each of its strings (keys too) [`Self::clean`]ed.
    pub fn clean_value(&self, value: &serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        // A walk with its own stack: a session's value may nest as deep as its reader allows.
        enum Step<'a> {
            Visit(&'a Value),
            Array(usize),
            Object(Vec<String>),
        }
        let mut steps = vec![Step::Visit(value)];
        let mut done: Vec<Value> = Vec::new();
        while let Some(step) = steps.pop() {
            match step {
                Step::Visit(Value::String(text)) => done.push(Value::String(self.clean(text))),
                Step::Visit(Value::Array(items)) => {
                    steps.push(Step::Array(items.len()));
                    steps.extend(items.iter().rev().map(Step::Visit));
                }
                Step::Visit(Value::Object(fields)) => {
                    let keys = fields.keys().map(|key| self.clean(key)).collect();
                    steps.push(Step::Object(keys));
                    steps.extend(fields.values().rev().map(Step::Visit));
                }
                Step::Visit(other) => done.push(other.clone()),
                Step::Array(count) => {
                    let items = done.split_off(done.len().saturating_sub(count));
                    done.push(Value::Array(items));
                }
                Step::Object(keys) => {
                    let values = done.split_off(done.len().saturating_sub(keys.len()));
                    done.push(Value::Object(keys.into_iter().zip(values).collect()));
                }
            }
        }
        done.pop().unwrap_or(Value::Null)
    }

    /// [`Self::clean`], then at most `limit` characters; the second value is the full length in
    /// characters when the text was clipped.
    ///
    /// Only the kept part (and a margin, so a secret cut at the limit is still recognised) is
    /// redacted: a session of hundreds of megabytes is not scanned whole. The length reported is
    /// the original text's.
    pub fn clip(&self, text: &str, limit: usize) -> (String, Option<usize>) {
        self.clip_with(text, limit, Self::clean)
    }

    /// [`Self::clip`] of markdown the page draws from its own tree (a message's text, a
    /// summary): redacted as written, its escapes kept for the drawing, which redacts what they
    /// hide (`Renderer::markdown`).
    pub fn clip_markdown(&self, text: &str, limit: usize) -> (String, Option<usize>) {
        self.clip_with(text, limit, Self::clean_as_written)
    }

    fn clip_with(
        &self,
        text: &str,
        limit: usize,
        clean: fn(&Self, &str) -> String,
    ) -> (String, Option<usize>) {
        let cut = text
            .char_indices()
            .nth(limit + CLIP_MARGIN)
            .map_or(text.len(), |(index, _)| index);
        let cleaned = clean(self, &text[..cut]);
        if cut == text.len() && cleaned.chars().count() <= limit {
            return (cleaned, None);
        }
        let length = text.chars().count();
        (cleaned.chars().take(limit).collect(), Some(length))
    }
}

/// Whether `text` holds a markdown escape (`\` before ASCII punctuation) or something like an
/// entity (`&` then letters, digits or `#` up to a `;`): only then can its markdown read
/// differently from it. Code's `&&` and `\n` are neither, so most text is not parsed again.
fn may_hide_by_escapes(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(at, byte)| match byte {
        b'\\' => bytes.get(at + 1).is_some_and(u8::is_ascii_punctuation),
        b'&' => {
            let rest = &bytes[at + 1..];
            let name = rest
                .iter()
                .take(32)
                .take_while(|byte| byte.is_ascii_alphanumeric() || **byte == b'#')
                .count();
            name > 0 && rest.get(name) == Some(&b';')
        }
        _ => false,
    })
}

/// A regular expression's error on one line: `regex` draws the pattern and a caret over several
/// lines; the last one says what is wrong (`unclosed group`).
fn one_line_reason(error: &regex::Error) -> String {
    let text = error.to_string();
    let last = text.lines().last().unwrap_or_default().trim();
    last.strip_prefix("error: ").unwrap_or(last).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_are_redacted_before_escaping_in_order_at_any_depth() {
        let redactor = Redactor::new(vec!["Pa\\ss\"Word9-long".to_owned()], &[]).unwrap();
        let value = serde_json::json!({"b": ["x", {"pw": "Pa\\ss\"Word9-long"}, 3], "a": null});
        assert_eq!(
            redactor.clean_json(&value, false),
            r#"{"b":["x",{"pw":"<redacted>"},3],"a":null}"#
        );
        let mut deep = serde_json::json!("Pa\\ss\"Word9-long");
        for _ in 0..10_000 {
            deep = serde_json::Value::Array(vec![deep]);
        }
        let cleaned = redactor.clean_value(&deep);
        let mut inner = &cleaned;
        while let Some(items) = inner.as_array() {
            inner = &items[0];
        }
        assert_eq!(inner, "<redacted>");
        // serde_json drops a deep value recursively: leak both rather than overflow the stack.
        std::mem::forget(cleaned);
        std::mem::forget(deep);
    }

    #[test]
    fn known_secrets_shapes_patterns_and_url_passwords_are_redacted() {
        let redactor = Redactor::new(
            vec!["hunter2-very-secret".to_owned()],
            &["internal-[0-9]+".to_owned()],
        )
        .unwrap();
        let text = "key sk-ant-api03-abcdefghijklmnopqrstuv, pw hunter2-very-secret, \
                    host internal-42, git https://me:tok3n@example.com/x, AKIAABCDEFGHIJKLMNOP";
        let cleaned = redactor.clean(text);
        for gone in ["sk-ant", "hunter2", "internal-42", "tok3n", "AKIAABCD"] {
            assert!(!cleaned.contains(gone), "{gone} in {cleaned}");
        }
        assert!(
            cleaned.contains("https://<redacted>@example.com/x"),
            "{cleaned}"
        );
        // Among non-ASCII text too; a text without `://` is left as it is.
        let accented = redactor.clean("café — git https://me:tok3n@example.com/x «ok»");
        assert_eq!(accented, "café — git https://<redacted>@example.com/x «ok»");
        let plain = "café — me:tok3n@example.com «ok»";
        assert_eq!(redactor.clean(plain), plain);
    }

    /// QA r104: with `ANTHROPIC_API_KEY` set, another key of the session sharing 16 characters
    /// with it was cut up by the known key's pieces, and what was left of it shown.
    #[test]
    fn another_key_sharing_pieces_with_a_known_one_is_redacted_whole() {
        let known = "sk-ant-api03-XyZ0123456789abcdefQRSTuvwx_REALKEYREALKEY0123";
        let other = "sk-ant-api03-XyZ0123456789abcdefQRSTuvwx_LMNOPqrst-0123456789abcdefGHIJ";
        let redactor = Redactor::new(vec![known.to_owned()], &[]).unwrap();
        assert_eq!(
            redactor.clean(&format!("other key: {other} and mine: {known}")),
            "other key: <redacted> and mine: <redacted>"
        );
        let test_keys = Redactor::new(
            vec!["sk-ant-test-SECRET0123456789abcdefXYZ".to_owned()],
            &[],
        )
        .unwrap();
        assert_eq!(
            test_keys.clean("sk-ant-test-SECRETabcdef0123456789abcdef"),
            "<redacted>"
        );
        // A piece of the known key alone, with no shape of its own, still goes.
        assert_eq!(
            redactor.clean("ends in 0123456789abcdefQRSTuvwx_REAL."),
            "ends in <redacted>."
        );
    }

    /// A page of a session someone sent, made by a user with no key configured: a `Basic` value
    /// (a base URL's `user:password`, base64) is a credential by its shape, as in a summary.
    #[test]
    fn a_basic_credential_is_redacted_without_any_known_secret() {
        let redactor = Redactor::new(Vec::new(), &[]).unwrap();
        let cleaned = redactor.clean(r#"{"headers":{"Authorization":"Basic dXNlcjpodW50ZXIy"}}"#);
        assert!(!cleaned.contains("dXNlcjpodW50ZXIy"), "{cleaned}");
        assert_eq!(
            cleaned,
            ctxkit_secrets::redact_for_keeping(
                r#"{"headers":{"Authorization":"Basic dXNlcjpodW50ZXIy"}}"#
            )
        );
    }

    #[test]
    fn a_bad_pattern_is_an_error_naming_it() {
        let error = Redactor::new(Vec::new(), &["(".to_owned()]).unwrap_err();
        assert!(error.to_string().contains("`--redact (`"), "{error}");
    }

    #[test]
    fn a_secret_cut_by_the_limit_is_still_redacted() {
        let redactor = Redactor::new(Vec::new(), &[]).unwrap();
        let text = format!("{}sk-ant-api03-abcdefghijklmnopqrstuvwxyz", "x ".repeat(10));
        let (shown, full) = redactor.clip(&text, 25);
        assert!(!shown.contains("sk-ant-api03-abcd"), "{shown}");
        assert_eq!(full, Some(text.chars().count()));
        let key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n".repeat(40);
        assert!(!redactor.clip(&key, 100).0.contains("MIIEp"));
    }

    #[test]
    fn clipping_counts_characters_not_bytes() {
        let redactor = Redactor::new(Vec::new(), &[]).unwrap();
        assert_eq!(redactor.clip("ééééé", 3), ("ééé".to_owned(), Some(5)));
        assert_eq!(redactor.clip("abc", 3), ("abc".to_owned(), None));
    }

    /// `--redact 'x*'` (or `''`) put `<redacted>` between every character of every string: a
    /// pattern that matches the empty string is refused as an invalid one is, saying why.
    #[test]
    fn a_pattern_that_matches_nothing_at_all_is_refused() {
        for pattern in ["", "x*", "a|", "(?:)"] {
            let refused = Redactor::new(Vec::new(), &[pattern.to_owned()]).unwrap_err();
            let said = refused.to_string();
            assert!(
                said.contains("matches the empty string"),
                "{pattern:?}: {said}"
            );
        }
        assert!(Redactor::new(Vec::new(), &["x+".to_owned()]).is_ok());
    }
}
