//! Reading only a session file's header line: who a session is and what it was forked from,
//! without reading its entries.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use ctxkit_protocol::SessionHeader;

use crate::error::{Result, SessionError};

/// The longest header line read (64 KiB): a real header is a few hundred bytes.
const MAX_HEADER_BYTES: u64 = 64 << 10;

/// The header of the session file at `path`, read from its first line alone.
pub fn read_header(path: &Path) -> Result<SessionHeader> {
    let file = crate::regular::open_session_file(path)?;
    let mut line = Vec::new();
    BufReader::new(file.take(MAX_HEADER_BYTES))
        .read_until(b'\n', &mut line)
        .map_err(SessionError::io("read", path))?;
    let not_a_session = |reason: String| SessionError::NotASession {
        path: path.to_owned(),
        line: Some(1),
        reason,
    };
    let header: SessionHeader = read_line(line.trim_ascii()).map_err(|error| {
        not_a_session(format!("the first line is not a session header: {error}"))
    })?;
    if header.kind != "session" {
        return Err(not_a_session(format!(
            "the first line is a `{}` record, not a session header",
            header.kind
        )));
    }
    Ok(header)
}

/// The most bytes of a session file read to find an entry (64 MiB).
const MAX_SCANNED_BYTES: u64 = 64 << 20;

/// The ids of the entries of the session file at `path`, in file order, until `wanted` says
/// stop (the header and lines without an id are skipped; at most the first 64 MiB are read).
pub fn scan_entry_ids(path: &Path, mut wanted: impl FnMut(&str) -> bool) -> Result<()> {
    #[derive(serde::Deserialize)]
    struct Id {
        #[serde(rename = "type")]
        kind: Option<String>,
        id: Option<String>,
    }
    let file = crate::regular::open_session_file(path)?;
    for line in BufReader::new(file.take(MAX_SCANNED_BYTES)).split(b'\n') {
        let line = line.map_err(SessionError::io("read", path))?;
        let Ok(Id { kind, id: Some(id) }) = read_line::<Id>(line.trim_ascii()) else {
            continue;
        };
        if kind.as_deref() != Some("session") && !wanted(&id) {
            return Ok(());
        }
    }
    Ok(())
}

/// One line's JSON as the session reader reads it: a lone surrogate escape read as U+FFFD, when the
/// line is UTF-8 and does not read as it is (see `ctxkit_protocol::from_str_repaired`).
fn read_line<T: serde::de::DeserializeOwned>(line: &[u8]) -> serde_json::Result<T> {
    match serde_json::from_slice(line) {
        Ok(value) => Ok(value),
        Err(error) => match std::str::from_utf8(line) {
            Ok(text) => ctxkit_protocol::from_str_repaired(text).map_err(|_| error),
            Err(_) => Err(error),
        },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn reads_the_first_line_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(
            &path,
            "{\"type\":\"session\",\"version\":3,\"id\":\"abc\",\"timestamp\":\"t\",\"cwd\":\"/p\",\"parentSession\":\"/s/p.jsonl\"}\nnot json\n",
        )
        .unwrap();
        let header = read_header(&path).unwrap();
        assert_eq!(header.id, "abc");
        assert_eq!(header.parent_session.as_deref(), Some("/s/p.jsonl"));
    }

    #[test]
    fn a_file_that_starts_with_an_entry_is_not_a_session() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "{\"type\":\"message\",\"id\":\"a\"}\n").unwrap();
        let error = read_header(&path).unwrap_err().to_string();
        assert!(error.contains("not a session header"), "{error}");
    }
}
