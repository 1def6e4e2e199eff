//! Branched sessions (Pi 0.87's `createBranchedSession`): a path copied without its label entries,
//! re-chained around them.

use serde_json::Value;

use crate::entry::StoredEntry;
use crate::error::{Result, SessionError};

/// The entries of a path without its label entries, each one the child of the one before it (an
/// entry that hung under a label now hangs under the label's parent), and a compaction's
/// `firstKeptEntryId` that named a label moved to the entry after it (Pi 0.87's
/// `createBranchedSession`). Entries whose links do not change keep their lines.
pub(super) fn rechain_without_labels<'a>(
    path: impl Iterator<Item = &'a StoredEntry>,
) -> Result<Vec<StoredEntry>> {
    let mut kept: Vec<StoredEntry> = Vec::new();
    let mut pending_labels: Vec<&str> = Vec::new();
    let mut label_successor: std::collections::HashMap<&str, String> =
        std::collections::HashMap::new();
    for entry in path {
        if entry.type_name() == "label" {
            pending_labels.push(entry.id());
            continue;
        }
        for label in pending_labels.drain(..) {
            label_successor.insert(label, entry.id().to_owned());
        }
        let parent = kept.last().map(|previous| previous.id().to_owned());
        let mut fields: Option<Value> = None;
        if entry.parent_id().map(str::to_owned) != parent {
            let mut value: Value = ctxkit_protocol::from_str_repaired(&entry.raw()?)
                .map_err(SessionError::Serialize)?;
            value["parentId"] = parent.map_or(Value::Null, Value::String);
            fields = Some(value);
        }
        if entry.type_name() == "compaction" {
            let mut value = match fields.take() {
                Some(value) => value,
                None => ctxkit_protocol::from_str_repaired(&entry.raw()?)
                    .map_err(SessionError::Serialize)?,
            };
            let remapped = value
                .get("firstKeptEntryId")
                .and_then(Value::as_str)
                .filter(|first_kept| *first_kept != entry.id())
                .and_then(|first_kept| label_successor.get(first_kept))
                .cloned();
            let changed = remapped.is_some()
                || value.get("parentId").map(Value::as_str) != Some(entry.parent_id());
            if let Some(successor) = remapped {
                value["firstKeptEntryId"] = Value::String(successor);
            }
            if changed {
                fields = Some(value);
            }
        }
        kept.push(match fields {
            Some(value) => {
                let line = serde_json::to_string(&value).map_err(SessionError::Serialize)?;
                StoredEntry::from_line(line.into(), 0).map_err(|error| {
                    SessionError::Serialize(serde::de::Error::custom(error.message()))
                })?
            }
            None => entry.detached(),
        });
    }
    Ok(kept)
}
