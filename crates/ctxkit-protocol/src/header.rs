//! The first line of a session file.

use serde::{Deserialize, Serialize};

use crate::JsonObject;

/// The session format version ctxkit writes (Pi's v3).
pub const CURRENT_SESSION_VERSION: u64 = 3;

/// `{"type":"session","version":3,"id","timestamp","cwd","parentSession"?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionHeader {
    /// Always `session`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Absent in v1 files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    pub id: String,
    #[serde(default)]
    pub timestamp: String,
    #[serde(default)]
    pub cwd: String,
    /// The file this session was forked or branched from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<String>,
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SessionHeader {
    /// A current-version header.
    pub fn new(id: String, timestamp: String, cwd: String, parent_session: Option<String>) -> Self {
        Self {
            kind: "session".to_owned(),
            version: Some(CURRENT_SESSION_VERSION),
            id,
            timestamp,
            cwd,
            parent_session,
            extra: JsonObject::new(),
        }
    }
}
