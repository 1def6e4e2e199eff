//! What a re-import appends to an earlier import of the same session: the entries the file lacks,
//! and, for a reply the earlier import caught half-written (Claude Code writes a reply a content
//! block at a time, so importing a live session often ends inside one), the completed reply as an
//! entry of its own. Session files are append-only, so the partial reply stays where it is: the
//! completed one goes beside it (same parent, an id derived from the partial one's), and the
//! entries that followed the reply go under the completed one, as copies when the file already
//! holds them under the partial one (or under the error result the earlier import added for a call
//! whose result was not written yet). The last appended entry is the leaf, so the context runs
//! through the completed reply and the partial one is a branch nobody continues. A tool result the
//! earlier import wrote as interrupted (OpenCode stores a call while its tool runs, so an import
//! of a live session often catches one running) is completed the same way: the finished result
//! goes beside the interrupted one.

use std::collections::{HashMap, HashSet};

use ctxkit_protocol::SessionEntry;
use serde_json::Value;

use crate::error::ImportError;
use crate::opencode::INTERRUPTED_TOOL;

/// The lines to append and what they hold.
#[derive(Debug, Default)]
pub(crate) struct AppendPlan {
    /// The lines, each ending in `\n`.
    pub(crate) text: String,
    /// How many lines `text` holds.
    pub(crate) count: usize,
    /// The ids of the entries the earlier import caught half-written (a reply whose blocks grew,
    /// a result hung under the error result added for a call not yet answered) that were appended
    /// again, complete, in file order.
    pub(crate) completed: Vec<String>,
    /// The ids the import's entries have in the file where they differ from the import's own
    /// (completed replies and the copies under them, appended now or by an earlier re-import).
    pub(crate) moved_to: HashSet<String>,
}

/// Why nothing can be appended.
#[derive(Debug)]
pub(crate) enum NotAppendable {
    /// The file holds the import's entry `id` with other content, and not as an entry the import
    /// completes: the file is not an earlier import of the session.
    Differs { id: String },
    /// An entry could not be given its id in the file (its line is not a JSON object: never, the
    /// import wrote it).
    Line(ImportError),
}

impl From<serde_json::Error> for NotAppendable {
    fn from(error: serde_json::Error) -> Self {
        Self::Line(error.into())
    }
}

/// Plans the append of `entries` (with their JSON `lines`, in file order) to a file whose entry
/// lines are `old_by_id`.
pub(crate) fn plan_append<'line>(
    old_by_id: &HashMap<String, &str>,
    entries: &[SessionEntry],
    lines: impl Iterator<Item = &'line str>,
) -> Result<AppendPlan, NotAppendable> {
    let import_ids: HashSet<&str> = entries.iter().map(|entry| entry.id.as_str()).collect();
    let mut plan = AppendPlan::default();
    // An entry of the import → the id it has in the file, where the two differ.
    let mut moved: HashMap<&str, String> = HashMap::new();
    // The completed replies and what follows them: the file holds these as the earlier import
    // made them of a half-written reply (results under it, calls left without one), so they may
    // differ from the import's.
    let mut completed_subtree: HashSet<&str> = HashSet::new();
    for (entry, line) in entries.iter().zip(lines) {
        let parent = entry.parent_id.as_deref();
        let under_completed = parent.is_some_and(|parent| completed_subtree.contains(parent));
        let line = match parent.and_then(|parent| moved.get(parent)) {
            Some(new_parent) => with_ids(line, &entry.id, Some(new_parent))?,
            None => line.to_owned(),
        };
        let old = old_by_id.get(&entry.id);
        if old.is_none_or(|old| *old == line) {
            if old.is_none() {
                plan.push(&line);
            }
            if under_completed {
                completed_subtree.insert(&entry.id);
            }
            continue;
        }
        let caught_half_written = old.is_some_and(|old| {
            completes(old, &line)
                || finishes_a_tool(old, &line)
                || hung_under_a_dropped_entry(old, &line, &import_ids)
        });
        if !under_completed && !caught_half_written {
            return Err(NotAppendable::Differs {
                id: entry.id.clone(),
            });
        }
        // A copy under an id derived from the entry's: the same one at every re-import, skipping
        // the copies earlier re-imports appended of an earlier state (a reply caught
        // half-written twice).
        let source = format!("{}#completed", entry.id);
        let mut candidates = crate::ids::candidates(&source);
        let (id, appended) = loop {
            let candidate = candidates.next_candidate();
            if import_ids.contains(candidate.as_str()) || plan.moved_to.contains(&candidate) {
                continue;
            }
            let copy = with_ids(&line, &candidate, parent_in(entry, &moved))?;
            match old_by_id.get(&candidate) {
                None => {
                    plan.push(&copy);
                    break (candidate, true);
                }
                Some(old_copy) if *old_copy == copy => break (candidate, false),
                Some(_) => {
                    plan.moved_to.insert(candidate);
                }
            }
        };
        if caught_half_written && !under_completed && appended {
            plan.completed.push(entry.id.clone());
        }
        plan.moved_to.insert(id.clone());
        moved.insert(&entry.id, id);
        completed_subtree.insert(&entry.id);
    }
    Ok(plan)
}

impl AppendPlan {
    fn push(&mut self, line: &str) {
        self.text.push_str(line);
        self.text.push('\n');
        self.count += 1;
    }
}

/// The parent `entry` has in the file: its parent's id there when that moved.
fn parent_in<'text>(
    entry: &'text SessionEntry,
    moved: &'text HashMap<&str, String>,
) -> Option<&'text str> {
    let parent = entry.parent_id.as_deref()?;
    Some(moved.get(parent).map_or(parent, String::as_str))
}

/// Whether `new` is the reply `old` caught half-written: both assistant messages under the same
/// parent, `old`'s content blocks the first of `new`'s. Usage, stop reason and the like come from
/// a reply's last block, so they may differ.
fn completes(old: &str, new: &str) -> bool {
    let (Ok(old), Ok(new)) = (
        serde_json::from_str::<Value>(old),
        serde_json::from_str::<Value>(new),
    ) else {
        return false;
    };
    let is_reply = |entry: &Value| {
        entry.get("type").and_then(Value::as_str) == Some("message")
            && entry.pointer("/message/role").and_then(Value::as_str) == Some("assistant")
    };
    let blocks = |entry: &Value| {
        entry
            .pointer("/message/content")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let (old_blocks, new_blocks) = (blocks(&old), blocks(&new));
    is_reply(&old)
        && is_reply(&new)
        && old.get("parentId") == new.get("parentId")
        && old_blocks.len() <= new_blocks.len()
        && old_blocks
            .iter()
            .zip(&new_blocks)
            .all(|(old, new)| old == new)
}

/// Whether `new` is the result of the call `old` answered with the interruption note because its
/// tool still ran: both results of the same call under the same parent, `old` that note alone.
fn finishes_a_tool(old: &str, new: &str) -> bool {
    let (Ok(old), Ok(new)) = (
        serde_json::from_str::<Value>(old),
        serde_json::from_str::<Value>(new),
    ) else {
        return false;
    };
    let result_of = |entry: &Value| {
        let message = entry.get("message")?;
        (entry.get("type")?.as_str()? == "message"
            && message.get("role")?.as_str()? == "toolResult")
            .then(|| {
                (
                    message.get("toolCallId").cloned(),
                    message.get("toolName").cloned(),
                )
            })
    };
    let interrupted = old.pointer("/message/isError") == Some(&Value::Bool(true))
        && old.pointer("/message/content")
            == Some(&serde_json::json!([{"type": "text", "text": INTERRUPTED_TOOL}]));
    let call = result_of(&old);
    interrupted
        && call.is_some()
        && call == result_of(&new)
        && old.get("parentId") == new.get("parentId")
}

/// Whether `new` is `old` hung under another parent because the file's parent of it is an entry
/// this import no longer makes: the error result the earlier import added for a call whose result
/// was not written yet (a later block of the reply, or the result, came after the import).
fn hung_under_a_dropped_entry(old: &str, new: &str, import_ids: &HashSet<&str>) -> bool {
    let (Ok(mut old), Ok(new)) = (
        serde_json::from_str::<Value>(old),
        serde_json::from_str::<Value>(new),
    ) else {
        return false;
    };
    let dropped = old
        .get("parentId")
        .and_then(Value::as_str)
        .is_some_and(|parent| !import_ids.contains(parent));
    if let Some(fields) = old.as_object_mut() {
        let new_parent = new.get("parentId").cloned().unwrap_or(Value::Null);
        fields.insert("parentId".to_owned(), new_parent);
    }
    dropped && old == new
}

/// `line` with its `id` and `parentId` replaced (the other fields as they were, in their order).
fn with_ids(line: &str, id: &str, parent_id: Option<&str>) -> Result<String, serde_json::Error> {
    let mut entry: Value = serde_json::from_str(line)?;
    if let Some(fields) = entry.as_object_mut() {
        fields.insert("id".to_owned(), Value::String(id.to_owned()));
        fields.insert(
            "parentId".to_owned(),
            parent_id.map_or(Value::Null, |parent| Value::String(parent.to_owned())),
        );
    }
    serde_json::to_string(&entry)
}
