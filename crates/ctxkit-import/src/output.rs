//! Writing an imported session: the whole file atomically when it is new, otherwise only the entries
//! it lacks, appended (session files are append-only).

use std::collections::HashMap;
use std::io::Write as _;
use std::path::Path;

use ctxkit_session::session_file_name;

use crate::ImportedSession;
use crate::append_plan::{AppendPlan, NotAppendable, plan_append};
use crate::error::ImportError;

/// What [`ImportedSession::write_to`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOutcome {
    /// A new file was written.
    Created,
    /// The file already held every imported entry; nothing was written.
    UpToDate,
    /// The file was an earlier import of the same session; this many new entries were appended.
    Appended(usize),
    /// The file was an earlier import that caught replies half-written or tool results of tools
    /// still running (`completed`: their ids in the file); each completed entry was appended beside
    /// its partial one, with what followed it, so the session continues from the completed one and
    /// the partial one stays as a branch.
    AppendedCompleted {
        appended: usize,
        completed: Vec<String>,
    },
    /// The file was an earlier import that the user continued (its last entry is not from the
    /// import): the new entries were appended beside the continued branch, and an entry that keeps
    /// the session on that branch (its leaf, `continued_at`) was appended after them, so the
    /// continued turns stay in the context.
    AppendedBeside {
        appended: usize,
        continued_at: String,
    },
}

/// Whether an entry only names the session or labels an entry (`session_info`, `label`): read
/// from anywhere in the file, never a turn of the conversation.
fn names_or_labels(entry: &serde_json::Value) -> bool {
    matches!(
        entry.get("type").and_then(serde_json::Value::as_str),
        Some("session_info" | "label")
    )
}

/// The `customType` of the entry that keeps a re-imported session on its continued branch.
const KEEP_BRANCH_CUSTOM_TYPE: &str = "ctxkit.reimport";

impl ImportedSession {
    /// The session as JSONL: the header line, then one line per entry, each ending in `\n`.
    pub fn to_jsonl(&self) -> Result<String, ImportError> {
        let mut text = serde_json::to_string(&self.header)?;
        text.push('\n');
        for line in &self.lines {
            text.push_str(line);
            text.push('\n');
        }
        Ok(text)
    }

    /// The file name Pi and ctxkit would give this session: `<timestamp>_<session id>.jsonl`.
    /// The id is one clean path component (the builder hashes any other); a start time that is
    /// not an ISO timestamp keeps only letters, digits, `-`, `+` and `_` (and at most 40 of them).
    pub fn file_name(&self) -> String {
        let stamp: String = self
            .header
            .timestamp
            .chars()
            .take(40)
            .map(|character| {
                if character.is_ascii_alphanumeric() || "-+_:.".contains(character) {
                    character
                } else {
                    '-'
                }
            })
            .collect();
        session_file_name(&stamp, &self.header.id)
    }

    /// Writes the session to `path`. A missing file is created atomically (temporary file + rename).
    /// An existing file must be an import of the same session: entries it lacks are appended in one
    /// write, and a reply it holds half-written is appended again complete (`append_plan`); an
    /// entry id it holds with other content, or another header, is a [`ImportError::Conflict`] and
    /// nothing is written. An existing file is read and appended to under its writer lock (the
    /// one a session takes at its first write); another process holding it is
    /// [`ImportError::InUse`] and nothing is written.
    pub fn write_to(&self, path: &Path) -> Result<WriteOutcome, ImportError> {
        // Opened as a source is: a FIFO or a device there is refused, never waited on.
        match crate::regular::open_regular(path) {
            Ok(_) => {}
            Err(ImportError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                // A link to nothing is left as it is, and said so (QA 2026-12-07: "cannot create
                // …: File exists").
                if let Ok(target) = std::fs::read_link(path) {
                    return Err(ImportError::Conflict {
                        path: path.to_owned(),
                        reason: format!(
                            "it is a symlink to `{}`, which does not exist",
                            target.display()
                        ),
                    });
                }
                self.write_new(path, Existing::None)?;
                return Ok(WriteOutcome::Created);
            }
            Err(error) => return Err(error),
        }
        // The writer lock, held from before the file is read until the append is done: two
        // imports (or an import and a chat that continued the session) never append from one
        // reading, which would write the same entries twice.
        let mut file = ctxkit_session::lock_session_file(path).map_err(ImportError::InUse)?;
        let existing =
            crate::regular::read_bounded(&file, path, crate::regular::MAX_WHOLE_FILE_BYTES)?;
        // An empty file holds nothing to lose (`touch` made it, or an earlier write died).
        if existing.is_empty() {
            self.write_new(path, Existing::Empty)?;
            return Ok(WriteOutcome::Created);
        }
        let existing = String::from_utf8(existing).map_err(|error| {
            ImportError::io("read", path)(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                error,
            ))
        })?;
        let text = self.to_jsonl()?;
        let mut new_lines = text.lines();
        let new_header = new_lines.next().unwrap_or_default();
        let mut old_lines = existing.lines();
        let conflict = |reason: &str| ImportError::Conflict {
            path: path.to_owned(),
            reason: reason.to_owned(),
        };
        let old_header = old_lines.next().unwrap_or_default();
        if old_header != new_header {
            return Err(conflict(&header_difference(old_header, &self.header.id)));
        }
        let mut last_id = None;
        let old_by_id: HashMap<String, &str> = old_lines
            .filter_map(|line| {
                let value: serde_json::Value = serde_json::from_str(line).ok()?;
                let id = value.get("id")?.as_str()?.to_owned();
                if !names_or_labels(&value) {
                    last_id = Some(id.clone());
                }
                Some((id, line))
            })
            .collect();
        let entries = self.entries();
        let plan = match plan_append(&old_by_id, &entries, new_lines) {
            Ok(plan) => plan,
            Err(NotAppendable::Differs { id }) => {
                return Err(conflict(&format!("entry `{id}` differs")));
            }
            Err(NotAppendable::Line(error)) => return Err(error),
        };
        let AppendPlan {
            text: mut missing,
            count,
            completed,
            moved_to,
        } = plan;
        if count == 0 {
            return Ok(WriteOutcome::UpToDate);
        }
        // The session's leaf is its last entry: when the user continued the import, the new
        // records would take the leaf off the continued turns. An entry after them, on the
        // continued branch, keeps it there. A name or a label the user gave the session continues
        // nothing, so the new records go on from the import's end.
        let continued_at = last_id
            .filter(|id| !moved_to.contains(id) && !entries.iter().any(|entry| &entry.id == id));
        if let Some(leaf) = &continued_at {
            let taken = |candidate: &str| {
                old_by_id.contains_key(candidate)
                    || moved_to.contains(candidate)
                    || entries.iter().any(|entry| entry.id == candidate)
            };
            missing.push_str(&keep_branch_line(leaf, count, taken)?);
            missing.push('\n');
        }
        if !existing.is_empty() && !existing.ends_with('\n') {
            missing.insert(0, '\n');
        }
        append_whole(&mut file, missing.as_bytes()).map_err(ImportError::io("append to", path))?;
        // A continued import that also caught a reply half-written is said as continued: where
        // the session stays matters more than which reply was completed beside it.
        Ok(match continued_at {
            Some(continued_at) => WriteOutcome::AppendedBeside {
                appended: count,
                continued_at,
            },
            None if completed.is_empty() => WriteOutcome::Appended(count),
            None => WriteOutcome::AppendedCompleted {
                appended: count,
                completed,
            },
        })
    }
}

/// Appends `bytes` with one write, all or nothing: when the write fails part-way (a full disk),
/// the file is cut back to its length before it, so no half entry, and no entry whose tool
/// result or leaf-keeping entry is missing, stays behind. Only the bytes this call appended are cut.
fn append_whole(file: &mut std::fs::File, bytes: &[u8]) -> std::io::Result<()> {
    let before = file.metadata()?.len();
    let written = file.write_all(bytes).and_then(|()| file.flush());
    if written.is_err() && file.metadata().is_ok_and(|now| now.len() > before) {
        // Best effort: the error that matters is the write's.
        let _ = file.set_len(before);
    }
    written
}

/// Why an existing file's first line `old_header` is not this session's header (of `id`).
fn header_difference(old_header: &str, id: &str) -> String {
    let header: Option<serde_json::Value> = serde_json::from_str(old_header).ok();
    let header =
        header.filter(|value| value.get("type").and_then(|kind| kind.as_str()) == Some("session"));
    match header.as_ref().and_then(|value| value.get("id")) {
        None => "it is not a session file (its first line is not a session header)".to_owned(),
        Some(old_id) if old_id.as_str() == Some(id) => {
            "its session header differs from this import's".to_owned()
        }
        Some(old_id) => format!("it holds another session (id {old_id})"),
    }
}

/// A `custom` entry (not in the context) whose parent is `leaf`, recording the re-import.
fn keep_branch_line(
    leaf: &str,
    appended: usize,
    taken: impl Fn(&str) -> bool,
) -> Result<String, ImportError> {
    let line = serde_json::json!({
        "type": "custom",
        "id": ctxkit_session::new_entry_id(taken),
        "parentId": leaf,
        "timestamp": ctxkit_session::now_iso(),
        "customType": KEEP_BRANCH_CUSTOM_TYPE,
        "data": {"appended": appended},
    });
    Ok(serde_json::to_string(&line)?)
}

/// What [`ImportedSession::write_new`] found at the path it writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Existing {
    /// No file: one created meanwhile is left alone.
    None,
    /// An empty file, replaced if it is still empty.
    Empty,
}

impl ImportedSession {
    /// Writes the session as a new file, a line at a time (the text of a million entries is never
    /// held whole): into a temporary file beside `path`, synced, then renamed to `path` unless
    /// something created it (or, for [`Existing::Empty`], wrote to it) meanwhile.
    fn write_new(&self, path: &Path, existing: Existing) -> Result<(), ImportError> {
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            Some(_) | None => Path::new("."),
        };
        std::fs::create_dir_all(dir).map_err(ImportError::io("create directory", dir))?;
        let temp = ctxkit_jail::temporary_beside(path)
            .map_err(ImportError::io("create a temporary file in", dir))?;
        let mut writer = std::io::BufWriter::new(temp);
        self.write_lines(&mut writer)
            .map_err(ImportError::io("write", path))?;
        let temp = writer
            .into_inner()
            .map_err(|error| ImportError::io("write", path)(error.into_error()))?;
        temp.as_file()
            .sync_all()
            .map_err(ImportError::io("write", path))?;
        let still_empty = existing == Existing::Empty
            && std::fs::symlink_metadata(path).is_ok_and(|metadata| metadata.len() == 0);
        if still_empty {
            temp.persist(path)
        } else {
            temp.persist_noclobber(path)
        }
        .map_err(|error| ImportError::io("create", path)(error.error))?;
        Ok(())
    }

    /// The lines of [`Self::to_jsonl`], written to `writer`.
    fn write_lines(&self, writer: &mut impl std::io::Write) -> std::io::Result<()> {
        serde_json::to_writer(&mut *writer, &self.header)?;
        writer.write_all(b"\n")?;
        for line in &self.lines {
            writer.write_all(line.as_bytes())?;
            writer.write_all(b"\n")?;
        }
        Ok(())
    }
}
