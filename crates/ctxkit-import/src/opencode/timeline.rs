//! A session's messages in the order OpenCode shows them, split at its `revert`.
//!
//! A session holds `message`/`part` messages (1.x files and 2.x tables), `session_message` rows
//! (the newer model), or, after an upgrade, both. Newer versions move a session's history into
//! `session_message` rows, so those are its history; `message` rows count only when they came after
//! the last history row among them (an older version continued the session) and are not the same
//! message, merged by creation time. Rows that record an event (`EVENT_TYPES`: a model or agent
//! switch) are not history: versions that keep the history in `message` rows write them too, at
//! the creation time of the prompt that made the switch, so they hide no message and are merged in
//! before that prompt. A session whose `revert` is
//! set (`{messageID, partID?}`: the user undid from that message on, and OpenCode deletes the undone
//! messages at the next prompt) shows the messages before `messageID`; with a `partID`, the message
//! itself up to that part. Those are the kept items; the rest are the undone ones.

use ctxkit_protocol::JsonObject;
use serde_json::Value;

use std::collections::HashSet;

use super::rows::StreamedRows;
use super::storage::{NextRow, RawMessage, Rows, str_of};
use crate::error::ImportError;

/// One message of either model.
#[derive(Debug, Clone)]
pub(super) enum Item {
    Legacy(RawMessage),
    Next(NextRow),
}

impl Item {
    pub(super) fn id(&self) -> &str {
        match self {
            Self::Legacy(message) => str_of(&message.info, "id").unwrap_or_default(),
            Self::Next(message) => &message.id,
        }
    }

    fn created(&self) -> i64 {
        match self {
            Self::Legacy(message) => legacy_created(&message.info),
            Self::Next(message) => message.time_created,
        }
    }
}

/// The `session_message` types that record an event rather than a message. Versions that keep a
/// session's history in `message` rows record model and agent switches as such rows too (1.17's
/// prompt publishes `session.next.model.switched` beside the user's `message` row), so these rows
/// must not count as history moved out of the `message` rows. A type not listed counts as history:
/// it is reported when converted, so a row of a newer kind never hides messages unannounced.
pub(super) const EVENT_TYPES: [&str; 4] = [
    "agent-switched",
    "model-switched",
    "location-switched",
    "idle",
];

/// Whether a `session_message` row holds history (see `EVENT_TYPES`).
pub(super) fn is_history(kind: &str) -> bool {
    !EVENT_TYPES.contains(&kind)
}

/// The order of merged rows: creation time, and on a tie an event before the message, as a switch
/// is recorded at the creation time of the prompt that made it (a stable sort keeps each model's
/// own order otherwise).
fn merge_order(item: &Item) -> (i64, u8) {
    match item {
        Item::Next(_) => (item.created(), 0),
        Item::Legacy(_) => (item.created(), 1),
    }
}

/// A `message` row's creation time (`time.created`; 0 without one).
pub(super) fn legacy_created(info: &JsonObject) -> i64 {
    info.get("time")
        .and_then(|time| time.get("created"))
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// The items OpenCode shows, and those a revert undid (empty without a revert).
#[derive(Debug, Default)]
pub(super) struct Timeline {
    pub(super) kept: Vec<Item>,
    pub(super) undone: Vec<Item>,
    /// The session's `revert`, when it undid something.
    pub(super) revert: Option<Value>,
}

fn timeline(info: &JsonObject, messages: Vec<RawMessage>, next_messages: Vec<NextRow>) -> Timeline {
    let latest_history = next_messages
        .iter()
        .filter(|next| is_history(&next.kind))
        .map(|next| next.time_created)
        .max();
    let mut items: Vec<Item> = messages
        .into_iter()
        .map(Item::Legacy)
        .filter(|item| {
            latest_history.is_none_or(|latest| {
                item.created() > latest && !next_messages.iter().any(|next| next.id == item.id())
            })
        })
        .collect();
    let legacy_count = items.len();
    items.extend(next_messages.into_iter().map(Item::Next));
    if legacy_count > 0 && items.len() > legacy_count {
        // Both models: creation order, an event before the prompt that made it.
        items.sort_by_key(merge_order);
    }
    let Some(revert) = info.get("revert").filter(|revert| revert.is_object()) else {
        return Timeline {
            kept: items,
            ..Timeline::default()
        };
    };
    let message_id = revert.get("messageID").and_then(Value::as_str);
    let part_id = revert.get("partID").and_then(Value::as_str);
    let Some(message_id) = message_id else {
        return Timeline {
            kept: items,
            ..Timeline::default()
        };
    };
    // The target's position; when it is gone, OpenCode's own rule: ids sort in creation order.
    let split = items
        .iter()
        .position(|item| item.id() == message_id)
        .unwrap_or_else(|| {
            items
                .iter()
                .position(|item| item.id() > message_id)
                .unwrap_or(items.len())
        });
    let mut undone = items.split_off(split);
    if let Some(part_id) = part_id
        && let Some(Item::Legacy(target)) = undone.first()
        && str_of(&target.info, "id") == Some(message_id)
        && let Some(cut) = target
            .parts
            .iter()
            .position(|part| str_of(part, "id") == Some(part_id))
    {
        let mut kept_part = target.clone();
        let removed = kept_part.parts.split_off(cut);
        items.push(Item::Legacy(kept_part));
        let mut undone_part = target.clone();
        undone_part.parts = removed;
        undone[0] = Item::Legacy(undone_part);
    }
    let revert = (!undone.is_empty()).then(|| revert.clone());
    Timeline {
        kept: items,
        undone,
        revert,
    }
}

/// A session's items as the converter takes them: in order, each with whether a revert undid it
/// (the undone ones after the kept ones). A database session's rows are read one at a time.
pub(super) enum Walk {
    Loaded(Timeline),
    Streamed {
        rows: StreamedRows,
        revert: Option<Value>,
        path: std::path::PathBuf,
    },
}

impl Walk {
    pub(super) fn open(info: &JsonObject, rows: Rows) -> Result<Self, ImportError> {
        match rows {
            Rows::Loaded {
                messages,
                next_messages,
            } => Ok(Self::Loaded(timeline(info, messages, next_messages))),
            Rows::Database {
                path,
                session_id,
                model,
            } => Ok(Self::Streamed {
                rows: StreamedRows::open(&path, &session_id, model)?,
                revert: info
                    .get("revert")
                    .filter(|revert| revert.is_object())
                    .cloned(),
                path,
            }),
        }
    }

    /// The message ids compaction requests name as their kept tail.
    pub(super) fn named_tails(&self) -> Result<HashSet<String>, ImportError> {
        match self {
            Self::Loaded(timeline) => Ok(timeline
                .kept
                .iter()
                .chain(&timeline.undone)
                .filter_map(|item| match item {
                    Item::Legacy(message) => Some(message),
                    Item::Next(_) => None,
                })
                .flat_map(|message| &message.parts)
                .filter(|part| str_of(part, "type") == Some("compaction"))
                .filter_map(|part| str_of(part, "tail_start_id").map(str::to_owned))
                .collect()),
            Self::Streamed { rows, path, .. } => {
                rows.compaction_tails().map_err(database_error(path))
            }
        }
    }

    /// Gives `each` every item in order with whether it was undone; the revert and how many items
    /// it undid, when it undid any.
    pub(super) fn walk(
        self,
        each: &mut dyn FnMut(&Item, bool),
    ) -> Result<Option<(Value, usize)>, ImportError> {
        match self {
            Self::Loaded(timeline) => {
                for item in &timeline.kept {
                    each(item, false);
                }
                for item in &timeline.undone {
                    each(item, true);
                }
                Ok(timeline
                    .revert
                    .map(|revert| (revert, timeline.undone.len())))
            }
            Self::Streamed { rows, revert, path } => {
                let error = database_error(&path);
                let mut split = match &revert {
                    Some(revert) => Split::of(revert, &rows).map_err(&error)?,
                    None => Split::default(),
                };
                rows.for_each(&mut |item| split.place(item, each))
                    .map_err(&error)?;
                Ok(revert
                    .filter(|_| split.undone > 0)
                    .map(|revert| (revert, split.undone)))
            }
        }
    }
}

fn database_error(path: &std::path::Path) -> impl Fn(rusqlite::Error) -> ImportError + '_ {
    move |source| ImportError::Database {
        path: path.to_owned(),
        source,
    }
}

/// Where a revert splits a stream of items: at the item with the target's id when there is one,
/// else at the first item whose id sorts after it (`timeline`'s rule, decided before the first
/// item is read).
#[derive(Debug, Default)]
struct Split {
    message_id: Option<String>,
    part_id: Option<String>,
    /// The target is among the items.
    exact: bool,
    /// How many items were undone so far.
    undone: usize,
}

impl Split {
    fn of(revert: &Value, rows: &StreamedRows) -> rusqlite::Result<Self> {
        let Some(message_id) = revert.get("messageID").and_then(Value::as_str) else {
            return Ok(Self::default());
        };
        Ok(Self {
            message_id: Some(message_id.to_owned()),
            part_id: revert
                .get("partID")
                .and_then(Value::as_str)
                .map(str::to_owned),
            exact: rows.contains(message_id)?,
            undone: 0,
        })
    }

    fn place(&mut self, item: Item, each: &mut dyn FnMut(&Item, bool)) {
        let Some(message_id) = self.message_id.as_deref() else {
            each(&item, false);
            return;
        };
        let splits_here = self.undone == 0
            && if self.exact {
                item.id() == message_id
            } else {
                item.id() > message_id
            };
        if self.undone == 0 && !splits_here {
            each(&item, false);
            return;
        }
        if splits_here
            && let Item::Legacy(target) = &item
            && str_of(&target.info, "id") == Some(message_id)
            && let Some(cut) = self.part_id.as_deref().and_then(|part_id| {
                target
                    .parts
                    .iter()
                    .position(|part| str_of(part, "id") == Some(part_id))
            })
        {
            let mut kept_part = target.clone();
            let removed = kept_part.parts.split_off(cut);
            each(&Item::Legacy(kept_part), false);
            let mut undone_part = target.clone();
            undone_part.parts = removed;
            self.undone += 1;
            each(&Item::Legacy(undone_part), true);
            return;
        }
        self.undone += 1;
        each(&item, true);
    }
}
