//! `ctxkit store import FILE` of a session already stored: the entries the file gained since are
//! appended, under the session's lease. `ctxkit import` run again appends what a transcript
//! gained to its file and says to `store import` it; the store refused the whole file as a
//! session it already had (QA r99). A file that does not continue the stored session is refused
//! with how it stands instead: the store went on, the file holds entries the store cannot append
//! in place, or both went their own ways (QA r101: every case was called "it went on in the store").

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result};
use ctxkit_store::{AnyStore, SessionLines, SessionStore};

use crate::render::counted;

/// What a second import of a stored session did.
pub(super) struct Appended {
    pub id: String,
    /// The entries the file had beyond the stored ones, now stored.
    pub added: usize,
    /// The session's entries in the store.
    pub entries: u64,
}

/// Appends to the stored session `file` holds the entries that follow the stored ones. Refused,
/// storing nothing, when the file is not the stored session with more entries at its end
/// ([`NotContinued`] says how it stands instead).
pub(super) fn append_gained(
    runtime: &tokio::runtime::Runtime,
    store: &AnyStore,
    lease_duration: Duration,
    file: &Path,
) -> Result<Appended> {
    let bytes = std::fs::read(file).with_context(|| format!("cannot read `{}`", file.display()))?;
    let lines = SessionLines::parse(&file.display().to_string(), &bytes)?;
    let id = ctxkit_store::header_facts(&lines.header)
        .map_err(anyhow::Error::msg)?
        .id;
    // The lease first: the stored entries compared with the file's are then the last ones.
    let lease =
        runtime.block_on(store.acquire(&id, &super::store_copy::writer_name(), lease_duration))?;
    let appended = append_under_lease(runtime, store, (&lease, lease_duration), &lines, file);
    // Released whatever the append did: the next writer need not wait for the lease to expire.
    let released = runtime.block_on(store.release(&lease));
    let (added, entries) = appended?;
    released?;
    Ok(Appended { id, added, entries })
}

/// The entries of `lines` beyond the stored ones, appended: how many, and the session's count.
fn append_under_lease(
    runtime: &tokio::runtime::Runtime,
    store: &AnyStore,
    (lease, lease_duration): (&ctxkit_store::Lease, Duration),
    lines: &SessionLines,
    file: &Path,
) -> Result<(usize, u64)> {
    let id = &lease.session_id;
    let stored = runtime.block_on(store.export(id))?;
    let standing = standing(&stored, lines);
    if standing != Standing::Continues {
        return Err(NotContinued {
            id: id.clone(),
            file: file.to_path_buf(),
            standing,
        }
        .into());
    }
    let gained = &lines.entries[stored.entries.len()..];
    if gained.is_empty() {
        return Ok((0, stored.entries.len() as u64));
    }
    let entries = runtime.block_on(store.append(lease, gained, lease_duration))?;
    Ok((gained.len(), entries))
}

/// How a file of a stored session stands to the stored session, entry lines compared byte for byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Standing {
    /// The stored entries, then any the file gained: what it gained can be appended.
    Continues,
    /// The file's header is not the stored one.
    OtherHeader,
    /// The stored session has entries the file lacks, the file none the store lacks: it went on in
    /// the store.
    StoreAhead { missing: usize, first: Place },
    /// The file holds every stored entry and more, some of them before stored ones: the store only
    /// appends after its last entry, so they cannot be added where they stand.
    FileAheadWithin { extra: usize, first: Place },
    /// Each has entries the other lacks, or the same entries in another order.
    Diverged {
        missing: usize,
        extra: usize,
        first: Place,
    },
}

/// Where an entry line stands: its position among the entries (1 is the line after the header)
/// and its id when it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    pub position: usize,
    pub id: Option<String>,
}

impl Place {
    fn of(entries: &[String], index: usize) -> Self {
        let id = entries
            .get(index)
            .and_then(|line| ctxkit_store::entry_facts(line).ok())
            .and_then(|facts| facts.id);
        Self {
            position: index + 1,
            id,
        }
    }
}

impl std::fmt::Display for Place {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "entry {}", self.position)?;
        match &self.id {
            Some(id) => write!(formatter, ", `{id}`"),
            None => Ok(()),
        }
    }
}

/// How `file` stands to `stored` (see [`Standing`]).
pub(crate) fn standing(stored: &SessionLines, file: &SessionLines) -> Standing {
    if stored.header != file.header {
        return Standing::OtherHeader;
    }
    let common = stored
        .entries
        .iter()
        .zip(&file.entries)
        .take_while(|(kept, line)| kept == line)
        .count();
    if common == stored.entries.len() {
        return Standing::Continues;
    }
    // Each line of one side matched with an equal line of the other, as many times as it occurs.
    let mut unmatched: HashMap<&str, usize> = HashMap::new();
    for line in &stored.entries {
        *unmatched.entry(line).or_default() += 1;
    }
    let mut extra_at = Vec::new();
    for (index, line) in file.entries.iter().enumerate() {
        match unmatched.get_mut(line.as_str()) {
            Some(count) if *count > 0 => *count -= 1,
            _ => extra_at.push(index),
        }
    }
    let mut missing_at = Vec::new();
    for (index, line) in stored.entries.iter().enumerate().rev() {
        if let Some(count) = unmatched.get_mut(line.as_str())
            && *count > 0
        {
            *count -= 1;
            missing_at.push(index);
        }
    }
    missing_at.reverse();
    match (missing_at.first(), extra_at.first()) {
        (Some(&first), None) => Standing::StoreAhead {
            missing: missing_at.len(),
            first: Place::of(&stored.entries, first),
        },
        (None, Some(&first)) => Standing::FileAheadWithin {
            extra: extra_at.len(),
            first: Place::of(&file.entries, first),
        },
        (Some(_), Some(&first)) => Standing::Diverged {
            missing: missing_at.len(),
            extra: extra_at.len(),
            first: Place::of(&file.entries, first),
        },
        // The same lines in another order: they differ from the first line not in common.
        (None, None) => Standing::Diverged {
            missing: 0,
            extra: 0,
            first: Place::of(&file.entries, common),
        },
    }
}

/// A file of a stored session that does not continue it: nothing was stored, the file is as it was.
#[derive(Debug)]
pub struct NotContinued {
    id: String,
    file: PathBuf,
    standing: Standing,
}

impl std::fmt::Display for NotContinued {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Self { id, file, standing } = self;
        let file = file.display();
        write!(
            formatter,
            "session `{id}` is already in the store, and `{file}` does not continue it: "
        )?;
        match standing {
            Standing::Continues => write!(formatter, "it does"),
            Standing::OtherHeader => write!(
                formatter,
                "its header (line 1) is not the stored session's header"
            ),
            Standing::StoreAhead { missing, first } => write!(
                formatter,
                "the session went on in the store, which has {} the file lacks (the first: stored \
                 {first}), and the file has none the store lacks",
                counted(*missing, "entry")
            ),
            Standing::FileAheadWithin { extra, first } => write!(
                formatter,
                "the file holds every stored entry and {} more, not all after the stored ones (the \
                 first: its {first}); the store only appends after its last entry, so they cannot \
                 be added where they stand",
                counted(*extra, "entry")
            ),
            Standing::Diverged {
                missing: 0,
                extra: 0,
                first,
            } => write!(
                formatter,
                "it holds the stored entries in another order (from its {first})"
            ),
            Standing::Diverged {
                missing,
                extra,
                first,
            } => write!(
                formatter,
                "the file and the stored session went separate ways: the file has {} the store \
                 lacks (the first: its {first}), the store {} the file lacks",
                counted(*extra, "entry"),
                counted(*missing, "entry")
            ),
        }?;
        write!(
            formatter,
            "; nothing was stored and the file was left as it is"
        )
    }
}

impl std::error::Error for NotContinued {}

impl NotContinued {
    /// What to do: never a command that would replace the file when it holds entries the store lacks.
    pub fn hint(&self) -> String {
        let Self { id, file, standing } = self;
        let file = file.display();
        let export = format!("`ctxkit store export {id} -o NEW_FILE` writes the stored session");
        let copy = format!(
            "`ctxkit fork-from {file} --cwd DIR` copies the file under a new session id, which \
             `ctxkit store import` then stores whole"
        );
        match standing {
            Standing::StoreAhead { .. } => {
                format!("{export}; the file holds nothing the store lacks")
            }
            Standing::FileAheadWithin { .. } => format!("keep the file: {copy}"),
            Standing::Continues | Standing::OtherHeader | Standing::Diverged { .. } => {
                format!("keep the file: {copy}; {export} beside it")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, parent: Option<&str>) -> String {
        serde_json::json!({"type": "message", "id": id, "parentId": parent,
            "message": {"role": "user", "content": id}})
        .to_string()
    }

    fn session(ids: &[&str]) -> SessionLines {
        let mut parent = None;
        let entries = ids
            .iter()
            .map(|id| {
                let line = entry(id, parent);
                parent = Some(*id);
                line
            })
            .collect();
        SessionLines {
            header: r#"{"type":"session","version":3,"id":"s","cwd":"/p"}"#.to_owned(),
            entries,
        }
    }

    fn place(position: usize, id: &str) -> Place {
        Place {
            position,
            id: Some(id.to_owned()),
        }
    }

    #[test]
    fn a_file_with_the_stored_entries_first_continues_it() {
        let stored = session(&["a", "b"]);
        assert_eq!(
            standing(&stored, &session(&["a", "b"])),
            Standing::Continues
        );
        assert_eq!(
            standing(&stored, &session(&["a", "b", "c"])),
            Standing::Continues
        );
    }

    #[test]
    fn a_file_behind_the_store_is_told_the_store_went_on() {
        let stored = session(&["a", "b", "c"]);
        assert_eq!(
            standing(&stored, &session(&["a", "b"])),
            Standing::StoreAhead {
                missing: 1,
                first: place(3, "c")
            }
        );
    }

    /// QA r101: a file holding every stored entry plus one in the middle was told "it went on in
    /// the store", and the hint (`store export … -o FILE`) would have dropped the file's entry.
    #[test]
    fn a_file_with_every_stored_entry_and_one_within_is_ahead_not_behind() {
        let stored = session(&["a", "b", "c"]);
        let mut file = session(&["a", "b", "c"]);
        file.entries.insert(1, entry("x", Some("a")));
        let standing = standing(&stored, &file);
        assert_eq!(
            standing,
            Standing::FileAheadWithin {
                extra: 1,
                first: place(2, "x")
            }
        );
        let refused = NotContinued {
            id: "s".to_owned(),
            file: PathBuf::from("t.jsonl"),
            standing,
        };
        let message = refused.to_string();
        assert!(
            message.contains("holds every stored entry and 1 entry more"),
            "{message}"
        );
        assert!(!message.contains("went on in the store"), "{message}");
        let hint = refused.hint();
        assert!(!hint.contains("store export"), "{hint}");
        assert!(hint.contains("fork-from t.jsonl"), "{hint}");
    }

    #[test]
    fn files_that_went_their_own_way_are_told_so() {
        let stored = session(&["a", "b", "c"]);
        let mut file = session(&["a", "b"]);
        file.entries.push(entry("y", Some("b")));
        assert_eq!(
            standing(&stored, &file),
            Standing::Diverged {
                missing: 1,
                extra: 1,
                first: place(3, "y")
            }
        );
        let mut reordered = session(&["a", "b", "c"]);
        reordered.entries.swap(1, 2);
        assert_eq!(
            standing(&stored, &reordered),
            Standing::Diverged {
                missing: 0,
                extra: 0,
                first: place(2, "c")
            }
        );
        let mut other = session(&["a", "b", "c"]);
        other.header = other.header.replace("/p", "/q");
        assert_eq!(standing(&stored, &other), Standing::OtherHeader);
    }
}
