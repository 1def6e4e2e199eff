//! A session's messages in the order OpenCode shows them, split at its `revert`.
//!
//! A session holds `message`/`part` messages (1.x files and 2.x tables), `session_message` rows
//! (the newer model), or, after an upgrade, both. Newer versions move a session's history into
//! `session_message` rows, so those are its history; `message` rows count only when they came after
//! the last of them (an older version continued the session) and are not the same message, merged by
//! creation time. A session whose `revert` is
//! set (`{messageID, partID?}`: the user undid from that message on, and OpenCode deletes the undone
//! messages at the next prompt) shows the messages before `messageID`; with a `partID`, the message
//! itself up to that part. Those are the kept items; the rest are the undone ones.

use serde_json::Value;

use super::storage::{NextRow, RawMessage, RawSession, str_of};

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
            Self::Legacy(message) => message
                .info
                .get("time")
                .and_then(|time| time.get("created"))
                .and_then(Value::as_i64)
                .unwrap_or(0),
            Self::Next(message) => message.time_created,
        }
    }
}

/// The items OpenCode shows, and those a revert undid (empty without a revert).
#[derive(Debug, Default)]
pub(super) struct Timeline {
    pub(super) kept: Vec<Item>,
    pub(super) undone: Vec<Item>,
    /// The session's `revert`, when it undid something.
    pub(super) revert: Option<Value>,
}

pub(super) fn timeline(raw: RawSession) -> Timeline {
    let RawSession {
        info,
        messages,
        next_messages,
    } = raw;
    let latest_next = next_messages.iter().map(|next| next.time_created).max();
    let mut items: Vec<Item> = messages
        .into_iter()
        .map(Item::Legacy)
        .filter(|item| {
            latest_next.is_none_or(|latest| {
                item.created() > latest && !next_messages.iter().any(|next| next.id == item.id())
            })
        })
        .collect();
    let legacy_count = items.len();
    items.extend(next_messages.into_iter().map(Item::Next));
    if legacy_count > 0 && items.len() > legacy_count {
        // Both models: creation order (a stable sort keeps each model's own order on ties).
        items.sort_by_key(Item::created);
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
