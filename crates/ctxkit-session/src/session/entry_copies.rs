//! Copies of entries appended below the leaf, so an undo can bring a branch's later entries back on
//! the restored branch: each copy is its entry's original JSON (unknown types and fields included)
//! under a new id, parent and time, and what it names among the entries copied with it names their
//! copies. A copied reply's usage keeps its shape with every count zero: it measured the context its
//! original was sent in, which the copy is not part of (after an undo the restored context holds
//! what the compaction had summarized), so it must not stand for the copy's context; what the call
//! cost is counted on the original (`spend`). So is a copied tool result's (Pi 1.6's `usage` of the
//! tool's own model calls).

use std::collections::HashMap;

use ctxkit_protocol::{PIN_ENTRY_TYPE, PIN_ID_KEY};
use serde_json::{Map, Value};

use super::Session;
use crate::entry::StoredEntry;
use crate::error::{Result, SessionError};
use crate::ids::{new_entry_id, now_iso};

impl Session {
    /// Appends copies of the entries `ids` (in that order) as a chain below the leaf, with one write:
    /// all are acknowledged or none. Each copy keeps its entry's JSON but for a new `id`, `parentId`
    /// and `timestamp`. A reference to an entry copied before it names that copy instead: a
    /// `targetId` (a context edit, a label), and any string of a `custom` entry's `data` or of a
    /// `custom_message`'s `details` that is exactly such an id (extension state naming entries, such
    /// as pins). A pin (`ctxkit.pin`) keeps its id: its copy's `data` names the id it was first
    /// recorded under ([`ctxkit_protocol::PIN_ID_KEY`]). The originals stay where they are. Returns
    /// the copies' ids, in order.
    pub fn append_copies(&mut self, ids: &[&str]) -> Result<Vec<String>> {
        let mut parent_id = self.leaf_id().map(str::to_owned);
        let mut copies: HashMap<String, String> = HashMap::with_capacity(ids.len());
        let mut new_ids: Vec<String> = Vec::with_capacity(ids.len());
        let mut batch = Vec::with_capacity(ids.len());
        for &original in ids {
            let position = self.require(original)?;
            let Some(entry) = self.index.get(position) else {
                return Err(SessionError::EntryNotFound {
                    id: original.to_owned(),
                });
            };
            let mut object: Map<String, Value> = ctxkit_protocol::from_str_repaired(&entry.raw()?)
                .map_err(|error| entry.invalid(error))?;
            let index = &self.index;
            let id = new_entry_id(|candidate| {
                index.contains(candidate) || new_ids.iter().any(|taken| taken == candidate)
            });
            object.insert("id".to_owned(), Value::String(id.clone()));
            let parent = parent_id
                .replace(id.clone())
                .map_or(Value::Null, Value::String);
            object.insert("parentId".to_owned(), parent);
            object.insert("timestamp".to_owned(), Value::String(now_iso()));
            if let Some(Value::String(target)) = object.get_mut("targetId")
                && let Some(copy) = copies.get(target.as_str())
            {
                target.clone_from(copy);
            }
            let state_field = match object.get("type").and_then(Value::as_str) {
                Some("custom") => Some("data"),
                Some("custom_message") => Some("details"),
                _ => None,
            };
            if let Some(state) = state_field.and_then(|field| object.get_mut(field)) {
                name_copies(state, &copies);
            }
            keep_pin_id(&mut object, original);
            if let Some(usage) = object
                .get_mut("message")
                .filter(|message| {
                    // A tool result's usage (Pi 1.6) was paid for once too.
                    matches!(
                        message.get("role").and_then(Value::as_str),
                        Some("assistant" | "toolResult")
                    )
                })
                .and_then(|message| message.get_mut("usage"))
            {
                zero_counts(usage);
            }
            let line = serde_json::to_string(&object).map_err(SessionError::Serialize)?;
            let stored = StoredEntry::from_line(line.into(), 0).map_err(|error| {
                SessionError::Serialize(serde::de::Error::custom(error.message()))
            })?;
            batch.push(stored);
            copies.insert(original.to_owned(), id.clone());
            new_ids.push(id);
        }
        self.append_chain(batch)?;
        Ok(new_ids)
    }
}

/// Writes into the copy `object` of the pin entry `original` the id the pin is known by (the one its
/// original already names, else the original's own), so a client that kept the id a pin was given,
/// and the model that sees it in `<pinned id>`, still name it after the pin is appended again. An
/// unpin already names its pin under the same key; other entries are left as they are.
fn keep_pin_id(object: &mut Map<String, Value>, original: &str) {
    if object.get("type").and_then(Value::as_str) != Some("custom")
        || object.get("customType").and_then(Value::as_str) != Some(PIN_ENTRY_TYPE)
    {
        return;
    }
    let Some(Value::Object(data)) = object.get_mut("data") else {
        return;
    };
    if data.get("action").and_then(Value::as_str) == Some("unpin") {
        return;
    }
    data.entry(PIN_ID_KEY)
        .or_insert_with(|| Value::String(original.to_owned()));
}

/// Sets every number of `value` (a reply's usage: token counts, the cost's parts) to zero.
fn zero_counts(value: &mut Value) {
    match value {
        Value::Number(_) => *value = Value::from(0),
        Value::Array(items) => items.iter_mut().for_each(zero_counts),
        Value::Object(fields) => fields.values_mut().for_each(zero_counts),
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
}

/// Replaces every string of `value` that is the id of a copied entry by its copy's id.
fn name_copies(value: &mut Value, copies: &HashMap<String, String>) {
    match value {
        Value::String(text) => {
            if let Some(copy) = copies.get(text.as_str()) {
                text.clone_from(copy);
            }
        }
        // Parsed JSON nests at most 128 levels deep (serde_json's limit), so this recursion ends.
        Value::Array(items) => {
            for item in items {
                name_copies(item, copies);
            }
        }
        Value::Object(fields) => {
            for field in fields.values_mut() {
                name_copies(field, copies);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use ctxkit_protocol::{EntryKind, MessageContent};
    use serde_json::json;

    use crate::Session;

    fn edit_target(kind: EntryKind) -> String {
        let EntryKind::ContextEdit(edit) = kind else {
            panic!("not an edit: {kind:?}");
        };
        edit.target_id
    }

    fn user(text: &str) -> ctxkit_protocol::AgentMessage {
        serde_json::from_value(json!({"role": "user", "content": text, "timestamp": 1})).unwrap()
    }

    fn custom_data(session: &Session, id: &str) -> serde_json::Value {
        let EntryKind::Custom(custom) = session.entry(id).unwrap().parse().unwrap().kind else {
            panic!("not a custom entry");
        };
        custom.data.unwrap()
    }

    /// A tester's `pin.remove` with the id `pin.add` returned failed after a forget or an undo,
    /// and the model's `<pinned id>` named a pin that no longer existed: the copy took a new id.
    #[test]
    fn a_copied_pin_keeps_the_id_it_was_first_recorded_under() {
        let mut session = Session::in_memory("/p");
        let root = session.append_message(user("root")).unwrap();
        let pin = session
            .append_custom_entry("ctxkit.pin", Some(json!({"action": "pin", "text": "tabs"})))
            .unwrap();
        let unpin = session
            .append_custom_entry("ctxkit.pin", Some(json!({"action": "unpin", "pinId": pin})))
            .unwrap();
        session.branch(&root).unwrap();
        let copies = session.append_copies(&[&pin, &unpin]).unwrap();
        assert_eq!(
            custom_data(&session, &copies[0]),
            json!({"action": "pin", "text": "tabs", "pinId": pin})
        );
        assert_eq!(
            custom_data(&session, &copies[1]),
            json!({"action": "unpin", "pinId": copies[0]}),
            "an unpin names the copy it removes, as before"
        );
        session.branch(&root).unwrap();
        let again = session.append_copies(&[&copies[0]]).unwrap();
        assert_eq!(custom_data(&session, &again[0])["pinId"], json!(pin));
    }

    #[test]
    fn copies_keep_their_json_and_name_the_copies_of_what_they_name() {
        let mut session = Session::in_memory("/p");
        let root = session.append_message(user("root")).unwrap();
        let asked = session.append_message(user("secret")).unwrap();
        let edit = session
            .append_context_edit(&asked, Some(MessageContent::Text("REDACTED".to_owned())))
            .unwrap();
        let kept_edit = session.append_context_edit(&root, None).unwrap();
        let label = session.append_label_change(&asked, Some("here")).unwrap();
        let pin = session
            .append_custom_entry("x.pin", Some(json!({"entryId": asked, "other": [root]})))
            .unwrap();
        session.branch(&root).unwrap();

        let ids = [&asked, &edit, &kept_edit, &label, &pin].map(String::as_str);
        let copies = session.append_copies(&ids).unwrap();
        assert_eq!(copies.len(), 5);
        assert_eq!(session.leaf_id(), Some(copies[4].as_str()));
        let copy = |n: usize| session.entry(&copies[n]).unwrap().parse().unwrap();
        assert_eq!(copy(0).parent_id.as_deref(), Some(root.as_str()));
        assert_eq!(copy(1).parent_id.as_deref(), Some(copies[0].as_str()));
        assert_eq!(
            edit_target(copy(1).kind),
            copies[0],
            "the edit follows its target"
        );
        assert_eq!(edit_target(copy(2).kind), root, "a target not copied stays");
        assert_eq!(session.label(&copies[0]), Some("here"));
        assert_eq!(
            session.label(&asked),
            Some("here"),
            "the original keeps its own"
        );
        let EntryKind::Custom(custom) = copy(4).kind else {
            panic!("not a custom entry");
        };
        let data = json!({"entryId": copies[0], "other": [root]});
        assert_eq!(custom.data, Some(data));

        // The copied edit applies to the copied message: the redacted text stays redacted.
        let context = session.build_context();
        let texts: Vec<String> = session
            .messages(&context.messages)
            .unwrap()
            .iter()
            .map(|message| serde_json::to_string(message).unwrap())
            .collect();
        assert!(
            texts.iter().all(|text| !text.contains("secret")),
            "{texts:?}"
        );
        assert!(
            texts.iter().any(|text| text.contains("REDACTED")),
            "{texts:?}"
        );
    }

    /// Pi cuts a string inside an emoji and writes a lone surrogate escape; an undo of a
    /// compaction over such a message appended its marker, then failed to copy the message
    /// ("unexpected end of hex escape"), and the messages after the compaction left the context.
    /// The copy reads the half as U+FFFD, as every other read does.
    #[test]
    fn an_entry_holding_a_lone_surrogate_is_copied() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let lines = [
            r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":"cut \ud83d here","timestamp":2}}"#,
        ];
        std::fs::write(file.path(), lines.join("\n") + "\n").unwrap();
        let mut session = Session::open(file.path()).unwrap();
        session.branch("a").unwrap();
        let copies = session.append_copies(&["b"]).unwrap();
        let copy = session.entry(&copies[0]).unwrap().parse().unwrap();
        let EntryKind::Message(message) = copy.kind else {
            panic!("not a message");
        };
        assert_eq!(
            serde_json::to_value(&*message).unwrap()["content"],
            "cut \u{fffd} here"
        );
    }

    #[test]
    fn an_unknown_entry_is_copied_whole() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let lines = [
            r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
            r#"{"type":"future_kind","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","payload":{"keep":[1,2]},"note":"x"}"#,
        ];
        std::fs::write(file.path(), lines.join("\n") + "\n").unwrap();
        let mut session = Session::open(file.path()).unwrap();
        session.branch("a").unwrap();
        let copies = session.append_copies(&["b"]).unwrap();
        drop(session);
        let written = std::fs::read_to_string(file.path()).unwrap();
        let last: serde_json::Value =
            serde_json::from_str(written.lines().last().unwrap()).unwrap();
        assert_eq!(last["id"], copies[0].as_str());
        assert_eq!(last["parentId"], "a");
        assert_eq!(last["payload"], json!({"keep": [1, 2]}));
        assert_eq!(last["note"], "x");
        let keys: Vec<&str> = last
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            ["type", "id", "parentId", "timestamp", "payload", "note"]
        );
    }

    #[test]
    fn an_unknown_id_appends_nothing() {
        let mut session = Session::in_memory("/p");
        let root = session.append_message(user("root")).unwrap();
        let error = session.append_copies(&[&root, "nope"]).unwrap_err();
        assert!(matches!(error, crate::SessionError::EntryNotFound { .. }));
        assert_eq!(session.entries().len(), 1);
    }
}
