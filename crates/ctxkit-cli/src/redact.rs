//! The output layer that hides credentials inside URLs (`https://user:token@host`) and shows
//! terminal escape sequences instead of sending them (`render::terminal_safe`): every command but
//! the interactive chat writes its stdout through [`RedactingWriter`], its stderr through
//! [`stderr`], and error lines pass both too, so a package source, a setting such as
//! `llm.baseUrl` or a directory name never prints credentials, and a session title holding an
//! OSC 52 clipboard write or a clear-screen sequence prints as text.

use std::borrow::Cow;
use std::io::Write;
use std::sync::Mutex;

/// Paths shown under another name on stdout and stderr while their [`ShownAs`] lives: a database
/// session's private copy is named by the session's id, never by a temporary file the user did
/// not name and that is gone once the command ends.
static SHOWN_AS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// Shows `path` as `name` in everything printed until it is dropped.
#[must_use = "the path is shown as the name only while this lives"]
pub struct ShownAs {
    path: String,
}

/// Shows `path` as `name` on stdout and stderr until the returned value is dropped.
pub fn show_path_as(path: &std::path::Path, name: &str) -> ShownAs {
    let path = path.display().to_string();
    if let Ok(mut shown) = SHOWN_AS.lock() {
        shown.push((path.clone(), name.to_owned()));
    }
    ShownAs { path }
}

impl ShownAs {
    /// Keeps the name for the rest of the process: for an error about the copy, which is printed
    /// after the command returns (QA 2026-12-07: `ctxkit check /tmp/ctxkit-session-…`, a file
    /// gone by then).
    pub fn keep_for_the_error(self) {
        std::mem::forget(self);
    }
}

/// `text` with every path shown under another name replaced by it (an error line, a hint).
pub fn shown_names(text: &str) -> Cow<'_, str> {
    with_shown_names(Cow::Borrowed(text))
}

impl Drop for ShownAs {
    fn drop(&mut self) {
        if let Ok(mut shown) = SHOWN_AS.lock() {
            shown.retain(|(path, _)| *path != self.path);
        }
    }
}

/// `text` with every path shown under another name replaced by it.
fn with_shown_names(text: Cow<'_, str>) -> Cow<'_, str> {
    let Ok(shown) = SHOWN_AS.lock() else {
        return text;
    };
    let mut text = text;
    for (path, name) in shown.iter() {
        if text.contains(path.as_str()) {
            text = Cow::Owned(text.replace(path.as_str(), name));
        }
    }
    text
}

/// Stderr, locked, through the same layer as stdout.
pub fn stderr() -> RedactingWriter<std::io::StderrLock<'static>> {
    RedactingWriter::new(std::io::stderr().lock())
}

/// Writes whole lines to `inner` with credentials redacted and escape sequences shown; a last line without a newline is
/// written on `flush` and when dropped.
pub struct RedactingWriter<W: Write> {
    inner: W,
    pending: Vec<u8>,
    /// Whether credentials in URLs are hidden (not in a protocol stream, whose data is exact).
    credentials: bool,
}

impl<W: Write> RedactingWriter<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            pending: Vec::new(),
            credentials: true,
        }
    }

    /// For `serve`'s JSON-RPC stream: escape sequences are shown as JSON escapes (the same data),
    /// and nothing else changes. A session's text reaches its client exactly as stored, as Pi's
    /// context holds it, `https://user:pass@host` included: hiding it would change what the
    /// client sends to its model.
    pub fn protocol(inner: W) -> Self {
        Self {
            inner,
            pending: Vec::new(),
            credentials: false,
        }
    }

    fn write_redacted(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let text = String::from_utf8_lossy(bytes);
        let redacted = if self.credentials {
            let shown = with_shown_names(text);
            let redacted = match ctxkit_secrets::redact_credentials(&shown) {
                Cow::Owned(redacted) => Some(redacted),
                Cow::Borrowed(_) => None,
            };
            redacted.map_or(shown, Cow::Owned)
        } else {
            text
        };
        self.inner
            .write_all(crate::render::terminal_safe(&redacted).as_bytes())
    }
}

impl<W: Write> Write for RedactingWriter<W> {
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        let Some(last_newline) = buffer.iter().rposition(|&byte| byte == b'\n') else {
            self.pending.extend_from_slice(buffer);
            return Ok(buffer.len());
        };
        let (lines, rest) = buffer.split_at(last_newline + 1);
        if self.pending.is_empty() {
            // The usual case (a whole answer line): written from the caller's buffer, uncopied.
            self.write_redacted(lines)?;
        } else {
            let mut joined = std::mem::take(&mut self.pending);
            joined.extend_from_slice(lines);
            self.write_redacted(&joined)?;
        }
        self.pending.extend_from_slice(rest);
        Ok(buffer.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let pending = std::mem::take(&mut self.pending);
        if !pending.is_empty() {
            self.write_redacted(&pending)?;
        }
        self.inner.flush()
    }
}

impl<W: Write> Drop for RedactingWriter<W> {
    fn drop(&mut self) {
        // Best effort: errors here have nobody to go to (a closed pipe).
        let _ = self.flush();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn credentials_split_across_writes_are_redacted() {
        let mut output = Vec::new();
        {
            let mut writer = RedactingWriter::new(&mut output);
            write!(writer, "Installed https://user:pa").unwrap();
            writeln!(writer, "ss@host/repo").unwrap();
            write!(writer, "git:me:secret@h/p").unwrap();
        }
        assert_eq!(
            String::from_utf8(output).unwrap(),
            "Installed https://<redacted>@host/repo\ngit:<redacted>@h/p"
        );
    }

    #[test]
    fn a_path_is_shown_by_its_name_while_asked() {
        let mut output = Vec::new();
        {
            let mut writer = RedactingWriter::new(&mut output);
            let shown = show_path_as(std::path::Path::new("/tmp/ctxkit-session-1-x/s.jsonl"), "s");
            writeln!(
                writer,
                "run `ctxkit undo-compact /tmp/ctxkit-session-1-x/s.jsonl`"
            )
            .unwrap();
            drop(shown);
            writeln!(writer, "then /tmp/ctxkit-session-1-x/s.jsonl").unwrap();
        }
        assert_eq!(
            String::from_utf8(output).unwrap(),
            "run `ctxkit undo-compact s`\nthen /tmp/ctxkit-session-1-x/s.jsonl\n"
        );
    }

    #[test]
    fn a_protocol_stream_keeps_its_data_and_escapes_control_characters() {
        let mut output = Vec::new();
        {
            let mut writer = RedactingWriter::protocol(&mut output);
            writeln!(
                writer,
                "{{\"text\":\"git clone https://me:pass@host/r \u{202e}\"}}"
            )
            .unwrap();
        }
        let written = String::from_utf8(output).unwrap();
        assert_eq!(
            written,
            "{\"text\":\"git clone https://me:pass@host/r \\u202e\"}\n"
        );
        let value: serde_json::Value = serde_json::from_str(&written).unwrap();
        assert_eq!(value["text"], "git clone https://me:pass@host/r \u{202e}");
    }
}
