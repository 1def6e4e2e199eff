//! The page: one HTML document with its style, its script and the session's data inline, so it
//! opens from disk with no network. Everything from the session travels as JSON inside a
//! `<script type="application/json">` element (with `<`, `>` and `&` escaped, so no string can
//! close the element) and the script inserts it as text; a Content-Security-Policy allows only
//! this page's own script and style (by hash), images from `data:` URLs, and no other source.

use std::io::Write;

use base64::Engine as _;
use bytes::Bytes;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::error::WebError;
use crate::stream::ScriptSafe;

const STYLE: &str = include_str!("../assets/app.css");
/// The page's script: the parts in `assets/app/`, in order, inside one function (they share its
/// scope: the data, the selection, the helpers). Every string from the session is inserted as text
/// (text nodes, `textContent`, and a message's markdown as elements of a fixed list); no HTML is
/// built from session data, and no URL from it is fetched (a markdown link to the web or mail opens
/// when clicked).
const SCRIPT: &str = concat!(
    "// ctxkit's session page.\n\"use strict\";\n(function () {\n",
    include_str!("../assets/app/base.js"),
    include_str!("../assets/app/markdown.js"),
    include_str!("../assets/app/entries.js"),
    include_str!("../assets/app/tree.js"),
    include_str!("../assets/app/chart.js"),
    include_str!("../assets/app/panels.js"),
    include_str!("../assets/app/main.js"),
    "})();\n",
);
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

/// The characters the page shows visibly instead of letting the browser act on them
/// (`ctxkit_protocol::UNSAFE_TO_SHOW`, the list the CLI escapes), as `[first, last]` code points:
/// the data document carries them and the script builds its pattern from them.
pub(crate) fn unsafe_characters() -> Value {
    ctxkit_protocol::UNSAFE_TO_SHOW
        .iter()
        .map(|&(first, last)| Value::from(vec![u32::from(first), u32::from(last)]))
        .collect()
}

/// `text` as the page's script shows it (`visible` in `assets/app/base.js`): each of
/// `ctxkit_protocol::UNSAFE_TO_SHOW` visible, a C0 control or DEL as its picture (␛, ␡), any
/// other (a C1 control, a bidirectional override or isolate) as `\uXXXX`; a carriage return that
/// ends a line (`\r\n`) is the line's end, not shown.
fn shown(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    let mut characters = text.chars().peekable();
    while let Some(character) = characters.next() {
        let code = u32::from(character);
        match character {
            '\r' if characters.peek() == Some(&'\n') => {}
            _ if !ctxkit_protocol::is_unsafe_to_show(character) => shown.push(character),
            '\u{0}'..='\u{1f}' => shown.extend(char::from_u32(0x2400 + code)),
            '\u{7f}' => shown.push('\u{2421}'),
            _ => shown.push_str(&format!("\\u{code:04x}")),
        }
    }
    shown
}

/// Text safe in HTML content and attribute values.
pub(crate) fn escape_html(text: &str) -> String {
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

/// The whole page for `data` (from [`crate::build_page_data`]).
pub fn render_page(data: &Value, mode: PageMode) -> String {
    let title = data
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or("session");
    let mut page = Vec::with_capacity(TEMPLATE.len() + STYLE.len() + SCRIPT.len());
    let written = write_page(&mut page, title, mode, |out| {
        serde_json::to_writer(out, data).map_err(|error| WebError::Write {
            source: error.into(),
        })
    });
    if written.is_err() {
        // Writing into memory fails only if the data cannot be serialized.
        return String::new();
    }
    String::from_utf8(page).unwrap_or_default()
}

/// Writes the page of `session` (export mode) to `out` as a stream: the data document an entry at
/// a time, escaped on the way, so a session of any length is exported in bounded memory.
pub fn export_page(
    session: &ctxkit_session::Session,
    options: &crate::PageOptions,
    out: &mut dyn Write,
) -> Result<crate::PageStats, WebError> {
    let title = options
        .renderer(session.entries().len())
        .short(&options.title);
    let mut buffered = std::io::BufWriter::with_capacity(1 << 16, out);
    let stats = write_page(&mut buffered, &title, PageMode::Export, |data| {
        crate::stream::write_page_data(session, options, data)
    })?;
    buffered
        .flush()
        .map_err(|source| WebError::Write { source })?;
    Ok(stats)
}

/// Writes the template with its placeholders filled in one pass (nothing substituted is read
/// again as a placeholder); `data` writes the data document, escaped for the script element.
fn write_page<T>(
    out: &mut dyn Write,
    title: &str,
    mode: PageMode,
    data: impl FnOnce(&mut dyn Write) -> Result<T, WebError>,
) -> Result<T, WebError> {
    write_template(out, title, mode, |out| {
        let mut safe = ScriptSafe::new(out);
        let result = data(&mut safe)?;
        safe.finish().map_err(|source| WebError::Write { source })?;
        Ok(result)
    })
}

/// The live page (`ctxkit view`) around `data`, a data document already escaped for the script
/// element (as `script_safe_json` escapes it), as the chunks of one response: the template before
/// it, `data` itself (shared, not copied) and the template after it.
pub(crate) fn live_page(title: &str, data: &Bytes) -> Result<Vec<Bytes>, WebError> {
    let mut parts = Parts::default();
    write_template(&mut parts, title, PageMode::Live, |parts: &mut Parts| {
        parts.push_shared(data.clone());
        Ok(())
    })?;
    Ok(parts.finish())
}

/// A writer that keeps what is written as chunks, with shared chunks put between them uncopied.
#[derive(Default)]
struct Parts {
    chunks: Vec<Bytes>,
    current: Vec<u8>,
}

impl Parts {
    fn push_shared(&mut self, chunk: Bytes) {
        self.chunks
            .push(Bytes::from(std::mem::take(&mut self.current)));
        self.chunks.push(chunk);
    }

    fn finish(mut self) -> Vec<Bytes> {
        self.chunks.push(Bytes::from(self.current));
        self.chunks
    }
}

impl Write for Parts {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.current.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// [`write_page`] with `data` writing what the data placeholder stands for, as it is.
fn write_template<W: Write + ?Sized, T>(
    out: &mut W,
    title: &str,
    mode: PageMode,
    data: impl FnOnce(&mut W) -> Result<T, WebError>,
) -> Result<T, WebError> {
    let io = |source| WebError::Write { source };
    let values = [
        ("{{CSP}}", escape_html(&content_security_policy(mode))),
        ("{{TITLE}}", escape_html(&shown(title))),
        ("{{STYLE}}", STYLE.to_owned()),
        ("{{SCRIPT}}", SCRIPT.to_owned()),
    ];
    let mut data = Some(data);
    let mut result = None;
    let mut rest = TEMPLATE;
    while let Some(start) = rest.find("{{") {
        out.write_all(&rest.as_bytes()[..start]).map_err(io)?;
        rest = &rest[start..];
        if let Some(after) = rest.strip_prefix("{{DATA}}")
            && let Some(data) = data.take()
        {
            result = Some(data(out)?);
            rest = after;
            continue;
        }
        match values.iter().find(|(name, _)| rest.starts_with(name)) {
            Some((name, value)) => {
                out.write_all(value.as_bytes()).map_err(io)?;
                rest = &rest[name.len()..];
            }
            None => {
                out.write_all(b"{{").map_err(io)?;
                rest = &rest[2..];
            }
        }
    }
    out.write_all(rest.as_bytes()).map_err(io)?;
    // The template holds the data placeholder; without it the data is written nowhere.
    match result {
        Some(result) => Ok(result),
        None => Err(WebError::Write {
            source: std::io::Error::other("the page template has no data placeholder"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The title is shown as the script shows text: Windows' line end as a line end, a lone
    /// carriage return and other controls as their pictures.
    #[test]
    fn a_line_ending_carriage_return_is_not_shown_a_lone_one_is() {
        assert_eq!(
            shown("one\r\ntwo\rthree\u{1b}"),
            "one\ntwo\u{240d}three\u{241b}"
        );
    }

    /// The style guide's module size holds for the page's script too: every script file in
    /// `assets/` is a part under 500 lines, and each is in the page's one script.
    #[test]
    fn the_script_is_in_parts_of_under_500_lines_all_in_the_page() {
        let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
        let mut folders = vec![assets];
        let mut parts = 0;
        while let Some(folder) = folders.pop() {
            for item in std::fs::read_dir(folder).unwrap() {
                let path = item.unwrap().path();
                if path.is_dir() {
                    folders.push(path);
                } else if path.extension().is_some_and(|extension| extension == "js") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    assert!(text.lines().count() < 500, "{} is too long", path.display());
                    assert!(
                        SCRIPT.contains(&text),
                        "{} is not in the page",
                        path.display()
                    );
                    parts += 1;
                }
            }
        }
        assert!(parts > 1, "{parts}");
        assert!(SCRIPT.trim_end().ends_with("start();\n})();"));
    }

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

    /// A bidirectional override in a session's name would show the tab's title reversed: the
    /// title shows it as `\u202e`, as the page's script shows every such character.
    #[test]
    fn the_title_shows_bidi_overrides_and_controls_visibly() {
        let data = json!({"title": "invoice\u{202e}fdp.exe \u{2066}a\u{9b}b\u{1b}c\u{7f}"});
        let page = render_page(&data, PageMode::Export);
        let title = page
            .split_once("<title>")
            .and_then(|(_, rest)| rest.split_once("</title>"))
            .unwrap()
            .0;
        assert_eq!(
            title,
            "invoice\\u202efdp.exe \\u2066a\\u009bb\u{241b}c\u{2421} — ctxkit"
        );
        assert!(!title.chars().any(ctxkit_protocol::is_unsafe_to_show));
    }

    /// The page's data carries the one list (the CLI's), and the script takes its pattern from it:
    /// no list of its own to drift.
    #[test]
    fn the_data_carries_the_list_the_script_shows_visibly() {
        let list = unsafe_characters();
        assert_eq!(list[0], json!([0, 8]));
        assert_eq!(
            list.as_array().unwrap().len(),
            ctxkit_protocol::UNSAFE_TO_SHOW.len()
        );
        assert!(list.as_array().unwrap().contains(&json!([0x202a, 0x202e])));
        assert!(SCRIPT.contains("unsafeCharacters = unsafePattern(D.unsafeCharacters)"));
        assert!(!SCRIPT.contains("\\u0000-"), "no list of the script's own");
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
