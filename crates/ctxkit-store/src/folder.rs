//! Sessions filtered with one read of each file (`ctxkit sessions --grep`, on one folder with `--dir`
//! or on the whole directory store): the listing record a user sees, the store's facts the filter
//! reads and the text search all come from the same pass over the file's lines. (Each file was read
//! three to four times: the listing, the facts, the search, and the listing again for the row
//! printed.)

use std::path::{Path, PathBuf};

use ctxkit_protocol::SessionInfoRecord;

use crate::error::{Result, StoreError};
use crate::store::{ListQuery, StoredSession};

/// The sessions of `folder` that match `query`, newest first, each with its listing record (as
/// `ctxkit_session::read_session_info` reads it); files that are not sessions are left out, as the
/// unfiltered listing does. A session file the store cannot read (not a v3 session, a line that is
/// not UTF-8) fails the listing, the first in the listing's order.
pub fn list_folder_records(
    folder: &Path,
    query: &ListQuery,
) -> Result<Vec<(StoredSession, SessionInfoRecord)>> {
    let words = query.text.as_deref().map(crate::search::words_of);
    let (files, _skipped) = ctxkit_session::list_sessions_with(folder, |path| {
        FileRead::new(path, query, words.as_deref())
    })?;
    matching(files, query)
}

/// [`list_folder_records`] over every project folder of a directory store's `root` (the store's
/// own listing, which `ctxkit sessions --grep` and `serve`'s `session.list` read).
pub fn list_store_records(
    root: &Path,
    query: &ListQuery,
) -> Result<Vec<(StoredSession, SessionInfoRecord)>> {
    let words = query.text.as_deref().map(crate::search::words_of);
    let (files, _skipped) = ctxkit_session::list_all_sessions_with(root, |path| {
        FileRead::new(path, query, words.as_deref())
    })?;
    matching(files, query)
}

/// The files read that match `query`, in the listing's order, up to its limit.
fn matching(
    files: Vec<(SessionInfoRecord, FileRead<'_>)>,
    query: &ListQuery,
) -> Result<Vec<(StoredSession, SessionInfoRecord)>> {
    let mut found = Vec::new();
    for (record, read) in files {
        let (session, matched) = read.finish()?;
        if crate::files::matches_facts(query, &session) && matched {
            found.push((session, record));
        }
        if query.limit != 0 && found.len() >= query.limit {
            break;
        }
    }
    Ok(found)
}

/// What the store reads of a session file's lines while the listing reads them.
struct FileRead<'w> {
    path: PathBuf,
    /// The number of the line read last (1-based, blank lines counted).
    line: usize,
    session: Option<StoredSession>,
    /// The project the query asks for: another project's file is not searched.
    project: Option<&'w str>,
    /// The header names another project: the lines after it are only checked for UTF-8.
    other_project: bool,
    /// The search for the query's words, until a line holds them all.
    search: Option<crate::search::LineSearch<'w>>,
    matched: bool,
    /// The first line the store cannot read; nothing after it is read.
    error: Option<StoreError>,
}

impl<'w> FileRead<'w> {
    fn new(path: &Path, query: &'w ListQuery, words: Option<&'w [String]>) -> Self {
        Self {
            path: path.to_owned(),
            line: 0,
            session: None,
            project: query.project.as_deref(),
            other_project: false,
            search: words.map(crate::search::LineSearch::new),
            matched: words.is_none(),
            error: None,
        }
    }

    fn what(&self) -> String {
        self.path.display().to_string()
    }

    /// The file's facts and whether it holds the query's words, or why the store cannot read it.
    fn finish(self) -> Result<(StoredSession, bool)> {
        if let Some(error) = self.error {
            return Err(error);
        }
        let what = self.what();
        let session = self.session.ok_or_else(|| StoreError::InvalidSession {
            what,
            reason: "empty".to_owned(),
        })?;
        Ok((session, self.matched))
    }

    fn read(&mut self, bytes: &[u8]) -> Result<()> {
        self.line += 1;
        let text = std::str::from_utf8(bytes).map_err(|error| StoreError::NotUtf8 {
            what: self.what(),
            line: self.line,
            reason: error.to_string(),
        })?;
        if text.trim().is_empty() {
            return Ok(());
        }
        let Some(session) = &mut self.session else {
            let header =
                crate::lines::header_facts(text).map_err(|reason| StoreError::InvalidSession {
                    what: self.what(),
                    reason: format!("line 1: {reason}"),
                })?;
            let session = crate::files::session_of_header(&self.path, header);
            if self.project.is_some_and(|project| project != session.cwd) {
                // The filter leaves this file out whatever its lines hold.
                self.search = None;
                self.other_project = true;
            }
            self.session = Some(session);
            return Ok(());
        };
        if self.other_project {
            return Ok(());
        }
        crate::files::add_entry(session, text);
        if let Some(search) = &mut self.search
            && search.holds_words(text)
        {
            self.matched = true;
            self.search = None;
        }
        Ok(())
    }
}

impl ctxkit_session::LineVisitor for FileRead<'_> {
    fn visit(&mut self, line: &[u8]) {
        if self.error.is_none()
            && let Err(error) = self.read(line)
        {
            self.error = Some(error);
        }
    }

    fn end(&mut self) {
        // Its buffer holds the longest line searched (up to 100,000 characters): 2,000 files' took
        // 158 MB until the last file was read.
        self.search = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(folder: &Path, name: &str, bytes: &[u8]) {
        std::fs::write(folder.join(name), bytes).unwrap();
    }

    fn session(id: &str, time: &str, lines: &[&str]) -> Vec<u8> {
        let mut text = format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"{time}\",\"cwd\":\"/w\"}}\n"
        );
        for line in lines {
            text.push_str(line);
            text.push('\n');
        }
        text.into_bytes()
    }

    /// The store's filter as it was: each listed file's facts, then its words, read again.
    fn filtered(records: Vec<SessionInfoRecord>, query: &ListQuery) -> Result<Vec<StoredSession>> {
        let mut sessions = Vec::new();
        for record in records {
            let path = Path::new(&record.path);
            let session = crate::files::stored_session(path)?;
            if crate::files::matches_facts(query, &session) && holds_words(query, path)? {
                sessions.push(session);
            }
            if query.limit != 0 && sessions.len() >= query.limit {
                break;
            }
        }
        Ok(sessions)
    }

    fn holds_words(query: &ListQuery, path: &Path) -> Result<bool> {
        let Some(text) = &query.text else {
            return Ok(true);
        };
        let words = crate::search::words_of(text);
        crate::search::holds_words(&mut crate::lines::JsonlLines::open(path)?, &words)
    }

    type Listed =
        ctxkit_session::Result<(Vec<SessionInfoRecord>, Vec<ctxkit_session::SkippedFile>)>;

    /// `search` finds what the three reads of `listing`'s files found, and opens no file again
    /// (before, every file listed was opened again for its facts and again for its words).
    fn assert_one_read(
        query: &ListQuery,
        search: impl Fn(&ListQuery) -> Result<Vec<(StoredSession, SessionInfoRecord)>>,
        listing: impl Fn() -> Listed,
    ) {
        let before = crate::lines::FILE_OPENS.with(std::cell::Cell::get);
        let found = search(query).unwrap();
        assert_eq!(
            crate::lines::FILE_OPENS.with(std::cell::Cell::get),
            before,
            "{query:?}"
        );
        assert_eq!(found, three_reads(listing(), query).unwrap(), "{query:?}");
    }

    /// The search as it was: the listing, then each file's facts, its words, and its record again.
    fn three_reads(
        listed: Listed,
        query: &ListQuery,
    ) -> Result<Vec<(StoredSession, SessionInfoRecord)>> {
        let sessions = filtered(listed?.0, query)?;
        Ok(sessions
            .into_iter()
            .map(|session| {
                let record =
                    ctxkit_session::read_session_info(Path::new(&session.location)).unwrap();
                (session, record)
            })
            .collect())
    }

    /// Four sessions of the project `/w` (one named, one with a byte order mark and a torn last
    /// line) and a file that is not a session.
    fn sample_folder(folder: &Path) {
        let user = |text: &str, time: u64| {
            format!(
                r#"{{"type":"message","id":"u{time}","message":{{"role":"user","content":"{text}","timestamp":{time}}}}}"#
            )
        };
        let (first, second, third) = (
            user("fix the parser error", 1_735_700_000_000),
            user("nothing here", 1_735_800_000_000),
            user("a Parser-Error again", 1_735_900_000_000),
        );
        let tool = r#"{"type":"message","id":"t","message":{"role":"toolResult","content":"parser error in a tool"}}"#;
        let named = r#"{"type":"session_info","id":"n","name":" Parser work "}"#;
        write(
            folder,
            "a.jsonl",
            &session("a", "2025-01-01T00:00:00.000Z", &[&first, named]),
        );
        write(
            folder,
            "b.jsonl",
            &session(
                "b",
                "2025-01-02T00:00:00.000Z",
                &[&second, "", "not json", tool],
            ),
        );
        let mut with_mark = b"\xEF\xBB\xBF\n".to_vec();
        with_mark.extend(session("c", "2025-01-03T00:00:00.000Z", &[&third, &second]));
        with_mark.extend_from_slice(b"{\"type\":\"label\"}");
        write(folder, "c.jsonl", &with_mark);
        write(
            folder,
            "d.jsonl",
            &session("d", "2025-01-04T00:00:00.000Z", &[&second]),
        );
        write(folder, "notes.jsonl", b"{\"type\":\"note\"}\n");
    }

    fn sample_queries() -> Vec<ListQuery> {
        vec![
            ListQuery {
                text: Some("parser error".to_owned()),
                ..ListQuery::default()
            },
            ListQuery {
                text: Some("zzzqqq".to_owned()),
                ..ListQuery::default()
            },
            ListQuery {
                text: Some("parser".to_owned()),
                name: Some("WORK".to_owned()),
                ..ListQuery::default()
            },
            ListQuery {
                text: Some("nothing".to_owned()),
                limit: 1,
                ..ListQuery::default()
            },
            ListQuery {
                project: Some("/elsewhere".to_owned()),
                ..ListQuery::default()
            },
            ListQuery::default(),
        ]
    }

    #[test]
    fn a_folder_search_reads_each_file_once_and_finds_what_the_three_reads_found() {
        let folder = tempfile::tempdir().unwrap();
        sample_folder(folder.path());
        let queries = sample_queries();
        for query in &queries {
            assert_one_read(
                query,
                |query| list_folder_records(folder.path(), query),
                || ctxkit_session::list_sessions(folder.path()),
            );
        }
        let all = list_folder_records(folder.path(), &queries[0]).unwrap();
        let ids: Vec<&str> = all.iter().map(|(session, _)| session.id.as_str()).collect();
        assert_eq!(ids, ["c", "b", "a"]);

        // A file the store cannot read fails the search, as it did.
        let mut torn = session("e", "2025-01-05T00:00:00.000Z", &[]);
        torn.extend_from_slice(b"{\"type\":\"x\",\"t\":\"\xff\"}\n");
        write(folder.path(), "e.jsonl", &torn);
        let error = list_folder_records(folder.path(), &queries[1])
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            three_reads(ctxkit_session::list_sessions(folder.path()), &queries[1])
                .unwrap_err()
                .to_string()
        );
        assert!(error.contains("line 2"), "{error}");
    }

    #[test]
    fn the_store_search_reads_each_file_once_in_every_project_folder() {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("--w--");
        std::fs::create_dir(&project).unwrap();
        sample_folder(&project);
        let other = root.path().join("--other--");
        std::fs::create_dir(&other).unwrap();
        let request = r#"{"type":"message","id":"u","message":{"role":"user","content":"parser error elsewhere","timestamp":1736000000000}}"#;
        let mut elsewhere = session("x", "2025-01-06T00:00:00.000Z", &[request]);
        elsewhere = String::from_utf8(elsewhere)
            .unwrap()
            .replace("\"cwd\":\"/w\"", "\"cwd\":\"/other\"")
            .into_bytes();
        write(&other, "x.jsonl", &elsewhere);
        // A session of `/w` filed in another project's folder is still `/w`'s.
        write(
            &other,
            "y.jsonl",
            &session("y", "2025-01-07T00:00:00.000Z", &[request]),
        );
        let mut queries = sample_queries();
        queries.push(ListQuery {
            project: Some("/w".to_owned()),
            text: Some("parser error".to_owned()),
            ..ListQuery::default()
        });
        queries.push(ListQuery {
            project: Some("/other".to_owned()),
            ..ListQuery::default()
        });
        for query in &queries {
            assert_one_read(
                query,
                |query| list_store_records(root.path(), query),
                || ctxkit_session::list_all_sessions(root.path()),
            );
        }
        let ids = |query: &ListQuery| -> Vec<String> {
            list_store_records(root.path(), query)
                .unwrap()
                .into_iter()
                .map(|(session, _)| session.id)
                .collect()
        };
        assert_eq!(ids(&queries[0]), ["y", "x", "c", "b", "a"]);
        assert_eq!(ids(&queries[6]), ["y", "c", "b", "a"]);
        assert_eq!(ids(&queries[7]), ["x"]);
    }
}
