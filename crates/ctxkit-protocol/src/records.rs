//! JSON records printed by `ctxkit … --json`. Field names are stable: scripts depend on them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The model in effect at a point of the session. Fields are absent when the entry that set them lacked
/// them (Pi then writes `{}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelRef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_id: Option<String>,
}

/// `ctxkit info --json` and one row of `ctxkit sessions --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfoRecord {
    pub path: String,
    pub id: String,
    pub cwd: String,
    pub name: Option<String>,
    pub parent_session_path: Option<String>,
    /// ISO time from the header.
    pub created: String,
    /// ISO time of the latest user or assistant message, else the header time, else the file's mtime.
    pub modified: String,
    pub message_count: u64,
    /// The first user message's text, or `(no messages)`.
    pub first_message: String,
    /// The format version of a file older than v3 (read migrated; rewritten as v3 when written to).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format_version: Option<u64>,
}

/// `ctxkit tree --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeRecord {
    pub leaf_id: Option<String>,
    /// Preorder: roots in file order, children by timestamp (stable).
    pub nodes: Vec<TreeNodeRecord>,
}

/// One node of [`TreeRecord`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeNodeRecord {
    pub id: String,
    pub parent_id: Option<String>,
    pub depth: u64,
    #[serde(rename = "type")]
    pub kind: String,
    /// The message role for `message` entries, else null.
    pub role: Option<String>,
    pub label: Option<String>,
    /// The number of children.
    pub children: u64,
}

/// `ctxkit context --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextRecord {
    pub leaf_id: Option<String>,
    pub thinking_level: String,
    pub model: Option<ModelRef>,
    pub messages: Vec<Value>,
}
