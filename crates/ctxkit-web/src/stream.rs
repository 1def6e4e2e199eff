//! The page written as a stream: the data document is written field by field and entry by entry
//! straight into the page (escaped for a `<script>` element on the way), so exporting a session
//! of a million entries holds one entry's record at a time, not the whole document.

use std::io::{self, Write};

use ctxkit_session::Session;
use rayon::prelude::*;
use serde_json::{Value, json};

use crate::contexts::View;
use crate::error::WebError;
use crate::history::{Totals, compactions, timeline};
use crate::model::{ContextPolicy, PageOptions, display_order, entry_record, precomputed};
use crate::sent_table::SentTable;

/// Most messages a precomputed context of an exported page holds: a longer one (the context of a
/// session of hundreds of thousands of messages never compacted) is left out, and the page says
/// that `ctxkit view` or `ctxkit context` builds it.
pub const MAX_PRECOMPUTED_CONTEXT_MESSAGES: usize = 20_000;

/// Most bytes of views an exported page carries (the JSON of its contexts): a view's changed
/// messages carry their text clipped to the page's share per block, which on a session of a few
/// hundred entries is thousands of characters repeated in every later view (a real 823-entry Codex
/// session's views took 64 MB).
pub const MAX_PRECOMPUTED_CONTEXT_BYTES: usize = 24_000_000;

/// Views built at once per thread of the pool while a page is written.
const VIEWS_PER_THREAD: usize = 4;

/// What a written page holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageStats {
    pub entries: usize,
    pub compactions: usize,
    /// Contexts the page carries.
    pub contexts: usize,
}

/// Bytes as `script_safe_json` escapes them: `<`, `>`, `&`, U+2028 and U+2029 as `\uXXXX` (the
/// writer only ever sees JSON, where these appear inside strings or not at all).
pub(crate) struct ScriptSafe<W: Write> {
    inner: W,
    /// The start of a possible U+2028/U+2029 (`E2 80 A8/A9`) cut by the end of a write.
    pending: Vec<u8>,
}

impl<W: Write> ScriptSafe<W> {
    pub(crate) fn new(inner: W) -> Self {
        Self {
            inner,
            pending: Vec::new(),
        }
    }

    /// Writes what is pending and returns the inner writer.
    pub(crate) fn finish(mut self) -> io::Result<W> {
        self.inner.write_all(&self.pending)?;
        self.pending.clear();
        Ok(self.inner)
    }

    fn escape(&mut self, data: &[u8]) -> io::Result<()> {
        let mut run = 0;
        let mut at = 0;
        while at < data.len() {
            let escaped: Option<&[u8]> = match data[at] {
                b'<' => Some(b"\\u003c"),
                b'>' => Some(b"\\u003e"),
                b'&' => Some(b"\\u0026"),
                0xE2 if data.len() - at < 3 => {
                    // Possibly cut: decided with the next write.
                    self.inner.write_all(&data[run..at])?;
                    self.pending.extend_from_slice(&data[at..]);
                    return Ok(());
                }
                0xE2 if data[at + 1] == 0x80 && data[at + 2] == 0xA8 => Some(b"\\u2028"),
                0xE2 if data[at + 1] == 0x80 && data[at + 2] == 0xA9 => Some(b"\\u2029"),
                _ => None,
            };
            match escaped {
                Some(replacement) => {
                    self.inner.write_all(&data[run..at])?;
                    self.inner.write_all(replacement)?;
                    at += if data[at] == 0xE2 { 3 } else { 1 };
                    run = at;
                }
                None => at += 1,
            }
        }
        self.inner.write_all(&data[run..])
    }
}

impl<W: Write> Write for ScriptSafe<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.pending.is_empty() {
            self.escape(buf)?;
        } else {
            let mut joined = std::mem::take(&mut self.pending);
            joined.extend_from_slice(buf);
            self.escape(&joined)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

fn io_error(source: io::Error) -> WebError {
    WebError::Write { source }
}

fn write_value(out: &mut dyn Write, value: &Value) -> Result<(), WebError> {
    serde_json::to_writer(&mut *out, value).map_err(|error| io_error(error.into()))
}

/// `"key":` (after a comma unless it is the first field).
fn key(out: &mut dyn Write, name: &str, first: bool) -> Result<(), WebError> {
    let separator = if first { "" } else { "," };
    write!(out, "{separator}{}:", Value::from(name)).map_err(io_error)
}

/// Writes the page's data document (what `build_page_data` returns) to `out`, an entry at a time.
pub(crate) fn write_page_data(
    session: &Session,
    options: &PageOptions,
    out: &mut dyn Write,
) -> Result<PageStats, WebError> {
    let count = session.entries().len();
    let options = options.for_session(session);
    let renderer = options.renderer(count);
    let leaf = session
        .leaf_id()
        .and_then(|id| session.index().position(id));
    let header = session.header();
    out.write_all(b"{").map_err(io_error)?;
    key(out, "version", true)?;
    write_value(out, &json!(1))?;
    key(out, "unsafeCharacters", false)?;
    write_value(out, &crate::page::unsafe_characters())?;
    key(out, "title", false)?;
    write_value(out, &json!(renderer.short(&options.title)))?;
    key(out, "session", false)?;
    write_value(
        out,
        &json!({
            "id": renderer.short(session.id()),
            "cwd": renderer.short(session.cwd()),
            "name": session.session_name().map(|name| renderer.short(&name)),
            "importedFrom": header.extra.get("importedFrom").and_then(|from| from.get("format")).and_then(Value::as_str).map(|format| renderer.short(format)),
        }),
    )?;
    let (problems, problem_count) = crate::problems::problems(session);
    key(out, "problems", false)?;
    write_value(out, &problems)?;
    key(out, "problemCount", false)?;
    write_value(out, &json!(problem_count))?;
    key(out, "leaf", false)?;
    write_value(out, &json!(leaf))?;
    key(out, "entries", false)?;
    out.write_all(b"[").map_err(io_error)?;
    for position in 0..count {
        if position > 0 {
            out.write_all(b",").map_err(io_error)?;
        }
        write_value(out, &entry_record(session, position, &renderer))?;
    }
    // Each paid call once, as `ctxkit info` counts them: a reply a rewritten transcript or an
    // `undo-compact` copied counted twice on the page (QA 2026-12-07: $6.26 against $4.99).
    let totals = Totals::of_spend(&ctxkit_session::session_spend(
        session.entries(),
        &options.free_models,
    ));
    out.write_all(b"]").map_err(io_error)?;
    key(out, "order", false)?;
    serde_json::to_writer(&mut *out, &display_order(session))
        .map_err(|error| io_error(error.into()))?;
    let compactions = compactions(session, &renderer)?;
    let compaction_count = compactions.len();
    key(out, "compactions", false)?;
    write_value(out, &Value::Array(compactions))?;
    key(out, "timeline", false)?;
    timeline(session, leaf, &options.free_models)?
        .write(out)
        .map_err(io_error)?;
    key(out, "totals", false)?;
    write_value(out, &totals.to_value())?;
    key(out, "contexts", false)?;
    let mut shared = SentTable::default();
    let contexts = write_contexts(session, &options, leaf, &renderer, &mut shared, out)?;
    key(out, "sentMessages", false)?;
    shared.write(out).map_err(io_error)?;
    key(out, "contextsOnDemand", false)?;
    write_value(out, &json!(options.contexts == ContextPolicy::OnDemand))?;
    key(out, "clipChars", false)?;
    write_value(out, &json!(renderer.clip_chars))?;
    key(out, "noThinking", false)?;
    write_value(out, &json!(options.no_thinking))?;
    if let ContextPolicy::Precompute { .. } = options.contexts {
        key(out, "contextsMaxMessages", false)?;
        write_value(out, &json!(MAX_PRECOMPUTED_CONTEXT_MESSAGES))?;
    }
    out.write_all(b"}").map_err(io_error)?;
    Ok(PageStats {
        entries: count,
        compactions: compaction_count,
        contexts,
    })
}

/// The precomputed contexts, one at a time, as an object by entry position, their large sent
/// messages kept once in `shared`; how many were written.
fn write_contexts(
    session: &Session,
    options: &PageOptions,
    leaf: Option<usize>,
    renderer: &crate::blocks::Renderer<'_>,
    shared: &mut SentTable,
    out: &mut dyn Write,
) -> Result<usize, WebError> {
    out.write_all(b"{").map_err(io_error)?;
    let mut written = 0;
    if let ContextPolicy::Precompute {
        all_up_to,
        sampled_requests,
    } = options.contexts
    {
        let path = leaf
            .map(|leaf| session.index().path_to(leaf))
            .unwrap_or_default();
        let mut bytes = 0;
        let positions = precomputed(session, all_up_to, sampled_requests, &path);
        // Views are independent: built a few per thread at a time, in parallel, then rendered
        // and written in order (what is held at once stays a few views per thread).
        let chunk = rayon::current_num_threads().max(1) * VIEWS_PER_THREAD;
        let parsed = crate::parsed::ParsedMessages::default();
        for positions in positions.chunks(chunk) {
            parsed.next_batch();
            let views: Vec<Result<Option<View>, WebError>> = positions
                .par_iter()
                .map(|&position| {
                    View::build(
                        session,
                        &parsed,
                        position,
                        &options.transform,
                        options.context_window,
                        MAX_PRECOMPUTED_CONTEXT_MESSAGES,
                    )
                })
                .collect();
            for (&position, view) in positions.iter().zip(views) {
                let Some(view) = view? else {
                    continue;
                };
                let (record, added) = view.record_shared(renderer, shared);
                let text = serde_json::to_vec(&record).map_err(|error| io_error(error.into()))?;
                // The first (the leaf's) always; the others, newest first, where they still fit
                // (`"position":` and a comma counted with each, and the messages it adds to
                // the shared table).
                let size = text.len() + position.to_string().len() + 4 + added.bytes();
                if written > 0 && bytes + size > options.context_bytes {
                    continue;
                }
                bytes += size;
                shared.keep(added);
                key(out, &position.to_string(), written == 0)?;
                out.write_all(&text).map_err(io_error)?;
                written += 1;
            }
        }
    }
    out.write_all(b"}").map_err(io_error)?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session of `count` one-word messages on one branch.
    fn linear_session(dir: &std::path::Path, count: usize) -> Session {
        let mut text = String::from(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}"#,
        );
        for index in 0..count {
            let parent = match index {
                0 => "null".to_owned(),
                _ => format!("\"e{}\"", index - 1),
            };
            text.push_str(&format!(
                "\n{{\"type\":\"message\",\"id\":\"e{index}\",\"parentId\":{parent},\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"word {index}\",\"timestamp\":{index}}}}}"
            ));
        }
        let path = dir.join("s.jsonl");
        std::fs::write(&path, text + "\n").unwrap();
        Session::open(&path).unwrap()
    }

    #[test]
    fn views_are_carried_while_their_bytes_last_the_leafs_first() {
        let dir = tempfile::tempdir().unwrap();
        let session = linear_session(dir.path(), 80);
        let redactor = crate::Redactor::new(Vec::new(), &[]).unwrap();
        let mut options = PageOptions::new("s", redactor);
        let mut everything = Vec::new();
        let all = write_page_data(&session, &options, &mut everything).unwrap();
        assert_eq!(all.contexts, 80);
        options.context_bytes = 20_000;
        let mut page = Vec::new();
        let within = write_page_data(&session, &options, &mut page).unwrap();
        assert!(within.contexts > 0 && within.contexts < 80, "{within:?}");
        let data: Value = serde_json::from_slice(&page).unwrap();
        let contexts = data["contexts"].as_object().unwrap();
        assert!(contexts.contains_key("79"), "the leaf's");
        assert!(serde_json::to_string(contexts).unwrap().len() <= 20_000);
        // After the leaf's, the newest views; older (shorter) ones fill what is left.
        assert!(contexts.contains_key("78"), "{:?}", contexts.keys());
    }

    fn escaped(chunks: &[&[u8]]) -> String {
        let mut writer = ScriptSafe::new(Vec::new());
        for chunk in chunks {
            writer.write_all(chunk).unwrap();
        }
        String::from_utf8(writer.finish().unwrap()).unwrap()
    }

    #[test]
    fn escapes_as_script_safe_json_does_even_across_writes() {
        let text = "a<b>&c\u{2028}d\u{2029}e\u{2026}é";
        let whole = crate::page::script_safe_json(&json!(text));
        let json = serde_json::to_string(&json!(text)).unwrap();
        assert_eq!(escaped(&[json.as_bytes()]), whole);
        // Every split of the bytes, the line separators cut included.
        let bytes = json.as_bytes();
        for cut in 0..=bytes.len() {
            assert_eq!(
                escaped(&[&bytes[..cut], &bytes[cut..]]),
                whole,
                "cut at {cut}"
            );
        }
    }

    /// `--redact '[0-9]{6,}'` rewrote entry ids (`df<redacted>`): the view asked for the
    /// context of an id that does not exist and deep links collided; an id over 200 characters
    /// was cut alike. Ids are ctxkit's own (or an import's), not content: the text still is.
    #[test]
    fn ids_are_never_redacted_or_cut_and_the_text_still_is() {
        let dir = tempfile::tempdir().unwrap();
        let long = "7".repeat(300);
        let text = format!(
            "{}\n{}\n{}\n",
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}"#,
            r#"{"type":"message","id":"df238776","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"call 5551234567","timestamp":1}}"#,
            json!({"type": "message", "id": long, "parentId": "df238776", "timestamp": "2026-01-01T00:00:00.000Z",
                   "message": {"role": "user", "content": "again", "timestamp": 2}}),
        );
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, text).unwrap();
        let session = Session::open(&path).unwrap();
        let redactor = crate::Redactor::new(Vec::new(), &["[0-9]{6,}".to_owned()]).unwrap();
        let data = crate::build_page_data(&session, &PageOptions::new("t", redactor)).unwrap();
        assert_eq!(data["entries"][0]["id"], json!("df238776"));
        assert_eq!(data["entries"][1]["id"], json!(long));
        let shown = data["entries"][0].to_string();
        assert!(!shown.contains("5551234567"), "{shown}");
    }
}
