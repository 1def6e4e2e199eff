//! Session entries: the lines after the header. Each has an `id`, a `parentId` (null for a root) and an
//! ISO `timestamp`; the `type` decides the rest.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::JsonObject;
use crate::content::MessageContent;
use crate::lenient::{string_or_empty, u64_or_zero};
use crate::message::AgentMessage;

/// One entry of a session tree.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionEntry {
    /// Eight hex characters in files written by Pi or ctxkit.
    pub id: String,
    /// `None` for a root.
    pub parent_id: Option<String>,
    /// ISO 8601 time the entry was written.
    pub timestamp: String,
    pub kind: EntryKind,
}

/// What an entry holds, by its `type`.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryKind {
    Message(Box<AgentMessage>),
    ThinkingLevelChange(ThinkingLevelChangeEntry),
    ModelChange(ModelChangeEntry),
    Compaction(CompactionEntry),
    BranchSummary(BranchSummaryEntry),
    Custom(CustomEntry),
    CustomMessage(CustomMessageEntry),
    Label(LabelEntry),
    SessionInfo(SessionInfoEntry),
    /// Pi 0.87: replaces or omits an earlier entry's message in later contexts.
    ContextEdit(ContextEditEntry),
    /// Pi 0.87: model usage outside the conversation (cache warming, side requests).
    Usage(UsageEntry),
    /// An entry type this version does not know: its `type` and every other field, kept as they are.
    Unknown {
        type_name: String,
        fields: JsonObject,
    },
}

impl EntryKind {
    /// The compaction of a `compaction` entry.
    pub fn as_compaction(&self) -> Option<&CompactionEntry> {
        if let Self::Compaction(compaction) = self {
            Some(compaction)
        } else {
            None
        }
    }

    /// The compaction of a `compaction` entry, to change while an entry is being built.
    pub fn as_compaction_mut(&mut self) -> Option<&mut CompactionEntry> {
        if let Self::Compaction(compaction) = self {
            Some(compaction)
        } else {
            None
        }
    }

    /// The branch summary of a `branch_summary` entry.
    pub fn as_branch_summary(&self) -> Option<&BranchSummaryEntry> {
        if let Self::BranchSummary(summary) = self {
            Some(summary)
        } else {
            None
        }
    }

    /// The `type` tag as written in files.
    pub fn type_name(&self) -> &str {
        match self {
            Self::Message(_) => "message",
            Self::ThinkingLevelChange(_) => "thinking_level_change",
            Self::ModelChange(_) => "model_change",
            Self::Compaction(_) => "compaction",
            Self::BranchSummary(_) => "branch_summary",
            Self::Custom(_) => "custom",
            Self::CustomMessage(_) => "custom_message",
            Self::Label(_) => "label",
            Self::SessionInfo(_) => "session_info",
            Self::ContextEdit(_) => "context_edit",
            Self::Usage(_) => "usage",
            Self::Unknown { type_name, .. } => type_name,
        }
    }
}

/// The user changed the reasoning level (`off`, `minimal`, `low`, `medium`, `high`, `xhigh`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingLevelChangeEntry {
    #[serde(default)]
    pub thinking_level: String,
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The user switched models.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelChangeEntry {
    #[serde(default)]
    pub provider: String,
    #[serde(default)]
    pub model_id: String,
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Older history replaced by a summary; entries from `first_kept_entry_id` on stay in the context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionEntry {
    #[serde(default)]
    pub summary: String,
    /// The compaction's own id (or, hand-written, null) when nothing is kept (Pi 0.87).
    #[serde(default, deserialize_with = "string_or_empty")]
    pub first_kept_entry_id: String,
    #[serde(default, deserialize_with = "u64_or_zero")]
    pub tokens_before: u64,
    /// `{readFiles, modifiedFiles}` for ctxkit and Pi summaries; anything for hook summaries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// `true` when an extension or hook produced the summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_hook: Option<bool>,
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// An edit of the model context (Pi 0.87): from here on the branch, `target_id`'s message shows
/// `replacement`'s content, or is left out when `replacement` is null. The entry is never changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextEditEntry {
    #[serde(default)]
    pub target_id: String,
    /// Written as `null` for an omission.
    #[serde(default)]
    pub replacement: Option<EditReplacement>,
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The content a [`ContextEditEntry`] puts in place of its target's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EditReplacement {
    pub content: MessageContent,
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Model usage recorded outside the conversation (Pi 0.87): counted in session totals, never part
/// of a context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageEntry {
    /// What the usage was for, e.g. `cache_warm`, `compaction`, `branch_summary`.
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub provider: String,
    #[serde(default)]
    pub model: String,
    #[serde(default)]
    pub usage: crate::message::Usage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The summary of a branch left behind when the leaf moved elsewhere in the tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryEntry {
    /// The leaf the branch was left from, or `root`.
    #[serde(default)]
    pub from_id: String,
    #[serde(default)]
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_hook: Option<bool>,
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Extension state; never part of the model's context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomEntry {
    #[serde(default)]
    pub custom_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// An extension's message that takes part in the context as a `custom` message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessageEntry {
    #[serde(default)]
    pub custom_type: String,
    #[serde(default)]
    pub content: MessageContent,
    #[serde(default)]
    pub display: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Sets (or, when empty or absent, clears) the label of another entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelEntry {
    #[serde(default)]
    pub target_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Session metadata; the latest `name` is the session's display name (empty clears it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionInfoEntry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Serialize for SessionEntry {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error as _;
        let fields = match &self.kind {
            EntryKind::Message(message) => {
                let mut object = JsonObject::new();
                object.insert(
                    "message".to_owned(),
                    serde_json::to_value(message).map_err(S::Error::custom)?,
                );
                object
            }
            EntryKind::ThinkingLevelChange(entry) => to_object(entry).map_err(S::Error::custom)?,
            EntryKind::ModelChange(entry) => to_object(entry).map_err(S::Error::custom)?,
            EntryKind::Compaction(entry) => to_object(entry).map_err(S::Error::custom)?,
            EntryKind::BranchSummary(entry) => to_object(entry).map_err(S::Error::custom)?,
            EntryKind::Custom(entry) => to_object(entry).map_err(S::Error::custom)?,
            EntryKind::CustomMessage(entry) => to_object(entry).map_err(S::Error::custom)?,
            EntryKind::Label(entry) => to_object(entry).map_err(S::Error::custom)?,
            EntryKind::SessionInfo(entry) => to_object(entry).map_err(S::Error::custom)?,
            EntryKind::ContextEdit(entry) => to_object(entry).map_err(S::Error::custom)?,
            EntryKind::Usage(entry) => to_object(entry).map_err(S::Error::custom)?,
            EntryKind::Unknown { fields, .. } => fields.clone(),
        };
        // Pi writes the payload of extension entries before the tree fields; keep its field order so
        // files written by either tool look the same.
        let payload_first = matches!(
            self.kind,
            EntryKind::Custom(_) | EntryKind::CustomMessage(_)
        );
        let mut object = JsonObject::new();
        object.insert(
            "type".to_owned(),
            Value::String(self.kind.type_name().to_owned()),
        );
        if payload_first {
            object.extend(fields.clone());
        }
        object.insert("id".to_owned(), Value::String(self.id.clone()));
        object.insert(
            "parentId".to_owned(),
            self.parent_id.clone().map_or(Value::Null, Value::String),
        );
        object.insert(
            "timestamp".to_owned(),
            Value::String(self.timestamp.clone()),
        );
        if !payload_first {
            object.extend(fields);
        }
        object.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for SessionEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let mut object = JsonObject::deserialize(deserializer)?;
        let type_name = match object.shift_remove("type") {
            Some(Value::String(name)) => name,
            Some(_) | None => return Err(D::Error::custom("entry has no string `type`")),
        };
        let id = match object.shift_remove("id") {
            Some(Value::String(id)) => id,
            Some(_) | None => return Err(D::Error::custom("entry has no string `id`")),
        };
        let parent_id = match object.shift_remove("parentId") {
            Some(Value::String(parent)) => Some(parent),
            Some(Value::Null) | None => None,
            Some(_) => {
                return Err(D::Error::custom(
                    "entry `parentId` is neither a string nor null",
                ));
            }
        };
        let timestamp = match object.shift_remove("timestamp") {
            Some(Value::String(timestamp)) => timestamp,
            Some(_) | None => String::new(),
        };
        let kind = match type_name.as_str() {
            "message" => {
                let message = object.shift_remove("message").unwrap_or(Value::Null);
                EntryKind::Message(Box::new(
                    serde_json::from_value(message).map_err(D::Error::custom)?,
                ))
            }
            "thinking_level_change" => {
                EntryKind::ThinkingLevelChange(from_object(object).map_err(D::Error::custom)?)
            }
            "model_change" => {
                EntryKind::ModelChange(from_object(object).map_err(D::Error::custom)?)
            }
            "compaction" => EntryKind::Compaction(from_object(object).map_err(D::Error::custom)?),
            "branch_summary" => {
                EntryKind::BranchSummary(from_object(object).map_err(D::Error::custom)?)
            }
            "custom" => EntryKind::Custom(from_object(object).map_err(D::Error::custom)?),
            "custom_message" => {
                EntryKind::CustomMessage(from_object(object).map_err(D::Error::custom)?)
            }
            "label" => EntryKind::Label(from_object(object).map_err(D::Error::custom)?),
            "session_info" => {
                EntryKind::SessionInfo(from_object(object).map_err(D::Error::custom)?)
            }
            "context_edit" => {
                EntryKind::ContextEdit(from_object(object).map_err(D::Error::custom)?)
            }
            "usage" => EntryKind::Usage(from_object(object).map_err(D::Error::custom)?),
            _ => EntryKind::Unknown {
                type_name,
                fields: object,
            },
        };
        Ok(Self {
            id,
            parent_id,
            timestamp,
            kind,
        })
    }
}

fn from_object<T: serde::de::DeserializeOwned>(object: JsonObject) -> Result<T, serde_json::Error> {
    serde_json::from_value(Value::Object(object))
}

fn to_object<T: Serialize>(value: &T) -> Result<JsonObject, serde_json::Error> {
    match serde_json::to_value(value)? {
        Value::Object(object) => Ok(object),
        other @ (Value::Null
        | Value::Bool(_)
        | Value::Number(_)
        | Value::String(_)
        | Value::Array(_)) => {
            let mut object = JsonObject::new();
            object.insert("value".to_owned(), other);
            Ok(object)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_byte_for_byte_in_pi_field_order() {
        let lines = [
            r#"{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"Hello","timestamp":1}}"#,
            r#"{"type":"thinking_level_change","id":"e5f6a7b8","parentId":"a1b2c3d4","timestamp":"t","thinkingLevel":"high"}"#,
            r#"{"type":"model_change","id":"d4e5f6a7","parentId":"a1b2c3d4","timestamp":"t","provider":"openai","modelId":"gpt-4o"}"#,
            r#"{"type":"compaction","id":"f6a7b8c9","parentId":"e5f6a7b8","timestamp":"t","summary":"S","firstKeptEntryId":"a1b2c3d4","tokensBefore":50000,"details":{"readFiles":[],"modifiedFiles":["a"]},"fromHook":false}"#,
            r#"{"type":"branch_summary","id":"a7b8c9d0","parentId":"a1b2c3d4","timestamp":"t","fromId":"root","summary":"B"}"#,
            r#"{"type":"custom","customType":"ext","data":{"count":42},"id":"b8c9d0e1","parentId":null,"timestamp":"t"}"#,
            r#"{"type":"custom_message","customType":"ext","content":"x","display":true,"details":{"k":1},"id":"c9d0e1f2","parentId":null,"timestamp":"t"}"#,
            r#"{"type":"label","id":"d0e1f2a3","parentId":null,"timestamp":"t","targetId":"a1b2c3d4","label":"here"}"#,
            r#"{"type":"session_info","id":"e1f2a3b4","parentId":null,"timestamp":"t","name":"My session"}"#,
            r#"{"type":"context_edit","id":"f2a3b4c6","parentId":null,"timestamp":"t","targetId":"a1b2c3d4","replacement":{"content":[{"type":"text","text":"[elided]"}]}}"#,
            r#"{"type":"context_edit","id":"f2a3b4c7","parentId":null,"timestamp":"t","targetId":"a1b2c3d4","replacement":null}"#,
            r#"{"type":"usage","id":"f2a3b4c8","parentId":null,"timestamp":"t","kind":"cache_warm","provider":"anthropic","model":"m","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":0,"totalTokens":6,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"contributionId":"c1"}"#,
            r#"{"type":"future_entry","id":"f2a3b4c5","parentId":null,"timestamp":"t","payload":{"z":1,"a":2}}"#,
        ];
        for line in lines {
            let entry: SessionEntry = serde_json::from_str(line).unwrap();
            assert_eq!(serde_json::to_string(&entry).unwrap(), line);
        }
    }

    #[test]
    fn the_compaction_accessors_answer_for_compactions_only() {
        let compaction = r#"{"type":"compaction","id":"f6a7b8c9","parentId":null,"timestamp":"t","summary":"S","firstKeptEntryId":"a1b2c3d4","tokensBefore":5}"#;
        let label = r#"{"type":"label","id":"d0e1f2a3","parentId":null,"timestamp":"t","targetId":"a1b2c3d4","label":"here"}"#;
        let mut entry: SessionEntry = serde_json::from_str(compaction).unwrap();
        entry.kind.as_compaction_mut().unwrap().summary = "T".to_owned();
        assert_eq!(entry.kind.as_compaction().unwrap().summary, "T");
        let mut other: SessionEntry = serde_json::from_str(label).unwrap();
        assert!(other.kind.as_compaction_mut().is_none());
        assert!(other.kind.as_compaction().is_none());
    }

    #[test]
    fn entry_without_id_is_an_error() {
        let result = serde_json::from_str::<SessionEntry>(r#"{"type":"label","parentId":null}"#);
        assert!(result.unwrap_err().to_string().contains("`id`"));
    }
}
