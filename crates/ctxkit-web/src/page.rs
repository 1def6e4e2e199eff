//! The page: one HTML document with its style, its script and the session's data inline, so it
//! opens from disk with no network. Everything from the session travels as JSON inside a
//! `<script type="application/json">` element (with `<`, `>` and `&` escaped, so no string can
//! close the element) and the script inserts it as text; a Content-Security-Policy allows only
//! this page's own script and style (by hash), images from `data:` URLs, and no other source.

use base64::Engine as _;
use serde_json::Value;
use sha2::{Digest, Sha256};

const STYLE: &str = include_str!("../assets/app.css");
const SCRIPT: &str = include_str!("../assets/app.js");
const TEMPLATE: &str = include_str!("../assets/page.html");

/// Where a page is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageMode {
    /// A file: the page may fetch nothing.
    Export,
    /// Served by `ctxkit view`: the page may fetch from its own origin (the data, contexts).
    Live,
}

/// `'sha256-…'` of a script or style, for the policy.
fn source_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// The page's Content-Security-Policy.
pub fn content_security_policy(mode: PageMode) -> String {
    let connect = match mode {
        PageMode::Export => "'none'",
        PageMode::Live => "'self'",
    };
    format!(
        "default-src 'none'; script-src {}; style-src {}; img-src data:; connect-src {connect}; \
         base-uri 'none'; form-action 'none'",
        source_hash(SCRIPT),
        source_hash(STYLE)
    )
}

/// JSON safe inside a `<script>` element: `<`, `>` and `&` as `\u003c`, `\u003e`, `\u0026` (the
/// same string once parsed).
pub fn script_safe_json(data: &Value) -> String {
    let text = serde_json::to_string(data).unwrap_or_else(|_| "null".to_owned());
    let mut safe = String::with_capacity(text.len() + 64);
    for character in text.chars() {
        match character {
            '<' => safe.push_str("\\u003c"),
            '>' => safe.push_str("\\u003e"),
            '&' => safe.push_str("\\u0026"),
            '\u{2028}' => safe.push_str("\\u2028"),
            '\u{2029}' => safe.push_str("\\u2029"),
            other => safe.push(other),
        }
    }
    safe
}

/// Text safe in HTML content and attribute values.
fn escape_html(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '&' => escaped.push_str("&amp;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            other => escaped.push(other),
        }
    }
    escaped
}

/// The whole page for `data` (from [`crate::build_page_data`]). Placeholders are filled in one
/// pass over the template, so nothing substituted is read again as a placeholder.
pub fn render_page(data: &Value, mode: PageMode) -> String {
    let title = data
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or("session");
    let values = [
        ("{{CSP}}", escape_html(&content_security_policy(mode))),
        ("{{TITLE}}", escape_html(title)),
        ("{{STYLE}}", STYLE.to_owned()),
        ("{{SCRIPT}}", SCRIPT.to_owned()),
        ("{{DATA}}", script_safe_json(data)),
    ];
    let mut page = String::with_capacity(
        TEMPLATE.len() + values.iter().map(|(_, value)| value.len()).sum::<usize>(),
    );
    let mut rest = TEMPLATE;
    while let Some(start) = rest.find("{{") {
        page.push_str(&rest[..start]);
        rest = &rest[start..];
        match values.iter().find(|(name, _)| rest.starts_with(name)) {
            Some((name, value)) => {
                page.push_str(value);
                rest = &rest[name.len()..];
            }
            None => {
                page.push_str("{{");
                rest = &rest[2..];
            }
        }
    }
    page.push_str(rest);
    page
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn no_string_can_close_the_data_element() {
        let data = json!({"title": "</script><script>alert(1)</script>", "x": "a & b > c"});
        let page = render_page(&data, PageMode::Export);
        assert_eq!(
            page.matches("</script>").count(),
            2,
            "only the page's own two elements close"
        );
        assert!(page.contains("&lt;/script&gt;&lt;script&gt;alert(1)"));
        let start = page.find("id=\"session-data\">").unwrap() + "id=\"session-data\">".len();
        let end = start + page[start..].find("</script>").unwrap();
        let parsed: Value = serde_json::from_str(&page[start..end]).unwrap();
        assert_eq!(parsed, data);
    }

    #[test]
    fn the_policy_names_the_page_s_own_script_and_style_only() {
        let policy = content_security_policy(PageMode::Export);
        assert!(policy.starts_with("default-src 'none'; script-src 'sha256-"));
        assert!(!policy.contains("unsafe"));
        assert!(policy.contains("connect-src 'none'"));
        assert!(content_security_policy(PageMode::Live).contains("connect-src 'self'"));
    }
}
